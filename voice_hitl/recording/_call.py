"""One call being recorded: its folder, its writer, its taps and its stories."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..human._lifecycle import RequestEvent
from ..tools._tools import AITool
from ..voice._provider import RealtimeProvider, SessionConfig
from ._format import (
    CALLER_AUDIO,
    FORMAT_NAME,
    FORMAT_VERSION,
    STORIES_FILE,
    WIRE_FILE,
    digest_file,
    write_json,
    write_manifest,
)
from ._redact import Redaction, redact_record
from ._summary import summarise
from ._writer import RecordingWriter

__all__ = [
    "CallRecording",
    "StoryRecord",
    "provider_facts",
    "tool_call_ids",
    "voice_hitl_version",
    "write_json",
]


@dataclass(frozen=True, slots=True)
class StoryRecord:
    """One step of a request's story as a recording keeps it."""

    request_id: str
    at: str
    kind: str
    data: dict[str, Any]
    t: float = 0.0
    """Seconds since the call's recording began."""


_SECRET_PARAMS = frozenset({"key", "api-key", "api_key", "access_token", "token"})


def voice_hitl_version() -> str:
    """The installed voice-hitl version (``unknown`` from a checkout never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("voice-hitl")
    except PackageNotFoundError:
        return "unknown"


def provider_facts(provider: RealtimeProvider) -> dict[str, Any]:
    """The manifest's ``provider``: its kind (``openai``, ``gemini`` or its class), model."""
    name = type(provider).__name__
    kind = {"OpenAIRealtimeProvider": "openai", "GeminiLiveProvider": "gemini"}.get(name, name)
    model = getattr(provider, "model", None)
    facts: dict[str, Any] = {"kind": kind, "class": name}
    facts["model"] = None if model is None else str(model)
    url = getattr(provider, "url", None)
    if isinstance(url, str):  # what the URL asks beyond the model (a SIP call's call_id), no key
        query = [(k, v) for k, v in parse_qsl(urlsplit(url).query) if k not in _SECRET_PARAMS]
        facts["query"] = urlencode([(k, v) for k, v in query if k != "model"])
    return facts


_CALL_FRAMES = ("function_call_arguments.done", "toolCall")


