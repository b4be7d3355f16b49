"""The one check at the edge for text-shaped input from a model, a caller or an operator.

Whatever enters from outside (tool-call arguments a model sends, an HTTP body, a live-feed
message, an answer or a reason an operator types) is checked here once, with the same limits
everywhere:

- valid UTF-8, and no lone surrogate (``"\\ud800"``): such a string cannot be written to Redis,
  rendered as UTF-8 JSON or stored in a journal, so one of them could otherwise break a worker's
  board publisher or every listing;
- JSON nested at most :data:`MAX_DEPTH` levels (deeper input would exhaust the interpreter's
  recursion in the JSON decoder, the schema validator or a renderer);
- at most :data:`MAX_BYTES` bytes of JSON text (a message or a body) and at most
  :data:`MAX_ITEMS` values in one document;
- finite numbers only (``NaN`` and ``Infinity`` are not JSON, though Python's decoder takes
  them); a tool call's arguments also stay within :data:`MAX_ARGUMENT_NUMBER`.

:func:`check_value` checks a decoded value, :func:`load_json` decodes and checks text,
:func:`scrub` makes a value safe to show when it did not come through the edge (lone surrogates
become U+FFFD). Refusals are :class:`EdgeError` with a message that names what is wrong and
where.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ._exceptions import VoiceHitlError

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_ARGUMENT_NUMBER",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "EdgeError",
    "check_text",
    "check_value",
    "load_json",
    "scrub",
]

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays accepted."""

MAX_BYTES = 64 * 1024
"""Largest JSON text accepted (an HTTP body, a feed message, a tool call's arguments)."""

MAX_ITEMS = 10_000
"""Most values (strings, numbers, containers...) in one document."""

MAX_ARGUMENT_BYTES = 1024 * 1024
"""Largest tool-call arguments accepted from a model (host tools may take bulky input; the
depth limit and the surrogate check are the same as everywhere)."""

MAX_ARGUMENT_NUMBER = 2**53
"""Largest magnitude of a number in a tool call's arguments: every integer up to it has one
exact JSON form on every parser, so an approval bound to the arguments means one amount."""


class EdgeError(VoiceHitlError, ValueError):
    """Input refused at the edge; the message says what is wrong and where.

    ``code`` says which rule: ``too_large`` (HTTP answers 413), ``not_json`` (the text does
    not parse), ``invalid`` (a lone surrogate, bad UTF-8, nesting too deep).
    """

    def __init__(self, message: str, *, code: str = "invalid") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _where(path: list[str]) -> str:
    return "/".join(path) if path else "the top level"


def check_value(
    value: Any,
    *,
    what: str = "the input",
    max_depth: int = MAX_DEPTH,
    max_items: int = MAX_ITEMS,
    max_number: float = math.inf,
) -> None:
    """Check a decoded JSON-shaped value (iteratively: any depth is safe to check).

    Args:
        value: Strings, numbers, booleans, None, and mappings / lists / tuples of them.
        what: Names the input in the message (``"the arguments"``, ``"the answer"``...).
        max_depth: The deepest nesting accepted.
        max_items: The most values accepted.
        max_number: The largest magnitude of a number accepted.

    Raises:
        EdgeError: A lone surrogate in a string or a key, nesting too deep, too many values,
            a number that is not finite or larger than ``max_number``.
    """
    stack: list[tuple[Any, int, list[str]]] = [(value, 0, [])]
    count = 0
    while stack:
        item, depth, path = stack.pop()
        count += 1
        if count > max_items:
            raise EdgeError(f"{what} holds more than {max_items} values", code="too_large")
        if isinstance(item, str):
            _check_text(item, what, path)
        elif isinstance(item, float | int) and not isinstance(item, bool):
            _check_number(item, what, path, max_number)
        elif isinstance(item, Mapping | list | tuple):
            if depth >= max_depth:
                raise EdgeError(
                    f"{what} is nested deeper than {max_depth} levels (at {_where(path)})"
                )
            if isinstance(item, Mapping):
                for key, child in item.items():
                    if isinstance(key, str):
                        _check_text(key, what, [*path, "<key>"])
                    stack.append((child, depth + 1, [*path, str(key)[:40]]))
            else:
                for index, child in enumerate(item):
                    stack.append((child, depth + 1, [*path, str(index)]))


def _check_number(number: float, what: str, path: list[str], largest: float) -> None:
    if isinstance(number, float) and not math.isfinite(number):
        raise EdgeError(
            f"{what} holds a number that is not finite ({number!r}) at {_where(path)}; "
            "give a finite number"
        )
    if abs(number) > largest:
        shown = f"{number:.3g}" if isinstance(number, float) else f"{number.bit_length()} bits"
        raise EdgeError(
            f"{what} holds a number too large ({shown}) at {_where(path)}; "
            f"numbers must be within ±{largest:.0f}"
        )


def _check_text(text: str, what: str, path: list[str]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise EdgeError(
            f"{what} holds a lone surrogate (U+{code:04X}) at {_where(path)}; "
            "text must be valid Unicode"
        ) from None


def _nesting(text: str, max_depth: int) -> int | None:
    """Where the nesting first goes past ``max_depth`` (outside strings), or None."""
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return index
        elif char in "]}":
            depth -= 1
    return None


def check_text(
    text: str | bytes,
    *,
    what: str = "the input",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> str:
    """Check JSON text before decoding it: size, UTF-8, nesting (a linear scan).

    Returns:
        The text as ``str``.

    Raises:
        EdgeError: Over ``max_bytes`` (``too_large``), not UTF-8, nested deeper than
            ``max_depth``.
    """
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise EdgeError(f"{what} is {size} bytes; the limit is {max_bytes}", code="too_large")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EdgeError(f"{what} is not valid UTF-8 (byte {exc.start})") from None
    deep = _nesting(text, max_depth)
    if deep is not None:
        raise EdgeError(f"{what} is nested deeper than {max_depth} levels (at character {deep})")
    return text


def load_json(text: str | bytes, *, what: str = "the input", max_bytes: int = MAX_BYTES) -> Any:
    """Decode JSON text from outside and check it (:func:`check_text`, :func:`check_value`).

    Raises:
        EdgeError: Refused by :func:`check_text` or :func:`check_value`, or not JSON
            (``not_json``).
    """
    checked = check_text(text, what=what, max_bytes=max_bytes)
    try:
        value = json.loads(checked)
    except ValueError as exc:
        raise EdgeError(f"{what} is not JSON: {exc}", code="not_json") from None
    check_value(value, what=what)
    return value


def scrub(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD and nesting cut at
    ``max_depth`` (deeper containers become the string ``"…"``): safe to store and show.

    For values that did not come through :func:`check_value` (a handler used directly, a
    reason a program gave); values that did come through are returned equal.
    """
    if isinstance(value, str):
        return _scrub_text(value)
    if max_depth <= 0 and isinstance(value, Mapping | list | tuple):
        return "…"
    if isinstance(value, Mapping):
        return {
            _scrub_text(key) if isinstance(key, str) else key: scrub(item, max_depth=max_depth - 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(item, max_depth=max_depth - 1) for item in value]
    return value


def _scrub_text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
    return text
