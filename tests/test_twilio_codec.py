"""The phone path's audio: G.711 µ-law against two peers (CPython's audioop, libsndfile), and
the streaming resampler (chunking, pass band, aliasing, against soxr)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from providers.twilio import StreamResampler, mulaw_to_pcm16, pcm16_to_mulaw
from voice_hitl.speech.asr import read_wav

EVERY_SAMPLE = np.arange(-32768, 32768, dtype=np.int16)
EVERY_CODE = bytes(range(256))


def _audioop():  # deprecated since 3.11, gone in 3.13 (audioop-lts there)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import audioop
        except ModuleNotFoundError:
            audioop = pytest.importorskip("audioop_lts")
    return audioop


def test_mulaw_matches_audioop_on_every_sample_and_code() -> None:
    audioop = _audioop()
    assert pcm16_to_mulaw(EVERY_SAMPLE) == audioop.lin2ulaw(EVERY_SAMPLE.tobytes(), 2)
    decoded = np.frombuffer(audioop.ulaw2lin(EVERY_CODE, 2), dtype=np.int16)
    assert np.array_equal(mulaw_to_pcm16(EVERY_CODE), decoded)


def test_mulaw_against_libsndfile() -> None:
    soundfile = pytest.importorskip("soundfile")
    buffer = io.BytesIO()
    soundfile.write(buffer, EVERY_SAMPLE, 8000, format="RAW", subtype="ULAW")
    theirs = np.frombuffer(buffer.getvalue(), dtype=np.uint8)
    ours = np.frombuffer(pcm16_to_mulaw(EVERY_SAMPLE), dtype=np.uint8)
    decoded, _ = soundfile.read(
        io.BytesIO(EVERY_CODE), samplerate=8000, channels=1, format="RAW", subtype="ULAW",
        dtype="int16",
    )
    assert np.array_equal(mulaw_to_pcm16(EVERY_CODE), decoded)
    # libsndfile rounds a negative sample's 14-bit magnitude the other way at each step's
    # edge: the codes differ there (381 of 65,536 inputs), never by more than one step.
    differ = np.nonzero(ours != theirs)[0]
    assert len(differ) <= 400
    step = np.abs(mulaw_to_pcm16(ours[differ].tobytes()).astype(int) - decoded[theirs[differ]])
    spacing = np.abs(np.diff(np.sort(mulaw_to_pcm16(EVERY_CODE).astype(int))))
    assert (EVERY_SAMPLE[differ] < 0).all()
    assert step.max() <= spacing.max()


def test_mulaw_round_trip_keeps_speech() -> None:
    speech, _ = read_wav("audio_fixtures/five_hundred_dollars__piper__telephone.flac")
    back = mulaw_to_pcm16(pcm16_to_mulaw(speech)).astype(float)
    noise = back - speech
    snr = 10 * np.log10(np.sum(speech.astype(float) ** 2) / np.sum(noise**2))
    assert snr > 30  # G.711 gives ~38 dB on speech


def test_mulaw_rejects_nothing_and_keeps_lengths() -> None:
    assert pcm16_to_mulaw(np.zeros(0, np.int16)) == b""
    assert mulaw_to_pcm16(b"").size == 0
    assert pcm16_to_mulaw(np.zeros(3, np.int16)) == b"\xff\xff\xff"


@pytest.mark.parametrize(("from_rate", "to_rate"), [(8000, 24000), (24000, 8000), (8000, 16000),
                                                    (16000, 8000), (44100, 8000)])
def test_streaming_equals_whole_and_tracks_the_rate(from_rate: int, to_rate: int) -> None:
    rng = np.random.default_rng(7)
    signal = rng.integers(-20000, 20000, from_rate).astype(np.int16)
    whole = StreamResampler(from_rate, to_rate)(signal)
    streamed = StreamResampler(from_rate, to_rate)
    pieces, start = [], 0
    while start < signal.size:
        size = int(rng.integers(1, 900))
        pieces.append(streamed(signal[start : start + size]))
        start += size
    assert np.array_equal(np.concatenate(pieces), whole)
    assert abs(whole.size - to_rate) <= 1


def _tone(freq: float, rate: int, seconds: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return np.round(10000 * np.sin(2 * np.pi * freq * t)).astype(np.int16)


def _level_db(signal: np.ndarray) -> float:
    rms = float(np.sqrt(np.mean(signal[200:].astype(float) ** 2)))
    return 20 * np.log10(max(rms, 1e-9) / (10000 / np.sqrt(2)))


def test_pass_band_kept_and_aliases_removed() -> None:
    assert abs(_level_db(StreamResampler(24000, 8000)(_tone(1000, 24000)))) < 0.1
    assert abs(_level_db(StreamResampler(8000, 24000)(_tone(3000, 8000)))) < 0.1
    # 6 kHz cannot exist at 8 kHz; without a filter it would fold to 2 kHz at full level.
    assert _level_db(StreamResampler(24000, 8000)(_tone(6000, 24000))) < -60


def test_close_to_soxr_on_speech() -> None:
    soxr = pytest.importorskip("soxr")
    speech, rate = read_wav("audio_fixtures/bank_transfer__piper__clean.flac")
    resampler = StreamResampler(rate, 8000)
    ours = resampler(speech).astype(float)[round(resampler.delay_seconds * 8000) :]
    theirs = soxr.resample(speech, rate, 8000, quality="VHQ").astype(float)
    n = min(ours.size, theirs.size)
    snr = 10 * np.log10(np.sum(theirs[:n] ** 2) / np.sum((ours[:n] - theirs[:n]) ** 2))
    assert snr > 25  # they differ near 4 kHz, where our pass band ends (3.6 kHz)
    assert resampler.delay_seconds < 0.003


def test_bad_rates() -> None:
    with pytest.raises(ValueError, match="positive"):
        StreamResampler(0, 8000)
