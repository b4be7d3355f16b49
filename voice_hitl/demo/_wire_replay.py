"""``replay(folder, agent=factory)``: a recorded call against the user's own agent, offline.

Two modes. ``wire`` (the default): the agent hears what the provider said (its transcripts,
SIP keys) and the keys the phone line heard, at the recorded moments. ``audio``: the recorded
caller audio is also played into the channel, frame by frame at the moment it was delivered,
so whatever listens to it locally (a responder's recogniser, keypad tones, risk rules) hears
it again: a recogniser or rule change shows as a divergence.

The factory is the user's code: given a provider (pointed at a loopback test server that
plays the recording), it returns the channel it would run in production, with its tools,
handlers, hooks and responder; or an async context manager yielding it, when the agent has
more to close (a kit, a responder). The replay starts a session as the recorded call did,
lets the cassette play the provider's side, answers requests the recorded people answered
off the wire (an operator, a console: whatever settled a request other than the caller's
speech or keypad) with their recorded answers, then compares the stories. The replay is the
caller: the channel's transport is replaced by one that plays the recording (keys as events
when the recorded transport heard them so, audio in ``audio`` mode).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..human._lifecycle import RequestEvent
from ..recording._call import StoryRecord
from ..recording._cassette import Cassette, Divergence
from ..recording._folder import load_call, story_lines
from ..recording._summary import relaxed, summarise
from ..voice._provider import RealtimeProvider
from ..voice._transport import LocalTransport
from ..voice._voice_channel import RealtimeVoiceChannel

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection as _WsConnection

__all__ = ["AgentFactory", "CallReplay", "replay"]

AgentFactory = Callable[[RealtimeProvider], Any]
"""``factory(provider)`` returns the user's channel (or an awaitable of it, or an async
context manager yielding it)."""

_ON_THE_WIRE = frozenset({"speech", "dtmf", "keypad"})


@dataclass(frozen=True)
class CallReplay:
    """A recorded call replayed against an agent: the stories and the first divergence."""

    folder: Path
    manifest: dict[str, Any]
    expected: list[dict[str, Any]]
    actual: list[dict[str, Any]]
    divergence: Divergence | None = None
    invalid: list[str] = field(default_factory=list)
    """Client frames the provider's SDK types reject (as the real server would)."""

    @property
    def same(self) -> bool:
        """True when the agent sent the recorded frames and the stories match."""
        return self.divergence is None and not self.invalid and self.expected == self.actual

    def diff(self) -> str:
        """A unified diff of the stories (``-`` recorded, ``+`` replayed); empty when equal."""
        if self.expected == self.actual:
            return ""
        return "\n".join(
            difflib.unified_diff(
                story_lines(self.expected),
                story_lines(self.actual),
                fromfile=f"recorded ({self.folder})",
                tofile="replayed",
                lineterm="",
            )
        )

    def report(self) -> str:
        """What a failing test prints: the call, the first divergence, the stories' diff."""
        head = f"{self.folder}: {len(self.expected)} requests recorded, {len(self.actual)} replayed"
        if self.same:
            return head + ", as recorded"
        parts = [head + "; the replay differs from the recording"]
        if self.divergence is not None:
            parts.append(self.divergence.report())
        parts.extend(f"the provider would refuse: {bad}" for bad in self.invalid[:3])
        if self.expected != self.actual:
            parts.append("stories:\n" + self.diff())
        return "\n".join(parts)


def _provider(facts: dict[str, Any], url: str, options: Any) -> RealtimeProvider:
    kind, model = facts["kind"], facts.get("model")
    query = str(facts.get("query") or "")
    if kind == "openai":
        from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy

        return OpenAIRealtimeProvider(
            api_key="replay",
            model=model or "gpt-realtime",
            url=f"{url}?{query}" if query else url,
            options=options,
            reconnect=ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0),
        )
    from providers.gemini_live import GeminiLiveProvider
    from providers.gemini_live import ReconnectPolicy as LiveReconnect

    return GeminiLiveProvider(
        api_key="replay",
        url=url,
        options=options,
        reconnect=LiveReconnect(max_attempts=3, initial_delay=0.0, max_delay=0.0),
        **({"model": model} if model else {}),
    )


def cassette_server(kind: str, cassette: Cassette) -> Any:
    """The test server for provider ``kind`` (``openai`` or ``gemini``), playing ``cassette``.

    Raises:
        ValueError: No loopback test server for ``kind``.
    """
    if kind == "openai":
        from providers.openai._sdk_types import validate_client_event
        from providers.openai._testing import RealtimeTestServer

        class _OpenAICassetteServer(RealtimeTestServer):
            async def _handler(self, ws: _WsConnection) -> None:
                await cassette.serve(ws, validate_client_event)

        return _OpenAICassetteServer()
    if kind == "gemini":
        from providers.gemini._sdk_types import validate_client_message
        from providers.gemini._testing import LiveTestServer

        class _GeminiCassetteServer(LiveTestServer):
            async def _handler(self, ws: _WsConnection) -> None:
                await cassette.serve(ws, validate_client_message)

        return _GeminiCassetteServer()
    raise ValueError(f"no wire replay for provider {kind!r}: only openai and gemini recordings")


