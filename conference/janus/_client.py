"""A Janus session over the HTTP API (``httpx``): requests, the long poll, keepalives.

Thin I/O: it posts the dicts ``_wire`` builds and hands every message the long poll brings to
one callback. A request Janus acknowledges first and answers later (``join``) is matched to
its event by transaction id. The session counts as lost when the long poll or a keepalive
cannot reach Janus, or Janus says the session is gone; ``on_lost(reason)`` is then called once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import ssl
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from voice_hitl import VoiceHitlError

from . import _wire

__all__ = ["JanusLostError", "JanusSession"]

logger = logging.getLogger("conference.janus")


_LONG_POLL = 30.0
"""Seconds Janus holds a long poll open before answering it empty."""


class JanusLostError(VoiceHitlError, ConnectionError):
    """The Janus session is gone (server unreachable, session expired or destroyed)."""


def _make_client(url: str, timeout: float) -> httpx.AsyncClient:
    """An HTTP client for ``url``, built off the event loop: building one loads the system's
    TLS certificates (~0.3 s; a bare context for plain HTTP, which uses none) and the first
    request imports anyio's asyncio backend (~0.1 s), imported here ahead of it."""
    importlib.import_module("anyio._backends._asyncio")
    limits = httpx.Timeout(timeout)  # the long poll passes its own, longer read timeout
    if url.startswith("http://"):
        return httpx.AsyncClient(timeout=limits, verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    return httpx.AsyncClient(timeout=limits)


class JanusSession:
    """One Janus session with an AudioBridge handle.

    Args:
        url: The HTTP API root (``http://127.0.0.1:8088/janus``).
        on_message: Called with every message the long poll brings (must not block).
        on_lost: Called once with the reason when the session is lost.
        keepalive: Seconds between keepalives (Janus drops a session after 60 s idle).
        request_timeout: Seconds a request may take.
    """

    def __init__(
        self,
        url: str,
        *,
        on_message: Callable[[Mapping[str, Any]], None],
        on_lost: Callable[[str], None],
        keepalive: float = 15.0,
        request_timeout: float = 10.0,
    ) -> None:
        self.url = url.rstrip("/")
        self._on_message = on_message
        self._on_lost = on_lost
        self._keepalive = keepalive
        self._timeout = request_timeout
        self._http: httpx.AsyncClient | None = None
        self.session_id: int | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._waiting: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self.lost: str | None = None
        self._closing = False

    async def open(self) -> None:
        """Create the session and start the long poll and keepalives.

        Raises:
            JanusLostError: Janus cannot be reached or refused the session.

        Cancellation: safe; nothing stays open.
        """
        self._http = await asyncio.to_thread(_make_client, self.url, self._timeout)
        try:
            data = _wire.reply_data(await self._post("", _wire.request("create")))
            self.session_id = int(data["id"])
        except BaseException:
            await self._http.aclose()
            self._http = None
            raise
        self._tasks = [
            asyncio.create_task(self._poll(), name=f"janus-poll-{self.session_id}"),
            asyncio.create_task(self._keep_alive(), name=f"janus-keepalive-{self.session_id}"),
        ]

    async def attach(self) -> int:
        """Attach a handle to the AudioBridge plugin; returns its id.

        Cancellation: safe (a handle attached late is dropped with the session).
        """
        data = _wire.reply_data(
            await self._post(f"/{self.session_id}", _wire.request("attach", plugin=_wire.PLUGIN))
        )
        return int(data["id"])

    async def call(self, handle: int, body: Mapping[str, Any]) -> dict[str, Any]:
        """A synchronous AudioBridge request (create, rtp_forward, kick, destroy...).

        Raises:
            JanusWireError: The plugin reported an error.
            JanusLostError: Janus cannot be reached.

        Cancellation: safe; the request may still take effect.
        """
        reply = await self._post(f"/{self.session_id}/{handle}", _wire.message(body))
        return _wire.reply_data(reply)

    async def call_async(self, handle: int, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """An asynchronous AudioBridge request (join): waits for its event.

        Cancellation: safe; the request may still take effect.
        """
        msg = _wire.message(body)
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg["transaction"]] = future
        try:
            reply = await self._post(f"/{self.session_id}/{handle}", msg)
            if reply.get("janus") != "ack":
                _wire.reply_data(reply)
                return reply
            async with asyncio.timeout(self._timeout):
                return await future
        finally:
            self._waiting.pop(msg["transaction"], None)

    async def _post(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        if self._http is None:
            raise JanusLostError("the Janus session is not open")
        try:
            reply = await self._http.post(self.url + path, json=dict(body))
            data = reply.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise JanusLostError(f"Janus at {self.url} unreachable: {exc!r}") from exc
        if not isinstance(data, dict):
            raise _wire.JanusWireError(f"Janus answered {type(data).__name__}, not an object")
        return data

    def _lose(self, reason: str) -> None:
        if self.lost is not None or self._closing:
            return
        self.lost = reason
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(JanusLostError(reason))
        try:
            self._on_lost(reason)
        except Exception:
            logger.exception("janus: on_lost failed")

    async def _poll(self) -> None:
        assert self._http is not None
        while True:
            try:
                reply = await self._http.get(
                    f"{self.url}/{self.session_id}",
                    params={"maxev": 20},
                    timeout=httpx.Timeout(self._timeout, read=_LONG_POLL + self._timeout),
                )
                payload = reply.json()
            except (httpx.HTTPError, ValueError) as exc:
                self._lose(f"Janus session lost: the server at {self.url} went away ({exc!r})")
                return
            messages = payload if isinstance(payload, list) else [payload]
            for msg in messages:
                if not isinstance(msg, dict):
                    continue
                if msg.get("janus") == "error":
                    self._lose(f"Janus session lost: {msg.get('error', {}).get('reason')}")
                    return
                future = self._waiting.get(str(msg.get("transaction")))
                if future is not None and not future.done() and msg.get("janus") == "event":
                    future.set_result(msg)
                try:
                    self._on_message(msg)
                except Exception:
                    logger.exception("janus: message handler failed on %r", msg.get("janus"))

    async def _keep_alive(self) -> None:
        while True:
            await asyncio.sleep(self._keepalive)
            try:
                reply = await self._post(f"/{self.session_id}", _wire.request("keepalive"))
            except (JanusLostError, _wire.JanusWireError) as exc:
                self._lose(f"Janus session lost: keepalive failed ({exc})")
                return
            if reply.get("janus") != "ack":
                self._lose(f"Janus session lost: keepalive answered {reply.get('janus')!r}")
                return

    async def aclose(self) -> None:
        """Destroy the session (when Janus is still there) and stop. Idempotent.

        Cancellation: safe; the tasks and the HTTP client are closed regardless.
        """
        self._closing = True
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        http, self._http = self._http, None
        if http is None:
            return
        try:
            if self.lost is None and self.session_id is not None:
                with contextlib.suppress(httpx.HTTPError):
                    await http.post(
                        f"{self.url}/{self.session_id}", json=_wire.request("destroy"), timeout=2.0
                    )
        finally:
            await http.aclose()
