"""Measure the Janus AudioBridge conference backend against a throwaway Janus on loopback.

Run: ``nice -n 10 .venv/bin/python bench/bench_janus.py [--quick]`` (needs ``janus`` and the
``janus`` and ``speech`` extras). Prints:

1. **Approval latency**: from the end of an approver's "confirm" (the last RTP packet of it
   sent) to the approval counted, through the room, the jitter buffer, endpointing and Whisper;
   p50 and p99 over the clean ``confirm`` recordings of ``audio_fixtures/confirmations``
   (recordings nothing in ``conference.janus`` was tuned on).
2. **Attribution**: scripted meetings of three plain-RTP participants speaking the
   ``audio_fixtures/demo`` recordings with overlaps; per 20 ms frame, the bot's speakers
   against the participants whose sent packet was speech (-50 dBov or louder), after the
   measured room latency; and per utterance, the share the conference would credit to the
   right person alone (1.0), as mixed (0.5) or to someone else.
3. **Bot CPU per conference-second**: the participants speak from a child process; the bot's
   whole process CPU time (RTP in and out, the jitter buffer, attribution, the Janus long poll)
   over the meeting's duration, no provider plugged.
4. **Jitter tolerated**: each packet of the room mix delayed on arrival by a uniform random
   0..J ms (so reordered too); packets lost or late in the jitter buffer (depth 3, 60 ms) and
   what Whisper hears of the lane's audio, per J.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conference import ConferenceChannel, ConferenceRealtimeConfig, MixedFrame  # noqa: E402
from conference.janus import (  # noqa: E402
    JanusAudioLane,
    JanusConferenceBackend,
    RtpParticipant,
    Seat,
    start_local_janus,
)
from conference.janus._codec import CodecName  # noqa: E402
from voice_hitl import CONFIRM_ACTION, HumanInputToolHandler  # noqa: E402
from voice_hitl.voice._audio import read_wav_pcm16, resample_pcm16  # noqa: E402

DEMO = ROOT / "audio_fixtures" / "demo"
CONFIRMS = ROOT / "audio_fixtures" / "confirmations"
RATE = 16_000
ROOM = 5150


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    if path.suffix == ".wav":
        return read_wav_pcm16(path)
    data, rate = soundfile.read(str(path), dtype="int16", always_2d=True)
    return data.mean(axis=1).astype(np.int16), int(rate)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


class Silent:
    name = "silent"

    async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        return np.zeros(160, np.int16), RATE


class Idle:
    async def respond(self, turn: object, call_tool: object) -> None:
        return None


# -- 1. approval latency -------------------------------------------------------------------------


async def approval_latency(url: str, secret: str, files: list[Path], codec: CodecName) -> None:
    from providers.local import LocalCascadeProvider
    from voice_hitl.speech.asr import load_recognizer

    backend = JanusConferenceBackend(
        url, ROOM, secret=secret, seats=1, sample_rate=RATE, codec=codec
    )
    await backend.start()
    alice = await RtpParticipant(url, ROOM, "Alice", backend.reserve_seat("Alice")).join()
    recognizer = await load_recognizer("whisper")
    provider = LocalCascadeProvider(recognizer=recognizer, synthesizer=Silent())
    human = HumanInputToolHandler({"ConfirmAction"}, tool_definitions=[CONFIRM_ACTION])
    config = ConferenceRealtimeConfig(
        provider, human_input_handler=human, reasoning_backend=Idle(), sample_rate=RATE
    )
    conf = ConferenceChannel("bench", backend=backend, realtime=config)
    await conf.plug_realtime()
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    missed: list[str] = []
    for path in files:
        audio, rate = read_audio(path)
        approval = conf.open_approval("deploy", approvers=["Alice"], quorum=1, timeout=8)
        await alice.say(audio, rate)
        end = loop.time()
        try:
            await asyncio.wait_for(approval.wait(), 10)
            latencies.append(loop.time() - end)
        except Exception as exc:
            missed.append(f"{path.name}: {type(exc).__name__}")
    await conf.close()
    await alice.leave()
    await backend.aclose()
    print(
        f"\n1. approval latency over {len(files)} 'confirm' recordings (clean, held out), "
        f"bot leg {codec}"
    )
    print(
        f"   counted {len(latencies)}/{len(files)}; end of speech -> approval counted: "
        f"p50 {percentile(latencies, 50) * 1000:.0f} ms, p99 {percentile(latencies, 99) * 1000:.0f}"
        f" ms, max {max(latencies, default=float('nan')) * 1000:.0f} ms"
    )
    for miss in missed:
        print(f"   not counted: {miss}")


# -- 2. attribution --------------------------------------------------------------------------------

MEETING_FILES = ["alice_approve.wav", "bob_approve.wav", "carol_chatter.wav", "cancel.wav",
                 "mumble.wav", "say_confirm.wav", "02_amount.wav", "03_confirm.wav"]  # fmt: skip


async def collect(lane: JanusAudioLane, sink: list[tuple[float, MixedFrame]]) -> None:
    """Keep every frame of ``lane`` with the time it was handed out."""
    loop = asyncio.get_running_loop()
    async for frame in lane.mixed():
        sink.append((loop.time(), frame))


Plan = list[tuple[float, str, np.ndarray]]


async def one_meeting(
    url: str, secret: str, room: int, rng: random.Random, names: list[str]
) -> tuple[Plan, float, dict[str, str], dict[str, list[tuple[float, int]]], list]:  # type: ignore[type-arg]
    """One scripted meeting: returns its plan, start, ids, what each sent, the bot's frames."""
    backend = JanusConferenceBackend(url, room, secret=secret, seats=3, sample_rate=RATE)
    await backend.start()
    people = {}
    for n in names:
        people[n] = await RtpParticipant(url, room, n, backend.reserve_seat(n)).join()
    ids = {str(people[n].participant_id): n for n in names}
    lane = backend.open_audio()
    got: list[tuple[float, MixedFrame]] = []
    reader = asyncio.create_task(collect(lane, got))
    # Three turns each, started so that a good part of the speech overlaps.
    t = 0.3
    plan: Plan = []
    for _ in range(3):
        for n in rng.sample(names, 3):
            audio, rate = read_wav_pcm16(DEMO / rng.choice(MEETING_FILES))
            audio8 = resample_pcm16(audio, rate, 8000)
            plan.append((t, n, audio8))
            t += len(audio8) / 8000 * rng.uniform(0.3, 1.0)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for at, who, audio in plan:  # a script: speak at the planned times
        await asyncio.sleep(max(0.0, start + at - loop.time()))
        people[who].say_later(audio, 8000)
    await asyncio.sleep(max(0.0, start + t + 2.0 - loop.time()))  # let everyone finish
    await lane.aclose()
    await reader
    sent = {n: list(people[n].sent) for n in names}
    for person in people.values():
        await person.leave()
    await backend.aclose()
    return plan, start, ids, sent, got


