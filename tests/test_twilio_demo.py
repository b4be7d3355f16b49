"""``voice-hitl demo --phone``: the recorded caller dials in over a loopback Media Stream; their
answers travel as 8 kHz µ-law and are heard by the local recogniser (PocketSphinx)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voice_hitl._audio import read_wav_pcm16
from voice_hitl.journal import SqliteJournalStore

pytest.importorskip("pocketsphinx")


async def test_demo_call_over_the_phone_moves_the_money(tmp_path: Path) -> None:
    from providers.twilio._demo import run_phone_demo

    result = await run_phone_demo(
        speed=0, out_dir=tmp_path, printing=False, recognizer="pocketsphinx"
    )
    assert result.transfers == [500.0]
    answered = [(tool, json.loads(text)) for tool, outcome, text in result.tool_results
                if outcome == "ok"]
    assert [tool for tool, _ in answered] == ["AskUserQuestion", "ConfirmAction"]
    assert all(answer["via"] == "speech" for _, answer in answered)
    assert answered[1][1]["answer"] is True
    agent, rate = read_wav_pcm16(tmp_path / "agent.wav")
    assert rate == 8000 and agent.size > 8000  # the agent's voice, as the phone played it
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
