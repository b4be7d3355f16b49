"""The edge check: hostile text from a model, a caller or an operator gets a clear refusal,
never a 500, a dropped feed client, a dead board publisher or a RecursionError."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from board_rig import BACKENDS, make_board
from service_rig import ANN, ask_colour, rig

from voice_hitl import AITool, HumanInputHandler
from voice_hitl._edge import MAX_DEPTH, EdgeError, check_value, load_json, scrub
from voice_hitl._exceptions import ToolArgumentsError
from voice_hitl.board import BoardBridge, BoardStatus, RequestBoard
from voice_hitl.service._rpc import INVALID_REQUEST, RpcError, parse_message
from voice_hitl.tools._schema import parse_arguments

AUTH = {"Authorization": f"Bearer {ANN}"}
LONE = '"\\ud800"'  # JSON text of a string holding a lone surrogate


@pytest.fixture(params=BACKENDS)
async def board(request: pytest.FixtureRequest) -> AsyncIterator[RequestBoard]:
    made = await make_board(request.param, request)
    try:
        yield made
    finally:
        await made.aclose()


def test_the_edge_names_what_is_wrong() -> None:
    with pytest.raises(EdgeError, match=r"lone surrogate \(U\+D800\) at a/1"):
        check_value({"a": ["ok", "\ud800"]}, what="the arguments")
    with pytest.raises(EdgeError, match="nested deeper than 32 levels") as deep:
        load_json("[" * 30_000 + "]" * 30_000)
    assert deep.value.code == "invalid"
    with pytest.raises(EdgeError, match="limit is 65536") as big:
        load_json(json.dumps({"answer": "x" * 200_000}))
    assert big.value.code == "too_large"
    with pytest.raises(EdgeError, match="not valid UTF-8"):
        load_json(b'{"a": "\xff"}')
    nested: object = "leaf"
    for _ in range(MAX_DEPTH):
        nested = [nested]
    assert load_json(json.dumps(nested)) == nested  # the limit itself is accepted
    assert scrub({"q": ["a\ud800b"]}) == {"q": ["a\ufffdb"]}


def test_deep_or_broken_tool_arguments_get_a_clear_refusal() -> None:
    deep = '{"a": ' + "[" * 30_000 + "]" * 30_000 + "}"
    with pytest.raises(ToolArgumentsError, match="nested deeper than 32 levels"):
        parse_arguments("AskUserQuestion", deep)
    with pytest.raises(ToolArgumentsError, match="lone surrogate"):
        parse_arguments("AskUserQuestion", '{"question": ' + LONE + "}")
    with pytest.raises(ToolArgumentsError, match="lone surrogate"):
        parse_arguments("AskUserQuestion", {"question": "\ud800"})


async def test_the_gate_refuses_deep_arguments_instead_of_failing() -> None:
    from voice_hitl import ChannelType
    from voice_hitl.tools._calls import ToolCall
    from voice_hitl.tools._gate import ToolGate

    async def host(name: str, arguments: dict[str, object]) -> str:
        return "done"

    tool = AITool(name="lookup")
    gate = ToolGate("c", ChannelType.REALTIME_VOICE, tools=[tool], tool_handler=host)
    call = ToolCall("lookup", '{"q": ' + "[" * 5000 + "]" * 5000 + "}", "call-1")
    result = await gate.call(call)
    assert result.is_error
    assert "RecursionError" not in result.text
    assert "nested deeper than 32 levels" in result.text


async def test_http_refuses_hostile_bodies_with_a_clear_4xx() -> None:
    async with rig() as r:
        pending_id = await ask_colour(r.bridge)
        number = await r.handler.create(
            "AskUserQuestion", {"question": "How many?", "kind": "number"}, timeout=60
        )
        await r.bridge.drain()
        cases = [
            ("answer", pending_id, b'{"answer": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", 400),
            ("reject", pending_id, ('{"reason": ' + LONE + "}").encode(), 400),
            ("answer", number.pending_id, ('{"answer": ' + LONE + "}").encode(), 400),
            ("answer", pending_id, json.dumps({"answer": "x" * 70_000}).encode(), 413),
        ]
        for action, request_id, body, status in cases:
            response = await r.client.post(
                f"/v1/requests/{request_id}/{action}", content=body, headers=AUTH
            )
            assert response.status_code == status, response.text
            assert response.json()["error"]["message"]
        # nothing was settled by the refused bodies
        assert r.handler.get(pending_id).status == "pending"  # type: ignore[union-attr]


def test_the_feed_refuses_what_http_refuses_with_a_json_rpc_error() -> None:
    for text in (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "answer",
                "params": {"id": "x", "answer": "y" * 200_000},
            }
        ),
        '{"jsonrpc": "2.0", "id": 2, "method": "reject", "params": {"id": "x", "reason": '
        + LONE
        + "}}",
        '{"jsonrpc": "2.0", "id": 3, "method": "answer", "params": {"id": "x", "answer": '
        + "[" * 30_000
        + "]" * 30_000
        + "}}",
    ):
        parsed = parse_message(text)
        assert isinstance(parsed, RpcError), parsed
        assert parsed.code == INVALID_REQUEST
        json.loads(parsed.reply())  # a reply that can be sent
    too_big = parse_message("[" + " " * 70_000 + "]")
    assert isinstance(too_big, RpcError) and too_big.data == {"status": 413}


async def test_a_lone_surrogate_does_not_stop_the_board_publisher(board: RequestBoard) -> None:
    handler = HumanInputHandler()
    async with BoardBridge(handler, board, worker_id="w-edge") as bridge:
        bad = await handler.create(
            "AskUserQuestion", {"question": "Which \ud800 colour?"}, room_id="r", timeout=60
        )
        await bridge.drain()
        handler.reject(bad.pending_id, "no \ud800 thanks")
        await bridge.drain()
        after = await handler.create("AskUserQuestion", {"question": "Still there?"}, timeout=60)
        await bridge.drain()
        shown = await board.get(after.pending_id)
        assert shown is not None and shown.is_open
        settled = await board.get(bad.pending_id)
        assert settled is not None and settled.status is BoardStatus.REJECTED
        assert settled.text == "no \ufffd thanks"
        assert settled.arguments["question"] == "Which \ufffd colour?"
        assert bridge.failures == 0
        await handler.close()


async def test_surrogates_in_arguments_do_not_break_the_listing() -> None:
    async with rig() as r:
        await r.handler.create("AskUserQuestion", {"question": "Odd \udfff text"}, timeout=60)
        await r.bridge.drain()
        response = await r.client.get("/v1/requests", headers=AUTH)
        assert response.status_code == 200
        (request,) = response.json()["requests"]
        assert request["arguments"]["question"] == "Odd \ufffd text"

