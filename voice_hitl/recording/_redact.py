"""Redaction hooks: what a recording keeps of tool arguments and of what people said.

A :class:`Redaction` is applied as the recording is written (wire frames in the writer thread,
stories when the call ends) and by ``voice-hitl recording redact`` to a folder already written.

- ``arguments`` rewrites a function call's arguments (OpenAI's ``arguments`` JSON text,
  whose streamed pieces it empties, Gemini's ``args``, a story's opened ``arguments``).
- ``transcript`` rewrites every place what a person or the model said can land: any
  ``transcript`` text (OpenAI's transcription events and conversation items, an answer's
  words) or list of lines (a request's ``context.transcript[].text``), a transcript's
  ``delta``, Gemini's ``inputTranscription``/``outputTranscription`` text, and what an
  answer's evidence says was heard (``near_miss.heard``/``competitor``); a tool result or a
  story's answer given as JSON text (``output``, ``text``) is opened and rewritten alike.

A string a hook changed (an argument value, a whole transcript; at least 3 and 4 characters)
is also replaced wherever it appears later in the call: the agent reading an argument back in
a question, a free-text answer whose value is the caller's words, the model quoting them.
An answer's value that is not the words (a choice, a number, a yes) stays. Caller audio is
kept unless dropped (``--drop-audio``): it is the caller's voice. A redacted recording replays
only as far as the agent's behaviour does not depend on what was removed; the replay then
names the first frame that differs.
"""

from __future__ import annotations

import json
import re
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


_BASE64_BLOB = re.compile(r"[A-Za-z0-9+/_-]{256,}={0,2}")
"""A long base64 string (audio): holds no words as text, and a replacement would break it."""


def _scrub(value: Any, learned: Learned) -> Any:
    if isinstance(value, dict):
        return {key: _scrub(item, learned) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, learned) for item in value]
    if isinstance(value, str) and learned and not _BASE64_BLOB.fullmatch(value):
        for secret, replacement in learned.items():
            value = value.replace(secret, replacement)
    return value


_JSON_TEXT_KEYS = frozenset({"output", "text"})
"""Keys whose string may be JSON text (a tool result, a story's answer): opened and walked."""
_MIN_LEARNED_WORDS = 4


def _said(text: str, hook: Callable[[str], str], learned: Learned) -> str:
    """A whole transcript through the hook; what it changed is replaced later too."""
    new = hook(text)
    if new != text and len(text.strip()) >= _MIN_LEARNED_WORDS:
        learned[text] = new
    return new


def _json_text(value: str, redaction: Redaction, learned: Learned) -> str:
    if not value.startswith(("{", "[")):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return json.dumps(_scrub(_walk(parsed, redaction, learned), learned))


def _arguments(out: dict[str, Any], hook: Callable[..., dict[str, Any]], learned: Learned) -> None:
    name = out.get("name")
    if not isinstance(name, str):
        return
    if isinstance(out.get("arguments"), str):
        try:
            parsed = json.loads(out["arguments"])
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            changed = hook(name, parsed)
            _learn(parsed, changed, learned)
            out["arguments"] = json.dumps(changed)
    elif isinstance(out.get("args"), dict):
        changed = hook(name, out["args"])
        _learn(out["args"], changed, learned)
        out["args"] = changed


def _words(out: dict[str, Any], hook: Callable[[str], str], learned: Learned) -> None:
    said = out.get("transcript")
    if isinstance(said, str):
        out["transcript"] = _said(said, hook, learned)
    elif isinstance(said, list):  # a request's context: the call's last lines
        out["transcript"] = [
            {**line, "text": _said(line["text"], hook, learned)}
            if isinstance(line, dict) and isinstance(line.get("text"), str)
            else line
            for line in said
        ]
    kind, delta = out.get("type"), out.get("delta")
    if isinstance(kind, str) and kind.endswith(_TRANSCRIPT_DELTAS) and isinstance(delta, str):
        out["delta"] = hook(delta)
    for key in ("inputTranscription", "outputTranscription"):
        part = out.get(key)
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out[key] = {**part, "text": _said(part["text"], hook, learned)}
    near = out.get("near_miss")
    if isinstance(near, dict):  # what the recogniser heard, and what it nearly heard
        out["near_miss"] = {
            key: _said(value, hook, learned)
            if key in ("heard", "competitor") and isinstance(value, str)
            else value
            for key, value in near.items()
        }


def _walk(value: Any, redaction: Redaction, learned: Learned) -> Any:
    if isinstance(value, list):
        return [_walk(item, redaction, learned) for item in value]
    if not isinstance(value, dict):
        return value
    out = {
        key: _json_text(item, redaction, learned)
        if key in _JSON_TEXT_KEYS and isinstance(item, str)
        else _walk(item, redaction, learned)
        for key, item in value.items()
    }
    if redaction.arguments is not None:
        _arguments(out, redaction.arguments, learned)
        if out.get("type") == "response.function_call_arguments.delta":
            out["delta"] = ""  # the arguments in pieces; the ``.done`` frame has them redacted
    if redaction.transcript is not None:
        _words(out, redaction.transcript, learned)
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
    return dict(_scrub(_walk(data, redaction, learned), learned))
