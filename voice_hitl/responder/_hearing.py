"""`understand_heard`: what a person said, understood, with the recogniser's doubts applied.

`understand` reads words; a `Heard` also says how sure the recogniser was of them. An answer
whose calibrated confidence falls below the floor is not taken (the person is asked again),
and the answer carries the words as heard (absent when the recogniser had only a grammar
phrase) and the lower of the two confidences.

A yes whose words the audio supports *less* than one of their acoustic near-misses ("confirm"
written for a spoken "conform": `Heard.competition` with a negative gap) is no yes at any
tier: the person is asked again. (The high tier asks for a wider margin: `weigh_yes`.)
"""

from __future__ import annotations

from dataclasses import replace

from .._checks import probability
from ..speech import Answer, AnswerSpec, MetaAnswer, NoMatch, NoMatchReason, Understood
from ..speech import understand as understand_text
from ._call_line import Heard

__all__ = ["DEFAULT_MIN_CONFIDENCE", "understand_heard"]

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
