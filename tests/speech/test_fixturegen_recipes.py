"""Fixture recipes as data (``scripts/fixturegen/sets/*.toml``, issue 49): each recipe reads
into the plan that wrote its committed sets (what they say, in which voices and conditions,
with which descriptions), its vocabulary refuses what it does not know, and its lines are
the library's functions composed. No synthesiser runs (the voices and the crowd are not
made); regenerating a set sample for sample is the generator's check (``make_set.py``)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("soundfile")

from fixturegen_rig import fg, needs_sox, tone

_recipe = importlib.import_module("fixturegen._recipe")  # on the path once fixturegen_rig is in
_scenes = importlib.import_module("fixturegen._scenes")

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"


def _of_kind(kind: str) -> list[str]:
    return [n for n in fg.recipes() if _recipe.load(_recipe.recipe_path(n))["kind"] == kind]


NEVER_HEARD, PAIRS, ADVERSARIAL, PLAIN, TAKES, SCENES = (
    _of_kind(k)
    for k in ("never_heard", "heldout_pair", "adversarial", "plain", "takes", "scenes")
)


def _manifest(folder: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / folder / "manifest.json").read_text())
    return data


def _one_set(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A one-set recipe and its committed manifest, checked for the description (naming the
    generator) and the voices."""
    data = _recipe.load(_recipe.recipe_path(name))
    (folder,) = data["sets"]
    manifest = _manifest(folder)
    assert manifest["description"] == data["description"]
    assert f"scripts/make_set.py {name}" in data["description"]
    assert manifest["voices"] == list(data["voices"])
    return data, manifest


def _answers_said(name: str, rows: list[Any], fixtures: list[dict[str, Any]]) -> None:
    """The fixtures answer exactly ``rows`` (the recipe's answers) and nothing else."""
    said = _recipe.utterances(_recipe.recipe_path(name), rows)
    heard = {
        (e["id"], e["category"], e["text"], json.dumps(e["spec"]), json.dumps(e["expected"]))
        for e in fixtures
    }
    assert heard == {(u, c, t, json.dumps(s), json.dumps(w)) for u, c, s, t, w in said}


def test_the_recipes_are_there_and_their_scripts_are_gone() -> None:
    assert {"adversarial6", "adversarial7", "adversarial8", "adversarial9"} <= set(NEVER_HEARD)
    assert {"adversarial4", "adversarial5"} <= set(SCENES) and "adversarial3" in PLAIN
    scripts = Path(__file__).resolve().parents[2] / "scripts"
    assert not [n for n in fg.recipes() if (scripts / f"make_{n}.py").exists()]
    assert not list(scripts.glob("make_adversarial*.py"))


@pytest.mark.parametrize("name", NEVER_HEARD)
def test_a_recipe_reads_into_the_plan_of_its_committed_sets(name: str) -> None:
    recipe = fg.read_recipe(_recipe.recipe_path(name))
    plan = recipe.plan
    not_yes, confirmations, answers = (_manifest(s) for s in plan.sets)
    for manifest, description in zip(
        (not_yes, confirmations, answers), plan.descriptions, strict=True
    ):
        assert manifest["description"] == description
        assert f"scripts/make_set.py {name}" in description
    voices = list(recipe.data["voices"])
    conditions = recipe.plan_conditions()
    assert not_yes["voices"] == voices == answers["voices"] == confirmations["voices"]
    assert confirmations["conditions"] == conditions
    assert not_yes["conditions"][: len(conditions)] == conditions
    codes, words = plan.sentences
    said = {f"code_{u}": t for u, _, _, t in codes} | {f"word_{u}": t for u, _, t in words}
    speech = [e for e in not_yes["fixtures"] if e["id"] in said]
    assert {e["id"]: e["text"] for e in speech} == said
    assert len(speech) == 4 * len(said)  # each said by two voices, each in two conditions
    wanted = {(u, c, t, json.dumps(spec), json.dumps(want)) for u, c, spec, t, want in plan.answers}
    heard = {
        (e["id"], e["category"], e["text"], json.dumps(e["spec"]), json.dumps(e["expected"]))
        for e in answers["fixtures"]
        if "spec" in e and e["id"] in {a[0] for a in plan.answers}
    }
    assert heard == wanted
    alone = [e for e in not_yes["fixtures"] if e["id"] not in said]
    assert len(alone) == len(plan.noise[0])
    assert len(answers["fixtures"]) == len(plan.answers) * len(voices) + len(plan.noise[1])
    assert len(confirmations["fixtures"]) == 2 * sum(plan.counts)  # two takes each
    assert sorted(recipe.data["makers"]) == sorted({row[0] for row in plan.noise[0]})


