"""The user's agent the recording tests record and replay, and the calls they record.

The agent is written as a user would write one: its own tool handler (a balance), the
human-input tools served first, its own hooks (one sends operator questions to a desk, one
refuses a tool), a responder asking the caller. ``record`` runs one call of it on the OpenAI
Realtime or Gemini Live test server with a :class:`CallRecorder` attached.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from providers.base import RealtimeProvider
from providers.gemini_live import GeminiLiveProvider
from providers.gemini_live import ReconnectPolicy as LiveReconnect
from providers.gemini_live_testing import LiveTestServer
from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer
from providers.twilio import PhoneServer, TwilioTransport
from providers.twilio.testing import FakeTwilioCall
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    AITool,
    HookContext,
    HookExecution,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    LocalTransport,
    PendingInputEvent,
    RealtimeVoiceChannel,
    ToolCallReport,
    VoiceKit,
    VoiceResponder,
)
from voice_hitl.recording import CallRecorder

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
        self,
        provider: RealtimeProvider,
        *,
        balance: int = 1234,
        note: str = "paid by direct debit",
        instructions: str = PROMPT,
        phone: bool = False,
    ) -> None:
        self.balance = balance
        self.note = note
        self.transport = LocalTransport()
        self.phone = TwilioTransport() if phone else None
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
            transport=self.phone or self.transport,
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
        account = arguments.get("account")
        return json.dumps({"account": account, "balance": self.balance, "note": self.note})

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

CALLER_FRAMES = 10
"""Caller audio frames (20 ms at 24 kHz) the recorded calls carry before the keypad."""


def caller_frame(index: int) -> np.ndarray[Any, np.dtype[np.int16]]:
    t = (np.arange(480) + 480 * index) / 24_000
    return (3000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)


async def speak(conn: Any, bank: Bank, session_id: str, appended: str) -> None:
    """The caller's audio reaches the provider (``appended``: the client message's kind)."""
    for index in range(CALLER_FRAMES):
        bank.transport.push_caller_audio(session_id, caller_frame(index))
    for _ in range(CALLER_FRAMES):
        await conn.expect(appended)


async def _reports(bank: Bank, count: int) -> list[ToolCallReport]:
    return [await bank.reports.get() for _ in range(count)]


async def _operator_answers(bank: Bank, conn: Any, asked: Awaitable[Any]) -> None:
    """The operator at the desk answers once the responder has asked the caller too."""
    event = await bank.desk.get()
    await asked
    answer = json.dumps({"answer": "yes", "via": "console"})
    bank.human.handler.resolve(event.pending_id, answer, by="op-anna", via="console")


async def drive_openai(
    conn: Any, bank: Bank, *, session_id: str = "openai-call", configured: bool = False
) -> None:
    """A SIP call: a balance, a refused tool, a keypad confirmation, an operator's answer
    (``configured``: the session's ``session.update`` was already awaited)."""
    if not configured:
        await conn.expect("session.update")
    call = await conn.function_call("get_balance", {"account": "checking"})
    await conn.expect_function_call_output(call)
    call = await conn.function_call("close_account", {})
    await conn.expect_function_call_output(call)
    call = await conn.function_call("ConfirmAction", {"action": "move 500 to savings"})
    await conn.expect("response.create", lambda e: "500" in str(e["response"].get("instructions")))
    await speak(conn, bank, session_id, "input_audio_buffer.append")
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
    await speak(conn, bank, "gemini-call", "realtimeInput")
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




def dtmf_tone(key: str, seconds: float = 0.2, rate: int = 24_000) -> np.ndarray[Any, Any]:
    """The key's two tones, as a phone's keypad plays them into the audio."""
    low, high = {"1": (697, 1209), "2": (697, 1336)}[key]
    t = np.arange(int(rate * seconds)) / rate
    wave = np.sin(2 * np.pi * low * t) + np.sin(2 * np.pi * high * t)
    return np.round(6000 * wave).astype(np.int16)


@contextlib.asynccontextmanager
async def _recorded_bank(
    root: Path, *, phone: bool = False, reconnect: ReconnectPolicy = FAST
) -> AsyncIterator[tuple[RealtimeTestServer, Bank, RealtimeVoiceChannel, CallRecorder]]:
    """The bank's agent on the OpenAI test server, its calls recorded under ``root``:
    ``(server, bank, its voice channel, recorder)``; the recorder is closed after the bank."""
    async with RealtimeTestServer() as server:
        provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=reconnect)
        recorder = CallRecorder(root)
        bank = Bank(provider, phone=phone)
        async with bank as voice:
            recorder.attach(voice)
            yield server, bank, voice, recorder
        await recorder.aclose()


