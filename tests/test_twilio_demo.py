"""``voice-hitl demo --phone``: the recorded caller dials in over a loopback Media Stream; their
answers travel as 8 kHz µ-law and are heard by the local recogniser (PocketSphinx)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voice_hitl.demo._demo import PHONE_CALL, load_turns
from voice_hitl.journal import SqliteJournalStore
from voice_hitl.voice._audio import read_wav_pcm16

pytest.importorskip("pocketsphinx")

OUTPUTS = ("caller.wav", "agent.wav", "transcript.json", "journal.sqlite3")
STALE = ("call.wav", "call.json", "turns/01_opening.wav")


async def test_demo_call_over_the_phone_moves_the_money(tmp_path: Path) -> None:
    from voice_hitl.demo._phone import run_phone_demo

    # What an earlier (non-phone) demo left in the folder goes: it described another call.
    for stale in STALE:
        (tmp_path / stale).parent.mkdir(exist_ok=True)
        (tmp_path / stale).write_bytes(b"stale")
    # The embedded default (Whisper): its calibrated confidence lets one "confirm" approve.
    # PocketSphinx has none, so the high-risk step would ask the word once more, and the
    # recorded caller says it once.
    result = await run_phone_demo(speed=0, out_dir=tmp_path, printing=False)
    assert result.transfers == [500.0]
    answered = [(tool, json.loads(text)) for tool, outcome, text in result.tool_results
                if outcome == "ok"]
    assert [tool for tool, _ in answered] == ["AskUserQuestion", "ConfirmAction"]
    assert all(answer["via"] == "speech" for _, answer in answered)
    assert answered[1][1]["answer"] is True
    agent, rate = read_wav_pcm16(tmp_path / "agent.wav")
    assert rate == 8000 and agent.size > 8000  # the agent's voice, as the phone played it
    assert sorted(result.files) == sorted(str(tmp_path / name) for name in OUTPUTS)
    assert not any((tmp_path / stale).exists() for stale in (*STALE, "turns"))
    # The caller waits for the agent's voice to play out before answering: the line is
    # open (caller audio sent) for at least the caller's turns plus all the agent said.
    caller, _ = read_wav_pcm16(tmp_path / "caller.wav")
    turns = sum(turn.audio.size for turn in load_turns(PHONE_CALL)) // 2  # 16 kHz -> 8 kHz
    assert caller.size >= turns + agent.size
    store = SqliteJournalStore(tmp_path / "journal.sqlite3")
    try:
        notes = [e.data for e in store.read() if e.kind == "noted"]
    finally:
        store.close()
    # Twilio played both questions to the caller (our marks came back) before they answered.
    assert len(notes) == 2, notes


def test_phone_flag_needs_the_one_caller_call(capsys: pytest.CaptureFixture[str]) -> None:
    from voice_hitl._cli import main

    assert main(["demo", "--phone", "--conference"]) == 2
    assert "drop --conference" in capsys.readouterr().err
