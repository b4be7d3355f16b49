"""The recorder's writer thread: nothing on the event loop but a queue put.

The loop hands frames and caller audio to :meth:`RecordingWriter.put` (a
``queue.SimpleQueue`` put: no lock held, no I/O); the thread parses, elides, redacts and
writes them. A write the disk refuses (full, read-only, gone) or the size bound stops the
recording, never the call: later items are counted and dropped, and ``incomplete`` says why.

The thread wakes every :data:`DRAIN_EVERY` seconds (not at every put: one wake-up a batch,
not one a frame), writes what was queued and hands it to the operating system (so it
survives the process being killed), and flushes at least every :data:`FLUSH_EVERY` seconds
while a long batch is written: a frame is in ``wire.jsonl`` within :data:`FLUSH_BOUND` of being
sent or received unless the machine is too loaded to run the thread (``bench/
bench_recording.py`` prints the delay's p99). The files are not fsynced before the call ends
(a power cut can lose the last seconds).
"""

from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._format import CALLER_AUDIO, WIRE_FILE
from ._redact import Redaction, redact_frame

__all__ = ["DRAIN_EVERY", "FLUSH_BOUND", "FLUSH_EVERY", "RecordingWriter"]

DRAIN_EVERY = 0.05
"""Seconds between the writer thread's wake-ups (it writes and flushes what was queued)."""
FLUSH_EVERY = 0.1
"""Seconds between flushes while items keep coming (the queue never runs empty)."""
FLUSH_BOUND = 0.25
"""The stated bound: a frame reaches the file within this many seconds of its tap."""

_STOP = object()
_AUDIO_APPENDS = ("input_audio_buffer.append",)
_MARKS = {
    "input_audio_buffer.speech_started": "speech_started",
    "input_audio_buffer.speech_stopped": "speech_stopped",
    "input_audio_buffer.dtmf_event_received": "keypad",
}


def _open_text(path: Path) -> IO[str]:
    """Where ``wire.jsonl`` goes (tests replace it to fill the disk). Its 1 MiB buffer is
    written out only at a flush: one system call a batch, since each one lets the event loop
    take the GIL and the thread waits for it back (Python's switch interval, 5 ms)."""
    return path.open("w", encoding="utf-8", buffering=1 << 20)


def _emptied(value: Any) -> Any:
    """``value`` with every string longer than 64 characters emptied (its shape kept)."""
    if isinstance(value, dict):
        return {key: _emptied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_emptied(item) for item in value]
    if isinstance(value, str) and len(value) > 64:
        return ""
    return value


def _is_audio_append(frame: Any) -> bool:
    if not isinstance(frame, dict):
        return False
    if frame.get("type") in _AUDIO_APPENDS:
        return True
    realtime = frame.get("realtimeInput", frame.get("realtime_input"))
    return isinstance(realtime, dict) and (
        "audio" in realtime or "mediaChunks" in realtime or "media_chunks" in realtime
    )