async def record_twilio(root: Path) -> Path:
    """A Twilio phone call (Media Streams) to the agent on the OpenAI test server: the caller
    confirms a transfer with the keypad (a ``dtmf`` message, heard by the transport)."""
    async with _recorded_bank(root, phone=True) as (server, bank, voice, recorder):
        phone = PhoneServer(voice)
        await phone.start()
        try:
            async with FakeTwilioCall(phone.url, caller="+15550199") as caller:
                conn = await server.next_connection()
                await conn.expect("session.update")
                (session,) = voice.sessions
                call = await conn.function_call("ConfirmAction", {"action": "pay 80"})
                await conn.expect("response.create", lambda e: "pay 80" in str(e))
                await caller.send_silence(0.1)
                await caller.press("1")
                await conn.expect_function_call_output(call)
                await bank.reports.get()
                await caller.hang_up()
            await session.wait_closed()
        finally:
            await phone.aclose()
    (folder,) = recorder.folders
    return folder


async def record_tones(root: Path) -> Path:
    """A call whose caller answers with keypad tones in the audio (no keypad events): the
    responder hears the key in the audio it is sent."""
    async with _recorded_bank(root) as (server, bank, voice, recorder):
        session = await voice.start_session("branch-7", "caller-1", session_id="tones")
        conn = await server.next_connection()
        await conn.expect("session.update")
        call = await conn.function_call("ConfirmAction", {"action": "pay 80"})
        await conn.expect("response.create", lambda e: "pay 80" in str(e))
        tone = dtmf_tone("1")
        for start in range(0, len(tone), 480):
            bank.transport.push_caller_audio("tones", tone[start : start + 480])
        silence = np.zeros(480, dtype=np.int16)
        for _ in range(10):
            bank.transport.push_caller_audio("tones", silence)
        await conn.expect_function_call_output(call)
        await bank.reports.get()
        await voice.end_session(session)
    (folder,) = recorder.folders
    return folder


class Meeting:
    """The user's conference bot: ``async with Meeting(provider) as conference``."""

    def __init__(self, provider: RealtimeProvider) -> None:
        from conference import (
            ConferenceChannel,
            ConferenceRealtimeConfig,
            InMemoryConferenceBackend,
        )

        self.kit = VoiceKit()
        self.desk: asyncio.Queue[PendingInputEvent] = asyncio.Queue()
        self.reports: asyncio.Queue[ToolCallReport] = asyncio.Queue()
        backend = InMemoryConferenceBackend(frame_samples=480)
        for participant_id, name in (("alice", "Alice"), ("bob", "Bob")):
            backend.join(participant_id, name)
        human = HumanInputToolHandler(
            {"AskUserQuestion", "ConfirmAction"},
            timeout=60.0,
            tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
        )
        config = ConferenceRealtimeConfig(
            provider, human_input_handler=human, instructions="You are the board's bot."
        )
        self.conference = ConferenceChannel("board", backend=backend, realtime=config)
        self.conference.receipt_key = b"board-receipts"
        self.kit.register_channel(self.conference)
        self.kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED, execution=HookExecution.ASYNC)(
            self.announced
        )
        self.kit.hook(HookTrigger.ON_TOOL_CALL, execution=HookExecution.ASYNC)(self.reported)

    async def announced(self, event: PendingInputEvent, ctx: HookContext) -> None:
        self.desk.put_nowait(event)

    async def reported(self, report: ToolCallReport, ctx: HookContext) -> None:
        self.reports.put_nowait(report)

    async def __aenter__(self) -> Any:
        return self.conference

    async def __aexit__(self, *exc_info: object) -> None:
        await self.kit.aclose()
        await self.conference.close()


