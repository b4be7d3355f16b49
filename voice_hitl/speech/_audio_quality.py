"""`AudioQuality`: what a speech gate measured of one utterance (core; no extra needed)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AudioQuality"]


@dataclass(frozen=True, slots=True)
class AudioQuality:
    """What the gate measured of one utterance.

    Attributes:
        speech_ms: milliseconds of windows the VAD calls speech.
        speech_probability: the VAD's mean probability over those windows (0 when none).
        snr_db: speech power (the speech windows' power less the noise's) over the noise's
            mean power (of the non-speech windows away from speech; of the quietest windows
            when there are few: `asr._snr`), in dB; 0 to 60.
        clipped: share of samples at or near full scale.
    """

    speech_ms: float
    speech_probability: float
    snr_db: float
    clipped: float

    def as_json(self) -> dict[str, float]:
        """Rounded figures for answer JSON and the journal."""
        return {
            "speech_ms": round(self.speech_ms),
            "speech_probability": round(self.speech_probability, 3),
            "snr_db": round(self.snr_db, 1),
            "clipped": round(self.clipped, 4),
        }
