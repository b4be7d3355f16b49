"""Running the service under uvicorn: in the foreground (``voice-hitl serve``) or alongside
other work in this event loop (the demo, tests, benchmarks).

Both stop the same way (:mod:`voice_hitl.service._drain`): new answers are refused, those in
flight end, then the server stops. ``voice-hitl serve`` does it on SIGTERM or SIGINT (a second
SIGINT stops at once), then closes its journal and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette

from ..journal import Journal

__all__ = ["ServiceStartError", "running_service"]

logger = logging.getLogger("voice_hitl.service")

_GRACE = 5
"""Seconds uvicorn gives open connections (the live feed's sockets) once answers drained."""


class ServiceStartError(RuntimeError):
    """The service could not start listening (the port is taken, or not a port)."""


# The sans-I/O websockets protocol where uvicorn has it (the legacy one warns on websockets 14+).
_WS = "websockets-sansio" if "websockets-sansio" in uvicorn.config.WS_PROTOCOLS else "auto"


@contextlib.asynccontextmanager
async def running_service(
    app: Starlette, host: str = "127.0.0.1", port: int = 0, *, log_level: str = "warning"
) -> AsyncIterator[str]:
    """Serve ``app`` in this event loop while the block runs; yields its base URL.

    ``port=0`` picks a free port. On exit the server stops and its lifespan ends.

    Raises:
        ServiceStartError: It cannot listen on ``host:port`` (e.g. the port is taken).
        RuntimeError: The server did not start for another reason.

    Cancellation: safe; answers in flight end first (:func:`drain`), then the server is asked
    to stop and awaited (cancelled after 10 s).
    """
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        ws=_WS,
        timeout_graceful_shutdown=_GRACE,
    )
    server = uvicorn.Server(config)
    # Bound here, not by uvicorn, whose failed bind ends the whole process (SystemExit).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except (OSError, OverflowError) as exc:
        listener.close()
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ServiceStartError(
            f"the operator service cannot listen on {host}:{port}: {why}"
        ) from None
    task = asyncio.create_task(server.serve(sockets=[listener]), name="operator-service")
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError(f"the operator service did not start on {host}:{port}")
            await asyncio.sleep(0.01)
        sockets = [s for srv in server.servers for s in srv.sockets]
        bound = sockets[0].getsockname()[1] if sockets else port
        yield f"http://{host}:{bound}"
    finally:
        await drain(app, _drain_bound(app))
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), timeout=_GRACE + 5)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        listener.close()


def _drain_bound(app: Starlette) -> float:
    """Seconds an answer in flight can take: two acknowledgement windows and a margin."""
    desk = getattr(app.state, "desk", None)
    return 2 * float(getattr(desk, "ack_timeout", 3.0)) + 5.0


async def drain(app: Starlette, bound: float) -> bool:
    """Refuse new answers on ``app`` and wait (at most ``bound`` s) for those in flight.

    Returns:
        True when none is left in flight.

    Cancellation: safe; the gate stays closed.
    """
    desk = getattr(app.state, "desk", None)
    if desk is None:
        return True
    desk.gate.close()
    try:
        async with asyncio.timeout(bound):
            await desk.gate.drained()
    except TimeoutError:
        logger.error(
            "stopping with %d answer(s) still in flight after %g s", desk.gate.in_flight, bound
        )
        return False
    return True