def test_the_vocabulary_refuses_what_it_does_not_know() -> None:
    with pytest.raises(fg.RecipeError, match="'synth' must be one of"):
        _recipe.voice({"synth": "sam"}, "voices.x")
    with pytest.raises(fg.RecipeError, match="bad parameters for 'espeak'"):
        _recipe.voice({"synth": "espeak", "variant": "en-us", "sped": 150}, "voices.x")
    with pytest.raises(fg.RecipeError, match="unknown noise maker 'hoover'"):
        _recipe.noise_maker("hoover", None, "noises.x")
    with pytest.raises(fg.RecipeError, match="bad parameters for 'buzz'"):
        _recipe.noise_maker({"maker": "buzz", "hz": 50.0}, None, "noises.x")
    with pytest.raises(fg.RecipeError, match="needs the recipe's 'babble'"):
        _recipe.noise_maker("cafe", None, "noises.x")
    with pytest.raises(fg.RecipeError, match="takes 'of'"):
        _recipe.noise_maker({"maker": "reverberated", "reverb": ["50"]}, None, "noises.x")
    with pytest.raises(fg.RecipeError, match=r"lines.x\[0\]: 'opus' has no parameter \['kbit'\]"):
        _recipe.line([{"step": "opus", "kbit": 6}], "lines.x")
    with pytest.raises(fg.RecipeError, match=r"lines.x\[1\]: unknown step 'phaser'"):
        _recipe.line(["headset", "phaser"], "lines.x")
    with pytest.raises(fg.RecipeError, match="expected must be"):
        _recipe.expected({"maybe": True}, "answers.x")
    with pytest.raises(fg.RecipeError, match="no recipe 'adversarial0'"):
        _recipe.recipe_path("adversarial0")
    with pytest.raises(fg.RecipeError, match="unknown question 'weather'"):
        _recipe.utterances(Path("x.toml"), [["a", "b", "weather", "sunny", "yes"]])