async def record_meeting(root: Path) -> Path:
    """A conference on the OpenAI test server: Alice and Bob both approve a lease."""
    async with RealtimeTestServer() as server:
        provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=FAST)
        recorder = CallRecorder(root)
        meeting = Meeting(provider)
        async with meeting as conference:
            recorder.attach(conference)
            await conference.plug_realtime()
            conn = await server.next_connection()
            await conn.expect("session.update")
            approval = {"action": "sign the lease", "approvers": ["alice", "bob"], "quorum": 2}
            call = await conn.function_call("ConfirmAction", approval)
            event = await meeting.desk.get()
            conference.answer(event.pending_id, "alice", "approve")
            conference.answer(event.pending_id, "bob", "approve")
            await conn.expect_function_call_output(call)
            await meeting.reports.get()
            await conference.unplug_realtime()
        await recorder.aclose()
    (folder,) = recorder.folders
    return folder


async def record_reconnect(root: Path) -> Path:
    """A call whose connection drops between two tool calls; the provider reconnects."""
    retry = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0)
    async with _recorded_bank(root, reconnect=retry) as (server, bank, voice, recorder):
        session = await voice.start_session("branch-7", "caller-1", session_id="dropped")
        for account in ("checking", "savings"):
            conn = await server.next_connection()
            await conn.expect("session.update")
            call = await conn.function_call("get_balance", {"account": account})
            await conn.expect_function_call_output(call)
            await bank.reports.get()
            if account == "checking":
                await conn.drop()
        await voice.end_session(session)
    (folder,) = recorder.folders
    return folder


async def record_shared_room(root: Path) -> list[Path]:
    """Two sessions on one channel in the same room, each with an operator question."""
    async with _recorded_bank(root) as (server, bank, voice, recorder):
        sessions, conns = [], []
        for caller in ("caller-1", "caller-2"):
            sessions.append(await voice.start_session("branch-7", caller, session_id=caller))
            conns.append(await server.next_connection())
            await conns[-1].expect("session.update")
        for conn, fee in zip(conns, ("fee", "charge"), strict=True):
            question = {"question": f"Operator: waive the {fee}?", "choices": ["yes", "no"]}
            call = await conn.function_call("AskUserQuestion", question)
            asked = conn.expect("response.create", lambda e, fee=fee: fee in str(e))
            await _operator_answers(bank, conn, asked)
            await conn.expect_function_call_output(call)
            await bank.reports.get()
        for session in sessions:
            await voice.end_session(session)
    return recorder.folders


SECRET = "Quixotic Zebrafish"
"""What the caller says in ``record_secret``'s call (a free-text answer: the words are the
answer), to be found nowhere in a redacted recording."""


async def record_secret(provider_kind: str, root: Path, **recorder: Any) -> Path:
    """A call whose caller says :data:`SECRET` to a free-text question, then an operator's
    question (whose request's context holds the call's transcript so far)."""
    server: Any = RealtimeTestServer() if provider_kind == "openai" else LiveTestServer(
        auto_respond=True
    )
    openai = provider_kind == "openai"
    async with server:
        provider: RealtimeProvider
        if openai:
            provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=FAST)
        else:
            reconnect = LiveReconnect(max_attempts=1, initial_delay=0.0, max_delay=0.0)
            provider = GeminiLiveProvider(api_key="g-test", url=server.url, reconnect=reconnect)
        recorder_ = CallRecorder(root, **recorder)
        bank = Bank(provider)
        async with bank as voice:
            recorder_.attach(voice)
            session = await voice.start_session("branch-7", "caller-1", session_id="secret")
            conn = await server.next_connection()
            if openai:
                await conn.expect("session.update")
            asked_kind = "response.create" if openai else "clientContent"
            result = conn.expect_function_call_output if openai else conn.expect_tool_response
            question = {"question": "Which name is on the card?"}
            call = await conn.function_call("AskUserQuestion", question)
            await conn.expect(asked_kind, lambda body: "name is on the card" in json.dumps(body))
            await conn.transcribe_user(SECRET)
            await result(call)
            question = {"question": "Operator: is the name on file?", "choices": ["yes", "no"]}
            call = await conn.function_call("AskUserQuestion", question)
            asked = conn.expect(asked_kind, lambda body: "on file" in json.dumps(body))
            await _operator_answers(bank, conn, asked)
            await result(call)
            await _reports(bank, 2)
            await voice.end_session(session)
        await recorder_.aclose()
    (folder,) = recorder_.folders
    return folder
