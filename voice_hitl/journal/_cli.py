"""``voice-hitl journal list|show|verify|export``: read a journal file from a terminal."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._usage import HelpFormatter, UsageError, require_packages
from ._entry import JournalEntry, verify_chain
from ._journal import JournalStore
from ._sqlite import SqliteJournalStore

__all__ = ["add_journal_command"]

KEY_ENV = "VOICE_HITL_JOURNAL_KEY"


def add_journal_command(subparsers: Any) -> None:
    """Register ``voice-hitl journal`` on the top-level parser's sub-commands."""
    journal = subparsers.add_parser(
        "journal",
        help="read a journal of human-input requests",
        description="List, show, verify or export a journal of human-input requests.",
        formatter_class=HelpFormatter,
    )
    actions = journal.add_subparsers(dest="action", metavar="ACTION", required=True)
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_mutually_exclusive_group(required=True)
    where.add_argument("--journal", help="the journal file (SQLite)")
    where.add_argument("--redis", metavar="URL", help="the journal on Redis (redis://host:port/db)")
    common.add_argument(
        "--prefix", default=None, help="--redis: the journal's key prefix (voice-hitl:journal)"
    )
    listing = actions.add_parser(
        "list", parents=[common], help="one line per request", formatter_class=HelpFormatter
    )
    for name in ("room", "tool", "actor", "outcome"):
        listing.add_argument(f"--{name}", help=f"only requests with this {name}")
    listing.add_argument("--since", help="only requests opened at or after (ISO 8601)")
    listing.add_argument("--until", help="only requests opened before (ISO 8601)")
    listing.set_defaults(handler=_list)
    show = actions.add_parser(
        "show", parents=[common], help="one request's story", formatter_class=HelpFormatter
    )
    show.add_argument("request_id", metavar="ID")
    show.set_defaults(handler=_show)
    verify = actions.add_parser(
        "verify",
        parents=[common],
        help="check the chain (exit 1 when an entry was edited or deleted)",
        formatter_class=HelpFormatter,
    )
    verify.add_argument(
        "--key-env", default=KEY_ENV, help="the environment variable holding the chain's key"
    )
    verify.set_defaults(handler=_verify)
    export = actions.add_parser(
        "export", parents=[common], help="every entry as JSON lines", formatter_class=HelpFormatter
    )
    export.add_argument("--out", help="write to this file instead of standard output")
    export.set_defaults(handler=_export)


def _store(args: argparse.Namespace) -> tuple[JournalStore, str]:
    """The journal the arguments name, and how to name it in messages."""
    if args.redis is not None:
        from ._redis import DEFAULT_PREFIX, RedisJournalStore

        require_packages("voice-hitl journal --redis", "redis", "redis")
        if not args.redis.startswith(("redis://", "rediss://", "unix://")):
            raise UsageError(f"--redis {args.redis}: not a redis:// URL")
        return RedisJournalStore(args.redis, prefix=args.prefix or DEFAULT_PREFIX), (
            f"--redis {args.redis}"
        )
    path = Path(args.journal)
    if not path.is_file():
        raise UsageError(f"--journal {args.journal}: no such file")
    return SqliteJournalStore(path), f"--journal {args.journal}"


def _entries(
    args: argparse.Namespace, request_id: str | None = None, *, head_check: bool = False
) -> tuple[list[JournalEntry], list[str]]:
    """The entries (all, or one request's) and, when asked, problems with the chain's head."""
    store, named = _store(args)
    try:
        entries = store.read(request_id)
        problems: list[str] = []
        head_problem = getattr(store, "head_problem", None)
        if head_check and head_problem is not None:
            problem = head_problem(entries)
            problems = [] if problem is None else [problem]
        return entries, problems
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"{named}: not a readable journal ({exc})") from None
    finally:
        store.close()


def _stories(entries: Iterable[JournalEntry]) -> dict[str, list[JournalEntry]]:
    stories: dict[str, list[JournalEntry]] = {}
    for entry in entries:
        if entry.request_id:
            stories.setdefault(entry.request_id, []).append(entry)
    return stories


def _summary(story: list[JournalEntry]) -> dict[str, Any]:
    opened = next((e for e in story if e.kind == "opened"), None)
    settled = next((e for e in story if e.kind == "settled"), None)
    head = dict(opened.data) if opened is not None else {}
    return {
        "id": story[0].request_id,
        "at": opened.at if opened is not None else story[0].at,
        "tool": head.get("tool", ""),
        "room": head.get("room", ""),
        "actor": head.get("actor") or "",
        "outcome": settled.data.get("outcome", "") if settled is not None else "open",
        "by": (settled.data.get("by") or "") if settled is not None else "",
        "via": (settled.data.get("via") or "") if settled is not None else "",
    }


def _list(args: argparse.Namespace) -> int:
    for story in _stories(_entries(args)[0]).values():
        row = _summary(story)
        if any(
            getattr(args, k) not in (None, row[k]) for k in ("room", "tool", "actor", "outcome")
        ):
            continue
        if (args.since and row["at"] < args.since) or (args.until and row["at"] >= args.until):
            continue
        who = f" by {row['by']}" if row["by"] else ""
        how = f" via {row['via']}" if row["via"] else ""
        where = f"room={row['room']}"
        print(f"{row['id']}  {row['at']}  {row['tool']}  {where}  {row['outcome']}{who}{how}")
    return 0


def _show(args: argparse.Namespace) -> int:
    story, _ = _entries(args, args.request_id)
    if not story:
        raise UsageError(f"no request {args.request_id!r} in {args.journal or args.redis}")
    for entry in story:
        data = dict(entry.data)
        lines = data.pop("context", {}).get("transcript", ()) if entry.kind == "opened" else ()
        print(f"{entry.at}  {entry.kind:<9} {json.dumps(data, sort_keys=True, default=str)}")
        for line in lines:
            print(f"{'':34}| {line.get('role')}: {line.get('text')}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    key = os.environ.get(args.key_env, "")
    if not key:
        raise UsageError(f"the chain's key is not set (environment variable {args.key_env})")
    entries, head_problems = _entries(args, head_check=True)
    problems = [*map(str, verify_chain(entries, key.encode())), *head_problems]
    for problem in problems:
        print(f"voice-hitl journal verify: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"chain intact: {len(entries)} entries")
    return 0


def _export(args: argparse.Namespace) -> int:
    entries, _ = _entries(args)
    lines = "".join(json.dumps(e.to_json(), default=str) + "\n" for e in entries)
    if args.out is None:
        sys.stdout.write(lines)
    else:
        try:
            Path(args.out).write_text(lines)
        except OSError as exc:
            raise UsageError(f"--out {args.out}: {exc.strerror or exc}") from None
    return 0
