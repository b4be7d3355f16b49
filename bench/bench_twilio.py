#!/usr/bin/env python3
"""The phone path (Twilio Media Streams): recognition through 8 kHz µ-law beside the original
audio, frame latency both ways on loopback, codec and resampler costs.

Usage (needs the ``speech`` extra for recognition)::

    python bench/bench_twilio.py [--recognizer pocketsphinx|combined] [--sample N]
        [--frames 500] [--skip-recognition]

Recognition: each fixture goes through what a phone call does to it (resampled to 8 kHz,
G.711 µ-law, decoded, resampled to the channel's 16 kHz by the server's resampler) and is
recognised beside the original, with the same recogniser and answer understanding.
Latency: a ``FakeTwilioCall`` sends 20 ms frames in real time to a ``PhoneServer`` whose
provider stamps each ``send_audio``; the provider's audio is stamped when emitted and when its
``media`` frames reach the fake Twilio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import timeit
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from providers.mock import MockProviderSession, MockRealtimeProvider
from providers.twilio import (
    PhoneServer,
    StreamResampler,
    TwilioTransport,
    mulaw_to_pcm16,
    pcm16_to_mulaw,
)
from providers.twilio.testing import FakeTwilioCall
from voice_hitl import RealtimeVoiceChannel
from voice_hitl.voice._provider import SessionConfig
from voice_hitl.voice._provider_events import PCM16, AudioOutEvent


def phone_path(pcm: PCM16, rate: int, channel_rate: int = 16_000) -> PCM16:
    """What a call does to the caller's audio before the session hears it."""
    narrow = StreamResampler(rate, 8000)(pcm)
    decoded = mulaw_to_pcm16(pcm16_to_mulaw(narrow))
    return StreamResampler(8000, channel_rate)(decoded)


