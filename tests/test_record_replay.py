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
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")
pytest.importorskip("openai", reason="the openai extra (openai SDK types) is not installed")

import numpy as np
import soundfile
from record_rig import (
    CALLER_FRAMES,
    PROMPT,
    Bank,
    Meeting,
    caller_frame,
    record,
    record_meeting,
    record_reconnect,
    record_tones,
    record_twilio,
)

from voice_hitl.recording import CallReplay, RecordedCall, replay


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("recorded")
    return {kind: asyncio.run(record(kind, root)) for kind in ("openai", "gemini")}


def _manifest(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "manifest.json").read_text()))


def test_a_recorded_call_is_one_self_contained_folder(recorded: dict[str, Path]) -> None:
    folder = recorded["openai"]
    manifest = _manifest(folder)
    lines = (folder / "wire.jsonl").read_text().splitlines()
    assert (manifest["format"], manifest["version"], manifest["complete"]) == (
        "voice-hitl-call",
        3,
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
    assert sorted(manifest["files"]) == ["caller.flac", "stories.json", "wire.jsonl"]
    audio, rate = soundfile.read(folder / "caller.flac", dtype="int16")
    assert rate == 24_000 and len(audio) == 480 * CALLER_FRAMES == manifest["marks"][0]["sample"]
    assert np.array_equal(audio[:480], caller_frame(0))  # as the transport delivered it
    appends = [line for line in lines if "input_audio_buffer.append" in line]
    assert len(appends) == CALLER_FRAMES and all('"elided"' in line for line in appends)
    stories = json.loads((folder / "stories.json").read_text())["stories"]
    assert [(s["tool"], s["by"], s["via"]) for s in stories] == [
        ("ConfirmAction", "caller-1", "dtmf"),
        ("AskUserQuestion", "op-anna", "console"),
    ]
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


def test_a_twilio_phone_call_records_and_replays(tmp_path: Path) -> None:
    folder = asyncio.run(record_twilio(tmp_path))
    manifest = _manifest(folder)
    assert manifest["complete"], manifest["incomplete"]
    (mark,) = manifest["marks"]
    assert (mark["kind"], mark["keys"], mark["source"]) == ("keypad", "1", "transport")
    audio, rate = soundfile.read(folder / "caller.flac", dtype="int16")
    assert (len(audio), rate) == (2400, 24_000)  # the line's 0.1 s at the channel's rate
    assert mark["sample"] <= 2400  # the key is marked where the audio had got to
    (story,) = json.loads((folder / "stories.json").read_text())["stories"]
    assert (story["by"], story["via"], story["answer"]["answer"]) == ("+15550199", "dtmf", True)
    result = asyncio.run(replay(folder, agent=partial(Bank, phone=True)))
    assert result.same, result.report()  # the recorded key was pressed again on the line


def test_audio_replay_hears_the_recorded_caller_again(tmp_path: Path) -> None:
    folder = asyncio.run(record_tones(tmp_path))
    (story,) = json.loads((folder / "stories.json").read_text())["stories"]
    assert (story["via"], story["answer"]["answer"]) == ("dtmf", True)  # a tone in the audio
    heard = asyncio.run(replay(folder, agent=Bank, mode="audio"))
    assert heard.same, heard.report()
    deaf = asyncio.run(replay(folder, agent=Bank, patience=0.5))  # wire only: no audio, no key
    assert deaf.divergence is not None
    assert "did not send conversation.item.create within 0.5 s" in deaf.divergence.what


def test_a_conference_records_and_its_approvals_replay(tmp_path: Path) -> None:
    folder = asyncio.run(record_meeting(tmp_path))
    manifest = _manifest(folder)
    assert manifest["complete"] and manifest["session"]["channel_kind"] == "conference"
    (story,) = json.loads((folder / "stories.json").read_text())["stories"]
    assert story["approvals"] == [["alice", "approve"], ["bob", "approve"]]
    assert (story["by"], story["via"]) == ("alice,bob", "approval")
    result = asyncio.run(replay(folder, agent=Meeting))
    assert result.same, result.report()  # the votes were cast again, the quorum settled it
    assert result.actual[0]["approvals"] == story["approvals"]


def test_a_dropped_connection_replays_as_a_reconnect(tmp_path: Path) -> None:
    folder = asyncio.run(record_reconnect(tmp_path))
    lines = [json.loads(line) for line in (folder / "wire.jsonl").read_text().splitlines()]
    assert sorted({line["conn"] for line in lines}) == [1, 2]
    result = asyncio.run(replay(folder, agent=Bank))
    assert result.same, result.report()
    changed = asyncio.run(replay(folder, agent=partial(Bank, balance=5), patience=1.0))
    assert changed.divergence is not None and "1234" in changed.report()


async def test_a_changed_note_in_the_users_tool_result_fails_the_replay(
    recorded: dict[str, Path],
) -> None:
    """Only the project's own varying fields are left out: a ``note`` in the user's tool result
    is the user's data and is compared, on both providers' wires."""
    for kind in ("openai", "gemini"):
        agent = partial(Bank, note="account in arrears")
        result = await replay(recorded[kind], agent=agent, patience=2.0)
        assert result.divergence is not None, result.report()
        text = result.divergence.report()
        assert "paid by direct debit" in text and "account in arrears" in text, text


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        ({"voice": "cedar"}, '"voice": "cedar"'),
        ({"transcription_model": "whisper-1"}, '"model": "whisper-1"'),
        ({"turn_detection": {"type": "semantic_vad"}}, '"type": "semantic_vad"'),
    ],
)
async def test_a_changed_session_configuration_fails_the_replay(
    recorded: dict[str, Path], change: dict[str, Any], shown: str
) -> None:
    from providers.openai_realtime import RealtimeOptions

    options = RealtimeOptions(**change)
    result = await replay(recorded["openai"], agent=Bank, options=options, patience=2.0)
    assert result.divergence is not None and result.divergence.line == 1, result.report()
    assert "session.update" in result.divergence.what and shown in result.report()


