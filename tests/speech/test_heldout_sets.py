"""The held-out (issue 14) and adversarial (issue 17) audio sets: their shape, and a small
stratified sample through Whisper against aggregate floors with a margin.

The recognisers are tuned on ``audio_fixtures/*.flac`` only; ``audio_fixtures/heldout`` holds
phrasings and voices never used for tuning and ``audio_fixtures/adversarial`` noise and
non-affirmative speech that must never be read as a yes. The full measurement is
``bench/bench_heldout.py`` (figures in ``bench/results_heldout.txt``); the suite replays 40
files (27 held-out, one per phrasing, rotating over every voice x condition cell, and 13
adversarial) so that one unlucky file on a loaded machine cannot fail it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from voice_hitl.speech._fixtures import load_manifest, read_audio, run_fixtures, summarise
from voice_hitl.speech._replay import check_fixtures
from voice_hitl.speech._spec import AnswerSpec

ROOT = Path(__file__).resolve().parents[2] / "audio_fixtures"
HELDOUT = ROOT / "heldout"
ADVERSARIAL = ROOT / "adversarial"
HELDOUT2 = ROOT / "heldout2"
ADVERSARIAL2 = ROOT / "adversarial2"
CONFIRMATIONS2 = ROOT / "heldout2_confirmations"
HELDOUT3 = ROOT / "heldout3"
HELDOUT4 = ROOT / "heldout4"

pytest.importorskip("soundfile")

TUNING_VOICES = {"piper", "flite", "espeak"}
CONDITIONS = {"clean", "noisy", "telephone_8k", "telephone_16k"}
CONDITIONS2 = {"clean", "babble", "telephone_8k", "telephone_16k"}
CONDITIONS3 = CONDITIONS2 | {"white10"}
HELDOUT_CATEGORIES = {
    "confirm_yes", "confirm_no", "polite_choice", "self_correction", "operator", "repeat",
    "cancel", "digits", "number", "out_of_set", "unrelated",
}  # fmt: skip
ADVERSARIAL_CATEGORIES = {"nonspeech", "negation", "cancel", "operator", "question"}
ADVERSARIAL2_CATEGORIES = ADVERSARIAL_CATEGORIES | {"near_miss"}

_SAMPLE_MEASURED = 22 / 27
"""Held-out sample accuracy of the ``whisper`` recogniser, measured 2026-12-03 at commit
ae9f0b9's recognisers (load ~1.7 on 2 cores); the test's floor is 15 points below it."""


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def _voices(folder: Path) -> set[str]:
    return {e["voice"] for e in load_manifest(folder)[1]} - {"none"}


@pytest.mark.parametrize(
    ("folder", "conditions", "max_bytes"),
    [
        (HELDOUT, CONDITIONS, 17_000_000),
        (HELDOUT2, CONDITIONS2, 17_000_000),
        (HELDOUT3, CONDITIONS3, 22_000_000),
        (HELDOUT4, CONDITIONS3, 22_000_000),
    ],
)
def test_heldout_manifest_is_well_formed(
    folder: Path, conditions: set[str], max_bytes: int
) -> None:
    audio_dir, entries = load_manifest(folder)
    check_fixtures(audio_dir, entries)  # every spec parses, every file is readable audio
    ids = {e["id"] for e in entries}
    voices = {e["voice"] for e in entries}
    assert len(ids) >= 24
    assert len(voices - TUNING_VOICES) >= 3 and not voices & TUNING_VOICES
    assert {e["condition"] for e in entries} == conditions
    assert {e["category"] for e in entries} == HELDOUT_CATEGORIES
    # Every phrasing in every voice x condition cell, once.
    cells = Counter((e["id"], e["voice"], e["condition"]) for e in entries)
    assert set(cells.values()) == {1} and len(cells) == len(ids) * len(voices) * len(conditions)
    # New phrasings: none of them is a tuning fixture's text.
    _, tuning = load_manifest(ROOT)
    assert not {e["text"].lower() for e in entries} & {e["text"].lower() for e in tuning}
    kinds = {(e["spec"]["tool"], e["spec"]["arguments"].get("mode")) for e in entries}
    assert kinds == {
        ("ConfirmAction", None),
        ("AskUserQuestion", None),
        ("AskUserQuestion", "number"),
        ("AskUserQuestion", "digits"),
    }
    assert {e["expected"]["type"] for e in entries} == {"answer", "meta", "no_match"}
    assert _folder_bytes(folder) < max_bytes


def test_the_second_sets_share_nothing_with_the_first() -> None:
    """heldout2, adversarial2 and heldout2_confirmations: voices no other set uses, texts
    neither held-out set nor the adversarial set says."""
    first = (
        _voices(HELDOUT) | _voices(ADVERSARIAL) | _voices(ROOT / "confirmations") | TUNING_VOICES
    )
    for folder in (HELDOUT2, ADVERSARIAL2, CONFIRMATIONS2):
        assert _voices(folder) == _voices(HELDOUT2) and not _voices(folder) & first, folder
    texts = {e["text"].lower() for f in (HELDOUT, ADVERSARIAL) for e in load_manifest(f)[1]}
    assert not {e["text"].lower() for e in load_manifest(HELDOUT2)[1]} & texts
    assert not {e["text"].lower() for e in load_manifest(ADVERSARIAL2)[1] if e["text"]} & texts
    audio_dir, confirmations = load_manifest(CONFIRMATIONS2)
    check_fixtures(audio_dir, confirmations)
    takes = Counter((e["id"], e["voice"], e["condition"]) for e in confirmations)
    assert set(takes.values()) == {2} and len(takes) >= 60


def test_each_later_set_brings_new_voices_and_texts() -> None:
    """heldout3 and heldout4 (and their confirmations): voices no earlier set speaks with,
    phrasings no earlier answer set says; each was written before the one before it was read.
    (heldout4 shares two sentences with the adversarial sets, a development set of
    non-answers: "no, I don't want that" and "how long will this take".)"""
    earlier = [HELDOUT, ADVERSARIAL, ROOT / "confirmations", HELDOUT2, ADVERSARIAL2]
    answer_sets = [ROOT, HELDOUT, HELDOUT2]
    for folder in (HELDOUT3, HELDOUT4):
        voices = _voices(folder) | _voices(folder.with_name(folder.name + "_confirmations"))
        assert voices == _voices(folder), folder
        assert not voices & (set().union(*map(_voices, earlier)) | TUNING_VOICES), folder
        texts = {e["text"].lower() for f in answer_sets for e in load_manifest(f)[1]}
        assert not {e["text"].lower() for e in load_manifest(folder)[1]} & texts, folder
        audio_dir, takes = load_manifest(folder.with_name(folder.name + "_confirmations"))
        check_fixtures(audio_dir, takes)
        assert set(Counter((e["id"], e["voice"], e["condition"]) for e in takes).values()) == {2}
        earlier.append(folder)
        answer_sets.append(folder)


@pytest.mark.parametrize("folder", [HELDOUT, HELDOUT2, HELDOUT3, HELDOUT4])
def test_heldout_files_load_at_their_rates(folder: Path) -> None:
    from voice_hitl.speech.asr import is_narrowband

    _, entries = load_manifest(folder)
    for e in entries:
        assert e["file"].endswith(".flac")
        pcm, rate = read_audio(folder / e["file"])
        assert rate == e["sample_rate"], e["file"]
        assert 0.8 < len(pcm) / rate < 6.0, e["file"]
        want = {"telephone_8k": 8000}.get(e["condition"], 16000)
        assert rate == want, e["file"]
        if e["condition"] == "telephone_16k":
            assert is_narrowband(pcm, rate), e["file"]  # upsampled telephone audio
        elif e["condition"] in ("clean", "noisy", "babble", "white10"):
            assert not is_narrowband(pcm, rate), e["file"]


@pytest.mark.parametrize(
    ("folder", "categories"),
    [(ADVERSARIAL, ADVERSARIAL_CATEGORIES), (ADVERSARIAL2, ADVERSARIAL2_CATEGORIES)],
)
def test_adversarial_manifest_is_well_formed(folder: Path, categories: set[str]) -> None:
    audio_dir, entries = load_manifest(folder)
    check_fixtures(audio_dir, entries)
    assert 300 <= len(entries) <= 600
    assert {e["category"] for e in entries} == categories
    for e in entries:
        assert e["spec"]["tool"] == "ConfirmAction", e["file"]
        assert e["expected"] == {"type": "no_match"}, e["file"]
        assert e["rate"] in (8000, 16000) and {"noise", "snr_db"} <= set(e), e["file"]
        pcm, rate = read_audio(folder / e["file"])
        assert rate == e["rate"] and len(pcm) > rate // 2, e["file"]
    speech = [e for e in entries if e["category"] != "nonspeech"]
    assert {(e["noise"], e["snr_db"], e["rate"]) for e in speech} == {
        (n, s, r) for n in ("white", "babble") for s in (0, 5, 10) for r in (8000, 16000)
    }
    assert len({e["voice"] for e in speech}) >= 3
    assert {e["noise"] for e in entries if e["category"] == "nonspeech"} == {
        "white", "pink", "clicks", "cough", "babble", "silence"
    }  # fmt: skip
    assert _folder_bytes(folder) < 17_000_000


def _heldout_sample(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One file per phrasing, rotating over the 16 voice x condition cells."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        by_id.setdefault(e["id"], []).append(e)
    return [group[(i * 5) % len(group)] for i, group in enumerate(by_id.values())]


def _recogniser(engine: Any) -> Any:
    """``run_fixtures``' recognise callback for ``engine`` (audio decoded off the loop)."""
    import asyncio

    async def recognise(audio: Path, spec: AnswerSpec) -> tuple[str, float, float]:
        pcm, rate = await asyncio.to_thread(read_audio, audio)
        hyps = await engine.recognize(pcm, rate, spec)
        best = hyps[0] if hyps else None
        return (best.text if best else ""), (best.score if best else 0.0), len(pcm) / rate

    return recognise


