"""Taken means taken: an operator hears "answered" only when the call took the answer, and a
retry with the same Idempotency-Key never answers twice."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from service_rig import ANN, BOB, TOKENS, ask_colour, rig

from voice_hitl import HumanInputHandler
from voice_hitl._cli import main
from voice_hitl.board import (
    BoardBridge,
    BoardStatus,
    BoardUnavailableError,
    ClaimResult,
    MemoryBoard,
    SettleResult,
)
from voice_hitl.board._model import iso
from voice_hitl.service import create_app
from voice_hitl.service._serve import running_service

AUTH = {"Authorization": f"Bearer {ANN}"}


async def _outcome(task: asyncio.Task[str]) -> str:
    """What the model read: the answer's text, or the error's name."""
    try:
        return json.loads(await task)["answer"]  # type: ignore[no-any-return]
    except Exception as exc:  # withdrawn, timed out...
        return type(exc).__name__


class HeldTakes(MemoryBoard):
    """Holds the worker's take of the given requests until released, and counts claims: the
    test withdraws the calls while their answers wait on the board."""

    def __init__(self) -> None:
        super().__init__()
        self.hold: set[str] = set()
        self.released = asyncio.Event()
        self.claims = 0
        self.claimed = asyncio.Event()
        self.claimed_once = asyncio.Event()

    async def claim(self, *args: Any, **kwargs: Any) -> ClaimResult:
        result = await super().claim(*args, **kwargs)
        self.claims += 1
        self.claimed_once.set()
        if self.hold and self.claims == len(self.hold) + 10:
            self.claimed.set()
        return result

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        if request_id in self.hold:
            await self.released.wait()
        return await super().take(request_id, token, worker)


async def test_answers_racing_a_withdrawal_get_200_only_when_the_call_took_them() -> None:
    """kit.aclose() withdrawing calls while operators answer: 161-164 of 1,000 answers got 200
    and "answered by maria", but the model never read them."""
    board = HeldTakes()
    async with rig(board=board) as r:
        ids = [await ask_colour(r.bridge) for _ in range(20)]
        waits = {rid: asyncio.create_task(r.handler.wait(rid)) for rid in ids}

        async def answer(rid: str) -> httpx.Response:
            url = f"/v1/requests/{rid}/answer"
            return await r.client.post(url, json={"answer": "red"}, headers=AUTH)

        early = [await answer(rid) for rid in ids[:10]]
        board.hold = set(ids[10:])
        late = [asyncio.create_task(answer(rid)) for rid in ids[10:]]
        await board.claimed.wait()  # every late answer waits on the board...
        await r.handler.close()  # ...when the calls are withdrawn (as kit.aclose() does)
        board.released.set()
        responses = dict(zip(ids, [*early, *[await post for post in late]], strict=True))
        read = {rid: await _outcome(task) for rid, task in waits.items()}
        for rid, response in responses.items():
            if response.status_code == 200:
                assert read[rid] == "red"  # a 200 is an answer the model read
            else:
                assert response.status_code == 409, response.text
                assert read[rid] != "red"
                message = response.json()["error"]["message"]
                assert "was withdrawn" in message and "never got it" in message, message
        assert [responses[rid].status_code for rid in ids] == [200] * 10 + [409] * 10


async def test_an_answer_to_a_stopped_worker_is_refused_not_lost() -> None:
    """A worker killed less than a heartbeat timeout ago: its request is still open on the
    board, but nobody will take the answer. It used to get 200 and show "Answered"."""
    board = MemoryBoard()
    handler = HumanInputHandler()
    app = create_app(board, TOKENS, ack_timeout=0.3)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
        async with BoardBridge(handler, board, worker_id="w-killed") as bridge:
            rid = await ask_colour(bridge)
        # the bridge is gone (as with SIGKILL, nothing was withdrawn): heartbeat still valid
        response = await client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=AUTH
        )
        assert response.status_code == 503, response.text
        error = response.json()["error"]
        assert error["code"] == "not_taken" and "nothing was delivered" in error["message"]
        shown = await board.get(rid)
        assert shown is not None and shown.is_open and shown.claim is None  # open again
        assert handler.get(rid).status == "pending"  # type: ignore[union-attr]
        await handler.close()


class LostReplyBoard(MemoryBoard):
    """Applies the next operator write, then loses the reply (a connection dropped after the
    command was sent, as in a Redis crash)."""

    lose = 1

    def _lost(self) -> None:
        if self.lose:
            self.lose -= 1
            raise BoardUnavailableError("Redis is unreachable: connection lost mid-reply")

    async def settle(self, *args: Any, **kwargs: Any) -> SettleResult:
        result = await super().settle(*args, **kwargs)
        if kwargs.get("worker") is None:
            self._lost()
        return result

    async def claim(self, *args: Any, **kwargs: Any) -> ClaimResult:
        result = await super().claim(*args, **kwargs)
        self._lost()
        return result


async def test_an_answer_whose_reply_was_lost_is_never_reported_unavailable_when_taken() -> None:
    """During a Redis crash (with AOF) an answer that got 503 had been applied and reached the
    call: a client retrying it answered twice."""
    async with rig(board=LostReplyBoard()) as r:
        rid = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        response = await r.client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=AUTH
        )
        assert json.loads(await waiting)["answer"] == "red"
        assert response.status_code == 200, response.text  # the call took it: say so


async def test_a_retry_with_the_same_key_returns_the_first_outcome() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        url = f"/v1/requests/{rid}/answer"
        keyed = {**AUTH, "Idempotency-Key": "retry-1"}
        first = await r.client.post(url, json={"answer": "red"}, headers=keyed)
        again = await r.client.post(url, json={"answer": "red"}, headers=keyed)
        assert first.status_code == again.status_code == 200, again.text
        assert first.json() == again.json()
        assert json.loads(await waiting)["answer"] == "red"
        assert r.bridge.delivered == 1
        # another key (or none) is another answer: refused
        other = await r.client.post(url, json={"answer": "red"}, headers=AUTH)
        assert other.status_code == 409
        for bad in (b"", b"x" * 201, "caf\u00e9".encode("latin-1")):
            refused = await r.client.post(
                url, json={"answer": "red"}, headers={**AUTH, "Idempotency-Key": bad}
            )
            assert refused.status_code in (400, 422), (bad, refused.text)


async def test_two_operators_racing_get_one_200_and_one_409() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        url = f"/v1/requests/{rid}/answer"
        both = await asyncio.gather(
            r.client.post(url, json={"answer": "red"}, headers=AUTH),
            r.client.post(url, json={"answer": "dark blue"}, headers=AUTH),
        )
        assert sorted(response.status_code for response in both) == [200, 409]
        winner = next(response for response in both if response.status_code == 200)
        read = json.loads(await waiting)["answer"]
        assert winner.json()["request"]["settled"]["text"] == (
            (await r.board.get(rid)).text  # type: ignore[union-attr]
        )
        assert read in ("red", "Dark blue")
        loser = next(response for response in both if response.status_code == 409)
        # settled before the loser's claim, or the winner's claim still waiting on the call
        assert loser.json()["error"]["code"] in ("already_settled", "being_answered")
        assert (await r.board.get(rid)).status is BoardStatus.ANSWERED  # type: ignore[union-attr]


class LostTakeReply(MemoryBoard):
    """The worker's first take is applied, then its reply is lost (Redis crashed with AOF)."""

    lose = 1

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        taken = await super().take(request_id, token, worker)
        if self.lose:
            self.lose -= 1
            raise BoardUnavailableError("Redis is unreachable: connection lost mid-reply")
        return taken


