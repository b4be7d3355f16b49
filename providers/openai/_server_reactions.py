"""How the test server answers each valid client event, the way the real server does.

===============================  =============================================================
client event                     answer
===============================  =============================================================
``session.update``               ``session.updated`` with the whole effective session
``input_audio_buffer.append``    nothing (whole PCM16 samples are required for ``audio/pcm``)
``input_audio_buffer.commit``    ``input_audio_buffer.committed`` and the user item's
                                 ``conversation.item.added``/``done``; under 100 ms of audio:
                                 ``input_audio_buffer_commit_empty``
``input_audio_buffer.clear``     ``input_audio_buffer.cleared``
``output_audio_buffer.clear``    SIP calls: ``output_audio_buffer.cleared``; a WebSocket
                                 session has no output buffer: an error
``conversation.item.create``     ``conversation.item.added`` then ``conversation.item.done``
``conversation.item.retrieve``   ``conversation.item.retrieved``
``conversation.item.truncate``   ``conversation.item.truncated``
``conversation.item.delete``     ``conversation.item.deleted``
``response.create``              with ``auto_respond``: a response (``response.created`` …
                                 ``response.done``); one already active:
                                 ``conversation_already_has_active_response``
``response.cancel``              the active response ends ``cancelled`` (``client_cancelled``);
                                 none, or another id: ``response_cancel_not_active``
===============================  =============================================================

An item operation naming an item that does not exist gets the server's error for it
(``item_delete_invalid_item_id`` and the like), with the client's ``event_id``.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._conversation import ItemError

if TYPE_CHECKING:
    from ._server_connection import ServerConnection

__all__ = ["handled_client_events", "react"]

Event = dict[str, Any]
_MIN_COMMIT_MS = 100


def _deep_merge(into: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(into)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


async def _session_update(conn: ServerConnection, event: Event) -> None:
    conn.session = _deep_merge(conn.session, event["session"])
    await conn.send({"type": "session.updated", "session": dict(conn.session)})


def _input_format(conn: ServerConnection) -> str:
    audio = conn.session.get("audio") or {}
    fmt = (audio.get("input") or {}).get("format") or {}
    return str(fmt.get("type", "audio/pcm"))


def _bytes_per_ms(conn: ServerConnection) -> int:
    return 48 if _input_format(conn) == "audio/pcm" else 8  # 24 kHz PCM16, 8 kHz G.711


async def _append(conn: ServerConnection, event: Event) -> None:
    size = len(base64.b64decode(event["audio"]))
    if _input_format(conn) == "audio/pcm" and size % 2:
        await conn.error(
            "Invalid value for 'audio': not whole PCM16 samples (odd byte count).",
            code="invalid_value",
            event_id=event.get("event_id"),
            param="audio",
        )
        return
    conn.input_audio_bytes += size


async def _commit(conn: ServerConnection, event: Event) -> None:
    have = conn.input_audio_bytes / _bytes_per_ms(conn)
    if have < _MIN_COMMIT_MS:
        await conn.error(
            "Error committing input audio buffer: buffer too small. Expected at least "
            f"{_MIN_COMMIT_MS}ms of audio, but buffer only has {have:.2f}ms of audio.",
            code="input_audio_buffer_commit_empty",
            event_id=event.get("event_id"),
        )
        return
    conn.input_audio_bytes = 0
    item = conn.conversation.stored(
        {"type": "message", "role": "user", "content": [{"type": "input_audio"}]}
    )
    previous = conn.conversation.insert(item)
    committed = {"type": "input_audio_buffer.committed", "item_id": item["id"]}
    where = {"previous_item_id": previous, "item": dict(item)}
    await conn.send_all(
        [
            {**committed, "previous_item_id": previous},
            {"type": "conversation.item.added", **where},
            {"type": "conversation.item.done", **where},
        ]
    )


async def _clear(conn: ServerConnection, event: Event) -> None:
    conn.input_audio_bytes = 0
    await conn.send({"type": "input_audio_buffer.cleared"})


async def _clear_output(conn: ServerConnection, event: Event) -> None:
    response = conn.active_response or conn.last_response
    if not conn.sip:
        await conn.error(
            "output_audio_buffer.clear is only supported for WebRTC and SIP sessions",
            code="invalid_value",
            event_id=event.get("event_id"),
            param="type",
        )
    elif response is None:
        await conn.error(
            "Cannot clear the output audio buffer: no response has produced audio",
            code="invalid_value",
            event_id=event.get("event_id"),
        )
    else:
        await conn.send({"type": "output_audio_buffer.cleared", "response_id": response})


async def _item_create(conn: ServerConnection, event: Event) -> None:
    item = event["item"]
    if item["type"] == "function_call_output" and item["call_id"] not in conn.calls:
        conn.orphan_outputs.append(item["call_id"])
    if not conn.server.acknowledge_items:
        return
    answers = conn.conversation.create(item, event.get("previous_item_id"))
    if item["type"] == "function_call" and item.get("call_id"):
        conn.calls.add(item["call_id"])
    await conn.send_all(answers)


async def _item_retrieve(conn: ServerConnection, event: Event) -> None:
    await conn.send_all(conn.conversation.retrieve(event["item_id"]))


async def _item_truncate(conn: ServerConnection, event: Event) -> None:
    where = (event["item_id"], event["content_index"], event["audio_end_ms"])
    await conn.send_all(conn.conversation.truncate(*where))


async def _item_delete(conn: ServerConnection, event: Event) -> None:
    await conn.send_all(conn.conversation.delete(event["item_id"]))


async def _response_create(conn: ServerConnection, event: Event) -> None:
    if conn.active_response is not None:
        await conn.error(
            "Conversation already has an active response in progress: "
            f"{conn.active_response}. Wait until the response is finished before "
            "creating a new one.",
            code="conversation_already_has_active_response",
            event_id=event.get("event_id"),
        )
        return
    if not conn.server.auto_respond:
        return
    params = event.get("response") or {}
    modalities = params.get("output_modalities")
    await conn.begin_response(
        metadata=params.get("metadata"),
        out_of_band=params.get("conversation") == "none",
        modality=modalities[0] if modalities else None,
    )
    if conn.server.auto_reply:
        await conn.speak(conn.server.auto_reply, finish=False)
    await conn.end_response()


async def _response_cancel(conn: ServerConnection, event: Event) -> None:
    wanted = event.get("response_id")
    if conn.active_response is None or wanted not in (None, conn.active_response):
        await conn.error(
            "Cancellation failed: no active response found",
            code="response_cancel_not_active",
            event_id=event.get("event_id"),
        )
        return
    await conn.end_response(status="cancelled", reason="client_cancelled")


_REACTIONS: dict[str, Callable[[ServerConnection, Event], Awaitable[None]]] = {
    "session.update": _session_update,
    "input_audio_buffer.append": _append,
    "input_audio_buffer.commit": _commit,
    "input_audio_buffer.clear": _clear,
    "output_audio_buffer.clear": _clear_output,
    "conversation.item.create": _item_create,
    "conversation.item.retrieve": _item_retrieve,
    "conversation.item.truncate": _item_truncate,
    "conversation.item.delete": _item_delete,
    "response.create": _response_create,
    "response.cancel": _response_cancel,
}
"""Every client event type the SDK defines, and how the server answers it."""


def handled_client_events() -> set[str]:
    """The client event types the server answers."""
    return set(_REACTIONS)


async def react(conn: ServerConnection, event: Event) -> None:
    """Answer one valid client event on ``conn``.

    Cancellation: the answer may be left half sent.
    """
    try:
        await _REACTIONS[event["type"]](conn, event)
    except ItemError as exc:
        await conn.error(str(exc), code=exc.code, event_id=event.get("event_id"), param=exc.param)
