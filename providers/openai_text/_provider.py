"""``OpenAIResponsesProvider``: OpenAI's Responses API (function calling) through the ``openai``
SDK."""

from __future__ import annotations

from typing import Any

from voice_hitl import AIContext, AIResponse, ProviderError

from ._mapping import from_response, to_request

__all__ = ["OpenAIResponsesProvider"]


def _sdk() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError(
            "OpenAIResponsesProvider needs the openai SDK: install voice-hitl[openai]"
        ) from exc
    return openai


class OpenAIResponsesProvider:
    """A text provider on OpenAI's Responses API (stateless: nothing stored server-side).

    Args:
        model: The model name.
        api_key: The API key (the SDK reads ``OPENAI_API_KEY`` when None).
        base_url: Another endpoint (the loopback test server, a proxy); include ``/v1``.
        max_retries: Retries the SDK makes on its own (connection errors, 429, 5xx).
        client: An ``openai.AsyncOpenAI`` to use instead of building one.
    """

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

    async def generate(self, context: AIContext) -> AIResponse:
        """One Responses API request for the round.

        Raises:
            ProviderError: The API answered an error (``code`` is its error code;
                ``recoverable`` for rate limits and server errors), the response failed, or
                the API could not be reached (``code="connection"``, recoverable).

        Cancellation: safe; the HTTP request is abandoned.
        """
        openai = _sdk()
        body = to_request(context, model=self.model)
        try:
            response = await self.client.responses.create(**body)
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
        return from_response(response.model_dump(mode="json", exclude_none=True))

    async def aclose(self) -> None:
        """Close the SDK client's connections. Idempotent.

        Cancellation: safe; the connections are closed anyway when the client is collected.
        """
        await self.client.close()

    def __repr__(self) -> str:
        return f"OpenAIResponsesProvider({self.model!r})"
