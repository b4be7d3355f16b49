"""Running the service under uvicorn: in the foreground (``voice-hitl serve``) or alongside
other work in this event loop (the demo, tests, benchmarks)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette

__all__ = ["running_service"]

# The sans-I/O websockets protocol where uvicorn has it (the legacy one warns on websockets 14+).
_WS = "websockets-sansio" if "websockets-sansio" in uvicorn.config.WS_PROTOCOLS else "auto"


@contextlib.asynccontextmanager
async def running_service(
    app: Starlette, host: str = "127.0.0.1", port: int = 0, *, log_level: str = "warning"
) -> AsyncIterator[str]:
    """Serve ``app`` in this event loop while the block runs; yields its base URL.

    ``port=0`` picks a free port. On exit the server stops and its lifespan ends.

    Raises:
        RuntimeError: The server did not start (e.g. the port is taken).
    """
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on", ws=_WS)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(), name="operator-service")
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
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
