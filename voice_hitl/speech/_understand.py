"""`understand`: turn a transcript into an `Answer`, a `MetaAnswer` or a `NoMatch`.

Steps: normalise and tokenise (contractions expanded, "uh huh" kept as a yes), drop fillers,
look for a meta-intent (cancel / repeat / operator) in the caller's last self-correction,
then read the answer the question's kind expects. An answer and a meta-intent in the same
breath ("yes, cancel") is `NoMatch(CONTRADICTORY)`.
"""

from __future__ import annotations

from ._answer import Answer, MetaAnswer, MetaIntent, NoMatch, NoMatchReason, Understood, Via
from ._choices import label_spans, understand_choices
from ._confirm import CONFIRM_MARKERS, holds_yes, understand_confirm
from ._numbers import parse_digits, parse_numbers
from ._spec import AnswerKind, AnswerSpec
from ._text import CORRECTION_MARKERS, find_phrase, split_corrections, strip_fillers, tokens
from ._vocab import META_PHRASES, NEGATION_WORDS, STOPWORDS

__all__ = ["affirms", "prepared_words", "understand"]

_BACKCHANNELS = {
    ("uh", "huh"): "uhhuh",
    ("mm", "hmm"): "mmhmm",
    ("mhm",): "mmhmm",
    ("all", "right"): "alright",
}
"""Phrases read as one word ("mm hmm" is one affirmative; "all right" is how Whisper spells
"alright", one agreement beside a challenge word)."""


def prepared_words(transcript: str) -> list[str]:
    """The words of ``transcript`` as `understand` reads them: tokens without fillers, with
    "mm hmm", "uh huh" and "all right" each one word."""
    toks = tokens(transcript)
    for phrase, word in _BACKCHANNELS.items():
        i = find_phrase(toks, phrase)
        while i >= 0:
            toks[i : i + len(phrase)] = [word]
            i = find_phrase(toks, phrase)
    return strip_fillers(toks)


def affirms(transcript: str) -> bool:
    """Whether ``transcript`` holds a yes, alone or beside a no ("yea, not right"), with its
    words prepared as `understand` prepares them ("mm hmm" is one affirmative)."""
    return holds_yes(prepared_words(transcript))


def _meta(toks: list[str], spec: AnswerSpec) -> tuple[MetaIntent, list[str]] | None:
    """The meta-intent in ``toks`` (not negated, not part of a choice label) and the rest."""
    covered = {i for _, s, e in label_spans(toks, spec.choices) for i in range(s, e)}
    best: tuple[MetaIntent, int, int] | None = None
    for intent, phrases in META_PHRASES.items():
        for phrase in phrases:
            i = find_phrase(toks, phrase)
            while i >= 0:
                span = range(i, i + len(phrase))
                negated = any(t in NEGATION_WORDS for t in toks[max(0, i - 2) : i])
                longer = best is None or len(phrase) > best[2] - best[1]
                if longer and not negated and not covered.intersection(span):
                    best = (intent, i, i + len(phrase))
                i = find_phrase(toks, phrase, i + 1)
    if best is None:
        return None
    intent, start, end = best
    return intent, toks[:start] + toks[end:]


def _answer(toks: list[str], spec: AnswerSpec, transcript: str, via: Via) -> Answer | NoMatch:
    kind = spec.kind
    if kind is AnswerKind.CONFIRM:
        return understand_confirm(toks, transcript, via)
    if kind is AnswerKind.CHOICES:
        return understand_choices(toks, spec.choices, transcript, via)
    if kind is AnswerKind.NUMBER:
        return _number(toks, spec, transcript, via)
    if kind is AnswerKind.DIGITS:
        return _digits(toks, spec, transcript, via)
    return Answer(transcript.strip(), None, 0.9, transcript, via)


def _number(toks: list[str], spec: AnswerSpec, transcript: str, via: Via) -> Answer | NoMatch:
    for segment in reversed(split_corrections(toks)):
        nums = parse_numbers(segment)
        if not nums:
            continue
        if len(set(nums)) > 1:
            heard = ", ".join(str(n) for n in nums)
            return NoMatch(NoMatchReason.AMBIGUOUS, transcript, f"several numbers heard: {heard}")
        value = nums[0]
        problem = spec.number_problem(value)
        if problem is not None:
            return NoMatch(NoMatchReason.OUT_OF_RANGE, transcript, problem)
        return Answer(value, None, 0.9, transcript, via)
    return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, "no number was heard")


def _digits(toks: list[str], spec: AnswerSpec, transcript: str, via: Via) -> Answer | NoMatch:
    for segment in reversed(split_corrections(toks)):
        digits = parse_digits(segment)
        if not digits:
            continue
        problem = spec.digits_problem(digits)
        if problem is not None:
            return NoMatch(NoMatchReason.WRONG_LENGTH, transcript, f"heard {problem}")
        return Answer(digits, None, 0.9, transcript, via)
    return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, "no digits were heard")


def understand(transcript: str, spec: AnswerSpec, *, via: Via = "speech") -> Understood:
    """Understand what the caller said in answer to a question.

    Args:
        transcript: what the caller said (a recogniser's best hypothesis, or typed text).
        spec: what answer the question expects.
        via: recorded on the result; ``"speech"`` unless the text was typed.

    Returns:
        `Answer` when the caller answered, `MetaAnswer` when they asked to cancel, hear the
        question again or reach a person, and `NoMatch` (with a reason) when the answer is
        missing, ambiguous, contradictory or out of range. It never guesses.
    """
    toks = prepared_words(transcript)
    if not toks:
        return NoMatch(NoMatchReason.EMPTY, transcript, "nothing but fillers was heard")
    markers = CONFIRM_MARKERS if spec.kind is AnswerKind.CONFIRM else CORRECTION_MARKERS
    segments = split_corrections(toks, markers) or [toks]
    last = segments[-1]
    meta = _meta(last, spec)
    if meta is not None:
        intent, rest = meta
        if spec.kind is AnswerKind.FREE_TEXT:
            content = [t for t in rest if t not in STOPWORDS]
            if len(content) > 1:
                return _answer(toks, spec, transcript, via)
            return MetaAnswer(intent, 0.8 if content else 0.9, transcript, via)
        if rest and isinstance(_answer(rest, spec, transcript, via), Answer):
            return NoMatch(
                NoMatchReason.CONTRADICTORY, transcript, f"an answer and a {intent} request"
            )
        return MetaAnswer(intent, 0.9, transcript, via)
    return _answer(toks, spec, transcript, via)