def tool_call_ids(data: str | bytes) -> list[str]:
    """The tool call ids a provider frame announces (OpenAI's function call arguments done,
    Gemini's ``toolCall``); only such a frame is parsed, told by its first 256 characters."""
    head = data[:256]
    text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    if not any(kind in text for kind in _CALL_FRAMES):
        return []
    try:
        frame = json.loads(data)
    except ValueError:
        return []
    if not isinstance(frame, dict):
        return []
    if isinstance(frame.get("call_id"), str):
        return [frame["call_id"]]
    calls = (frame.get("toolCall") or {}).get("functionCalls") or []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _tool(tool: AITool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


class CallRecording:
    """The recording of one provider session (one call); made by ``CallRecorder``."""

    def __init__(
        self,
        folder: Path,
        provider: RealtimeProvider,
        config: SessionConfig,
        *,
        channel_facts: dict[str, Any],
        human_input: dict[str, Any] | None,
        redaction: Redaction | None,
        max_bytes: int,
        max_frame_bytes: int,
    ) -> None:
        self.folder = folder
        self.provider = provider
        self.config = config
        self.redaction = redaction
        self.records: list[StoryRecord] = []
        self.request_ids: set[str] = set()
        self.call_ids: set[str] = set()
        """The tool calls the provider made in this call (told apart from another session's)."""
        self.ambiguous: str | None = None
        """Why a request may be missing from this call's stories."""
        self.finished = False
        self._started = time.monotonic()
        self.on_finish: list[Callable[[], None]] = []
        """Undo what attached this call (a keypad listener)."""
        self._manifest: dict[str, Any] = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "voice_hitl": "",  # read off the event loop, in begin()
            "complete": False,
            "incomplete": "the call was still being recorded (its process stopped first?)",
            "started_at": datetime.now(UTC).isoformat(),
            "provider": provider_facts(provider),
            "session": {
                "session_id": config.session_id,
                "room_id": config.room_id,
                "instructions": config.instructions,
                "tools": [_tool(tool) for tool in config.tools],
                "input_sample_rate": config.input_format.sample_rate,
                **channel_facts,
            },
            "human_input": human_input,
            "redacted": [] if redaction is None else redaction.names,
            "marks": [],
            "audio_clock": [],
            "files": {},
        }
        self.writer = RecordingWriter(
            folder,
            sample_rate=config.input_format.sample_rate,
            max_bytes=max_bytes,
            max_frame_bytes=max_frame_bytes,
            redaction=redaction,
        )
        self.writer.started = self._started

    def _begin(self) -> None:
        self._manifest["voice_hitl"] = voice_hitl_version()
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.folder.mkdir()
        except FileExistsError:  # a session id seen before: keep both calls
            self.folder = self.folder.with_name(f"{self.folder.name}_{secrets.token_hex(3)}")
            self.folder.mkdir()
            self.writer.folder = self.folder
        write_manifest(self.folder, self._manifest)
        self.writer.start()

    async def begin(self) -> None:
        """Create the folder, write the manifest of a call in progress, start the writer.

        Cancellation: safe; a folder made before the cancellation stays, marked incomplete.
        """
        await asyncio.to_thread(self._begin)

    # -- taps (on the event loop: a queue put each) ------------------------------------------

    def now(self) -> float:
        """Seconds since the call's recording began."""
        return time.monotonic() - self._started

    def wire(self, direction: str, conn: int, data: str | bytes) -> None:
        """One provider frame (``in`` from the provider, ``out`` to it)."""
        if not self.finished:
            self.writer.put(("wire", self.now(), direction, conn, data))
            if direction == "in":
                self.call_ids.update(tool_call_ids(data))

    def audio(self, frame: Any) -> None:
        """One frame of caller audio, as the transport delivered it."""
        if not self.finished:
            self.writer.put(("audio", self.now(), frame.copy()))

    def keypad(self, key: str) -> None:
        """A key the caller pressed, heard by the transport (a phone line's DTMF event)."""
        if not self.finished:
            self.writer.put(("mark", self.now(), "keypad", key))

    def story(self, event: RequestEvent) -> None:
        """One lifecycle step of a request of this call."""
        from ..journal import record_of

        request_id, at, kind, data = record_of(event)
        self.records.append(StoryRecord(request_id, at, kind, data, round(self.now(), 6)))

    # -- the end -----------------------------------------------------------------------------

    def _stories(self) -> dict[str, Any]:
        records = [  # as JSON holds them (a request's context may be a read-only mapping)
            StoryRecord(r.request_id, r.at, r.kind, _as_json(r.data), r.t)
            for r in self.records
        ]
        if self.redaction is not None:
            learned = dict(self.writer.learned)
            records = [
                StoryRecord(
                    r.request_id,
                    r.at,
                    r.kind,
                    redact_record(r.kind, r.data, self.redaction, learned),
                    r.t,
                )
                for r in records
            ]
        return {
            "records": [
                {"request_id": r.request_id, "at": r.at, "t": r.t, "kind": r.kind, "data": r.data}
                for r in records
            ],
            "stories": summarise(records, strict=True),
        }

    def _finish(self, reason: str | None) -> None:
        writer = self.writer
        writer.stop()
        manifest = self._manifest
        manifest["duration"] = round(self.now(), 3)
        manifest["marks"] = writer.marks
        manifest["audio_clock"] = writer.clock
        manifest["stats"] = {
            "frames": writer.frames,
            "dropped": writer.dropped,
            "caller_samples": writer.samples,
            "bytes": writer.bytes_written,
        }
        if writer.audio_missing is not None:
            manifest["stats"]["caller_audio"] = f"not written: {writer.audio_missing}"
        incomplete = writer.incomplete or reason or self.ambiguous
        try:
            stories = json.loads(json.dumps(self._stories(), default=str))
            write_json(self.folder / STORIES_FILE, stories)
        except OSError as exc:
            incomplete = incomplete or f"the disk refused a write ({exc.strerror or exc})"
        files = {}
        for name in (WIRE_FILE, CALLER_AUDIO, STORIES_FILE):
            path = self.folder / name
            if path.exists():
                size, digest = digest_file(path)
                files[name] = {"bytes": size, "sha256": digest}
        manifest["files"] = files
        manifest["complete"] = incomplete is None
        manifest["incomplete"] = incomplete
        # On failure the manifest written at the start says the recording is incomplete.
        with contextlib.suppress(OSError):
            write_manifest(self.folder, manifest)

    async def finish(self, reason: str | None = None) -> None:
        """Write what is queued, then the stories and the final manifest (idempotent).

        Cancellation: don't cancel; the writer thread finishes anyway and the manifest may
        still say the call is in progress.
        """
        if self.finished:
            return
        self.finished = True
        for undo in self.on_finish:
            undo()
        await asyncio.to_thread(self._finish, reason)