def _adversarial_sample(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return entries[::27]


async def test_sample_sizes_and_strata() -> None:
    _, held = load_manifest(HELDOUT)
    _, adv = load_manifest(ADVERSARIAL)
    h, a = _heldout_sample(held), _adversarial_sample(adv)
    assert len(h) + len(a) <= 40
    assert len({e["id"] for e in h}) == len(h)
    assert {(e["voice"], e["condition"]) for e in h} == {(e["voice"], e["condition"]) for e in held}
    assert {e["category"] for e in a} == ADVERSARIAL_CATEGORIES


@pytest.mark.timeout(300)
async def test_whisper_sample_meets_floors() -> None:
    pytest.importorskip("faster_whisper", reason="the whisper extra is not installed")
    pytest.importorskip("soxr")

    from voice_hitl.speech.asr import load_recognizer

    recognise = _recogniser(await load_recognizer("whisper"))

    _, held = load_manifest(HELDOUT)
    _, adv = load_manifest(ADVERSARIAL)
    held_results = await run_fixtures(HELDOUT, _heldout_sample(held), recognise)
    adv_results = await run_fixtures(ADVERSARIAL, _adversarial_sample(adv), recognise)
    summary = summarise(held_results)
    detail = json.dumps(
        [(r.file, r.transcript, r.got) for r in held_results + adv_results if not r.correct]
    )
    assert summary["accuracy"] >= _SAMPLE_MEASURED - 0.15, detail
    assert summary["false_yes"] == 0, detail
    assert sum(r.false_yes for r in adv_results) == 0, detail


_HELDOUT2_MEASURED = 0.795
"""``heldout2`` accuracy of the ``whisper`` recogniser over all 512 files
(bench/results_heldout.txt, 2026-12-04); the sample's floor is 20 points below it (the sample
is 32 files, so one standard deviation is about 7 points)."""


@pytest.mark.timeout(300)
async def test_whisper_heldout2_sample_meets_floors() -> None:
    """One file per phrasing of the set never tuned on, rotating over its 16 cells."""
    pytest.importorskip("faster_whisper", reason="the whisper extra is not installed")

    from voice_hitl.speech.asr import load_recognizer

    recognise = _recogniser(await load_recognizer("whisper"))

    _, entries = load_manifest(HELDOUT2)
    sample = _heldout_sample(entries)
    assert {(e["voice"], e["condition"]) for e in sample} == {
        (e["voice"], e["condition"]) for e in entries
    }
    results = await run_fixtures(HELDOUT2, sample, recognise)
    summary = summarise(results)
    detail = json.dumps([(r.file, r.transcript, r.got) for r in results if not r.correct])
    assert summary["accuracy"] >= _HELDOUT2_MEASURED - 0.20, detail
    assert summary["false_yes"] == 0, detail


NEVER_HEARD = [
    ROOT / name
    for n in range(7, 10)
    for name in (f"adversarial{n}", f"heldout{n + 1}_confirmations", f"heldout{n + 1}")
]
"""The never-heard sets of issue 32 item 4 (recipes ``adversarial7`` .. ``9``)."""


@pytest.mark.parametrize("folder", NEVER_HEARD, ids=lambda folder: folder.name)
def test_never_heard_manifests_match_their_files(folder: Path) -> None:
    audio_dir, entries = load_manifest(folder)
    check_fixtures(audio_dir, entries)
    files = {p.name for p in folder.iterdir() if p.name != "manifest.json"}
    assert files == {e["file"] for e in entries}  # no file unlisted, none missing
    kinds = {e["expected"]["type"] for e in entries}
    if folder.name.startswith("adversarial"):
        assert kinds == {"no_match"}  # nothing in it is a yes
    elif folder.name.endswith("_confirmations"):
        assert {e["take"] for e in entries} == {1, 2}
        assert all(e["expected"]["value"] is True for e in entries)
    else:
        assert kinds == {"answer", "meta", "no_match"}
        return
    codes = [e["code"] for e in entries if "code" in e]  # the code challenge's requests
    assert codes and all(c.isdigit() and len(c) == 3 for c in codes)
