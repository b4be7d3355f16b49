"""SIP keypad presses (``input_audio_buffer.dtmf_event_received``) answer through the
responder, end to end: the OpenAI provider against the test server, a voice channel, and a
``VoiceResponder`` asking the caller. Keys map to answers as the Goertzel detector's do
(``voice_hitl.speech.dtmf``: confirm ``1`` yes / ``2`` no, choices by position, digits ended
by ``#``, ``*`` alone repeats the question)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from doors import Observed, human_tools

from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer, ServerConnection
from voice_hitl import RealtimeVoiceChannel, VoiceKit, VoiceResponder, VoiceSession

FAST = ReconnectPolicy(max_attempts=1, initial_delay=0.0, max_delay=0.0)


class Call:
    """A SIP call's sideband session: provider, channel and responder on the test server."""

    def __init__(self, server: RealtimeTestServer) -> None:
        self.server = server
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        sip_url = f"{server.url}?call_id=rtc_sip_1"
        provider = OpenAIRealtimeProvider(api_key="sk-sip", url=sip_url, reconnect=FAST)
        self.voice = RealtimeVoiceChannel(
            "phone", provider=provider, human_input_handler=human_tools(60.0)
        )
        self.kit.register_channel(self.voice)
        self.responder = VoiceResponder(self.kit)
        self.responder.serve(self.voice)

    async def start(self) -> tuple[VoiceSession, ServerConnection]:
        session = await self.voice.start_session("room", participant_id="caller-1")
        conn = await self.server.next_connection()
        assert conn.sip
        await conn.expect("session.update")
        return session, conn

    async def asked(self, conn: ServerConnection, words: str) -> None:
        """Wait until the responder has the model say a question containing ``words``."""
        await conn.expect(
            "response.create",
            lambda e: words in str((e.get("response") or {}).get("instructions", "")),
        )

    async def close(self) -> None:
        await self.responder.aclose()
        await self.kit.aclose()


@pytest.fixture
async def call() -> AsyncIterator[Call]:
    async with RealtimeTestServer(api_key="sk-sip") as server:
        rig = Call(server)
        yield rig
        await rig.close()
    assert server.invalid == []


def answer_of(text: str) -> dict[str, Any]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


async def test_confirm_answered_on_the_keypad(call: Call) -> None:
    session, conn = await call.start()
    call_id = await conn.function_call("ConfirmAction", {"action": "pay the invoice"})
    await call.asked(conn, "pay the invoice")
    await conn.dtmf("1")
    answer = answer_of(await conn.expect_function_call_output(call_id))
    assert (answer["answer"], answer["via"], answer["transcript"]) == (True, "dtmf", "1")
    report = await call.observed.reports.get()
    assert report.outcome == "ok"


async def test_choices_repeat_and_digits_on_the_keypad(call: Call) -> None:
    session, conn = await call.start()
    question = {"question": "Which account?", "choices": ["checking", "savings"]}
    first = await conn.function_call("AskUserQuestion", question)
    await call.asked(conn, "Which account?")
    await conn.dtmf("*")  # repeat the question
    await call.asked(conn, "Which account?")
    await conn.dtmf("2")
    answer = answer_of(await conn.expect_function_call_output(first))
    assert (answer["answer"], answer["via"]) == ("savings", "dtmf")

    pin = {"question": "Your member number?", "mode": "digits"}
    second = await conn.function_call("AskUserQuestion", pin)
    await call.asked(conn, "member number")
    await conn.dtmf("40*4217#")  # a slip, * to start over, then the number and #
    answer = answer_of(await conn.expect_function_call_output(second))
    assert (answer["answer"], answer["via"]) == ("4217", "dtmf")
    assert conn.count("response.create") >= 4  # question, repeat, reply, question


async def test_a_key_that_is_no_answer_reprompts(call: Call) -> None:
    session, conn = await call.start()
    call_id = await conn.function_call("ConfirmAction", {"action": "close the account"})
    await call.asked(conn, "close the account")
    await conn.dtmf("7")  # neither yes (1) nor no (2): never taken as an answer
    await call.asked(conn, "Sorry, I didn't catch that.")
    assert session.open_calls == [call_id]
    await conn.dtmf("2")
    answer = answer_of(await conn.expect_function_call_output(call_id))
    assert (answer["answer"], answer["via"]) == (False, "dtmf")
