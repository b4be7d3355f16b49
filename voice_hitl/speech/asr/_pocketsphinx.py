"""`PocketsphinxRecognizer`: CMU PocketSphinx 5 with grammars built from the question.

Uses only ``pocketsphinx.Decoder`` (``LiveSpeech`` would need PortAudio) and the US English
model inside the PyPI wheel; nothing is downloaded. One decoder serves every question: each
spec's grammar is compiled once, cached as a named search and activated per utterance.
`recognize` decodes in a worker process shared by recognisers with the same settings (the
decoder holds the GIL while it works, so a thread would stall the event loop; see `_process`);
`recognize_sync` decodes in the calling thread under a lock (a decoder is not thread-safe).

Silence around the speech is cut off first (``trim_silence``; an energy endpointer with
200 ms of padding): on the fixtures 39 % of the audio goes, every pass gets that much
cheaper, and cepstral normalisation over the speech alone sharpens the phone-loop check
(out-of-set speech accepted 24/54 -> 12/54, accuracy 81.6 % -> 82.7 %). The ratios move down,
so ``min_phone_ratio`` is -12 (-16 to -12 lie within half a point; -11 loses 1.1 points).
Every decode starts from a fresh front end, so a result never depends on the utterances
decoded before it.

Rejection: a grammar forces any speech onto its nearest phrase. Two checks guard against
that. First, the grammar path's acoustic score is compared per frame with a free phone loop
over the same audio (``min_phone_ratio``, in the decoder's log units, set on the committed
fixtures: out-of-set speech scores far below the phone loop, answers near it); ``None``
turns this off. The phone loop runs in its own decoder at every other frame (ds=2): RTF
0.027 -> 0.015, and its ratio correlates 0.97 with the full-rate one. A small weighted
garbage-word loop inside the grammar was measured too and rejected: it took in-set answers
far more often than it rejected out-of-set speech, whatever its weight. Second, with
``verify="yes"`` (the default) a grammar result that would confirm a yes/no question is
checked by a second pass with the wheel's general n-gram model; unless that pass shares a
word with the grammar result, reads as the same answer, or sounds alike (phone edit
similarity >= `SOUND_ALIKE`: "godhead" for "go ahead", "corrected" for "correct"), the
utterance is rejected; it is also rejected if that pass heard a negation ("not", "no",
"don't"...). ``verify="all"`` checks every answer this way (fewer false accepts, more false
rejections); ``verify="off"`` never does.

Measured on the 369 fixtures and not adopted: feeding the decoder in chunks (frees the GIL
between them but switches to live cepstral normalisation: 46.6 % accuracy); narrow beams for
the n-gram pass (RTF 0.21 -> 0.05 where it runs) garble short answers ("go ahead" -> "going
at" on a fresh decoder; confirm 83% -> 72-78%); alternate pronunciations ("correct" K AH R
EH K T, "four" F OW R, ...: +0.5 points, within noise); a faint 4-8 kHz noise floor or
``dither`` for telephone audio (telephone 83.7% either way, errors only moved between
voices); comparing phones with all vowels merged (out-of-set speech then scored up to 0.46
against a yes phrase).
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from .._answer import Answer, MetaAnswer
from .._spec import AnswerKind
from .._text import edit_distance
from .._understand import understand
from .._vocab import NEGATION_WORDS
from ._audio import check_pcm16, resample
from ._endpoint import EnergyEndpointer
from ._grammar import build_jsgf
from ._process import call_in_worker
from ._protocol import Hypothesis

if TYPE_CHECKING:
    from .._spec import AnswerSpec

__all__ = ["PocketsphinxRecognizer"]

_MODEL_RATE = 16_000
_LOG_UNIT = math.log(1.0001)  # the decoder's default logbase
_LM_SEARCH = "_default"
_PHONE_SEARCH = "_phones"
DEFAULT_MIN_PHONE_RATIO = -12.0
_TRIM_PAD_MS = 200.0
SOUND_ALIKE = 0.5
"""Phone similarity at which the n-gram pass corroborates a grammar result it spells
differently ("godhead" for "go ahead"); out-of-set speech read as yes scored <= 0.33."""


_MIN_UTTERANCE_BYTES = 2 * 1_600
"""Shorter than 100 ms of 16 kHz PCM16 is no utterance: it is not decoded."""

class PocketsphinxRecognizer:
    """Grammar-constrained (or, for free text, n-gram) recognition with PocketSphinx.

    Construction loads the acoustic model (about 0.5 s, blocking); build it once, outside the
    event loop or via ``await asyncio.to_thread(PocketsphinxRecognizer)``.

    Args:
        verify: which grammar results a second, n-gram pass must corroborate (see the module
            docstring): ``"yes"``, ``"all"`` or ``"off"``.
        min_phone_ratio: reject a grammar result whose per-frame acoustic score falls this
            far below a free phone loop's (``None``: no such check).
        trim_silence: decode only the utterance's speech (an energy endpointer, 200 ms of
            padding), not the silence around it.

    Raises:
        ModuleNotFoundError: the ``speech`` extra (pocketsphinx) is not installed.
    """

    name = "pocketsphinx-grammar"

    def __init__(
        self,
        *,
        verify: Literal["yes", "all", "off"] = "yes",
        min_phone_ratio: float | None = DEFAULT_MIN_PHONE_RATIO,
        trim_silence: bool = True,
    ) -> None:
        from pocketsphinx import Decoder

        if verify not in ("yes", "all", "off"):
            raise ValueError(f"verify must be 'yes', 'all' or 'off', got {verify!r}")
        options = {"loglevel": "FATAL", "fwdflat": False, "bestpath": False}
        # fwdflat/bestpath are second passes of the n-gram search; grammar search ignores them
        # and the n-gram verification pass loses nothing measurable without them.
        self._decoder: Any = Decoder(**options)
        # The phone loop only has to score the audio roughly: at every other frame (ds=2) it
        # costs RTF 0.015 instead of 0.027 and its score correlates 0.97 with the full one.
        self._phones: Any = Decoder(**options, ds=2, lm=None)
        self._phones.add_allphone_file(_PHONE_SEARCH, None)
        self._verify = verify
        self._min_ratio = min_phone_ratio
        self._endpointer = EnergyEndpointer(pad_ms=_TRIM_PAD_MS) if trim_silence else None
        self._options: dict[str, Any] = {
            "verify": verify,
            "min_phone_ratio": min_phone_ratio,
            "trim_silence": trim_silence,
        }
        self.last_phone_ratio: float | None = None
        """The phone-loop ratio of the last grammar result (for tuning), if computed."""
        self._lock = threading.Lock()
        self._searches: dict[str, str] = {}

    def _known(self, word: str) -> bool:
        return bool(self._decoder.lookup_word(word))

    def grammar_for(self, spec: AnswerSpec | None) -> str | None:
        """The JSGF grammar used for ``spec`` (``None``: the n-gram model is used)."""
        return None if spec is None else build_jsgf(spec, self._known)

    def _search(self, spec: AnswerSpec | None) -> str:
        grammar = self.grammar_for(spec)
        if grammar is None:
            return _LM_SEARCH
        name = self._searches.get(grammar)
        if name is None:
            name = "g" + hashlib.sha1(grammar.encode()).hexdigest()[:16]
            self._decoder.add_jsgf_string(name, grammar)
            self._searches[grammar] = name
        return name

    def _decode(self, search: str, audio: bytes, decoder: Any = None) -> tuple[str, float]:
        decoder = self._decoder if decoder is None else decoder
        # The front end's noise estimate would otherwise carry over from the last utterance,
        # making a result depend on what was decoded before (ratios moved by ~0.4).
        if len(audio) < _MIN_UTTERANCE_BYTES:
            return "", 0.0  # nothing to hear (an empty frame breaks the decoder's buffers)
        decoder.reinit_feat()
        decoder.activate_search(search)
        decoder.start_utt()
        try:
            decoder.process_raw(audio, False, True)
        finally:
            # Always close the utterance: a decoder left inside one refuses every later
            # search ("Unable to set search"), in this process or the shared worker.
            decoder.end_utt()
        best = decoder.hyp()
        if best is None:
            return "", 0.0
        return str(best.hypstr), min(1.0, max(0.0, float(best.score)))

    @staticmethod
    def _acoustic_score(decoder: Any) -> float:
        """Acoustic log score of ``decoder``'s last path, in the decoder's log units."""
        return sum(math.log(max(seg.ascore, 1e-300)) for seg in decoder.seg() or ()) / _LOG_UNIT

    def _phone_ratio(self, audio: bytes) -> float:
        """Per-frame acoustic score of the grammar path minus that of a free phone loop.

        Call right after a grammar decode. Near 0 when the grammar explains the audio as
        well as unconstrained phones do; strongly negative for speech the grammar lacks.
        """
        grammar = self._acoustic_score(self._decoder)
        frames = max(1, int(self._decoder.n_frames()))
        self._decode(_PHONE_SEARCH, audio, self._phones)
        return (grammar - self._acoustic_score(self._phones)) / frames

    def _needs_check(self, text: str, spec: AnswerSpec | None) -> bool:
        if spec is None or self._verify == "off" or not text:
            return False
        result = understand(text, spec)
        if self._verify == "all":
            return isinstance(result, Answer | MetaAnswer)
        return (
            spec.kind is AnswerKind.CONFIRM and isinstance(result, Answer) and result.value is True
        )

    def grammar_decode_sync(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec
    ) -> tuple[str, float | None]:
        """The grammar's best phrase and its phone-loop ratio, unchecked (blocking).

        No rejection and no verification pass: for callers that weigh the ratio themselves
        (`CombinedRecognizer`). The ratio is ``None`` when nothing was recognised or the
        question has no grammar (free text).

        Raises:
            AudioFormatError: bad audio.
        """
        audio = self._prepare(pcm16, sample_rate)
        with self._lock:
            _search, text, _score, ratio = self._grammar_pass(audio, spec, with_ratio=True)
        return text, ratio

    def recognize_sync(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Blocking form of `recognize`, for worker threads and scripts."""
        audio = self._prepare(pcm16, sample_rate)
        minimum = self._min_ratio
        with self._lock:
            search, text, score, ratio = self._grammar_pass(
                audio, spec, with_ratio=minimum is not None
            )
            if ratio is not None and minimum is not None and ratio < minimum:
                return []
            if search != _LM_SEARCH and self._needs_check(text, spec):
                assert spec is not None
                if not self._corroborated(text, spec, audio):
                    return []
        return [Hypothesis(text, score)] if text else []

    def _grammar_pass(
        self, audio: bytes, spec: AnswerSpec | None, *, with_ratio: bool
    ) -> tuple[str, str, float, float | None]:
        """``(search, text, score, phone-loop ratio)`` for ``audio``; call under the lock.

        The ratio is computed when asked for and there is a grammar result, else ``None``.
        """
        search = self._search(spec)
        text, score = self._decode(search, audio)
        ratio = self._phone_ratio(audio) if with_ratio and text and search != _LM_SEARCH else None
        if ratio is not None:
            self.last_phone_ratio = ratio
        return search, text, score, ratio

    def _prepare(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> bytes:
        """The utterance as 16 kHz PCM16 bytes, trimmed to its speech (see the module)."""
        frame = check_pcm16(pcm16, sample_rate)
        if self._endpointer is not None:
            span = self._endpointer.find_speech(frame, sample_rate)
            if span is not None:
                frame = frame[span.start : span.end]
        return resample(frame, sample_rate, _MODEL_RATE).tobytes()

    def _worker_key(self) -> tuple[Any, ...]:
        return ("pocketsphinx", *sorted(self._options.items()))

    async def _in_worker(self, method: str, *args: Any) -> Any:
        factory = functools.partial(PocketsphinxRecognizer, **self._options)
        return await call_in_worker(self._worker_key(), factory, method, *args)

    async def load(self) -> None:
        """Start the worker process now rather than at the first utterance (~1 s).

        Raises:
            RecognizerWorkerError: the worker process died while starting.

        Cancellation:
            Safe: the worker goes on starting and is used by later calls.
        """
        await self._in_worker("grammar_for", None)

    async def grammar_decode(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec
    ) -> tuple[str, float | None]:
        """`grammar_decode_sync` in the worker process.

        Raises:
            AudioFormatError: bad audio.
            RecognizerWorkerError: the worker process died.

        Cancellation:
            Safe, as for `recognize`.
        """
        check_pcm16(pcm16, sample_rate)
        result: tuple[str, float | None] = await self._in_worker(
            "grammar_decode_sync", pcm16, sample_rate, spec
        )
        return result

    def _corroborated(self, text: str, spec: AnswerSpec, audio: bytes) -> bool:
        """Whether the open n-gram pass backs the grammar result ``text`` (see the module)."""
        check, _ = self._decode(_LM_SEARCH, audio)
        words = set(check.replace("'", " ").split())
        if spec.kind is AnswerKind.CONFIRM and words & NEGATION_WORDS:
            return False  # the open pass heard a negation: never a yes
        first = understand(text, spec)
        return (
            bool(set(text.split()) & words)
            or first == _same_as(understand(check, spec), first)
            or self._sound_alike(text, check)
        )

    def _pronunciation(self, text: str) -> list[str]:
        return [p for w in text.split() for p in (self._decoder.lookup_word(w) or "").split()]

    def _sound_alike(self, text: str, check: str) -> bool:
        """Whether the phones of ``check`` are within `SOUND_ALIKE` of those of ``text``."""
        return phone_similarity(self._pronunciation(text), self._pronunciation(check)) >= (
            SOUND_ALIKE
        )

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Recognise one utterance in the worker process (started on first use, ~1 s).

        Args:
            pcm16: mono PCM16 samples (any rate 8-96 kHz; resampled to 16 kHz).
            sample_rate: their rate in Hz.
            spec: the question; its grammar constrains recognition. ``None`` or a free-text
                question uses the model's n-gram language model.

        Returns:
            Hypotheses, best first; empty when nothing was recognised or the result was
            rejected as out of set.

        Raises:
            AudioFormatError: bad audio.
            RecognizerWorkerError: the worker process died (the next call starts another).

        Cancellation:
            Safe: the caller stops waiting at once; the worker finishes decoding in the
            background (the decoder stays usable) and the result is discarded.
        """
        check_pcm16(pcm16, sample_rate)
        hypotheses: list[Hypothesis] = await self._in_worker(
            "recognize_sync", pcm16, sample_rate, spec
        )
        return hypotheses


def phone_similarity(first: list[str], second: list[str]) -> float:
    """1 minus the phone edit distance over the longer length (1.0: same phones)."""
    return 1.0 - edit_distance(first, second)


def _same_as(candidate: object, reference: object) -> object:
    """``reference`` if ``candidate`` reads as the same answer or intent, else ``candidate``."""
    same_answer = (
        isinstance(candidate, Answer)
        and isinstance(reference, Answer)
        and (candidate.value, candidate.choice_id) == (reference.value, reference.choice_id)
    )
    same_meta = (
        isinstance(candidate, MetaAnswer)
        and isinstance(reference, MetaAnswer)
        and candidate.intent is reference.intent
    )
    return reference if same_answer or same_meta else candidate
