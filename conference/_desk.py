"""``AnswerDesk``: routes the conference's answers to the requests they are for.

Every open request of a conference is on the desk: the questions its human-input tools asked
(addressed or not) and the approvals the application opened. Answers arrive as direct calls
(:meth:`AnswerDesk.answer`) or as speaker-attributed speech (:meth:`AnswerDesk.spoken`); a
participant leaving rejects what can no longer be answered.

Under ``EvidencePolicy(challenge="code")`` each request has one code at a time
(:meth:`AnswerDesk.challenge_code`): the question asks for it, and a spoken vote that says it
(and nothing that does not go with it) is a yes weighed like any other.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from voice_hitl import ChannelClosedError, HumanInputToolHandler, PendingInput
from voice_hitl._checks import non_negative_int, optional_seconds
from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import says_digits
from voice_hitl.responder._risk import EvidencePolicy, Risk, risk_of, weigh_yes

from ._approval import ApprovalRequest, ApprovalResult
from ._backend import Participant
from ._exceptions import AddressingError
from ._receipts import ApprovalReceipt, Decision
from ._roster import Addressing, parse_addressing, resolve_participants
from ._yesno import read_yes_no, says_always

__all__ = ["AnswerDesk"]

logger = logging.getLogger("conference.answers")

_VOTE_INSTEAD = "vote from an operator console or ConferenceChannel.answer"
"""How to approve when spoken approvals are off: a conference has no keypad."""


@dataclass(eq=False, slots=True)
class _Question:
    pending_id: str
    addressing: Addressing | None
    approval: ApprovalRequest | None = None
    handler: HumanInputToolHandler | None = None  # set for a question a tool asked
    risk: Risk = "low"
    evidence: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per participant, how the vote being cast was established (journaled with it)."""
    code: str | None = None
    """The code the question asks for (drawn when first asked for)."""

    def awaits(self, participant_id: str) -> bool:
        """True when this question is addressed to the participant and still needs them."""
        if self.addressing is None or participant_id not in self.addressing.ids:
            return False
        approval = self.approval
        return approval is None or participant_id not in {
            a.participant.participant_id for a in approval.approvals
        }


def receipt_note(participant: Participant, receipt: ApprovalReceipt) -> dict[str, Any]:
    """What the journal keeps of one counted vote: who, what, when, and its signed receipt."""
    return {
        "participant": receipt.participant_id,
        "name": participant.display_name,
        "decision": receipt.decision,
        "receipt": {
            "request_id": receipt.request_id,
            "participant_id": receipt.participant_id,
            "decision": receipt.decision,
            "timestamp": receipt.timestamp,
            "signature": receipt.signature,
        },
    }


def _decision(answer: str) -> Decision | None:
    verdict = read_yes_no(answer)
    return None if verdict is None else "approve" if verdict else "deny"


