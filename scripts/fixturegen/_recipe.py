"""A set's recipe as data: ``scripts/fixturegen/sets/<name>.toml``, read by one generator
(``scripts/make_set.py <name>``). This module turns a recipe's tables into the library's
objects by a small, closed vocabulary of names and keyword parameters (nothing in a recipe
is code; an unknown name or parameter is refused, naming where it is):

- a **voice**: ``{synth = "espeak" | "flite" | "festival" | "piper", <its parameters>}``
  (`espeak`: ``variant``, ``speed``, ``pitch``, ``program``; `flite`: ``name``; `piper`:
  ``length_scale``; `festival`: ``voice`` and, for a diphone voice's prosody
  (`diphone_prosody`), ``stretch``, ``f0_mean``, ``f0_std``), with ``sox = [effects]`` to
  pass it through sox (`through_sox`) and ``pause = seconds`` to say each `` ... `` of a
  text as that much silence (`paused`, after sox);
- a **noise maker**: a name (`MAKERS`) or ``{maker = name, <its parameters>}``; the crowd's
  makers (``crowd``, ``two_talkers``, ``cafe``, ``television``) use the set's babble;
  ``reverberated`` takes another maker (``of``) and sox reverb arguments (``reverb``), and
  ``banded`` another maker (``of``) and its band (``lo``, ``hi`` Hz);
- a **line** (a condition's room or channel): a list of steps (`STEPS`), each a name or
  ``{step = name, <its parameters>}``, applied in order from 16 kHz; a step that resamples
  (``phone_line``, ``telephone``, ``bluetooth``, ``mobile``, ``cordless``) hands 8 kHz to
  the next, ``upsampled`` brings it back to 16 kHz; ``reverb`` (sox reverb arguments,
  ``reverb``) keeps the power of the sound before the condition's floor;
- an **expected result**: ``"yes"``, ``"no"``, ``"reject"``, ``{meta = intent}``,
  ``{pick = [choice id, label]}`` or ``{value = v}``; a **question**: a name of `SPECS`.
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import _noise
from ._ambient import bluetooth, fan, muffled, speakerphone, traffic, typing
from ._audio import RATE, TEL_RATE, FloatArray, to_dbfs
from ._daily import agc, baby, bus, church, earbud, rain, vacuum
from ._homes import farfield, jitter, kitchen, laptop_mic, open_car, reverberated, television
from ._homes import water as running_water
from ._impair import buzz, car, drop_packets, music, opus, overdrive, room_reverb, upsampled, wind
from ._noise import Crowd, band, brown, clicks, coughs, near_silence, phone_line, pink, white
from ._scene import NoiseMaker
from ._sets import AMOUNT, CHALLENGE, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value
from ._sets import yes as said_yes
from ._venues import cafe, clinks, cordless, headset, mobile, stairwell
from ._voices import Voice, diphone_prosody, espeak, festival, flite, paused, piper, through_sox

__all__ = [
    "MAKERS",
    "SPECS",
    "STEPS",
    "Step",
    "RecipeError",
    "expected",
    "line",
    "load",
    "noise_maker",
    "recipe_path",
    "recipe_voices",
    "recipes",
    "utterances",
    "voice",
]

SETS = Path(__file__).resolve().parent / "sets"
"""Where the recipes are."""


class RecipeError(SystemExit):
    """A recipe names something the vocabulary lacks, or gives it a wrong parameter."""


def recipes(folder: Path = SETS) -> list[str]:
    """The names of the recipes in ``folder``, sorted."""
    return sorted(p.stem for p in folder.glob("*.toml"))


def recipe_path(name: str, folder: Path = SETS) -> Path:
    """The recipe file of set ``name``.

    Raises:
        RecipeError: there is none (naming the recipes there are).
    """
    path = folder / f"{name}.toml"
    if not path.is_file():
        raise RecipeError(f"no recipe {name!r} in {folder}; there are: {recipes(folder)}")
    return path


def recipe_voices(name: str) -> dict[str, Voice]:
    """The voices of recipe ``name``, by name (for a script that speaks in a set's voices).

    Raises:
        RecipeError: no such recipe, or a voice the vocabulary lacks.
    """
    path = recipe_path(name)
    table = load(path).get("voices", {})
    return {v: voice(spec, f"{path}: voices.{v}") for v, spec in table.items()}


def load(path: Path) -> dict[str, Any]:
    """The recipe at ``path``, parsed.

    Raises:
        RecipeError: it is not valid TOML (naming the file and the fault).
    """
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{path}: not a valid recipe ({exc})") from None


def _table(spec: object, key: str, where: str) -> tuple[str, dict[str, Any]]:
    """``(name, parameters)`` of a vocabulary entry: a bare name or a table with ``key``."""
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, dict) and isinstance(spec.get(key), str):
        params = dict(spec)
        return str(params.pop(key)), params
    raise RecipeError(f"{where}: expected a name or a table with {key!r}, got {spec!r}")


def _called(where: str, what: str, make: Callable[..., Any], *args: Any, **params: Any) -> Any:
    try:
        return make(*args, **params)
    except TypeError as exc:
        raise RecipeError(
            f"{where}: bad parameters for {what!r}: {sorted(params)} ({exc})"
        ) from None


def _festival(voice: str, stretch: float = 0.0, f0_mean: int = 0, f0_std: int = 0) -> Voice:
    prosody = diphone_prosody(stretch, f0_mean, f0_std) if stretch else ""
    return festival(voice, prosody)


SYNTHS: dict[str, Callable[..., Voice]] = {
    "espeak": espeak,
    "flite": flite,
    "festival": _festival,
    "piper": piper,
}


def voice(spec: Mapping[str, Any], where: str) -> Voice:
    """The voice a recipe's table describes (see the module's docstring).

    Raises:
        RecipeError: an unknown synthesiser or parameter.
    """
    params = dict(spec)
    synth, sox = params.pop("synth", None), params.pop("sox", [])
    pause = params.pop("pause", None)
    if synth not in SYNTHS:
        raise RecipeError(f"{where}: 'synth' must be one of {sorted(SYNTHS)}, got {synth!r}")
    made: Voice = _called(where, str(synth), SYNTHS[str(synth)], **params)
    made = through_sox(made, *(str(e) for e in sox)) if sox else made
    return paused(made, float(pause)) if pause is not None else made


def _plain(make: Callable[..., FloatArray]) -> Callable[..., NoiseMaker]:
    """A maker of noise from ``(n, rng)`` and keyword parameters (none: ``make`` itself)."""

    def build(_crowd: Crowd | None, **params: Any) -> NoiseMaker:
        if not params:
            return make
        try:
            inspect.signature(make).bind(0, None, **params)
        except TypeError as exc:
            raise RecipeError(f"bad parameters for {make.__name__!r}: {exc}") from None
        return lambda n, rng: make(n, rng, **params)

    return build


def _crowd(
    crowd: Crowd | None, talkers: int | None = None, dbfs: float | None = None
) -> NoiseMaker:
    said = _need(crowd)
    if dbfs is None:
        return lambda n, rng: said(n, rng, talkers)
    return lambda n, rng: to_dbfs(said(n, rng, talkers), dbfs)


def _two_talkers(crowd: Crowd | None) -> NoiseMaker:
    clips = _need(crowd).clips
    return lambda n, rng: _noise.two_talkers(n, clips, rng)


def _need(crowd: Crowd | None) -> Crowd:
    if crowd is None:
        raise RecipeError("a crowd's noise needs the recipe's 'babble' lines and 'crowd' talkers")
    return crowd


MAKERS: dict[str, Callable[..., NoiseMaker]] = {
    **{
        f.__name__: _plain(f)
        for f in (white, pink, brown, traffic, fan, typing, clinks, car, wind, music, buzz)
    },
    **{f.__name__: _plain(f) for f in (kitchen, open_car, bus, rain, vacuum, baby, clicks)},
    **{f.__name__: _plain(f) for f in (coughs, near_silence)},
    "water": _plain(running_water),
    "crowd": _crowd,
    "two_talkers": _two_talkers,
    "cafe": lambda crowd, **p: cafe(_need(crowd), **p),
    "television": lambda crowd, **p: television(_need(crowd), **p),
}
"""Noise makers by name: each takes the set's crowd (or None) and keyword parameters."""


