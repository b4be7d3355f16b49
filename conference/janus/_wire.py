"""The Janus API and AudioBridge messages as plain data (sans I/O).

Requests are built as JSON-ready dicts; what Janus sends (the replies to requests and the
events of a long poll) is read into the typed events below with :func:`read_events`. Nothing
here opens a socket: the HTTP adapter (``_client.py``) only moves these dicts.

The AudioBridge messages this reads (Janus 1.1.x, numeric ids):

- ``{"audiobridge": "joined", "id": ..., "participants": [...], "rtp": {...}}``: our own join
  (with the loopback port to send our RTP to) and the people already in the room.
- ``{"audiobridge": "joined", "participants": [{"id", "display"}, ...]}``: someone joined.
- ``{"audiobridge": "event", "leaving": id}`` / ``{"kicked": id}``: someone left / was kicked.
- ``{"audiobridge": "talking" | "stopped-talking", "id": id}``: audio-level events, which
  Janus 1.1.2 emits for WebRTC participants only (its plain-RTP path never parses the
  audio-level extension).
- ``{"audiobridge": "destroyed"}``: the room is gone.
- ``{"audiobridge": "event", "error_code": n, "error": "..."}``: a request failed.

Session-level messages: ``{"janus": "timeout"}`` (our session expired) and
``{"janus": "detached"}`` / ``{"janus": "hangup"}`` (a handle ended).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from voice_hitl import VoiceHitlError

__all__ = [
    "BridgeError",
    "BridgeEvent",
    "JanusWireError",
    "OwnJoin",
    "PeerJoined",
    "PeerLeft",
    "RoomDestroyed",
    "SessionEnded",
    "Talking",
    "message",
    "read_events",
    "reply_data",
    "request",
    "room_create",
    "room_join",
]

PLUGIN = "janus.plugin.audiobridge"


class JanusWireError(VoiceHitlError, ValueError):
    """Janus answered with something that is not what its API documents."""


@dataclass(frozen=True, slots=True)
class OwnJoin:
    """Our join was accepted: our id and where to send RTP."""

    participant_id: str
    rtp_host: str
    rtp_port: int
    type: Literal["own_join"] = "own_join"


@dataclass(frozen=True, slots=True)
class PeerJoined:
    """A participant is in the room (joined now or was there when we joined)."""

    participant_id: str
    display_name: str
    type: Literal["peer_joined"] = "peer_joined"


@dataclass(frozen=True, slots=True)
class PeerLeft:
    """A participant left the room; ``kicked`` when a moderator removed them."""

    participant_id: str
    kicked: bool = False
    type: Literal["peer_left"] = "peer_left"


@dataclass(frozen=True, slots=True)
class Talking:
    """An audio-level event: ``talking`` is True when the participant started talking."""

    participant_id: str
    talking: bool
    type: Literal["talking"] = "talking"


@dataclass(frozen=True, slots=True)
class RoomDestroyed:
    """The room was destroyed; everyone in it is out."""

    type: Literal["room_destroyed"] = "room_destroyed"


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """Janus ended our session or handle (``timeout``, ``detached``, ``hangup``)."""

    reason: str
    type: Literal["session_ended"] = "session_ended"


@dataclass(frozen=True, slots=True)
class BridgeError:
    """An AudioBridge request failed (the error Janus reported)."""

    code: int
    error: str
    type: Literal["bridge_error"] = "bridge_error"


BridgeEvent = OwnJoin | PeerJoined | PeerLeft | Talking | RoomDestroyed | SessionEnded | BridgeError


def request(janus: str, **fields: Any) -> dict[str, Any]:
    """A Janus API request (``create``, ``attach``, ``keepalive``, ``destroy``...) with a
    fresh transaction id."""
    return {"janus": janus, "transaction": secrets.token_hex(8), **fields}


def message(body: Mapping[str, Any]) -> dict[str, Any]:
    """A plugin message carrying an AudioBridge request ``body``."""
    return request("message", body=dict(body))


def room_create(
    room: int,
    secret: str,
    *,
    sampling_rate: int = 16_000,
    groups: Sequence[str] = (),
    talk_packets: int = 10,
    talk_level: int = 55,
) -> dict[str, Any]:
    """Create a room that admits plain-RTP participants and emits talking events.

    ``talk_packets`` packets (20 ms each) are averaged per talking decision; a participant
    talks when that average RFC 6464 level (0 loud .. 127 silent) is below ``talk_level``.
    """
    body: dict[str, Any] = {
        "request": "create",
        "room": room,
        "secret": secret,
        "sampling_rate": sampling_rate,
        "allow_rtp_participants": True,
        "audiolevel_ext": True,
        "audiolevel_event": True,
        "audio_active_packets": talk_packets,
        "audio_level_average": talk_level,
        "permanent": False,
    }
    if groups:
        body["groups"] = list(groups)
    return body


def room_join(
    room: int,
    display: str,
    *,
    rtp_port: int,
    participant_id: int | None = None,
    group: str | None = None,
    audiolevel_ext: int | None = None,
    pin: str | None = None,
    codec: str = "pcmu",
    payload_type: int = 0,
) -> dict[str, Any]:
    """Join ``room`` as a plain-RTP participant (``codec``: ``pcmu`` or ``opus``) receiving
    its mix at ``rtp_port``."""
    rtp: dict[str, Any] = {"ip": "127.0.0.1", "port": rtp_port, "payload_type": payload_type}
    if audiolevel_ext is not None:
        rtp["audiolevel_ext"] = audiolevel_ext
    body: dict[str, Any] = {
        "request": "join",
        "room": room,
        "display": display,
        "codec": codec,
        "rtp": rtp,
    }
    if participant_id is not None:
        body["id"] = participant_id
    if group is not None:
        body["group"] = group
    if pin is not None:
        body["pin"] = pin
    return body


def reply_data(reply: Mapping[str, Any]) -> dict[str, Any]:
    """The payload of a synchronous reply: ``data`` of a Janus ``success``, or the plugin's
    data of a plugin reply.

    Raises:
        JanusWireError: Janus or the plugin reported an error, or the reply is malformed.
    """
    kind = reply.get("janus")
    if kind == "error":
        error = reply.get("error") or {}
        raise JanusWireError(f"Janus error {error.get('code')}: {error.get('reason')}")
    if kind != "success":
        raise JanusWireError(f"expected a Janus success reply, got {kind!r}")
    plugindata = reply.get("plugindata")
    if plugindata is None:
        data = reply.get("data")
        if not isinstance(data, dict):
            raise JanusWireError("a Janus success reply without data")
        return data
    data = plugindata.get("data") if isinstance(plugindata, dict) else None
    if not isinstance(data, dict):
        raise JanusWireError("a plugin reply without data")
    if "error_code" in data:
        raise JanusWireError(f"AudioBridge error {data['error_code']}: {data.get('error')}")
    return data


def _id(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise JanusWireError(f"a participant id must be a number or a string, got {value!r}")
    return str(value)


def _peers(data: Mapping[str, Any]) -> list[BridgeEvent]:
    peers = data.get("participants") or []
    if not isinstance(peers, list):
        raise JanusWireError(f"participants must be a list, got {type(peers).__name__}")
    events: list[BridgeEvent] = []
    for peer in peers:
        if not isinstance(peer, dict):
            raise JanusWireError(f"a participant must be an object, got {peer!r}")
        pid = _id(peer.get("id"))
        events.append(PeerJoined(pid, str(peer.get("display") or pid)))
        if peer.get("talking") is True:
            events.append(Talking(pid, True))
    return events


def read_events(msg: Mapping[str, Any]) -> list[BridgeEvent]:
    """What one message from Janus says, as typed events (in order); [] for messages that
    carry nothing the backend uses (acks, keepalives, media and webrtcup notices).

    Raises:
        JanusWireError: The message is not a JSON object Janus sends, or an AudioBridge
            message lacks the fields its API documents.
    """
    if not isinstance(msg, Mapping):
        raise JanusWireError(f"a Janus message must be a JSON object, got {type(msg).__name__}")
    kind = msg.get("janus")
    if kind in ("timeout", "detached", "hangup"):
        reason = str(msg.get("reason") or kind)
        return [SessionEnded(f"Janus {kind}: {reason}" if reason != kind else f"Janus {kind}")]
    if kind not in ("event", "success"):
        return []
    plugindata = msg.get("plugindata")
    if not isinstance(plugindata, dict) or plugindata.get("plugin") != PLUGIN:
        return []
    data = plugindata.get("data")
    if not isinstance(data, dict):
        raise JanusWireError("an AudioBridge message without data")
    what = data.get("audiobridge")
    if "error_code" in data:
        return [BridgeError(int(data["error_code"]), str(data.get("error", "")))]
    if what == "joined":
        events: list[BridgeEvent] = []
        if "id" in data:
            rtp = data.get("rtp")
            if not isinstance(rtp, dict) or not isinstance(rtp.get("port"), int):
                raise JanusWireError("our join reply carries no rtp port (plain RTP refused?)")
            events.append(OwnJoin(_id(data["id"]), str(rtp.get("ip", "127.0.0.1")), rtp["port"]))
        return events + _peers(data)
    if what in ("talking", "stopped-talking"):
        return [Talking(_id(data.get("id")), what == "talking")]
    if what == "destroyed":
        return [RoomDestroyed()]
    if what == "event":
        if "leaving" in data:
            return [PeerLeft(_id(data["leaving"]))]
        if "kicked" in data:
            return [PeerLeft(_id(data["kicked"]), kicked=True)]
        if "participants" in data:
            return _peers(data)
        return []
    if what == "left":
        return []
    return []
