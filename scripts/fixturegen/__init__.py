"""One library for the audio fixture sets: their recipes (``scripts/fixturegen/sets/*.toml``,
read by the one generator ``scripts/make_set.py``).

A set is utterances (`Utterance`: what is said, the question it answers, what it must be
understood as) spoken by voices (`piper`, `flite`, `espeak`, `festival`, `through_sox`) and
rendered in conditions (a recipe of `_render`, or a `Rig` of noises, rooms and lines), each
file seeded from its name (`seeded`) so a rerun gives the same bytes; `generate` writes the
files and returns the entries `write_manifest` stores. `adversarial_set` is the recipe of the
first two adversarial sets.

Layout: ``_audio`` (files, seeds, levels), ``_voices``, ``_noise`` (noise, babble, channels,
codecs), ``_impair`` (car, hum, wind and music noise; reverb, clipping, packet loss, Opus),
``_ambient`` (street, fan and typing noise; speakerphone, Bluetooth CVSD, a muffled microphone:
``adversarial6`` on), ``_venues`` (cafe clinks and babble; a headset, a stairwell, a mobile
call with lost frames, a cordless phone: ``adversarial7`` on), ``_homes`` (running water, a
kitchen, a car with the window down, a TV, noise in a hall; a VoIP jitter buffer, a laptop
microphone, a phone across a room: ``adversarial8`` on), ``_daily`` (a bus, rain on a window, a
vacuum cleaner, a baby crying; a pumping automatic gain control, an earbud microphone, a
church: ``adversarial9`` on), ``_codes`` (one-time codes said and mis-said), ``_fresh`` (what
the committed sets already say and use, for a never-heard set to refuse), ``_neverheard`` (the
three sets of a never-heard recipe, ``adversarial6`` on), ``_recipe`` (a recipe's vocabulary:
voices, noise makers, line steps, expected results, by name with keyword parameters),
``_plans`` (a never-heard recipe read into its `Plan`, voices and `Rig`; `make`, the generator,
and its `KINDS`), ``_kinds`` (plain, takes, held-out pair and adversarial recipes),
``_scenes`` (a recipe's `Rig` read, `read_rig`; scenes recipes: sets rendered by one rig, each
with its own assignment of voices to conditions, ``adversarial4`` and ``adversarial5``),
``_render`` (the committed sets' conditions), ``_scene`` (speech in noise through a room or
line, and noise alone: the sets from ``adversarial4`` on), ``_sets`` (questions, the loop, the
manifest), ``_heldout`` (a held-out pair of answers and confirmations), ``_adversarial``.

The scripts (``make_set.py`` too) put ``scripts/`` on ``sys.path`` and ``import
fixturegen``; none of this is part of the ``voice_hitl`` package, and CI never runs it (the
sets are committed).

Checking a change here: regenerate a set elsewhere and compare it with the committed files,
byte for byte, manifest included::

    FIXTUREGEN_ROOT=/tmp/regen python scripts/make_set.py heldout4
    cmp /tmp/regen/heldout4/manifest.json audio_fixtures/heldout4/manifest.json

Every committed set but one regenerates byte-identical; ``dev_values``' 42 piper files come
out up to 3 LSB apart (a few samples more on its telephone line, where a 1 LSB change can flip
a mu-law step), as they do from the script that made them: piper's raw output moved since.
Piper's output depends on the machine too (on a 2-core AMD EPYC every piper file of
``heldout`` and ``adversarial6`` came out up to 5 LSB apart, from the code before the recipes
as well): compare piper files with the previous generator's output on the same machine.
"""