@contextlib.asynccontextmanager
async def _agent(factory: AgentFactory, provider: RealtimeProvider) -> AsyncIterator[Any]:
    made = factory(provider)
    if inspect.isawaitable(made):
        made = await made
    if hasattr(made, "__aenter__"):
        async with made as channel:
            yield channel
        return
    if not isinstance(made, RealtimeVoiceChannel) and not hasattr(made, "plug_realtime"):
        raise TypeError(
            "the agent factory must return a RealtimeVoiceChannel or a ConferenceChannel (or "
            f"an awaitable of one, or an async context manager yielding one), got {made!r}"
        )
    try:
        yield made
    finally:
        await made.close()


class _ReplayCaller(LocalTransport):
    """The caller of a replay: recorded audio into the channel (``audio`` mode)."""


class _ReplayKeypadCaller(_ReplayCaller):
    """A replay caller whose keys arrive as events, as on the recorded phone line."""

    def __init__(self) -> None:
        super().__init__()
        self._listeners: dict[str, list[Callable[[str], None]]] = {}

    def add_keypad_listener(
        self, session_id: str, listener: Callable[[str], None]
    ) -> Callable[[], None]:
        listeners = self._listeners.setdefault(session_id, [])
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def press(self, session_id: str, keys: str) -> None:
        for key in keys:
            for listener in list(self._listeners.get(session_id, [])):
                listener(key)


def _play_the_caller(
    channel: RealtimeVoiceChannel,
    manifest: dict[str, Any],
    cassette: Cassette,
    frames: list[tuple[float, Any]],
) -> None:
    """Replace the channel's transport by the replay's caller: the recorded keys the line
    heard, and (``audio`` mode) the recorded audio, each at its moment."""
    session_id = manifest["session"]["session_id"]
    keys = [
        mark
        for mark in manifest["marks"]
        if mark.get("kind") == "keypad" and mark.get("source") == "transport"
    ]
    keypad = _ReplayKeypadCaller() if keys else None
    caller = keypad or _ReplayCaller()
    channel.transport = caller
    if keypad is not None:
        for mark in keys:
            press = partial(keypad.press, session_id, str(mark.get("keys", "")))
            cassette.cues.append((float(mark["t"]), press))
    for t, frame in frames:
        cassette.cues.append((t, partial(caller.push_caller_audio, session_id, frame)))


