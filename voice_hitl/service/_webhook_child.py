"""The webhook delivery process: ``python -m voice_hitl.service._webhook_child``.

The service (:mod:`._webhook_process`) starts it. It reads frames (:mod:`._webhook_frames`)
on its stdin and writes them on its stdout (anything printed goes to stderr instead): first a
``config`` (receivers, retries, the answer-link key), then events, which its
:class:`~voice_hitl.service._webhook_worker.DeliveryCore` delivers. It lowers its priority
(``nice``) so it yields the CPU to answers, and it ends when the service says ``close`` or its
stdin ends (the service is gone), after at most ``grace`` seconds of flushing. A frame that is
not the protocol's ends it with exit code 2 and the reason on stderr.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import sys
from typing import Any

from ._webhook_frames import FrameError, encode_frame, read_frame
from ._webhook_lane import Retries
from ._webhook_wire import WebhookSubscription
from ._webhook_worker import DeliveryCore, Emit, LinkMaker

__all__ = ["main"]

logger = logging.getLogger("voice_hitl.service.webhooks")


def _core_from(config: dict[str, Any], emit: Emit) -> DeliveryCore:
    """The core the service's ``config`` frame describes.

    Raises:
        FrameError: The config is not the service's.
    """
    try:
        subscriptions = [WebhookSubscription(str(n), str(u), str(s)) for n, u, s in config["subs"]]
        attempts, backoff, max_backoff, timeout = config["retries"]
        links: LinkMaker | None = None
        if config.get("links") is not None:
            from ._links import AnswerLinks

            made = config["links"]
            answer_links = AnswerLinks(
                base64.b64decode(made["key"]), str(made["base_url"]), ttl=float(made["ttl"])
            )
            links = answer_links.for_request
        return DeliveryCore(
            subscriptions,
            Retries(int(attempts), float(backoff), float(max_backoff), float(timeout)),
            concurrency=int(config["concurrency"]),
            links=links,
            emit=emit,
            flush=float(config["flush"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise FrameError(f"a config the delivery process cannot use: {exc!r}") from None


async def _serve(out: int) -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    def emit(message: dict[str, Any]) -> None:
        writer.write(encode_frame(message))

    config = await read_frame(reader)
    if config is None or config["t"] != "config":
        raise FrameError(f"the first frame must be a config, not {config!r:.80}")
    if int(config.get("nice") or 0):
        os.nice(int(config["nice"]))
    core = _core_from(config, emit)
    core.start()
    emit({"t": "ready", "pid": os.getpid()})
    grace = float(config.get("grace") or 5.0)
    try:
        while (message := await read_frame(reader)) is not None:
            if message["t"] == "e":
                core.take(int(message["s"]), message["ev"], message["l"])
            elif message["t"] == "close":
                grace = float(message.get("grace", grace))
                break
            else:
                raise FrameError(f"an unknown message type {message['t']!r}")
    finally:
        left = await core.aclose(grace)
        with contextlib.suppress(ConnectionError):  # the service may be gone already
            emit({"t": "closed", "left": left})
            await writer.drain()
            writer.close()
    return 0


def main() -> int:
    """Run the delivery process (the service starts it; its stdin and stdout are the pipe)."""
    out = os.dup(1)
    os.dup2(2, 1)  # a stray print goes to stderr, never into the pipe
    sys.stdout = sys.stderr
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="voice-hitl webhook process: %(message)s"
    )
    try:
        return asyncio.run(_serve(out))
    except FrameError as exc:
        logger.error("%s; stopping", exc)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
