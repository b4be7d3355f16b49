"""The live feed's JSON-RPC mapping, on JSON alone (no socket)."""

from __future__ import annotations

import json
import time

import pytest

from voice_hitl.board import (
    BoardEscalated,
    BoardOpened,
    BoardRequest,
    BoardSettled,
    BoardStatus,
)
from voice_hitl.service._rpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcCall,
    RpcError,
    error_reply,
    event_notification,
    parse_message,
    result_reply,
    snapshot_notification,
)

REQUEST = BoardRequest("hi_1", "ConfirmAction", {"action": "refund 20"}, "w", time.time())


def test_calls_are_read_with_their_params() -> None:
    call = parse_message(
        '{"jsonrpc": "2.0", "id": 7, "method": "answer", "params": {"id": "hi_1", "answer": true}}'
    )
    assert call == RpcCall(7, "answer", {"id": "hi_1", "answer": True})
    listed = parse_message(
        '{"jsonrpc": "2.0", "id": "a", "method": "list", "params": {"for": "x"}}'
    )
    assert listed == RpcCall("a", "list", {"for": "x"})
    assert parse_message('{"jsonrpc": "2.0", "id": 1, "method": "list"}') == RpcCall(1, "list", {})


@pytest.mark.parametrize(
    ("text", "code", "says", "reply_id"),
    [
        ("{oops", PARSE_ERROR, "not JSON", None),
        ("[]", INVALID_REQUEST, "batches", None),
        ('"answer"', INVALID_REQUEST, "JSON object", None),
        ('{"jsonrpc": "2.0", "id": true, "method": "list"}', INVALID_REQUEST, "'id'", None),
        ('{"jsonrpc": "1.0", "id": 3, "method": "list"}', INVALID_REQUEST, "jsonrpc", 3),
        ('{"jsonrpc": "2.0", "id": 3, "method": 5}', INVALID_REQUEST, "'method'", 3),
        ('{"jsonrpc": "2.0", "id": 3, "method": "approve"}', METHOD_NOT_FOUND, "approve", 3),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "answer", "params": []}',
            INVALID_PARAMS,
            "object",
            3,
        ),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "answer", "params": {"id": "x"}}',
            INVALID_PARAMS,
            "'answer'",
            3,
        ),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "reject", "params": {"id": ""}}',
            INVALID_PARAMS,
            "request id",
            3,
        ),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "reject", "params": {"id": "x"}}',
            INVALID_PARAMS,
            "'reason'",
            3,
        ),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "list", "params": {"room": 1}}',
            INVALID_PARAMS,
            "'room'",
            3,
        ),
    ],
)
def test_malformed_messages_get_the_standard_errors(
    text: str, code: int, says: str, reply_id: object
) -> None:
    error = parse_message(text)
    assert isinstance(error, RpcError)
    assert error.code == code and says in error.message
    reply = json.loads(error.reply())
    assert reply == {
        "jsonrpc": "2.0",
        "id": reply_id,
        "error": {"code": code, "message": error.message},
    }


def test_replies() -> None:
    assert json.loads(result_reply(1, {"ok": True})) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"ok": True},
    }
    refused = json.loads(error_reply("x", 409, "already answered", {"code": "already_settled"}))
    assert refused["error"] == {
        "code": 409,
        "message": "already answered",
        "data": {"code": "already_settled"},
    }


@pytest.mark.parametrize(
    ("status", "method"),
    [
        (BoardStatus.ANSWERED, "request.settled"),
        (BoardStatus.REJECTED, "request.settled"),
        (BoardStatus.WITHDRAWN, "request.withdrawn"),
        (BoardStatus.TIMED_OUT, "request.withdrawn"),
        (BoardStatus.ABANDONED, "request.withdrawn"),
    ],
)
def test_board_events_become_notifications(status: BoardStatus, method: str) -> None:
    opened = json.loads(event_notification(BoardOpened(REQUEST)))
    assert opened["method"] == "request.opened" and "id" not in opened
    assert opened["params"]["request"]["arguments"] == {"action": "refund 20"}
    settled = REQUEST.settled(status, "why", time.time(), "ann", "api", "hung up")
    message = json.loads(event_notification(BoardSettled(settled)))
    assert message["method"] == method
    assert message["params"]["request"]["settled"]["status"] == str(status)
    assert message["params"]["request"]["settled"]["by"] == "ann"


def test_an_escalation_is_its_own_notification_and_journal_entry() -> None:
    """An open request's escalation is neither settled nor withdrawn (the feed's and the
    journal's settled branches would have said it was)."""
    from voice_hitl.service._story import board_entry

    event = BoardEscalated(REQUEST, {"to": ["sup"], "remaining": 5.0})
    message = json.loads(event_notification(event))
    assert message["method"] == "request.escalated"
    assert message["params"]["escalation"] == {"to": ["sup"], "remaining": 5.0}
    assert message["params"]["request"]["status"] == "open"
    request_id, data = board_entry(event)
    assert (request_id, data["event"], data["escalation"]) == (
        "hi_1",
        "escalated",
        {"to": ["sup"], "remaining": 5.0},
    )


def test_snapshot() -> None:
    message = json.loads(snapshot_notification([REQUEST]))
    assert message["method"] == "requests.snapshot"
    assert [r["id"] for r in message["params"]["requests"]] == ["hi_1"]
