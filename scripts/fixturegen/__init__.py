"""One library for the audio fixture sets (``scripts/make_*.py``).

A set is utterances (`Utterance`: what is said, the question it answers, what it must be
understood as) spoken by voices (`piper`, `flite`, `espeak`, `festival`, `through_sox`) and
rendered in conditions (a recipe of `_render`, or a script's own built from `_noise`), each
file seeded from its name (`seeded`) so a rerun gives the same bytes; `generate` writes the
files and returns the entries `write_manifest` stores. `adversarial_set` is the recipe of the
first two adversarial sets.

Layout: ``_audio`` (files, seeds, levels), ``_voices``, ``_noise`` (noise, babble, channels,
codecs), ``_impair`` (car, hum, wind and music noise; reverb, clipping, packet loss, Opus),
``_ambient`` (street, fan and typing noise; speakerphone, Bluetooth CVSD, a muffled
microphone: ``adversarial6`` on), ``_codes`` (one-time codes said and mis-said), ``_fresh``
(what the committed sets already say and use, for a never-heard set to refuse),
``_render`` (the committed sets' conditions), ``_scene`` (speech in noise through a room or
line, and noise alone: the sets from ``adversarial4`` on), ``_sets`` (questions, the loop,
the manifest), ``_heldout`` (a held-out pair of answers and confirmations),
``_adversarial``.

The scripts put ``scripts/`` on ``sys.path`` and ``import fixturegen``; none of this is part
of the ``voice_hitl`` package, and CI never runs it (the sets are committed).

Checking a change here: regenerate a set elsewhere and compare it with the committed files,
byte for byte, manifest included::

    FIXTUREGEN_ROOT=/tmp/regen python scripts/make_heldout4.py
    cmp /tmp/regen/heldout4/manifest.json audio_fixtures/heldout4/manifest.json

Every committed set but one regenerates byte-identical; ``dev_values``' 42 piper files come
out up to 3 LSB apart (a few samples more on its telephone line, where a 1 LSB change can flip
a mu-law step), as they do from the script that made them: piper's raw output moved since.
"""

from ._adversarial import NOISES, NONSPEECH, RATES, SNRS, adversarial_set
from ._ambient import bluetooth, cvsd, fan, muffled, speakerphone, traffic, typing
from ._audio import (
    RATE,
    TEL_RATE,
    FloatArray,
    padded,
    pcm16,
    peak_limited,
    read_wav,
    seeded,
    to_dbfs,
    trim,
    write_flac,
    write_flac_float,
    write_wav,
)
from ._codes import DIGIT_WORDS, is_code, replaced, say, say_tens, swapped, with_digit, without
from ._fresh import check_unused, said_before, used_names
from ._heldout import ANSWER_CONDITIONS, TAKE_CONDITIONS, babblers, heldout_pair
from ._impair import buzz, car, drop_packets, music, opus, overdrive, sox_effects, wind
from ._noise import (
    CODECS,
    Crowd,
    all_talkers,
    at_snr,
    band,
    brown,
    clicks,
    codec,
    coughs,
    mulaw,
    mulaw_line,
    near_silence,
    phone_line,
    pink,
    telephone,
    two_talkers,
    white,
)
from ._render import (
    Babble,
    render_answer,
    render_babble,
    render_heldout,
    render_take,
    render_tuning,
)
from ._scene import Channel, NoiseMaker, mixed, noise_alone
from ._sets import (
    AMOUNT,
    CHALLENGE,
    CODE,
    COLOUR,
    CONFIRM,
    PAY,
    REJECT,
    TAKES,
    Render,
    Slot,
    Utterance,
    challenges,
    fixtures_root,
    generate,
    meta,
    no,
    pick,
    recipe,
    value,
    write_manifest,
    write_set,
    yes,
)
from ._voices import (
    Prepare,
    Voice,
    espeak,
    festival,
    flite,
    paused,
    piper,
    raw,
    resampled,
    speech,
    through_sox,
)

__all__ = [
    "AMOUNT",
    "ANSWER_CONDITIONS",
    "CHALLENGE",
    "CODE",
    "CODECS",
    "COLOUR",
    "CONFIRM",
    "DIGIT_WORDS",
    "NOISES",
    "NONSPEECH",
    "PAY",
    "RATE",
    "RATES",
    "REJECT",
    "SNRS",
    "TAKES",
    "TAKE_CONDITIONS",
    "TEL_RATE",
    "Babble",
    "Channel",
    "Crowd",
    "FloatArray",
    "NoiseMaker",
    "Prepare",
    "Render",
    "Slot",
    "Utterance",
    "Voice",
    "adversarial_set",
    "all_talkers",
    "at_snr",
    "babblers",
    "band",
    "bluetooth",
    "brown",
    "buzz",
    "car",
    "challenges",
    "check_unused",
    "clicks",
    "codec",
    "coughs",
    "cvsd",
    "drop_packets",
    "espeak",
    "fan",
    "festival",
    "fixtures_root",
    "flite",
    "generate",
    "heldout_pair",
    "is_code",
    "meta",
    "mixed",
    "muffled",
    "mulaw",
    "mulaw_line",
    "music",
    "near_silence",
    "no",
    "noise_alone",
    "opus",
    "overdrive",
    "padded",
    "paused",
    "pcm16",
    "peak_limited",
    "phone_line",
    "pick",
    "pink",
    "piper",
    "raw",
    "read_wav",
    "recipe",
    "render_answer",
    "render_babble",
    "render_heldout",
    "render_take",
    "render_tuning",
    "replaced",
    "resampled",
    "said_before",
    "say",
    "say_tens",
    "seeded",
    "sox_effects",
    "speakerphone",
    "speech",
    "swapped",
    "telephone",
    "through_sox",
    "to_dbfs",
    "traffic",
    "trim",
    "two_talkers",
    "typing",
    "used_names",
    "value",
    "white",
    "wind",
    "with_digit",
    "without",
    "write_flac",
    "write_flac_float",
    "write_manifest",
    "write_set",
    "write_wav",
    "yes",
]
