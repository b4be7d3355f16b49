"""The fixture generator library (``scripts/fixturegen``): a set it writes is the same on
every run, and its manifest is what `load_manifest` and the benches read.

A synthetic voice (a tone whose pitch follows the text) stands in for the synthesisers, so
the test needs no TTS binary.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import fixturegen as fg

from voice_hitl.speech._fixtures import load_manifest


def tone(text: str) -> tuple[fg.FloatArray, int]:
    """0.1 s of a tone per character, its pitch set by the character."""
    rate = 22_050
    t = np.arange(int(0.1 * rate)) / rate
    parts = [0.3 * np.sin(2 * np.pi * (150 + 3 * (ord(c) % 64)) * t) for c in text]
    return np.concatenate([np.zeros(rate // 5), *parts, np.zeros(rate // 5)]), rate


def _write(folder: Path) -> list[dict[str, object]]:
    babble = fg.babblers((tone, tone), ("one line", "another line"))
    render = fg.recipe(partial(fg.render_take, babblers=babble, babble=fg.two_talkers))
    said = fg.challenges({"confirm": "confirm", "i_confirm": "I confirm"})
    voices, conditions = {"tone": tone}, fg.TAKE_CONDITIONS
    return fg.write_set(folder, "test set", said, voices, conditions, render, takes=fg.TAKES)


def test_a_set_is_the_same_bytes_on_every_run(tmp_path: Path) -> None:
    entries = _write(tmp_path / "a")
    _write(tmp_path / "b")
    assert len(entries) == 2 * 2 * len(fg.TAKE_CONDITIONS)
    for name in ["manifest.json", *(str(e["file"]) for e in entries)]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_manifest_is_what_the_benches_read(tmp_path: Path) -> None:
    _write(tmp_path)
    audio_dir, entries = load_manifest(tmp_path)
    first = entries[0]
    assert list(first) == [
        "file", "id", "voice", "condition", "take", "sample_rate", "category", "text", "spec",
        "expected",
    ]  # fmt: skip
    assert first["expected"] == {"type": "answer", "choice_id": "yes", "value": True}
    assert {e["sample_rate"] for e in entries} == {fg.RATE, fg.TEL_RATE}
    assert all((audio_dir / e["file"]).is_file() for e in entries)


def test_noise_is_mixed_at_the_snr_asked_for() -> None:
    rng = np.random.default_rng(0)
    speech = rng.normal(0.0, 0.1, fg.RATE)
    for make in (fg.white, fg.pink, fg.brown):
        noise = make(fg.RATE, rng)
        mixed = fg.at_snr(speech, noise, speech, 3.0)
        snr = 10 * np.log10(np.mean(speech**2) / np.mean((mixed - speech) ** 2))
        assert snr == pytest.approx(3.0, abs=0.1)  # white noise: unit RMS give or take 1 %


def test_an_unknown_codec_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown codec 'opus'"):
        fg.codec(np.zeros(800), "opus")


def test_exports_are_the_submodules_names() -> None:
    assert sorted(fg.__all__) == sorted(set(fg.__all__))
    for name in fg.__all__:
        assert hasattr(fg, name), name