def _caller_frames(call: Any) -> list[tuple[float, Any]]:
    """The recorded caller audio as 20 ms frames, each at the time it was delivered."""
    import soundfile

    path = call.folder / "caller.flac"
    if not path.exists():
        return []
    audio, rate = soundfile.read(path, dtype="int16")
    clock = call.manifest.get("audio_clock") or [[0.0, 0]]
    size = max(1, rate // 50)
    frames = []
    point = 0
    for start in range(0, len(audio), size):
        while point + 1 < len(clock) and clock[point + 1][1] <= start:
            point += 1
        t0, s0 = clock[point]
        frames.append((t0 + (start - s0) / rate, audio[start : start + size]))
    return frames


class _Stories:
    """Collects the replay's request steps and gives the answers people gave off the wire
    (an operator's answer, a conference participant's vote) when the playback reaches the
    moment they gave them."""

    def __init__(
        self,
        channel_id: str,
        recorded: list[dict[str, Any]],
        handler: Any,
        vote: Callable[[str, str, str], object] | None = None,
    ) -> None:
        self.channel_id = channel_id
        self.records: list[StoryRecord] = []
        self._ids: set[str] = set()
        self._handler = handler
        self._opened: list[str] = []
        self._acts: list[tuple[float, int, Callable[[str], None]]] = []
        order = {request_id: index for index, request_id in enumerate(_order(recorded))}
        for record in recorded:
            index = order.get(record.get("request_id", ""))
            data = record.get("data")
            if index is None or not isinstance(data, dict):
                continue
            t = float(record.get("t", 0.0))
            if record.get("kind") == "settled" and data.get("via") not in _ON_THE_WIRE:
                if vote is None or data.get("via") != "approval":  # a quorum settles itself
                    self._acts.append((t, index, partial(self._settle, data)))
            elif record.get("kind") == "noted" and data.get("note") == "approval" and vote:
                who, decision = str(data.get("participant")), str(data.get("decision"))
                self._acts.append((t, index, partial(_vote, vote, who, decision)))
        self._due: dict[int, list[Callable[[str], None]]] = {}
        self._deliveries_due = sum(1 for r in recorded if r.get("kind") == "delivered")
        self.delivered = asyncio.Event()
        """Set once the replay made as many deliveries as the recording."""
        if self._deliveries_due == 0:
            self.delivered.set()

    def cues(self) -> list[tuple[float, Callable[[], None]]]:
        """When each answer or vote given off the wire is due (for the cassette)."""
        return [(t, partial(self._cue, index, act)) for t, index, act in self._acts]

    def _cue(self, index: int, act: Callable[[str], None]) -> None:
        if index < len(self._opened):
            act(self._opened[index])
        else:  # not asked yet in the replay: as soon as it is
            self._due.setdefault(index, []).append(act)

    def __call__(self, event: RequestEvent) -> None:
        from ..journal import record_of

        if event.type == "opened":
            if event.request.channel_id != self.channel_id:
                return
            self._ids.add(event.pending_id)
            self._opened.append(event.pending_id)
            for act in self._due.pop(len(self._opened) - 1, []):
                asyncio.get_running_loop().call_soon(act, event.pending_id)
        elif event.pending_id not in self._ids:
            return
        request_id, at, kind, data = record_of(event)
        self.records.append(StoryRecord(request_id, at, kind, data))
        if kind == "delivered":
            self._deliveries_due -= 1
            if self._deliveries_due <= 0:
                self.delivered.set()

    def _settle(self, data: dict[str, Any], pending_id: str) -> None:
        if self._handler is None:
            return
        by, via, text = data.get("by"), data.get("via"), data.get("text") or ""
        if data.get("outcome") == "answered":
            self._handler.resolve(pending_id, text, by=by, via=via)
        elif data.get("outcome") == "rejected":
            self._handler.reject(pending_id, text, by=by, via=via)


def _vote(
    vote: Callable[[str, str, str], object], who: str, decision: str, pending_id: str
) -> None:
    vote(pending_id, who, decision)


def _order(records: list[dict[str, Any]]) -> list[str]:
    return [r["request_id"] for r in records if r.get("kind") == "opened"]


async def replay(
    folder: str | Path,
    *,
    agent: AgentFactory,
    strict: bool = False,
    options: Any = None,
    patience: float = 5.0,
    mode: str = "wire",
) -> CallReplay:
    """Replay a recorded call against ``agent``'s channel, offline (wire replay).

    Args:
        folder: A folder written by :class:`~voice_hitl.recording.CallRecorder`.
        agent: ``factory(provider)``: the user's channel on ``provider`` (see the module).
        strict: Also compare the recogniser's figures (confidence, exact transcript).
        options: The provider options the agent runs with (``RealtimeOptions`` or
            ``LiveOptions``); the recorded session's configuration is compared with them.
        patience: Seconds to wait for each client frame the recording expects.
        mode: ``wire``, or ``audio`` to play the recorded caller audio into the channel too.

    Raises:
        RecordingError: The folder is not a usable recording (named: a missing, truncated or
            edited file, a newer format version...).

    Cancellation: safe; the agent's channel and the test server are closed.
    """
    if mode not in ("wire", "audio"):
        raise ValueError(f"mode must be 'wire' or 'audio', got {mode!r}")
    folder = Path(folder)
    call = await asyncio.to_thread(load_call, folder)
    frames = await asyncio.to_thread(_caller_frames, call) if mode == "audio" else []
    manifest, lines, records, recorded = call.manifest, call.lines, call.records, call.stories
    expected = recorded if strict else relaxed(recorded)
    cassette = Cassette(lines, call.normaliser(strict=strict), patience=patience)
    session_facts = manifest["session"]
    actor = next((r["data"].get("actor") for r in records if r.get("kind") == "opened"), None)
    async with cassette_server(manifest["provider"]["kind"], cassette) as server:
        provider = _provider(manifest["provider"], server.url, options)
        async with _agent(agent, provider) as channel:
            conference = manifest["session"].get("channel_kind") == "conference"
            if conference and not hasattr(channel, "plug_realtime"):
                raise TypeError(
                    f"a conference recording needs a ConferenceChannel, got {channel!r}"
                )
            if not conference and not isinstance(channel, RealtimeVoiceChannel):
                raise TypeError(
                    f"the agent factory must give a RealtimeVoiceChannel, got {channel!r}"
                )
            session_id = session_facts["session_id"]
            human = (
                channel.realtime.human_input_handler
                if conference
                else channel.human_input_handler
            )
            collector = _Stories(
                channel.channel_id,
                records,
                human.handler if human else None,
                vote=channel.answer if conference else None,
            )
            remove = human.handler.add_observer(collector) if human is not None else (lambda: None)
            cassette.cues.extend(collector.cues())
            if not conference:
                _play_the_caller(channel, manifest, cassette, frames)
            try:
                session = None
                if conference:
                    await channel.plug_realtime()
                else:
                    session = await channel.start_session(
                        session_facts["room_id"], participant_id=actor, session_id=session_id
                    )
                bound = patience * (1 + sum(1 for line in lines if line.dir == "out"))
                try:
                    async with asyncio.timeout(bound):
                        await cassette.done.wait()
                except TimeoutError:
                    cassette.divergence = cassette.divergence or Divergence(
                        0, f"the replay did not finish within {bound:g} s"
                    )
                if cassette.divergence is None:  # the agent reads the last frames played
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(patience):
                            await collector.delivered.wait()
                if session is None:
                    await channel.unplug_realtime()
                else:
                    await channel.end_session(session)
            finally:
                remove()
    actual = summarise(collector.records, strict=strict)
    return CallReplay(folder, manifest, expected, actual, cassette.divergence, cassette.invalid)
