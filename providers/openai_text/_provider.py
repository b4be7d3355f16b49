"""OpenAI's text APIs through the ``openai`` SDK: ``OpenAIResponsesProvider`` (Responses API)
and ``OpenAIChatProvider`` (Chat Completions), function calling on both."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from voice_hitl import AIContext, AIResponse, ProviderError

from ._chat_mapping import from_chat_completion, to_chat_request
from ._mapping import from_response, to_request

__all__ = ["OpenAIChatProvider", "OpenAIResponsesProvider"]


def _sdk() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError(
            "the OpenAI text providers need the openai SDK: install voice-hitl[openai]"
        ) from exc
    return openai


class _OpenAIText:
    """The SDK client and the translation of its errors, shared by both APIs."""

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
            client = _sdk().AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries)
        self.client = client

    async def _request(self, send: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        openai = _sdk()
        try:
            response = await send()
        except openai.APIStatusError as exc:
            error = exc.body if isinstance(exc.body, dict) else {}
            code = str(error.get("code") or error.get("type") or f"http_{exc.status_code}")
            recoverable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise ProviderError(
                f"OpenAI refused the request ({exc.status_code}): {error.get('message', exc)}",
                code=code,
                recoverable=recoverable,
            ) from exc
        except openai.APIConnectionError as exc:
            raise ProviderError(
                f"OpenAI could not be reached: {exc}", code="connection", recoverable=True
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


class OpenAIResponsesProvider(_OpenAIText):
    """A text provider on OpenAI's Responses API (stateless: nothing stored server-side).

    Args:
        model: The model name.
        api_key: The API key (the SDK reads ``OPENAI_API_KEY`` when None).
        base_url: Another endpoint (the loopback test server, a proxy); include ``/v1``.
        max_retries: Retries the SDK makes on its own (connection errors, 429, 5xx).
        client: An ``openai.AsyncOpenAI`` to use instead of building one.
    """

    async def generate(self, context: AIContext) -> AIResponse:
        """One Responses API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error code;
                ``recoverable`` for rate limits and server errors), the response failed, or
                the API could not be reached (``code="connection"``, recoverable).

        Cancellation: safe; the HTTP request is abandoned.
        """
        body = to_request(context, model=self.model)
        return from_response(await self._request(lambda: self.client.responses.create(**body)))


class OpenAIChatProvider(_OpenAIText):
    """A text provider on OpenAI's Chat Completions API (takes the same arguments as
    :class:`OpenAIResponsesProvider`)."""

    async def generate(self, context: AIContext) -> AIResponse:
        """One Chat Completions request for the round.

        Raises:
            ProviderError: As :meth:`OpenAIResponsesProvider.generate`.

        Cancellation: safe; the HTTP request is abandoned.
        """
        body = to_chat_request(context, model=self.model)
        completion = await self._request(lambda: self.client.chat.completions.create(**body))
        return from_chat_completion(completion)
