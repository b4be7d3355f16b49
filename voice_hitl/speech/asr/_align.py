"""Alignment scoring: how well does the audio support a *given* text?

Free transcription writes what the decoder finds likeliest, and tiny.en often writes a word
beside the challenge word that nobody said ("confirmed, blocked", "I confirm, yeah, last"),
so the challenge-alone rule (`said_alone`) asks a person who said "confirm" to say it again.
The Whisper decoder can also *score* a text it is given: the log-likelihood of its tokens,
each given the audio and the tokens before it, up to and including the end of the
transcript. Scoring ends with the end-of-transcript token, so "confirm" alone is a complete
reading, not a prefix of "confirm it with my wife first".

For a reading that holds a challenge word beside other words, the expected answer -- the
reading with the words that do not go with the challenge word left out, or the challenge word
on its own -- is scored against the free reading (`alone_candidates`, `supports_alone`):

* the extra words are recogniser artefacts: the forced reading scores about as well as the
  free one (often better: the end of the transcript comes right after the word);
* a person really said "confirm it with my wife first": the audio goes on after "confirm",
  the end of the transcript there is unlikely, and the forced reading scores far worse.

The likelihood alone does not separate them well enough with tiny.en: it often ends a
transcript early, and on a development probe ("confirm" followed by other words really said,
`bench/bench_align_probe.py`) the forced reading was within 1 nat in about half the
utterances. So the extra words must also be *quieter* than the challenge word over their
aligned spans (`extras_quieter_db`, the decoder's cross-attention word timing): words written
from a background talker or noise, not the person's own (`QUIETER_DB`).

A reading whose extra words include a negation or a question word is never re-read this way:
those words change what was said, and a rescue there can only be wrong in the costly
direction. Both texts are scored under the same neutral prompt (no hotwords), so neither is
favoured by the question's phrases.

`score_sync` is blocking; `WhisperRecognizer` calls it from its worker thread (never on the
event loop), holding the model's lock.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._challenge import challenge_extras
from .._text import tokens
from .._vocab import CHALLENGE_WORDS, NEGATION_WORDS

__all__ = [
    "ALONE_MARGIN",
    "QUIETER_DB",
    "extras_quieter_db",
    "word_spans_sync",
    "QUESTION_WORDS",
    "alone_candidates",
    "may_rescue",
    "score_sync",
    "supports_alone",
]

ALONE_MARGIN = 2.0
"""Nats: the forced reading may score this much below the free one and still be taken
(chosen on the development sets only; see ``bench/results_risk.txt``)."""

QUIETER_DB = 4.0
"""dB: the loudest extra word must be at least this much quieter than the challenge word (a
background talker or noise, not the person's own words)."""

QUESTION_WORDS: frozenset[str] = frozenset(
    {"why", "who", "what", "how", "when", "where", "which", "whose", "whom"}
)
"""Words that make a reading a question back: never re-read as the word alone."""


def may_rescue(reading: str, words: Collection[str] = CHALLENGE_WORDS) -> bool:
    """Whether ``reading`` is a candidate for alignment: it holds a challenge word, words
    that do not go with it (`challenge_extras`), and no negation or question word."""
    toks = tokens(reading)
    if not set(toks) & set(words):
        return False
    extras = challenge_extras(toks, words)
    if not extras:
        return False
    return not (set(toks) & (NEGATION_WORDS | QUESTION_WORDS))


def alone_candidates(reading: str, words: Collection[str] = CHALLENGE_WORDS) -> list[str]:
    """The expected answers to score for ``reading``: the reading with its extra words left
    out (its fillers, politeness and "I" kept), each challenge word it holds on its own, and
    "I" with it; each as Whisper may write it (capitalised or not, with and without a closing
    full stop: a neutral prompt finds a lower-case first word likelier), and each said alone
    by `challenge_extras`' rule."""
    toks = tokens(reading)
    extras = set(challenge_extras(toks, words))
    bare = list(dict.fromkeys(t for t in toks if t in words))
    texts = [[t for t in toks if t not in extras], *([w] for w in bare), *(["i", w] for w in bare)]
    out: list[str] = []
    for said in texts:
        if not said or challenge_extras(said, words):
            continue
        lower = " ".join("I" if t == "i" else t for t in said)
        upper = lower[0].upper() + lower[1:]
        for form in (upper + ".", upper, lower + ".", lower):
            if form not in out:
                out.append(form)
    return out


def supports_alone(forced: float, free: float, margin: float = ALONE_MARGIN) -> bool:
    """The decision rule: the forced reading (the word alone) is taken when its
    log-likelihood is at most ``margin`` nats below the free reading's.

    Raises:
        ValueError: ``margin`` is negative or not finite.
    """
    if not math.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    if not math.isfinite(forced) or not math.isfinite(free):
        return False  # nothing to compare: the reading stands
    return forced >= free - margin


def score_sync(
    model: Any, encoded: Any, texts: Sequence[str], suppress: Sequence[int]
) -> list[tuple[float, int]]:
    """Each text's log-likelihood given the encoded audio (blocking): the sum of its tokens'
    log-probabilities and of the end-of-transcript token's after them, under Whisper's plain
    transcription prompt. The caller holds the model's lock.

    Args:
        model: a faster-whisper ``WhisperModel``.
        encoded: the encoder's output for one utterance (``WhisperRecognizer.encode_sync``).
        texts: the texts to score.
        suppress: the token ids the decoder suppresses (as in free decoding).

    Returns:
        Per text, its log-likelihood (nats, <= 0) and the number of tokens scored (the
        text's and the end of the transcript); ``(-inf, 0)`` for an empty text or one the
        decoder would not score.
    """
    from faster_whisper.tokenizer import Tokenizer

    tokenizer = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )
    start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    scores: list[tuple[float, int]] = []
    for text in texts:
        ids = tokenizer.encode(" " + text.strip()) if text.strip() else []
        if not ids:
            scores.append((-math.inf, 0))
            continue
        steps = _forced_steps(model, encoded, start + ids, len(ids) + 1, suppress)
        if steps is None:
            scores.append((-math.inf, 0))
            continue
        total = 0.0
        for i, wanted in enumerate([*ids, tokenizer.eot]):
            logits = np.asarray(steps[i], dtype=np.float64)
            peak = float(logits.max())
            total += float(logits[wanted]) - peak - math.log(float(np.exp(logits - peak).sum()))
        scores.append((total, len(ids) + 1))
    return scores


