"""The conditions of the committed sets: speech in, ``(samples, rate)`` of one file out.

Each recipe is the one a set was made with, kept to the letter (its seeds come from the name
it is given, usually the file name):

- `render_tuning`: ``clean`` / ``noisy`` (10 dB pink) / ``telephone`` (8 kHz); 0.5 s lead
  and trail, -60 dBFS floor (the tuning fixtures, ``dev_values``);
- `render_heldout`: ``clean`` / ``noisy`` (10 dB white) / ``telephone_8k`` /
  ``telephone_16k`` (the 8 kHz audio upsampled); 0.3 s (``heldout`` and later answer sets);
- `render_babble`: speech over two-talker babble at 10 dB, 0.3 s;
- `render_answer`: ``render_heldout``'s, ``white10`` (its ``noisy``) and ``babble``
  (`render_babble`) (``heldout2``, ``heldout3``, ``heldout4``);
- `render_take`: ``clean`` / ``white10`` / ``babble10`` / ``telephone``, 0.4 s (every
  confirmation set).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import soxr

from ._audio import RATE, TEL_RATE, FloatArray, padded, seeded, to_dbfs
from ._noise import all_talkers, band, mulaw, pink, telephone, two_talkers

__all__ = [
    "Babble",
    "render_answer",
    "render_babble",
    "render_heldout",
    "render_take",
    "render_tuning",
]

Babble = Callable[[int, list[FloatArray], np.random.Generator], FloatArray]
"""``(n, babblers, rng)`` to ``n`` samples of babble at unit RMS."""

_FLOOR = 10 ** (-60 / 20)


def render_tuning(speech: FloatArray, condition: str, name: str) -> tuple[FloatArray, int]:
    """The tuning fixtures' conditions: speech at -20 dBFS, 0.5 s lead and trail; ``noisy``:
    pink noise at 10 dB SNR; ``telephone``: 300-3400 Hz, mu-law, 8 kHz; a -60 dBFS floor."""
    rng = seeded(name)
    x = padded(to_dbfs(speech, -20), 0.5)
    rate = RATE
    if condition == "noisy":
        x = x + pink(len(x), rng) * 10 ** (-20 / 20) / 10 ** (10 / 20)
    elif condition == "telephone":
        x, rate = telephone(x), TEL_RATE
    return x + rng.normal(0.0, _FLOOR, len(x)), rate


def render_heldout(speech: FloatArray, condition: str, name: str) -> tuple[FloatArray, int]:
    """The held-out answers' conditions: speech at -20 dBFS, 0.3 s lead and trail. ``clean``
    has a -60 dBFS floor; ``noisy`` is white noise at 10 dB SNR; both telephone conditions
    share one 8 kHz signal (300-3400 Hz, mu-law, its floor seeded from the 8 kHz name),
    ``telephone_16k`` upsampled."""
    rng = seeded(name)
    x = padded(to_dbfs(speech, -20), 0.3)
    if condition == "clean":
        return x + rng.normal(0.0, _FLOOR, len(x)), RATE
    if condition == "noisy":
        noise = rng.normal(0.0, 1.0, len(x))
        return x + noise * 10 ** (-20 / 20) / 10 ** (10 / 20), RATE
    tel = telephone(x)
    tel = tel + seeded(name.replace("telephone_16k", "telephone_8k")).normal(0.0, _FLOOR, len(tel))
    if condition == "telephone_8k":
        return tel, TEL_RATE
    up: FloatArray = soxr.resample(tel, TEL_RATE, RATE, quality="HQ")
    return up, RATE


def render_babble(
    speech: FloatArray, name: str, babblers: list[FloatArray]
) -> tuple[FloatArray, int]:
    """Speech (already at -20 dBFS) over `two_talkers` babble at 10 dB SNR, 0.3 s lead and
    trail, no floor."""
    x = padded(speech, 0.3)
    return x + two_talkers(len(x), babblers, seeded(name)) * 10 ** (-30 / 20), RATE


def render_answer(
    speech: FloatArray, condition: str, name: str, babblers: list[FloatArray]
) -> tuple[FloatArray, int]:
    """`render_heldout`'s conditions, ``white10`` (its ``noisy``) and ``babble``
    (`render_babble`)."""
    if condition == "white10":
        return render_heldout(speech, "noisy", name)
    if condition == "babble":
        return render_babble(speech, name, babblers)
    return render_heldout(speech, condition, name)


def render_take(
    speech: FloatArray,
    condition: str,
    name: str,
    babblers: list[FloatArray],
    babble: Babble = all_talkers,
) -> tuple[FloatArray, int]:
    """One confirmation take: speech (already at -20 dBFS), 0.4 s lead and trail; ``white10``
    and ``babble10`` at 10 dB SNR (``babble`` mixes ``babblers``); ``telephone``: 300-3400 Hz,
    mu-law, 8 kHz; a -60 dBFS floor."""
    rng = seeded(name)
    x = padded(speech, 0.4)
    level = 10 ** (-20 / 20) / 10 ** (10 / 20)
    rate = RATE
    if condition == "white10":
        x = x + rng.normal(0.0, 1.0, len(x)) * level
    elif condition == "babble10":
        x = x + babble(len(x), babblers, rng) * level
    elif condition == "telephone":
        x = mulaw(soxr.resample(band(x, RATE, 300.0, 3400.0), RATE, TEL_RATE, quality="HQ"))
        rate = TEL_RATE
    return x + rng.normal(0.0, _FLOOR, len(x)), rate
