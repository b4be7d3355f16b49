"""``LocalCascadeProvider``: a realtime provider that runs fully offline."""

from __future__ import annotations

from voice_hitl.speech.asr import Recognizer
from voice_hitl.voice._provider import ProviderCapabilities, RealtimeProvider, SessionConfig

from ._session import LocalCascadeSession
from ._synth import Synthesizer, default_synthesizer

__all__ = ["LocalCascadeProvider"]


class LocalCascadeProvider(RealtimeProvider):
    """Offline speech in, speech out: endpointing and a local recogniser hear the caller, a
    local synthesiser speaks for the agent. It has no language model of its own: give the
    channel a ``reasoning_backend`` to take the agent's turns.

    Args:
        recognizer: Hears the caller (default: the embedded default recogniser, Whisper
            tiny.en behind a speech gate, from the ``speech`` extra).
        synthesizer: The agent's voice (default: piper, else espeak-ng).
    """

    capabilities = ProviderCapabilities(
        can_say=True,
        speaker_attribution=False,
        tool_call_cancellation=False,
        user_transcription=True,
    )

    def __init__(
        self, *, recognizer: Recognizer | None = None, synthesizer: Synthesizer | None = None
    ) -> None:
        self._recognizer = recognizer
        self._synthesizer = synthesizer

    async def _default_recognizer(self) -> Recognizer:
        from voice_hitl.speech.asr import load_recognizer

        # Loads the acoustic model off the event loop and starts the decoding worker now
        # rather than at the caller's first words.
        return await load_recognizer()

    async def connect(self, config: SessionConfig) -> LocalCascadeSession:
        """Open an offline session (loads nothing until audio arrives).

        Raises:
            RuntimeError: No synthesiser is installed (install the ``speech`` extra).

        Cancellation: safe.
        """
        if self._recognizer is None:
            self._recognizer = await self._default_recognizer()
        if self._synthesizer is None:
            self._synthesizer = default_synthesizer()
        session = LocalCascadeSession(config, self._recognizer, self._synthesizer)
        session.start()
        return session
