"""Issue 32: the low tier's false yeses and the no's not said, file by file, with the readings
behind them.

For every utterance of the sets given, Whisper (behind the gate and the denoiser, as
`load_recognizer("whisper")` builds it) hears the file; the readings of its passes, the text
understood, the near-miss gap and the answer are recorded. Then:

* ``--adversarial DIR`` (nothing in it is a yes): every file read as yes at the low tier
  (`understand_heard`), with its sentence, category, condition, the readings and the yes
  reading's shape (see `why_yes`);
* ``--confirmations DIR`` (the challenge word said, two takes per dialogue): the first takes
  read as yes at the low tier and the takes read as no;
* ``--heldout DIR`` (every question kind): the answers read as "no" that the person did not say
  (`bench_heldout.nos_not_said`'s rule), with the readings and the rule of `doubt_no` that let
  the no stand, and the set's accuracy, false yeses and no's not said.

``--cache FILE`` replays Whisper's work from `asr_cache` (a rule change then costs no
decoding). Run: ``python bench/bench_lowtier.py --cache FILE --adversarial DIR ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.responder._risk import EvidencePolicy, weigh_yes
from voice_hitl.speech import Answer, AnswerSpec, MetaAnswer, understand
from voice_hitl.speech._fixtures import load_manifest, read_audio, scored
from voice_hitl.speech._no_heard import plain_refusal
from voice_hitl.speech.asr import Recognizer, WhisperRecognizer, load_recognizer
from voice_hitl.voice._provider_events import transcription_of

DUMP: list[Any] = []
"""``--dump``: the open JSON-lines file every utterance is written to."""

REFUSALS = frozenset({"negation", "refusal_with_word"})
"""Adversarial categories whose people did say no."""


@dataclass
class Row:
    """One utterance heard."""

    entry: dict[str, Any]
    readings: list[str]
    heard: str
    text: str
    got: str
    gap: float | None
    third: list[str]
    high: bool


LAST: list[Any] = [None]
THIRD: list[str] = []
"""The readings of the pass prompted with the challenge words alone, for the last file."""


def _record() -> None:
    real = WhisperRecognizer.hear_sync
    decode = WhisperRecognizer.decode_sync

    def recorded(self: WhisperRecognizer, *args: Any, **kwargs: Any) -> Any:
        LAST[0] = result = real(self, *args, **kwargs)
        return result

    def decoded(self: WhisperRecognizer, *args: Any, **kwargs: Any) -> Any:
        result = decode(self, *args, **kwargs)
        if kwargs.get("words") is not None:
            THIRD.append(result[0])
        return result

    WhisperRecognizer.hear_sync = recorded  # type: ignore[method-assign]
    WhisperRecognizer.decode_sync = decoded  # type: ignore[method-assign]


def _got(understood: object) -> str:
    if isinstance(understood, Answer):
        return "yes" if understood.value is True else "no" if understood.value is False else str(
            understood.choice_id or understood.value
        )
    if isinstance(understood, MetaAnswer):
        return f"<{understood.intent}>"
    return "<reject>"


async def hear(recognizer: Recognizer, folder: Path) -> list[Row]:
    audio_dir, entries = load_manifest(folder)
    rows: list[Row] = []
    for entry in entries:
        spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
        pcm, rate = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
        LAST[0] = None
        THIRD.clear()
        hypotheses = await recognizer.recognize(pcm, rate, spec)
        hearing = LAST[0]
        readings = [r for r, _ in hearing.readings] if hearing is not None else []
        heard = Heard.of(transcription_of(hypotheses))
        understood = understand_heard(heard, spec) if hypotheses else None
        gap = heard.competition.gap if heard.competition is not None else None
        got = _got(understood)
        high = got == "yes" and weigh_yes(heard, EvidencePolicy()).accepted
        rows.append(Row(entry, readings, heard.transcript or "", heard.text, got, gap,
                        list(THIRD), high))
        if DUMP:
            DUMP[0].write(json.dumps({"set": folder.name, **{k: v for k, v in asdict(
                rows[-1]).items()}}) + "\n")
    return rows


def why_yes(text: str) -> str:
    """The shape of a yes reading: the challenge word alone, or another yes phrase."""
    from voice_hitl.speech._text import tokens
    from voice_hitl.speech._vocab import CHALLENGE_WORDS

    toks = tokens(text)
    if set(toks) & CHALLENGE_WORDS:
        return "challenge word (alone)" if len(toks) <= 2 else "challenge word + " + " ".join(
            t for t in toks if t not in CHALLENGE_WORDS)
    return "yes phrase"


def _gap(row: Row) -> str:
    return "" if row.gap is None else f" gap {row.gap:.1f}"


def adversarial(name: str, rows: list[Row]) -> None:
    yeses = [r for r in rows if r.got == "yes"]
    print(f"== {name}: {len(yeses)} of {len(rows)} read as yes at the low tier "
          f"({1000 * len(yeses) / len(rows):.1f} per 1,000)")
    for r in yeses:
        e = r.entry
        tier = "high" if r.high else "low"
        third = f" third {r.third}" if r.third else ""
        print(f"  ({tier}) {e['category']:16s} {e['text']!r:32s} {e['voice']}/{e['condition']}: "
              f"heard {r.heard!r} readings {r.readings}{third}{_gap(r)} [{why_yes(r.heard)}]")


def confirmations(name: str, rows: list[Row]) -> None:
    first = [r for r in rows if r.entry.get("take") == 1]
    yes = sum(r.got == "yes" for r in first)
    nos = [r for r in rows if r.got == "no"]
    print(f"== {name}: first take read as yes (low tier) {yes}/{len(first)} "
          f"({100 * yes / max(1, len(first)):.1f} %); takes read as no {len(nos)}")
    for r in nos:
        print(f"  NO {r.entry['file']}: heard {r.heard!r} readings {r.readings}")


def heldout(name: str, rows: list[Row]) -> None:
    right = 0
    false_yes = 0
    not_said: list[Row] = []
    for r in rows:
        spec = AnswerSpec.from_tool_call(r.entry["spec"]["tool"], r.entry["spec"]["arguments"])
        result = understand(r.text, spec)
        correct, yes, _ = scored(r.entry["expected"], result)
        right += correct
        false_yes += yes
        expected = r.entry["expected"]
        said_no = expected.get("type") == "answer" and expected.get("value") is False
        if _got(result) == "no" and not said_no and r.entry.get("category") not in REFUSALS:
            not_said.append(r)
    n = len(rows)
    print(f"== {name}: {n} files, accuracy {100 * right / n:.1f} %, false yes {false_yes}, "
          f"a no not said {len(not_said)} ({100 * len(not_said) / n:.2f} %)")
    for r in not_said:
        rule = "plain refusal" if plain_refusal(r.heard) else "the readings agree on the no"
        print(f"  {r.entry['category']:16s} said {r.entry['text']!r:30s} "
              f"{r.entry['voice']}/{r.entry['condition']}: heard {r.heard!r} "
              f"readings {r.readings} [{rule}]")


async def amain(args: argparse.Namespace) -> None:
    if args.cache is not None:
        import asr_cache

        asr_cache.install(args.cache)
    _record()
    if args.dump is not None:
        DUMP.append(args.dump.open("w"))
    recognizer = await load_recognizer("whisper")
    by_kind: dict[str, list[Path]] = defaultdict(list)
    for kind in ("adversarial", "confirmations", "heldout"):
        by_kind[kind] = getattr(args, kind) or []
    for folder in by_kind["adversarial"]:
        adversarial(folder.name, await hear(recognizer, folder))
    for folder in by_kind["confirmations"]:
        confirmations(folder.name, await hear(recognizer, folder))
    for folder in by_kind["heldout"]:
        heldout(folder.name, await hear(recognizer, folder))
    if args.cache is not None:
        import asr_cache

        print(asr_cache.summary(), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adversarial", type=Path, action="append")
    parser.add_argument("--confirmations", type=Path, action="append")
    parser.add_argument("--heldout", type=Path, action="append")
    parser.add_argument("--cache", type=Path, default=None, metavar="FILE")
    parser.add_argument("--dump", type=Path, default=None, help="every utterance, JSON lines")
    asyncio.run(amain(parser.parse_args()))


if __name__ == "__main__":
    main()
