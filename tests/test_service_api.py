"""The operator HTTP API: what each request gets back, and what the model then reads."""

from __future__ import annotations

import asyncio
import json

import pytest
from service_rig import ANN, BOB, ask_colour, rig

from voice_hitl import HumanInputRejectedError

AUTH = {"Authorization": f"Bearer {ANN}"}


async def test_no_token_no_data() -> None:
    async with rig() as r:
        await ask_colour(r.bridge)
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": "Basic x"}):
            response = await r.client.get("/v1/requests", headers=headers)
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.json()["error"]["code"] == "unauthorized"
            assert "requests" not in response.json()
        me = await r.client.get("/v1/me", headers=AUTH)
        assert me.json() == {"name": "ann", "rooms": ["*"], "channels": ["*"]}


async def test_listing_shows_what_the_operator_needs_and_filters() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        other = await ask_colour(r.bridge, room="room-b")
        listed = (await r.client.get("/v1/requests", headers=AUTH)).json()["requests"]
        assert [item["id"] for item in listed] == [rid, other]
        first = listed[0]
        assert first["tool"] == "AskUserQuestion" and first["status"] == "open"
        assert first["spec"]["kind"] == "choices"
        assert [c["id"] for c in first["spec"]["choices"]] == ["red", "dark_blue"]
        assert (first["room"], first["channel"], first["actor"]) == ("room-7", "phone", "caller")
        assert first["transcript"] == [{"role": "user", "text": "paint it", "speaker_id": "caller"}]
        assert first["worker"] == "w-test" and first["deadline"] > first["created_at"]

        async def ids(query: str, token: str = ANN) -> list[str]:
            headers = {"Authorization": f"Bearer {token}"}
            response = await r.client.get(f"/v1/requests?{query}", headers=headers)
            return [item["id"] for item in response.json()["requests"]]

        assert await ids("room=room-b") == [other]
        assert await ids("tool=ConfirmAction") == []
        assert await ids("channel=phone&tool=AskUserQuestion") == [rid, other]
        assert await ids("", token=BOB) == [other]  # bob sees only room-b
        # outside bob's scope reads exactly as an unknown id: nothing tells that it exists
        hidden = await r.client.get(f"/v1/requests/{rid}", headers={"Authorization": BOB})
        unknown = await r.client.get(f"/v1/requests/{rid}x", headers={"Authorization": BOB})
        assert hidden.status_code == unknown.status_code == 404
        assert hidden.json()["error"]["message"] == unknown.json()["error"]["message"].replace(
            f"{rid}x", rid
        )
        for action, body in (("answer", {"answer": "red"}), ("reject", {"reason": "no"})):
            refused = await r.client.post(
                f"/v1/requests/{rid}/{action}", json=body, headers={"Authorization": BOB}
            )
            assert refused.status_code == 404


async def test_for_filter_reads_addressed_people() -> None:
    async with rig() as r:
        to_alice = await ask_colour(r.bridge, ask="alice")
        anyone = await ask_colour(r.bridge)
        response = await r.client.get("/v1/requests?for=alice", headers=AUTH)
        assert [item["id"] for item in response.json()["requests"]] == [to_alice, anyone]
        response = await r.client.get("/v1/requests?for=bob", headers=AUTH)
        assert [item["id"] for item in response.json()["requests"]] == [anyone]


async def test_an_answer_reaches_the_model_once_and_the_loser_gets_409() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        response = await r.client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "dark blue"}, headers=AUTH
        )
        assert response.status_code == 200, response.text
        settled = response.json()["request"]["settled"]
        assert (settled["status"], settled["by"], settled["via"]) == ("answered", "ann", "api")
        result = json.loads(await waiting)
        assert result["answer"] == "Dark blue" and result["choice_id"] == "dark_blue"
        assert (result["actor_id"], result["via"]) == ("ann", "operator")
        again = await r.client.post(
            f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=AUTH
        )
        assert again.status_code == 409
        error = again.json()["error"]
        assert error["code"] == "already_settled"
        assert "already answered by ann at" in error["message"]
        assert error["settled"]["at"] == settled["at"]
        reject = await r.client.post(
            f"/v1/requests/{rid}/reject", json={"reason": "late"}, headers=AUTH
        )
        assert reject.status_code == 409


