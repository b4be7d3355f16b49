"""voice-hitl's responder on a Pipecat pipeline: the question spoken with the pipeline's TTS,
the answer heard from its transcriptions or keypad frames (and kept from the LLM)."""

from __future__ import annotations

import pytest

pytest.importorskip("pipecat")

from doors import human_tools
from pipecat.audio.dtmf.types import KeypadEntry
from pipecat.frames.frames import InputDTMFFrame, TranscriptionFrame, TTSSpeakFrame
from pipecat_rig import FakeLLM, Running

from providers.pipecat import PipecatLine, human_input_functions
from voice_hitl import VoiceKit, VoiceResponder


async def test_question_spoken_and_answer_heard_on_the_pipeline() -> None:
    kit = VoiceKit()
    llm = FakeLLM()
    bridge = human_input_functions(llm, human_tools(), kit=kit, cancel_on_interruption=False)
    line = PipecatLine(bridge)
    responder = VoiceResponder(kit)
    responder.serve(bridge)
    async with Running(llm, first=(line,)) as pipeline:
        await pipeline.call("ConfirmAction", "c1", action="refund 20 dollars")
        spoken = await pipeline.sink.first(TTSSpeakFrame)
        assert "refund 20 dollars" in spoken.text and spoken.append_to_context is False
        said = TranscriptionFrame("yes please, I confirm", "caller", "t1", finalized=True)
        await pipeline.worker.queue_frame(said)
        # no confidence or audio figures on this line: the challenge is asked once more
        while sum(isinstance(f, TTSSpeakFrame) for f in pipeline.sink.frames) < 2:
            pipeline.sink.changed.clear()
            await pipeline.sink.changed.wait()
        again = TranscriptionFrame("confirm", "caller", "t1b", finalized=True)
        await pipeline.worker.queue_frame(again)
        answer = (await pipeline.sink.result("c1")).result  # the object itself
        assert (answer["answer"], answer["via"]) == (True, "speech")
        assert not any(isinstance(f, TranscriptionFrame) for f in pipeline.sink.frames)
        assert not line.listening
        # With no question open, what the caller says is a turn for the LLM again.
        await pipeline.worker.queue_frame(TranscriptionFrame("thanks", "caller", "t2"))
        assert (await pipeline.sink.first(TranscriptionFrame)).text == "thanks"
    await responder.aclose()
    await kit.aclose()


async def test_keypad_answer_from_the_pipeline() -> None:
    kit = VoiceKit()
    llm = FakeLLM()
    bridge = human_input_functions(llm, human_tools(), kit=kit, cancel_on_interruption=False)
    PipecatLine(bridge)
    line = bridge.line
    assert line is not None
    responder = VoiceResponder(kit)
    responder.serve(bridge)
    async with Running(llm, first=(line,)) as pipeline:
        await pipeline.call("ConfirmAction", "c1", action="close the account")
        await pipeline.sink.first(TTSSpeakFrame)
        await pipeline.worker.queue_frame(InputDTMFFrame(KeypadEntry.TWO))
        answer = (await pipeline.sink.result("c1")).result  # the object itself
        assert (answer["answer"], answer["via"]) == (False, "dtmf")
    await responder.aclose()
    await kit.aclose()
