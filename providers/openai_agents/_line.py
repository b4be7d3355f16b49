"""``AgentsLine``: an OpenAI Agents SDK realtime session as a call line a responder speaks on.

It speaks by asking the session's model for a response whose instructions are the question
word for word, stops speaking by interrupting, and hears the caller from the session's events:
final input transcriptions as speech, ``input_audio_buffer.dtmf_event_received`` (a SIP call's
keypad) as keys, ``input_audio_buffer.speech_started`` as the barge-in signal.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from agents.realtime.model_events import RealtimeModelEvent
from agents.realtime.model_inputs import RealtimeModelSendRawMessage

from voice_hitl import Heard, HumanInputToolHandler, Inbox, PendingInputEvent, answer_json
from voice_hitl.speech import Answer, AnswerSpec

if TYPE_CHECKING:
    import numpy as np
    from agents.realtime import RealtimeSession
    from numpy.typing import NDArray

    from voice_hitl.speech.asr._protocol import Recognizer

__all__ = ["AgentsLine"]

logger = logging.getLogger("providers.openai_agents")

_DTMF = "input_audio_buffer.dtmf_event_received"
_SPEECH_STARTED = "input_audio_buffer.speech_started"


class AgentsLine:
    """The caller of one Agents SDK realtime session, as a spoken dialogue sees them.

    Args:
        human: The human-input tools whose requests this line answers.
        caller: The caller's id (what answers are attributed to).
        instructions: Put before "Say exactly this..." in the spoken question's response.
    """

    def __init__(
        self, human: HumanInputToolHandler, caller: str | None, instructions: str = ""
    ) -> None:
        self.session: RealtimeSession | None = None
        """The session it speaks on (set when the bridge attaches one)."""
        self.human = human
        self.caller = caller
        self.instructions = instructions
        self._inboxes: list[Inbox] = []

    @property
    def can_say(self) -> bool:
        """True: the session's model speaks the text it is given."""
        return True

    async def play_audio(self, pcm16: NDArray[np.int16], sample_rate: int) -> None:
        """Not available: the model speaks the questions itself (``can_say`` is True).

        Raises:
            NotImplementedError: Always.

        Cancellation: safe.
        """
        raise NotImplementedError("an Agents SDK session speaks text; it takes no audio to play")

    async def say(self, text: str) -> None:
        """Have the session's model speak ``text`` word for word.

        Cancellation: safe; the request may already be sent.
        """
        lead = f"{self.instructions}\n\n" if self.instructions else ""
        instructions = f"{lead}Say exactly this, word for word, and nothing else:\n{text}"
        body = {"response": {"instructions": instructions}}
        message = RealtimeModelSendRawMessage(
            message={"type": "response.create", "other_data": body}
        )
        await self._session().model.send_event(message)

    async def stop_speaking(self) -> None:
        """Interrupt the model's speech (barge-in).

        Cancellation: safe.
        """
        await self._session().interrupt()

    def _session(self) -> RealtimeSession:
        if self.session is None:
            raise RuntimeError("no Agents SDK session is attached to this line")
        return self.session

    def deliver(
        self,
        event: PendingInputEvent,
        answer: Answer,
        actor_id: str | None,
        *,
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Resolve the request with the answer's JSON."""
        return self.human.handler.resolve(
            event.pending_id, answer_json(answer, actor_id, evidence), by=actor_id, via=answer.via
        )

    def listen(
        self,
        addressed: Collection[str] | None = None,
        expecting: AnswerSpec | None = None,
        recognizer: Recognizer | None = None,
    ) -> Inbox:
        """An inbox of what the caller says or keys until it is closed."""
        inbox = Inbox(addressed)
        self._inboxes.append(inbox)
        inbox.on_close(lambda: self._inboxes.remove(inbox))
        return inbox

    def hear(self, event: RealtimeModelEvent) -> None:
        """Offer the open inboxes what a model event says about the caller."""
        if not self._inboxes:
            return
        heard: Heard | None = None
        if event.type == "input_audio_transcription_completed":
            heard = Heard("speech", event.transcript, self.caller, transcript=event.transcript)
        elif event.type == "raw_server_event" and isinstance(event.data, Mapping):
            kind = event.data.get("type")
            if kind == _DTMF and isinstance(event.data.get("event"), str):
                heard = Heard("dtmf", event.data["event"], self.caller)
            elif kind == _SPEECH_STARTED:
                heard = Heard("speech_started", "", self.caller)
        if heard is not None:
            for inbox in tuple(self._inboxes):
                inbox.offer(heard)
