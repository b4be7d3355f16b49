"""Task helpers the board's bridge and the operator service share."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from collections.abc import Sequence
from typing import Any

__all__ = ["check_cancelled", "default_worker_id", "stop_tasks"]


def default_worker_id() -> str:
    """``host:pid:random`` — unique per bridge, readable in the console."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def check_cancelled() -> None:
    """Re-raise a cancellation a client library turned into a connection error."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def stop_tasks(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Cancel and await ``tasks``; cancel again a task whose library swallowed the first
    cancellation (a Redis client may turn it into a connection error or drop it)."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.5)
    await asyncio.gather(*tasks, return_exceptions=True)
