"""The ``moonshine-cpp`` wheel's C library through `ctypes`, and its probe.

This file imports nothing but the standard library, so it also runs as a script in a child
process (`_moonshine.moonshine_support`): ``python -I _moonshine_native.py FOLDER`` loads the
English model from the wheel's ``FOLDER``, transcribes half a second of silence, frees it and
prints ``ok``. A CPU the wheel was not built for kills that child (SIGILL), not the caller.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["ORT_LIBRARY", "NativeModel"]

ORT_LIBRARY = "libonnxruntime.so.1.22.1"
_MODEL_TYPE_BASE = 1


class NativeModel:
    """The loaded C model: one handle, used under ``lock`` by one thread at a time.

    Raises:
        RuntimeError: libmoonshine could not load the model.
    """

    def __init__(self, folder: Path) -> None:
        ctypes.CDLL(str(folder / ORT_LIBRARY))  # libmoonshine links to it by soname
        lib = ctypes.CDLL(str(folder / "libmoonshine.so"))
        lib.moonshine_load_model.argtypes = (
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_int32,
        )
        lib.moonshine_load_model.restype = ctypes.c_int
        lib.moonshine_transcribe.argtypes = (
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_char_p),
        )
        lib.moonshine_transcribe.restype = ctypes.c_int
        lib.moonshine_free_text.argtypes = (ctypes.c_char_p,)
        lib.moonshine_free_text.restype = None
        models = folder / "models" / "base-en"
        handle = lib.moonshine_load_model(
            str(models / "encoder_model.ort").encode(),
            str(models / "decoder_model_merged.ort").encode(),
            str(models / "tokenizer.bin").encode(),
            _MODEL_TYPE_BASE,
        )
        if handle < 0:
            raise RuntimeError(f"libmoonshine could not load the model in {models}")
        self.lib: Any = lib
        self.handle = int(handle)
        self.lock = threading.Lock()

    def transcribe_floats(self, samples: Any, count: int) -> str:
        """The transcript of ``count`` float samples at 16 kHz (a ctypes float pointer)."""
        text = ctypes.c_char_p()
        with self.lock:
            error = self.lib.moonshine_transcribe(self.handle, samples, count, ctypes.byref(text))
            if error != 0:
                raise RuntimeError(f"libmoonshine could not transcribe (error {error})")
            value = text.value
            self.lib.moonshine_free_text(text)
        return (value or b"").decode("utf-8", errors="replace").strip()


def _probe(folder: Path) -> None:
    model = NativeModel(folder)
    silence = (ctypes.c_float * 8000)()
    model.transcribe_floats(silence, len(silence))
    print("ok", flush=True)


if __name__ == "__main__":
    _probe(Path(sys.argv[1]))
