"""Issue 11, item 5: every bad invocation of the command line ends in one line on stderr naming
the bad input and exit 2, found before any work starts; never a traceback. In-process
(``main(argv)``), so the whole table runs in well under a second."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from voice_hitl._cli import main
from voice_hitl.demo._demo import transcript_files

FIXTURES = Path(__file__).resolve().parent.parent / "audio_fixtures"


def _wav(path: Path, samples: int, *, truncate_to: int | None = None) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes(np.zeros(samples, dtype="<i2").tobytes())
    if truncate_to is not None:
        data = path.read_bytes()
        path.write_bytes(data[: 44 + truncate_to * 2])


GOOD_ENTRY = {
    "file": "ok.wav",
    "spec": {"tool": "ConfirmAction", "arguments": {"action": "pay"}},
    "expected": {"type": "answer", "choice_id": "yes", "value": True},
}


def _manifest(tmp: Path, entries: list[object]) -> Path:
    _wav(tmp / "ok.wav", 1600)
    _wav(tmp / "empty.wav", 0)
    _wav(tmp / "cut.wav", 16_000, truncate_to=100)
    (tmp / "manifest.json").write_text(json.dumps({"fixtures": entries}))
    return tmp


def _entry(**changes: object) -> dict[str, object]:
    return {**GOOD_ENTRY, **changes}


# (argv with {tmp} / {fixtures} placeholders, manifest entries or None, words in the message)
CASES = [
    ("demo --speed -1", None, "--speed"),
    ("demo --speed nan", None, "--speed"),
    ("demo --speed inf", None, "--speed"),
    ("demo --speed fast", None, "--speed"),
    ("demo --out {tmp}/afile", None, "is a file"),
    ("demo --out {tmp}/afile/sub", None, "cannot write there"),
    ("demo --recognizer nope", None, "--recognizer"),
    ("demo --bogus", None, "--bogus"),
    ("replay", None, "path"),
    ("replay {tmp}/nowhere", None, "no such fixture folder"),
    ("replay {fixtures} --limit 0", None, "--limit"),
    ("replay {fixtures} --limit -1", None, "--limit"),
    ("replay {fixtures} --limit x", None, "--limit"),
    ("replay {fixtures} --sample 0", None, "--sample"),
    ("replay {fixtures} --sample -3", None, "--sample"),
    ("replay {fixtures} --report {tmp}/missing/r.json", None, "does not exist"),
    ("replay {fixtures} --report {tmp}", None, "is a folder"),
    ("replay {fixtures} --baseline {tmp}/nope.json", None, "--baseline"),
    ("replay {fixtures} --recognizer nope", None, "--recognizer"),
    ("replay {fixtures} --verify maybe", None, "--verify"),
    ("replay {tmp}", [7], "fixture 0 is int"),
    ("replay {tmp}", [_entry(spec={"arguments": {}})], "'tool'"),
    ("replay {tmp}", [_entry(spec={"tool": "Nope", "arguments": {}})], "bad 'spec'"),
    ("replay {tmp}", [_entry(expected="yes")], "'expected'"),
    ("replay {tmp}", [_entry(expected={"type": "maybe"})], "'expected'"),
    ("replay {tmp}", [_entry(file=3)], "'file'"),
    ("replay {tmp}", [_entry(file="gone.wav")], "no such audio file"),
    ("replay {tmp}", [_entry(file="empty.wav")], "zero length"),
    ("replay {tmp}", [_entry(file="cut.wav")], "truncated"),
    ("replay {tmp}", [_entry(file="manifest.json")], "not a PCM WAV"),
    ("replay {tmp}", [{"file": "ok.wav"}], "lacks"),
    ("replay {tmp}/manifest.json --baseline {tmp}/manifest.json", [GOOD_ENTRY], "baseline"),
    ("replay {fixtures} --voice nobody", None, "no fixture matches --voice nobody (the"),
    ("replay {tmp} --condition storm", [GOOD_ENTRY], "no fixture matches --condition storm"),
    ("answer r1 NaN --json --token t --url http://127.0.0.1:9", None, "NaN is not a JSON number"),
    ("answer r1 [-Infinity] --json --token t --url http://127.0.0.1:9", None, "-Infinity is not"),
    ("answer r1 1e999 --json --token t --url http://127.0.0.1:9", None, "out of range: 1e999"),
]


@pytest.mark.parametrize(("argv", "entries", "needle"), CASES, ids=[c[0] for c in CASES])
def test_bad_invocations_are_one_line_and_exit_2(
    argv: str,
    entries: list[object] | None,
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder")
    if entries is not None:
        _manifest(tmp_path, entries)
        if "--baseline" in argv:  # a baseline that is not one (a list, not an object)
            (tmp_path / "manifest.json").write_text(json.dumps({"fixtures": entries}))
            argv = argv.replace("--baseline {tmp}/manifest.json", "--baseline {tmp}/b.json")
            (tmp_path / "b.json").write_text("[1, 2]")
    args = argv.format(tmp=tmp_path, fixtures=FIXTURES).split()
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert len(lines) == 1, lines
    assert needle in lines[0]
    assert lines[0].startswith("voice-hitl")
    assert "Traceback" not in captured.err + captured.out
    assert (
        sorted(
            p.name
            for p in tmp_path.iterdir()
            if p.suffix == ".json" and p.name.startswith("replay")
        )
        == []
    )  # nothing written unasked


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("voice-hitl ")


@pytest.mark.parametrize("command", ["demo", "replay"])
def test_help_describes_and_shows_defaults(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes" in text.lower()
    assert "default" in text
    assert "``" not in text and "`RECOGNIZERS`" not in text  # no raw reStructuredText


def test_the_demo_transcript_lists_its_files(tmp_path: Path) -> None:
    assert [p.name for p in transcript_files(tmp_path)] == ["caller.wav", "agent.wav", "call.wav"]


@pytest.mark.parametrize(
    ("argv", "missing"),
    [
        (["pending", "--token", "t"], "httpx"),
        (["serve"], "starlette"),
        (["demo", "--operator"], "uvicorn"),
    ],
)
def test_operator_commands_name_the_missing_extra(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    missing: str,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a)
    )
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert missing in line and "voice-hitl[server,redis]" in line


def test_demo_operator_on_a_taken_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    pytest.importorskip("uvicorn")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["demo", "--operator", "--speed", "0", "--port", str(port)])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert lines == [
        f"voice-hitl demo: error: --port {port}: the operator service cannot listen on "
        f"127.0.0.1:{port}: Address already in use"
    ]
    assert "Traceback" not in captured.err + captured.out
