"""Recovering tool calls spoken as ``call:NAME{...}``: parsing edge cases and a property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voice_hitl import AITool, recover_tool_call

TOOLS = {
    "ConfirmAction": AITool(
        name="ConfirmAction",
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string"},
                "amount": {"type": "integer"},
                "rate": {"type": "number"},
                "urgent": {"type": "boolean"},
            },
        },
    ),
    "AskUserQuestion": AITool(
        name="AskUserQuestion",
        parameters={"type": "object", "properties": {"question": {"type": "string"}}},
    ),
}


def test_basic_call_with_speech_before() -> None:
    call = recover_tool_call(
        "Okay, one moment. call:ConfirmAction{action: transfer, amount: 500}", TOOLS
    )
    assert call is not None
    assert call.spoken_text == "Okay, one moment."
    assert call.name == "ConfirmAction"
    assert call.arguments == {"action": "transfer", "amount": 500}
    assert call.call_id.startswith("recovered-") and len(call.call_id) == len("recovered-") + 12


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("urgent: true, rate: 2.5", {"urgent": True, "rate": 2.5}),
        ("urgent: no", {"urgent": False}),
        ("amount: lots", {"amount": "lots"}),  # left as text so the schema rejects it
        ('action: "pay rent"', {"action": "pay rent"}),
        ("", {}),
    ],
)
def test_values_coerced_to_schema_types(body: str, expected: dict[str, object]) -> None:
    call = recover_tool_call(f"call:ConfirmAction{{{body}}}", TOOLS)
    assert call is not None and call.arguments == expected


def test_commas_and_colons_inside_a_text_value_stay_in_it() -> None:
    call = recover_tool_call(
        "call:AskUserQuestion{question: Which one, note: red or blue?}.", TOOLS
    )
    assert call is not None
    assert call.arguments == {"question": "Which one, note: red or blue?"}


def test_undeclared_key_is_kept() -> None:
    call = recover_tool_call("call:ConfirmAction{amount: 5, sneaky: yes}", TOOLS)
    assert call is not None and call.arguments == {"amount": 5, "sneaky": "yes"}
    first = recover_tool_call("call:ConfirmAction{sneaky: yes}", TOOLS)
    assert first is not None and first.arguments == {"sneaky": "yes"}


@pytest.mark.parametrize(
    "text",
    [
        "I will call:ConfirmAction later, okay?",  # not at the end, no braces
        "call:Unknown{a: 1}",  # not in the toolset
        "call:ConfirmAction{action: pay} and then more words",  # not the last sentence
        "recall:ConfirmAction{action: pay}",  # part of another word
        "call:ConfirmAction{just some words}",  # body does not start with a key
        "Please call: ConfirmAction now",
        "",
    ],
)
def test_no_recovery(text: str) -> None:
    assert recover_tool_call(text, TOOLS) is None


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_never_fires_on_ordinary_speech(text: str) -> None:
    # Ordinary speech has no "call:" marker; whatever else it contains, nothing is recovered.
    speech = text.replace("call:", "call ")
    assert recover_tool_call(speech, TOOLS) is None


@settings(max_examples=200)
@given(
    st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=80),
    st.sampled_from(sorted(TOOLS)),
)
def test_never_fires_unless_the_text_ends_with_the_call(prefix: str, name: str) -> None:
    text = f"call:{name}{{}} {prefix}x"
    if not text.rstrip().endswith("}"):
        assert recover_tool_call(text, TOOLS) is None
