""":class:`AnswerLinks`: one-time, expiring, signed links that answer or reject one request.

A link is ``<base>/v1/links/<token>``; the token is ``<payload>.<mac>`` (base64url), where the
payload binds the request id, the action (``answer`` with one value, or ``reject``), the
holder (who the link was made for: a webhook subscription, an operator), an expiry and a nonce,
and the MAC is HMAC-SHA256 under the service's link key. Nothing else is needed to use it: a
chat message, an SMS or an e-mail carries the link and no token.

Opening the link (GET) shows what it will do and a button; only the POST answers, so a chat's
link preview or a mail scanner that fetches the URL changes nothing. The POST answers through
the same :class:`~voice_hitl.service.OperatorDesk` call as the HTTP API, as operator
``<holder>`` with ``via`` ``link:<holder>`` (what the board and the journal record).

Each link works once: its nonce is spent before the answer is tried (and given back only when
the board could not be reached). Used again, expired, altered, or for a request already
settled, it gives a page that says so and changes nothing. Spent nonces are kept in this
process until the link would have expired; links made under another key (another process
without a shared ``VOICE_HITL_LINK_KEY``) are refused as not valid.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..board import BoardRequest

__all__ = [
    "LINK_KEY_ENV",
    "AnswerLinks",
    "LinkClaim",
    "LinkError",
    "LinkExpiredError",
    "LinkInvalidError",
    "LinkUsedError",
]

LINK_KEY_ENV = "VOICE_HITL_LINK_KEY"


class LinkError(Exception):
    """A link that cannot be used; ``status`` is the HTTP status of its page."""

    status = 400
    title = "This link is not valid"


class LinkInvalidError(LinkError):
    """Not a token this service made, or altered since."""


class LinkExpiredError(LinkError):
    """Past its expiry."""

    status, title = 410, "This link has expired"


class LinkUsedError(LinkError):
    """Already used once."""

    status, title = 410, "This link was already used"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Decode unpadded base64url, only in its canonical form.

    Base64 can spell the same bytes several ways (the unused low bits of the last character,
    padding, characters the decoder skips); only the spelling :func:`_b64` writes is accepted,
    so a token altered anywhere is refused even where the bytes would decode the same.

    Raises:
        ValueError: Not the canonical unpadded base64url of any bytes.
    """
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical base64url")
    return data


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a valid link says: answer ``request_id`` with ``value`` (or reject it)."""

    request_id: str
    action: str
    value: Any
    holder: str
    expires: float
    nonce: str
    label: str

    @property
    def via(self) -> str:
        """``link:<holder>``: how the board and journal record the answer."""
        return f"link:{self.holder}"


class AnswerLinks:
    """Makes and checks answer links (module docstring).

    Args:
        key: The HMAC key (32 random bytes or more is plenty).
        base_url: The service as the link's reader reaches it (``https://ops.example.com``).
        ttl: Seconds a link stays valid.
        clock: POSIX seconds (tests).
    """

    def __init__(
        self,
        key: bytes,
        base_url: str,
        *,
        ttl: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if len(key) < 16:
            raise ValueError("the link key must be at least 16 bytes")
        if ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        self._key = key
        self.base_url = base_url.rstrip("/")
        self.ttl = ttl
        self._clock = clock
        self._spent: dict[str, float] = {}

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def mint(
        self, request: BoardRequest, holder: str, action: str, value: Any = None, label: str = ""
    ) -> str:
        """A link that answers ``request`` with ``value`` (``action="answer"``) or rejects it.

        Raises:
            ValueError: ``action`` is neither, or ``holder`` is empty.
        """
        if action not in ("answer", "reject") or not holder:
            raise ValueError("action must be 'answer' or 'reject', and holder non-empty")
        payload = json.dumps(
            {
                "r": request.id,
                "a": action,
                "v": value,
                "h": holder,
                "l": label,
                "x": int(self._clock() + self.ttl),
                "n": secrets.token_hex(8),
            },
            separators=(",", ":"),
        ).encode()
        token = f"{_b64(payload)}.{_b64(self._mac(payload))}"
        return f"{self.base_url}/v1/links/{token}"

    def for_request(self, request: BoardRequest, holder: str) -> dict[str, str]:
        """The links a message offers for ``request``: ``yes`` / ``no`` for a confirmation,
        one per choice id otherwise, and ``reject``; none for typed answers (number, digits,
        free text), which need the console or the API."""
        spec = request.spec or {}
        kind = spec.get("kind")
        links: dict[str, str] = {}
        if kind == "confirm":
            links["yes"] = self.mint(request, holder, "answer", True, "Yes")
            links["no"] = self.mint(request, holder, "answer", False, "No")
        elif kind == "choices":
            for choice in spec.get("choices") or []:
                links[choice["id"]] = self.mint(
                    request, holder, "answer", choice["id"], str(choice["label"])
                )
        else:
            return links
        links["reject"] = self.mint(request, holder, "reject", None, "Reject")
        return links

    def check(self, token: str) -> LinkClaim:
        """What ``token`` says, if it is genuine, unexpired and unused (spends nothing).

        Raises:
            LinkInvalidError, LinkExpiredError, LinkUsedError: As named.
        """
        encoded, _, mac = token.partition(".")
        try:
            payload = _unb64(encoded)
            genuine = hmac.compare_digest(_unb64(mac), self._mac(payload))
        except (ValueError, binascii.Error):
            genuine = False
        if not genuine:
            raise LinkInvalidError("the link is not one this service made, or it was altered")
        raw = json.loads(payload)
        claim = LinkClaim(
            request_id=str(raw["r"]),
            action=str(raw["a"]),
            value=raw["v"],
            holder=str(raw["h"]),
            expires=float(raw["x"]),
            nonce=str(raw["n"]),
            label=str(raw.get("l") or ""),
        )
        if self._clock() >= claim.expires:
            raise LinkExpiredError("the link's time ran out before it was used")
        if claim.nonce in self._spent:
            raise LinkUsedError("each link works once, and this one has been used")
        return claim

    def spend(self, token: str) -> LinkClaim:
        """Check ``token`` and mark it used (no await between: two uses race to one winner).

        Raises:
            LinkInvalidError, LinkExpiredError, LinkUsedError: As :meth:`check`.
        """
        claim = self.check(token)
        now = self._clock()
        for nonce in [n for n, until in self._spent.items() if until <= now]:
            del self._spent[nonce]
        self._spent[claim.nonce] = claim.expires
        return claim

    def give_back(self, claim: LinkClaim) -> None:
        """Make a spent link usable again (its answer could not be tried)."""
        self._spent.pop(claim.nonce, None)
