"""Risk tiers on audio: false approvals from the adversarial set, and what the tiers cost a
person who really means yes.

* **False approvals** per 1,000 utterances of ``audio_fixtures/adversarial`` (noise, babble,
  negations, cancels, requests for a person, unrelated questions; nothing in it is a yes; its
  false yeses have been read, so it is a development set) and of ``audio_fixtures/adversarial2``
  (the same recipe with new sentences, voices and seeds; never tuned on),
  per tier: *low* counts every utterance understood as yes; *high* counts those whose yes
  also passed `weigh_yes` (challenge word, calibrated confidence, audio quality).
* **True confirmations** (``audio_fixtures/confirmations``: the challenge word said by seven
  voices, clean / 10 dB white / 10 dB babble / telephone, two takes each; the set the
  challenge hotwords and the denoiser were tuned on; and ``audio_fixtures/heldout2_confirmations``,
  new phrasings in four voices no other set uses, never tuned on; and
  ``audio_fixtures/heldout3_confirmations`` and ``heldout4_confirmations``, written on
  2026-12-04): a high-risk
  confirmation is simulated as a dialogue -- take 1; if its yes is not taken, take 2 -- and
  the share completed within two turns is reported per condition with the mean number of
  turns and seconds (the person's speech plus recognition; prompts not counted). A set whose
  manifest names the kind of second take (``take2``: ``repeat``, the phrase again, or
  ``alone``, the word alone after the re-prompt; ``heldout6_confirmations``) is reported per
  kind as well.

* ``--gate``: the speech gate alone on every speech utterance of the sets, per condition (white
  noise and babble at 0, 5 and 10 dB, 16 kHz and 8 kHz mu-law; the confirmations' clean,
  10 dB white, 10 dB babble and telephone): the SNR estimate now (in the speech band) and
  before (over the full band: `bench_snr.before_db`), and the share the high tier's audio
  layer passes with each.

* ``--near-miss-gap G|off`` (repeatable): the high tier's near-miss margin
  (`EvidencePolicy.min_near_miss_gap`), nats by which a challenge answer must outscore its
  acoustic near-misses; each value given is weighed in the same run (the recogniser's scores
  do not depend on it), the first is the one ``--show`` reports; default: the policy's.
  The gaps seen are printed (adversarial: per category; confirmations: per take).
  ``--without-near-miss WORD`` (repeatable) leaves a near-miss out of the lexicon for the run.

* ``--alone-margin M|off``: Whisper's alignment margin (`voice_hitl.speech.asr._align`; default
  the recogniser's, off); ``--alone-quieter Q``: dB the extra words must be quieter than the
  challenge word; ``--cache FILE``: read and keep Whisper's decodings and alignment scores
  in an SQLite file (`asr_cache`), so a sweep over margins decodes nothing twice.

* ``--challenge word|code``: what the high tier asks to be said (`EvidencePolicy.challenge`;
  default ``word``). Under ``code`` every adversarial utterance and confirmation take is
  weighed against the code its manifest entry names (``"code"``, a digit string); an entry
  without one gets a code derived from its file name (`file_code`), and the count of those is
  reported ("no code in the set"): a set recorded before codes existed says none, so its
  confirmations measure nothing but refusals.

Run: ``python bench/bench_risk.py [--recognizer whisper] [--sample K] [--gate]
[--alone-margin M|off] [--cache FILE] [--challenge word|code]`` (``speech`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import code_attempt, understand_heard
from voice_hitl.responder._risk import NEAR_MISS_GAP, Challenge, EvidencePolicy, weigh_yes
from voice_hitl.speech import Answer, AnswerSpec
from voice_hitl.speech._fixtures import load_manifest
from voice_hitl.speech.asr import (
    RECOGNIZERS,
    Denoiser,
    GatedRecognizer,
    Recognizer,
    SpeechGate,
    WhisperRecognizer,
    load_recognizer,
    read_wav,
)
from voice_hitl.voice._provider_events import transcription_of

ROOT = Path(__file__).resolve().parent.parent


ALIGNED: Counter[str] = Counter()
"""Readings alignment scoring looked at ("scored") and took as the word alone ("taken")."""


def _count_alignment() -> None:
    real = WhisperRecognizer._alone

    def counted(
        self: WhisperRecognizer, encoded: Any, reading: Any, aligned: Any, audio: Any
    ) -> Any:
        before = len(aligned)
        result = real(self, encoded, reading, aligned, audio)
        if _rescuable(reading[0]) and self._alone_margin is not None:
            from voice_hitl.speech.asr._align import alone_candidates, extras_quieter_db

            texts = [reading[0], *alone_candidates(reading[0])]
            scores = [total for total, _ in self.score_sync(encoded, texts)]
            spans = self.word_spans_sync(encoded, reading[0], min(3000, len(audio) // 160))
            quieter = extras_quieter_db(spans, audio, 16000)
            GAPS.append((round(scores[0] - max(scores[1:]), 1), round(quieter, 1)))
            ALIGNED["scored"] += 1
        ALIGNED["taken"] += len(aligned) - before
        return result

    WhisperRecognizer._alone = counted  # type: ignore[method-assign]


def _rescuable(text: str) -> bool:
    from voice_hitl.speech.asr._align import may_rescue

    return may_rescue(text)


GAPS: list[tuple[float, float]] = []
"""Per reading scored: how many nats the best forced reading fell below the free one, and how
many dB its extra words were quieter than the challenge word."""


def print_alignment() -> None:
    """How many readings alignment scoring looked at and took, then forget them."""
    if ALIGNED:
        print(f"  alignment: {ALIGNED['scored']} readings scored, {ALIGNED['taken']} taken "
              "as the word alone")
        print(f"  alignment (gap in nats, extra words quieter by dB): {sorted(GAPS)}")
    ALIGNED.clear()
    GAPS.clear()


AUDIO_VERDICTS: Counter[tuple[str, str]] = Counter()
"""(condition, audio layer's verdict) of every utterance a recogniser heard words in."""

SHOW = False
"""``--show``: print each file read as yes (adversarial) or as no (confirmations) with its
words as heard."""
LAST_HEARD: list[str] = [""]
"""The words of the last utterance `_hear` heard (for ``--show``)."""


GAPS_AT: list[float | None] = [NEAR_MISS_GAP]
"""``--near-miss-gap``: the near-miss margins weighed (``None``: the layer off)."""
NEAR_GAPS: list[tuple[str, float, str]] = []
"""Per challenge answer scored against its near-misses: (where, gap in nats, competitor)."""


CHALLENGE: list[Challenge] = ["word"]
"""``--challenge``: what the high tier asks to be said."""
NO_CODE: Counter[str] = Counter()
"""Per set, how many entries named no code (``--challenge code``: one derived from the file)."""


def file_code(name: str, digits: int = 3) -> str:
    """A code derived from a file name: the same on every run, adjacent digits distinct."""
    code = ""
    for byte in hashlib.sha256(name.encode()).digest():
        digit = str(byte % 10)
        if not code or digit != code[-1]:
            code += digit
        if len(code) == digits:
            break
    return code


def entry_code(entry: dict[str, Any], where: str) -> str | None:
    """The code an entry is weighed against under ``--challenge code`` (None under word)."""
    if CHALLENGE[0] != "code":
        return None
    code = entry.get("code")
    if isinstance(code, str) and code.isdigit():
        return code
    NO_CODE[where] += 1
    return file_code(str(entry["file"]))


def print_no_code(where: str) -> None:
    """Under ``--challenge code``, how many entries of a set named no code."""
    if CHALLENGE[0] == "code" and NO_CODE[where]:
        print(f"  no code in the set: {NO_CODE[where]} entries weighed against a code derived "
              "from the file name")


def _policy(gap: float | None) -> EvidencePolicy:
    return EvidencePolicy(min_near_miss_gap=-1e9 if gap is None else gap, challenge=CHALLENGE[0])


def _label(gap: float | None) -> str:
    return "off" if gap is None else f"{gap:g}"


async def _hear(
    recognizer: Recognizer,
    path: Path,
    spec: AnswerSpec,
    condition: str = "?",
    code: str | None = None,
) -> tuple[bool, list[bool], float, float, bool]:
    """``(read as yes, yes taken at high risk per margin of GAPS_AT, audio seconds,
    recognition seconds, read as no)``; with a ``code``, the high tier asked for it."""
    pcm, rate = await asyncio.to_thread(read_wav, path)
    started = time.perf_counter()
    hypotheses = await recognizer.recognize(pcm, rate, spec)
    elapsed = time.perf_counter() - started
    heard = Heard.of(transcription_of(hypotheses))
    LAST_HEARD[0] = heard.transcript if heard.transcript is not None else heard.text
    understood = understand_heard(heard, spec)
    yes = isinstance(understood, Answer) and understood.value is True
    no = isinstance(understood, Answer) and understood.value is False
    candidate = yes
    if code is not None:  # digits are the yes candidate of a code challenge
        attempt = code_attempt(understood, heard)
        candidate = isinstance(attempt, Answer) and attempt.value is True
    verdicts = [weigh_yes(heard, _policy(gap), code=code) for gap in GAPS_AT]
    if hypotheses:
        AUDIO_VERDICTS[(condition, verdicts[0].layers["audio"])] += 1
    if heard.competition is not None:
        NEAR_GAPS.append((condition, heard.competition.gap, heard.competition.competitor))
    taken = [candidate and v.accepted for v in verdicts]
    return yes, taken, len(pcm) / rate, elapsed, no


def print_gaps(title: str) -> None:
    """The near-miss gaps seen, then forget them."""
    if NEAR_GAPS:
        shown = ", ".join(f"{where} {gap:.1f} ({rival})" for where, gap, rival in sorted(
            NEAR_GAPS, key=lambda row: row[1]))
        print(f"  near-miss gaps ({title}, nats, best competitor): {shown}")
    NEAR_GAPS.clear()


def _condition(entry: dict[str, Any]) -> str:
    rate = entry.get("sample_rate", entry.get("rate", 16000))
    if entry.get("noise") and entry.get("snr_db") is not None:
        return f"{entry['noise']}{entry['snr_db']:02d}/{rate // 1000}k"
    condition = str(entry.get("condition", "?"))
    return condition + (f"/{entry['noise']}" if entry.get("noise") else "")


def print_audio_verdicts() -> None:
    """The audio layer's verdicts per condition, then forget them."""
    if not AUDIO_VERDICTS:
        return
    print("  audio layer, per condition (utterances with words heard): passed / failed")
    for condition in sorted({c for c, _ in AUDIO_VERDICTS}):
        passed = AUDIO_VERDICTS[(condition, "passed")]
        failed = AUDIO_VERDICTS[(condition, "failed")]
        print(f"    {condition:22s} {passed:4d} / {failed:4d}")
    AUDIO_VERDICTS.clear()


def _spec(entry: dict[str, Any]) -> AnswerSpec:
    return AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])


