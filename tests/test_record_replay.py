"""Record a call of the user's own agent, replay it against the same code (wire replay).

The agent is written here as a user would write one: its own tool handler (a balance), the
human-input tools served first, its own hooks (one sends operator questions to a desk, one
refuses a tool), a responder asking the caller. Calls are recorded on the OpenAI Realtime
and Gemini Live test servers with :class:`CallRecorder`; each replays against the same
factory as recorded, and a changed tool handler or prompt fails with a readable divergence.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("soundfile", reason="recording caller audio needs soundfile")
pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")

from providers.base import RealtimeProvider
from providers.gemini_live import GeminiLiveProvider
from providers.gemini_live import ReconnectPolicy as LiveReconnect
from providers.gemini_live_testing import LiveTestServer
from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    AITool,
    HookContext,
    HookExecution,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    RealtimeVoiceChannel,
    ToolCallReport,
    VoiceKit,
    VoiceResponder,
)
from voice_hitl.recording import CallRecorder, CallReplay, RecordedCall, replay

FAST = ReconnectPolicy(max_attempts=1, initial_delay=0.0, max_delay=0.0)
PROMPT = "You are the bank's phone agent. Confirm every transfer with the caller."
BALANCE = AITool(
    name="get_balance",
    description="The balance of one of the caller's accounts.",
    parameters={"type": "object", "properties": {"account": {"type": "string"}}},
)
CLOSE = AITool(name="close_account", description="Close an account (never by phone).")


class Bank:
    """The user's agent: ``async with Bank(provider) as channel`` (the replay's factory)."""

    def __init__(
        self, provider: RealtimeProvider, *, balance: int = 1234, instructions: str = PROMPT
    ) -> None:
        self.balance = balance
        self.kit = VoiceKit()
        self.desk: asyncio.Queue[PendingInputEvent] = asyncio.Queue()
        self.reports: asyncio.Queue[ToolCallReport] = asyncio.Queue()
        self.human = HumanInputToolHandler(
            {"AskUserQuestion", "ConfirmAction"},
            timeout=60.0,
            tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
        )
        self.voice = RealtimeVoiceChannel(
            "bank",
            provider=provider,
            tools=[BALANCE, CLOSE],
            tool_handler=self.tools,
            human_input_handler=self.human,
            instructions=instructions,
        )
        self.kit.register_channel(self.voice)
        self.kit.hook(HookTrigger.BEFORE_TOOL_USE)(self.no_closing_by_phone)
        self.kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED, execution=HookExecution.ASYNC)(
            self.to_the_desk
        )
        self.kit.hook(HookTrigger.ON_TOOL_CALL, execution=HookExecution.ASYNC)(self.reported)
        self.responder = VoiceResponder(self.kit)
        self.responder.serve(self.voice)

    async def tools(self, name: str, arguments: dict[str, Any]) -> str:
        return json.dumps({"account": arguments.get("account"), "balance": self.balance})

    async def no_closing_by_phone(self, event: Any, ctx: HookContext) -> HookResult | None:
        if event.tool_name == "close_account":
            return HookResult.block("accounts are closed in a branch")
        return None

    async def to_the_desk(self, event: PendingInputEvent, ctx: HookContext) -> None:
        if str(event.arguments.get("question", "")).startswith("Operator:"):
            self.desk.put_nowait(event)

    async def reported(self, report: ToolCallReport, ctx: HookContext) -> None:
        self.reports.put_nowait(report)

    async def __aenter__(self) -> RealtimeVoiceChannel:
        return self.voice

    async def __aexit__(self, *exc_info: object) -> None:
        await self.responder.aclose()
        await self.kit.aclose()
        await self.voice.close()


Drive = Callable[[Any, Bank], Awaitable[None]]


async def _reports(bank: Bank, count: int) -> list[ToolCallReport]:
    return [await bank.reports.get() for _ in range(count)]


async def _operator_answers(bank: Bank, conn: Any, asked: Awaitable[Any]) -> None:
    """The operator at the desk answers once the responder has asked the caller too."""
    event = await bank.desk.get()
    await asked
    answer = json.dumps({"answer": "yes", "via": "console"})
    bank.human.handler.resolve(event.pending_id, answer, by="op-anna", via="console")


async def drive_openai(conn: Any, bank: Bank) -> None:
    """A SIP call: a balance, a refused tool, a keypad confirmation, an operator's answer."""
    await conn.expect("session.update")
    call = await conn.function_call("get_balance", {"account": "checking"})
    await conn.expect_function_call_output(call)
    call = await conn.function_call("close_account", {})
    await conn.expect_function_call_output(call)
    call = await conn.function_call("ConfirmAction", {"action": "move 500 to savings"})
    await conn.expect("response.create", lambda e: "500" in str(e["response"].get("instructions")))
    await conn.dtmf("1")
    await conn.expect_function_call_output(call)
    question = {"question": "Operator: waive the transfer fee?", "choices": ["yes", "no"]}
    call = await conn.function_call("AskUserQuestion", question)
    asked = conn.expect("response.create", lambda e: "fee" in str(e["response"]))
    await _operator_answers(bank, conn, asked)
    await conn.expect_function_call_output(call)
    await _reports(bank, 4)


