"""``voice-hitl webhooks dead`` and ``voice-hitl webhooks retry``: the service's dead letters.

A dead letter is a webhook event the service could not deliver after its retries (see
:mod:`voice_hitl.service._webhooks`); ``retry`` sends it again with the same event id.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["add_webhook_commands"]


def _dead(client: Any, args: argparse.Namespace) -> int:
    letters = client.dead_letters()
    if args.json:
        print(json.dumps(letters, indent=2))
    elif not letters:
        print("no dead letters")
    for letter in [] if args.json else letters:
        print(
            f"{letter['id']}  {letter['type']}  {letter['request_id']}  to {letter['subscription']}"
            f"  {letter['attempts']} attempt(s)  {letter['at']}  {letter['error']}"
        )
    return 0


def _retry(client: Any, args: argparse.Namespace) -> int:
    if (args.id is None) == (not args.all):
        print("voice-hitl: give one dead letter ID, or --all", file=sys.stderr)
        return 2
    retried = client.retry_dead(None if args.all else args.id)
    print(f"queued again: {len(retried)} ({', '.join(retried) or 'none'})")
    return 0


def add_webhook_commands(
    subparsers: Any,
    client_options: Callable[[argparse.ArgumentParser], None],
    run_client: Callable[[Callable[[Any, argparse.Namespace], int]], Callable[..., int]],
    epilog: str,
) -> None:
    """Register ``webhooks dead`` and ``webhooks retry`` (client commands like ``pending``)."""
    webhooks = subparsers.add_parser(
        "webhooks", help="the service's undelivered webhook events (dead letters)"
    )
    commands = webhooks.add_subparsers(dest="webhooks_command", required=True)
    dead = commands.add_parser("dead", help="list dead letters in your rooms", epilog=epilog)
    client_options(dead)
    dead.add_argument("--json", action="store_true", help="print JSON")
    dead.set_defaults(handler=run_client(_dead))
    retry = commands.add_parser(
        "retry", help="send dead letters again (same event id)", epilog=epilog
    )
    client_options(retry)
    retry.add_argument("id", nargs="?", help="the dead letter's id (from 'webhooks dead')")
    retry.add_argument("--all", action="store_true", help="every dead letter in your rooms")
    retry.set_defaults(handler=run_client(_retry))