async def adversarial(recognizer: Recognizer, folder: Path, sample: int) -> None:
    audio_dir, entries = load_manifest(folder)
    entries = entries[::sample]
    low: Counter[str] = Counter()
    high: list[Counter[str]] = [Counter() for _ in GAPS_AT]
    nos: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for entry in entries:
        category = str(entry.get("category", "?"))
        before = len(NEAR_GAPS)
        yes, taken, _, _, no = await _hear(
            recognizer,
            audio_dir / entry["file"],
            _spec(entry),
            _condition(entry),
            entry_code(entry, str(folder)),
        )
        for i in range(before, len(NEAR_GAPS)):
            NEAR_GAPS[i] = (f"{category}/{NEAR_GAPS[i][0]}", *NEAR_GAPS[i][1:])
        total[category] += 1
        low[category] += yes
        for counter, took in zip(high, taken, strict=True):
            counter[category] += took
        nos[category] += no
        if SHOW and (yes or taken[0]):
            tier = "high" if taken[0] else "low"
            print(f"  YES ({tier}) {category}: {entry['file']}  heard {LAST_HEARD[0]!r}")
    n = sum(total.values())
    labels = "/".join(_label(gap) for gap in GAPS_AT)
    print(f"adversarial set ({n} utterances, 1/{sample} sample), read as yes "
          f"(high tier at near-miss margin {labels}):")
    for category in sorted(total):
        highs = "/".join(str(counter[category]) for counter in high)
        print(f"  {category:10s} {total[category]:4d} utterances: low tier {low[category]:3d}, "
              f"high tier {highs}; read as no {nos[category]:3d}")
    highs = "/".join(f"{1000 * sum(counter.values()) / n:.1f}" for counter in high)
    print(f"  false approvals per 1,000: low tier {1000 * sum(low.values()) / n:.1f}, "
          f"high tier {highs}")
    print_no_code(str(folder))
    print_audio_verdicts()
    print_alignment()
    print_gaps("per category")


