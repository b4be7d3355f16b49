"""`Dialogue`: one request being asked aloud, and how its prompts are phrased."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..human._pending import PendingInputEvent
from ..speech import AnswerKind, AnswerSpec
from ._call_line import CallLine
from ._prompts import phrase_challenge_retry, phrase_question, phrase_reprompt
from ._risk import Risk

__all__ = ["Dialogue"]


@dataclass(slots=True)
class Dialogue:
    """One request being asked: what, how, on which line; ``asking`` while a prompt is
    being handed to the line (a settlement then also stops the line's speech)."""

    event: PendingInputEvent
    spec: AnswerSpec
    line: CallLine
    risk: Risk = "low"
    spoken: bool = True
    """A spoken yes can approve at the high tier (`EvidencePolicy.spoken`)."""
    keypad: bool = True
    """The line can hear keypad tones (a line says it cannot with ``keypad = False``)."""
    code: str | None = None
    """The code the question asks for (a code challenge), else ``None``."""
    asking: bool = False
    turns: int = 0
    second: str | None = None
    """Who ("" for the line's only caller) gave the last answer, when it was a challenge
    answer short only of unmeasured layers: their next one, if it is as good, approves
    (`weigh_yes`'s ``repeated``)."""
    answered: set[str] = field(default_factory=set)
    """Who already answered (a quorum's voters): what they say later is not weighed again."""

    @property
    def challenge(self) -> bool:
        """A high-risk confirmation: the question asks for the challenge word (or ``code``)."""
        return self.risk == "high" and self.spec.kind is AnswerKind.CONFIRM

    def question(self) -> str:
        """The question, as first asked."""
        return phrase_question(
            self.event.tool_name,
            self.spec,
            challenge=self.challenge,
            spoken=self.spoken,
            code=self.code,
            keypad=self.keypad,
        )

    def reprompt(self) -> str:
        """The question again, after an answer that could not be understood."""
        return phrase_reprompt(
            self.event.tool_name,
            self.spec,
            challenge=self.challenge,
            spoken=self.spoken,
            code=self.code,
            keypad=self.keypad,
        )

    def retry(self, kind: str) -> str:
        """What to say when a high-risk yes was not taken (``Verdict.retry``)."""
        return phrase_challenge_retry(
            kind, spoken=self.spoken, code=self.code, keypad=self.keypad
        )
