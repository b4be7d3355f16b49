"""What a replay compares: each request's story, reduced to what must not change.

From a journal's entries, per request in the order they opened: the tool and its arguments,
who it was for, how it settled (outcome, who answered, how), the answer, every counted
approval, and what the model read. Unless ``strict``, an answer leaves out only the fields the
project writes and knows to vary, by their place (see :data:`~voice_hitl.recording.
VOLATILE_FIELDS`): the recogniser's figures of a spoken answer, an approval's time; the
evidence's risk, turns and layers, and every other answer, are compared whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ._volatile import answer_compared

__all__ = ["StoryStep", "relaxed", "summarise"]


class StoryStep(Protocol):
    """One step of a request's story: a :class:`~voice_hitl.journal.JournalEntry`, or a
    recording's own copy of one (request id, kind, data)."""

    @property
    def request_id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def data(self) -> Mapping[str, Any]: ...


def _reading(text: Any, strict: bool) -> Any:
    """An answer or result text as compared: JSON without its volatile fields, else the text."""
    return answer_compared(text, strict=strict) if isinstance(text, str) else text


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


def relaxed(stories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strictly summarised stories (as a recording keeps them) without the volatile keys."""
    out = []
    for story in stories:
        story = dict(story)
        if "answer" in story:
            story["answer"] = answer_compared(story["answer"])
        if isinstance(story.get("model_read"), dict):
            read = dict(story["model_read"])
            read["text"] = answer_compared(read.get("text"))
            story["model_read"] = read
        out.append(story)
    return out