async def confirmations(recognizer: Recognizer, folder: Path, sample: int) -> None:
    audio_dir, entries = load_manifest(folder)
    takes: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for entry in entries:
        takes[(entry["id"], entry["voice"], entry["condition"])][entry["take"]] = entry
    keys = sorted(takes)[::sample]
    by_condition: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
    by_take2: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
    others: list[int] = [0 for _ in GAPS_AT[1:]]
    low_yes = 0
    refused: list[str] = []
    for key in keys:
        turns, seconds, taken = 0, 0.0, False
        done_at = [False for _ in GAPS_AT]
        for take in (1, 2):
            entry = takes[key][take]
            yes, accepted, audio_s, decode_s, no = await _hear(
                recognizer,
                audio_dir / entry["file"],
                _spec(entry),
                key[2],
                entry_code(entry, str(folder)),
            )
            done_at = [a or b for a, b in zip(done_at, accepted, strict=True)]
            if not taken:
                turns += 1
                seconds += audio_s + decode_s
            low_yes += yes if take == 1 else 0
            if no and not taken:
                # a real dialogue would end here, declined
                refused.append(entry["file"] + (f" {LAST_HEARD[0]!r}" if SHOW else ""))
            taken = taken or accepted[0]
            if all(done_at):
                break
        others = [n + d for n, d in zip(others, done_at[1:], strict=True)]
        by_condition[key[2]].append((turns, seconds, taken))
        if "take2" in takes[key][2]:
            by_take2[str(takes[key][2]["take2"])].append((turns, seconds, taken))
    print(f"true confirmations ({len(keys)} dialogues, 1/{sample} sample), high tier "
          f"(near-miss margin {_label(GAPS_AT[0])}):")
    everything: list[tuple[int, float, bool]] = []
    for condition, rows in sorted(by_condition.items()):
        everything += rows
        done = [r for r in rows if r[2]]
        print(f"  {condition:10s} within two turns {100 * len(done) / len(rows):5.1f}%  "
              f"mean turns {sum(r[0] for r in done) / max(1, len(done)):.2f}  "
              f"mean seconds {sum(r[1] for r in done) / max(1, len(done)):.2f}")
    done = [r for r in everything if r[2]]
    print(f"  all        within two turns {100 * len(done) / len(everything):5.1f}%  "
          f"mean turns {sum(r[0] for r in done) / max(1, len(done)):.2f}")
    print_take2(by_take2)
    for gap, n in zip(GAPS_AT[1:], others, strict=True):
        print(f"  all        within two turns {100 * n / len(everything):5.1f}%  "
              f"at near-miss margin {_label(gap)}")
    print(f"  low tier: first take read as yes {100 * low_yes / len(keys):.1f}%")
    print(f"  takes read as no (a confirmation refused by mishearing): {len(refused)}"
          + (f" ({', '.join(refused)})" if refused else ""))
    print_no_code(str(folder))
    print_audio_verdicts()
    print_alignment()
    print_gaps("per condition")


