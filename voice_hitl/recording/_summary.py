"""What a replay compares: each request's story, reduced to what must not change.

From a journal's entries, per request in the order they opened: the tool and its arguments,
who it was for, how it settled (outcome, who answered, how), the answer, every counted
approval, and what the model read. The recogniser's own figures (``confidence``, the exact
``transcript``, the measured ``audio`` of an answer's evidence) vary with the CPU and are left
out, at any depth, unless ``strict``; the evidence's risk, turns and layers are compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

__all__ = ["VOLATILE_KEYS", "StoryStep", "relaxed", "summarise"]


class StoryStep(Protocol):
    """One step of a request's story: a :class:`~voice_hitl.journal.JournalEntry`, or a
    recording's own copy of one (request id, kind, data)."""

    @property
    def request_id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def data(self) -> Mapping[str, Any]: ...

VOLATILE_KEYS = frozenset({"confidence", "transcript", "note", "approved_at", "audio"})
"""Keys of an answer's JSON that a replay does not compare unless strict."""


def _reading(text: Any, strict: bool) -> Any:
    """An answer or result text as compared: JSON without its volatile keys, else the text."""
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if strict else _without_volatile(value)


def summarise(entries: Iterable[StoryStep], *, strict: bool = False) -> list[dict[str, Any]]:
    """The stories of the requests in ``entries``, in the order they opened."""
    stories: dict[str, dict[str, Any]] = {}
    for entry in entries:
        data = entry.data
        if entry.kind == "opened":
            stories[entry.request_id] = {
                "tool": data.get("tool"),
                "arguments": data.get("arguments"),
                "channel_type": data.get("channel_type"),
                "actor": data.get("actor"),
            }
            continue
        story = stories.get(entry.request_id)
        if story is None:
            continue
        if entry.kind == "noted" and data.get("note") == "approval":
            story.setdefault("approvals", []).append([data["participant"], data["decision"]])
        elif entry.kind == "noted" and data.get("note") == "escalated":
            story["escalated_to"] = data.get("readdressed") or data.get("to")
        elif entry.kind == "settled":
            story["outcome"] = data.get("outcome")
            story["by"] = data.get("by")
            story["via"] = data.get("via")
            story["answer"] = _reading(data.get("text"), strict)
        elif entry.kind == "delivered":
            story["model_read"] = {
                "outcome": data.get("outcome"),
                "text": _reading(data.get("text"), strict),
            }
    return list(stories.values())


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    return value


def relaxed(stories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strictly summarised stories (as a recording keeps them) without the volatile keys."""
    out = []
    for story in stories:
        story = dict(story)
        if "answer" in story:
            story["answer"] = _without_volatile(story["answer"])
        if isinstance(story.get("model_read"), dict):
            read = dict(story["model_read"])
            read["text"] = _without_volatile(read.get("text"))
            story["model_read"] = read
        out.append(story)
    return out
