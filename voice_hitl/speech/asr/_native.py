"""The native kernels Whisper's figures come from, pinned so a verdict is the same everywhere.

CTranslate2 picks its own kernels by CPU (``CT2_FORCE_CPU_ISA``), and the oneDNN library it
runs its matrix products with picks its own too (``ONEDNN_MAX_CPU_ISA``): on an AVX-512 CPU
with VNNI the committed phone call's near-miss gap reads 6.43 nats, on the AVX2 path 6.18,
on CTranslate2's generic path 4.86 (docs/guides/local-cascade.md). CTranslate2 alone
is not enough: on an AMD CPU it already selects AVX2, and oneDNN still runs AVX-512 VNNI.

So before the recogniser loads its first model, `pin_native_kernels` holds both to AVX2, the
instruction set every x86-64 CPU of the last decade has (``VOICE_HITL_ASR_ISA=native`` lets
them pick: faster on AVX-512 CPUs, and figures that follow the CPU). The thread count is
pinned by `WhisperRecognizer` (`PINNED_THREADS`) and the compute type is int8 everywhere.
Both libraries read their variable once per process, when CTranslate2 first loads a model
(importing ctranslate2 reads nothing): a process whose own code loaded a CTranslate2 model
before the recogniser keeps what it chose. Not pinned, and compared with a tolerance
instead (`voice_hitl.demo._figures`): numpy's OpenBLAS kernels (chosen when numpy is
imported), ONNX Runtime's (Silero VAD) and instructions whose precision differs by vendor.
"""

from __future__ import annotations

import os
import platform
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ISA_VARIABLE",
    "PINNED_ISA",
    "PINNED_THREADS",
    "NativeKernels",
    "cpu_flags",
    "NativeKernelsError",
    "pin_native_kernels",
]

ISA_VARIABLE = "VOICE_HITL_ASR_ISA"
"""``AVX2`` (the default) or ``native`` (CTranslate2 and oneDNN pick by CPU)."""
PINNED_ISA = "AVX2"
PINNED_THREADS = 2
"""Whisper's decoder threads unless given: a fixed two, not the core count (CTranslate2's own
default). 1, 2 and 4 threads gave the same figures (bench/bench_pinning.py); two keeps the
latency CTranslate2 chose on two cores, and a loaded machine's scheduler gives two threads
twice the share of one."""
_PIN = {"CT2_FORCE_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2"}
"""What CTranslate2 and oneDNN (both spellings) read, once, when they first run."""


class NativeKernelsError(RuntimeError):
    """The recogniser's instruction set cannot be pinned in this process (the message says
    why and what to set)."""


@dataclass(frozen=True, slots=True)
class NativeKernels:
    """Which kernels Whisper runs on in this process.

    Attributes:
        isa: ``"AVX2"`` (pinned) or ``"native"`` (chosen by CTranslate2 and oneDNN per CPU).
        pinned: whether figures are the same on every x86-64 CPU with AVX2.
    """

    isa: str
    pinned: bool

    def describe(self) -> str:
        """One line for a report: ``"AVX2 (pinned)"`` or ``"native (picked by the CPU)"``."""
        return f"{self.isa} (pinned)" if self.pinned else f"{self.isa} (picked by the CPU)"


_LOCK = threading.Lock()
_CHOSEN: NativeKernels | None = None


def cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags from ``/proc/cpuinfo`` (``None`` where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    line = next((x for x in text.splitlines() if x.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


def _has_avx2() -> bool:
    flags = cpu_flags()
    return flags is None or "avx2" in flags  # not Linux: CTranslate2 refuses what is missing


def _choose() -> NativeKernels:
    wanted = os.environ.get(ISA_VARIABLE, PINNED_ISA).strip()
    if wanted.lower() == "native":
        return NativeKernels("native", False)
    if wanted.upper() != PINNED_ISA:
        raise NativeKernelsError(f"{ISA_VARIABLE} must be AVX2 or native, got {wanted!r}")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return NativeKernels("native", False)  # ARM: one NEON path, nothing to pick between
    if not _has_avx2():
        raise NativeKernelsError(
            "this CPU has no AVX2, the instruction set Whisper is pinned to: set "
            f"{ISA_VARIABLE}=native to run on its own kernels (figures then differ from "
            "other machines')"
        )
    clashes = [f"{k}={os.environ[k]}" for k, v in _PIN.items() if os.environ.get(k, v) != v]
    if clashes:
        raise NativeKernelsError(
            f"{', '.join(clashes)} contradicts the pinned {PINNED_ISA}: unset it, or set "
            f"{ISA_VARIABLE}=native"
        )
    os.environ.update(_PIN)
    return NativeKernels(PINNED_ISA, True)


def pin_native_kernels() -> NativeKernels:
    """Pin CTranslate2 and oneDNN to AVX2 (unless ``VOICE_HITL_ASR_ISA=native``); call it
    before CTranslate2 loads a model (`WhisperRecognizer` does). The first call decides for
    the whole process.

    Raises:
        NativeKernelsError: the CPU has no AVX2, or a CTranslate2/oneDNN variable asks for
            another instruction set.
    """
    global _CHOSEN
    with _LOCK:
        if _CHOSEN is None:
            _CHOSEN = _choose()
        return _CHOSEN