def _forced_steps(
    model: Any, encoded: Any, prompt: list[int], wanted: int, suppress: Sequence[int]
) -> list[Any] | None:
    """The decoder's logits for the first ``wanted`` positions after the start tokens, the
    text in ``prompt`` forced, or ``None`` when they do not come back. CTranslate2's
    ``max_length`` does not count the forced tokens one for one, so it is doubled, twice at
    most (a longer text is no challenge answer, and each step returns the whole
    vocabulary's logits)."""
    max_length = len(prompt) + 8
    for _ in range(3):
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=1,
            max_length=max_length,
            return_logits_vocab=True,
            suppress_blank=False,
            suppress_tokens=list(suppress),
        )[0]
        steps = list(result.logits[0])
        if len(steps) >= wanted:
            return steps
        max_length = min(_MAX_LENGTH, 2 * max_length)
    return None


_MAX_LENGTH = 448


def word_spans_sync(
    model: Any, encoded: Any, text: str, num_frames: int
) -> list[tuple[str, float, float]]:
    """Each word of ``text`` with its start and end (seconds) in the encoded audio, by the
    decoder's cross-attention (faster-whisper's ``find_alignment``; blocking, the caller holds
    the model's lock)."""
    from faster_whisper.tokenizer import Tokenizer

    tokenizer = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )
    ids = tokenizer.encode(" " + text.strip()) if text.strip() else []
    if not ids:
        return []
    found = model.find_alignment(tokenizer, [ids], encoded, num_frames)[0]
    return [(str(w["word"]), float(w["start"]), float(w["end"])) for w in found]


def _level_db(audio: npt.NDArray[np.int16], rate: int, start: float, end: float) -> float:
    lo = max(0, int((start - 0.01) * rate))
    hi = min(len(audio), max(lo + 1, int((end + 0.01) * rate)))
    chunk = audio[lo:hi].astype(np.float64)
    if chunk.size == 0:
        return -math.inf
    return 10.0 * math.log10(float(np.mean(chunk * chunk)) + 1e-9)


def extras_quieter_db(
    spans: Sequence[tuple[str, float, float]],
    audio: npt.NDArray[np.int16],
    rate: int,
    words: Collection[str] = CHALLENGE_WORDS,
) -> float:
    """How many dB the loudest extra word (`challenge_extras`) lies below the loudest
    challenge word, over their aligned spans of ``audio``; ``-inf`` when either is missing
    (nothing to compare: not quieter)."""
    toks: list[tuple[str, float, float]] = [
        (tok, start, end) for word, start, end in spans for tok in tokens(word)
    ]
    said = [tok for tok, _, _ in toks]
    extras = challenge_extras(said, words)
    challenge_levels: list[float] = []
    extra_levels: list[float] = []
    pending = list(extras)
    for tok, start, end in toks:
        if tok in words:
            challenge_levels.append(_level_db(audio, rate, start, end))
        elif pending and tok == pending[0]:
            pending.pop(0)
            extra_levels.append(_level_db(audio, rate, start, end))
    if not challenge_levels or not extra_levels:
        return -math.inf
    return max(challenge_levels) - max(extra_levels)