@pytest.mark.parametrize(
    ("arguments", "answer", "says"),
    [
        ({}, "green", "is not one of: 'red', 'dark_blue'"),
        ({"mode": "number", "min": 1, "max": 100, "choices": []}, 500, "outside [1.0, 100.0]"),
        ({"mode": "confirm", "choices": []}, "maybe", "not yes or no"),
        ({"mode": "digits", "length": 4, "choices": []}, "12", "2 digits, expected 4"),
    ],
)
async def test_answers_that_do_not_fit_get_422(arguments: dict, answer: object, says: str) -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge, **arguments)
        response = await r.client.post(
            f"/v1/requests/{rid}/answer", json={"answer": answer}, headers=AUTH
        )
        assert response.status_code == 422
        assert says in response.json()["error"]["message"]
        assert r.handler.get(rid) is not None and r.handler.get(rid).status == "pending"


async def test_bad_requests_each_get_a_clear_status() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        url = f"/v1/requests/{rid}/answer"
        unknown = await r.client.post("/v1/requests/nope/answer", json={"answer": 1}, headers=AUTH)
        assert unknown.status_code == 404 and "no request 'nope'" in unknown.text
        bad_json = await r.client.post(url, content=b"{not json", headers=AUTH)
        assert bad_json.status_code == 400 and "not JSON" in bad_json.json()["error"]["message"]
        too_big = await r.client.post(url, json={"answer": "x" * (64 * 1024)}, headers=AUTH)
        assert too_big.status_code == 413
        shape = await r.client.post(url, json=["red"], headers=AUTH)
        assert shape.status_code == 422 and '"answer"' in shape.json()["error"]["message"]
        empty = await r.client.post(
            f"/v1/requests/{rid}/reject", json={"reason": "  "}, headers=AUTH
        )
        assert empty.status_code == 422
        assert r.handler.get(rid) is not None and r.handler.get(rid).status == "pending"


async def test_a_rejection_reaches_the_model_and_withdrawals_get_409() -> None:
    async with rig() as r:
        rid = await ask_colour(r.bridge)
        gone = await ask_colour(r.bridge)
        waiting = asyncio.create_task(r.handler.wait(rid))
        withdrawn = asyncio.create_task(r.handler.wait(gone))
        response = await r.client.post(
            f"/v1/requests/{rid}/reject", json={"reason": "ask the account holder"}, headers=AUTH
        )
        assert response.status_code == 200
        with pytest.raises(HumanInputRejectedError, match="ask the account holder"):
            await waiting
        await asyncio.sleep(0)
        withdrawn.cancel("the caller hung up")
        with pytest.raises(asyncio.CancelledError):
            await withdrawn
        await r.bridge.drain()
        late = await r.client.post(
            f"/v1/requests/{gone}/answer", json={"answer": "red"}, headers=AUTH
        )
        assert late.status_code == 409
        assert "already withdrawn" in late.json()["error"]["message"]
        shown = (await r.client.get(f"/v1/requests/{gone}", headers=AUTH)).json()["request"]
        assert shown["settled"]["detail"] == "the caller hung up"


async def test_the_openapi_document_is_served() -> None:
    async with rig() as r:
        document = (await r.client.get("/v1/openapi.json")).json()
        assert document["openapi"].startswith("3.")
        assert set(document["paths"]) >= {"/v1/requests", "/v1/requests/{id}/answer"}


async def test_request_ids_cannot_be_guessed_from_one_another() -> None:
    async with rig() as r:
        first, second = [await ask_colour(r.bridge) for _ in range(2)]
        head_a, _, secret_a = first.rpartition("_")
        head_b, _, secret_b = second.rpartition("_")
        # 64 random bits per request: knowing one id and the counter does not name the next
        assert len(secret_a) == len(secret_b) == 16 and secret_a != secret_b
        assert int(secret_a, 16) >= 0 and int(secret_b, 16) >= 0
        assert head_a != head_b
