"""``voice-hitl journal list|show|verify|export``: read a journal from a terminal.

Every command opens the journal read-only (SQLite ``mode=ro``; on Redis only reads) and refuses
what is not a journal, by name. ``verify`` streams the journal (constant memory) and exits 0
when the chain and its anchor hold and every writer closed, 1 when the journal was changed (or
the key is wrong), 3 when it is intact but entries may be missing (a writer did not close, or
a ``gap``), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._usage import HelpFormatter, UsageError, require_packages
from ._anchor import FileAnchor, JournalAnchor
from ._entry import JournalEntry
from ._errors import NotAJournalError
from ._journal import default_anchor
from ._redis import RedisJournalStore
from ._sqlite import SqliteJournalStore
from ._verify import verify_journal

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
    listing.add_argument(
        "--since",
        type=_instant("--since"),
        help="only requests opened at or after (ISO 8601; no offset means UTC)",
    )
    listing.add_argument(
        "--until", type=_instant("--until"), help="only requests opened before (ISO 8601)"
    )
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
    verify.add_argument(
        "--anchor",
        metavar="FILE",
        help="the checkpoints file (default: FILE.anchor beside --journal; on --redis, the "
        "key PREFIX:anchor)",
    )
    verify.set_defaults(handler=_verify)
    export = actions.add_parser(
        "export", parents=[common], help="every entry as JSON lines", formatter_class=HelpFormatter
    )
    export.add_argument("--out", help="write to this file instead of standard output")
    export.set_defaults(handler=_export)


def _instant(flag: str) -> Any:
    """An argparse type: an ISO 8601 time as an aware instant (no offset: UTC)."""

    def parse(text: str) -> datetime:
        try:
            at = datetime.fromisoformat(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an ISO 8601 time (e.g. 2026-05-01, 2026-05-01T09:30, "
                "2026-05-01T09:30+01:00)"
            ) from None
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at

    parse.__name__ = flag  # argparse names the flag's type in its message
    return parse


def _at(text: str) -> datetime | None:
    """An entry's time as an instant (None when it is not a time)."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


def _store(args: argparse.Namespace) -> tuple[SqliteJournalStore | RedisJournalStore, str]:
    """The journal the arguments name, opened read-only, and how to name it in messages."""
    if args.redis is not None:
        from ._redis import DEFAULT_PREFIX

        require_packages("voice-hitl journal --redis", "redis", "redis")
        from .._redis_target import parse_target

        try:
            parse_target(args.redis)  # one server, redis+cluster:// or redis+sentinel://
        except ValueError as exc:
            raise UsageError(f"--redis {args.redis}: {exc}") from None
        store = RedisJournalStore(
            args.redis, prefix=args.prefix or DEFAULT_PREFIX, read_only=True
        )
        return store, f"--redis {args.redis}"
    path = Path(args.journal)
    if not path.is_file():
        raise UsageError(f"--journal {args.journal}: no such file")
    return SqliteJournalStore(path, read_only=True), f"--journal {args.journal}"


@contextlib.contextmanager
def _read_errors(named: str) -> Iterator[None]:
    """Turn what reading a journal raises into one usage line naming it."""
    try:
        yield
    except UsageError:
        raise
    except NotAJournalError as exc:  # a file's message starts with its path
        flag = named.split(" ", 1)[0] if named.startswith("--journal") else named + ":"
        raise UsageError(f"{flag} {exc}") from None
    except Exception as exc:
        raise UsageError(f"{named}: not a readable journal ({exc})") from None


def _entries(
    args: argparse.Namespace, request_id: str | None = None
) -> list[JournalEntry]:
    """The entries (all, or one request's)."""
    store, named = _store(args)
    try:
        with _read_errors(named):
            return store.read(request_id)
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
    for story in _stories(_entries(args)).values():
        row = _summary(story)
        if any(
            getattr(args, k) not in (None, row[k]) for k in ("room", "tool", "actor", "outcome")
        ):
            continue
        if args.since is not None or args.until is not None:
            at = _at(row["at"])
            if at is None or (args.since and at < args.since) or (args.until and at >= args.until):
                continue
        who = f" by {row['by']}" if row["by"] else ""
        how = f" via {row['via']}" if row["via"] else ""
        where = f"room={row['room']}"
        print(f"{row['id']}  {row['at']}  {row['tool']}  {where}  {row['outcome']}{who}{how}")
    return 0


def _show(args: argparse.Namespace) -> int:
    story = _entries(args, args.request_id)
    if not story:
        raise UsageError(f"no request {args.request_id!r} in {args.journal or args.redis}")
    for entry in story:
        data = dict(entry.data)
        lines = data.pop("context", {}).get("transcript", ()) if entry.kind == "opened" else ()
        print(f"{entry.at}  {entry.kind:<9} {json.dumps(data, sort_keys=True, default=str)}")
        for line in lines:
            print(f"{'':34}| {line.get('role')}: {line.get('text')}")
    return 0


def _anchor(args: argparse.Namespace, store: SqliteJournalStore | RedisJournalStore) -> Any:
    if args.anchor is not None:
        return FileAnchor(args.anchor, read_only=True)
    return default_anchor(store, read_only=True)


def _verify(args: argparse.Namespace) -> int:
    key = os.environ.get(args.key_env, "")
    if not key:
        raise UsageError(f"the chain's key is not set (environment variable {args.key_env})")
    store, named = _store(args)
    try:
        anchor: JournalAnchor | None = _anchor(args, store)
        head = store.head_problem if isinstance(store, RedisJournalStore) else None
        with _read_errors(named):
            entries: Iterator[JournalEntry] = store.iterate()
            verdict = verify_journal(entries, key.encode(), anchor=anchor, head_problem=head)
    finally:
        store.close()
    say = "voice-hitl journal verify:"
    for problem in verdict.problems:
        print(f"{say} {problem}", file=sys.stderr)
    if verdict.unlisted:
        print(f"{say} ... and {verdict.unlisted} more problems", file=sys.stderr)
    if verdict.problems:
        return 1
    for note in verdict.missing:
        print(f"{say} entries may be missing: {note}", file=sys.stderr)
    if verdict.missing:
        print(f"chain intact: {verdict.entries} entries, but entries may be missing (see above)")
        return 3
    print(f"chain intact: {verdict.entries} entries")
    return 0


def _export(args: argparse.Namespace) -> int:
    entries = _entries(args)
    lines = "".join(json.dumps(e.to_json(), default=str) + "\n" for e in entries)
    if args.out is None:
        sys.stdout.write(lines)
    else:
        try:
            Path(args.out).write_text(lines)
        except OSError as exc:
            raise UsageError(f"--out {args.out}: {exc.strerror or exc}") from None
    return 0
