"""What the text providers say when the server misbehaves, and how a turn ends while its model
request is in flight: the vendors' own SDK clients against the loopback servers, which here
play a broken or stalled API (an HTML page, malformed JSON, a body cut mid-way, no answer)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

from providers._http_loopback import HTTPReply
from providers._scripted_api import ScriptedAPIServer
from providers.anthropic import AnthropicAIProvider, AnthropicTestServer
from providers.mock_text import MockAIProvider
from providers.openai_text import (
    ChatTestServer,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    ResponsesTestServer,
)
from voice_hitl import (
    AIChannel,
    AIContext,
    AIMessage,
    AIResponse,
    ChannelClosedError,
    ProviderError,
)

CONTEXT = AIContext("", (AIMessage("user", "hi"),), ())


@dataclass(frozen=True)
class Vendor:
    name: str
    server: Callable[..., ScriptedAPIServer[Any]]
    provider: Callable[..., Any]
    valid: dict[str, Any]
    """A reply body the SDK's model accepts (for a cut-mid-way reply)."""


VENDORS = [
    Vendor(
        "anthropic",
        AnthropicTestServer,
        AnthropicAIProvider,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "a fairly long answer to cut"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    ),
    Vendor(
        "responses",
        ResponsesTestServer,
        OpenAIResponsesProvider,
        {"id": "resp_1", "object": "response", "model": "m", "output": [], "status": "completed"},
    ),
    Vendor(
        "chat",
        ChatTestServer,
        OpenAIChatProvider,
        {"id": "c1", "object": "chat.completion", "model": "m", "created": 1, "choices": []},
    ),
]


@asynccontextmanager
async def serving(
    vendor: Vendor, *, reply_timeout: float = 10.0, timeout: float = 30.0
) -> AsyncIterator[tuple[ScriptedAPIServer[Any], Any]]:
    async with vendor.server(reply_timeout=reply_timeout) as server:
        provider = vendor.provider(
            "m", api_key="test", base_url=server.url, max_retries=0, timeout=timeout
        )
        try:
            yield server, provider
        finally:
            await provider.aclose()


def _ids(vendor: Vendor) -> str:
    return vendor.name


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
async def test_bad_replies_are_provider_errors_naming_status_type_and_first_bytes(
    vendor: Vendor,
) -> None:
    valid = json.dumps(vendor.valid).encode()
    cases = [
        # (the reply, what the error must say)
        (HTTPReply(200, raw=b'{"id": "x", "type": '), ["malformed JSON", "HTTP 200"]),
        (
            HTTPReply(
                200, raw=b"<html><body>Sign in to the Wi-Fi</body></html>", content_type="text/html"
            ),
            ["not JSON", "HTTP 200", "text/html", "<html><body>Sign in"],
        ),
        (
            HTTPReply(200, raw=valid, cut_after=25),
            ["cut after 25 bytes", "HTTP 200", valid[:25].decode()],
        ),
        (HTTPReply(200, raw=b"[1, 2]"), ["a JSON list, not an object", "b'[1, 2]'"]),
        (HTTPReply(200, raw=b"\xff\xfe garbage"), ["malformed JSON", "\\xff\\xfe garbage"]),
        (
            HTTPReply(200, raw=b"x" * 5000, content_type="text/plain"),
            ["text/plain", "'...", "x" * 200],
        ),
        (
            HTTPReply(502, raw=b"<html>Bad Gateway</html>", content_type="text/html"),
            ["(502)", "HTTP 502", "text/html", "Bad Gateway"],
        ),
    ]
    async with serving(vendor) as (server, provider):
        for reply, expected in cases:
            server.reply(reply)
            with pytest.raises(ProviderError) as failed:
                await provider.generate(CONTEXT)
            message = str(failed.value)
            for part in expected:
                assert part in message, (reply, message)
            assert failed.value.code in ("bad_response", "http_502"), message
            assert "x" * 201 not in message  # only the first bytes are quoted
        assert len(server.requests) == len(cases)  # the SDK's own retries are off


async def test_a_reply_of_the_wrong_shape_is_a_bad_response_not_a_key_error() -> None:
    vendor = VENDORS[0]
    body = {**vendor.valid, "content": [{"type": "tool_use", "name": "lookup"}]}  # no id
    async with serving(vendor) as (server, provider):
        server.reply(HTTPReply(200, raw=json.dumps(body).encode()))
        with pytest.raises(ProviderError, match=r"could not read.*KeyError") as failed:
            await provider.generate(CONTEXT)
    assert failed.value.code == "bad_response"


