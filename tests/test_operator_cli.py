"""``voice-hitl pending / answer / reject`` against a running service: output and exit codes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator

import pytest
from service_rig import ANN, TOKENS, ask_colour

from voice_hitl import HumanInputHandler, HumanInputRejectedError
from voice_hitl._cli import main
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.service import create_app
from voice_hitl.service._serve import running_service


@contextlib.asynccontextmanager
async def service() -> AsyncIterator[tuple[str, BoardBridge]]:
    board = MemoryBoard()
    handler = HumanInputHandler()
    async with (
        running_service(create_app(board, TOKENS)) as url,
        BoardBridge(handler, board) as bridge,
    ):
        yield url, bridge
        await handler.close()


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def test_pending_answer_and_the_model_reads_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with service() as (url, bridge):
        monkeypatch.setenv("VOICE_HITL_URL", url)
        monkeypatch.setenv("VOICE_HITL_TOKEN", ANN)
        assert await cli(capsys, "pending") == (0, "no open requests\n", "")
        rid = await ask_colour(bridge)
        code, out, _ = await cli(capsys, "pending")
        assert code == 0
        assert out.startswith(f"{rid}  AskUserQuestion  room-7/phone  caller  due in ")
        assert '"Which colour?"  [red | dark_blue]' in out
        code, out, _ = await cli(capsys, "pending", "--json", "--room", "room-7")
        assert [r["id"] for r in json.loads(out)] == [rid]
        waiting = asyncio.create_task(bridge.handler.wait(rid))
        assert await cli(capsys, "answer", rid, "Dark Blue") == (0, f"{rid}: answered by ann\n", "")
        result = json.loads(await waiting)
        assert (result["answer"], result["actor_id"]) == ("Dark blue", "ann")
        code, out, err = await cli(capsys, "answer", rid, "red")
        assert code == 5 and out == ""
        assert err.startswith(f"voice-hitl: request {rid} was already answered by ann at ")
        assert err.count("\n") == 1


async def test_each_refusal_has_its_exit_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOICE_HITL_TOKEN", raising=False)
    async with service() as (url, bridge):
        rid = await ask_colour(bridge)
        base = ("--url", url)
        code, _, err = await cli(capsys, "answer", *base, rid, "red")
        assert code == 2 and "no token" in err
        code, _, err = await cli(capsys, "answer", *base, "--token", "nope-nope", rid, "red")
        assert code == 3 and "(401)" in err
        auth = (*base, "--token", ANN)
        code, _, err = await cli(capsys, "answer", *auth, "missing-id", "red")
        assert code == 4 and "no request 'missing-id'" in err
        code, _, err = await cli(capsys, "answer", *auth, rid, "green")
        assert code == 6 and "is not one of: 'red', 'dark_blue'" in err
        code, _, err = await cli(capsys, "answer", *auth, "--json", rid, "{oops")
        assert code == 2 and "is not JSON" in err
        waiting = asyncio.create_task(bridge.handler.wait(rid))
        code, out, _ = await cli(capsys, "reject", *auth, rid, "the supervisor must call back")
        assert code == 0 and out == f"{rid}: rejected by ann\n"
        with pytest.raises(HumanInputRejectedError, match="must call back"):
            await waiting
    code, _, err = await cli(capsys, "pending", "--url", url, "--token", ANN)
    assert code == 7 and err.startswith(f"voice-hitl: cannot reach {url}")


async def test_answer_with_an_idempotency_key_is_made_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with service() as (url, bridge):
        monkeypatch.setenv("VOICE_HITL_URL", url)
        monkeypatch.setenv("VOICE_HITL_TOKEN", ANN)
        rid = await ask_colour(bridge)
        waiting = asyncio.create_task(bridge.handler.wait(rid))
        once = ("answer", "--idempotency-key", "k-1", rid, "red")
        assert await cli(capsys, *once) == (0, f"{rid}: answered by ann\n", "")
        assert json.loads(await waiting)["answer"] == "red"
        assert await cli(capsys, *once) == (0, f"{rid}: answered by ann\n", "")  # a retry
        assert bridge.delivered == 1
        code, _, err = await cli(capsys, "answer", rid, "red")  # no key: a second answer
        assert code == 5 and "already answered" in err


async def test_pending_watch_follows_the_feed() -> None:
    async with service() as (url, bridge):
        watcher = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "from voice_hitl._cli import main; raise SystemExit(main())",
            "pending",
            "--watch",
            "--url",
            url,
            "--token",
            ANN,
            stdout=asyncio.subprocess.PIPE,
        )
        assert watcher.stdout is not None
        try:
            async with asyncio.timeout(20):
                rid = None
                while True:
                    line = (await watcher.stdout.readline()).decode()
                    assert line, "the watcher ended early"
                    if line.startswith("# watching"):
                        rid = await ask_colour(bridge)
                    if line.startswith(f"+ {rid}"):
                        bridge.handler.resolve(rid, '"red"', by="caller", via="speech")
                    if line.startswith(f"- {rid}"):
                        assert line == f"- {rid}  answered by caller\n"
                        break
        finally:
            watcher.terminate()
            await watcher.wait()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--port", "99999"], "99999 is not a port: use 0-65535"),
        (["--port", "http"], "'http' is not a port number"),
        (["--heartbeat", "0"], "0 is out of range"),
        (["--heartbeat", "inf"], "inf is out of range"),
        (["--heartbeat", "nan"], "nan is out of range"),
        (["--redis", "notaurl"], "'notaurl' is not a Redis URL"),
        (["--ack-timeout", "0"], "0 is out of range"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(
    argv: list[str],
    needle: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    operators = {"operators": [{"name": "ann", "token": ANN}]}
    monkeypatch.setenv("VOICE_HITL_OPERATORS", json.dumps(operators))
    args = ["serve", "--no-journal", *argv]
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured
    assert "Traceback" not in captured.err + captured.out
    assert needle in lines[-1] and lines[-1].startswith("voice-hitl"), lines


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan")])
def test_the_app_refuses_a_reap_interval_or_ack_timeout_that_cannot_work(seconds: float) -> None:
    with pytest.raises(ValueError, match="reap_interval"):
        create_app(MemoryBoard(), TOKENS, reap_interval=seconds)
    with pytest.raises(ValueError, match="ack_timeout"):
        create_app(MemoryBoard(), TOKENS, ack_timeout=seconds)


async def test_pending_lists_a_request_whose_arguments_hold_a_lone_surrogate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GET /v1/requests answered 500 for every operator, and `pending` exited 7 as if the
    service were down."""
    async with service() as (url, bridge):
        monkeypatch.setenv("VOICE_HITL_URL", url)
        monkeypatch.setenv("VOICE_HITL_TOKEN", ANN)
        await bridge.handler.create("AskUserQuestion", {"question": "Odd \ud800?"}, timeout=60)
        await bridge.drain()
        code, out, err = await cli(capsys, "pending")
        assert (code, err) == (0, "")
        assert '"Odd \\ufffd?"' in out