def truth_of(sent: dict[str, list[tuple[float, int]]]) -> dict[int, set[str]]:
    """Per 20 ms slot, who sent speech then (-50 dBov or louder)."""
    truth: dict[int, set[str]] = {}
    for name, packets in sent.items():
        for sent_at, level in packets:
            if level < 50:
                truth.setdefault(round(sent_at / 0.02), set()).add(name)
    return truth


def agreement(got: list, ids: dict[str, str], truth: dict[int, set[str]], lag: float) -> int:  # type: ignore[type-arg]
    return sum(
        1
        for at, frame in got
        if {ids.get(i) for i in frame.speakers} == truth.get(round((at - lag) / 0.02), set())
    )


async def attribution(url: str, secret: str, meetings: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    names = ["Alice", "Bob", "Carol"]
    frames_total = exact = 0
    hits = {n: [0, 0, 0] for n in names}  # true positives, false positives, false negatives
    alone: list[float] = []  # utterances nobody spoke over
    overlapping: list[float] = []
    lags: list[float] = []
    overlap_share: list[float] = []
    for meeting in range(meetings):
        plan, start, ids, sent, got = await one_meeting(url, secret, ROOM + 1 + meeting, rng, names)
        truth = truth_of(sent)
        voiced = [who for who in truth.values() if who]
        overlap_share.append(sum(1 for who in voiced if len(who) > 1) / len(voiced))
        lag = max((k * 0.02 for k in range(20)), key=lambda x: agreement(got, ids, truth, x))
        lags.append(lag)
        for at, frame in got:
            said = {ids[i] for i in frame.speakers if i in ids}
            real = truth.get(round((at - lag) / 0.02), set())
            frames_total += 1
            exact += said == real
            for n in names:
                hits[n][0] += n in said and n in real
                hits[n][1] += n in said and n not in real
                hits[n][2] += n not in said and n in real
        # Utterance credit as the channel computes it: everyone heard while the utterance's
        # speech (first to last voiced packet sent) was in the room.
        spans = []
        for at0, who, audio in plan:
            begin, end = start + at0, start + at0 + len(audio) / 8000 + 0.1
            voiced = [t for t, level in sent[who] if begin <= t <= end and level < 50]
            if voiced:
                spans.append((who, voiced[0], voiced[-1]))
        for who, first, last in spans:
            overlapped = any(
                other != who and f <= last and first <= la for other, f, la in spans
            )
            heard: set[str] = set()
            for at, frame in got:
                if first <= at - lag <= last:
                    heard |= {ids[i] for i in frame.speakers if i in ids}
            score = 1.0 if heard == {who} else 0.5 if who in heard else 0.0
            (overlapping if overlapped else alone).append(score)
    print(f"\n2. attribution over {meetings} scripted meetings (3 people, 9 turns each)")
    print(
        f"   speech overlapping another's: {statistics.mean(overlap_share) * 100:.0f} % of "
        f"voiced frames; room latency (best lag) {statistics.median(lags) * 1000:.0f} ms"
    )
    print(f"   frames with exactly the right speakers: {exact / frames_total * 100:.1f} % "
          f"of {frames_total}")  # fmt: skip
    for n, (tp, fp, fn) in hits.items():
        print(f"   {n}: precision {tp / max(1, tp + fp) * 100:.1f} %, "
              f"recall {tp / max(1, tp + fn) * 100:.1f} %")  # fmt: skip
    for label, scores in (("spoken alone", alone), ("spoken over", overlapping)):
        whole, mixed = scores.count(1.0), scores.count(0.5)
        print(
            f"   utterances {label}: {len(scores)}; credited to their speaker alone {whole}, "
            f"as mixed (nobody's answer) {mixed}, to someone else {len(scores) - whole - mixed}"
        )


# -- 3. bot CPU ------------------------------------------------------------------------------------


async def bot_cpu(url: str, secret: str, seconds: float, codec: CodecName) -> None:
    backend = JanusConferenceBackend(
        url, ROOM + 50, secret=secret, seats=3, sample_rate=RATE, codec=codec
    )
    await backend.start()
    seats = [backend.reserve_seat(n) for n in ("Alice", "Bob", "Carol")]
    lane = backend.open_audio()
    frames: list[tuple[float, MixedFrame]] = []
    reader = asyncio.create_task(collect(lane, frames))
    spec = json.dumps([[s.display_name, s.participant_id, s.host, s.port] for s in seats])
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--speak", url, str(ROOM + 50), spec, str(seconds),
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert child.stdout is not None
    await child.stdout.readline()  # "joined"
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    await child.wait()
    elapsed = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    await lane.aclose()
    await reader
    await backend.aclose()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"\n3. bot CPU ({codec}): {cpu / elapsed * 1000:.1f} ms per conference-second "
          f"({cpu:.2f} s over {elapsed:.1f} s, 3 people talking, "
          f"{len(frames)} frames out)")  # fmt: skip


