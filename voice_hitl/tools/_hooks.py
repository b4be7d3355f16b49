"""Hooks: what they are, how they are registered, and the engine that runs them.

Sync hooks are awaited in priority order (lower number first), each within a budget; a block
stops the chain. Async hooks observe only: they run in tasks the engine owns, and
:meth:`HookEngine.aclose` cancels and awaits whatever is still running. A hook that fails —
raises anything (``CancelledError`` of its own included), overruns its budget, or returns
something that is neither a :class:`HookResult` nor None — fails open (logged) unless it was
registered ``fail_closed``, in which case it blocks.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._checks import positive_seconds
from .._types import ChannelType

if TYPE_CHECKING:
    from ._kit import VoiceKit

__all__ = [
    "Hook",
    "HookContext",
    "HookEngine",
    "HookExecution",
    "HookRegistration",
    "HookResult",
    "HookTrigger",
]

logger = logging.getLogger("voice_hitl.hooks")

E = TypeVar("E")

OBSERVER_TASKS = 8
"""How many tasks at most run the observations queued by :meth:`HookEngine.observe_nowait`."""

OBSERVE_SLICE = 8
"""How many queued observations one of those tasks runs before it yields to the loop."""


class HookTrigger(enum.StrEnum):
    """When a hook runs."""

    BEFORE_TOOL_USE = "before_tool_use"
    """Before a tool is served: may block, or replace the arguments."""
    ON_USER_INPUT_REQUIRED = "on_user_input_required"
    """A human-input request was created: notify the person; may deny."""
    ON_TOOL_CALL = "on_tool_call"
    """A tool call finished (any outcome): observe its ``ToolCallReport``."""
    ON_OPERATOR_REQUESTED = "on_operator_requested"
    """A person asked for an operator while a request was open: observe."""


class HookExecution(enum.StrEnum):
    """``SYNC`` hooks are awaited and can block; ``ASYNC`` hooks only observe."""

    SYNC = "sync"
    ASYNC = "async"


_EMPTY: Mapping[str, Any] = MappingProxyType({})
_ACTIONS = frozenset({"allow", "block", "modify"})


@dataclass(frozen=True, slots=True)
class HookResult:
    """What a sync hook decided. Return ``None`` from a hook to allow."""

    action: Literal["allow", "block", "modify"] = "allow"
    reason: str = ""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ValueError(
                f"HookResult action must be one of {sorted(_ACTIONS)}, got {self.action!r}"
            )
        if not isinstance(self.reason, str):
            raise TypeError(f"HookResult reason must be str, got {type(self.reason).__name__}")
        if not isinstance(self.metadata, Mapping):
            raise TypeError(
                f"HookResult metadata must be a mapping, got {type(self.metadata).__name__}"
            )

    @classmethod
    def allow(cls) -> HookResult:
        """Let the call go on."""
        return cls("allow")

    @classmethod
    def block(cls, reason: str = "") -> HookResult:
        """Stop the call; the model reads ``reason``."""
        return cls("block", reason)

    @classmethod
    def modify(cls, *, arguments: Mapping[str, Any] | None = None, **metadata: Any) -> HookResult:
        """Go on with changes; replacement tool arguments go under ``metadata["arguments"]``."""
        if arguments is not None:
            metadata["arguments"] = dict(arguments)
        return cls("modify", "", MappingProxyType(metadata))

    @property
    def blocked(self) -> bool:
        """True for a block."""
        return self.action == "block"


@dataclass(frozen=True, slots=True)
class HookContext:
    """Where a hook runs: the kit, the room and the channel."""

    kit: VoiceKit | None
    room_id: str
    channel_id: str
    channel_type: ChannelType


Hook = Callable[[Any, HookContext], Awaitable[HookResult | None]]
"""``async (event, ctx) -> HookResult | None`` (a plain function returning one works too)."""


@dataclass(frozen=True, slots=True)
class HookRegistration:
    """A registered hook and its options."""

    trigger: HookTrigger
    fn: Hook
    execution: HookExecution = HookExecution.SYNC
    priority: int = 0
    channel_types: frozenset[ChannelType] | None = None
    fail_closed: bool = False

    @property
    def name(self) -> str:
        """The hook function's qualified name, for logs."""
        return getattr(self.fn, "__qualname__", repr(self.fn))

    def applies_to(self, channel_type: ChannelType) -> bool:
        """True when the hook runs for this kind of channel."""
        return self.channel_types is None or channel_type in self.channel_types


