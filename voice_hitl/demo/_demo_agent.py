"""The demo's agent: a small reasoning backend that moves money only with the caller's yes."""

from __future__ import annotations

import json
from typing import Any

from ..voice._reasoning import ReasoningReply, ReasoningTurn, ToolCaller

__all__ = ["ApprovalAgent", "TransferAgent"]


def _answer(text: str) -> Any:
    try:
        return json.loads(text).get("answer")
    except (ValueError, AttributeError):
        return None


class TransferAgent:
    """On the caller's first turn: ask how much, confirm the transfer, then report.

    Later turns get a short closing line. ``transfers`` records what it moved.
    """

    def __init__(self) -> None:
        self.transfers: list[float] = []
        self._turns = 0

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        """Take one turn of the call.

        Cancellation: the turn is abandoned; its open question is withdrawn.
        """
        self._turns += 1
        if self._turns > 1:
            return ReasoningReply("Is there anything else? Goodbye.")
        amount_result = await call_tool(
            "AskUserQuestion",
            {"question": "How much would you like to move to savings?", "mode": "number"},
        )
        amount = _answer(amount_result.text)
        if amount_result.is_error or not isinstance(amount, int | float):
            return ReasoningReply("Sorry, I could not get the amount. Goodbye.")
        shown = f"{amount:g}"
        confirm_result = await call_tool(
            "ConfirmAction", {"action": f"move {shown} dollars from checking to savings"}
        )
        if confirm_result.is_error or _answer(confirm_result.text) is not True:
            return ReasoningReply("Okay, I have not moved anything. Goodbye.")
        self.transfers.append(float(amount))
        return ReasoningReply(f"Done. {shown} dollars are now in your savings account. Goodbye.")


class ApprovalAgent:
    """A conference bot: when asked to move money, it needs two approvals, then reports."""

    def __init__(self, approvers: tuple[str, ...] = ("alice", "bob"), amount: int = 500) -> None:
        self.approvers = approvers
        self.amount = amount
        self.transfers: list[float] = []
        self._turns = 0

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        """Take one turn of the meeting.

        Cancellation: the turn is abandoned; its open approval is withdrawn.
        """
        self._turns += 1
        if self._turns > 1:
            return None
        result = await call_tool(
            "ConfirmAction",
            {
                "action": f"move {self.amount} dollars from the team budget to savings",
                "approvers": list(self.approvers),
                "quorum": len(self.approvers),
            },
        )
        if result.is_error:
            return ReasoningReply("The transfer was not approved, so I have not moved anything.")
        names = " and ".join(json.loads(result.text).get("approvers", []))
        self.transfers.append(float(self.amount))
        return ReasoningReply(f"Approved by {names}. {self.amount} dollars moved. Thank you.")