def noise_maker(spec: object, crowd: Crowd | None, where: str) -> NoiseMaker:
    """The noise maker a recipe names (see the module's docstring).

    Raises:
        RecipeError: an unknown maker or parameter.
    """
    name, params = _table(spec, "maker", where)
    if name == "reverberated":
        of, reverb = params.pop("of", None), params.pop("reverb", None)
        if of is None or not isinstance(reverb, list) or params:
            raise RecipeError(f"{where}: 'reverberated' takes 'of' (a maker) and 'reverb' only")
        return reverberated(noise_maker(of, crowd, where), *(str(r) for r in reverb))
    if name == "banded":
        of, lo, hi = params.pop("of", None), params.pop("lo", None), params.pop("hi", None)
        if of is None or lo is None or hi is None or params:
            raise RecipeError(f"{where}: 'banded' takes 'of' (a maker), 'lo' and 'hi' only")
        return _banded(noise_maker(of, crowd, where), float(lo), float(hi))
    if name not in MAKERS:
        raise RecipeError(f"{where}: unknown noise maker {name!r}; known: {sorted(MAKERS)}")
    made: NoiseMaker = _called(where, name, MAKERS[name], crowd, **params)
    return made


def _banded(make: NoiseMaker, lo: float, hi: float) -> NoiseMaker:
    """``make``'s noise through a ``lo``-``hi`` Hz band (a small speaker, a thin wall)."""
    return lambda n, rng: band(make(n, rng), RATE, lo, hi)


class Step(NamedTuple):
    """A line's step: the library's function and how the chain calls it, ``(function, x,
    rate in, rng, parameters) -> (y, rate out)``; a ``dry`` step's parameters get ``like``:
    the sound before the condition's floor and line."""

    function: Callable[..., FloatArray]
    call: Callable[
        [Callable[..., FloatArray], FloatArray, int, np.random.Generator, dict[str, Any]],
        tuple[FloatArray, int],
    ]
    dry: bool = False


