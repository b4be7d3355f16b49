"""``voice-hitl demo --operator``: the offline call, with one question only a supervisor can
answer, answered through the operator service.

The caller asks to move money. Before asking the amount, the agent needs the caller's account
reference, which the caller does not know: it calls ``AskSupervisor``, a human-input tool with
no spoken form, so the voice responder leaves it to the board. The service runs on localhost
with the board in memory (the embedded default); the console URL is printed with a token. A
scripted supervisor answers after a pause, unless ``--manual``: then you answer in the browser
(or with ``voice-hitl answer``). The call then continues as in ``voice-hitl demo``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import sys

from .._usage import UsageError
from ..board import BoardBridge, BoardOpened, MemoryBoard
from ..human._human_input_tools import HumanInputToolHandler
from ..human._standard_tools import ASK_USER_QUESTION, CONFIRM_ACTION
from ..responder._responder import VoiceResponder
from ..service._app import create_app
from ..service._auth import Operator, Operators
from ..service._serve import ServiceStartError, running_service
from ..tools._kit import VoiceKit
from ..tools._tools import AITool
from ..voice._caller_transport import ScriptedCallerTransport
from ..voice._provider import AudioFormat
from ..voice._reasoning import ReasoningReply, ReasoningTurn, ToolCaller
from ..voice._voice_channel import RealtimeVoiceChannel
from ._demo import PHONE_CALL, _call_bound, _provider, load_turns
from ._demo_agent import _answer
from ._timeline import Timeline

__all__ = [
    "ASK_SUPERVISOR",
    "SupervisedTransferAgent",
    "run_operator_command",
    "run_operator_demo",
]

ASK_SUPERVISOR = AITool(
    name="AskSupervisor",
    description="Ask a supervisor (not the caller) for something only staff can look up.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
        "additionalProperties": False,
    },
)
REFERENCE = "40172388"


class SupervisedTransferAgent:
    """Gets the account reference from a supervisor, then asks the amount and a confirmation."""

    def __init__(self) -> None:
        self.transfers: list[tuple[str, float]] = []
        self._turns = 0

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        """Take one turn of the call.

        Cancellation: the turn is abandoned; its open question is withdrawn.
        """
        self._turns += 1
        if self._turns > 1:
            return ReasoningReply("Is there anything else? Goodbye.")
        reference = await call_tool(
            "AskSupervisor", {"question": "What is this caller's account reference?"}
        )
        account = _answer(reference.text)
        if reference.is_error or not account:
            return ReasoningReply("Sorry, I could not find your account. Goodbye.")
        amount_result = await call_tool(
            "AskUserQuestion",
            {"question": "How much would you like to move to savings?", "mode": "number"},
        )
        amount = _answer(amount_result.text)
        if amount_result.is_error or not isinstance(amount, int | float):
            return ReasoningReply("Sorry, I could not get the amount. Goodbye.")
        confirm = await call_tool(
            "ConfirmAction", {"action": f"move {amount:g} dollars from account {account}"}
        )
        if confirm.is_error or _answer(confirm.text) is not True:
            return ReasoningReply("Okay, I have not moved anything. Goodbye.")
        self.transfers.append((str(account), float(amount)))
        return ReasoningReply(f"Done. {amount:g} dollars are now in your savings. Goodbye.")


async def _scripted_supervisor(board: MemoryBoard, url: str, token: str, pause: float) -> None:
    """Answers the first AskSupervisor request through the HTTP API, like a person would."""
    import httpx

    async with board.subscribe() as events:
        async for event in events:
            if isinstance(event, BoardOpened) and event.request.tool == "AskSupervisor":
                await asyncio.sleep(pause)  # the supervisor looks it up
                async with httpx.AsyncClient(base_url=url) as client:
                    await client.post(
                        f"/v1/requests/{event.request.id}/answer",
                        json={"answer": REFERENCE},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                return


async def run_operator_demo(
    *, speed: float = 1.0, port: int = 0, manual: bool = False, timeout: float = 300.0
) -> list[tuple[str, float]]:
    """Run the call with the service on localhost; returns ``(account, amount)`` moved.

    Cancellation: safe; the call, the service and the board are closed.
    """
    # AskSupervisor has no spoken form: the responder would warn that it cannot ask it aloud.
    responder_log = logging.getLogger("voice_hitl.responder")
    level = responder_log.level
    responder_log.setLevel(logging.ERROR)
    token = secrets.token_urlsafe(12)
    board = MemoryBoard()
    kit = VoiceKit()
    turns = await asyncio.to_thread(load_turns, PHONE_CALL)
    transport = ScriptedCallerTransport(turns, speed=speed)
    timeline = Timeline(
        kit, call_clock=lambda: transport.clock / transport.sample_rate, out=sys.stdout
    )
    responder = VoiceResponder(kit, reprompts=2)
    agent = SupervisedTransferAgent()
    human = HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction", "AskSupervisor"},
        timeout=timeout,
        tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION, ASK_SUPERVISOR],
    )
    operators = Operators.from_tokens({token: Operator("supervisor")})
    app = create_app(board, operators)
    supervisor: asyncio.Task[None] | None = None
    try:
        # The service listens first: a taken port is reported before the model loads.
        async with running_service(app, port=port) as url, BoardBridge(human.handler, board):
            voice = RealtimeVoiceChannel(
                "phone",
                provider=await _provider("whisper"),
                transport=transport,
                human_input_handler=human,
                reasoning_backend=agent,
            )
            voice.input_format = voice.output_format = AudioFormat(transport.sample_rate)
            print(f"operator console: {url}/#token={token}")
            print(f"or: VOICE_HITL_URL={url} VOICE_HITL_TOKEN={token} voice-hitl pending")
            if not manual:
                supervisor = asyncio.create_task(
                    _scripted_supervisor(board, url, token, 1.5 * max(speed, 0.2))
                )
            kit.register_channel(voice)
            responder.serve(voice)
            session = await voice.start_session("demo-room", participant_id="caller")
            session.add_listener(transport.observe)
            session.add_listener(timeline.observe)
            timeline.add("call", "started (offline; the supervisor answers on the console)")
            async with asyncio.timeout(_call_bound(transport, timeout)):
                await transport.finished.wait()
            timeline.add("call", "caller hung up")
            await voice.end_session(session)
    finally:
        if supervisor is not None:
            supervisor.cancel()
            await asyncio.gather(supervisor, return_exceptions=True)
        await responder.aclose()
        await kit.aclose()
        await board.aclose()
        responder_log.setLevel(level)
    return agent.transfers


def run_operator_command(args: argparse.Namespace) -> int:
    """``voice-hitl demo --operator`` (called by the demo command)."""
    try:
        moved = asyncio.run(
            run_operator_demo(speed=args.speed, port=args.port, manual=args.manual)
        )
    except ServiceStartError as exc:
        raise UsageError(f"--port {args.port}: {exc}") from None
    print()
    print(f"moved: {moved or 'nothing'}")
    sys.stdout.flush()
    return 0 if moved else 1