async def drive_gemini(conn: Any, bank: Bank) -> None:
    """A Gemini Live call: a balance, a spoken choice, an operator's answer."""
    call = await conn.function_call("get_balance", {"account": "savings"})
    await conn.expect_tool_response(call)
    question = {"question": "Which account pays?", "choices": ["checking", "savings"]}
    call = await conn.function_call("AskUserQuestion", question)
    await conn.expect("clientContent", lambda body: "Which account" in json.dumps(body))
    await conn.transcribe_user("savings")
    await conn.expect_tool_response(call)
    question = {"question": "Operator: waive the transfer fee?", "choices": ["yes", "no"]}
    call = await conn.function_call("AskUserQuestion", question)
    asked = conn.expect("clientContent", lambda body: "fee" in json.dumps(body))
    await _operator_answers(bank, conn, asked)
    await conn.expect_tool_response(call)
    await _reports(bank, 3)


async def record(provider_kind: str, root: Path, **recorder: Any) -> Path:
    """Run one call of the user's agent on a test server with a recorder; its folder."""
    if provider_kind == "openai":
        server: Any = RealtimeTestServer()
    else:
        server = LiveTestServer(auto_respond=True)
    async with server:
        provider: RealtimeProvider
        if provider_kind == "openai":
            url = f"{server.url}?call_id=rtc_sip_1"
            provider = OpenAIRealtimeProvider(api_key="sk-test", url=url, reconnect=FAST)
            drive: Drive = drive_openai
        else:
            reconnect = LiveReconnect(max_attempts=1, initial_delay=0.0, max_delay=0.0)
            provider = GeminiLiveProvider(api_key="g-test", url=server.url, reconnect=reconnect)
            drive = drive_gemini
        recorder_ = CallRecorder(root, **recorder)
        bank = Bank(provider)
        async with bank as voice:
            recorder_.attach(voice)
            session = await voice.start_session(
                "branch-7", participant_id="caller-1", session_id=f"{provider_kind}-call"
            )
            await drive(await server.next_connection(), bank)
            await voice.end_session(session)
        await recorder_.aclose()
    (folder,) = recorder_.folders
    return folder


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("recorded")
    return {kind: asyncio.run(record(kind, root)) for kind in ("openai", "gemini")}


def _manifest(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "manifest.json").read_text()))


def test_a_recorded_call_is_one_self_contained_folder(recorded: dict[str, Path]) -> None:
    folder = recorded["openai"]
    manifest = _manifest(folder)
    assert (manifest["format"], manifest["version"], manifest["complete"]) == (
        "voice-hitl-call",
        2,
        True,
    )
    assert manifest["provider"]["kind"] == "openai" and manifest["provider"]["query"] == (
        "call_id=rtc_sip_1"
    )
    assert manifest["session"]["instructions"] == PROMPT
    tools = [tool["name"] for tool in manifest["session"]["tools"]]
    assert tools[:2] == ["get_balance", "close_account"] and "ConfirmAction" in tools
    assert manifest["human_input"]["timeout"] == 60.0
    assert manifest["session"]["tool_timeout_seconds"] == 10.0
    assert [m["kind"] for m in manifest["marks"]] == ["keypad"]
    assert sorted(manifest["files"]) == ["stories.json", "wire.jsonl"]
    stories = json.loads((folder / "stories.json").read_text())["stories"]
    assert [(s["tool"], s["by"], s["via"]) for s in stories] == [
        ("ConfirmAction", "caller-1", "dtmf"),
        ("AskUserQuestion", "op-anna", "console"),
    ]
    lines = (folder / "wire.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert (first["dir"], json.loads(first["frame"])["type"]) == ("out", "session.update")
    gemini = _manifest(recorded["gemini"])
    assert gemini["provider"]["kind"] == "gemini"
    frames = (recorded["gemini"] / "wire.jsonl").read_text().splitlines()
    assert any(json.loads(line).get("bin") for line in frames)  # the server's binary frames


@pytest.mark.parametrize("kind", ["openai", "gemini"])
async def test_a_recorded_call_replays_against_the_same_agent(
    recorded: dict[str, Path], kind: str
) -> None:
    result = await replay(recorded[kind], agent=Bank)
    assert result.same, result.report()
    assert [s["via"] for s in result.actual][-1] == "console"  # the operator's answer replayed
    assert result.report().endswith("as recorded")


@pytest.mark.parametrize("kind", ["openai", "gemini"])
async def test_a_changed_tool_handler_fails_with_a_readable_divergence(
    recorded: dict[str, Path], kind: str
) -> None:
    result = await replay(recorded[kind], agent=partial(Bank, balance=99), patience=2.0)
    assert not result.same and result.divergence is not None
    text = result.report()
    assert "first divergence" in text and "1234" in text and "99" in text, text
    assert "recorded just before" in text


async def test_a_changed_prompt_diverges_at_the_session_setup(recorded: dict[str, Path]) -> None:
    agent = partial(Bank, instructions="You are a pirate.")
    result: CallReplay = await replay(recorded["openai"], agent=agent, patience=2.0)
    assert result.divergence is not None and result.divergence.line == 1, result.report()
    assert "session.update" in result.divergence.what and "pirate" in result.report()


def test_the_plugin_fixture_takes_the_factory(recorded: dict[str, Path]) -> None:
    from voice_hitl.recording import RecordedCall as Exported

    assert Exported is RecordedCall and RecordedCall(strict=True).strict
    assert RecordedCall(agent=Bank).check(recorded["openai"]).same
    with pytest.raises(pytest.fail.Exception) as failed:
        RecordedCall(agent=partial(Bank, balance=7), patience=2.0).check(recorded["openai"])
    text = str(failed.value)
    assert "first divergence (wire.jsonl line" in text and "stories:\n--- recorded" in text
    with pytest.raises(ValueError, match="replays against your agent"):
        RecordedCall().check(recorded["openai"])
