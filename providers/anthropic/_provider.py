"""``AnthropicAIProvider``: Anthropic's Messages API (tool use) through the ``anthropic`` SDK."""

from __future__ import annotations

from typing import Any

from voice_hitl import AIContext, AIResponse, ProviderError

from ._mapping import from_message, to_request

__all__ = ["AnthropicAIProvider"]


def _sdk() -> Any:
    try:
        import anthropic
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError(
            "AnthropicAIProvider needs the anthropic SDK: install voice-hitl[anthropic]"
        ) from exc
    return anthropic


class AnthropicAIProvider:
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
        self.model = model
        self.max_tokens = max_tokens
        if client is None:
            client = _sdk().AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=max_retries
            )
        self.client = client

    async def generate(self, context: AIContext) -> AIResponse:
        """One Messages API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error type;
                ``recoverable`` for rate limits, overload and server errors) or could not be
                reached (``code="connection"``, recoverable).

        Cancellation: safe; the HTTP request is abandoned.
        """
        anthropic = _sdk()
        body = to_request(context, model=self.model, max_tokens=self.max_tokens)
        try:
            message = await self.client.messages.create(**body)
        except anthropic.APIStatusError as exc:
            error = exc.body.get("error", {}) if isinstance(exc.body, dict) else {}
            code = str(error.get("type", f"http_{exc.status_code}"))
            recoverable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise ProviderError(
                f"Anthropic refused the request ({exc.status_code}): {error.get('message', exc)}",
                code=code,
                recoverable=recoverable,
            ) from exc
        except anthropic.APIConnectionError as exc:
            raise ProviderError(
                f"Anthropic could not be reached: {exc}", code="connection", recoverable=True
            ) from exc
        return from_message(message.model_dump(mode="json", exclude_none=True))

    async def aclose(self) -> None:
        """Close the SDK client's connections. Idempotent.

        Cancellation: safe; the connections are closed anyway when the client is collected.
        """
        await self.client.close()

    def __repr__(self) -> str:
        return f"AnthropicAIProvider({self.model!r})"
