"""The test server's responses: the event sequences the real server sends while the model
answers, with consistent ids.

Sans I/O. A :class:`Response` is one ``response.created`` … ``response.done``; each output
item it plays is a block of events in the real server's order:

- a function call: ``response.output_item.added``, ``conversation.item.added``,
  ``response.function_call_arguments.delta``/``.done``, ``response.output_item.done``,
  ``conversation.item.done``;
- a spoken (or text) message: ``response.output_item.added``, ``conversation.item.added``,
  ``response.content_part.added``, the deltas (audio and transcript, or text), their
  ``.done`` events, ``response.content_part.done``, ``response.output_item.done``,
  ``conversation.item.done``.

An out-of-band response (``conversation: "none"``) keeps its items out of the conversation
and sends no ``conversation.item.*`` events.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ._conversation import Conversation

__all__ = ["WIRE_RATE", "Response"]

Event = dict[str, Any]
WIRE_RATE = 24_000
"""The PCM16 rate of Realtime audio."""


def _split(text: str, parts: int = 2) -> list[str]:
    step = max(1, -(-len(text) // parts))
    return [text[i : i + step] for i in range(0, len(text), step)] or [""]


@dataclass
class Response:
    """One model response being played.

    Args:
        id: The response id.
        conversation: The conversation its items join (``None``: out of band).
        new_id: Makes a fresh id from a prefix (``item``, ``call``).
        modality: ``audio`` (audio plus transcript) or ``text``.
        metadata: Echoed from ``response.create``.
    """

    id: str
    conversation: Conversation | None
    new_id: Callable[[str], str]
    modality: str = "audio"
    metadata: dict[str, str] | None = None
    voice: str | None = None
    output: list[dict[str, Any]] = field(default_factory=list)
    announced: bool = False
    _previous: dict[str, str | None] = field(default_factory=dict)

    def _body(self, status: str) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "object": "realtime.response", "status": status}
        body["conversation_id"] = None if self.conversation is None else "conv_default"
        body["output_modalities"] = [self.modality]
        body["max_output_tokens"] = "inf"
        if self.modality == "audio":
            fmt = {"type": "audio/pcm", "rate": WIRE_RATE}
            body["audio"] = {"output": {"format": fmt, "voice": self.voice or "marin"}}
        return body | {"metadata": self.metadata}

    def created(self) -> Event:
        """``response.created``."""
        self.announced = True
        body = self._body("in_progress") | {"status_details": None, "output": [], "usage": None}
        return {"type": "response.created", "response": body}

    def done(
        self,
        status: str = "completed",
        reason: str | None = None,
        *,
        output: list[dict[str, Any]] | None = None,
        incomplete: Collection[str] = (),
    ) -> Event:
        """``response.done``. Items still in progress (and those whose id or call id is in
        ``incomplete``) end ``incomplete``; ``output`` replaces the response's own items."""
        named = set(incomplete)
        for item in self.output:
            if item["status"] == "in_progress" or {item["id"], item.get("call_id")} & named:
                item["status"] = "incomplete"
        details = None if status == "completed" else {"type": status, "reason": reason}
        items = copy.deepcopy(self.output if output is None else output)
        usage = {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0}
        body = self._body(status) | {"status_details": details, "output": items, "usage": usage}
        return {"type": "response.done", "response": body}

    # -- output items ------------------------------------------------------------------------

    def _add(self, item: dict[str, Any]) -> tuple[dict[str, Any], list[Event]]:
        where = {"response_id": self.id, "output_index": len(self.output)}
        self.output.append(item)
        events: list[Event] = [
            {"type": "response.output_item.added", **where, "item": copy.deepcopy(item)}
        ]
        if self.conversation is not None:
            previous = self._previous[item["id"]] = self.conversation.insert(item)
            added = {"previous_item_id": previous, "item": copy.deepcopy(item)}
            events.append({"type": "conversation.item.added", **added})
        return where, events

    def _finish(self, item: dict[str, Any], where: dict[str, Any]) -> list[Event]:
        item["status"] = "completed"
        events: list[Event] = [
            {"type": "response.output_item.done", **where, "item": copy.deepcopy(item)}
        ]
        if self.conversation is not None:
            done = {"previous_item_id": self._previous[item["id"]], "item": copy.deepcopy(item)}
            events.append({"type": "conversation.item.done", **done})
        return events

    def function_call(
        self, name: str, arguments: dict[str, Any] | str, call_id: str | None = None
    ) -> tuple[str, list[Event]]:
        """The events of the model calling ``name``; returns the call id and the events."""
        call_id = call_id or self.new_id("call")
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        item: dict[str, Any] = {"id": self.new_id("item"), "object": "realtime.item"}
        item["type"] = "function_call"
        item |= {"status": "in_progress", "name": name, "call_id": call_id, "arguments": ""}
        where, events = self._add(item)
        ids = {**where, "item_id": item["id"], "call_id": call_id}
        for delta in _split(args):
            events.append({"type": "response.function_call_arguments.delta", **ids, "delta": delta})
        done = {"type": "response.function_call_arguments.done", **ids, "name": name}
        events.append({**done, "arguments": args})
        item["arguments"] = args
        return call_id, events + self._finish(item, where)

    def message(self, text: str, samples: int = 480) -> tuple[str, list[Event]]:
        """The events of the model saying ``text`` (``samples`` of silence per audio delta,
        two deltas) or, for a text response, writing it; returns the item id and the events."""
        item: dict[str, Any] = {"id": self.new_id("item"), "object": "realtime.item"}
        item["type"] = "message"
        item |= {"status": "in_progress", "role": "assistant", "content": []}
        where, events = self._add(item)
        part_ids = {**where, "item_id": item["id"], "content_index": 0}
        if self.modality == "text":
            part: dict[str, Any] = {"type": "text", "text": ""}
            events.append({"type": "response.content_part.added", **part_ids, "part": part})
            for delta in _split(text):
                events.append({"type": "response.output_text.delta", **part_ids, "delta": delta})
            events.append({"type": "response.output_text.done", **part_ids, "text": text})
            part = {"type": "text", "text": text}
            item["content"] = [{"type": "output_text", "text": text}]
        else:
            part = {"type": "audio", "transcript": ""}
            events.append({"type": "response.content_part.added", **part_ids, "part": part})
            audio = base64.b64encode(bytes(2 * samples)).decode("ascii")
            deltas = _split(text)
            for delta in deltas:
                events.append({"type": "response.output_audio.delta", **part_ids, "delta": audio})
                events.append(
                    {"type": "response.output_audio_transcript.delta", **part_ids, "delta": delta}
                )
            events.append({"type": "response.output_audio.done", **part_ids})
            done = {"type": "response.output_audio_transcript.done", **part_ids}
            events.append({**done, "transcript": text})
            part = {"type": "audio", "transcript": text}
            item["content"] = [{"type": "output_audio", "transcript": text}]
            if self.conversation is not None:
                spoken = samples * len(deltas)
                self.conversation.audio_ms[(item["id"], 0)] = spoken * 1000 // WIRE_RATE
        events.append({"type": "response.content_part.done", **part_ids, "part": part})
        return str(item["id"]), events + self._finish(item, where)
