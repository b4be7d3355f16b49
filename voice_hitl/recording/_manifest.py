"""A recorded call on disk: ``call.json`` and the caller's turns.

``call.json`` names the call's kind (``phone`` or ``meeting``), the recogniser and timeout it
ran with, the caller's turns in order (a FLAC file each inside the folder, or a WAV file;
paths relative to the folder, with what the
turn waited for and who spoke it) and the stories of the requests it made (see
:func:`~voice_hitl.recording.summarise`). The demo writes one beside its audio and journal;
``audio_fixtures/recordings`` holds the demo calls as committed recordings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ..voice._audio import read_wav_pcm16, resample_pcm16
from ..voice._caller_transport import CallerTurn

__all__ = ["FORMAT", "MANIFEST", "Recording", "RecordingError", "read_recording", "write_recording"]

FORMAT = "voice-hitl-recording/1"
MANIFEST = "call.json"
_AFTER = ("agent", "heard", "now")
_KINDS = ("phone", "meeting")


class RecordingError(ValueError):
    """A recording folder is missing a file or its ``call.json`` is malformed."""


@dataclass(frozen=True)
class Recording:
    """A recorded call, loaded: how to run it again and what it did."""

    folder: Path
    kind: Literal["phone", "meeting"]
    recognizer: str
    timeout: float
    turns: list[CallerTurn]
    requests: list[dict[str, Any]]


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:40] or "turn"


def write_recording(
    folder: Path,
    *,
    kind: Literal["phone", "meeting"],
    recognizer: str,
    timeout: float,
    turns: Sequence[CallerTurn],
    requests: list[dict[str, Any]],
    sample_rate: int = 16_000,
) -> Path:
    """Write ``call.json`` and the turns (``turns/NN_label.flac``) into ``folder`` (blocking).

    The folder is self-contained: every turn's audio is inside it (FLAC, needs soundfile).
    """
    import soundfile

    turn_dir = folder / "turns"
    turn_dir.mkdir(parents=True, exist_ok=True)
    listed = []
    for index, turn in enumerate(turns, 1):
        name = f"turns/{index:02d}_{_slug(turn.label)}.flac"
        soundfile.write(folder / name, turn.audio, sample_rate, subtype="PCM_16", format="FLAC")
        listed.append(
            {
                "file": name,
                "label": turn.label,
                "after": turn.after,
                "speaker": turn.speaker,
                "barge_in": turn.barge_in,
            }
        )
    manifest = {
        "format": FORMAT,
        "kind": kind,
        "recognizer": recognizer,
        "timeout": timeout,
        "turns": listed,
        "requests": requests,
    }
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def _read_audio(path: Path) -> tuple[Any, int]:
    if path.suffix.lower() != ".flac":
        return read_wav_pcm16(path)
    if not path.exists():
        raise FileNotFoundError(path)
    import soundfile

    audio, rate = soundfile.read(path, dtype="int16", always_2d=True)
    return audio.mean(axis=1).astype("int16") if audio.shape[1] > 1 else audio[:, 0], rate


def _field(raw: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = raw.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        wanted = kind.__name__ if isinstance(kind, type) else "number"
        raise RecordingError(f"{where}: {name!r} must be a {wanted}, got {value!r}")
    return value


def read_recording(folder: str | Path, sample_rate: int = 16_000) -> Recording:
    """Load a recording (blocking: reads its audio).

    Raises:
        RecordingError: ``call.json`` or a turn's audio is missing or malformed; the message
            names the file and the field.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise RecordingError(f"{folder} is not a recorded call: {MANIFEST} is missing") from None
    except ValueError as exc:
        raise RecordingError(f"{path} is not JSON: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise RecordingError(f"{path}: 'format' must be {FORMAT!r}")
    kind = _field(raw, "kind", str, str(path))
    if kind not in _KINDS:
        raise RecordingError(f"{path}: 'kind' must be one of {_KINDS}, got {kind!r}")
    recognizer = _field(raw, "recognizer", str, str(path))
    timeout = float(_field(raw, "timeout", (int, float), str(path)))
    requests = _field(raw, "requests", list, str(path))
    turns = []
    for index, item in enumerate(_field(raw, "turns", list, str(path)), 1):
        where = f"{path} turn {index}"
        if not isinstance(item, dict):
            raise RecordingError(f"{where} must be an object")
        after = item.get("after", "agent")
        if after not in _AFTER:
            raise RecordingError(f"{where}: 'after' must be one of {_AFTER}, got {after!r}")
        audio_path = folder / _field(item, "file", str, where)
        try:
            audio, rate = _read_audio(audio_path)
        except FileNotFoundError:
            raise RecordingError(f"{where}: {audio_path} is missing") from None
        except (ValueError, RuntimeError) as exc:
            raise RecordingError(f"{where}: {audio_path} is not usable audio: {exc}") from None
        speaker = item.get("speaker")
        turns.append(
            CallerTurn(
                resample_pcm16(audio, rate, sample_rate),
                str(item.get("label", "")),
                barge_in=bool(item.get("barge_in", False)),
                after=cast(Literal["agent", "heard", "now"], after),
                speaker=None if speaker is None else str(speaker),
            )
        )
    return Recording(
        folder, cast(Literal["phone", "meeting"], kind), recognizer, timeout, turns, requests
    )
