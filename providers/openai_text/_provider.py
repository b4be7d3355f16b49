"""OpenAI's text APIs through the ``openai`` SDK: ``OpenAIResponsesProvider`` (Responses API)
and ``OpenAIChatProvider`` (Chat Completions), function calling on both."""

from __future__ import annotations

from typing import Any

from providers._sdk_text import SDKTextProvider
from voice_hitl import AIContext, AIResponse

from ._chat_mapping import from_chat_completion, to_chat_request
from ._mapping import from_response, to_request

__all__ = ["OpenAIChatProvider", "OpenAIResponsesProvider"]


class _OpenAIText(SDKTextProvider):
    """The ``openai`` SDK's client and its error body, shared by both APIs."""

    vendor = "OpenAI"
    sdk = "openai"
    client_class = "AsyncOpenAI"

    def _error(self, exc: Any) -> tuple[str, object]:
        error = exc.body if isinstance(exc.body, dict) else {}
        code = str(error.get("code") or error.get("type") or f"http_{exc.status_code}")
        return code, error.get("message", exc)


class OpenAIResponsesProvider(_OpenAIText):
    """A text provider on OpenAI's Responses API (stateless: nothing stored server-side).

    Args:
        model: The model name.
        api_key: The API key (the SDK reads ``OPENAI_API_KEY`` when None).
        base_url: Another endpoint (the loopback test server, a proxy); include ``/v1``.
        max_retries: Retries the SDK makes on its own (connection errors, timeouts, 429, 5xx).
        timeout: Seconds the SDK waits on each attempt of a request (default 120).
        client: An ``openai.AsyncOpenAI`` to use instead of building one.

    Raises:
        ValueError: ``timeout`` is not a finite number of seconds above zero, or
            ``max_retries`` is negative.
        TypeError: ``timeout`` or ``max_retries`` is not a number.
    """

    async def generate(self, context: AIContext) -> AIResponse:
        """One Responses API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error code;
                ``recoverable`` for rate limits and server errors), the response failed, the
                API did not answer in time (``code="timeout"``) or could not be reached
                (``code="connection"``), or it answered something that is not a response
                (``code="bad_response"``, naming the status, content type and first bytes).

        Cancellation: safe; the HTTP request is abandoned and its connection closed.
        """
        body = to_request(context, model=self.model)
        send = self.client.responses.with_streaming_response.create
        return await self._request(send, body, "openai.types.responses.Response", from_response)


class OpenAIChatProvider(_OpenAIText):
    """A text provider on OpenAI's Chat Completions API (takes the same arguments as
    :class:`OpenAIResponsesProvider`)."""

    async def generate(self, context: AIContext) -> AIResponse:
        """One Chat Completions request for the round.

        Raises:
            ProviderError: As :meth:`OpenAIResponsesProvider.generate`.

        Cancellation: safe; the HTTP request is abandoned and its connection closed.
        """
        body = to_chat_request(context, model=self.model)
        send = self.client.chat.completions.with_streaming_response.create
        model = "openai.types.chat.ChatCompletion"
        return await self._request(send, body, model, from_chat_completion)