def test_only_the_projects_varying_fields_are_left_out() -> None:
    """By place: a spoken answer's recogniser figures and an approval's time (unless strict),
    never the same key names in the user's results or elsewhere in the answer."""
    from voice_hitl.recording._volatile import WireNormaliser, answer_compared

    heard = {
        "answer": 500, "choice_id": None, "transcript": "five hundred", "confidence": 0.91,
        "via": "speech", "actor_id": "caller",
        "evidence": {"risk": "low", "turns": 1, "confidence": 0.99, "audio": {"snr_db": 44.1}},
    }
    other_cpu = {**heard, "transcript": "five hundred dollars", "confidence": 0.87,
                 "evidence": {**heard["evidence"], "confidence": 0.9, "audio": {"snr_db": 41.0}}}
    assert answer_compared(heard) == answer_compared(other_cpu)
    assert answer_compared(heard, strict=True) != answer_compared(other_cpu, strict=True)
    assert answer_compared(heard) != answer_compared({**heard, "answer": 50})
    assert answer_compared(heard) != answer_compared({**heard, "evidence": {"risk": "high"}})
    typed = {**heard, "via": "console"}  # an operator's JSON: compared whole
    assert answer_compared(typed) != answer_compared({**typed, "confidence": 0.5})
    approval = {"approved": True, "action": "x", "approvers": ["A"], "approved_at": "t1"}
    assert answer_compared(approval) == answer_compared({**approval, "approved_at": "t2"})
    assert answer_compared(approval) != answer_compared({**approval, "approvers": ["B"]})

    normalise = WireNormaliser(frozenset({"AskUserQuestion"}), {"c1": "AskUserQuestion",
                                                                "c2": "lookup"})

    def output(call_id: str, body: dict[str, Any], event: str) -> Any:
        item = {"type": "function_call_output", "call_id": call_id, "output": json.dumps(body)}
        return normalise({"type": "conversation.item.create", "event_id": event, "item": item})

    assert output("c1", heard, "e1") == output("c1", other_cpu, "e2")
    assert output("c2", heard, "e1") != output("c2", other_cpu, "e1")  # the user's tool
    assert output("c2", {"note": "a"}, "e1") != output("c2", {"note": "b"}, "e1")

    def gemini(name: str, body: dict[str, Any]) -> Any:
        response = {"id": "f1", "name": name, "response": {"output": body}}
        return normalise({"toolResponse": {"functionResponses": [response]}})

    assert gemini("AskUserQuestion", heard) == gemini("AskUserQuestion", other_cpu)
    assert gemini("lookup", heard) != gemini("lookup", other_cpu)
    session = {"type": "session.update", "session": {"audio": {"output": {"voice": "marin"}}}}
    changed = {"type": "session.update", "session": {"audio": {"output": {"voice": "cedar"}}}}
    assert normalise(session) != normalise(changed)


async def test_an_agent_factory_that_returns_no_channel_is_named(
    recorded: dict[str, Path],
) -> None:
    with pytest.raises(TypeError, match="the agent factory must return a RealtimeVoiceChannel"):
        await replay(recorded["openai"], agent=lambda provider: None)


def test_sessions_sharing_a_room_each_get_their_own_folder(tmp_path: Path) -> None:
    from record_rig import record_shared_room

    folders = asyncio.run(record_shared_room(tmp_path))
    assert [folder.name for folder in folders] == ["caller-1", "caller-2"]
    for folder, fee in zip(folders, ("fee", "charge"), strict=True):
        (story,) = json.loads((folder / "stories.json").read_text())["stories"]
        assert story["arguments"]["question"] == f"Operator: waive the {fee}?"
        assert story["actor"] == folder.name
        result = asyncio.run(replay(folder, agent=Bank))
        assert result.same, result.report()


def test_a_request_no_wire_can_place_between_sessions_is_named_not_guessed() -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from voice_hitl.human._lifecycle import RequestOpened
    from voice_hitl.human._pending import PendingInput
    from voice_hitl.recording import CallRecorder

    calls = [
        SimpleNamespace(config=SimpleNamespace(room_id="branch-7"), call_ids=set(),
                        request_ids=set(), ambiguous=None, story=lambda event: None)
        for _ in range(2)
    ]
    request = PendingInput("p1", "AskUserQuestion", {}, room_id="branch-7", tool_call_id="c9")
    opened = RequestOpened(request, datetime.now(UTC))
    CallRecorder._opened(opened, calls)  # type: ignore[arg-type]
    assert all(not call.request_ids for call in calls)
    assert all("could not be told apart" in call.ambiguous for call in calls)
    calls[1].call_ids.add("c9")  # the provider's frame names the session
    for call in calls:
        call.ambiguous = None
    CallRecorder._opened(opened, calls)  # type: ignore[arg-type]
    assert [call.request_ids for call in calls] == [set(), {"p1"}]
