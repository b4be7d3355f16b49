"""Operators and their bearer tokens: who may see and answer which requests.

An operators file (or the ``VOICE_HITL_OPERATORS`` environment variable) holds JSON::

    {"operators": [
        {"name": "ann", "token": "...", "rooms": ["*"], "channels": ["*"]},
        {"name": "bob", "token_sha256": "<hex>", "rooms": ["sales-1"], "channels": ["phone"]}
    ]}

``rooms`` and ``channels`` list what an operator may see and answer (``"*"``: all; both default
to all). The operator's ``name`` is who answered: it is the board's ``settled_by`` and the
answer's ``actor_id``.

Tokens are stored as their SHA-256 hex digest (``token_sha256``): ``voice-hitl operators add``
and ``rotate`` make a random 256-bit token, print it once and store only its digest, so the
file holds nothing that signs in. (A salted slow hash such as scrypt protects guessable
passwords; a random 256-bit token cannot be guessed, and every API call is checked against the
digest, which a slow hash would make cost tens of milliseconds.) A token in clear (``token``)
is still read, with a deprecation warning naming its operators; ``voice-hitl operators
migrate`` replaces each by its digest in place (the same token keeps working).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..board import BoardRequest

__all__ = [
    "OPERATORS_ENV",
    "Operator",
    "Operators",
    "OperatorsError",
    "load_operators",
    "parse_operators",
    "watch_operators",
]

OPERATORS_ENV = "VOICE_HITL_OPERATORS"


class OperatorsError(ValueError):
    """The operators file or variable is not valid; the message says where."""


@dataclass(frozen=True, slots=True)
class Operator:
    """A person (or script) who answers requests, and what they may see."""

    name: str
    rooms: frozenset[str] = frozenset({"*"})
    channels: frozenset[str] = frozenset({"*"})

    def may_see(self, request: BoardRequest) -> bool:
        """True when the request's room and channel are both in this operator's scope."""
        return self.may_see_place(request.room, request.channel)

    def may_see_place(self, room: str, channel: str) -> bool:
        """True when ``room`` and ``channel`` are both in this operator's scope."""
        return ("*" in self.rooms or room in self.rooms) and (
            "*" in self.channels or channel in self.channels
        )

    def to_wire(self) -> dict[str, Any]:
        """Name and scopes, as ``GET /v1/me`` shows them."""
        return {"name": self.name, "rooms": sorted(self.rooms), "channels": sorted(self.channels)}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Operators:
    """Finds the operator a bearer token belongs to (compared by SHA-256 digest)."""

    def __init__(
        self, entries: Iterable[tuple[str, Operator]], *, plaintext: Iterable[str] = ()
    ) -> None:
        self._by_digest: dict[str, Operator] = {}
        self._digest_of: dict[str, str] = {}
        for digest, operator in entries:
            if digest in self._by_digest:
                raise OperatorsError(f"operator {operator.name!r} reuses another's token")
            if operator.name in self._digest_of:
                raise OperatorsError(f"operator {operator.name!r} is listed twice")
            self._by_digest[digest] = operator
            self._digest_of[operator.name] = digest
        self.plaintext = tuple(plaintext)
        """Operators whose token the file holds in clear (deprecated; see the module)."""

    @classmethod
    def from_tokens(cls, tokens: Mapping[str, Operator]) -> Operators:
        """From clear tokens (for tests and the demo)."""
        return cls((_digest(token), operator) for token, operator in tokens.items())

    def find(self, token: str) -> Operator | None:
        """The operator whose token this is, or None."""
        found = self.match(token)
        return found[0] if found is not None else None

    def match(self, token: str) -> tuple[Operator, str] | None:
        """The operator whose token this is and the token's digest, or None (every digest is
        compared, in constant time each)."""
        digest = _digest(token)
        found = None
        for known, operator in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                found = operator, known
        return found

    def current(self, name: str, digest: str) -> Operator | None:
        """``name``'s operator if their token still has ``digest`` (not rotated, not removed)."""
        known = self._digest_of.get(name)
        if known is None or not hmac.compare_digest(known, digest):
            return None
        return self._by_digest[known]

    def __len__(self) -> int:
        return len(self._by_digest)


def _scope(entry: Mapping[str, Any], key: str, where: str) -> frozenset[str]:
    value = entry.get(key, ["*"])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise OperatorsError(f"{where}: {key!r} must be a list of non-empty strings")
    return frozenset(value)


def parse_operators(text: str, source: str) -> Operators:
    """Parse the operators JSON (format in the module docstring).

    Raises:
        OperatorsError: Not JSON, or an entry is missing a name or a token.
    """
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise OperatorsError(f"{source} is not JSON: {exc}") from None
    entries = raw.get("operators") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise OperatorsError(f'{source} needs {{"operators": [...]}} with at least one operator')
    parsed = []
    plaintext = []
    for n, entry in enumerate(entries):
        where = f"{source}: operator #{n + 1}"
        if not isinstance(entry, dict):
            raise OperatorsError(f"{where} must be an object")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise OperatorsError(f"{where} needs a non-empty 'name'")
        token, digest = entry.get("token"), entry.get("token_sha256")
        if isinstance(token, str) and len(token) >= 8:
            digest = _digest(token)
            plaintext.append(name.strip())
        elif not (isinstance(digest, str) and len(digest) == 64):
            raise OperatorsError(
                f"{where} ({name}) needs a 'token' of 8 or more characters or a 'token_sha256'"
            )
        operator = Operator(
            name.strip(), _scope(entry, "rooms", where), _scope(entry, "channels", where)
        )
        parsed.append((digest.lower(), operator))
    return Operators(parsed, plaintext=plaintext)


def load_operators(path: str | os.PathLike[str] | None = None) -> Operators:
    """Operators from ``path``, else from the ``VOICE_HITL_OPERATORS`` variable.

    Raises:
        OperatorsError: Neither is given, or what is given is not valid.
    """
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise OperatorsError(f"cannot read operators file {path}: {exc.strerror}") from None
        return parse_operators(text, str(path))
    env_text = os.environ.get(OPERATORS_ENV)
    if not env_text:
        raise OperatorsError(
            f"no operators: pass --operators FILE or set {OPERATORS_ENV} (no token, no data)"
        )
    return parse_operators(env_text, OPERATORS_ENV)


async def watch_operators(
    path: str | os.PathLike[str],
    apply: Callable[[Operators], None],
    *,
    interval: float = 1.0,
) -> None:
    """Reread the operators file at ``path`` whenever it changes (checked every ``interval``
    seconds) and hand the new operators to ``apply``: a rotated or revoked token is refused
    from then on. A file that is not valid keeps the operators in force, with an error logged
    (``voice-hitl operators`` writes the file whole, so a reader never sees it half-written).

    Cancellation: safe; it runs until cancelled.
    """
    import asyncio
    import logging

    logger = logging.getLogger("voice_hitl.service")

    def signature() -> tuple[int, int, int] | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return found.st_ino, found.st_mtime_ns, found.st_size

    seen = signature()  # one stat, before the first await: changes from here on are seen
    while True:
        await asyncio.sleep(interval)
        now = await asyncio.to_thread(signature)
        if now == seen:
            continue
        seen = now
        try:
            operators = await asyncio.to_thread(load_operators, path)
        except OperatorsError as exc:
            logger.error("operators file changed but is not valid (the old one stays): %s", exc)
            continue
        apply(operators)
        logger.warning("operators file %s reread: %d operator(s)", path, len(operators))