class RecordingWriter:
    """Writes one call's wire events and caller audio from its own thread.

    Args:
        folder: The call's folder (it exists).
        sample_rate: The caller audio's rate.
        max_bytes: Stop writing once this many bytes were written (caller audio counted at
            its PCM size, an upper bound of its FLAC size).
        max_frame_bytes: A frame longer than this keeps its shape with its long strings emptied.
        redaction: Hooks applied to every frame before it is written.
    """

    def __init__(
        self,
        folder: Path,
        *,
        sample_rate: int,
        max_bytes: int,
        max_frame_bytes: int,
        redaction: Redaction | None,
    ) -> None:
        self.folder = folder
        self.sample_rate = sample_rate
        self.max_bytes = max_bytes
        self.max_frame_bytes = max_frame_bytes
        self.redaction = redaction
        self.incomplete: str | None = None
        self.bytes_written = 0
        self.frames = 0
        self.dropped = 0
        self.samples = 0
        self.marks: list[dict[str, Any]] = []
        self.clock: list[list[float]] = []
        """``[t, sample]`` where the caller audio starts and wherever it jumps by more than
        0.1 s from a steady clock: the time of each caller sample."""
        self.audio_missing: str | None = None
        """Why the caller audio is not written (the call's frames still are)."""
        self.learned: dict[str, str] = {}
        """Argument values the redaction changed (see ``_redact``); read after :meth:`stop`."""
        self.started = time.monotonic()
        """The monotonic time items' ``t`` counts from (the call's start)."""
        self.flush_delays: list[float] | None = None
        """Set to a list to collect, per flush, how long its oldest item waited (bench)."""
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._wire: IO[str] | None = None
        self._audio: Any = None
        self._gathered: list[np.ndarray[Any, np.dtype[np.int16]]] = []
        """Caller audio not yet written (written at the next flush)."""

    def start(self) -> None:
        """Start the writer thread (once)."""
        if self._thread is not None:
            raise RuntimeError("the recording writer is already started")
        self._thread = threading.Thread(
            target=self._run, name=f"voice-hitl-recorder-{self.folder.name}", daemon=True
        )
        self._thread.start()

    def put(self, item: tuple[Any, ...]) -> None:
        """Queue a ``("wire", t, dir, conn, data)``, ``("audio", t, frame)`` or
        ``("mark", t, kind, keys)`` item."""
        self._queue.put(item)

    def stop(self) -> None:
        """Write what is queued, close the files and join the thread (blocking; idempotent)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            self._wake.set()
            thread.join()

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while self._drain():
                self._wake.wait(DRAIN_EVERY)
        finally:
            self._close_files()

    def _drain(self) -> bool:
        """Write and flush what is queued; False once the stop item was reached."""
        # A flush is a system call (the thread lets the GIL go): timed from the last flush,
        # not from the oldest item, or a writer behind would flush at every item and fall
        # further behind waiting for the GIL each time.
        oldest: float | None = None  # when the oldest item not yet flushed was tapped
        flushed = time.monotonic()
        try:
            while (item := self._queue.get_nowait()) is not _STOP:
                if oldest is None:
                    oldest = self.started + item[1]
                self._item(item)
                if time.monotonic() - flushed >= FLUSH_EVERY:
                    self._flush(oldest)
                    oldest, flushed = None, time.monotonic()
        except queue.Empty:
            self._flush(oldest)
            return True
        self._flush(oldest)
        return False

    def _item(self, item: tuple[Any, ...]) -> None:
        if self.incomplete is not None:
            self.dropped += 1
            return
        try:
            if item[0] == "wire":
                self._wire_item(*item[1:])
            elif item[0] == "mark":
                self._mark(item[1], item[2], item[3], "transport")
            else:
                self._audio_item(item[1], item[2])
        except OSError as exc:
            self.incomplete = f"the disk refused a write ({exc.strerror or exc})"
            self.dropped += 1

    def _flush(self, oldest: float | None) -> None:
        """Write the caller audio gathered (one FLAC write a batch, not one a frame) and hand
        everything written to the operating system (``oldest``: when the oldest item in it
        was tapped; None: nothing was)."""
        if oldest is None:
            return
        try:
            self._write_audio()
            if self._wire is not None:
                self._wire.flush()
            if self._audio is not None:
                self._audio.flush()
        except (OSError, RuntimeError) as exc:
            self.incomplete = self.incomplete or f"the disk refused a write ({exc})"
        if self.flush_delays is not None:
            self.flush_delays.append(time.monotonic() - oldest)

    def _close_files(self) -> None:
        if self.incomplete is None:
            try:
                self._write_audio()
            except OSError as exc:
                self.incomplete = f"the disk refused a write ({exc.strerror or exc})"
        for handle in (self._wire, self._audio):
            if handle is None:
                continue
            try:
                handle.close()
            except (OSError, RuntimeError) as exc:
                self.incomplete = self.incomplete or f"the disk refused a write ({exc})"

    def _count(self, size: int) -> bool:
        if self.bytes_written + size > self.max_bytes:
            self.incomplete = f"the size bound ({self.max_bytes} bytes) was reached"
            self.dropped += 1
            return False
        self.bytes_written += size
        return True

    def _wire_item(self, t: float, direction: str, conn: int, data: str | bytes) -> None:
        binary = isinstance(data, bytes)
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        line: dict[str, Any] = {"t": round(t, 6), "dir": direction, "conn": conn}
        try:
            frame = json.loads(text)
        except ValueError:
            frame = None
        if frame is not None and _is_audio_append(frame):
            line["elided"] = "caller audio (in caller.flac)"
            frame = _emptied(frame)
            text = json.dumps(frame)
        elif frame is not None:
            if direction == "in" and isinstance(frame, dict) and frame.get("type") in _MARKS:
                kind = _MARKS[frame["type"]]
                keys = str(frame.get("event", "")) if kind == "keypad" else None
                self._mark(line["t"], kind, keys, "wire")
            if self.redaction is not None:
                frame = redact_frame(frame, self.redaction, self.learned)
                text = json.dumps(frame)
            if len(text) > self.max_frame_bytes:
                line["elided"] = f"{len(text)} bytes over the frame bound"
                text = json.dumps(_emptied(frame))
        elif len(text) > self.max_frame_bytes:
            line["elided"] = f"{len(text)} bytes over the frame bound"
            text = text[: self.max_frame_bytes]
        if binary:
            line["bin"] = True
        line["frame"] = text
        out = json.dumps(line) + "\n"
        if not self._count(len(out)):
            return
        if self._wire is None:
            self._wire = _open_text(self.folder / WIRE_FILE)
        self._wire.write(out)
        self.frames += 1

    def _mark(self, t: float, kind: str, keys: str | None, source: str) -> None:
        mark: dict[str, Any] = {"t": round(t, 6), "kind": kind, "sample": self.samples}
        if keys is not None:
            mark["keys"] = keys
        mark["source"] = source
        self.marks.append(mark)

    def _audio_item(self, t: float, frame: np.ndarray[Any, np.dtype[np.int16]]) -> None:
        if self.audio_missing is not None or not self._count(2 * len(frame)):
            return
        if not self.clock or abs(
            self.clock[-1][0] + (self.samples - self.clock[-1][1]) / self.sample_rate - t
        ) > 0.1:
            self.clock.append([round(t, 6), self.samples])
        self._gathered.append(frame)
        self.samples += len(frame)

    def _write_audio(self) -> None:
        gathered, self._gathered = self._gathered, []
        if not gathered or self.audio_missing is not None:
            return
        if self._audio is None:
            try:
                import soundfile
            except ImportError:
                self.audio_missing = "soundfile is missing (pip install voice-hitl[recording])"
                return

            self._audio = soundfile.SoundFile(
                str(self.folder / CALLER_AUDIO),
                "w",
                samplerate=self.sample_rate,
                channels=1,
                subtype="PCM_16",
                format="FLAC",
            )
        try:
            self._audio.write(np.concatenate(gathered))
        except RuntimeError as exc:  # libsndfile reports a failed write as RuntimeError
            raise OSError(str(exc)) from exc
