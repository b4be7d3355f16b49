"""Webhooks on the wire, sans I/O: subscriptions, events, and their HMAC signatures.

Every event is one JSON object POSTed to each subscribed URL::

    {"id": "evt_<hex>", "type": "request.opened" | "request.settled" | "request.escalated",
     "created_at": "<ISO 8601>", "request": {...as GET /v1/requests/{id}...},
     "links": {"yes": "<url>", "no": "<url>", "reject": "<url>"}, "escalation": {...}}

``id`` is the idempotency id: a retry (or a dead letter retried) sends the same ``id`` again,
so a receiver that remembers the ids it handled processes each event once. ``links`` (one-time
answer links, when the service mints them) come with ``request.opened`` and
``request.escalated``; ``escalation`` (who, time left) with ``request.escalated``.

Headers: ``X-Voice-Hitl-Event-Id``, ``X-Voice-Hitl-Timestamp`` (POSIX seconds of this attempt)
and ``X-Voice-Hitl-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>``. A receiver
checks both with :func:`verify_webhook`: the signature proves the sender knows the secret and
the timestamp bounds replays to a window (five minutes by default).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ..board import BoardRequest
from ..board._model import iso

__all__ = [
    "EVENT_TYPES",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "WebhookError",
    "WebhookSignatureError",
    "WebhookSubscription",
    "parse_webhooks",
    "sign_webhook",
    "verify_webhook",
    "webhook_event",
]

EventType = Literal["request.opened", "request.settled", "request.escalated"]
EVENT_TYPES: frozenset[str] = frozenset({"request.opened", "request.settled", "request.escalated"})
EVENT_HEADER = "X-Voice-Hitl-Event-Id"
TIMESTAMP_HEADER = "X-Voice-Hitl-Timestamp"
SIGNATURE_HEADER = "X-Voice-Hitl-Signature"
_NAME = re.compile(r"[A-Za-z0-9._@+:-]{1,64}")


class WebhookError(ValueError):
    """A webhooks configuration that is not valid; the message says where."""


class WebhookSignatureError(ValueError):
    """A webhook whose signature or timestamp does not check out (the message says which)."""


@dataclass(frozen=True, slots=True)
class WebhookSubscription:
    """One receiver: where events go, the secret that signs them, and what it may see.

    ``rooms`` and ``channels`` scope it like an operator's token (``"*"``: all); ``events``
    picks the event types it gets. ``name`` is the holder of the answer links minted for it
    (the journal's ``via`` reads ``link:<name>``).
    """

    name: str
    url: str
    secret: str
    rooms: frozenset[str] = frozenset({"*"})
    channels: frozenset[str] = frozenset({"*"})
    events: frozenset[str] = EVENT_TYPES

    def wants(self, event_type: str, request: BoardRequest) -> bool:
        """True when this subscription takes this event type for this request's place."""
        return (
            event_type in self.events
            and ("*" in self.rooms or request.room in self.rooms)
            and ("*" in self.channels or request.channel in self.channels)
        )


def _strings(entry: Mapping[str, Any], key: str, where: str, default: frozenset[str]) -> Any:
    value = entry.get(key)
    if value is None:
        return default
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise WebhookError(f"{where}: {key!r} must be a non-empty list of non-empty strings")
    return frozenset(value)


def _usable(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port out of range)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def parse_webhooks(text: str, source: str) -> list[WebhookSubscription]:
    """Parse ``{"webhooks": [{"name", "url", "secret", "rooms"?, "channels"?, "events"?}]}``.

    Raises:
        WebhookError: Not JSON, or an entry lacks a name, an http(s) URL or a secret of 16 or
            more characters, or names an unknown event type.
    """
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise WebhookError(f"{source} is not JSON: {exc}") from None
    entries = raw.get("webhooks") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise WebhookError(f'{source} needs {{"webhooks": [...]}}')
    found: list[WebhookSubscription] = []
    for n, entry in enumerate(entries):
        where = f"{source}: webhook #{n + 1}"
        if not isinstance(entry, dict):
            raise WebhookError(f"{where} must be an object")
        name, url, secret = entry.get("name"), entry.get("url"), entry.get("secret")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise WebhookError(
                f"{where} needs a 'name' of letters, digits and . _ - @ + : (it names the "
                "links' holder and the dead letters)"
            )
        if any(s.name == name for s in found):
            raise WebhookError(f"{where}: the name {name!r} is used twice")
        if not isinstance(url, str) or not _usable(url):
            raise WebhookError(f"{where} ({name}) needs an http:// or https:// 'url' with a host")
        if not isinstance(secret, str) or len(secret) < 16:
            raise WebhookError(f"{where} ({name}) needs a 'secret' of 16 or more characters")
        events = _strings(entry, "events", where, EVENT_TYPES)
        unknown = sorted(events - EVENT_TYPES)
        if unknown:
            raise WebhookError(
                f"{where} ({name}): unknown event type(s) {unknown}; known: {sorted(EVENT_TYPES)}"
            )
        found.append(
            WebhookSubscription(
                name=name,
                url=url,
                secret=secret,
                rooms=_strings(entry, "rooms", where, frozenset({"*"})),
                channels=_strings(entry, "channels", where, frozenset({"*"})),
                events=events,
            )
        )
    return found


def webhook_event(
    event_type: EventType,
    request: BoardRequest,
    at: float,
    *,
    links: Mapping[str, str] | None = None,
    escalation: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A new event (with a fresh idempotency ``id``) for one request."""
    event: dict[str, Any] = {
        "id": "evt_" + secrets.token_hex(12),
        "type": event_type,
        "created_at": iso(at),
        "request": request.to_wire(),
    }
    if links:
        event["links"] = dict(links)
    if escalation is not None:
        event["escalation"] = dict(escalation)
    return event


def _mac(secret: str, timestamp: str, body: bytes) -> str:
    return hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def sign_webhook(secret: str, body: bytes, timestamp: float) -> dict[str, str]:
    """The timestamp and signature headers for one attempt at sending ``body``."""
    stamp = str(int(timestamp))
    return {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: "v1=" + _mac(secret, stamp, body)}


def verify_webhook(
    secret: str,
    body: bytes,
    headers: Mapping[str, str],
    now: float,
    *,
    tolerance: float = 300.0,
) -> dict[str, Any]:
    """Check a received webhook and return its event.

    ``headers`` is any case-insensitive mapping (Starlette's, httpx's) or a plain dict with the
    names as sent. The receiver should also drop an ``id`` it already handled.

    Raises:
        WebhookSignatureError: A header is missing, the timestamp is outside ``tolerance``
            seconds of ``now`` (a replay), or the signature does not match the body.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    stamp = lowered.get(TIMESTAMP_HEADER.lower(), "")
    signature = lowered.get(SIGNATURE_HEADER.lower(), "")
    if not stamp.isdigit() or not signature.startswith("v1="):
        raise WebhookSignatureError(
            f"missing or malformed {TIMESTAMP_HEADER} / {SIGNATURE_HEADER} headers"
        )
    if abs(now - int(stamp)) > tolerance:
        raise WebhookSignatureError(
            f"timestamp {stamp} is more than {tolerance:g} s from now: a replay, or a clock off"
        )
    if not hmac.compare_digest(signature[3:], _mac(secret, stamp, body)):
        raise WebhookSignatureError("the signature does not match the body and secret")
    event: dict[str, Any] = json.loads(body)
    return event
