"""What a replay does not compare: fields the project itself writes and knows to vary, each
named by its place in a known frame, never by a key name found anywhere.

Two kinds of frames carry such fields:

- **The answer of a human-input request** (the result of one of the handler's tools, e.g.
  ``AskUserQuestion``; in a story, its ``answer`` and ``model_read.text``). An answer the
  project's recogniser heard (``answer_json`` with ``via`` ``"speech"``) varies with the CPU in
  ``transcript``, ``confidence``, ``evidence.confidence`` and ``evidence.audio``; a
  conference approval's summary (``approved``, ``action``, ``approvers``, ``approved_at``)
  varies in ``approved_at`` (the time of the quorum). Anything else in an answer (an
  operator's JSON, a keypad answer) is compared whole.
- **The provider protocol's own ids**: an OpenAI client event's top-level ``event_id`` and
  its ``response.metadata.client_event_id``.

Everything else the agent sends is compared: the user's tool results (whatever keys they
hold), the session's configuration (instructions, tools, voice, turn detection,
transcription model), questions, key presses. A tool result given as JSON text is compared
by its meaning, not its spelling. ``strict`` compares the answers' varying fields too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["VOLATILE_FIELDS", "WireNormaliser", "answer_compared"]

_SPEECH_ANSWER = frozenset({"answer", "choice_id", "transcript", "confidence", "via", "actor_id"})
_APPROVAL = frozenset({"approved", "action", "approvers", "approved_at"})

VOLATILE_FIELDS: dict[str, tuple[str, ...]] = {
    "speech answer": ("transcript", "confidence", "evidence.confidence", "evidence.audio"),
    "approval": ("approved_at",),
    "openai client event": ("event_id", "response.metadata.client_event_id"),
}
"""The fields a replay leaves out unless strict, by the frame they belong to (dotted paths):
a human-input answer heard by the recogniser, a conference approval's summary, an OpenAI
client event."""


def _without(value: dict[str, Any], paths: Iterable[str]) -> dict[str, Any]:
    out = dict(value)
    for path in paths:
        head, _, rest = path.partition(".")
        if not rest:
            out.pop(head, None)
        elif isinstance(out.get(head), dict):
            out[head] = _without(out[head], (rest,))
    return out


def _kind_of_answer(value: dict[str, Any]) -> str | None:
    if value.keys() >= _SPEECH_ANSWER and value.get("via") == "speech":
        return "speech answer"
    if value.keys() == _APPROVAL:
        return "approval"
    return None


def answer_compared(value: Any, *, strict: bool = False) -> Any:
    """A human-input request's answer (parsed JSON, or its text) as a replay compares it."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        value = parsed
    if strict or not isinstance(value, dict):
        return value
    kind = _kind_of_answer(value)
    return value if kind is None else _without(value, VOLATILE_FIELDS[kind])


def _reading(text: Any) -> Any:
    """A tool result's JSON text as its meaning (other text as it is)."""
    if isinstance(text, str):
        try:
            return {"(json)": json.loads(text)}
        except ValueError:
            return text
    return text


@dataclass(frozen=True)
class WireNormaliser:
    """Turns the agent's frames into what a replay compares (see the module).

    Attributes:
        human_tools: The human-input handler's tool names (the manifest's ``human_input``).
        call_names: OpenAI's ``call_id`` -> function name, from the recorded provider frames.
        strict: Also compare the answers' varying fields.
    """

    human_tools: frozenset[str]
    call_names: dict[str, str]
    strict: bool = False

    @classmethod
    def of(
        cls, manifest: dict[str, Any], provider_frames: Iterable[str], *, strict: bool
    ) -> WireNormaliser:
        """The normaliser of a recording: its manifest and its ``in`` frames' texts."""
        human = manifest.get("human_input") or {}
        names: dict[str, str] = {}
        for text in provider_frames:
            try:
                frame = json.loads(text)
            except ValueError:
                continue
            if not isinstance(frame, dict):
                continue
            nested = frame.get("item")
            item: dict[str, Any] = nested if isinstance(nested, dict) else frame
            call_id, name = item.get("call_id"), item.get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                names[call_id] = name
        return cls(frozenset(human.get("tools") or ()), names, strict)

    def __call__(self, frame: Any) -> Any:
        """A parsed client frame as compared."""
        if not isinstance(frame, dict):
            return frame
        if isinstance(frame.get("type"), str):
            return self._openai(frame)
        outer = "toolResponse" if "toolResponse" in frame else "tool_response"
        tool = frame.get(outer)
        if isinstance(tool, dict):
            key = "functionResponses" if "functionResponses" in tool else "function_responses"
            responses = tool.get(key)
            if isinstance(responses, list):
                tool = {**tool, key: [self._gemini_response(r) for r in responses]}
                return {**frame, outer: tool}
        return frame

    def _answer(self, tool: Any, result: Any) -> Any:
        if tool in self.human_tools:
            return answer_compared(result, strict=self.strict)
        return _reading(result)

    def _openai(self, frame: dict[str, Any]) -> dict[str, Any]:
        out = _without(frame, VOLATILE_FIELDS["openai client event"])
        item = out.get("item")
        if (
            out.get("type") == "conversation.item.create"
            and isinstance(item, dict)
            and item.get("type") == "function_call_output"
        ):
            name = self.call_names.get(str(item.get("call_id")))
            out["item"] = {**item, "output": self._answer(name, item.get("output"))}
        return out

    def _gemini_response(self, response: Any) -> Any:
        if not isinstance(response, dict) or not isinstance(response.get("response"), dict):
            return response
        body = dict(response["response"])
        if "output" in body:
            body["output"] = self._answer(response.get("name"), body["output"])
        return {**response, "response": body}