from ._adversarial import NOISES, NONSPEECH, RATES, SNRS, adversarial_set
from ._ambient import bluetooth, cvsd, fan, muffled, speakerphone, traffic, typing
from ._audio import (
    RATE,
    TEL_RATE,
    FloatArray,
    energy_kept,
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
from ._codes import (
    CODE_FORMS,
    DIGIT_WORDS,
    check_codes,
    code_phrase,
    is_code,
    replaced,
    say,
    say_tens,
    swapped,
    with_digit,
    without,
)
from ._daily import CHURCH, agc, baby, bus, church, earbud, rain, vacuum
from ._fresh import check_fresh, check_unused, said_before, used_names
from ._heldout import ANSWER_CONDITIONS, TAKE_CONDITIONS, babblers, heldout_pair
from ._homes import (
    farfield,
    jitter,
    kitchen,
    laptop_mic,
    open_car,
    reverberated,
    television,
    water,
)
from ._impair import (
    buzz,
    car,
    drop_packets,
    music,
    opus,
    overdrive,
    room_reverb,
    sox_effects,
    upsampled,
    wind,
)
from ._neverheard import (
    Dialogue,
    Line,
    NoiseRow,
    Plan,
    Rig,
    answer_set,
    confirmation_set,
    dialogues,
    not_yes_set,
)
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
from ._plans import Recipe, make, read_recipe
from ._recipe import MAKERS, SPECS, STEPS, RecipeError, recipe_voices, recipes
from ._render import (
    Babble,
    render_answer,
    render_babble,
    render_heldout,
    render_take,
    render_tuning,
)
from ._scene import Channel, NoiseMaker, mixed, noise_alone
from ._scenes import read_crowd, read_rig, write_scenes
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
from ._venues import cafe, clinks, cordless, headset, mobile, stairwell
from ._voices import (
    Prepare,
    Voice,
    diphone_prosody,
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
    "CHURCH",
    "CODE",
    "CODECS",
    "CODE_FORMS",
    "COLOUR",
    "CONFIRM",
    "DIGIT_WORDS",
    "MAKERS",
    "NOISES",
    "NONSPEECH",
    "PAY",
    "RATE",
    "RATES",
    "SPECS",
    "STEPS",
    "REJECT",
    "SNRS",
    "TAKES",
    "TAKE_CONDITIONS",
    "TEL_RATE",
    "Babble",
    "Channel",
    "Crowd",
    "Dialogue",
    "FloatArray",
    "Line",
    "NoiseMaker",
    "NoiseRow",
    "Plan",
    "Prepare",
    "Recipe",
    "RecipeError",
    "Render",
    "Rig",
    "Slot",
    "Utterance",
    "Voice",
    "adversarial_set",
    "agc",
    "all_talkers",
    "answer_set",
    "at_snr",
    "babblers",
    "baby",
    "band",
    "bluetooth",
    "brown",
    "bus",
    "buzz",
    "cafe",
    "car",
    "challenges",
    "check_codes",
    "check_fresh",
    "check_unused",
    "church",
    "clicks",
    "clinks",
    "code_phrase",
    "codec",
    "confirmation_set",
    "cordless",
    "coughs",
    "cvsd",
    "dialogues",
    "drop_packets",
    "earbud",
    "energy_kept",
    "espeak",
    "fan",
    "farfield",
    "diphone_prosody",
    "festival",
    "fixtures_root",
    "flite",
    "generate",
    "headset",
    "heldout_pair",
    "is_code",
    "jitter",
    "kitchen",
    "laptop_mic",
    "make",
    "meta",
    "mixed",
    "mobile",
    "muffled",
    "mulaw",
    "mulaw_line",
    "music",
    "near_silence",
    "no",
    "noise_alone",
    "not_yes_set",
    "open_car",
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
    "rain",
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
    "read_crowd",
    "read_recipe",
    "read_rig",
    "recipe_voices",
    "recipes",
    "reverberated",
    "room_reverb",
    "said_before",
    "say",
    "say_tens",
    "seeded",
    "sox_effects",
    "speakerphone",
    "speech",
    "stairwell",
    "swapped",
    "telephone",
    "television",
    "through_sox",
    "to_dbfs",
    "traffic",
    "trim",
    "two_talkers",
    "upsampled",
    "typing",
    "used_names",
    "vacuum",
    "value",
    "water",
    "white",
    "wind",
    "with_digit",
    "without",
    "write_flac",
    "write_flac_float",
    "write_manifest",
    "write_scenes",
    "write_set",
    "write_wav",
    "yes",
]
