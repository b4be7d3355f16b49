"""Resolving who a request names (``ask``, ``approvers``, ``quorum``) against the roster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._backend import Participant
from ._exceptions import AddressingError

__all__ = ["Addressing", "parse_addressing", "resolve_participant", "resolve_participants"]


def _present(roster: Mapping[str, Participant]) -> str:
    if not roster:
        return "nobody is in the conference"
    return "present: " + ", ".join(str(p) for p in roster.values())


def resolve_participant(roster: Mapping[str, Participant], name: str) -> Participant:
    """Find a participant by id or display name (case-insensitive; an exact id wins).

    Raises:
        AddressingError: Nobody, or more than one participant, has that name.
    """
    if not isinstance(name, str) or not name.strip():
        raise AddressingError(f"a participant name must be a non-empty string, got {name!r}")
    exact = roster.get(name)
    if exact is not None:
        return exact
    wanted = name.strip().casefold()
    by_id = [p for p in roster.values() if p.participant_id.casefold() == wanted]
    if len(by_id) == 1:
        return by_id[0]
    by_name = [p for p in roster.values() if p.display_name.casefold() == wanted]
    if len(by_name) == 1:
        return by_name[0]
    if len(by_name) > 1:
        ids = ", ".join(p.participant_id for p in by_name)
        raise AddressingError(
            f"{name!r} is ambiguous: several participants are called that ({ids})"
        )
    raise AddressingError(
        f"there is no participant called {name!r} in the conference ({_present(roster)})"
    )


def resolve_participants(
    roster: Mapping[str, Participant], names: Iterable[str]
) -> tuple[Participant, ...]:
    """Resolve several names, keeping order and dropping repeats of the same participant.

    Raises:
        AddressingError: A name matches nobody, or is ambiguous.
    """
    found: dict[str, Participant] = {}
    for name in names:
        participant = resolve_participant(roster, name)
        found.setdefault(participant.participant_id, participant)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class Addressing:
    """Who must answer a request: one person (``ask``) or a quorum of ``approvers``."""

    participants: tuple[Participant, ...]
    quorum: int | None = None
    """Set for an approval (``approvers``); None for a question to one person (``ask``)."""

    @property
    def ids(self) -> frozenset[str]:
        """The addressed participant ids."""
        return frozenset(p.participant_id for p in self.participants)


def parse_addressing(
    arguments: Mapping[str, Any], roster: Mapping[str, Participant]
) -> Addressing | None:
    """Read ``ask`` / ``approvers`` / ``quorum`` from tool arguments (None: not addressed).

    Raises:
        AddressingError: The keys are malformed, contradict each other, or name someone who
            is not in the conference. The message is written for the model to read.
    """
    ask = arguments.get("ask")
    approvers = arguments.get("approvers")
    quorum = arguments.get("quorum")
    if ask is None and approvers is None:
        if quorum is not None:
            raise AddressingError("'quorum' needs 'approvers': name who must approve")
        return None
    if ask is not None and approvers is not None:
        raise AddressingError("give either 'ask' (one person) or 'approvers' (a quorum), not both")
    if ask is not None:
        if quorum is not None:
            raise AddressingError("'quorum' goes with 'approvers', not with 'ask'")
        if not isinstance(ask, str):
            raise AddressingError(f"'ask' must name one participant, got {ask!r}")
        return Addressing((resolve_participant(roster, ask),))
    if not isinstance(approvers, list) or not approvers:
        raise AddressingError(f"'approvers' must be a non-empty list of names, got {approvers!r}")
    participants = resolve_participants(roster, approvers)
    if quorum is None:
        quorum = 1
    if isinstance(quorum, bool) or not isinstance(quorum, int):
        raise AddressingError(f"'quorum' must be a whole number, got {quorum!r}")
    if not 1 <= quorum <= len(participants):
        raise AddressingError(
            f"'quorum' must be between 1 and the {len(participants)} distinct approvers "
            f"named, got {quorum}"
        )
    return Addressing(participants, quorum)
