"""``voice-hitl serve``, ``pending``, ``answer`` and ``reject`` (extra ``server``).

The client commands take the service URL and the operator token from ``--url`` / ``--token``
or ``VOICE_HITL_URL`` / ``VOICE_HITL_TOKEN``. Errors are one line on stderr; the exit code says
what happened (see :data:`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .._usage import require_packages

__all__ = ["EXIT_CODES", "add_operator_commands"]

EXIT_OK, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND, EXIT_SETTLED, EXIT_INVALID, EXIT_DOWN = (
    0,
    2,
    3,
    4,
    5,
    6,
    7,
)
EXIT_BEING_ANSWERED = 8
EXIT_CODES = {
    EXIT_OK: "done",
    EXIT_USAGE: "bad usage or configuration",
    EXIT_AUTH: "no valid token (401/403)",
    EXIT_NOT_FOUND: "no such request, or none you may see (404)",
    EXIT_SETTLED: "already answered, rejected, timed out, withdrawn or abandoned (409)",
    EXIT_INVALID: "the answer or reason does not fit (422, 400, 413)",
    EXIT_DOWN: (
        "the service or its board cannot be reached, or the call did not take the answer in "
        "time (503/504; retry with --idempotency-key)"
    ),
    EXIT_BEING_ANSWERED: (
        "another operator's answer is waiting for the call to take it (409 being_answered; "
        "the message says who and until when; after that it is settled or open again)"
    ),
}
_BY_STATUS = {401: EXIT_AUTH, 403: EXIT_AUTH, 404: EXIT_NOT_FOUND, 409: EXIT_SETTLED}
_EPILOG = "exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items())

DEFAULT_URL = "http://127.0.0.1:8765"


def _fail(message: str, code: int) -> int:
    print(f"voice-hitl: {message}", file=sys.stderr)
    return code


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", default=None, help=f"the service (default: $VOICE_HITL_URL or {DEFAULT_URL})"
    )
    parser.add_argument("--token", default=None, help="your token (default: $VOICE_HITL_TOKEN)")


def _connect(args: argparse.Namespace) -> Any:
    from ._client import OperatorClient

    url = args.url or os.environ.get("VOICE_HITL_URL") or DEFAULT_URL
    token = args.token or os.environ.get("VOICE_HITL_TOKEN")
    if not token:
        raise _UsageError("no token: pass --token or set VOICE_HITL_TOKEN")
    return OperatorClient(url, token)


class _UsageError(Exception):
    pass


def _run_client(action: Callable[[Any, argparse.Namespace], int]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        require_packages(f"voice-hitl {args.command}", "httpx websockets")
        from ._client import ClientError

        try:
            with _connect(args) as client:
                return action(client, args)
        except _UsageError as exc:
            return _fail(str(exc), EXIT_USAGE)
        except ClientError as exc:
            if exc.status == 0 or exc.status >= 500:
                return _fail(exc.message, EXIT_DOWN)
            if exc.code == "being_answered":
                return _fail(f"{exc.message} ({exc.status})", EXIT_BEING_ANSWERED)
            return _fail(f"{exc.message} ({exc.status})", _BY_STATUS.get(exc.status, EXIT_INVALID))

    return run


def _when(iso: str | None) -> str:
    if not iso:
        return "no deadline"
    left = datetime.fromisoformat(iso).timestamp() - time.time()
    if left <= 0:
        return "overdue"
    minutes, seconds = divmod(int(left), 60)
    return f"due in {minutes}m{seconds:02d}s" if minutes else f"due in {seconds}s"


def describe(request: dict[str, Any]) -> str:
    """One line for a request: id, tool, where, who, deadline, question, what fits."""
    spec = request.get("spec") or {}
    arguments = request.get("arguments") or {}
    question = spec.get("question") or arguments.get("question") or arguments.get("action") or ""
    kind = spec.get("kind", "free_text")
    if spec.get("choices"):
        fits = " | ".join(c["id"] for c in spec["choices"])
    elif kind == "number":
        fits = f"number in [{spec.get('minimum')}, {spec.get('maximum')}]"
    elif kind == "digits":
        fits = f"{spec.get('length') or 'any number of'} digits"
    else:
        fits = "text"
    where = f"{request.get('room') or '-'}/{request.get('channel') or '-'}"
    addressed = list(request.get("addressed") or []) + list(request.get("approvers") or [])
    to = f" to {','.join(addressed)}" if addressed else ""
    return (
        f"{request['id']}  {request['tool']}  {where}  {request.get('actor') or '-'}{to}  "
        f"{_when(request.get('deadline'))}  {json.dumps(question)}  [{fits}]"
    )


def _pending(client: Any, args: argparse.Namespace) -> int:
    filters = {"room": args.room, "channel": args.channel, "tool": args.tool, "for_": args.for_}
    requests = client.list(**filters)
    if args.json:
        print(json.dumps(requests, indent=None if args.watch else 2))
    else:
        for request in requests:
            print(describe(request))
        if not requests and not args.watch:
            print("no open requests")
    sys.stdout.flush()
    if args.watch:
        return _watch(client, args)
    return EXIT_OK


def _watch(client: Any, args: argparse.Namespace) -> int:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    url = client.url.replace("http", "ws", 1) + "/v1/feed"
    token = client._http.headers["Authorization"]
    try:
        with connect(url, additional_headers={"Authorization": token}) as socket:
            for text in socket:
                message = json.loads(text)
                method = message.get("method")
                if method == "requests.snapshot" and not args.json:
                    print("# watching the live feed (Ctrl-C to stop)", flush=True)
                if method == "requests.snapshot" or method is None:
                    continue
                request = message["params"]["request"]
                if args.json:
                    print(json.dumps(message), flush=True)
                elif method == "request.opened":
                    print("+ " + describe(request), flush=True)
                else:
                    settled = request["settled"]
                    by = f" by {settled['by']}" if settled.get("by") else ""
                    print(f"- {request['id']}  {settled['status']}{by}", flush=True)
    except KeyboardInterrupt:
        return EXIT_OK
    except InvalidStatus as exc:
        return _fail(f"the feed refused the token ({exc.response.status_code})", EXIT_AUTH)
    except (OSError, ConnectionClosed) as exc:
        return _fail(f"lost the feed: {exc}", EXIT_DOWN)
    return EXIT_OK


class _NotANumber(ValueError):
    """A JSON value Python reads as a float but JSON has no number for (NaN, Infinity)."""


def _no_constant(name: str) -> Any:
    raise _NotANumber(f"not JSON: {name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotANumber(f"out of range: {text} does not fit a JSON number")
    return number


def _answer(client: Any, args: argparse.Namespace) -> int:
    value: Any = args.value
    if args.json:
        try:
            value = json.loads(args.value, parse_constant=_no_constant, parse_float=_finite)
        except ValueError as exc:
            why = str(exc) if isinstance(exc, _NotANumber) else "not JSON"
            return _fail(f"--json: {args.value!r} is {why}", EXIT_USAGE)
    settled = client.answer(args.id, value, idempotency_key=args.idempotency_key)
    print(f"{settled['id']}: answered by {settled['settled']['by']}")
    return EXIT_OK


def _reject(client: Any, args: argparse.Namespace) -> int:
    settled = client.reject(args.id, args.reason, idempotency_key=args.idempotency_key)
    print(f"{settled['id']}: rejected by {settled['settled']['by']}")
    return EXIT_OK


def _key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--idempotency-key",
        metavar="KEY",
        default=None,
        help=(
            "make it once: running the command again with the same KEY (after exit 7, or a "
            "timeout) prints the first attempt's outcome instead of answering twice"
        ),
    )


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: use 0-65535")
    return port


def _seconds_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number of seconds from ``low`` to ``high`` (so no nan or inf)."""

    def seconds(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{text} is out of range: use {low:g} to {high:g} seconds"
            )
        return value

    return seconds


