"""``AnthropicAIProvider``: Anthropic's Messages API (tool use) through the ``anthropic`` SDK."""

from __future__ import annotations

from typing import Any

from providers._sdk_text import SDKTextProvider
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
        max_retries: Retries the SDK makes on its own (connection errors, 429, 5xx).
        client: An ``anthropic.AsyncAnthropic`` to use instead of building one.

    Raises:
        ValueError: ``max_tokens`` is below 1.
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
        client: Any = None,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self.max_tokens = max_tokens
        super().__init__(
            model, api_key=api_key, base_url=base_url, max_retries=max_retries, client=client
        )

    def _error(self, exc: Any) -> tuple[str, object]:
        error = exc.body.get("error", {}) if isinstance(exc.body, dict) else {}
        return str(error.get("type", f"http_{exc.status_code}")), error.get("message", exc)

    async def generate(self, context: AIContext) -> AIResponse:
        """One Messages API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error type;
                ``recoverable`` for rate limits, overload and server errors) or could not be
                reached (``code="connection"``, recoverable).

        Cancellation: safe; the HTTP request is abandoned.
        """
        body = to_request(context, model=self.model, max_tokens=self.max_tokens)
        return from_message(await self._request(lambda: self.client.messages.create(**body)))