async def test_a_malformed_reply_ends_the_turn_with_the_provider_error() -> None:
    async with serving(VENDORS[1]) as (server, provider):
        ai = AIChannel("agent", provider=provider)
        server.reply(HTTPReply(200, raw=b"{oops"))
        with pytest.raises(ProviderError, match=r"malformed JSON.*HTTP 200, application/json"):
            await ai.respond("hello")
        server.reply_text("fine now")  # the channel is still usable
        assert await ai.respond("again") == "fine now"
        await ai.close()


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
async def test_close_cancels_a_stalled_model_request(vendor: Vendor) -> None:
    async with serving(vendor, reply_timeout=600) as (server, provider):
        ai = AIChannel("agent", provider=provider)
        turn = asyncio.create_task(ai.respond("hello"))
        await server.next_request()  # the request is at the server, which never answers
        await ai.close()
        assert turn.done()  # close() waited for the request to settle
        with pytest.raises(ChannelClosedError, match="model request was in flight"):
            await turn
        (dropped,) = await server.wait_dropped(1)  # the server saw the connection go
        assert dropped.path.endswith(server.route)


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
async def test_cancelling_the_turn_cancels_its_model_request(vendor: Vendor) -> None:
    async with serving(vendor, reply_timeout=600) as (server, provider):
        ai = AIChannel("agent", provider=provider)
        turn = asyncio.create_task(ai.respond("hello", room_id="r"))
        await server.next_request()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await server.wait_dropped(1)
        server.reply_text("next")  # the room goes on: the next turn is answered
        assert await ai.respond("again", room_id="r") == "next"
        await ai.close()
    assert [m.role for m in ai.conversation("r")] == ["user", "user", "assistant"]


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
async def test_timeout_bounds_the_request(vendor: Vendor) -> None:
    async with serving(vendor, reply_timeout=600, timeout=0.2) as (server, provider):
        with pytest.raises(ProviderError, match=r"did not answer within 0\.2s") as failed:
            await provider.generate(CONTEXT)
        assert failed.value.code == "timeout" and failed.value.recoverable
        # the SDK hung up: on the waiting request, or (a loaded machine: 0.2 s can pass while
        # the SDK connects or sends) before the whole request reached the server
        await server.wait_hangups(1)


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
@pytest.mark.parametrize(
    ("timeout", "error", "match"),
    [
        (0, ValueError, "timeout must be above zero"),
        (-1.0, ValueError, "timeout must be above zero"),
        (float("nan"), ValueError, "timeout must be a finite"),
        (float("inf"), ValueError, "timeout must be a finite"),
        ("30", TypeError, "timeout must be a number"),
        (True, TypeError, "timeout must be a number"),
    ],
)
def test_timeout_is_checked(vendor: Vendor, timeout: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        vendor.provider("m", api_key="test", timeout=timeout)


@pytest.mark.parametrize("vendor", VENDORS, ids=_ids)
def test_other_arguments_are_checked(vendor: Vendor) -> None:
    with pytest.raises(ValueError, match="max_retries must be at least 0"):
        vendor.provider("m", api_key="test", max_retries=-1)
    with pytest.raises(ValueError, match="model must be a non-empty"):
        vendor.provider("", api_key="test")


async def test_the_mock_provider_takes_a_timeout_and_close_cancels_its_step() -> None:
    with pytest.raises(ValueError, match="timeout must be above zero"):
        MockAIProvider(timeout=0)
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def never(context: AIContext) -> AIResponse:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    ai = AIChannel("agent", provider=MockAIProvider([never]))
    turn = asyncio.create_task(ai.respond("hi"))
    await started.wait()
    await ai.close()
    assert cancelled.is_set()
    with pytest.raises(ChannelClosedError, match="model request was in flight"):
        await turn
    bounded = AIChannel("bounded", provider=MockAIProvider([never], timeout=0.05))
    with pytest.raises(ProviderError, match=r"did not answer within 0\.05s") as failed:
        await bounded.respond("hi")
    assert failed.value.code == "timeout"
    await bounded.close()


class Broken:
    async def generate(self, context: AIContext) -> AIResponse:
        raise KeyError("choices")


async def test_a_provider_raising_something_else_is_a_provider_error() -> None:
    ai = AIChannel("agent", provider=Broken())
    with pytest.raises(ProviderError, match="failed: KeyError: 'choices'") as failed:
        await ai.respond("hi")
    assert failed.value.code == "provider_failed"
    with pytest.raises(TypeError, match="text must be a string"):
        await ai.respond(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="author_id must be a string or None"):
        await ai.respond("hi", author_id=7)  # type: ignore[arg-type]
    await ai.close()