async def speak_child(url: str, room: int, spec: str, seconds: float) -> None:
    people = [
        await RtpParticipant(url, room, name, Seat(pid, name, host, port)).join()
        for name, pid, host, port in json.loads(spec)
    ]
    print("joined", flush=True)
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    files = sorted(DEMO.glob("*.wav"))
    i = 0
    while loop.time() < end:
        audio, rate = read_wav_pcm16(files[i % len(files)])
        await people[i % len(people)].say(audio, rate)
        i += 1
    for p in people:
        await p.leave()


# -- 4. jitter -------------------------------------------------------------------------------------


async def one_spread(url: str, secret: str, spread: int, audio: np.ndarray, rate: int) -> tuple:  # type: ignore[type-arg]
    """Alice speaks with the room mix jittered by 0..``spread`` ms; the lane's audio."""
    room = ROOM + 100 + spread
    backend = JanusConferenceBackend(url, room, secret=secret, seats=1, sample_rate=RATE)
    await backend.start()
    alice = await RtpParticipant(url, room, "Alice", backend.reserve_seat("Alice")).join()
    loop = asyncio.get_running_loop()
    assert backend.media.bot is not None
    inbox = backend.media.bot.get_protocol()
    deliver = inbox.on_datagram  # type: ignore[attr-defined]

    def delayed(data: bytes) -> None:
        loop.call_later(random.uniform(0, spread / 1000), deliver, data)

    inbox.on_datagram = delayed  # type: ignore[attr-defined]
    lane = backend.open_audio()
    got: list[tuple[float, MixedFrame]] = []
    reader = asyncio.create_task(collect(lane, got))
    await alice.say(audio, rate)
    await asyncio.sleep(0.5)
    await lane.aclose()
    await reader
    stats = backend.media.jitter.stats
    await alice.leave()
    await backend.aclose()
    return stats, np.concatenate([frame.samples for _, frame in got])


