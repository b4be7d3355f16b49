"""A live timeline of a call: who spoke, which tool, which door, pending -> resolved."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TextIO

from ..human._pending import PendingInputEvent
from ..tools._calls import ToolCallReport, ToolUseEvent
from ..tools._hooks import HookContext, HookExecution, HookTrigger
from ..tools._kit import VoiceKit
from ..voice._provider_events import ProviderEvent, SpeechStoppedEvent, TranscriptionEvent

__all__ = ["Timeline", "TimelineEntry"]


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One line of the timeline."""

    call_time: float
    wall_time: float
    who: str
    what: str
    detail: dict[str, Any]


class Timeline:
    """Records (and optionally prints) what happens on a call.

    Args:
        kit: Its hooks report tool calls and requests.
        call_clock: Seconds of call time now (e.g. a transport's clock); wall time if None.
        out: Where to print lines (None: record only).
        speaker: Who is speaking on the caller's side now, for providers whose
            transcriptions carry no ``speaker_id`` (``"caller"`` if None or it returns None).
    """

    def __init__(
        self,
        kit: VoiceKit,
        *,
        call_clock: Callable[[], float] | None = None,
        out: TextIO | None = sys.stdout,
        speaker: Callable[[], str | None] | None = None,
    ) -> None:
        self._speaker = speaker
        self._start = time.perf_counter()
        self._clock = call_clock or (lambda: time.perf_counter() - self._start)
        self._out = out
        self.entries: list[TimelineEntry] = []
        self._asked: dict[str, float] = {}
        self.last_speech_end: float | None = None
        self.answer_latencies: list[float] = []
        self.tool_results: list[tuple[str, str, str]] = []  # (tool, outcome, text read)
        for trigger, hook in (
            (HookTrigger.BEFORE_TOOL_USE, self._on_tool_use),
            (HookTrigger.ON_USER_INPUT_REQUIRED, self._on_request),
            (HookTrigger.ON_TOOL_CALL, self._on_report),
        ):
            # Observers only: last in priority order, never blocking anything.
            kit.hook(trigger, execution=HookExecution.SYNC, priority=1000)(hook)

    def add(self, who: str, what: str, **detail: Any) -> None:
        """Record (and print) one line."""
        entry = TimelineEntry(
            round(self._clock(), 3), round(time.perf_counter() - self._start, 3), who, what, detail
        )
        self.entries.append(entry)
        if self._out is not None:
            print(f"{entry.call_time:7.2f}s  {who:<8} {what}", file=self._out, flush=True)

    def observe(self, event: ProviderEvent) -> None:
        """Session listener: speech in and out."""
        if isinstance(event, TranscriptionEvent) and event.final:
            who = "caller" if event.role == "user" else "agent"
            if event.speaker_id:
                who = event.speaker_id
            elif event.role == "user" and self._speaker is not None:
                who = self._speaker() or who
            self.add(who, f'says "{event.text}"' if event.text else "(not understood)")
        elif isinstance(event, SpeechStoppedEvent):
            self.last_speech_end = time.perf_counter()

    async def _on_tool_use(self, event: ToolUseEvent, ctx: HookContext) -> None:
        arguments = json.dumps(dict(event.arguments))
        self.add("tool", f"{event.tool_name} {arguments} via the {event.door} door")

    async def _on_request(self, event: PendingInputEvent, ctx: HookContext) -> None:
        self._asked[event.tool_call_id] = time.perf_counter()
        self.add("human", f"{event.tool_name} pending ({event.pending_id})", actor=event.actor_id)

    async def _on_report(self, report: ToolCallReport, ctx: HookContext) -> None:
        now = time.perf_counter()
        self.tool_results.append((report.tool_name, report.outcome, report.result))
        asked = self._asked.pop(report.tool_call_id, None)
        waited = f" after {now - asked:.2f}s" if asked is not None else ""
        if self.last_speech_end is not None and report.outcome == "ok" and asked is not None:
            self.answer_latencies.append(now - self.last_speech_end)
        state = {"ok": "resolved", "refused": "refused", "failed": "failed"}.get(
            report.outcome, report.outcome
        )
        self.add("tool", f"{report.tool_name} {state}{waited}: {report.result}")

    def to_json(self) -> list[dict[str, Any]]:
        """The entries as JSON-ready dicts."""
        return [asdict(e) for e in self.entries]
