"""Runtimes that run their own tools: ``ExternalToolHandler`` and ``ToolDecision``.

A provider that executes tools inside its own runtime (a sandboxed coding agent, say) asks the
channel for a decision on each pending call to a tool the channel does not serve. The handler
decides (:meth:`ExternalToolHandler.process_tool_call`); a refusal comes back to it through
:meth:`~ExternalToolHandler.on_tool_refused`, a call the turn cut through
:meth:`~ExternalToolHandler.on_tool_cancelled`. The defaults report the call to
``ON_TOOL_CALL`` observers, once; an override calls ``super()`` to keep that report.

Keyword arguments reach a method only when its signature takes them (by name, or through
``**kwargs``), so write overrides with ``**kwargs`` to receive what later versions add.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..tools._calls import ToolOutcome

if TYPE_CHECKING:
    from ..tools._gate import ToolGate

__all__ = [
    "ExternalToolHandler",
    "Reporter",
    "ToolDecision",
    "call_accepting",
    "current_gate",
    "external_report",
]

logger = logging.getLogger("voice_hitl.ai")


@dataclass(frozen=True, slots=True)
class ToolDecision:
    """What an :class:`ExternalToolHandler` decided about one call.

    ``approved=True``: the runtime runs the tool itself. ``approved=False``: the runtime does
    not, and the model reads ``reason`` (which may carry a person's answer). ``detail`` says
    what failed when the refusal came from a failure; it reaches ``on_tool_refused(...,
    detail=...)`` and the report's ``error_detail``.
    """

    approved: bool
    reason: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        # A truthy non-bool ("no", 0.0 is falsy but "false" is not) must not approve a call.
        if not isinstance(self.approved, bool):
            raise TypeError(f"ToolDecision approved must be True or False, got {self.approved!r}")
        for name in ("reason", "detail"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"ToolDecision {name} must be str, got {type(value).__name__}")


Reporter = Callable[[ToolOutcome, str, str], Awaitable[None]]
"""Reports one call to ``ON_TOOL_CALL``, the first time only: ``(outcome, text the model
reads, error_detail)``."""

_REPORTER: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "voice_hitl_external_reporter", default=None
)
_GATE: contextvars.ContextVar[ToolGate | None] = contextvars.ContextVar(
    "voice_hitl_external_gate", default=None
)


@contextlib.contextmanager
def external_report(reporter: Reporter, gate: ToolGate | None = None) -> Iterator[None]:
    """Make ``reporter`` the one the default ``on_tool_*`` methods use for the block, and
    ``gate`` (the channel's) the one :func:`current_gate` gives."""
    token = _REPORTER.set(reporter)
    gate_token = _GATE.set(gate)
    try:
        yield
    finally:
        _GATE.reset(gate_token)
        _REPORTER.reset(token)


def current_gate() -> ToolGate | None:
    """The gate of the channel whose tool loop is asking the external handler, or None
    outside one (what :class:`~voice_hitl.PolicyExternalToolHandler` applies the hooks of)."""
    return _GATE.get()


async def _report(outcome: ToolOutcome, text: str, detail: str) -> None:
    reporter = _REPORTER.get()
    if reporter is None:
        logger.debug("external tool call reported outside a channel's tool loop: ignored")
        return
    await reporter(outcome, text, detail)


def call_accepting(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments its signature takes (all, with ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read: pass everything
        return fn(*args, **kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return fn(*args, **kwargs)
    names = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return fn(*args, **{k: v for k, v in kwargs.items() if k in names})


class ExternalToolHandler:
    """Decides on the calls a runtime runs itself; subclass and override
    :meth:`process_tool_call`.

    Give it to an ``AIChannel`` as ``tool_handler=``: a pending call to a tool the channel
    does not serve comes here; the channel's own tools (its ``tools=`` and human-input tools)
    stay served through its gate. A call approved here still needs the person's yes its
    approval rules ask for (``kit.require_approval``) before the runtime is told to run it;
    :class:`~voice_hitl.PolicyExternalToolHandler` also applies the ``BEFORE_TOOL_USE`` hooks.
    """

    async def process_tool_call(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        *,
        room_id: str | None = None,
        **kwargs: Any,
    ) -> ToolDecision:
        """Decide on one call. The default approves it.

        Keyword arguments: ``room_id``, ``tool_call_id``, ``channel_id``, ``actor_id``.

        Cancellation: the turn was cancelled; the channel then calls :meth:`on_tool_cancelled`.
        """
        return ToolDecision(approved=True)

    async def on_tool_cancelled(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        *,
        tool_call_id: str = "",
        room_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        """A call the turn cut: while :meth:`process_tool_call` waited, or before it was
        asked. The default reports it ``cancelled`` to ``ON_TOOL_CALL`` observers, once.

        It runs in the turn's teardown: keep it short (withdraw what the person was shown,
        then ``await super().on_tool_cancelled(...)`` to keep the report).

        Cancellation: safe; observers not yet run do not run.
        """
        reason = str(kwargs.get("reason", "the turn was cancelled"))
        await _report("cancelled", json.dumps({"error": reason}), reason)

    async def on_tool_refused(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        reason: str,
        *,
        tool_call_id: str = "",
        room_id: str | None = None,
        detail: str = "",
        **kwargs: Any,
    ) -> None:
        """A call :meth:`process_tool_call` refused. The default reports it ``refused`` to
        ``ON_TOOL_CALL`` observers, with ``detail`` as the report's ``error_detail``.

        Cancellation: safe; observers not yet run do not run.
        """
        await _report("refused", reason, detail)  # what the model reads: the reason itself