async def jitter(url: str, secret: str, spreads: list[int]) -> None:
    from voice_hitl.speech.asr import load_recognizer

    recognizer = await load_recognizer("whisper")
    audio, rate = read_wav_pcm16(DEMO / "03_confirm.wav")
    print("\n4. jitter on the room mix (uniform 0..J ms per packet), jitter buffer depth 3")
    for spread in spreads:
        stats, samples = await one_spread(url, secret, spread, audio, rate)
        heard = await recognizer.recognize(samples, RATE, None)
        text = heard[0].text if heard else ""
        confidence = (heard[0].confidence or 0.0) if heard else 0.0
        print(f"   J={spread:4d} ms: played {stats.played}, lost {stats.lost}, "
              f"late {stats.late}, underruns {stats.underruns}; "
              f"Whisper: {text!r} ({confidence:.2f})")  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="   %(name)s: %(message)s")
    server = await asyncio.to_thread(start_local_janus)
    try:
        files = sorted(CONFIRMS.glob("confirm__*__clean__*.flac"))[: 6 if args.quick else 30]
        if args.only in (None, 1):
            await approval_latency(server.url, server.room_secret, files, args.codec)
        if args.only in (None, 2):
            await attribution(server.url, server.room_secret, 2 if args.quick else 6)
        if args.only in (None, 3):
            await bot_cpu(server.url, server.room_secret, 10.0 if args.quick else 30.0, args.codec)
        if args.only in (None, 4):
            await jitter(server.url, server.room_secret, [0, 40, 80, 120, 200])
    finally:
        await asyncio.to_thread(server.close)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--speak":
        asyncio.run(speak_child(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])))
    else:
        parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
        parser.add_argument("--codec", choices=("pcmu", "opus"), default="pcmu")
        parser.add_argument("--only", type=int, choices=(1, 2, 3, 4), help="one section")
        parser.add_argument("--verbose", action="store_true", help="log why votes miss")
        parser.add_argument("--quick", action="store_true", help="fewer recordings and meetings")
        asyncio.run(main(parser.parse_args()))
