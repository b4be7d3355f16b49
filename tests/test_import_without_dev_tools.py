"""The library and its command import where the test tools are not installed.

The README's first command installs only the ``speech`` extra, without pytest; the
``voice-hitl`` command must still start (``voice_hitl.recording``, which the command loads for
its ``recording`` sub-command, once imported pytest through the plugin module).
"""

from __future__ import annotations

import subprocess
import sys

BLOCK_PYTEST = (
    "import sys; sys.modules['pytest'] = None; "  # as if pytest were not installed
    "import voice_hitl._cli, voice_hitl.recording; "
    "from voice_hitl.recording import RecordedCall; "
    "print(RecordedCall.__module__)"
)


def test_the_command_and_the_recording_package_import_without_pytest() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_PYTEST], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "voice_hitl.recording"