def _keeps(f: Callable[..., FloatArray]) -> Step:
    return Step(f, lambda f, x, rate, _rng, p: (f(x, **p), rate))


def _to_8k(f: Callable[..., FloatArray], noisy: bool = False) -> Step:
    if noisy:
        return Step(f, lambda f, x, _rate, rng, p: (f(x, rng, **p), TEL_RATE))
    return Step(f, lambda f, x, _rate, _rng, p: (f(x, **p), TEL_RATE))


def _at_rate(f: Callable[..., FloatArray]) -> Step:
    return Step(f, lambda f, x, rate, _rng, p: (f(x, rate, **p), rate))



STEPS: dict[str, Step] = {
    **{
        f.__name__: _keeps(f)
        for f in (speakerphone, muffled, headset, stairwell, laptop_mic, farfield, earbud)
    },
    "church": _keeps(church),
    "overdrive": _keeps(overdrive),
    "phone_line": _to_8k(phone_line),
    "telephone": _to_8k(_noise.telephone),
    "upsampled": Step(upsampled, lambda f, x, rate, _rng, p: (f(x, rate, **p), RATE)),
    "reverb": Step(room_reverb, lambda f, x, _rate, _rng, p: (f(x, **p), RATE), dry=True),
    "cordless": _to_8k(cordless),
    "bluetooth": _to_8k(bluetooth, noisy=True),
    "mobile": _to_8k(mobile, noisy=True),
    "agc": _at_rate(agc),
    "band": _at_rate(band),
    "opus": _at_rate(opus),
    "jitter": Step(jitter, lambda f, x, rate, rng, p: (f(x, rng, rate, **p), rate)),
    "drop_packets": Step(drop_packets, lambda f, x, rate, rng, p: (f(x, rate, rng, **p), rate)),
}
"""A line's steps by name."""


def line(
    steps: Sequence[object], where: str
) -> Callable[[FloatArray, np.random.Generator, FloatArray], tuple[FloatArray, int]]:
    """The room or channel a recipe's list of steps describes, from 16 kHz: ``(x, rng, the
    sound before the floor) -> (y, rate)``.

    Raises:
        RecipeError: an unknown step, or a parameter its function lacks (the audio, rate and
            random generator are the chain's).
    """
    chain: list[tuple[Step, dict[str, Any]]] = []
    for i, spec in enumerate(steps):
        at = f"{where}[{i}]"
        name, params = _table(spec, "step", at)
        if name not in STEPS:
            raise RecipeError(f"{at}: unknown step {name!r}; known: {sorted(STEPS)}")
        step = STEPS[name]
        takes = set(inspect.signature(step.function).parameters) - {"x", "rate", "rng", "like"}
        if not set(params) <= takes:
            wrong = sorted(set(params) - takes)
            raise RecipeError(f"{at}: {name!r} has no parameter {wrong}; it takes {sorted(takes)}")
        chain.append((step, params))

    def run(x: FloatArray, rng: np.random.Generator, dry: FloatArray) -> tuple[FloatArray, int]:
        y, rate = x, RATE
        for step, params in chain:
            given = params | {"like": dry} if step.dry else params
            y, rate = step.call(step.function, y, rate, rng, given)
        return y, rate

    return run


SPECS: dict[str, dict[str, Any]] = {
    "confirm": CONFIRM,
    "challenge": CHALLENGE,
    "colour": COLOUR,
    "pay": PAY,
    "amount": AMOUNT,
    "code": CODE,
}
"""The questions a fixture answers, by name."""


def expected(spec: object, where: str) -> dict[str, Any]:
    """What a fixture must be understood as (see the module's docstring).

    Raises:
        RecipeError: anything else.
    """
    named = {"yes": said_yes(), "no": no(), "reject": dict(REJECT)}
    if isinstance(spec, str) and spec in named:
        return named[spec]
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, arg),) = spec.items()
        if kind == "meta" and isinstance(arg, str):
            return meta(arg)
        if kind == "pick" and isinstance(arg, list) and len(arg) == 2:
            return pick(str(arg[0]), str(arg[1]))
        if kind == "value":
            return value(arg)
    raise RecipeError(
        f"{where}: expected must be 'yes', 'no', 'reject', {{meta = ...}}, "
        f"{{pick = [id, label]}} or {{value = ...}}, got {spec!r}"
    )


def utterances(path: Path, rows: list[list[Any]]) -> list[tuple[Any, ...]]:
    """A recipe's ``[id, category, question, text, expected]`` rows as `Utterance` fields.

    Raises:
        RecipeError: an unknown question or expected result (naming the row).
    """
    out: list[tuple[Any, ...]] = []
    for uid, category, spec, text, want in rows:
        if spec not in SPECS:
            raise RecipeError(f"{path}: answers.{uid}: unknown question {spec!r}")
        out.append((uid, category, SPECS[spec], text, expected(want, f"{path}: answers.{uid}")))
    return out
