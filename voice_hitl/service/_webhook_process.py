"""The service's side of the webhook delivery process: start it, feed it, hear it, restart it.

:class:`DeliveryProcess` starts ``python -m voice_hitl.service._webhook_child`` (its own
interpreter, so its JSON, signing and HTTP never hold the service's GIL), sends it the
``config`` frame and waits for ``ready``; then :meth:`DeliveryProcess.send` writes one frame
per event (never waits) and a reader task hands every frame back to ``on_report``.

If the process dies or sends a frame that is not the protocol's, the reader logs why, kills
it, calls ``on_lost`` (the service makes everything unconfirmed a dead letter, with the
reason) and starts a new one after ``backoff`` seconds; while it is down :attr:`up` is False
(the service makes events offered meanwhile dead letters). A second failure within
``window`` seconds of a restart leaves it down, logged. :meth:`DeliveryProcess.aclose` asks
for a flush of at most ``grace`` seconds, then terminates and kills what is left: no process
outlives the service (and the delivery process ends by itself when its stdin ends).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from ._webhook_frames import FrameError, encode_frame, read_frame

__all__ = ["WORKER_ARGV", "DeliveryProcess"]

logger = logging.getLogger("voice_hitl.service.webhooks")

WORKER_ARGV = [sys.executable, "-m", "voice_hitl.service._webhook_child"]
"""The delivery process's command line (tests replace it with a misbehaving one)."""


class DeliveryProcess:
    """One delivery process at a time, supervised (module docstring)."""

    def __init__(
        self,
        config: dict[str, Any],
        *,
        on_report: Callable[[dict[str, Any]], None],
        on_lost: Callable[[str], None],
        backoff: float = 0.5,
        window: float = 60.0,
        start_timeout: float = 60.0,
    ) -> None:
        self._config = {**config, "t": "config"}
        self._on_report = on_report
        self._on_lost = on_lost
        self._backoff = backoff
        self._window = window
        self._start_timeout = start_timeout
        self._proc: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        self._closed_left: int | None = None
        self.up = False
        """True while a delivery process is running and taking events."""
        self.restarts = 0
        """Delivery processes started again after one failed."""
        self.changed = asyncio.Event()
        """Set (and cleared by whoever waits on it) each time :attr:`up` changes."""

    @property
    def pid(self) -> int | None:
        """The running delivery process's id."""
        return self._proc.pid if self._proc is not None and self.up else None

    async def start(self) -> None:
        """Start the delivery process and wait until it is ready.

        Raises:
            RuntimeError: It did not start (the message says why).

        Cancellation: safe; a process half started is killed.
        """
        reader = await self._spawn()
        self._supervisor = asyncio.create_task(self._supervise(reader), name="webhook-process")

    async def _spawn(self) -> asyncio.StreamReader:
        proc = await asyncio.create_subprocess_exec(
            *WORKER_ARGV,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**20,
        )
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(encode_frame(self._config))
            async with asyncio.timeout(self._start_timeout):
                ready = await read_frame(proc.stdout)
            if ready is None or ready["t"] != "ready":
                raise RuntimeError(
                    f"the webhook delivery process did not start: it said {ready!r:.120} "
                    f"(exit code {await proc.wait()})"
                )
        except BaseException as exc:
            await self._kill(proc)
            if isinstance(exc, (FrameError, TimeoutError)):
                raise RuntimeError(f"the webhook delivery process did not start: {exc!r}") from exc
            raise
        self._set_up(True)
        return proc.stdout

    def _set_up(self, up: bool) -> None:
        self.up = up
        self.changed.set()

    def send(self, message: dict[str, Any]) -> None:
        """Write one frame to the delivery process (never waits; only while :attr:`up`)."""
        assert self._proc is not None and self._proc.stdin is not None and self.up
        self._proc.stdin.write(encode_frame(message))

    async def _supervise(self, reader: asyncio.StreamReader) -> None:
        started = time.monotonic()
        while True:
            reason = await self._follow(reader)
            if reason is None:  # closed as asked
                return
            proc = self._proc
            code = await self._kill(proc) if proc is not None else None
            logger.error("webhook delivery process %s (exit code %s)", reason, code)
            self._on_lost(reason)  # also what was sent to it while it was being killed
            self._set_up(False)
            if self.restarts and time.monotonic() - started < self._window:
                logger.error(
                    "webhook delivery process failed again within %g s of a restart: not "
                    "restarting it; every webhook event is a dead letter from now on",
                    self._window,
                )
                return
            await asyncio.sleep(self._backoff)
            try:
                reader = await self._spawn()
            except RuntimeError as exc:
                logger.error("%s; every webhook event is a dead letter from now on", exc)
                return
            self.restarts += 1
            started = time.monotonic()
            logger.warning("webhook delivery process restarted (%d restart(s))", self.restarts)

    async def _follow(self, reader: asyncio.StreamReader) -> str | None:
        """Hand frames to ``on_report`` until the stream ends; why it ended (None: closed)."""
        try:
            while (message := await read_frame(reader)) is not None:
                if message["t"] == "closed":
                    self._closed_left = int(message.get("left") or 0)
                    return None if self._closing else "stopped by itself"
                self._on_report(message)
        except (FrameError, ValueError, KeyError, TypeError) as exc:
            return f"sent a bad message ({exc})"
        return None if self._closing else "died"

    async def _kill(self, proc: asyncio.subprocess.Process) -> int:
        if proc.returncode is None:
            proc.kill()
        return await proc.wait()

    async def aclose(self, grace: float) -> int | None:
        """Ask the process to flush for up to ``grace`` seconds, then end it (idempotent);
        the events it had not settled (None when it did not say).

        Cancellation: safe; the process is killed and the reader stopped anyway.
        """
        self._closing = True
        proc, supervisor = self._proc, self._supervisor
        try:
            if proc is not None and proc.returncode is None and proc.stdin is not None:
                if self.up:
                    proc.stdin.write(encode_frame({"t": "close", "grace": grace}))
                proc.stdin.close()
                try:
                    async with asyncio.timeout(grace + 5.0):
                        await proc.wait()
                except TimeoutError:
                    logger.warning("webhook delivery process did not end in time: terminating it")
                    proc.terminate()
                    try:
                        async with asyncio.timeout(2.0):
                            await proc.wait()
                    except TimeoutError:
                        pass
        finally:
            if proc is not None:
                await self._kill(proc)
            self._set_up(False)
            if supervisor is not None:
                if not self.up and not supervisor.done():  # between processes: stop there
                    supervisor.cancel()
                if not supervisor.done():
                    try:
                        async with asyncio.timeout(2.0):
                            await asyncio.shield(supervisor)
                    except TimeoutError:
                        supervisor.cancel()
                await asyncio.gather(supervisor, return_exceptions=True)
        return self._closed_left
