"""`understand_heard`: what a person said, understood, with the recogniser's doubts applied.

`understand` reads words; a `Heard` also says how sure the recogniser was of them. An answer
whose calibrated confidence falls below the floor is not taken (the person is asked again),
and the answer carries the words as heard (absent when the recogniser had only a grammar
phrase) and the lower of the two confidences.

A yes whose words the audio supports *less* than one of their acoustic near-misses ("confirm"
written for a spoken "conform": `Heard.competition` with a negative gap) is no yes at any
tier: the person is asked again. (The high tier asks for a wider margin: `weigh_yes`.)

A code challenge (``EvidencePolicy(challenge="code")``) is answered with digits, which a
confirm question does not read as yes: `code_attempt` makes an utterance that says digits the
yes candidate, for `weigh_yes` to hold to the code.
"""

from __future__ import annotations

from dataclasses import replace

from .._checks import probability
from ..speech import Answer, AnswerSpec, MetaAnswer, NoMatch, NoMatchReason, Understood
from ..speech import understand as understand_text
from ..speech._code import digits_in
from ._call_line import Heard
from ._risk import readings_of

__all__ = ["DEFAULT_MIN_CONFIDENCE", "code_attempt", "says_digits", "understand_heard"]

DEFAULT_MIN_CONFIDENCE = 0.5
"""Below this calibrated confidence an utterance re-prompts instead of answering."""


def understand_heard(
    heard: Heard, spec: AnswerSpec, *, min_confidence: float = DEFAULT_MIN_CONFIDENCE
) -> Understood:
    """Understand a final utterance (``heard.kind == "speech"``) for ``spec``.

    Returns:
        `understand`'s result, with ``transcript`` set to the words as heard ("" when not
        known verbatim) and ``confidence`` lowered to the recogniser's calibrated confidence;
        `NoMatch` (``UNCERTAIN``) when that confidence is below ``min_confidence``.
    """
    probability("min_confidence", min_confidence)
    understood = understand_text(heard.text, spec)
    if isinstance(understood, NoMatch):
        return understood
    said = heard.transcript if heard.transcript is not None else ""
    recogniser = heard.confidence
    if recogniser is not None and recogniser < min_confidence:
        return NoMatch(
            NoMatchReason.UNCERTAIN,
            said,
            f"recogniser confidence {recogniser:.2f} is below {min_confidence:.2f}",
        )
    confidence = understood.confidence if recogniser is None else min(
        understood.confidence, recogniser
    )
    rival = heard.competition
    yes = isinstance(understood, Answer) and understood.value is True
    if yes and rival is not None and rival.gap < 0:
        return NoMatch(
            NoMatchReason.UNCERTAIN,
            said,
            f"it sounded more like {rival.competitor!r} than {rival.heard!r}",
        )
    if isinstance(understood, Answer):
        return replace(understood, transcript=said, confidence=confidence)
    assert isinstance(understood, MetaAnswer)
    return replace(understood, transcript=said, confidence=confidence)


def code_attempt(understood: Understood, heard: Heard) -> Understood:
    """Under a code challenge, what ``heard`` (understood as ``understood``) offers: an
    utterance not understood (`NoMatch`) that says digits in any reading is a yes candidate
    (`weigh_yes` then holds it to the code); a yes, a no and a `MetaAnswer` stay as they are.
    """
    if not isinstance(understood, NoMatch) or heard.kind != "speech":
        return understood
    if not says_digits(heard):
        return understood
    said = heard.transcript if heard.transcript is not None else heard.text
    confidence = 1.0 if heard.confidence is None else heard.confidence
    return Answer(True, "yes", confidence, said)


def says_digits(heard: Heard) -> bool:
    """Whether any reading of ``heard`` says digits: under a code challenge, an attempt at
    the code (the call's dialogue and the conference desk both weigh it as a yes)."""
    return any(digits_in(reading) for reading in readings_of(heard))