def print_take2(by_take2: dict[str, list[tuple[int, float, bool]]]) -> None:
    """Per kind of second take (the manifest's ``take2``: ``repeat``, the same phrase again;
    ``alone``, the word alone after the re-prompt): within two turns, and how many of the
    dialogues the first take did not complete the second did. Sets without the field print
    nothing."""
    for kind, rows in sorted(by_take2.items()):
        done = sum(r[2] for r in rows)
        second = [r for r in rows if r[0] == 2]
        rescued = sum(r[2] for r in second)
        print(f"  take 2 {kind:6s} within two turns {100 * done / len(rows):5.1f}% "
              f"({done}/{len(rows)} dialogues); the second take completed {rescued} of the "
              f"{len(second)} the first did not")


def gate(folders: list[Path]) -> None:
    """The speech gate alone (no recogniser) on every speech utterance of ``folders``, per
    condition: the SNR estimate now (in the speech band) and before (the same ratio over the
    full band: `bench_snr.before_db`), and the share the high tier's audio layer passes with
    each (same floor, `EvidencePolicy`)."""
    import numpy as np
    from bench_snr import before_db

    from voice_hitl.responder._risk import EvidencePolicy
    from voice_hitl.speech.asr import SpeechGate

    policy = EvidencePolicy()
    speech_gate = SpeechGate()
    rows: dict[str, list[tuple[float, float, bool, bool]]] = defaultdict(list)
    for folder in folders:
        audio_dir, entries = load_manifest(folder)
        for entry in entries:
            if entry.get("category") == "nonspeech":
                continue
            pcm, rate = read_wav(audio_dir / entry["file"])
            quality = speech_gate.measure(pcm, rate)
            probs, power, _ = speech_gate.windows(pcm, rate)
            old = before_db(power, probs > speech_gate.threshold)
            others = (
                quality.speech_probability >= policy.min_speech_probability
                and quality.clipped <= policy.max_clipped
            )
            rows[f"{folder.name}:{_condition(entry)}"].append(
                (quality.snr_db, old, others and old >= policy.min_snr_db,
                 others and quality.snr_db >= policy.min_snr_db)
            )
    print(f"speech gate per condition: SNR estimate now | before (median [min, max]); "
          f"audio layer passes at the {policy.min_snr_db:g} dB floor: before -> now")
    for key in sorted(rows):
        a = np.array(rows[key], dtype=np.float64)
        print(f"  {key:40s} n={len(a):3d}  "
              f"{np.median(a[:, 0]):5.1f} [{a[:, 0].min():5.1f}, {a[:, 0].max():5.1f}] | "
              f"{np.median(a[:, 1]):5.1f} [{a[:, 1].min():5.1f}, {a[:, 1].max():5.1f}]  "
              f"passes {100 * a[:, 2].mean():5.1f}% -> {100 * a[:, 3].mean():5.1f}%")


