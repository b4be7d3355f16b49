"""The test server's conversation: its items in order, and the item operations clients send.

Sans I/O. Each operation returns the server events that answer it or raises
:class:`ItemError` with the ``error`` the real server sends (codes such as
``item_delete_invalid_item_id``); the caller turns that into an ``error`` event.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

__all__ = ["Conversation", "ItemError"]

Event = dict[str, Any]


class ItemError(Exception):
    """A client's item operation the server refuses; ``code`` and ``param`` are the error's."""

    def __init__(self, message: str, *, code: str, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.param = param


class Conversation:
    """The default conversation's items, in order, as the server holds them.

    Args:
        new_id: Makes a fresh id from a prefix (``item``).
    """

    def __init__(self, new_id: Callable[[str], str]) -> None:
        self.items: list[dict[str, Any]] = []
        self.audio_ms: dict[tuple[str, int], int] = {}
        """Milliseconds of model audio per (item id, content index), for truncation."""
        self._new_id = new_id

    def _index(self, item_id: str) -> int | None:
        for index, item in enumerate(self.items):
            if item.get("id") == item_id:
                return index
        return None

    def find(self, item_id: str) -> dict[str, Any] | None:
        """The item with ``item_id``, or ``None``."""
        index = self._index(item_id)
        return None if index is None else self.items[index]

    @property
    def last_id(self) -> str | None:
        """The id of the newest item (``None`` when the conversation is empty)."""
        return str(self.items[-1]["id"]) if self.items else None

    def stored(self, item: dict[str, Any]) -> dict[str, Any]:
        """The server's form of ``item``: an id, ``object`` and a ``status``."""
        full = {"id": item.get("id") or self._new_id("item"), "object": "realtime.item"}
        full |= {k: v for k, v in item.items() if k not in ("id", "object")}
        full.setdefault("status", "completed")
        return full

    def insert(self, item: dict[str, Any], after: str | None = None) -> str | None:
        """Add ``item`` (already in stored form); returns the id it follows.

        ``after``: ``None`` appends, ``"root"`` puts it first, an id puts it after that item.

        Raises:
            ItemError: ``after`` names no item, or the item's id is taken.
        """
        if self.find(item["id"]) is not None:
            raise ItemError(
                f"Error adding item: an item with id '{item['id']}' already exists.",
                code="item_create_duplicate_item_id",
                param="item.id",
            )
        if after is None:
            previous = self.last_id
            self.items.append(item)
            return previous
        if after == "root":
            self.items.insert(0, item)
            return None
        index = self._index(after)
        if index is None:
            raise ItemError(
                f"Error adding item: the previous item with id '{after}' does not exist.",
                code="item_create_invalid_previous_item_id",
                param="previous_item_id",
            )
        self.items.insert(index + 1, item)
        return after

    def create(self, item: dict[str, Any], after: str | None) -> list[Event]:
        """``conversation.item.create``: store it, answer ``added`` then ``done``.

        Raises:
            ItemError: As :meth:`insert`.
        """
        stored = self.stored(item)
        previous = self.insert(stored, after)
        where = {"previous_item_id": previous, "item": stored}
        return [
            {"type": "conversation.item.added", **copy.deepcopy(where)},
            {"type": "conversation.item.done", **copy.deepcopy(where)},
        ]

    def delete(self, item_id: str) -> list[Event]:
        """``conversation.item.delete``: answer ``conversation.item.deleted``.

        Raises:
            ItemError: No item has ``item_id``.
        """
        index = self._index(item_id)
        if index is None:
            raise ItemError(
                f"Error deleting item: the item with id '{item_id}' does not exist.",
                code="item_delete_invalid_item_id",
                param="item_id",
            )
        del self.items[index]
        for key in [key for key in self.audio_ms if key[0] == item_id]:
            del self.audio_ms[key]
        return [{"type": "conversation.item.deleted", "item_id": item_id}]

    def retrieve(self, item_id: str) -> list[Event]:
        """``conversation.item.retrieve``: answer ``conversation.item.retrieved``.

        Raises:
            ItemError: No item has ``item_id``.
        """
        item = self.find(item_id)
        if item is None:
            raise ItemError(
                f"Error retrieving item: the item with id '{item_id}' does not exist.",
                code="item_retrieve_invalid_item_id",
                param="item_id",
            )
        return [{"type": "conversation.item.retrieved", "item": copy.deepcopy(item)}]

    def truncate(self, item_id: str, content_index: int, audio_end_ms: int) -> list[Event]:
        """``conversation.item.truncate``: cut the model's audio at ``audio_end_ms`` and drop
        its transcript; answer ``conversation.item.truncated``.

        Raises:
            ItemError: No such item, not the model's audio, or past the audio's end.
        """
        item = self.find(item_id)
        if item is None:
            raise ItemError(
                f"Error truncating item: the item with id '{item_id}' does not exist.",
                code="item_truncate_invalid_item_id",
                param="item_id",
            )
        content = item.get("content") or []
        is_audio = (
            item.get("type") == "message"
            and item.get("role") == "assistant"
            and content_index < len(content)
            and content[content_index].get("type") == "output_audio"
        )
        if not is_audio:
            raise ItemError(
                "Only model output audio messages can be truncated",
                code="invalid_value",
                param="content_index",
            )
        length = self.audio_ms.get((item_id, content_index), 0)
        if audio_end_ms > length:
            raise ItemError(
                f"Audio content of {length}ms is already shorter than {audio_end_ms}ms",
                code="invalid_value",
                param="audio_end_ms",
            )
        self.audio_ms[(item_id, content_index)] = audio_end_ms
        content[content_index]["transcript"] = ""
        truncated = {"item_id": item_id, "content_index": content_index}
        return [{"type": "conversation.item.truncated", **truncated, "audio_end_ms": audio_end_ms}]
