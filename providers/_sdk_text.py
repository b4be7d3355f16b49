"""The shared shell of the text providers that drive a vendor's SDK over HTTP.

A vendor's provider (:class:`SDKTextProvider` subclass) names its SDK, its client class and how
to read the vendor's error body, and maps the channel's model to and from the API's JSON in its
own sans-I/O module. The shell builds the client, sends one request, translates the SDK's
errors into :class:`~voice_hitl.ProviderError` the same way for every vendor, closes the
client and names the provider in its ``repr``.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from voice_hitl import ProviderError

__all__ = ["SDKTextProvider", "import_sdk"]


def import_sdk(module: str, who: str) -> Any:
    """Import a vendor SDK's ``module`` for ``who``.

    Raises:
        RuntimeError: The SDK is not installed; the message names the extra that brings it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - the extras are part of CI
        sdk = module.split(".")[0]
        raise RuntimeError(f"{who} needs the {sdk} SDK: install voice-hitl[{sdk}]") from exc


class SDKTextProvider:
    """A text provider on one vendor SDK's async client.

    Args:
        model: The model name.
        api_key: The API key (the SDK reads its environment variable when None).
        base_url: Another endpoint (the loopback test server, a proxy).
        max_retries: Retries the SDK makes on its own (connection errors, 429, 5xx).
        client: The SDK's async client to use instead of building one.
    """

    vendor: ClassVar[str]
    """The vendor's name, as error messages give it."""
    sdk: ClassVar[str]
    """The SDK's import name (also the name of the extra that installs it)."""
    client_class: ClassVar[str]
    """The SDK's async client class."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        client: Any = None,
    ) -> None:
        self.model = model
        if client is None:
            make = getattr(self._sdk(), self.client_class)
            client = make(api_key=api_key, base_url=base_url, max_retries=max_retries)
        self.client = client

    def _sdk(self) -> Any:
        return import_sdk(self.sdk, type(self).__name__)

    def _error(self, exc: Any) -> tuple[str, object]:
        """The ``code`` and message of the vendor's error, from the SDK's ``APIStatusError``."""
        raise NotImplementedError

    async def _request(self, send: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        """Await ``send()`` (one SDK call) and return the response as JSON.

        Raises:
            ProviderError: The API answered an error (``code`` from the vendor's error body;
                ``recoverable`` for 408, 409, 429 and 5xx), or could not be reached
                (``code="connection"``, recoverable).
        """
        sdk = self._sdk()
        try:
            response = await send()
        except sdk.APIStatusError as exc:
            code, message = self._error(exc)
            recoverable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise ProviderError(
                f"{self.vendor} refused the request ({exc.status_code}): {message}",
                code=code,
                recoverable=recoverable,
            ) from exc
        except sdk.APIConnectionError as exc:
            raise ProviderError(
                f"{self.vendor} could not be reached: {exc}", code="connection", recoverable=True
            ) from exc
        body: dict[str, Any] = response.model_dump(mode="json", exclude_none=True)
        return body

    async def aclose(self) -> None:
        """Close the SDK client's connections. Idempotent.

        Cancellation: safe; the connections are closed anyway when the client is collected.
        """
        await self.client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"