async def main_async(args: argparse.Namespace) -> None:
    if args.gate:
        await asyncio.to_thread(gate, args.adversarial + args.confirmations)
        return
    if args.cache is not None:
        import asr_cache

        asr_cache.install(args.cache)
    _count_alignment()
    for name in args.recognizer or ["whisper"]:
        recognizer: Recognizer
        if name == "whisper" and args.alone_margin is not None:
            margin = None if args.alone_margin == "off" else float(args.alone_margin)
            whisper = WhisperRecognizer(alone_margin=margin, alone_quieter_db=args.alone_quieter)
            recognizer = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
            await recognizer.load()
        else:
            recognizer = await load_recognizer(name)
        print(f"== {name}")
        for folder in args.adversarial:
            print(f"-- {folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}")
            if folder.exists():
                await adversarial(recognizer, folder, args.sample)
            else:
                print(f"(no adversarial set at {folder})")
        for folder in args.confirmations:
            print(f"-- {folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}")
            if folder.exists():
                await confirmations(recognizer, folder, args.sample)
            else:
                print(f"(no confirmation set at {folder})")
    if args.cache is not None:
        print(asr_cache.summary(), file=sys.stderr)


FIXTURES = ROOT / "audio_fixtures"
ADVERSARIAL_SETS = [FIXTURES / "adversarial", FIXTURES / "adversarial2", FIXTURES / "adversarial3"]
"""The development adversarial set (its false yeses were read), the held-out one (run several
times), and the third (issue 32: written after the challenge-alone rule)."""
CONFIRMATION_SETS = [
    FIXTURES / "confirmations",
    FIXTURES / "heldout2_confirmations",
    FIXTURES / "heldout3_confirmations",
    FIXTURES / "heldout4_confirmations",
]
"""The tuning confirmations and the held-out sets."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--recognizer", action="append", choices=list(RECOGNIZERS))
    parser.add_argument("--sample", type=int, default=1, help="every K-th utterance")
    parser.add_argument(
        "--adversarial", type=Path, action="append", help="default: adversarial, adversarial2"
    )
    parser.add_argument(
        "--confirmations",
        type=Path,
        action="append",
        help="default: confirmations and heldout2..4_confirmations",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the files read as yes, and as no"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="replay and keep Whisper's decodes in this SQLite file (asr_cache)",
    )
    parser.add_argument(
        "--gate", action="store_true", help="measure the speech gate alone (no recogniser)"
    )
    parser.add_argument(
        "--alone-margin", help="Whisper's alignment margin in nats, or 'off' (default: its own)"
    )
    parser.add_argument(
        "--alone-quieter", type=float, default=4.0, help="dB the extra words must be quieter"
    )
    parser.add_argument(
        "--near-miss-gap",
        action="append",
        help="the high tier's near-miss margin in nats, or 'off' (repeatable; first: --show)",
    )
    parser.add_argument(
        "--without-near-miss", action="append", help="leave this near-miss out (repeatable)"
    )
    parser.add_argument(
        "--challenge",
        choices=["word", "code"],
        default="word",
        help="what the high tier asks to be said (code: the manifest entry's 'code')",
    )
    args = parser.parse_args()
    CHALLENGE[0] = args.challenge
    if args.near_miss_gap:
        GAPS_AT[:] = [None if g == "off" else float(g) for g in args.near_miss_gap]
    if args.without_near_miss:
        from voice_hitl.speech._near_miss import NEAR_MISSES

        for word, nears in NEAR_MISSES.items():
            NEAR_MISSES[word] = tuple(n for n in nears if n not in args.without_near_miss)
    args.adversarial = args.adversarial or ADVERSARIAL_SETS
    args.confirmations = args.confirmations or CONFIRMATION_SETS
    global SHOW
    SHOW = args.show
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
