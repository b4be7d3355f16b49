"""Issue 32, the no side on audio: small stratified samples of the development sets through
Whisper against aggregate floors with a margin (the full measurement is
``bench/bench_heldout.py`` and ``bench/bench_risk.py``; figures in ``bench/results_risk.txt``).

* true no's of ``heldout3`` (development: its failures were read) are still taken;
* requests, noise and questions of ``adversarial`` (development) are not taken as a no they
  did not say, nor as a yes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_heldout_sets import _recogniser  # the same recognise callback

from voice_hitl.speech._fixtures import FixtureResult, load_manifest, run_fixtures

ROOT = Path(__file__).resolve().parents[2] / "audio_fixtures"

pytest.importorskip("soundfile")

TRUE_NO_MEASURED = 8
"""True no's taken of `true_no_sample`'s 8 (Whisper tiny.en at issue 32's last rule change;
the same with ``verify_no``)."""
NOT_SAID_MEASURED = 1
"""No's taken of `not_said_sample`'s 8 that the person did not say (the same code): a question
about the cost in 10 dB babble, heard "not much of that cost"."""


def true_no_sample() -> list[dict[str, Any]]:
    """Every seventh true no of ``heldout3``'s yes/no questions (its four voices, five
    conditions)."""
    _, entries = load_manifest(ROOT / "heldout3")
    return [e for e in entries if e["category"] == "confirm_no"][::7][:8]


def not_said_sample() -> list[dict[str, Any]]:
    """Every 13th request, noise or question of every second ``adversarial`` file (two
    of each category)."""
    _, entries = load_manifest(ROOT / "adversarial")
    wanted = {"nonspeech", "operator", "cancel", "question"}
    return [e for e in entries[::2] if e["category"] in wanted][::13][:8]


def _detail(results: list[FixtureResult]) -> str:
    return json.dumps([(r.file, r.transcript, r.got) for r in results])


def test_samples_cover_their_strata() -> None:
    no, other = true_no_sample(), not_said_sample()
    assert len(no) == 8 and len(other) == 8
    assert len({e["voice"] for e in no}) == 4
    assert len({e["condition"] for e in no}) == 5
    categories = [e["category"] for e in other]
    assert sorted(categories) == sorted(["nonspeech", "operator", "cancel", "question"] * 2)


@pytest.mark.timeout(300)
async def test_whisper_takes_true_nos_and_makes_none_up() -> None:
    pytest.importorskip("faster_whisper", reason="the whisper extra is not installed")

    from voice_hitl.speech.asr import load_recognizer

    recognise = _recogniser(await load_recognizer("whisper"))
    nos = await run_fixtures(ROOT / "heldout3", true_no_sample(), recognise)
    others = await run_fixtures(ROOT / "adversarial", not_said_sample(), recognise)
    assert sum(r.got == "no" for r in nos) >= TRUE_NO_MEASURED - 2, _detail(nos)
    assert sum(r.got == "no" for r in others) <= NOT_SAID_MEASURED + 1, _detail(others)
    assert not any(r.got == "yes" for r in nos + others), _detail(nos + others)
