"""Wire helpers every JSON-over-websocket realtime protocol needs, sans I/O.

Base64 PCM16 audio both ways (resampled with the project's shared linear resampler), one
server frame decoded to a JSON object or a reason it is not one, and :func:`publish`, which
makes re-exported names show their public module.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from voice_hitl.voice._audio import resample_linear
from voice_hitl.voice._provider_events import PCM16

__all__ = ["decode_pcm16", "encode_pcm16", "parse_object", "publish"]


def encode_pcm16(frame: PCM16, rate: int, wire_rate: int) -> str:
    """Base64 of ``frame`` (at ``rate`` Hz) as little-endian PCM16 at ``wire_rate``.

    Raises:
        ValueError: ``frame`` is not a one-dimensional int16 array.
    """
    if frame.dtype != np.int16 or frame.ndim != 1:
        raise ValueError(
            f"audio frames must be 1-D int16 arrays (mono PCM16), got {frame.dtype} "
            f"with shape {frame.shape}"
        )
    wire = resample_linear(frame, rate, wire_rate)
    return base64.b64encode(wire.astype("<i2", copy=False).tobytes()).decode("ascii")


def decode_pcm16(
    data: str, wire_rate: int, rate: int, *, what: str = "audio data", url_safe: bool = False
) -> PCM16:
    """Decode base64 PCM16 at ``wire_rate`` and resample it to ``rate`` Hz.

    Args:
        data: The base64 text.
        wire_rate: Its sample rate.
        rate: The rate wanted.
        what: How error messages name ``data``.
        url_safe: Also accept the URL-safe alphabet (protobuf JSON may use it).

    Raises:
        ValueError: ``data`` is not base64, or not whole 16-bit samples.
    """
    raw = _b64decode(data, url_safe=url_safe)
    if raw is None:
        raise ValueError(f"{what} is not valid base64")
    if len(raw) % 2:
        raise ValueError(f"{what} has an odd byte count ({len(raw)}); PCM16 expected")
    frame = np.frombuffer(raw, dtype="<i2").astype(np.int16)
    return resample_linear(frame, wire_rate, rate)


def _b64decode(data: str, *, url_safe: bool) -> bytes | None:
    for altchars in (None, b"-_") if url_safe else (None,):
        with contextlib.suppress(binascii.Error, ValueError):
            return base64.b64decode(data, altchars=altchars, validate=True)
    return None


def parse_object(data: str | bytes, server: str) -> dict[str, Any] | str:
    """One server frame as a JSON object, or why it is not one (a message naming
    ``server``, for a ``malformed_server_event`` error)."""
    try:
        value = json.loads(data)
    except ValueError as exc:
        snippet = data[:80] if isinstance(data, str) else repr(data[:80])
        return f"{server} sent malformed JSON ({exc}): {snippet!r}"
    if not isinstance(value, dict):
        return f"{server} sent a {type(value).__name__}, not a JSON object"
    return value


def publish(namespace: Mapping[str, Any], names: Iterable[str], module: str) -> None:
    """Show ``module`` as the ``__module__`` of each re-exported class and function in
    ``namespace`` that comes from a private module of the ``providers`` package."""
    for name in names:
        obj = namespace.get(name)
        owner = getattr(obj, "__module__", None)
        if isinstance(owner, str) and owner.startswith("providers.") and "._" in owner:
            with contextlib.suppress(AttributeError, TypeError):  # a type alias
                obj.__module__ = module
