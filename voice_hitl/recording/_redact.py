"""Redaction hooks: what a recording keeps of tool arguments and of what people said.

A :class:`Redaction` is applied as the recording is written (wire frames in the writer thread,
stories when the call ends) and by ``voice-hitl recording redact`` to a folder already written.
In a provider frame it rewrites a function call's arguments (OpenAI's ``arguments`` JSON text,
whose streamed pieces it empties, and Gemini's ``args``), every ``transcript`` text, a
transcript's ``delta``, and Gemini's ``inputTranscription``/``outputTranscription`` text; in a
story, the opened request's arguments and the ``transcript`` of an answer's evidence. A string
argument the hook changed is also replaced wherever it appears later in the call (the agent
reading it back in a question, a tool result quoting it). A redacted recording replays only as
far as the agent's behaviour does not depend on what was removed; the replay then names the
first frame that differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Redaction", "redact_frame", "redact_record"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """Hooks that rewrite personal data before it reaches the disk.

    Attributes:
        arguments: ``(tool_name, arguments) -> arguments`` for every tool call.
        transcript: ``text -> text`` for every transcript of what a person or the model said.
    """

    arguments: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
    transcript: Callable[[str], str] | None = None

    @property
    def names(self) -> list[str]:
        """Which hooks are set (the manifest's ``redacted``)."""
        return [name for name in ("arguments", "transcript") if getattr(self, name) is not None]


_TRANSCRIPT_DELTAS = ("transcript.delta", "transcription.delta")


Learned = dict[str, str]
"""Argument values a hook changed (at least 3 characters), and what they became."""


def _learn(before: dict[str, Any], after: dict[str, Any], learned: Learned) -> None:
    for key, value in before.items():
        new = after.get(key)
        if isinstance(value, str) and len(value) >= 3 and new != value:
            learned[value] = new if isinstance(new, str) else json.dumps(new)


def _scrub(value: Any, learned: Learned) -> Any:
    if isinstance(value, dict):
        return {key: _scrub(item, learned) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, learned) for item in value]
    if isinstance(value, str):
        for secret, replacement in learned.items():
            value = value.replace(secret, replacement)
    return value


def _walk(value: Any, redaction: Redaction, learned: Learned) -> Any:
    if isinstance(value, list):
        return [_walk(item, redaction, learned) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _walk(item, redaction, learned) for key, item in value.items()}
    args_hook, text_hook = redaction.arguments, redaction.transcript
    name = out.get("name")
    if args_hook is not None and isinstance(name, str):
        if isinstance(out.get("arguments"), str):
            try:
                parsed = json.loads(out["arguments"])
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                changed = args_hook(name, parsed)
                _learn(parsed, changed, learned)
                out["arguments"] = json.dumps(changed)
        elif isinstance(out.get("args"), dict):
            changed = args_hook(name, out["args"])
            _learn(out["args"], changed, learned)
            out["args"] = changed
    if args_hook is not None and out.get("type") == "response.function_call_arguments.delta":
        out["delta"] = ""  # the arguments in pieces; the ``.done`` frame has them redacted
    if text_hook is not None:
        if isinstance(out.get("transcript"), str):
            out["transcript"] = text_hook(out["transcript"])
        kind = out.get("type")
        delta = out.get("delta")
        if isinstance(kind, str) and kind.endswith(_TRANSCRIPT_DELTAS) and isinstance(delta, str):
            out["delta"] = text_hook(delta)
        for key in ("inputTranscription", "outputTranscription"):
            part = out.get(key)
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out[key] = {**part, "text": text_hook(part["text"])}
    return out


def redact_frame(frame: Any, redaction: Redaction, learned: Learned | None = None) -> Any:
    """A provider frame (parsed JSON) with the hooks applied; ``learned`` collects the
    argument values changed so far in the call, replaced in this and later frames."""
    learned = {} if learned is None else learned
    return _scrub(_walk(frame, redaction, learned), learned)


def redact_record(
    kind: str, data: dict[str, Any], redaction: Redaction, learned: Learned | None = None
) -> dict[str, Any]:
    """One story step (``opened``, ``settled``...) with the hooks applied (``learned``: as
    for :func:`redact_frame`)."""
    learned = {} if learned is None else learned
    data = dict(data)
    if kind == "opened" and redaction.arguments is not None:
        arguments = data.get("arguments")
        if isinstance(arguments, dict):
            changed = redaction.arguments(str(data.get("tool")), arguments)
            _learn(arguments, changed, learned)
            data["arguments"] = changed
    if redaction.transcript is not None and isinstance(data.get("text"), str):
        try:
            answer = json.loads(data["text"])
        except ValueError:
            answer = None
        if isinstance(answer, dict):
            data["text"] = json.dumps(_walk(answer, redaction, learned))
    return dict(_scrub(data, learned))
