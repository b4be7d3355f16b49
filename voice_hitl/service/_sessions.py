"""Console sessions: an operator signs in once with their token and gets a server-side session.

``POST /v1/sessions`` (``Authorization: Bearer <operator token>``) opens a session: an opaque
id (``vhs_`` and 43 random characters) that expires after the service's session lifetime
(12 hours by default). The id is then a bearer token like the operator's own, for the API and
the live feed. ``DELETE /v1/sessions/current`` (with the session id) signs out: the id is
refused from then on. A session is also refused once its operator's token is rotated or the
operator removed (``voice-hitl operators rotate`` / ``revoke``; a running service rereads its
operators file).

Sessions live in the service's memory (the ids are kept as SHA-256 digests): a restarted
service, or another instance behind the same address, does not know them, and the console
asks to sign in again.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SESSION_PREFIX", "Session", "Sessions"]

SESSION_PREFIX = "vhs_"
"""Every session id starts with it (operator tokens from ``voice-hitl operators`` do not)."""


@dataclass(frozen=True, slots=True)
class Session:
    """Who signed in, with which token (its digest), and until when (POSIX seconds)."""

    operator: str
    token_digest: str
    expires: float


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class Sessions:
    """Open, find and revoke sessions (module docstring).

    Args:
        ttl: Seconds a session lasts.
        limit: Sessions kept at most; past it the oldest is dropped (signed out).
        clock: POSIX seconds (tests).
    """

    def __init__(
        self,
        ttl: float = 12 * 3600.0,
        *,
        limit: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not ttl > 0:
            raise ValueError(f"the session lifetime must be above 0 seconds, not {ttl!r}")
        self.ttl = ttl
        self._limit = limit
        self._clock = clock
        self._open: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def open(self, operator: str, token_digest: str) -> tuple[str, Session]:
        """A new session for ``operator``; returns its id (shown once) and the session."""
        self._expire()
        session_id = SESSION_PREFIX + secrets.token_urlsafe(32)
        session = Session(operator, token_digest, self._clock() + self.ttl)
        self._open[_key(session_id)] = session
        while len(self._open) > self._limit:
            self._open.popitem(last=False)
        return session_id, session

    def find(self, session_id: str) -> Session | None:
        """The session, or None when unknown, signed out or expired."""
        key = _key(session_id)
        session = self._open.get(key)
        if session is None:
            return None
        if self._clock() >= session.expires:
            del self._open[key]
            return None
        return session

    def revoke(self, session_id: str) -> bool:
        """Sign out; False when there was no such session."""
        return self._open.pop(_key(session_id), None) is not None

    def _expire(self) -> None:
        now = self._clock()
        while self._open:  # opened in order, all with the same lifetime: oldest first
            key, session = next(iter(self._open.items()))
            if session.expires > now:
                break
            del self._open[key]
