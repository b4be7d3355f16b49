"""The fixture generator library (``scripts/fixturegen``): a set it writes is the same on
every run, and its manifest is what `load_manifest` and the benches read.

A synthetic voice (a tone whose pitch follows the text) stands in for the synthesisers, so
the test needs no TTS binary.
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

from fixturegen_rig import fg, share_under

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


def test_the_new_noises_have_unit_power_where_they_should() -> None:
    rng = np.random.default_rng(1)
    n = 2 * fg.RATE
    for make, under, share in ((fg.car, 300.0, 0.8), (fg.wind, 450.0, 0.95)):
        x = make(n, rng)
        assert np.sqrt(np.mean(x**2)) == pytest.approx(1.0)
        assert share_under(x, under) > share, make.__name__
    hum = fg.buzz(n, rng)
    spectrum = np.abs(np.fft.rfft(hum))
    assert np.fft.rfftfreq(n, 1 / fg.RATE)[np.argmax(spectrum)] == pytest.approx(60.0)
    notes = fg.music(n, rng)
    assert share_under(notes, 150.0) < 0.01 < share_under(notes, 2000.0)


def test_packets_are_lost_in_whole_frames_at_the_rate_asked_for() -> None:
    x = np.ones(fg.TEL_RATE * 200)  # 10,000 frames of 20 ms
    y = fg.drop_packets(x, fg.TEL_RATE, np.random.default_rng(2), loss=0.08, burst=2.0)
    frames = y.reshape(-1, 160)
    assert set(np.unique(frames.sum(axis=1))) == {0.0, 160.0}  # a frame is lost whole or kept
    lost = frames[:, 0] == 0.0
    assert lost.mean() == pytest.approx(0.08, abs=0.015)
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], lost.astype(int), [0]]))))[::2]
    assert runs.mean() == pytest.approx(2.0, abs=0.3)
    same = fg.drop_packets(x, fg.TEL_RATE, np.random.default_rng(2), loss=0.08, burst=2.0)
    assert np.array_equal(y, same)
    assert np.array_equal(fg.drop_packets(x, fg.TEL_RATE, np.random.default_rng(2), 0.0), x)
    with pytest.raises(ValueError, match="loss must be"):
        fg.drop_packets(x, fg.TEL_RATE, np.random.default_rng(2), loss=1.0)


def test_overdrive_flattens_only_the_peaks() -> None:
    x = np.linspace(-0.5, 0.5, 1001)
    y = fg.overdrive(x, 6.0, 0.7)
    gain = 10 ** (6 / 20)
    assert np.abs(y).max() == pytest.approx(0.7)
    quiet = np.abs(x) * gain < 0.7
    assert np.allclose(y[quiet], x[quiet] * gain)
    assert np.all(np.abs(y[~quiet]) == pytest.approx(0.7))


def test_a_pause_splits_what_is_said() -> None:
    voice = fg.paused(tone, 0.5)
    whole, rate = voice("con ... firm")
    con, firm = (fg.trim(tone(part)[0], rate) for part in ("con", "firm"))
    assert len(whole) == len(con) + int(0.5 * rate) + len(firm)
    assert np.array_equal(whole[: len(con)], con)
    assert not whole[len(con) : len(con) + int(0.5 * rate)].any()
    assert np.array_equal(voice("confirm")[0], tone("confirm")[0])


@pytest.mark.skipif(shutil.which("opusenc") is None, reason="needs Debian's opus-tools")
def test_opus_keeps_a_tone_aligned_and_deterministic() -> None:
    t = np.arange(fg.RATE) / fg.RATE
    x = 0.3 * np.sin(2 * np.pi * 440 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    y = fg.opus(x, fg.RATE, 8)
    assert len(y) == len(x)
    assert np.corrcoef(x, y)[0, 1] > 0.95
    assert np.array_equal(y, fg.opus(x, fg.RATE, 8))


def _through(
    x: fg.FloatArray, condition: str, rng: np.random.Generator
) -> tuple[fg.FloatArray, int]:
    return x, fg.RATE


def test_mixed_pads_and_adds_noise_at_the_snr_of_its_condition() -> None:
    speech = fg.speech(tone, "confirm")
    render = fg.mixed({"white06": (fg.white, 6.0)}, _through, "t:", 0.4, 0.6)
    stem = "confirm__tone__white06"
    noisy, rate = render(speech, fg.Slot("confirm", "tone", "white06", None, stem, stem + ".flac"))
    lead = int(0.4 * rate)
    assert len(noisy) == lead + len(speech) + int(0.6 * rate)
    noise = noisy[lead : lead + len(speech)] - speech
    assert 10 * np.log10(np.mean(speech**2) / np.mean(noise**2)) == pytest.approx(6.0, abs=0.3)
    stem = "confirm__tone__clean"
    clean, _ = render(speech, fg.Slot("confirm", "tone", "clean", None, stem, stem + ".flac"))
    assert np.array_equal(clean[lead : lead + len(speech)], speech)


def test_noise_alone_writes_one_rejected_file_a_row(tmp_path: Path) -> None:
    rows = [("car", -30.0, "clean"), ("buzz", -20.0, "clean")]
    makers = {"car": fg.car, "buzz": fg.buzz}
    entries = fg.noise_alone(tmp_path, rows, makers, _through, "t:", fg.CHALLENGE)
    assert [e["file"] for e in entries] == ["car_00__clean.flac", "buzz_01__clean.flac"]
    assert all(e["expected"] == fg.REJECT and e["category"] == "nonspeech" for e in entries)
    import soundfile

    car, rate = soundfile.read(str(tmp_path / entries[0]["file"]))
    assert rate == fg.RATE and 1.5 <= len(car) / rate <= 3.0
    assert 20 * np.log10(np.sqrt(np.mean(car**2))) == pytest.approx(-30.0, abs=0.5)
