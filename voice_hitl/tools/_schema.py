"""Tool arguments: parsing JSON text and validating against the tool's JSON Schema.

jsonschema loads with the first validator (the first toolset a gate checks), not on import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._edge import (
    MAX_ARGUMENT_BYTES,
    MAX_ARGUMENT_NUMBER,
    MAX_DEPTH,
    EdgeError,
    check_text,
    check_value,
)
from .._exceptions import ToolArgumentsError

if TYPE_CHECKING:
    from ._tools import AITool

__all__ = ["ArgumentValidator", "parse_arguments"]


def parse_arguments(tool_name: str, raw: str | Mapping[str, Any]) -> dict[str, Any]:
    """Turn a call's arguments (JSON text or a mapping) into a dict.

    Whatever the door, the arguments pass the edge check (:mod:`voice_hitl._edge`): at most
    1 MiB of text, nested at most 32 levels, no lone surrogate, every number finite and
    within ±2**53 (``NaN``, ``Infinity``, ``1e400`` and ``10**30`` are refused, naming the
    argument, before any question is asked or handler runs).

    Raises:
        ToolArgumentsError: The text is not JSON, not a JSON object, or refused at the edge.
    """
    what = "the arguments"
    try:
        if isinstance(raw, Mapping):
            check_value(
                raw, what=what, max_items=MAX_ARGUMENT_BYTES, max_number=MAX_ARGUMENT_NUMBER
            )
            return dict(raw)
        text = check_text(raw.strip() or "{}", what=what, max_bytes=MAX_ARGUMENT_BYTES)
    except EdgeError as exc:
        raise ToolArgumentsError(
            f"Invalid arguments for tool {tool_name!r}: refused: {exc.message}"
        ) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolArgumentsError(
            f"Invalid arguments for tool {tool_name!r}: not valid JSON ({exc.msg} at "
            f"line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:  # an integer literal past the interpreter's digit limit
        raise ToolArgumentsError(
            f"Invalid arguments for tool {tool_name!r}: refused: a number too large ({exc})"
        ) from None
    if not isinstance(value, dict):
        raise ToolArgumentsError(
            f"Invalid arguments for tool {tool_name!r}: expected a JSON object, "
            f"got {type(value).__name__}"
        )
    try:
        check_value(
            value,
            what=what,
            max_depth=MAX_DEPTH,
            max_items=MAX_ARGUMENT_BYTES,
            max_number=MAX_ARGUMENT_NUMBER,
        )
    except EdgeError as exc:
        raise ToolArgumentsError(
            f"Invalid arguments for tool {tool_name!r}: refused: {exc.message}"
        ) from None
    return value


class ArgumentValidator:
    """Validates arguments against one tool's JSON Schema (compiled once).

    Raises:
        ToolArgumentsError: At construction, when the schema itself is invalid.
    """

    def __init__(self, tool: AITool) -> None:
        import jsonschema
        from jsonschema.exceptions import best_match

        self._best_match = best_match
        self.tool_name = tool.name
        cls = jsonschema.validators.validator_for(tool.parameters)
        try:
            cls.check_schema(tool.parameters)
        except jsonschema.SchemaError as exc:
            raise ToolArgumentsError(
                f"Tool {tool.name!r} has an invalid JSON Schema: {exc.message}"
            ) from None
        self._validator = cls(tool.parameters)

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Check ``arguments``; the error names the offending field.

        Raises:
            ToolArgumentsError: The arguments do not match the schema.
        """
        error = self._best_match(self._validator.iter_errors(dict(arguments)))
        if error is None:
            return
        where = "/".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties":
            field = "an undeclared field"
        elif where:
            field = f"field {where!r}"
        else:
            field = "the arguments"
        raise ToolArgumentsError(
            f"Invalid arguments for tool {self.tool_name!r}: {field}: {error.message}"
        )
