"""Whisper's native kernels are pinned (issue 46): CTranslate2 and oneDNN run AVX2 in every
process that loads the recogniser, whatever the CPU, and a pin that cannot hold says why
instead of giving another machine's figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from voice_hitl.speech.asr import NativeKernels, NativeKernelsError, _native

pytest.importorskip("faster_whisper", reason="needs the 'whisper' extra")

ROOT = Path(__file__).resolve().parents[2]
_VARS = ("CT2_FORCE_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", _native.ISA_VARIABLE)
_LOAD_AND_HEAR = """
import faster_whisper  # imported first (as pytest.importorskip does): CTranslate2 reads later
import numpy as np
from voice_hitl.speech.asr import WhisperRecognizer, pin_native_kernels
WhisperRecognizer().transcribe_sync(np.zeros(16000, np.int16), 16000, None)
print("kernels:", pin_native_kernels().describe())
"""


def _hear_once(**env: str) -> str:
    """A child process that loads Whisper and decodes a second of silence, with CTranslate2's
    and oneDNN's own reports of the instruction set they chose."""
    clean = {k: v for k, v in os.environ.items() if k not in _VARS}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_HEAR],
        env={**clean, "PYTHONPATH": str(ROOT), "CT2_VERBOSE": "1", "ONEDNN_VERBOSE": "1", **env},
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    )
    return done.stdout + done.stderr


@pytest.mark.timeout(120)
def test_ctranslate2_and_onednn_run_avx2_unless_told_otherwise() -> None:
    """What the installed CTranslate2 and oneDNN say they run: the pin is honoured (a release
    that renamed its variable would fail here), and ``native`` leaves the choice to them."""
    pinned = _hear_once()
    assert "Selected ISA: AVX2" in pinned and "kernels: AVX2 (pinned)" in pinned
    onednn = [x for x in pinned.splitlines() if x.startswith("onednn_verbose,info,cpu,isa")]
    assert onednn and all(x.endswith("isa:Intel AVX2") for x in onednn), onednn
    native = _hear_once(VOICE_HITL_ASR_ISA="native")
    assert "kernels: native (picked by the CPU)" in native
    if "avx512_vnni" in (_native.cpu_flags() or ()):  # the reference machine: oneDNN picks VNNI
        assert "isa:Intel AVX2" not in native


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No variable of the pin set (as in a new process)."""
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_native, "_has_avx2", lambda: True)
    return monkeypatch


def test_the_pin_sets_both_libraries_variables(fresh: pytest.MonkeyPatch) -> None:
    assert _native._choose() == NativeKernels("AVX2", True)
    assert [os.environ[v] for v in _VARS[:3]] == ["AVX2"] * 3


def test_a_process_that_cannot_be_pinned_is_refused(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv(_native.ISA_VARIABLE, "AVX512")
    with pytest.raises(NativeKernelsError, match="must be AVX2 or native, got 'AVX512'"):
        _native._choose()
    fresh.setenv(_native.ISA_VARIABLE, "native")
    assert _native._choose() == NativeKernels("native", False)
    fresh.delenv(_native.ISA_VARIABLE)
    fresh.setenv("CT2_FORCE_CPU_ISA", "GENERIC")
    with pytest.raises(NativeKernelsError, match="CT2_FORCE_CPU_ISA=GENERIC contradicts"):
        _native._choose()
    fresh.delenv("CT2_FORCE_CPU_ISA")
    fresh.setattr(_native, "_has_avx2", lambda: False)
    with pytest.raises(NativeKernelsError, match=r"no AVX2.*VOICE_HITL_ASR_ISA=native"):
        _native._choose()
    assert "CT2_FORCE_CPU_ISA" not in os.environ  # nothing set by a refusal