def test_a_broken_recipe_is_refused_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "never_heard"\nsets = [\n')
    with pytest.raises(fg.RecipeError, match=r"bad\.toml: not a valid recipe"):
        fg.read_recipe(bad)
    bad.write_text('kind = "never_heard"\nsets = ["a", "b", "c"]\n')
    with pytest.raises(fg.RecipeError, match=r"bad\.toml: a missing or malformed key"):
        fg.read_recipe(bad)


def test_a_line_is_its_steps_composed_and_a_maker_its_function() -> None:
    x = np.random.default_rng(5).normal(0.0, 0.1, fg.RATE)
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    steps = [
        {"step": "band", "lo": 250.0, "hi": 3800.0},
        "agc",
        {"step": "drop_packets", "loss": 0.2},
    ]
    y, rate = _recipe.line(steps, "lines.x")(x, rng_a, x)
    want = fg.drop_packets(fg.agc(fg.band(x, fg.RATE, 250.0, 3800.0)), fg.RATE, rng_b, 0.2)
    assert rate == fg.RATE and np.array_equal(y, want)
    hum = _recipe.noise_maker({"maker": "buzz", "mains": 50.0}, None, "makers.hum")
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    assert np.array_equal(hum(800, rng_a), fg.buzz(800, rng_b, 50.0))
    assert _recipe.noise_maker("pink", None, "makers.pink") is fg.pink
    assert _recipe.expected({"pick": ["red", "Red"]}, "x") == fg.pick("red", "Red")
    assert _recipe.expected({"value": "6291"}, "x") == fg.value("6291")
    crowd = fg.Crowd([np.random.default_rng(4).normal(0.0, 0.1, 4000) for _ in range(3)])
    banded = {"maker": "banded", "of": "pink", "lo": 300.0, "hi": 3000.0}
    tv = _recipe.noise_maker(banded, crowd, "m")
    rng_a, rng_b = np.random.default_rng(6), np.random.default_rng(6)
    assert np.array_equal(tv(800, rng_a), fg.band(fg.pink(800, rng_b), fg.RATE, 300.0, 3000.0))
    two = _recipe.noise_maker("two_talkers", crowd, "m")
    rng_a, rng_b = np.random.default_rng(8), np.random.default_rng(8)
    assert np.array_equal(two(900, rng_a), fg.two_talkers(900, crowd.clips, rng_b))
    y, rate = _recipe.line(["telephone", "upsampled"], "lines.x")(x, rng_a, x)
    assert rate == fg.RATE and len(y) == len(x)


@needs_sox
def test_a_reverb_step_keeps_the_power_of_the_sound_before_the_floor() -> None:
    dry = tone(300.0, fg.RATE)
    floored = dry + np.random.default_rng(1).normal(0.0, 0.01, len(dry))
    room = _recipe.line([{"step": "reverb", "reverb": ["50", "50", "60"]}], "lines.x")
    y, rate = room(floored, np.random.default_rng(2), dry)
    assert rate == fg.RATE and np.mean(y**2) == pytest.approx(np.mean(dry**2))
    assert not np.allclose(y, floored, atol=0.01)


@pytest.mark.parametrize("name", PAIRS)
def test_a_pair_recipe_says_what_its_committed_sets_say(name: str) -> None:
    data = _recipe.load(_recipe.recipe_path(name))
    answers, confirmations = (_manifest(s) for s in data["sets"])
    tail = f", never tuned on; regenerate with scripts/make_set.py {name}"
    assert [answers["description"], confirmations["description"]] == [
        d + tail for d in data["descriptions"]
    ]
    voices = list(data["voices"])
    assert answers["voices"] == voices == confirmations["voices"]
    assert answers["conditions"] == data["conditions"]
    assert confirmations["conditions"] == list(fg.TAKE_CONDITIONS)
    _answers_said(name, data["answers"], answers["fixtures"])
    assert len(answers["fixtures"]) == len(data["answers"]) * len(voices) * len(data["conditions"])
    takes = {e["id"]: e["text"] for e in confirmations["fixtures"]}
    assert takes == data["phrases"]
    assert len(confirmations["fixtures"]) == len(takes) * len(voices) * 4 * 2


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_an_adversarial_recipe_says_what_its_committed_set_says(name: str) -> None:
    data, manifest = _one_set(name)
    speech = [e for e in manifest["fixtures"] if e["category"] != "nonspeech"]
    said = {(e["id"], e["category"], e["text"], e["fair"]) for e in speech}
    assert said == {tuple(row) for row in data["sentences"]}
    per_sentence = len(speech) // len(data["sentences"])
    assert per_sentence * len(data["sentences"]) == len(speech)
    assert {Counter(e["id"] for e in speech)[row[0]] for row in data["sentences"]} == {per_sentence}


@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_recipe_says_what_its_committed_set_says(name: str) -> None:
    data, manifest = _one_set(name)
    assert manifest["conditions"] == data["conditions"]
    _answers_said(name, data["answers"], manifest["fixtures"])
    voices, conditions = len(data["voices"]), len(data["conditions"])
    assert len(manifest["fixtures"]) == len(data["answers"]) * voices * conditions
    if data.get("noise_field"):  # the noise each voice is heard in, per condition
        noises = data["noises"]
        for e in manifest["fixtures"]:
            spec = noises.get(e["condition"])
            want = spec.get("by_voice", {}).get(e["voice"], spec["noise"]) if spec else None
            assert e["noise"] == want, e["file"]


def _scene_sets() -> list[tuple[str, int]]:
    return [
        (name, i)
        for name in SCENES
        for i in range(len(_recipe.load(_recipe.recipe_path(name))["set"]))
    ]


@pytest.mark.parametrize(("name", "index"), _scene_sets())
def test_a_scenes_recipe_assigns_what_its_committed_sets_hold(name: str, index: int) -> None:
    path = _recipe.recipe_path(name)
    data = _recipe.load(path)
    table = data["set"][index]
    manifest = _manifest(table["folder"])
    assert manifest["description"] == table["description"]
    assert f"scripts/make_set.py {name}" in table["description"]
    voices = [v for v in data["voices"] if v not in table.get("leave_out", [])]
    assert manifest["voices"] == voices
    assert manifest["conditions"][: len(data["conditions"])] == data["conditions"]
    speech = [e for e in manifest["fixtures"] if e["category"] != "nonspeech"]
    alone = [e for e in manifest["fixtures"] if e["category"] == "nonspeech"]
    assert [(e["noise"], e["level_dbfs"]) for e in alone] == [
        (k, level) for k, level, _ in table.get("noise_alone", [])
    ]
    rows = _scenes._rows(path, table)
    pools = table.get("pools", {})
    said = _scenes._assigned(table["said_by"], rows, voices, data["conditions"], pools)
    takes = [t for t, _ in table.get("takes", [])] or [None]
    want = [
        (rows[i][0], voice, take, condition)
        for i, voice, conditions in said
        for take in takes
        for condition in conditions
    ]
    assert [(e["id"], e["voice"], e.get("take"), e["condition"]) for e in speech] == want
    texts = {r[0]: r[3] for r in rows}
    for e in speech:
        again = e.get("take2") == "alone" and e["take"] == 2
        assert e["text"] == (table["take2"]["alone"] if again else texts[e["id"]])
        assert (e["spec"], e["expected"]) == next((r[2], r[4]) for r in rows if r[0] == e["id"])
    if "take2" in table:
        kinds = Counter(e["take2"] for e in speech)
        assert kinds["alone"] == kinds["repeat"] == len(speech) // 2


def test_a_scenes_recipe_refuses_a_bad_assignment_and_an_unknown_noise(tmp_path: Path) -> None:
    with pytest.raises(fg.RecipeError, match="said_by must be"):
        _scenes._assigned({"voices": [0, 3]}, [("a", "b")], ["v"], ["c"], {})
    data = {"lead_s": 0.3, "makers": {}, "noises": {"c": {"noise": "white", "snr": 5.0}}}
    data["noises"]["c"]["by_voice"] = {"v": "babble"}
    with pytest.raises(fg.RecipeError, match="by_voice names a maker 'makers' lacks"):
        fg.read_rig(tmp_path / "x.toml", data, ["c"])
    with pytest.raises(fg.RecipeError, match="noises or lines of no condition"):
        fg.read_rig(tmp_path / "x.toml", {"lead_s": 0.3, "lines": {"d": ["telephone"]}}, ["c"])


def test_a_fresh_scenes_recipe_refuses_a_text_another_set_says(tmp_path: Path) -> None:
    sets = tmp_path / "scripts" / "fixturegen" / "sets"
    sets.mkdir(parents=True)
    other = tmp_path / "audio_fixtures" / "older"
    other.mkdir(parents=True)
    other.joinpath("manifest.json").write_text(json.dumps({"fixtures": [{"text": "Not Today"}]}))
    recipe = sets / "newer.toml"
    recipe.write_text(
        'kind = "scenes"\nfresh = true\nconditions = ["c"]\n[voices]\n[[set]]\n'
        'folder = "newer"\nsentences = [["a", "b", "not today"]]\n'
    )
    with pytest.raises(fg.RecipeError, match=r"already said by another set: \['not today'\]"):
        fg.write_scenes(recipe, _recipe.load(recipe), tmp_path / "out")


@pytest.mark.parametrize("name", TAKES)
def test_a_takes_recipe_says_what_its_committed_set_says(name: str) -> None:
    data, manifest = _one_set(name)
    assert manifest["conditions"] == data["conditions"]
    assert {w for w, _ in data["babble"]} <= set(data["voices"])
    assert {e["id"]: e["text"] for e in manifest["fixtures"]} == data["phrases"]
    voices, conditions = len(data["voices"]), len(data["conditions"])
    assert len(manifest["fixtures"]) == len(data["phrases"]) * voices * conditions * 2


def test_the_generator_lists_the_recipes_and_refuses_an_unknown_one() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "make_set.py"
    listed = subprocess.run(
        [sys.executable, str(script), "--list"], capture_output=True, text=True, timeout=30
    )
    assert listed.returncode == 0 and listed.stdout.split() == fg.recipes()
    unknown = subprocess.run(
        [sys.executable, str(script), "adversarial0"], capture_output=True, text=True, timeout=30
    )
    assert unknown.returncode == 1
    assert "no recipe 'adversarial0'" in unknown.stderr and "Traceback" not in unknown.stderr