async def test_a_take_whose_reply_was_lost_is_delivered_after_reconnecting() -> None:
    """The claim stayed taken on the board while the worker never handed it over: every
    retry waited on it and ended 504, for good."""
    async with rig(board=LostTakeReply()) as r:
        rid = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        response = await r.client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=AUTH
        )
        assert response.status_code == 200, response.text
        assert json.loads(await waiting)["answer"] == "red"
        assert r.bridge.reconnects >= 1


async def test_an_answer_waiting_on_the_call_is_being_answered_with_who_and_until(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A claim held by another operator used to be 409 already_settled with no settled object."""
    board = HeldTakes()
    handler = HumanInputHandler()
    async with (
        running_service(create_app(board, TOKENS, ack_timeout=30)) as url,
        BoardBridge(handler, board, worker_id="w-held") as bridge,
        httpx.AsyncClient(base_url=url) as client,
    ):
        rid = await ask_colour(bridge, room="room-b")
        board.hold = {rid}
        waiting = asyncio.create_task(handler.wait(rid))
        first = asyncio.create_task(
            client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=AUTH)
        )
        while (found := await board.get(rid)) is None or found.claim is None:
            await board.claimed_once.wait()  # set by the claim itself: no polling on time
        bob = {"Authorization": f"Bearer {BOB}"}
        second = await client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "Dark blue"}, headers=bob
        )
        assert second.status_code == 409, second.text
        error = second.json()["error"]
        assert error["code"] == "being_answered" and "settled" not in error
        claim = error["claim"]
        assert claim["by"] == "ann" and claim["status"] == "answered" and claim["via"] == "api"
        assert claim["until"] == iso(found.claim.until)
        assert int(second.headers["Retry-After"]) == error["retry_after"] >= 1
        assert "being answered by ann" in error["message"]
        code, _, err = await asyncio.to_thread(
            _cli, capsys, "answer", rid, "red", "--url", url, "--token", BOB
        )
        assert code == 8 and "being answered by ann" in err and "(409)" in err
        board.released.set()
        assert (await first).status_code == 200
        assert json.loads(await waiting)["answer"] == "red"
        late = await client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=bob)
        assert late.json()["error"]["code"] == "already_settled"
        assert late.json()["error"]["settled"]["by"] == "ann"
        await handler.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
