"""Text providers through the vendors' SDKs, against loopback servers that check every request
and reply with the SDK's own types."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

from providers.anthropic import AnthropicAIProvider, AnthropicTestServer
from providers.anthropic._mapping import to_request as anthropic_request
from providers.openai_text import OpenAIResponsesProvider, ResponsesTestServer
from voice_hitl import (
    AIChannel,
    AIContext,
    AIMessage,
    AITool,
    AIToolCall,
    HookContext,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    ProviderError,
    ServedCall,
    ToolCallReport,
    VoiceKit,
)

ASK = AITool(
    name="AskUserQuestion",
    description="Ask the user a question and wait for the answer.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)
LOOKUP = AITool(
    name="lookup",
    description="Look a key up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)


def answering_kit(human: HumanInputToolHandler, answer: str) -> tuple[VoiceKit, list[Any]]:
    kit = VoiceKit()
    reports: list[Any] = []

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def notify(event: PendingInputEvent, ctx: HookContext) -> None:
        reports.append(event)
        human.handler.resolve(event.pending_id, answer)

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def observe(event: ToolCallReport, ctx: HookContext) -> None:
        reports.append(event)

    return kit, reports


async def test_quick_start_on_the_anthropic_sdk() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30, tool_definitions=[ASK])
    kit, seen = answering_kit(human, '{"answer": "blue"}')
    async with AnthropicTestServer() as server:
        provider = AnthropicAIProvider(
            "claude-test", api_key="test", base_url=server.url, max_retries=0
        )
        ai = AIChannel(
            "agent",
            provider=provider,
            system_prompt="Use AskUserQuestion to ask the user.",
            human_input_handler=human,
        )
        kit.register_channel(ai)
        ask = ("AskUserQuestion", {"question": "Colour?"})
        ids = server.reply_tool_use(ask, text="Let me ask.")

        def echo(body: dict[str, Any]) -> dict[str, Any]:
            heard = body["messages"][-1]["content"][0]["content"]
            text = {"type": "text", "text": f"heard {heard}"}
            return {"content": [text], "stop_reason": "end_turn"}

        server.reply(echo)
        async with kit:
            reply = await ai.respond("choose a colour", room_id="r", author_id="alice")
        await provider.aclose()
    assert reply == 'heard {"answer": "blue"}'
    assert server.rejected == []
    first, second = (r.body for r in server.requests)
    assert first["system"] == "Use AskUserQuestion to ask the user."
    assert first["tools"][0]["name"] == "AskUserQuestion"
    assert second["messages"][1]["content"][1]["id"] == ids[0]
    assert second["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": ids[0], "content": '{"answer": "blue"}'}
        ],
    }
    assert seen[0].actor_id == "alice" and seen[1].outcome == "ok"


async def test_anthropic_server_rejects_what_the_types_reject() -> None:
    import anthropic

    async with AnthropicTestServer() as server:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=server.url, max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="bogus"):
            await client.messages.create(
                model="m",
                max_tokens=5,
                messages=[{"role": "user", "content": "hi"}],
                extra_body={"bogus": 1},
            )
        with pytest.raises(anthropic.BadRequestError, match="messages"):
            await client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "robot", "content": "hi"}]  # type: ignore[list-item, misc]
            )
        bad_block = {"type": "text", "text": "x", "surprise": 1}
        server.reply({"content": [bad_block], "stop_reason": "end_turn"})
        provider = AnthropicAIProvider("m", api_key="test", base_url=server.url, max_retries=0)
        with pytest.raises(ProviderError) as failed:
            await provider.generate(AIContext("", (AIMessage("user", "hi"),), ()))
        assert failed.value.recoverable and failed.value.code == "api_error"
        await client.close()
        await provider.aclose()
    assert [e.param for e in server.rejected] == ["bogus", "messages.0.role", "content.0.surprise"]


def test_anthropic_mapping_merges_a_rounds_results_and_replays_served_calls() -> None:
    calls = (
        AIToolCall("t1", "lookup", {"key": "a"}),
        AIToolCall("t2", "lookup", '{"key": "b"}'),
        AIToolCall("t3", "web", {}, ServedCall("page", False)),
    )
    context = AIContext(
        "",
        (
            AIMessage("user", "go"),
            AIMessage("assistant", "", tool_calls=calls),
            AIMessage("tool", "A", tool_call_id="t1"),
            AIMessage("tool", "oops", tool_call_id="t2", is_error=True),
        ),
        (),
    )
    body = anthropic_request(context, model="m", max_tokens=9)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    results = body["messages"][2]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [
        ("t3", False),
        ("t1", False),
        ("t2", True),
    ]
    assert body["messages"][1]["content"][1]["input"] == {"key": "b"}


async def test_responses_api_parallel_calls_and_a_served_mcp_call() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30, tool_definitions=[ASK])
    kit, seen = answering_kit(human, "the red one")
    ran: list[str] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        ran.append(arguments["key"])
        return f"value:{arguments['key']}"

    async with ResponsesTestServer() as server:
        provider = OpenAIResponsesProvider(
            "gpt-test", api_key="test", base_url=server.url, max_retries=0
        )
        ai = AIChannel(
            "agent", provider=provider, tool_handler=host, human_input_handler=human, tools=[LOOKUP]
        )
        kit.register_channel(ai)
        ids = server.reply_function_calls(
            ("AskUserQuestion", json.dumps({"question": "Which?"})), ("lookup", '{"key": "k"}')
        )
        remote = server.mcp_call("lookup", '{"key": "remote"}', output="42")
        server.reply([remote, server.message("done")])
        async with kit:
            assert await ai.respond("go") == "done"
        await provider.aclose()
    assert server.rejected == [] and ran == ["k"]
    second = server.requests[1].body
    results = [i for i in second["input"] if i.get("type") == "function_call_output"]
    outputs = {i["call_id"]: i["output"] for i in results}
    assert outputs == {ids[0]: "the red one", ids[1]: "value:k"}
    served = [r for r in seen if isinstance(r, ToolCallReport) and r.served]
    assert [(r.tool_name, r.result) for r in served] == [("lookup", "42")]


async def test_responses_server_rejects_what_the_types_reject() -> None:
    import openai

    async with ResponsesTestServer() as server:
        client = openai.AsyncOpenAI(api_key="test", base_url=server.url, max_retries=0)
        with pytest.raises(openai.BadRequestError) as rejected:
            await client.responses.create(model="m", input="hi", extra_body={"bogus": True})
        assert rejected.value.param == "bogus"
        provider = OpenAIResponsesProvider("m", api_key="test", base_url=server.url, max_retries=0)
        server.reply([{"type": "message", "role": "assistant"}])
        with pytest.raises(ProviderError, match="invalid reply"):
            await provider.generate(AIContext("", (AIMessage("user", "hi"),), ()))
        await client.close()
        await provider.aclose()
    assert len(server.rejected) == 2


async def test_loopback_server_closes_idle_keepalive_connections() -> None:
    async with AnthropicTestServer() as server:
        provider = AnthropicAIProvider("m", api_key="test", base_url=server.url, max_retries=0)
        server.reply_text("hello")
        response = await provider.generate(AIContext("", (AIMessage("user", "hi"),), ()))
        assert response.text == "hello"
        # The SDK keeps the connection open; leaving the server must end it, leaking no task.
    await provider.aclose()
    await asyncio.sleep(0)


async def test_chat_completions_loop_and_what_the_types_reject() -> None:
    import openai

    from providers.openai_text import ChatTestServer, OpenAIChatProvider

    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30, tool_definitions=[ASK])
    kit, seen = answering_kit(human, "tuesday")
    async with ChatTestServer() as server:
        provider = OpenAIChatProvider(
            "gpt-test", api_key="test", base_url=server.url, max_retries=0
        )
        ai = AIChannel(
            "agent", provider=provider, system_prompt="Be brief.", human_input_handler=human
        )
        kit.register_channel(ai)
        (call_id,) = server.reply_tool_calls(("AskUserQuestion", '{"question": "When?"}'))
        server.reply_text("booked")
        async with kit:
            assert await ai.respond("book it", author_id="eve") == "booked"
        client = openai.AsyncOpenAI(api_key="test", base_url=server.url, max_retries=0)
        with pytest.raises(openai.BadRequestError) as rejected:
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], extra_body={"bogus": 1}
            )
        assert rejected.value.param == "bogus"
        await client.close()
        await provider.aclose()
    assert len(server.rejected) == 1
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["id"] == call_id
    assert messages[3] == {"role": "tool", "tool_call_id": call_id, "content": "tuesday"}
    assert seen[0].actor_id == "eve"


async def test_a_request_with_no_reply_queued_fails_instead_of_hanging() -> None:
    async with AnthropicTestServer(reply_timeout=0.05) as server:
        provider = AnthropicAIProvider("m", api_key="test", base_url=server.url, max_retries=0)
        with pytest.raises(ProviderError, match=r"no reply was queued within 0\.05s"):
            await provider.generate(AIContext("", (AIMessage("user", "hi"),), ()))
        await provider.aclose()
    assert len(server.rejected) == 1
