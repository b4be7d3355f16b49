"""The shared shell of the text providers that drive a vendor's SDK over HTTP.

A vendor's provider (:class:`SDKTextProvider` subclass) names its SDK, its client class and how
to read the vendor's error body, and maps the channel's model to and from the API's JSON in its
own sans-I/O module. The shell builds the client, sends one request (bounded by ``timeout``),
reads the reply itself and translates every way it can go wrong into
:class:`~voice_hitl.ProviderError` the same way for every vendor, closes the client and names
the provider in its ``repr``.

The reply is read here, not by the SDK (``with_streaming_response``), so a reply that is not
the JSON the API promises (an HTML page from a proxy, malformed JSON, a body cut mid-way) is
an error naming its HTTP status, content type and first bytes, never a parser's exception.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, TypeVar

from voice_hitl import AIResponse, ProviderError
from voice_hitl._checks import positive_seconds

__all__ = ["DEFAULT_TIMEOUT", "FIRST_BYTES", "SDKTextProvider", "import_sdk"]

DEFAULT_TIMEOUT = 120.0
"""Seconds a text provider waits on the API by default (the SDKs' own default is 600)."""

FIRST_BYTES = 200
"""How much of a bad reply's body an error quotes."""

T = TypeVar("T")


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


def _sdk_attr(dotted: str, who: str) -> Any:
    module, name = dotted.rsplit(".", 1)
    return getattr(import_sdk(module, who), name)


def describe_reply(status: int, content_type: str, body: bytes) -> str:
    """``HTTP 200, text/html, body b'<html>...'``: how errors name a reply."""
    first = bytes(body[:FIRST_BYTES])
    more = "..." if len(body) > FIRST_BYTES else ""
    return f"HTTP {status}, {content_type or 'no content type'}, body {first!r}{more}"


class SDKTextProvider:
    """A text provider on one vendor SDK's async client.

    Args:
        model: The model name.
        api_key: The API key (the SDK reads its environment variable when None).
        base_url: Another endpoint (the loopback test server, a proxy).
        max_retries: Retries the SDK makes on its own (connection errors, timeouts, 429, 5xx).
        timeout: Seconds the SDK waits on each attempt of a request (to connect, and for each
            read of the reply); the SDK's retries each get it again.
        client: The SDK's async client to use instead of building one.

    Raises:
        ValueError: ``timeout`` is not a finite number of seconds above zero, or
            ``max_retries`` is negative.
        TypeError: ``timeout`` or ``max_retries`` is not a number.
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
        timeout: float = DEFAULT_TIMEOUT,
        client: Any = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty model name, got {model!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int):
            raise TypeError(f"max_retries must be a whole number, got {max_retries!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be at least 0, got {max_retries}")
        self.model = model
        self.timeout = positive_seconds("timeout", timeout)
        if client is None:
            make = getattr(self._sdk(), self.client_class)
            client = make(
                api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=self.timeout
            )
        self.client = client

    def _sdk(self) -> Any:
        return import_sdk(self.sdk, type(self).__name__)

    def _error(self, exc: Any) -> tuple[str, object]:
        """The ``code`` and message of the vendor's error, from the SDK's ``APIStatusError``."""
        raise NotImplementedError

    async def _request(
        self,
        send: Callable[..., AbstractAsyncContextManager[Any]],
        body: Mapping[str, Any],
        model: str,
        read: Callable[[dict[str, Any]], AIResponse],
    ) -> AIResponse:
        """Send one request and read its reply.

        Args:
            send: The SDK method's ``with_streaming_response`` form (``create``).
            body: Its arguments.
            model: The dotted name of the SDK model the reply is (``anthropic.types.Message``).
            read: The vendor's mapping from the reply's JSON to an :class:`AIResponse`.

        Raises:
            ProviderError: The API answered an error (``code`` from the vendor's error body;
                ``recoverable`` for 408, 409, 429 and 5xx); it did not answer within
                :attr:`timeout` (``code="timeout"``, recoverable); it could not be reached
                (``code="connection"``, recoverable); or its reply is not what the API
                promises (``code="bad_response"``: not JSON, malformed, cut mid-way or not
                the expected object; the message names the status, content type and first
                bytes).

        Cancellation: safe; the HTTP request is abandoned and its connection closed.
        """
        sdk = self._sdk()
        try:
            async with send(**body, timeout=self.timeout) as response:
                status = int(response.status_code)
                content_type = str(response.headers.get("content-type", ""))
                raw = bytearray()
                try:
                    async for chunk in response.iter_bytes():
                        raw += chunk
                except Exception as exc:  # the transport failed mid-body: the server answered
                    reply = describe_reply(status, content_type, bytes(raw))
                    raise ProviderError(
                        f"{self.vendor}'s reply was cut after {len(raw)} bytes "
                        f"({type(exc).__name__}: {exc}): {reply}",
                        code="bad_response",
                        recoverable=True,
                    ) from exc
        except sdk.APIStatusError as exc:
            raise self._refused(exc) from exc
        except sdk.APITimeoutError as exc:
            raise ProviderError(
                f"{self.vendor} did not answer within {self.timeout:g}s: {exc}",
                code="timeout",
                recoverable=True,
            ) from exc
        except sdk.APIConnectionError as exc:
            raise ProviderError(
                f"{self.vendor} could not be reached: {exc}", code="connection", recoverable=True
            ) from exc
        return self._decode(status, content_type, bytes(raw), model, read)

    def _refused(self, exc: Any) -> ProviderError:
        """The error for an answer with an error status (non-JSON bodies quoted)."""
        status = int(exc.status_code)
        recoverable = status in (408, 409, 429) or status >= 500
        if isinstance(exc.body, dict):
            code, message = self._error(exc)
        else:  # not the vendor's JSON error: say what came instead
            response = exc.response
            content_type = str(response.headers.get("content-type", ""))
            code = f"http_{status}"
            message = describe_reply(status, content_type, bytes(response.content))
        return ProviderError(
            f"{self.vendor} refused the request ({status}): {message}",
            code=code,
            recoverable=recoverable,
        )

    def _decode(
        self,
        status: int,
        content_type: str,
        raw: bytes,
        model: str,
        read: Callable[[dict[str, Any]], AIResponse],
    ) -> AIResponse:
        def bad(what: str) -> ProviderError:
            reply = describe_reply(status, content_type, raw)
            return ProviderError(f"{self.vendor} answered {what}: {reply}", code="bad_response")

        if "json" not in content_type.lower():
            raise bad("something that is not JSON")
        try:
            data = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            raise bad(f"malformed JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise bad(f"a JSON {type(data).__name__}, not an object")
        try:
            # The SDK's own lenient construction, as its parser does; then plain JSON again.
            parsed = _sdk_attr(model, type(self).__name__).model_construct(**data)
            body: dict[str, Any] = parsed.model_dump(mode="json", exclude_none=True)
            return read(body)
        except ProviderError:
            raise
        except Exception as exc:  # a field of the wrong kind deep in the reply
            raise bad(f"a reply it could not read ({type(exc).__name__}: {exc})") from exc

    async def aclose(self) -> None:
        """Close the SDK client's connections. Idempotent.

        Cancellation: safe; the connections are closed anyway when the client is collected.
        """
        await self.client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"