# 0 would sweep in a busy loop; inf (or nan) would never mark dead workers' requests.
_sweep_seconds = _seconds_between(0.02, 3600)
_ack_seconds = _seconds_between(0.05, 60)


def _serve(args: argparse.Namespace) -> int:
    require_packages("voice-hitl serve", "starlette uvicorn redis")
    from ._serve import serve_forever

    return serve_forever(args)


def add_operator_commands(subparsers: Any) -> None:
    """Register ``serve``, ``pending``, ``answer`` and ``reject``."""
    serve = subparsers.add_parser(
        "serve",
        help="run the operator service: API, live feed and console (extras 'server', 'redis')",
        epilog="Operators come from --operators FILE or $VOICE_HITL_OPERATORS (JSON).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=_port, default=8765, help="port to listen on (0-65535)")
    serve.add_argument(
        "--redis",
        default=None,
        help="the board's Redis (default: $VOICE_HITL_REDIS_URL or redis://127.0.0.1:6379/0);"
        " also redis+cluster://h:p[,h:p] and redis+sentinel://h:p[,h:p]/service[/db]",
    )
    serve.add_argument("--prefix", default="voice-hitl:", help="the board's Redis key prefix")
    serve.add_argument(
        "--min-replicas",
        type=int,
        default=0,
        help="replicas that must hold an answer before it is reported taken (Redis WAIT;"
        " default 0: a single server)",
    )
    serve.add_argument("--operators", default=None, help="operators JSON file (tokens, scopes)")
    serve.add_argument(
        "--heartbeat",
        type=_sweep_seconds,
        default=2.0,
        help="abandoned-request sweeps happen every HEARTBEAT/2 seconds (0.02-3600)",
    )
    serve.add_argument(
        "--ack-timeout",
        type=_ack_seconds,
        default=3.0,
        help=(
            "seconds a worker has to take an operator's answer before the answer is refused "
            "as not taken (0.05-60; default %(default)s)"
        ),
    )
    journal = serve.add_mutually_exclusive_group()
    journal.add_argument(
        "--journal",
        default="voice-hitl-journal.sqlite3",
        metavar="FILE",
        help=(
            "journal every board event in this SQLite file (default: %(default)s; chain key "
            "from $VOICE_HITL_JOURNAL_KEY, else generated into FILE.key)"
        ),
    )
    journal.add_argument(
        "--journal-redis",
        action="store_true",
        help=(
            "journal on the board's Redis (stream under PREFIX + 'journal', where workers can "
            "journal too; key from $VOICE_HITL_JOURNAL_KEY)"
        ),
    )
    journal.add_argument("--no-journal", action="store_true", help="keep no journal")
    serve.add_argument(
        "--journal-durability",
        choices=("fast", "sync"),
        default="fast",
        help=(
            "fast (default): journal entries are queued and written in batches, a crash loses "
            "the last ~10 ms; sync: each operator answer or rejection is stored (SQLite "
            "synchronous=FULL) before the call can take it, and refused with 503 not_recorded "
            "when the journal cannot store it within 10 s"
        ),
    )
    serve.add_argument(
        "--webhooks",
        default=None,
        metavar="FILE",
        help=(
            "POST request events to the receivers in FILE "
            '({"webhooks": [...]}, see docs/guides/webhooks.md)'
        ),
    )
    serve.add_argument(
        "--public-url",
        default=None,
        help="the service's URL as link readers reach it (default: http://HOST:PORT)",
    )
    serve.add_argument(
        "--link-ttl",
        type=float,
        default=900.0,
        help="seconds an answer link stays valid (key from $VOICE_HITL_LINK_KEY, else random)",
    )
    serve.set_defaults(handler=_serve)

    pending = subparsers.add_parser(
        "pending", help="list open requests (--watch: follow them live)", epilog=_EPILOG
    )
    _client_options(pending)
    pending.add_argument("--watch", action="store_true", help="keep following the live feed")
    pending.add_argument("--json", action="store_true", help="print JSON")
    pending.add_argument("--room", help="only this room")
    pending.add_argument("--channel", help="only this channel")
    pending.add_argument("--tool", help="only this tool")
    pending.add_argument("--for", dest="for_", help="addressed to this person (or to anyone)")
    pending.set_defaults(handler=_run_client(_pending))

    answer = subparsers.add_parser(
        "answer",
        help="answer a request: a choice id or label, yes/no, a number, digits or text",
        epilog=_EPILOG,
    )
    _client_options(answer)
    answer.add_argument("id", help="the request id")
    answer.add_argument("value", help="the answer")
    answer.add_argument("--json", action="store_true", help="VALUE is JSON (e.g. true, 500)")
    _key_option(answer)
    answer.set_defaults(handler=_run_client(_answer))

    reject = subparsers.add_parser(
        "reject", help="reject a request with a reason the model reads", epilog=_EPILOG
    )
    _client_options(reject)
    reject.add_argument("id", help="the request id")
    reject.add_argument("reason", help="why")
    _key_option(reject)
    reject.set_defaults(handler=_run_client(_reject))

    from ._cli_operators import add_operators_command
    from ._cli_webhooks import add_webhook_commands

    add_webhook_commands(subparsers, _client_options, _run_client, _EPILOG)
    add_operators_command(subparsers)
