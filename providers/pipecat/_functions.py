"""``human_input_functions``: the human-input tools as function handlers of a Pipecat LLM service.

Pipecat runs each function call of its LLM service in a task of its own and cancels that task
when the call is interrupted (handlers registered with ``cancel_on_interruption``), when the
pipeline ends or is cancelled, and when the call outlives its ``timeout_secs``. The handlers
registered here send every call through a voice-hitl :class:`~voice_hitl.ToolGate`, so the
human-input tools are validated, hooked and reported like on every other door, and wait under
the handler's own timeout (Pipecat's is set past it). When Pipecat cancels a call, its request
is withdrawn with the reason (interrupted, pipeline ended) and reported ``cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import CancelFrame, EndFrame, Frame, InterruptionFrame, StartFrame
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.llm_service import FunctionCallParams, LLMService

from voice_hitl import (
    ChannelType,
    Door,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolCall,
    ToolGate,
    ToolResult,
    VoiceKit,
)
from voice_hitl.voice._loop_slices import all_done, cancel_in_slices

if TYPE_CHECKING:
    from ._line import PipecatLine

__all__ = [
    "CALL_INTERRUPTED",
    "PIPELINE_CANCELLED",
    "PIPELINE_ENDED",
    "PipecatHumanInput",
    "human_input_functions",
]

logger = logging.getLogger("voice_hitl.providers.pipecat")

CALL_INTERRUPTED = "the Pipecat pipeline was interrupted"
"""Why a request is withdrawn when an interruption cancels its call."""
PIPELINE_ENDED = "the Pipecat pipeline ended"
"""Why it is withdrawn when the pipeline ends (``EndFrame``) with the call open."""
PIPELINE_CANCELLED = "the Pipecat pipeline was cancelled"
"""Why it is withdrawn when the pipeline is cancelled (``CancelFrame``: the caller hung up)."""
_CANCELLED = "Pipecat cancelled the function call"
_PIPECAT_TIMEOUT_MARGIN = 30.0  # Pipecat's own deadline sits this far past the handler's


class PipecatHumanInput:
    """The human-input tools registered on one Pipecat LLM service (see the module doc).

    Made by :func:`human_input_functions`; :attr:`tools` is what to advertise to the model.
    It is also a channel a ``VoiceResponder`` can serve, once a :class:`PipecatLine` is in the
    pipeline: ``responder.serve(human_input)`` asks its questions aloud on that line.
    """

    def __init__(
        self,
        llm: LLMService[Any],
        gate: ToolGate,
        *,
        room_id: str,
        actor: Callable[[], str | None],
    ) -> None:
        self.llm = llm
        self.gate = gate
        self.room_id = room_id
        self._actor = actor
        self._serving: dict[str, asyncio.Task[ToolResult]] = {}
        self._handling: Frame | None = None  # the system frame the service is handling now
        self._ended: str | None = None
        self.line: PipecatLine | None = None
        """The pipeline's call line (set by ``PipecatLine``), where questions are asked."""

    @property
    def channel_id(self) -> str:
        """The channel the requests belong to."""
        return self.gate.channel_id

    @property
    def human_input_handler(self) -> HumanInputToolHandler | None:
        """The handler serving the tools."""
        return self.gate.human_input

    def find_line(self, event: PendingInputEvent) -> PipecatLine | None:
        """The pipeline's line for this channel's requests (None without a line)."""
        return self.line if event.channel_id == self.channel_id else None

    @property
    def tools(self) -> ToolsSchema:
        """The human-input tools as Pipecat schemas, for the ``LLMContext`` (``tools=``)."""
        human = self.gate.human_input
        assert human is not None
        schemas: list[FunctionSchema] = []
        for tool in human.tool_definitions:
            parameters = dict(tool.parameters or {})
            schemas.append(
                _WholeSchema(
                    name=tool.name,
                    description=tool.description,
                    properties=dict(parameters.get("properties", {})),
                    required=list(parameters.get("required", [])),
                    parameters=parameters,
                )
            )
        return ToolsSchema(standard_tools=schemas)

    @property
    def open_calls(self) -> list[str]:
        """Ids of the function calls waiting for a person."""
        return list(self._serving)

    async def serve(self, params: FunctionCallParams) -> None:
        """The function handler Pipecat calls (registered for each human-input tool).

        Cancellation: the request is withdrawn with the reason (interrupted, pipeline ended
        or cancelled) and reported ``cancelled``; nothing is sent to the model for it.
        """
        call = ToolCall(
            params.function_name,
            dict(params.arguments),
            params.tool_call_id,
            self.room_id,
            self._actor(),
            Door.PROVIDER,
        )

        async def deliver(result: ToolResult) -> None:
            # Pipecat JSON-encodes the result for the model: hand it the object, or the
            # model reads a string holding JSON ("{\"answer\": true}").
            await params.result_callback(_as_json_value(result.text))

        serving = asyncio.ensure_future(self.gate.call(call, deliver))
        serving.set_name(f"pipecat-ask-{call.call_id}")
        self._serving[call.call_id] = serving
        try:
            # Not awaited directly: a cancellation from Pipecat carries no reason; ours does.
            await asyncio.wait({serving})
        except asyncio.CancelledError:
            reason = self._why_cancelled()
            serving.cancel(reason)
            await asyncio.gather(serving, return_exceptions=True)
            logger.info("call %r: human-input request withdrawn: %s", call.call_id, reason)
            raise
        finally:
            self._serving.pop(call.call_id, None)
        serving.result()

    def _why_cancelled(self) -> str:
        if self._ended is not None:
            return self._ended
        if isinstance(self._handling, InterruptionFrame):
            return CALL_INTERRUPTED
        return _CANCELLED

    async def _before_frame(self, processor: FrameProcessor, frame: Frame) -> None:
        if isinstance(frame, StartFrame):
            self._ended = None
        elif isinstance(frame, EndFrame):
            self._ended = PIPELINE_ENDED
        elif isinstance(frame, CancelFrame):
            self._ended = PIPELINE_CANCELLED
        self._handling = frame

    async def _after_frame(self, processor: FrameProcessor, frame: Frame) -> None:
        if self._handling is frame:
            self._handling = None

    async def aclose(self, reason: str = PIPELINE_ENDED) -> None:
        """Withdraw every call still waiting for a person (reported ``cancelled`` with
        ``reason``); idempotent.

        Cancellation: the calls are cancelled first; cancelling stops only the wait for them.
        """
        tasks = list(self._serving.values())
        cancel_in_slices(tasks, reason)  # thousands open must not hold the loop
        await all_done(tasks)


