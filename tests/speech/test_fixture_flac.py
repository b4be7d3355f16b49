"""The tuning fixtures (``audio_fixtures/*.flac``) hold exactly the samples of the WAV files
they replaced (issue 49): ``audio_fixtures/wav_samples.json`` recorded, from each WAV before
the conversion, its sample rate, its frame count and the sha256 of its little-endian int16
samples."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import soundfile

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
RECORD = json.loads((FIXTURES / "wav_samples.json").read_text())["files"]


def test_every_tuning_fixture_was_converted_and_none_is_left_as_wav() -> None:
    assert len(RECORD) == 369
    assert sorted(RECORD) == sorted(p.name for p in FIXTURES.glob("*.flac"))
    assert not list(FIXTURES.glob("*.wav"))
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    assert sorted(e["file"] for e in manifest["fixtures"]) == sorted(RECORD)


def test_every_flac_decodes_to_the_wav_samples() -> None:
    wrong = []
    for name, was in RECORD.items():
        info = soundfile.info(str(FIXTURES / name))
        pcm, rate = soundfile.read(str(FIXTURES / name), dtype="int16")
        digest = hashlib.sha256(pcm.astype("<i2").tobytes()).hexdigest()
        now = {"sample_rate": rate, "frames": len(pcm), "sha256": digest}
        if (info.format, info.subtype, info.channels) != ("FLAC", "PCM_16", 1) or now != was:
            wrong.append(name)
    assert wrong == []
