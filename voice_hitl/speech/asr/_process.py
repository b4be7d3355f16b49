"""Worker processes for recognisers whose native code holds the GIL.

PocketSphinx's decoder keeps Python's GIL for a whole ``process_raw`` call, so decoding in a
thread still stops the event loop: 0.18-1.6 s without a single callback on the fixtures
(a grammar decode with its checks). Feeding the decoder in small chunks would free the GIL
between chunks but switches it to live cepstral normalisation, which was measured at 46.6 %
accuracy against 82.1 %. So the async path decodes in a child process instead.

One child per distinct recogniser configuration is shared by every recogniser built with
it, like a loaded model: it is started (``spawn``, so no thread state is inherited) on first
use, decodes one utterance at a time, and ends with the interpreter. A child that dies is
replaced on the next call; the call that saw it die gets `RecognizerWorkerError`.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ..._exceptions import VoiceHitlError

__all__ = ["RecognizerWorkerError", "call_in_worker"]

_WORKERS: dict[Hashable, ProcessPoolExecutor] = {}
_WORKERS_LOCK = threading.Lock()
_TARGET: Any = None
"""In a child: the object its methods are called on."""


class RecognizerWorkerError(VoiceHitlError, RuntimeError):
    """A recogniser's worker process died (the next call starts a new one)."""


def _start_target(factory: Callable[[], Any]) -> None:
    global _TARGET
    _TARGET = factory()


def _call_target(method: str, args: tuple[Any, ...]) -> Any:
    return getattr(_TARGET, method)(*args)


def _worker(key: Hashable, factory: Callable[[], Any]) -> ProcessPoolExecutor:
    with _WORKERS_LOCK:
        pool = _WORKERS.get(key)
        if pool is None:
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_target,
                initargs=(factory,),
            )
            _WORKERS[key] = pool
        return pool


def _forget(key: Hashable, pool: ProcessPoolExecutor) -> None:
    with _WORKERS_LOCK:
        if _WORKERS.get(key) is pool:
            del _WORKERS[key]
    pool.shutdown(wait=False, cancel_futures=True)


async def call_in_worker(key: Hashable, factory: Callable[[], Any], method: str, *args: Any) -> Any:
    """Call ``method(*args)`` on the object ``factory()`` builds in the worker for ``key``.

    ``factory``, the arguments and the result must pickle (``factory`` at module level, or a
    ``functools.partial`` of a class).

    Raises:
        RecognizerWorkerError: the worker process died.
        Exception: whatever the method raised, re-raised here.

    Cancellation:
        Safe: the caller stops waiting at once; the child finishes the call and its result is
        discarded (a call still queued is dropped).
    """
    pool = _worker(key, factory)
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(pool, _call_target, method, args)
    except BrokenProcessPool as exc:
        _forget(key, pool)
        raise RecognizerWorkerError(f"the recogniser's worker process died ({exc})") from exc
