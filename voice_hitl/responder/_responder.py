"""``VoiceResponder``: answers human-input requests by asking the person on the call aloud.

For each request raised on a voice or conference door of a channel it serves, the responder
speaks the question (phrased from the tool call's ``AnswerSpec``), listens to the addressed
person only (speech or keypad, whichever comes first; speaking over the question stops it),
re-prompts on an answer it cannot trust, and settles the request with a JSON answer. When the
request settles any other way (answered elsewhere, timed out, session ended, unplugged, closed)
its dialogue is cancelled at once.

An utterance the recogniser doubts (calibrated confidence under ``min_confidence``) re-prompts.
A high-risk confirmation (`voice_hitl.responder._risk`) asks for the challenge word ("say
confirm, or press 1") and takes a spoken yes only with the evidence `weigh_yes` asks for (the
word said alone, among others); a yes without it is asked again, and the last re-prompt offers the
keypad alone. With ``EvidencePolicy(challenge="code")`` it asks for a one-time code drawn for
the request instead ("say the code four, seven, two, or press 1"; in a conference, the
channel's code for the request, which its desk weighs votes against), says it again in every
re-prompt, and asks for a new code when a second answer must stand in for unmeasured layers.
With ``EvidencePolicy(spoken=False)`` the high tier asks for the keypad alone ("To go ahead,
press 1") and no spoken yes approves; a spoken no still refuses. The answer JSON carries that
evidence (``"evidence"``: risk, via, the challenge, confidence, audio, the layers, turns).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol

from .._checks import non_negative_int, probability
from .._types import ChannelType
from ..human._answer_json import answer_json
from ..human._human_input import HumanInputHandler
from ..human._human_input_tools import HumanInputToolHandler
from ..human._pending import PendingInput, PendingInputEvent
from ..speech import (
    Answer,
    AnswerSpec,
    AnswerSpecError,
    MetaAnswer,
    MetaIntent,
    NoMatch,
)
from ..speech.asr._protocol import Recognizer
from ..speech.dtmf import dtmf_entry_complete, dtmf_to_answer
from ..tools._hooks import HookContext, HookExecution, HookTrigger
from ..tools._kit import VoiceKit
from ._call_line import CallLine, Heard, Inbox, SpeechSynthesizer
from ._dialogue import Dialogue
from ._hearing import DEFAULT_MIN_CONFIDENCE, code_attempt, understand_heard
from ._prompts import phrase_read_back
from ._risk import EvidencePolicy, Verdict, evidence_json, weigh_yes

__all__ = ["AnswerableChannel", "OperatorRequest", "VoiceResponder", "answer_json"]

logger = logging.getLogger("voice_hitl.responder")

_YES_OR_NO = AnswerSpec.confirm(default=None)

ReadBack = Callable[[AnswerSpec, Answer], bool]
"""Decides whether an answer is read back for confirmation before it is taken."""


class AnswerableChannel(Protocol):
    """A channel whose requests a :class:`VoiceResponder` can ask aloud."""

    @property
    def channel_id(self) -> str: ...

    @property
    def human_input_handler(self) -> HumanInputToolHandler | None: ...

    def find_line(self, event: PendingInputEvent) -> CallLine | None:
        """The line to ask ``event`` on, or None when the request has no call to ask on."""
        ...


@dataclass(frozen=True, slots=True)
class OperatorRequest:
    """What ``ON_OPERATOR_REQUESTED`` observers receive: a person asked for an operator.

    The request stays pending for another answerer (an operator console, say).
    """

    request: PendingInputEvent
    transcript: str
    actor_id: str | None


class VoiceResponder:
    """Asks human-input requests aloud on the channels it serves.

    Args:
        kit: The kit whose ``ON_USER_INPUT_REQUIRED`` announcements start the dialogues.
        reprompts: How many times an answer that cannot be understood is asked again before
            the request is rejected ("repeat" does not count).
        read_back: When it returns True for an answer, the answer is read back and taken
            only once the person confirms it.
        synthesizer: Speaks the questions on lines whose provider cannot say arbitrary text
            (``can_say`` is False): the audio is played into the call instead.
        recognizer: Also hears the caller's audio with a local recogniser (for providers
            that do not transcribe the caller, or as a second ear); the first answer wins.
        min_confidence: An utterance whose calibrated recogniser confidence is below this
            is asked again instead of answering.
        evidence: What a spoken yes to a high-risk confirmation must prove.
    """

    def __init__(
        self,
        kit: VoiceKit,
        *,
        reprompts: int = 2,
        read_back: ReadBack | None = None,
        synthesizer: SpeechSynthesizer | None = None,
        recognizer: Recognizer | None = None,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        evidence: EvidencePolicy | None = None,
    ) -> None:
        self.kit = kit
        self.reprompts = non_negative_int("reprompts", reprompts)
        self.min_confidence = probability("min_confidence", min_confidence)
        self.evidence = evidence or EvidencePolicy()
        self.read_back = read_back
        self.synthesizer = synthesizer
        self.recognizer = recognizer
        self._channels: dict[str, AnswerableChannel] = {}
        self._dialogues: set[asyncio.Task[None]] = set()
        kit.hook(
            HookTrigger.ON_USER_INPUT_REQUIRED,
            execution=HookExecution.ASYNC,
            channel_types=(ChannelType.REALTIME_VOICE, ChannelType.CONFERENCE),
        )(self._on_request)

    def serve(self, channel: AnswerableChannel) -> None:
        """Ask the requests of ``channel`` aloud."""
        self._channels[channel.channel_id] = channel

    async def _on_request(self, event: PendingInputEvent, ctx: HookContext) -> None:
        channel = self._channels.get(event.channel_id)
        human = None if channel is None else channel.human_input_handler
        if channel is None or human is None:
            return
        line = channel.find_line(event)
        if line is None:
            logger.info("request %s has no call to ask on; left pending", event.pending_id)
            return
        try:
            spec = AnswerSpec.from_tool_call(event.tool_name, event.arguments)
        except AnswerSpecError as exc:
            logger.warning("request %s cannot be asked aloud: %s", event.pending_id, exc)
            return
        task = asyncio.current_task()
        assert task is not None
        self._dialogues.add(task)

        def stop(_: PendingInput) -> None:
            # Settled elsewhere (answered, timed out, withdrawn): stop asking at once. When the
            # dialogue settles it itself, it simply returns.
            if asyncio.current_task() is not task:
                task.cancel("request settled")

        try:
            risk = human.risk_of(event)
        except ValueError as exc:
            logger.warning("request %s cannot be asked aloud: %s", event.pending_id, exc)
            return
        dialogue = Dialogue(
            event,
            spec,
            line,
            risk,
            spoken=self.evidence.spoken,
            keypad=bool(getattr(line, "keypad", True)),  # a conference may have none
        )
        try:
            if dialogue.challenge and dialogue.spoken and self.evidence.challenge == "code":
                try:
                    dialogue.code = self._code(event)
                except ValueError as exc:  # an injected code source returned no code
                    logger.error("request %s cannot be asked aloud: %s", event.pending_id, exc)
                    return
            if human.handler.watch(event.pending_id, stop):
                await self._converse(dialogue, human.handler)
        except asyncio.CancelledError:
            if dialogue.asking:  # cut off mid-prompt: make sure the line stops speaking
                await asyncio.shield(line.stop_speaking())
            raise
        finally:
            self._dialogues.discard(task)

    async def _converse(self, dialogue: Dialogue, handler: HumanInputHandler) -> None:
        event, spec, line = dialogue.event, dialogue.spec, dialogue.line
        challenge = dialogue.challenge
        inbox = line.listen(self._addressed(event), spec, self.recognizer)
        try:
            prompt = dialogue.question()
            misses = 0
            while True:
                if prompt:
                    await self._say(dialogue, prompt)
                understood, heard = await self._hear(inbox, spec, dialogue)
                # two answers in a row, by the same person
                first, dialogue.second = dialogue.second, None
                repeated = first is not None and first == (heard.speaker_id or "")
                if isinstance(understood, Answer):
                    verdict = self._weigh(dialogue, understood, heard, repeated)
                    if verdict is not None and verdict.retry == "repeat":
                        dialogue.second = heard.speaker_id or ""
                        # only unmeasured layers fell short: ask for the word once more, or
                        # for a new code (not a miss: the answer itself was good)
                        if dialogue.code is not None:
                            dialogue.code = self._code(event, new=True)
                        prompt = dialogue.retry("repeat")
                        continue
                    if verdict is not None and not verdict.accepted:
                        logger.info(
                            "request %s: a high-risk yes was not taken (%s)",
                            event.pending_id,
                            verdict.reason,
                        )
                        misses += 1
                        if misses > self.reprompts:
                            handler.reject(
                                event.pending_id,
                                f"No usable answer after {misses} attempts (a spoken yes "
                                f"without the evidence a high-risk confirmation needs: "
                                f"{verdict.reason})",
                            )
                            return
                        retry: str = verdict.retry or "again"
                        if misses == self.reprompts and retry in ("challenge", "alone", "again"):
                            retry = "keypad_only"  # the last chance: the keypad, said plainly
                        prompt = dialogue.retry(retry)
                        continue
                    if not await self._accepted(inbox, dialogue, understood):
                        prompt = dialogue.question()
                        continue
                    asked = dialogue.challenge and dialogue.spoken
                    evidence = evidence_json(
                        dialogue.risk,
                        heard,
                        verdict=verdict,
                        turns=dialogue.turns,
                        challenge=self.evidence.challenge if asked else None,
                    )
                    line.deliver(
                        event, understood, heard.speaker_id or event.actor_id, evidence=evidence
                    )
                    if heard.speaker_id is not None:
                        dialogue.answered.add(heard.speaker_id)
                    if event.pending_id not in handler.pending:
                        return
                    # A quorum still needs other people: keep listening, do not ask again.
                    prompt = ""
                    continue
                if isinstance(understood, MetaAnswer):
                    if understood.intent is MetaIntent.REPEAT:
                        prompt = dialogue.question()
                        continue
                    if understood.intent is MetaIntent.CANCEL:
                        handler.reject(
                            event.pending_id,
                            "The person cancelled the request",
                            by=heard.speaker_id or event.actor_id,
                            via=understood.via,
                        )
                        return
                    await self._hand_to_operator(event, heard)
                    return
                misses += 1
                if misses > self.reprompts:
                    handler.reject(
                        event.pending_id,
                        f"No usable answer after {misses} attempts ({understood.reason})",
                    )
                    return
                if challenge and misses == self.reprompts:
                    prompt = dialogue.retry("keypad_only")  # the last chance
                else:
                    prompt = dialogue.reprompt()
        finally:
            inbox.close()

    def _weigh(
        self, dialogue: Dialogue, answer: Answer, heard: Heard, repeated: bool
    ) -> Verdict | None:
        """The evidence verdict on a spoken yes to a high-risk confirmation; ``None`` when
        none is needed (low risk, a no, the keypad)."""
        if not dialogue.challenge or answer.value is not True or heard.kind != "speech":
            return None
        return weigh_yes(heard, self.evidence, code=dialogue.code, repeated=repeated)

    def _code(self, event: PendingInputEvent, *, new: bool = False) -> str:
        """The request's code: the channel's (a conference's desk weighs the votes it hears
        against it), else a fresh one; ``new`` draws another."""
        channel = self._channels[event.channel_id]
        shared = getattr(channel, "challenge_code", None)
        code = None if shared is None else shared(event.pending_id, new=new)
        return code if isinstance(code, str) else self.evidence.new_code()

    def _addressed(self, event: PendingInputEvent) -> Collection[str] | None:
        channel = self._channels[event.channel_id]
        addressed = getattr(channel, "addressed_participants", None)
        return None if addressed is None else addressed(event)

    async def _hear(
        self, inbox: Inbox, spec: AnswerSpec, dialogue: Dialogue
    ) -> tuple[Answer | MetaAnswer | NoMatch, Heard]:
        line = dialogue.line
        keys = ""
        while True:
            heard = await inbox.get()
            if heard.kind == "speech_started":
                await line.stop_speaking()  # barge-in: the person talks over the question
                continue
            await line.stop_speaking()
            if heard.kind == "speech" and heard.speaker_id in dialogue.answered:
                continue  # a quorum voter repeating themselves
            if heard.kind == "speech":
                understood = understand_heard(heard, spec, min_confidence=self.min_confidence)
                if dialogue.code is not None and spec is dialogue.spec:
                    understood = code_attempt(understood, heard)
                return understood, heard
            keys += heard.text
            if dtmf_entry_complete(keys, spec):
                return dtmf_to_answer(keys, spec), heard

    async def _say(self, dialogue: Dialogue, text: str) -> None:
        line = dialogue.line
        dialogue.asking = True
        dialogue.turns += 1
        try:
            if line.can_say or self.synthesizer is None:
                await line.say(text)
            else:
                audio, rate = await self.synthesizer.synthesize(text)
                await line.play_audio(audio, rate)
        finally:
            dialogue.asking = False

    async def _accepted(self, inbox: Inbox, dialogue: Dialogue, answer: Answer) -> bool:
        """True unless a read-back applies to ``answer`` and the person does not confirm it."""
        if self.read_back is None or not self.read_back(dialogue.spec, answer):
            return True
        await self._say(dialogue, phrase_read_back(answer))
        understood, _ = await self._hear(inbox, _YES_OR_NO, dialogue)
        return isinstance(understood, Answer) and understood.value is True

    async def _hand_to_operator(self, event: PendingInputEvent, heard: Heard) -> None:
        request = OperatorRequest(event, heard.text, heard.speaker_id or event.actor_id)
        ctx = self.kit.context(event.room_id, event.channel_id, event.channel_type)
        await self.kit.hooks.observe(HookTrigger.ON_OPERATOR_REQUESTED, request, ctx)

    async def aclose(self) -> None:
        """Stop every dialogue still running (the requests stay as they are). Idempotent.

        Cancellation: the dialogues are cancelled first; cancelling stops only the wait.
        """
        tasks = list(self._dialogues)
        for task in tasks:
            task.cancel("responder closed")
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
