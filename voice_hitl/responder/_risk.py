"""Risk tiers for spoken confirmations, and the evidence a high-risk yes must bring.

A transcript's "yes" can be invented by the acoustic layer: noise or an unrelated sentence
heard as "good" or "indeed". A low-risk confirmation takes the yes as today. A high-risk one
(``ConfirmAction`` and quorum approvals by default; any tool with ``AITool(risk="high")``; any
call a ``BEFORE_TOOL_USE`` hook marks with ``HookResult.modify(risk="high")``) takes a spoken
yes only when every layer that could be measured agrees (`weigh_yes`):

1. **challenge**: the person said the challenge word the question asked for ("confirm" or
   "approve"), not just any affirmative, and said it *alone* (`said_alone`: fillers,
   politeness and a plain "yes" beside it, nothing else, and not as a question) in
   every reading the line has; a recogniser rarely invents those words from noise, while
   "yes", "good", "okay" and "indeed" are its common inventions, and a sentence that uses
   the word ("I'd like to confirm it tomorrow", "why do I need to confirm") is not an answer
   to the challenge. With ``EvidencePolicy(challenge="code")`` the question asks instead for
   a one-time code drawn for the request ("say the code four, seven, two"), and the layer
   passes when every reading says that code and nothing that does not go with it
   (`code_answered`): a code has no acoustic near-misses to be heard as;
2. **confidence**: the recogniser's calibrated confidence reaches ``min_confidence``;
3. **audio**: the speech gate measured the utterance as speech (mean VAD probability over its
   speech windows), with a signal-to-noise ratio and clipping within bounds -- on poor audio
   the dialogue does not decide and asks for the keypad instead;
4. **speaker**: in a conference, the utterance is attributed to its speaker alone (not a
   mixed turn);
5. **near-miss**: where the recogniser can score the audio against a text (the embedded
   Whisper recogniser), the words heard beat every acoustic near-miss of the challenge word
   ("conform", "comfort", "can firm" for "confirm"; `voice_hitl.speech._near_miss`) by at
   least ``min_near_miss_gap`` nats. Below it the person is asked again, then offered the
   keypad: the audio sounds about as much like another word as like the one asked for.
   A line that cannot score (a provider's transcript) records no such layer, and neither
   does a code challenge (the layer does not apply to codes).

A keypad "1" is the alternative evidence for every layer. A "no" needs no evidence: declining
costs a new question, never money. With ``EvidencePolicy(spoken=False)`` the keypad is the only
evidence: no spoken yes approves at the high tier, however well it passes the layers above
(``layers["spoken"]``).

Nothing unmeasured counts as passed. A layer the line cannot measure (a provider's transcript
has no confidence; audio the line never saw has no figures) is recorded as unmeasured, and
`EvidencePolicy.unmeasured` says what happens instead: ``"challenge_again"`` (the default)
asks for the challenge word a second time, and only two challenge answers in a row, each
passing every layer that was measured, approve (``layers["repeat"]``; under a code
challenge the second answer is to a new code); ``"keypad"`` asks for the keypad. A voice line
measures the caller audio it forwards to the provider (`voice_hitl.voice._turn_audio`), so on
the provider path only the confidence stays unmeasured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._checks import probability
from ..speech._challenge import said_alone
from ..speech._code import check_code, code_answered, draw_code
from ..speech._vocab import CHALLENGE_WORDS

if TYPE_CHECKING:
    from ._call_line import Heard

__all__ = [
    "CHALLENGE_WORDS",
    "DEFAULT_CHALLENGE",
    "Challenge",
    "EvidencePolicy",
    "NEAR_MISS_GAP",
    "SPOKEN_OFF",
    "Unmeasured",
    "Risk",
    "Verdict",
    "evidence_json",
    "readings_of",
    "risk_of",
    "weigh_yes",
]

Risk = Literal["low", "high"]

NEAR_MISS_GAP = 3.0
"""Nats (`EvidencePolicy.min_near_miss_gap`); see ``bench/results_risk.txt``."""

_HIGH_RISK_TOOLS = frozenset({"ConfirmAction"})


def risk_of(
    tool_name: str,
    arguments: Mapping[str, Any],
    context: Mapping[str, Any],
    declared: Risk | None,
) -> Risk:
    """A request's risk: the call's own (``context["risk"]``, set by a hook), else the tool's
    declared risk, else high for ``ConfirmAction`` and quorum approvals, else low.

    Raises:
        ValueError: a risk that is neither ``"low"`` nor ``"high"``.
    """
    per_call = context.get("risk")
    if per_call is not None:
        if per_call not in ("low", "high"):
            raise ValueError(f"risk must be 'low' or 'high', got {per_call!r}")
        return "high" if per_call == "high" else "low"
    if declared is not None:
        return declared
    if tool_name in _HIGH_RISK_TOOLS or arguments.get("quorum") or arguments.get("approvers"):
        return "high"
    return "low"


Unmeasured = Literal["challenge_again", "keypad"]

Challenge = Literal["word", "code"]
"""What a high-risk question asks the person to say: the challenge word, or a one-time code."""

DEFAULT_CHALLENGE: Challenge = "word"
"""`EvidencePolicy.challenge` unless given."""


@dataclass(frozen=True, slots=True)
class EvidencePolicy:
    """Thresholds of `weigh_yes` (each checked where the line can measure it).

    Attributes:
        min_confidence: calibrated recogniser confidence.
        min_snr_db: the speech gate's SNR estimate; below it, ask for the keypad. 8 dB,
            from issue 32 item 2's measurements (``bench/bench_risk.py --gate``, the
            estimate of `asr._snr`: the better of the full-band and the 300-7000 Hz
            ratio). Above every 16 kHz utterance in 5 dB white noise (at most 6.3 dB) and
            0 dB white noise on either line (at most 4.3); under every confirmation of
            heldout2-4 in 10 dB white noise or babble (at least 9.0) and 15 of 16 of
            heldout6's in car noise at -5 dB (its power under 300 Hz, the speech band
            clean: median 12). Noise with more of its power under 300 Hz than speech reads
            higher in the band than over the full band: 2 dB brown noise is 12-13 dB
            there (it passes, as the car noise does: the two cannot be told apart), 3 dB
            pink about 7 (up to 9.2: 15-17 % pass at 8 dB, 54-58 % would at 7) and 5 dB
            babble about 6.5 (31-42 % pass, 25-37 % did at 7 dB over the full band). At
            9 dB pink would pass 0-2 % but 4-10 % of the 10 dB confirmations of the tuning
            set would go to the keypad (``bench/results_risk.txt``, 2026-12-06).
        min_speech_probability: the VAD's mean probability over the speech windows.
        max_clipped: share of clipped samples.
        min_attribution: a conference turn's attribution to its speaker.
        challenge_words: the words that answer the challenge.
        unmeasured: what a yes whose only shortfall is an unmeasured layer needs instead:
            a second challenge answer (``"challenge_again"``) or the keypad (``"keypad"``).
        min_near_miss_gap: nats by which the words heard must outscore their best
            near-miss (`Competition`); chosen on the development sets
            (``bench/results_risk.txt``).
        spoken: whether a spoken yes can approve at the high tier at all. ``False`` makes
            the keypad the only way: the question says "To go ahead, press 1", a spoken
            yes (however clear) is recorded as ``layers["spoken"] = "failed"`` and answered
            with the keypad again; a spoken "no" still refuses. Set it where a spoken yes
            must never move money: the embedded recogniser (Whisper tiny.en) cannot
            reliably tell "confirm" from its near-misses (on never-heard audio it approved
            5 of 338 utterances that were no yes, "confront it" heard as "confirm it";
            ``bench/results_risk.txt``). A conference has no keypad: there a vote is then
            cast from an operator console or `ConferenceChannel.answer` (pass the policy
            to ``ConferenceChannel(evidence=...)``, which weighs the votes it hears).
        challenge: what the question asks the person to say: ``"word"``, the challenge
            word ("say confirm"), or ``"code"``, a one-time code drawn for each request
            ("say the code four, seven, two"; `voice_hitl.speech._code`). The recogniser
            hears near-misses of the word word for word as the word ("confront it" as
            "confirm it"); nobody says a code drawn a moment ago by accident. Under
            ``"code"`` the near-miss layer does not apply, and a second challenge answer
            (``unmeasured="challenge_again"``) is to a new code.
        code_digits: how many digits a code has (2 to 6).
        codes: draws a code (tests and benches); default: `secrets`-drawn digits, no two
            adjacent alike. What it returns is checked (``code_digits`` digits, 0-9).
    """

    min_confidence: float = 0.8
    min_snr_db: float = 8.0
    min_speech_probability: float = 0.6
    max_clipped: float = 0.01
    min_attribution: float = 0.9
    challenge_words: frozenset[str] = field(default=CHALLENGE_WORDS)
    unmeasured: Unmeasured = "challenge_again"
    min_near_miss_gap: float = NEAR_MISS_GAP
    spoken: bool = True
    challenge: Challenge = DEFAULT_CHALLENGE
    code_digits: int = 3
    codes: Callable[[], str] | None = None

    def __post_init__(self) -> None:
        if self.unmeasured not in ("challenge_again", "keypad"):
            raise ValueError(
                f"unmeasured must be 'challenge_again' or 'keypad', got {self.unmeasured!r}"
            )
        for name in ("min_confidence", "min_speech_probability", "max_clipped", "min_attribution"):
            probability(name, getattr(self, name))
        if not self.challenge_words:
            raise ValueError("challenge_words must not be empty")
        if not math.isfinite(self.min_near_miss_gap):
            raise ValueError(f"min_near_miss_gap must be finite, got {self.min_near_miss_gap!r}")
        if self.challenge not in ("word", "code"):
            raise ValueError(f"challenge must be 'word' or 'code', got {self.challenge!r}")
        digits = self.code_digits
        if isinstance(digits, bool) or not isinstance(digits, int) or not 2 <= digits <= 6:
            raise ValueError(f"code_digits must be an integer from 2 to 6, got {digits!r}")

    def new_code(self) -> str:
        """A fresh code for one request (from ``codes`` when given, checked).

        Raises:
            ValueError: ``codes`` returned something other than ``code_digits`` digits.
        """
        if self.codes is None:
            return draw_code(self.code_digits)
        return check_code(self.codes(), self.code_digits)


Retry = Literal["challenge", "alone", "keypad", "speaker", "again", "repeat"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """`weigh_yes`'s decision on one spoken yes.

    Attributes:
        accepted: every measured layer passed.
        layers: per layer, ``"passed"``, ``"failed"`` or ``"unmeasured"``.
        retry: what to ask for when not accepted: the challenge word (or code), the
            challenge word on its own (it came with other words), the keypad (poor audio, a
            layer unmeasured under the ``"keypad"`` policy, or spoken approvals off), the speaker
            alone (mixed turn), simply again (low confidence), or the word once more (a
            layer unmeasured).
        reason: why not, for logs and the journal ("" when accepted).
    """

    accepted: bool
    layers: Mapping[str, str]
    retry: Retry | None = None
    reason: str = ""


SPOKEN_OFF = "spoken approvals are off for this action"
"""The reason of every verdict under ``EvidencePolicy(spoken=False)``, before what to do."""


def readings_of(heard: Heard) -> list[str]:
    """Every reading of an utterance: the text understood and, when known, the words as heard."""
    return [heard.text] if heard.transcript is None else [heard.text, heard.transcript]


def _challenge_layer(
    readings: list[str], policy: EvidencePolicy, code: str | None
) -> tuple[bool, str]:
    if policy.challenge == "word":
        return said_alone(readings, policy.challenge_words)
    if code is None:
        return False, "no code was asked for"
    return code_answered(readings, code)


def weigh_yes(
    heard: Heard,
    policy: EvidencePolicy | None = None,
    *,
    code: str | None = None,
    repeated: bool = False,
    instead: str = "please press 1",
) -> Verdict:
    """Decide whether a spoken yes (``heard``, understood as yes) is enough for high risk.

    Args:
        heard: the utterance.
        policy: the thresholds (default `EvidencePolicy()`).
        code: the code the question asked for, under ``policy.challenge == "code"`` (without
            one, the challenge layer fails).
        repeated: the previous turn was a challenge answer that fell short only by unmeasured
            layers (its verdict's ``retry`` was ``"repeat"``): this one is the second.
        instead: how to approve when spoken approvals are off (``policy.spoken`` False),
            for the verdict's reason: the keypad on a call, another way where there is none.
    """
    policy = policy or EvidencePolicy()
    layers: dict[str, str] = {}
    problems: list[tuple[Retry, str]] = []
    alone, why_not = _challenge_layer(readings_of(heard), policy, code)
    if alone:
        layers["challenge"] = "passed"
    else:
        layers["challenge"] = "failed"
        problems.append(("alone" if "alone" in why_not else "challenge", why_not))
    if heard.confidence is None:
        layers["confidence"] = "unmeasured"
    elif heard.confidence >= policy.min_confidence:
        layers["confidence"] = "passed"
    else:
        layers["confidence"] = "failed"
        problems.append(("again", f"confidence {heard.confidence:.2f} < {policy.min_confidence}"))
    quality = heard.quality
    if quality is None:
        layers["audio"] = "unmeasured"
    else:
        poor = [
            what
            for what, bad in (
                (f"SNR {quality.snr_db:.1f} dB", quality.snr_db < policy.min_snr_db),
                (
                    f"speech probability {quality.speech_probability:.2f}",
                    quality.speech_probability < policy.min_speech_probability,
                ),
                (f"clipping {quality.clipped:.2%}", quality.clipped > policy.max_clipped),
            )
            if bad
        ]
        layers["audio"] = "failed" if poor else "passed"
        if poor:
            problems.insert(0, ("keypad", "poor audio: " + ", ".join(poor)))
    competition = heard.competition if policy.challenge == "word" else None
    if competition is not None:
        if competition.gap >= policy.min_near_miss_gap:
            layers["near_miss"] = "passed"
        else:
            layers["near_miss"] = "failed"
            problems.append(
                (
                    "again",
                    f"it sounded about as much like {competition.competitor!r} as like "
                    f"{competition.heard!r} ({competition.gap:.1f} nats apart, "
                    f"{policy.min_near_miss_gap:g} needed)",
                )
            )
    if heard.attribution >= policy.min_attribution:
        layers["speaker"] = "passed"
    else:
        layers["speaker"] = "failed"
        problems.insert(0, ("speaker", f"speaker attribution {heard.attribution:.2f}"))
    if not policy.spoken:
        layers["spoken"] = "failed"
        return Verdict(False, layers, "keypad", f"{SPOKEN_OFF}; {instead}")
    unmeasured = [name for name, state in layers.items() if state == "unmeasured"]
    if not problems and unmeasured:
        why = ", ".join(unmeasured) + " not measured"
        if policy.unmeasured == "keypad":
            problems.append(("keypad", why))
        elif repeated:
            layers["repeat"] = "passed"
        else:
            problems.append(("repeat", why + ": a second challenge answer is needed"))
    if not problems:
        return Verdict(True, layers)
    first, _ = problems[0]
    return Verdict(False, layers, first, "; ".join(reason for _, reason in problems))


def evidence_json(
    risk: Risk,
    heard: Heard,
    *,
    verdict: Verdict | None,
    turns: int,
    challenge: Challenge | None = None,
) -> dict[str, Any]:
    """How an answer was established, for the answer JSON and the journal (``challenge``:
    what a high-risk question asked to be said, when it asked for one)."""
    evidence: dict[str, Any] = {"risk": risk, "via": "dtmf" if heard.kind == "dtmf" else "speech"}
    if challenge is not None:
        evidence["challenge"] = challenge
    evidence["turns"] = turns
    if heard.kind == "dtmf":
        evidence["layers"] = {"keypad": "passed"}
        return evidence
    evidence["confidence"] = None if heard.confidence is None else round(heard.confidence, 3)
    evidence["audio"] = None if heard.quality is None else heard.quality.as_json()
    if heard.attribution < 1.0:
        evidence["attribution"] = round(heard.attribution, 3)
    if heard.competition is not None:
        evidence["near_miss"] = heard.competition.as_json()
    if verdict is not None:
        evidence["layers"] = dict(verdict.layers)
    return evidence