class HookEngine:
    """Holds hook registrations and runs them.

    Args:
        hook_timeout: The budget of each sync hook, in seconds.

    Raises:
        ValueError: ``hook_timeout`` is not a finite number of seconds above zero (a zero or
            negative budget would fail every blocking hook open).
    """

    def __init__(self, *, hook_timeout: float = 30.0) -> None:
        self.hook_timeout = positive_seconds("hook_timeout", hook_timeout)
        self._hooks: dict[HookTrigger, list[HookRegistration]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._queued: deque[tuple[HookTrigger, object, HookContext]] = deque()
        self._observers: set[asyncio.Task[None]] = set()

    def register(self, registration: HookRegistration) -> None:
        """Add a hook; hooks of one trigger keep priority order (stable for ties)."""
        hooks = self._hooks.setdefault(registration.trigger, [])
        hooks.append(registration)
        hooks.sort(key=lambda r: r.priority)

    def _select(
        self, trigger: HookTrigger, channel_type: ChannelType, execution: HookExecution
    ) -> list[HookRegistration]:
        return [
            r
            for r in self._hooks.get(trigger, ())
            if r.execution is execution and r.applies_to(channel_type)
        ]

    async def run_sync(
        self,
        trigger: HookTrigger,
        event: E,
        ctx: HookContext,
        *,
        rewrite: Callable[[E, HookResult], E] | None = None,
        fail_closed: bool = False,
    ) -> tuple[HookResult, E]:
        """Run the sync hooks in order; also fire the async ones with the original event.

        Args:
            rewrite: Applies a ``modify`` result to the event (may raise to refuse it); later
                hooks see the rewritten event. Without it, ``modify`` acts as ``allow``.
            fail_closed: Treat every hook as registered ``fail_closed`` (a caller that must
                not go on when a check could not be made).

        Returns:
            The deciding result (a block, or allow) and the event as the hooks left it. A
            ``fail_closed`` hook that fails blocks, with what failed in ``metadata["detail"]``.

        Cancellation: safe; hooks not yet run do not run.
        """
        self.fire_async(trigger, event, ctx)
        for registration in self._select(trigger, ctx.channel_type, HookExecution.SYNC):
            result, failure, exc = await self._run_one(registration, event, ctx)
            if failure is not None:
                if registration.fail_closed or fail_closed:
                    logger.warning("%s; failing closed", failure, exc_info=exc)
                    detail = MappingProxyType({"detail": failure})
                    return HookResult("block", failure, detail), event
                logger.warning("%s; failing open", failure, exc_info=exc)
                continue
            if result is None or result.action == "allow":
                continue
            if result.action == "block":
                return result, event
            if rewrite is not None:
                event = rewrite(event, result)
        return HookResult.allow(), event

    async def _run_one(
        self, registration: HookRegistration, event: object, ctx: HookContext
    ) -> tuple[HookResult | None, str | None, BaseException | None]:
        """Run one sync hook within its budget: ``(result, None, None)``, or
        ``(None, what failed, the exception raised if any)``.

        Whatever the hook does (raise anything, overrun, return something that is not a
        :class:`HookResult` or None) ends here as a failure the caller applies its policy to;
        only a cancellation of the calling task goes through.
        """
        name = registration.name
        scope = asyncio.timeout(self.hook_timeout)
        try:
            async with scope:
                result: object = registration.fn(event, ctx)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError as exc:
            if scope.expired():
                return None, f"hook {name} overran its {self.hook_timeout:g}s budget", None
            return None, f"hook {name} raised TimeoutError: {exc}", exc
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # The hook raised CancelledError of its own: a failure, not our cancellation.
            return None, f"hook {name} raised CancelledError", exc
        except Exception as exc:
            return None, f"hook {name} raised {type(exc).__name__}: {exc}", exc
        if result is not None and not isinstance(result, HookResult):
            kind = type(result).__name__
            return None, f"hook {name} returned {kind}, not a HookResult or None", None
        return result, None, None

    async def observe(self, trigger: HookTrigger, event: object, ctx: HookContext) -> None:
        """Run observers: sync hooks awaited in order (results ignored), async ones fired.

        An observer that fails (raises, overruns, raises ``CancelledError`` of its own) is
        logged and the next one runs.

        Cancellation: safe; observers not yet run do not run.
        """
        self.fire_async(trigger, event, ctx)
        for registration in self._select(trigger, ctx.channel_type, HookExecution.SYNC):
            _, failure, exc = await self._run_one(registration, event, ctx)
            if failure is not None:
                logger.error("observer %s", failure, exc_info=exc)

    def observe_nowait(self, trigger: HookTrigger, event: object, ctx: HookContext) -> None:
        """Queue :meth:`observe` for a few worker tasks the engine owns (for teardown paths).

        Queued observations run in order, at most :data:`OBSERVER_TASKS` at a time, each
        worker yielding to the loop every :data:`OBSERVE_SLICE`, so withdrawing thousands of
        calls at once neither spawns a task per report nor holds the loop while their
        observers run.
        """
        self._queued.append((trigger, event, ctx))
        if len(self._observers) < OBSERVER_TASKS:
            task: asyncio.Task[None] = asyncio.ensure_future(self._observe_queued())
            task.set_name(f"observe-{trigger.value}")
            self._observers.add(task)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(self._observers.discard)

    async def _observe_queued(self) -> None:
        task = asyncio.current_task()
        try:
            run = 0
            while self._queued:
                trigger, event, ctx = self._queued.popleft()
                try:
                    await self.observe(trigger, event, ctx)
                except Exception:  # observe() logs hook failures itself: this is a bug
                    logger.exception("observing %s failed", trigger.value)
                run += 1
                if run % OBSERVE_SLICE == 0:
                    await asyncio.sleep(0)  # observers that never wait still share the loop
        finally:
            # Leave the pool before returning, so a report queued from now on gets a worker.
            if task is not None:
                self._observers.discard(task)

    def fire_async(self, trigger: HookTrigger, event: object, ctx: HookContext) -> None:
        """Start the async hooks of ``trigger`` in tasks the engine owns."""
        for registration in self._select(trigger, ctx.channel_type, HookExecution.ASYNC):
            self._spawn(self._run_async(registration, event, ctx), f"hook-{registration.name}")

    def _spawn(self, coro: Awaitable[None], name: str) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_async(
        self, registration: HookRegistration, event: object, ctx: HookContext
    ) -> None:
        try:
            result = registration.fn(event, ctx)
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            logger.error("async hook %s raised CancelledError", registration.name)
        except Exception:
            logger.exception("async hook %s failed", registration.name)

    async def drain(self) -> None:
        """Wait until every hook task the engine started so far has finished.

        Cancellation: safe; the tasks keep running.
        """
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def aclose(self) -> None:
        """Cancel and await the hook tasks still running. Idempotent.

        Observations already queued by :meth:`observe_nowait` are run first (each observer
        within its budget), so every report queued before the close reaches its observers.

        Cancellation: queued observations not yet run are dropped and the tasks cancelled;
        cancelling stops only the wait for them.
        """
        current = asyncio.current_task()  # a hook closing the kit is left to finish
        try:
            while current not in self._observers and self._observers:
                await asyncio.wait(list(self._observers))
        finally:
            self._queued.clear()
            tasks = [task for task in self._tasks if task is not current]
            for task in tasks:
                task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