class AnswerDesk:
    """Tracks a conference's open requests and routes answers to them.

    Args:
        channel_id: The conference's channel id (for logs).
        roster: Returns the participants in the call now.
        receipt_key: Returns the key that signs receipts of tool-asked approvals.
        retention: How many granted approvals stay readable by :meth:`approval_result`.
        evidence: What a spoken yes to a high-risk request must prove (`weigh_yes`); with
            ``spoken=False`` no spoken yes counts, and votes come through :meth:`answer`.
    """

    def __init__(
        self,
        channel_id: str,
        roster: Callable[[], Mapping[str, Participant]],
        receipt_key: Callable[[], bytes],
        retention: int = 128,
        evidence: EvidencePolicy | None = None,
    ) -> None:
        self.channel_id = channel_id
        self.evidence = evidence or EvidencePolicy()
        self._roster = roster
        self._receipt_key = receipt_key
        self._retention = non_negative_int("retention", retention)
        self._questions: dict[str, _Question] = {}
        self._second: dict[str, str] = {}
        """participant -> the request their last utterance answered with a challenge yes
        short only of unmeasured layers: their next one, if as good, counts."""
        self._listeners: list[Callable[[ApprovalRequest], None]] = []
        self._granted: OrderedDict[str, ApprovalResult] = OrderedDict()

    # -- questions the human-input tools ask (the QuestionDesk side) ------------------------

    def address(self, arguments: Mapping[str, Any]) -> Addressing | None:
        """Resolve ``ask`` / ``approvers`` / ``quorum`` against the roster."""
        return parse_addressing(arguments, self._roster())

    def open_question(
        self, pending: PendingInput, addressing: Addressing | None, handler: HumanInputToolHandler
    ) -> None:
        """Route answers to a request a tool created; an ``approvers`` request collects votes."""
        declared = next(
            (d.risk for d in handler.tool_definitions if d.name == pending.tool_name), None
        )
        try:
            risk = risk_of(pending.tool_name, pending.arguments, pending.context, declared)
        except ValueError:
            risk = "high"  # a malformed per-call risk never lowers the bar
        question = _Question(pending.pending_id, addressing, handler=handler, risk=risk)
        if addressing is not None and addressing.quorum is not None:
            question.risk = "high"
            arguments = pending.arguments
            action = str(arguments.get("action") or arguments.get("question") or pending.tool_name)
            approval = ApprovalRequest(
                action,
                addressing.participants,
                quorum=addressing.quorum,
                key=self._receipt_key(),
                request_id=pending.pending_id,
                details=arguments,
            )
            question.approval = approval
            pending_id = pending.pending_id

            def journal_vote(participant: Participant, receipt: ApprovalReceipt) -> None:
                note = receipt_note(participant, receipt)
                evidence = question.evidence.pop(participant.participant_id, None)
                if evidence is not None:
                    note["evidence"] = dict(evidence)
                handler.handler.note(pending_id, "approval", note)

            approval.add_vote_listener(journal_vote)
            approval.add_done_callback(self._retain)
            approval.add_done_callback(lambda done: self._settle_tool_approval(done, handler))
        self._questions[pending.pending_id] = question
        if question.approval is not None:
            self._announce(question.approval)

    def _settle_tool_approval(
        self, approval: ApprovalRequest, handler: HumanInputToolHandler
    ) -> None:
        if approval.result is not None:
            handler.handler.resolve(
                approval.request_id,
                json.dumps(approval.result.summary()),
                by=",".join(approval.result.approvers),
                via="approval",
            )
        elif approval.error is not None:
            denied_by = getattr(approval.error, "denied_by", None)
            handler.handler.reject(
                approval.request_id, str(approval.error), by=denied_by, via="approval"
            )

    def readdress(self, pending_id: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """Route an open question to the named participants instead (an escalation).

        Returns:
            The ids it is now addressed to.

        Raises:
            AddressingError: A name matches nobody present, the question is not open, or it
                is a quorum approval (its approvers were fixed when it opened).
        """
        question = self._questions.get(pending_id)
        if question is None:
            raise AddressingError(f"request {pending_id!r} is not open in this conference")
        if question.approval is not None:
            raise AddressingError("a quorum approval keeps the approvers it opened with")
        participants = resolve_participants(self._roster(), names)
        question.addressing = Addressing(participants)
        return tuple(p.participant_id for p in participants)

    def close_question(self, pending_id: str) -> None:
        """The tool call ended: stop routing answers to its request."""
        question = self._questions.pop(pending_id, None)
        if question is not None and question.approval is not None:
            question.approval.fail(RuntimeError("the tool call asking for approval ended"))

    # -- approvals the application opens -----------------------------------------------------

    def open_approval(
        self,
        action: str,
        approvers: Sequence[str],
        *,
        quorum: int,
        timeout: float | None,
        key: bytes | None,
        details: Mapping[str, Any] | None,
    ) -> ApprovalRequest:
        """Open an approval addressed to ``approvers`` (names or ids on the roster)."""
        if isinstance(approvers, str):
            raise TypeError("approvers must be a list of names, not one string")
        timeout = optional_seconds("timeout", timeout)
        participants = resolve_participants(self._roster(), approvers)
        approval = ApprovalRequest(
            action,
            participants,
            quorum=quorum,
            key=key if key is not None else self._receipt_key(),
            details=details,
        )
        if timeout is not None:
            approval.arm(timeout)
        self._questions[approval.request_id] = _Question(
            approval.request_id, Addressing(participants, quorum), approval, risk="high"
        )
        approval.add_done_callback(self._retain)
        approval.add_done_callback(self._forget)
        self._announce(approval)
        return approval

    def add_approval_listener(
        self, listener: Callable[[ApprovalRequest], None]
    ) -> Callable[[], None]:
        """Call ``listener(request)`` whenever an approval opens; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _announce(self, approval: ApprovalRequest) -> None:
        for listener in list(self._listeners):
            try:
                listener(approval)
            except Exception:
                logger.exception(
                    "conference %r: approval listener failed for %s",
                    self.channel_id,
                    approval.request_id,
                )

    def _forget(self, approval: ApprovalRequest) -> None:
        self._questions.pop(approval.request_id, None)

    def _retain(self, approval: ApprovalRequest) -> None:
        if approval.result is None or not self._retention:
            return
        self._granted[approval.request_id] = approval.result
        while len(self._granted) > self._retention:
            self._granted.popitem(last=False)

    def approval_result(self, request_id: str) -> ApprovalResult | None:
        """A granted approval, while it stays in the retention."""
        return self._granted.get(request_id)

    def approval(self, request_id: str) -> ApprovalRequest | None:
        """The open approval with that id (tool-asked or application-opened)."""
        question = self._questions.get(request_id)
        return None if question is None else question.approval

    def addressed_to(self, pending_id: str) -> tuple[Participant, ...] | None:
        """Who must answer an open request; None when anyone may (or it is not open)."""
        question = self._questions.get(pending_id)
        if question is None or question.addressing is None:
            return None
        return question.addressing.participants

    def challenge_code(self, pending_id: str, *, new: bool = False) -> str | None:
        """The code an open request asks for, drawn with the desk's policy when first asked
        for (or, with ``new``, again); None when the request is not open."""
        question = self._questions.get(pending_id)
        if question is None:
            return None
        if question.code is None or new:
            question.code = self.evidence.new_code()
        return question.code

    @property
    def open_ids(self) -> list[str]:
        """The ids of the open requests."""
        return list(self._questions)

    # -- answers ---------------------------------------------------------------------------

    def answer(
        self,
        pending_id: str,
        participant_id: str,
        answer: str,
        *,
        via: str = "api",
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Take one participant's answer to one request (``evidence``: how a spoken vote was
        established, journaled beside it when it counts).

        Returns:
            True when it was taken; False when it was ignored (and logged): the request is
            not open, the participant is not in the call or not addressed, the approval
            answer is neither yes nor no, or it repeats an approval.
        """
        question = self._questions.get(pending_id)
        if question is None:
            logger.warning(
                "conference %r: answer from %r to %r ignored: no such open request",
                self.channel_id,
                participant_id,
                pending_id,
            )
            return False
        if participant_id not in self._roster():
            logger.warning(
                "conference %r: answer to %r ignored: %r is not in the conference",
                self.channel_id,
                pending_id,
                participant_id,
            )
            return False
        if question.approval is not None:
            decision = _decision(answer)
            if decision is None:
                logger.warning(
                    "conference %r: %r's answer %r to approval %r is neither yes nor no; ignored",
                    self.channel_id,
                    participant_id,
                    answer,
                    pending_id,
                )
                return False
            if evidence is not None:
                question.evidence[participant_id] = evidence
            try:
                always = decision == "approve" and says_always(answer)
                return question.approval.vote(participant_id, decision, always=always)
            finally:
                question.evidence.pop(participant_id, None)
        if question.addressing is not None and participant_id not in question.addressing.ids:
            logger.warning(
                "conference %r: answer to %r ignored: it is addressed to %s, not %r",
                self.channel_id,
                pending_id,
                ", ".join(sorted(question.addressing.ids)),
                participant_id,
            )
            return False
        assert question.handler is not None
        return question.handler.handler.resolve(pending_id, answer, by=participant_id, via=via)

    def spoken(self, participant_id: str, text: str, heard: Heard | None = None) -> bool:
        """Take an attributed final utterance as a yes/no answer, when it is for one request.

        Only requests addressed to the speaker are answered from speech, and only when the
        utterance reads as yes or no and exactly one such request waits for them. A yes to a
        high-risk request (an approval with a quorum, a high-risk tool) counts only with the
        evidence `weigh_yes` asks for in ``heard`` (the challenge word said alone, and the
        recogniser's confidence, the audio and the speaker attribution where measured; where
        one cannot be measured, the challenge answer said twice in a row). Under
        ``EvidencePolicy(challenge="code")`` the challenge answer is the request's code
        (:meth:`challenge_code`), and an utterance that says digits is weighed as a yes. With
        ``EvidencePolicy(spoken=False)`` no spoken yes to a high-risk request counts: the vote
        is cast with :meth:`answer` (an operator console, the answers API); a spoken no does.
        """
        first = self._second.pop(participant_id, None)  # two challenge answers in a row
        candidates = [q for q in self._questions.values() if q.awaits(participant_id)]
        if not candidates:
            return False
        verdict = read_yes_no(text)
        heard = heard or Heard("speech", text, participant_id)
        one = len(candidates) == 1
        if verdict is None and one and self._by_code(candidates[0]) and says_digits(heard):
            verdict = True  # a code attempt: weighed against the code below
        if verdict is None:
            logger.debug(
                "conference %r: %r said %r: not a yes/no", self.channel_id, participant_id, text
            )
            return False
        if len(candidates) > 1:
            logger.warning(
                "conference %r: %r said %r but %d requests wait for them (%s); not taken",
                self.channel_id,
                participant_id,
                text,
                len(candidates),
                ", ".join(q.pending_id for q in candidates),
            )
            return False
        (question,) = candidates
        if verdict and question.risk == "high":
            code = self.challenge_code(question.pending_id) if self._by_code(question) else None
            weighed = weigh_yes(
                heard,
                self.evidence,
                code=code,
                repeated=first == question.pending_id,
                instead=_VOTE_INSTEAD,
            )
            if weighed.retry == "repeat":
                self._second[participant_id] = question.pending_id
            if not weighed.accepted:
                logger.info(
                    "conference %r: %r's yes to %r not counted: %s",
                    self.channel_id,
                    participant_id,
                    question.pending_id,
                    weighed.reason,
                )
                return False
        if question.approval is not None:
            decision: Decision = "approve" if verdict else "deny"
            always = verdict and says_always(text)
            return question.approval.vote(participant_id, decision, always=always)
        answer = "yes" if verdict else "no"
        return self.answer(question.pending_id, participant_id, answer, via="speech")

    def _by_code(self, question: _Question) -> bool:
        """Whether a spoken yes to ``question`` must say its code."""
        policy = self.evidence
        return question.risk == "high" and policy.spoken and policy.challenge == "code"

    def participant_left(self, participant: Participant, reason: str) -> None:
        """Reject what can no longer be answered now that ``participant`` left."""
        for question in list(self._questions.values()):
            if question.approval is not None:
                question.approval.participant_left(participant, reason)
            elif question.addressing is not None and question.addressing.ids == {
                participant.participant_id
            }:
                assert question.handler is not None
                question.handler.handler.reject(
                    question.pending_id,
                    f"{participant}, the only person this question was for, {reason} "
                    "before answering",
                )

    def close(self) -> None:
        """Fail the approvals the application opened (the channel closed)."""
        self._fail(f"conference {self.channel_id!r} closed")

    def fail_all(self, reason: str) -> None:
        """Fail the approvals the application opened: the call ended under the bot."""
        self._fail(f"conference {self.channel_id!r} ended: {reason}")

    def _fail(self, message: str) -> None:
        for question in list(self._questions.values()):
            if question.approval is not None and question.handler is None:
                question.approval.fail(ChannelClosedError(message))
