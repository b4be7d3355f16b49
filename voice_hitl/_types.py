"""Small shared types."""

from __future__ import annotations

import enum

__all__ = ["ChannelType"]


class ChannelType(enum.StrEnum):
    """The kind of door a tool call came through."""

    AI = "ai"
    REALTIME_VOICE = "realtime_voice"
    CONFERENCE = "conference"