async def recognition(recognizer: str, sample: int) -> None:
    from voice_hitl.speech._fixtures import load_manifest, run_fixtures, summarise
    from voice_hitl.speech._replay import check_fixtures
    from voice_hitl.speech.asr import load_recognizer, load_wav

    audio_dir, entries = load_manifest(Path("audio_fixtures"))
    if sample > 1:  # the replay command's spread: every voice and condition keeps some
        k = sample
        entries = [e for i, e in enumerate(entries) if (i + i // k + i // (k * k)) % k == 0]
    check_fixtures(audio_dir, entries)
    engine = await load_recognizer(recognizer)  # type: ignore[arg-type]

    def recognise_with(transform: bool) -> Any:
        async def recognise(wav: Path, spec: Any) -> tuple[str, float, float]:
            pcm, rate = await load_wav(wav)
            if transform:
                pcm, rate = await asyncio.to_thread(phone_path, pcm, rate), 16_000
            hyps = await engine.recognize(pcm, rate, spec)
            best = hyps[0] if hyps else None
            return (best.text if best else ""), (best.score if best else 0.0), len(pcm) / rate

        return recognise

    rows = {}
    for label, transform in (("original", False), ("phone (8 kHz mu-law)", True)):
        results = await run_fixtures(audio_dir, entries, recognise_with(transform))
        rows[label] = summarise(results)
    conditions = sorted(next(iter(rows.values()))["condition"])
    print(f"recognition, {recognizer}, {len(entries)} fixtures")
    header = "".join(f"{c:>11}" for c in conditions)
    print(f"{'path':22}{header}{'all':>9}{'false yes':>11}")
    for label, s in rows.items():
        cells = "".join(f"{s['condition'][c]:>11.1%}" for c in conditions)
        print(f"{label:22}{cells}{s['accuracy']:>9.1%}{s['false_yes']:>11}")


class StampedSession(MockProviderSession):
    """A mock session that stamps each caller frame it is sent."""

    stamps: list[float]

    async def send_audio(self, frame: PCM16) -> None:
        self.stamps.append(time.perf_counter())
        await super().send_audio(frame)


class StampedProvider(MockRealtimeProvider):
    async def connect(self, config: SessionConfig) -> MockProviderSession:
        session = StampedSession(self, config)
        session.stamps = []
        self.sessions.append(session)
        self._record("connect", session.session_id, None)
        return session


def _summary(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms"


async def latency(frames: int) -> None:
    provider = StampedProvider()
    channel = RealtimeVoiceChannel("bench", provider=provider, transport=TwilioTransport())
    async with PhoneServer(channel) as server, FakeTwilioCall(server.url) as call:
        await provider.wait_for("connect")
        session = channel.sessions[0]
        stamped = provider.sessions[0]
        assert isinstance(stamped, StampedSession)
        sent: list[float] = []
        frame = pcm16_to_mulaw(np.zeros(160, dtype=np.int16))
        next_at = time.perf_counter()
        for _ in range(frames):
            next_at += 0.02
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            sent.append(time.perf_counter())
            await call.send_frame(frame)
        await provider.wait_until(lambda: len(stamped.stamps) >= frames)
        inbound = [b - a for a, b in zip(sent, stamped.stamps, strict=True)]
        print(f"Twilio media frame sent -> provider send_audio ({frames} frames, 20 ms pace): "
              f"{_summary(inbound)}")
        outbound = []
        chunk = np.zeros(480, dtype=np.int16)  # 20 ms at the channel's 24 kHz
        for _ in range(frames // 5):
            count = len(call.media_times)
            emitted = time.perf_counter()
            stamped.emit(AudioOutEvent(chunk))
            await call.wait_for(lambda c=count: len(call.media_times) > c)
            outbound.append(call.media_times[count] - emitted)
            await asyncio.sleep(0.02)
        print(f"provider audio (20 ms) -> Twilio media frame: {_summary(outbound)}")
        await call.hang_up()
        await session.wait_closed()


def costs() -> None:
    rng = np.random.default_rng(0)
    frame = rng.integers(-20000, 20000, 160).astype(np.int16)
    coded = pcm16_to_mulaw(frame)
    n = 20000
    encode = timeit.timeit(lambda: pcm16_to_mulaw(frame), number=n) / n * 1e6
    decode = timeit.timeit(lambda: mulaw_to_pcm16(coded), number=n) / n * 1e6
    print(f"mu-law per 20 ms frame: encode {encode:.1f} us, decode {decode:.1f} us", end="")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import audioop
        except ModuleNotFoundError:
            print()
        else:
            raw = frame.tobytes()
            enc = timeit.timeit(lambda: audioop.lin2ulaw(raw, 2), number=n) / n * 1e6
            dec = timeit.timeit(lambda: audioop.ulaw2lin(coded, 2), number=n) / n * 1e6
            print(f" (audioop: {enc:.1f} / {dec:.1f} us)")
    for src, dst in ((8000, 24000), (24000, 8000), (8000, 16000)):
        size = src // 50
        ours = StreamResampler(src, dst)
        chunk = np.zeros(size, dtype=np.int16)
        cost = timeit.timeit(lambda o=ours, c=chunk: o(c), number=2000) / 2000 * 1e6
        delay = ours.delay_seconds * 1000
        line = f"resample {src}->{dst} per 20 ms: {cost:.0f} us, delay {delay:.2f} ms"
        try:
            import soxr
        except ModuleNotFoundError:
            print(line)
            continue
        stream = soxr.ResampleStream(src, dst, 1, dtype="int16", quality="HQ")
        fed = made = 0
        held = []
        for _ in range(200):
            made += len(stream.resample_chunk(chunk))
            fed += size
            held.append(fed / src - made / dst)
        print(f"{line}; soxr HQ stream holds back {statistics.mean(held) * 1000:.0f} ms "
              f"on average (max {max(held) * 1000:.0f} ms)")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--recognizer", choices=("pocketsphinx", "combined"), default="pocketsphinx"
    )
    parser.add_argument("--sample", type=int, default=1, help="every Nth fixture")
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--skip-recognition", action="store_true")
    args = parser.parse_args()
    costs()
    await latency(args.frames)
    if not args.skip_recognition:
        await recognition(args.recognizer, args.sample)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
