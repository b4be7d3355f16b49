"""``PipecatLine``: a Pipecat pipeline as the call line of voice-hitl's spoken dialogue.

Put the processor right after the pipeline's STT service. A ``VoiceResponder`` serving the
:class:`~providers.pipecat.PipecatHumanInput` then speaks each question with the pipeline's
TTS (a ``TTSSpeakFrame``, kept out of the LLM context) and hears the answer from the
pipeline's final transcriptions and keypad frames. While a question is open, those are
answers, not turns: they go to the dialogue and not on to the LLM.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import (
    Frame,
    InputDTMFFrame,
    OutputAudioRawFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from voice_hitl import PendingInputEvent
from voice_hitl.human._answer_json import answer_json
from voice_hitl.responder._call_line import Heard, Inbox
from voice_hitl.speech import Answer, AnswerSpec
from voice_hitl.speech.asr import Recognizer
from voice_hitl.voice._provider_events import PCM16

if TYPE_CHECKING:
    from ._functions import PipecatHumanInput

__all__ = ["PipecatLine"]


class PipecatLine(FrameProcessor):
    """The call line of a Pipecat pipeline (see the module doc); one caller per pipeline.

    Args:
        human_input: The registration whose questions this line asks
            (``human_input.line`` is set to this line).
    """

    def __init__(self, human_input: PipecatHumanInput) -> None:
        super().__init__()
        self.human_input = human_input
        human_input.line = self
        self._inboxes: list[Inbox] = []

    # -- CallLine -------------------------------------------------------------------------

    @property
    def can_say(self) -> bool:
        """True: the pipeline's TTS speaks any text."""
        return True

    async def say(self, text: str) -> None:
        """Speak ``text`` with the pipeline's TTS (not added to the LLM context).

        Cancellation: safe; speech may already have started.
        """
        await self.push_frame(TTSSpeakFrame(text, append_to_context=False))

    async def play_audio(self, pcm16: PCM16, sample_rate: int) -> None:
        """Play ready-made speech into the pipeline's output.

        Cancellation: safe.
        """
        await self.push_frame(OutputAudioRawFrame(pcm16.tobytes(), sample_rate, 1))

    async def stop_speaking(self) -> None:
        """Nothing to do: the pipeline's own interruption handling stops the bot when the
        caller talks over it.

        Cancellation: safe.
        """

    def deliver(
        self,
        event: PendingInputEvent,
        answer: Answer,
        actor_id: str | None,
        *,
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Resolve the request with the answer's JSON (with ``evidence``, when given)."""
        human = self.human_input.gate.human_input
        if human is None:
            return False
        return human.handler.resolve(
            event.pending_id, answer_json(answer, actor_id, evidence), by=actor_id, via=answer.via
        )

    def listen(
        self,
        addressed: Collection[str] | None = None,
        expecting: AnswerSpec | None = None,
        recognizer: Recognizer | None = None,
    ) -> Inbox:
        """Hear the caller's final transcriptions and keys until the inbox closes (the
        pipeline's STT does the hearing: ``expecting`` and ``recognizer`` are not used)."""
        inbox = Inbox(None)
        self._inboxes.append(inbox)
        inbox.on_close(lambda: self._inboxes.remove(inbox) if inbox in self._inboxes else None)
        return inbox

    # -- frames ---------------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        """True while a question is open on this line."""
        return bool(self._inboxes)

    def _offer(self, heard: Heard) -> None:
        for inbox in list(self._inboxes):
            inbox.offer(heard)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Hand answers to the open dialogue; pass everything else on.

        Cancellation: safe (Pipecat's own frame task).
        """
        await super().process_frame(frame, direction)
        if self._inboxes and direction is FrameDirection.DOWNSTREAM:
            if isinstance(frame, TranscriptionFrame):
                self._offer(Heard("speech", frame.text, None))
                return  # an answer to the question, not a turn for the LLM
            if isinstance(frame, InputDTMFFrame):
                self._offer(Heard("dtmf", str(frame.button.value), None))
                return
            if isinstance(frame, UserStartedSpeakingFrame):
                self._offer(Heard("speech_started"))
        await self.push_frame(frame, direction)
