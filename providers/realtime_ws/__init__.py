"""The base of websocket realtime providers (OpenAI Realtime, Gemini Live, the next one).

What every such provider shares lives here; what differs (the wire mapping) stays in each
provider's own sans-I/O protocol module.

- ``ReconnectPolicy``: backoff and the handshake bound.
- ``WebSocketProvider``: endpoint, handshake headers, wire taps; ``_dial()`` turns every
  handshake failure into a ``ProviderError`` that says whether retrying may help.
- ``WebSocketSession``: the connection lifecycle. It establishes a connection (with an
  optional opening exchange), reads, books a loss once, reconnects with backoff (at once after
  a planned close), ends on a fatal error, and closes what it owns. It pumps any
  ``WireProtocol``: ``connection_made``, ``connection_lost(reason, unsent)``, ``receive``,
  ``events``, ``outgoing``, ``append_audio``.
- ``ProtocolQueues``: the event and outgoing-frame queues a sans-I/O protocol drains.
- ``CallLedger`` and ``InFlight`` (the delivery ledger): which calls are open and on which
  connection, and which results were written but not yet taken, so the protocol sends them
  again after a reconnect.
- ``play`` and ``ScriptStep``: a loopback server's side of a conversation written as data
  (steps that run on a connection and may yield a result; ``ScriptState`` gives later steps
  the last call's id). ``FunctionCall``, ``Speak``, ``UserSays`` and ``Drop`` are the steps every
  protocol has.
- ``LoopbackServer`` and ``LoopbackConnection``: the test servers' scaffolding. They serve on
  127.0.0.1, accept connections in order, record each frame (``received``, ``received_at``,
  ``sent``), let a test ``expect`` a frame, drop or close the socket, and reject a bad frame.

A third provider starts like this (``tests/test_realtime_ws_base.py`` builds a whole one):

1. A sans-I/O protocol class with the six ``WireProtocol`` methods. It keeps a ``CallLedger``
   for its calls, and an ``InFlight`` for the results it wrote and the server has not yet
   confirmed. In ``connection_lost`` it moves those to the next connection.
2. ``class MyProvider(WebSocketProvider)`` with ``server_name``, ``capabilities`` and
   ``connect()`` (build the session, ``await session._open()``).
3. ``class MySession(WebSocketSession[MyProtocol])`` with the intents (``submit_tool_result``,
   ``inject_context``, ``say``, ``interrupt``): call the protocol, then ``await
   self._flush()``. Override ``_ready`` when the protocol has an opening exchange,
   ``_fatal`` for in-band fatal errors, ``_planned_close`` for a server's notice of the end of
   a connection, and ``_close_error`` when close codes carry errors.
4. A test server: ``LoopbackServer`` subclass with ``connection_class``; its connection
   subclass implements ``_handle(frame)`` (decode, validate, record, answer) and the model's
   moves (``function_call``, ``speak``...). Script steps subclass ``ScriptStep`` and provide
   ``run``.

Only ``ReconnectPolicy``, the ledger and ``publish`` load at import; the rest needs
``websockets`` and loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._ledger import CallLedger, InFlight, OpenCall
from ._queues import ProtocolQueues
from ._reconnect import ReconnectPolicy
from ._wire import decode_pcm16, encode_pcm16, parse_object, publish

if TYPE_CHECKING:
    from ._interface import SessionState, WireProtocol
    from ._provider import WebSocketProvider
    from ._script import Drop, FunctionCall, ScriptState, ScriptStep, Speak, UserSays, play
    from ._server import LoopbackConnection, LoopbackServer
    from ._session import WebSocketSession

__all__ = [
    "CallLedger",
    "Drop",
    "FunctionCall",
    "InFlight",
    "LoopbackConnection",
    "LoopbackServer",
    "OpenCall",
    "ProtocolQueues",
    "ReconnectPolicy",
    "ScriptState",
    "ScriptStep",
    "SessionState",
    "Speak",
    "UserSays",
    "WebSocketProvider",
    "WebSocketSession",
    "WireProtocol",
    "decode_pcm16",
    "encode_pcm16",
    "parse_object",
    "play",
    "publish",
]

_LAZY = {
    "WebSocketProvider": "_provider",
    "Drop": "_script",
    "FunctionCall": "_script",
    "ScriptState": "_script",
    "ScriptStep": "_script",
    "Speak": "_script",
    "UserSays": "_script",
    "play": "_script",
    "LoopbackConnection": "_server",
    "LoopbackServer": "_server",
    "SessionState": "_interface",
    "WebSocketSession": "_session",
    "WireProtocol": "_interface",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    publish({name: value}, [name], __name__)
    globals()[name] = value
    return value


publish(globals(), __all__, __name__)