class _Server(uvicorn.Server):
    """uvicorn, with the signals left to :func:`_serve_until_signalled` (uvicorn's own handler
    stops at once and re-raises the signal afterwards: exit -15 before the journal closed)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print("voice-hitl operator service: ready", flush=True)


async def _serve_until_signalled(
    app: Starlette, host: str, port: int, operators_file: str | None = None
) -> None:
    """Serve until SIGTERM / SIGINT, then drain answers and stop (module docstring); reread
    ``operators_file`` when it changes (:func:`~voice_hitl.service._auth.watch_operators`)."""
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", ws=_WS, timeout_graceful_shutdown=_GRACE
    )
    server = _Server(config)
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []
    watching: list[asyncio.Task[None]] = []

    async def stop() -> None:
        print("voice-hitl operator service: stopping (answers in flight end first)", flush=True)
        await drain(app, _drain_bound(app))
        server.should_exit = True

    def on_signal() -> None:
        if stopping:
            server.force_exit = True  # asked twice: stop now
            server.should_exit = True
            return
        stopping.append(loop.create_task(stop(), name="operator-service-drain"))

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    if operators_file is not None:
        from ._auth import Operators, watch_operators

        def apply(operators: Operators) -> None:
            app.state.desk.operators = operators

        watching.append(loop.create_task(watch_operators(operators_file, apply)))
    try:
        await server.serve()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        for task in [*stopping, *watching]:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if not server.started:
        raise ServiceStartError(f"the operator service cannot listen on {host}:{port}")


def serve_forever(args: Any) -> int:
    """``voice-hitl serve``: the service over a Redis board until interrupted."""
    import os

    from ..board import BoardUnavailableError
    from ..board._redis import RedisBoard
    from ._app import create_app
    from ._auth import OperatorsError, load_operators

    try:
        operators = load_operators(args.operators)
    except OperatorsError as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2
    url = args.redis or os.environ.get("VOICE_HITL_REDIS_URL") or "redis://127.0.0.1:6379/0"
    from .._redis_target import parse_target

    try:
        parse_target(url)
    except ValueError as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2

    async def check() -> None:
        board = RedisBoard(url, prefix=args.prefix)
        try:
            await board.open_requests()
        finally:
            await board.aclose()

    try:
        asyncio.run(check())
    except BoardUnavailableError as exc:
        print(f"voice-hitl: the board's Redis at {url} is unreachable: {exc}", file=sys.stderr)
        return 7
    if operators.plaintext:
        print(
            f"voice-hitl: deprecated: the operators file holds the token of "
            f"{', '.join(operators.plaintext)} in clear; store digests with "
            f"'voice-hitl operators migrate --operators FILE' (the same tokens keep working)",
            file=sys.stderr,
        )
    try:
        journal, journal_named = _open_journal(args, url)
    except (ValueError, OSError) as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2
    try:
        webhooks, links = _reach(args)
    except (ValueError, OSError) as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2
    # One connection per operator call in flight, up to 256: a smaller pool makes calls wait
    # for a connection on a busy machine, and past the timeout they fail with 503.
    min_replicas = getattr(args, "min_replicas", 0)
    board = RedisBoard(url, prefix=args.prefix, max_connections=256, min_replicas=min_replicas)
    app = create_app(
        board,
        operators,
        reap_interval=args.heartbeat / 2,
        close_board=True,
        journal=journal,
        webhooks=webhooks,
        links=links,
        ack_timeout=args.ack_timeout,
    )
    base = f"http://{args.host}:{args.port}"
    print(
        f"voice-hitl operator service: {base}/  (API {base}/v1, board {url} {args.prefix!r}, "
        f"{len(operators)} operator(s), journal {journal_named}, "
        f"{len(webhooks.subscriptions) if webhooks else 'no'} webhook(s))",
        flush=True,
    )
    try:
        asyncio.run(_serve_until_signalled(app, args.host, args.port, args.operators))
    except ServiceStartError as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2
    finally:
        if journal is not None:
            journal.close()
    print("voice-hitl operator service: stopped", flush=True)
    return 0


def _reach(args: Any) -> tuple[Any, Any]:
    """The webhooks (from ``--webhooks FILE``, or None) and the answer links they carry.

    Raises:
        ValueError: The webhooks file or the link settings are not valid.
        OSError: The webhooks file cannot be read.
    """
    import os
    import secrets
    from pathlib import Path

    from ._links import LINK_KEY_ENV, AnswerLinks
    from ._webhook_wire import parse_webhooks
    from ._webhooks import Webhooks

    key = os.environ.get(LINK_KEY_ENV, "").encode() or secrets.token_bytes(32)
    base = getattr(args, "public_url", None) or f"http://{args.host}:{args.port}"
    links = AnswerLinks(key, base, ttl=getattr(args, "link_ttl", 900.0))
    path = getattr(args, "webhooks", None)
    if path is None:
        return None, links
    subscriptions = parse_webhooks(Path(path).read_text(encoding="utf-8"), str(path))
    return Webhooks(subscriptions, links=links.for_request), links


def _open_journal(args: Any, url: str) -> tuple[Journal | None, str]:
    """The journal ``voice-hitl serve`` keeps (started, with ``--journal-durability``), and
    how to name it.

    Raises:
        ValueError: No key for a Redis journal, or ``sync`` without a journal.
        OSError: The journal file's folder cannot be written.
    """
    from pathlib import Path

    from ..journal import Journal, RedisJournalStore, SqliteJournalStore
    from ..journal._journal import Durability
    from ._story import journal_key

    durability: Durability = "sync" if getattr(args, "journal_durability", "") == "sync" else "fast"
    if args.no_journal:
        if durability != "fast":
            raise ValueError("--journal-durability sync needs a journal (not --no-journal)")
        return None, "off"
    if args.journal_redis:
        prefix = args.prefix + "journal"
        store: Any = RedisJournalStore(url, prefix=prefix)
        key = journal_key(None)
        named = f"{url} {prefix!r}"
    else:
        path = Path(args.journal)
        path.parent.mkdir(parents=True, exist_ok=True)
        # sync: a stored decision survives a machine crash too, not only the process's
        store = SqliteJournalStore(path, synchronous="FULL" if durability == "sync" else "NORMAL")
        key = journal_key(path)
        named = str(path)
    journal = Journal(store, key, durability=durability)
    journal.start()
    return journal, named if durability == "fast" else f"{named} (sync)"