class _WholeSchema(FunctionSchema):
    """A Pipecat function schema that keeps the tool's whole parameters schema.

    Pipecat's ``FunctionSchema`` rebuilds ``parameters`` from ``properties`` and ``required``
    alone, so ``additionalProperties: false`` (and any other top-level keyword) was never
    offered to the model. Adapters that send ``to_default_dict()`` (OpenAI chat and
    responses, Gemini) now send it whole; adapters that rebuild the schema from
    ``properties``/``required`` themselves still drop it, and the gate refuses undeclared
    arguments whatever the model was told.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        properties: dict[str, Any],
        required: list[str],
        parameters: dict[str, Any],
    ) -> None:
        super().__init__(name, description, properties, required)
        self._parameters = {**parameters, "type": "object"}

    def to_default_dict(self) -> dict[str, Any]:
        return {**super().to_default_dict(), "parameters": self._parameters}


def _as_json_value(text: str) -> Any:
    """The tool result as Pipecat should encode it: the object a JSON object text holds (a
    typed answer, ``{"error": ...}``), else the text itself. Only a non-empty object is
    unwrapped: Pipecat tells the model "COMPLETED" for a falsy result, so a free-text answer
    "0" must stay the string it is."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) and value else text


def human_input_functions(
    llm: LLMService[Any],
    human: HumanInputToolHandler,
    *,
    kit: VoiceKit | None = None,
    channel_id: str = "pipecat",
    room_id: str = "",
    actor: Callable[[], str | None] = lambda: None,
    cancel_on_interruption: bool = True,
) -> PipecatHumanInput:
    """Register the human-input tools of ``human`` on a Pipecat LLM service.

    Each call goes through a voice-hitl ``ToolGate`` on door ``provider`` (channel type
    ``realtime_voice``): arguments validated against the tool's schema, ``BEFORE_TOOL_USE`` hooks,
    the request created for ``room_id`` and ``actor()``, a wait under the handler's own
    ``timeout``, one ``ON_TOOL_CALL`` report. The model reads the answer, or ``{"error": ...}``
    for a timeout, refusal or failure. Pipecat's function-call timeout is set past the
    handler's, so it never cuts a person off.

    Args:
        llm: The service whose function calls are served.
        human: Serves the tools (names and schemas from its ``tool_definitions``).
        kit: Runs the kit's hooks and routes ``ON_USER_INPUT_REQUIRED`` for ``channel_id`` to
            it (e.g. a ``VoiceResponder`` or the operator service).
        channel_id: The channel the requests belong to.
        room_id: The requests' room (e.g. the call's id).
        actor: Returns the ``actor_id`` of a new request (e.g. the caller's number).
        cancel_on_interruption: Withdraw the request when the pipeline is interrupted (the
            caller talks over the bot); False keeps it open (Pipecat then runs the call as an
            asynchronous one and the conversation goes on meanwhile).

    Returns:
        The registration: ``tools`` to advertise, ``open_calls``, ``aclose()``.

    Raises:
        ValueError: ``human`` has no tool definitions.
    """
    if not human.tool_definitions:
        raise ValueError(
            f"{human!r} has no tool_definitions; Pipecat needs a schema for each tool it offers"
        )
    gate = ToolGate(channel_id, ChannelType.REALTIME_VOICE, human_input=human)
    if kit is not None:
        gate.kit = kit
        kit.attach_human_input(channel_id, human.handler)
    bridge = PipecatHumanInput(llm, gate, room_id=room_id, actor=actor)
    llm.add_event_handler("on_before_process_frame", bridge._before_frame)
    llm.add_event_handler("on_after_process_frame", bridge._after_frame)
    for tool in human.tool_definitions:
        llm.register_function(
            tool.name,
            bridge.serve,
            cancel_on_interruption=cancel_on_interruption,
            timeout_secs=human.timeout + _PIPECAT_TIMEOUT_MARGIN,
        )
    return bridge
