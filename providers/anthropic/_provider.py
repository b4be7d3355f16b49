"""``AnthropicAIProvider``: Anthropic's Messages API (tool use) through the ``anthropic`` SDK."""

from __future__ import annotations

from typing import Any

from providers._sdk_text import DEFAULT_TIMEOUT, SDKTextProvider
from voice_hitl import AIContext, AIResponse

from ._mapping import from_message, to_request

__all__ = ["AnthropicAIProvider"]


class AnthropicAIProvider(SDKTextProvider):
    """A text provider on Anthropic's Messages API.

    Args:
        model: The model name.
        api_key: The API key (the SDK reads ``ANTHROPIC_API_KEY`` when None).
        base_url: Another endpoint (the loopback test server, a proxy).
        max_tokens: The most tokens one answer may take.
        max_retries: Retries the SDK makes on its own (connection errors, timeouts, 429, 5xx).
        timeout: Seconds the SDK waits on each attempt of a request (default 120).
        client: An ``anthropic.AsyncAnthropic`` to use instead of building one.

    Raises:
        ValueError: ``max_tokens`` is below 1, ``timeout`` is not a finite number of seconds
            above zero, or ``max_retries`` is negative.
        TypeError: ``max_tokens``, ``timeout`` or ``max_retries`` is not a number.
    """

    vendor = "Anthropic"
    sdk = "anthropic"
    client_class = "AsyncAnthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 1024,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
        client: Any = None,
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
            raise TypeError(f"max_tokens must be a whole number, got {max_tokens!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.max_tokens = max_tokens
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            client=client,
        )

    def _error(self, exc: Any) -> tuple[str, object]:
        error = exc.body.get("error", {}) if isinstance(exc.body, dict) else {}
        return str(error.get("type", f"http_{exc.status_code}")), error.get("message", exc)

    async def generate(self, context: AIContext) -> AIResponse:
        """One Messages API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error type;
                ``recoverable`` for rate limits, overload and server errors), did not answer
                in time (``code="timeout"``), could not be reached (``code="connection"``),
                or answered something that is not a message (``code="bad_response"``,
                naming the status, content type and first bytes).

        Cancellation: safe; the HTTP request is abandoned and its connection closed.
        """
        body = to_request(context, model=self.model, max_tokens=self.max_tokens)
        send = self.client.messages.with_streaming_response.create
        return await self._request(send, body, "anthropic.types.Message", from_message)
