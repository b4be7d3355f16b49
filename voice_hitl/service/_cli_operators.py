"""``voice-hitl operators add / rotate / revoke / list / migrate``: the operators file, edited.

Each command reads the file (``--operators FILE``), changes it and writes it back atomically
(a temporary file renamed over it, mode 0600). ``add`` and ``rotate`` make a random 256-bit
token, print it once and store only its SHA-256 digest (``token_sha256``). ``revoke`` removes
the operator. ``migrate`` replaces tokens stored in clear by their digests (the same tokens keep
working). A running ``voice-hitl serve`` rereads the file within a second or two: a rotated or
revoked token, and the console sessions opened with it, are refused from then on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["add_operators_command", "new_token"]

_TOKEN_PREFIX = "vho_"


def new_token() -> str:
    """A random operator token (256 bits; ``vho_`` marks it as one)."""
    return _TOKEN_PREFIX + secrets.token_urlsafe(32)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class _FileError(Exception):
    pass


def _read(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    from ._auth import OperatorsError, parse_operators

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return {"operators": []}
        raise _FileError(
            f"no operators file {path} (voice-hitl operators add NAME creates it)"
        ) from None
    except OSError as exc:
        raise _FileError(f"cannot read {path}: {exc.strerror}") from None
    try:
        parse_operators(text, str(path))
    except OperatorsError as exc:
        raise _FileError(str(exc)) from None
    raw: dict[str, Any] = json.loads(text)
    return raw


def _write(path: Path, raw: dict[str, Any]) -> None:
    text = json.dumps(raw, indent=2) + "\n"
    folder = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _entry(raw: dict[str, Any], name: str) -> dict[str, Any]:
    for entry in raw["operators"]:
        if entry.get("name", "").strip() == name:
            return entry  # type: ignore[no-any-return]
    raise _FileError(f"no operator {name!r} in the file")


def _scope(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError("give at least one name, or '*' for all")
    return items


def _add(args: argparse.Namespace, path: Path) -> str:
    raw = _read(path, missing_ok=True)
    if any(e.get("name", "").strip() == args.name for e in raw["operators"]):
        raise _FileError(f"operator {args.name!r} exists already (rotate or revoke it)")
    token = new_token()
    raw["operators"].append(
        {
            "name": args.name,
            "token_sha256": _digest(token),
            "rooms": args.rooms,
            "channels": args.channels,
        }
    )
    _write(path, raw)
    return f"operator {args.name} added; their token (shown once, not stored):\n{token}"


def _rotate(args: argparse.Namespace, path: Path) -> str:
    raw = _read(path)
    entry = _entry(raw, args.name)
    token = new_token()
    entry.pop("token", None)
    entry["token_sha256"] = _digest(token)
    _write(path, raw)
    return (
        f"operator {args.name}: new token (shown once, not stored); the old one and its "
        f"console sessions stop working:\n{token}"
    )


def _revoke(args: argparse.Namespace, path: Path) -> str:
    raw = _read(path)
    raw["operators"].remove(_entry(raw, args.name))
    if not raw["operators"]:
        raise _FileError("that is the last operator; a service needs one (add another first)")
    _write(path, raw)
    return f"operator {args.name} revoked: their token and console sessions stop working"


def _migrate(args: argparse.Namespace, path: Path) -> str:
    raw = _read(path)
    moved = []
    for entry in raw["operators"]:
        token = entry.pop("token", None)
        if isinstance(token, str):
            entry["token_sha256"] = _digest(token)
            moved.append(entry["name"])
    if not moved:
        return "no token in clear: nothing to migrate"
    _write(path, raw)
    return f"stored as digests (the same tokens keep working): {', '.join(moved)}"


def _list(args: argparse.Namespace, path: Path) -> str:
    lines = []
    for entry in _read(path)["operators"]:
        kept = "token in clear (deprecated)" if "token" in entry else "token hashed"
        rooms = ",".join(entry.get("rooms", ["*"]))
        channels = ",".join(entry.get("channels", ["*"]))
        lines.append(f"{entry['name']}  rooms {rooms}  channels {channels}  {kept}")
    return "\n".join(lines)


_ACTIONS = {"add": _add, "rotate": _rotate, "revoke": _revoke, "migrate": _migrate, "list": _list}


def _run(args: argparse.Namespace) -> int:
    path = Path(args.operators_file)
    try:
        print(_ACTIONS[args.action](args, path))
    except _FileError as exc:
        print(f"voice-hitl: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"voice-hitl: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def add_operators_command(subparsers: Any) -> None:
    """Register ``voice-hitl operators``."""
    operators = subparsers.add_parser(
        "operators",
        help="add, rotate, revoke or list the operators of an operators file",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    actions = operators.add_subparsers(dest="action", metavar="ACTION", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--operators",
        dest="operators_file",
        required=True,
        metavar="FILE",
        help="the operators file (as voice-hitl serve --operators)",
    )
    add = actions.add_parser("add", parents=[common], help="add an operator; prints the token")
    add.add_argument("name")
    add.add_argument("--rooms", type=_scope, default=["*"], help="rooms, comma-separated (*)")
    add.add_argument("--channels", type=_scope, default=["*"], help="channels (*: all)")
    rotate = actions.add_parser(
        "rotate", parents=[common], help="give an operator a new token; prints it"
    )
    rotate.add_argument("name")
    revoke = actions.add_parser("revoke", parents=[common], help="remove an operator")
    revoke.add_argument("name")
    actions.add_parser("list", parents=[common], help="the operators and their scopes")
    actions.add_parser(
        "migrate", parents=[common], help="store tokens kept in clear as their digests"
    )
    operators.set_defaults(handler=_run)
