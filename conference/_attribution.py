"""Who authored the current user turn of a mixed-audio conference."""

from __future__ import annotations

__all__ = ["TurnAttribution", "attribution"]

_UNKNOWN = "\x00unknown"


class TurnAttribution:
    """Tracks the participants heard since the bot last finished speaking.

    A turn has an author only when exactly one known participant was heard in it (by the
    backend's level attribution or a speaker-attributed transcription); otherwise, mixed or
    unattributed, it has none. The bot finishing a response ends the turn; the next speech
    heard starts a new one, so calls made in the bot's response keep the turn's author.
    """

    def __init__(self) -> None:
        self._speakers: set[str] = set()
        self._stale = False

    def heard(self, participant_id: str | None) -> None:
        """Someone spoke; ``None`` for a speaker that is not on the roster."""
        if self._stale:
            self._speakers.clear()
            self._stale = False
        self._speakers.add(_UNKNOWN if participant_id is None else participant_id)

    def bot_spoke(self) -> None:
        """The bot finished a response: the next speech heard starts a new turn."""
        self._stale = True

    def actor(self) -> str | None:
        """The turn's only author, or None for a mixed or unattributed turn."""
        if len(self._speakers) != 1:
            return None
        (only,) = self._speakers
        return None if only == _UNKNOWN else only


def attribution(speaker: str, heard: set[str | None]) -> float:
    """How sure a conference can be that ``speaker`` alone said an utterance, given the
    participants the backend heard while it was spoken (``None``: someone not on the
    roster): 1.0 when only they were heard (or
    nobody was and the provider attributed it), 0.5 when others spoke too (a mixed turn),
    0.0 when the backend heard only others."""
    if not heard or heard == {speaker}:
        return 1.0
    return 0.5 if speaker in heard else 0.0
