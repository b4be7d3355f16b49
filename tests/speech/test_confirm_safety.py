"""Property: for a confirm question, no transcript that lacks an affirmative word, and none
that negates one, is ever taken as yes.

The word lists here are written independently of the implementation's vocabulary: every word
that can make up an affirmative phrase is listed, and negation is detected on the raw text
(including contractions such as "don't" and "dont"), so the property does not just restate the
code.
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from voice_hitl.speech import Answer, AnswerSpec, understand

SPEC = AnswerSpec.confirm("Shall I send the payment?")

AFFIRMATIVE_WORDS = {
    "yes", "yeah", "yep", "yup", "ya", "yah", "yea", "sure", "ok", "okay", "alright", "all",
    "right", "affirmative", "absolutely", "definitely", "certainly", "correct", "go", "ahead",
    "proceed", "do", "it", "confirm", "confirmed", "agree", "agreed", "fine", "course",
    "sounds", "good", "huh", "hmm", "mhm", "mmhmm", "uhhuh", "approve", "approved", "indeed",
    "exactly", "please", "for", "that", "is", "that's", "of", "granted",
}  # fmt: skip
NEGATIONS = {"no", "not", "never", "nope", "nah", "negative", "nay", "cannot"}
NEGATED_CONTRACTION = re.compile(r"n[\u2019']t\b|\b(dont|cant|wont|isnt|didnt|doesnt|aint)\b")

VOCAB = sorted(
    AFFIRMATIVE_WORDS
    | NEGATIONS
    | {
        "don't", "dont", "can't", "won't", "isn't", "didn't", "wait", "maybe", "um", "uh",
        "i", "think", "mean", "actually", "sorry", "the", "money", "send", "cancel", "way",
        "problem", "red", "blue", "transfer", "payment", "stop", "hold", "on", "what", "why",
        "nothing", "none", "without", "wrong", "uh-huh", "mm-hmm", "oh",
    }
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", ", ", ". ", " — ", "! ", "? ", "-", " ... "])


def lacks_affirmative(text: str) -> bool:
    words = re.findall(r"[a-z]+", text.lower())
    return not any(w in AFFIRMATIVE_WORDS for w in words)


def has_negation(text: str) -> bool:
    lowered = text.lower()
    words = re.findall(r"[a-z]+", lowered)
    return any(w in NEGATIONS for w in words) or NEGATED_CONTRACTION.search(lowered) is not None


def is_yes(text: str) -> bool:
    result = understand(text, SPEC)
    return isinstance(result, Answer) and result.value is True


@st.composite
def utterances(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    text = "".join(w + s for w, s in zip(words, seps, strict=True)).strip()
    return text.upper() if draw(st.booleans()) else text


@settings(max_examples=3000, deadline=None)
@given(utterances())
@example("absolutely not")
@example("yes, I mean no")
@example("no, I mean yes")
@example("not okay")
@example("don't go ahead")
@example("sure, don't")
@example("YES NO")
@example("yes can't")
def test_negated_or_affirmative_free_transcripts_are_never_yes(text: str) -> None:
    if lacks_affirmative(text) or has_negation(text):
        assert not is_yes(text), text


@settings(max_examples=2000, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_is_never_yes_without_an_affirmative(text: str) -> None:
    if lacks_affirmative(text) or has_negation(text):
        assert not is_yes(text), text


@settings(max_examples=500, deadline=None)
@given(utterances(), utterances())
def test_prefixing_a_negation_never_yields_yes(a: str, b: str) -> None:
    assert not is_yes(f"{a} not {b}")
    assert not is_yes(f"no {a} {b}")
    assert not is_yes(f"{a} don't {b}")


DEFERRING = [
    "let me think", "let me think about it", "let me see", "let me check", "let me confirm",
    "give me a minute", "one moment", "just a second", "I need to think about it",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(utterances(), st.sampled_from(DEFERRING), utterances())
@example("right,", "let me think about it", "")
@example("alright,", "let me confirm", "alright")
@example("okay", "let me see", "")
def test_a_deferral_is_never_yes(before: str, deferral: str, after: str) -> None:
    """A person who asks for time has not said yes, whatever words come around it."""
    assert not is_yes(f"{before} {deferral} {after}")
    assert not is_yes(f"{deferral}, yes")
