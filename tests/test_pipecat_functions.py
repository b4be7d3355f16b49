"""The human-input tools on a real (offline) Pipecat pipeline: answered, interrupted, the
pipeline ended or cancelled mid-question, bad arguments, the handler's own timeout."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pipecat")

from doors import Observed, human_tools
from pipecat.frames.frames import EndFrame, InterruptionFrame, LLMContextFrame
from pipecat_rig import FakeLLM, Running, Sink

from providers.pipecat import (
    CALL_INTERRUPTED,
    PIPELINE_CANCELLED,
    PIPELINE_ENDED,
    human_input_functions,
)
from providers.pipecat._functions import _as_json_value
from voice_hitl import VoiceKit


async def test_answered_question_reaches_the_model_and_is_reported() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    human = human_tools()
    llm = FakeLLM()
    bridge = human_input_functions(llm, human, kit=kit, room_id="CA1", actor=lambda: "+1555")
    assert [t.name for t in bridge.tools.standard_tools] == ["AskUserQuestion", "ConfirmAction"]
    async with Running(llm) as pipeline:
        await pipeline.call("ConfirmAction", "c1", action="refund 20 dollars")
        request = await observed.requests.get()
        assert (request.room_id, request.actor_id, request.tool_call_id) == ("CA1", "+1555", "c1")
        assert human.handler.resolve(request.pending_id, '{"answer": true}')
        result = await pipeline.sink.result("c1")
        assert result.result == {"answer": True}  # the object, not a string holding JSON
        report = await observed.reports.get()
        assert (report.outcome, report.door, report.delivered) == ("ok", "provider", True)
    await kit.aclose()


async def _pending(kit: VoiceKit, observed: Observed, pipeline: Running, call_id: str) -> str:
    await pipeline.call("AskUserQuestion", call_id, question="Which account?")
    return (await observed.requests.get()).pending_id


async def test_pipeline_cancelled_mid_question_withdraws_it() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    human = human_tools()
    llm = FakeLLM()
    bridge = human_input_functions(llm, human, kit=kit)
    async with Running(llm) as pipeline:
        pending_id = await _pending(kit, observed, pipeline, "c1")
        await pipeline.worker.cancel()  # the caller hung up
        await pipeline.finished()
    report = await observed.reports.get()
    assert (report.outcome, report.error_detail) == ("cancelled", PIPELINE_CANCELLED)
    assert not human.handler.resolve(pending_id, "too late")
    assert bridge.open_calls == []
    await kit.aclose()


async def test_pipeline_ended_mid_question_withdraws_it() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    llm = FakeLLM()
    human_input_functions(llm, human_tools(), kit=kit)
    async with Running(llm) as pipeline:
        await _pending(kit, observed, pipeline, "c1")
        await pipeline.worker.queue_frame(EndFrame())
        await pipeline.finished()
    report = await observed.reports.get()
    assert (report.outcome, report.error_detail) == ("cancelled", PIPELINE_ENDED)
    await kit.aclose()


async def test_interruption_withdraws_the_question_and_the_pipeline_goes_on() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    human = human_tools()
    llm = FakeLLM()
    human_input_functions(llm, human, kit=kit)
    async with Running(llm) as pipeline:
        pending_id = await _pending(kit, observed, pipeline, "c1")
        await pipeline.worker.queue_frame(InterruptionFrame())
        report = await observed.reports.get()
        assert (report.outcome, report.error_detail) == ("cancelled", CALL_INTERRUPTED)
        assert not human.handler.resolve(pending_id, "too late")
        # The next question is served as usual.
        second = await _pending(kit, observed, pipeline, "c2")
        assert human.handler.resolve(second, "savings")
        assert (await pipeline.sink.result("c2")).result == "savings"
    await kit.aclose()


async def test_not_withdrawn_on_interruption_when_asked_to_keep_it() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    human = human_tools()
    llm = FakeLLM()
    bridge = human_input_functions(llm, human, kit=kit, cancel_on_interruption=False)
    async with Running(llm) as pipeline:
        pending_id = await _pending(kit, observed, pipeline, "c1")
        await pipeline.worker.queue_frame(InterruptionFrame())
        await pipeline.call("AskUserQuestion", "c2", question="And the amount?")
        await observed.requests.get()  # the pipeline went on; the first call is still open
        assert "c1" in bridge.open_calls
        assert human.handler.resolve(pending_id, "checking")
        assert (await pipeline.sink.result("c1")).result == "checking"
    await kit.aclose()


async def test_bad_arguments_fail_at_the_gate() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    llm = FakeLLM()
    human_input_functions(llm, human_tools(), kit=kit)
    async with Running(llm) as pipeline:
        await pipeline.call("ConfirmAction", "c1", wrong="field")
        result = await pipeline.sink.result("c1")
        assert "error" in result.result
        report = await observed.reports.get()
        assert report.outcome == "failed" and observed.requests.empty()
    await kit.aclose()


async def test_handler_timeout_not_pipecats() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    llm = FakeLLM(function_call_timeout_secs=0.05)  # would cut a person off
    human_input_functions(llm, human_tools(timeout=0.3), kit=kit)
    async with Running(llm) as pipeline:
        await pipeline.call("AskUserQuestion", "c1", question="Which account?")
        result = await pipeline.sink.result("c1")
        assert result.result == {
            "error": "Human input timed out after 0.3s for tool 'AskUserQuestion'"
        }
        assert (await observed.reports.get()).outcome == "failed"
    await kit.aclose()


def test_needs_tool_definitions() -> None:
    from voice_hitl import HumanInputToolHandler

    with pytest.raises(ValueError, match="tool_definitions"):
        human_input_functions(FakeLLM(), HumanInputToolHandler({"AskUserQuestion"}))


async def test_aclose_withdraws_open_calls() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    llm = FakeLLM()
    bridge = human_input_functions(llm, human_tools(), kit=kit)
    async with Running(llm) as pipeline:
        await _pending(kit, observed, pipeline, "c1")
        await bridge.aclose("the call moved to an operator")
        report = await observed.reports.get()
        assert report.error_detail == "the call moved to an operator"
    await kit.aclose()


async def test_the_model_reads_the_answer_object_in_pipecats_own_context() -> None:
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMAssistantAggregator

    kit = VoiceKit()
    observed = Observed.on(kit)
    human = human_tools()
    llm = FakeLLM()
    human_input_functions(llm, human, kit=kit)
    context = LLMContext()
    upstream = Sink()  # sees what the aggregator sends back to the LLM service
    aggregator = LLMAssistantAggregator(context)
    async with Running(llm, first=(upstream,), after=(aggregator,)) as pipeline:
        await pipeline.call("ConfirmAction", "c1", action="refund")
        request = await observed.requests.get()
        assert human.handler.resolve(request.pending_id, '{"answer": true}')
        await observed.reports.get()
        await upstream.first(LLMContextFrame)  # the result is in: the model runs again
    (tool,) = [m for m in context.get_messages() if m.get("role") == "tool"]
    assert (tool["tool_call_id"], json.loads(tool["content"])) == ("c1", {"answer": True})
    for free_text in ("0", "savings"):  # plain answers stay text (never "COMPLETED")
        assert _as_json_value(free_text) == free_text
    await kit.aclose()


def test_the_schema_offered_keeps_additional_properties_false() -> None:
    from pipecat.adapters.llm.services.open_ai_adapter import OpenAILLMAdapter

    bridge = human_input_functions(FakeLLM(), human_tools())
    offered = OpenAILLMAdapter().to_provider_tools_format(bridge.tools)
    for tool, definition in zip(offered, human_tools().tool_definitions, strict=True):
        function = tool["function"]
        assert function["name"] == definition.name
        assert function["parameters"] == definition.parameters
        assert function["parameters"]["additionalProperties"] is False
