"""The operator API's OpenAPI 3.0 document (served at ``/v1/openapi.json``)."""

from __future__ import annotations

from typing import Any

from ._openapi_reach import reach_paths

__all__ = ["openapi_document"]

_NULLABLE_STRING = {"type": "string", "nullable": True}

_SETTLEMENT = {
    "type": "object",
    "required": ["status", "at", "by", "via", "text", "detail"],
    "properties": {
        "status": {
            "type": "string",
            "enum": ["answered", "rejected", "timed_out", "withdrawn", "abandoned"],
        },
        "at": {**_NULLABLE_STRING, "format": "date-time"},
        "by": _NULLABLE_STRING,
        "via": _NULLABLE_STRING,
        "text": {"type": "string", "description": "The answer's JSON, or the reason."},
        "detail": {"type": "string"},
    },
}

_REQUEST = {
    "type": "object",
    "required": ["id", "status", "tool", "arguments", "room", "channel", "worker", "created_at"],
    "properties": {
        "id": {"type": "string"},
        "status": {
            "type": "string",
            "enum": ["open", "answered", "rejected", "timed_out", "withdrawn", "abandoned"],
        },
        "tool": {"type": "string"},
        "arguments": {"type": "object"},
        "spec": {
            "type": "object",
            "nullable": True,
            "description": "The AnswerSpec: kind, question, choices, bounds, length.",
        },
        "room": {"type": "string"},
        "channel": {"type": "string"},
        "channel_type": {"type": "string"},
        "actor": _NULLABLE_STRING,
        "addressed": {"type": "array", "items": {"type": "string"}},
        "approvers": {"type": "array", "items": {"type": "string"}},
        "quorum": {"type": "integer", "nullable": True},
        "created_at": {"type": "string", "format": "date-time"},
        "deadline": {**_NULLABLE_STRING, "format": "date-time"},
        "worker": {"type": "string"},
        "transcript": {"type": "array", "items": {"type": "object"}},
        "settled": {"$ref": "#/components/schemas/Settlement"},
    },
}

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["status", "code", "message"],
            "properties": {
                "status": {"type": "integer"},
                "code": {"type": "string"},
                "message": {"type": "string"},
                "settled": {"$ref": "#/components/schemas/Settlement"},
                "claim": {"$ref": "#/components/schemas/Claim"},
                "retry_after": {"type": "integer"},
            },
        }
    },
}

_SESSION = {
    "type": "object",
    "required": ["session", "expires_at", "operator"],
    "properties": {
        "session": {"type": "string", "description": "vhs_...: the bearer token from now on."},
        "expires_at": {"type": "string", "format": "date-time"},
        "operator": {"type": "object"},
    },
}

_HEALTH = {
    "type": "object",
    "required": ["status", "answers_in_flight"],
    "properties": {
        "status": {"type": "string", "enum": ["ok", "draining"]},
        "answers_in_flight": {"type": "integer", "minimum": 0},
    },
}

_CLAIM = {
    "type": "object",
    "description": "being_answered: another operator's answer waiting for the call to take it.",
    "required": ["by", "via", "status", "until"],
    "properties": {
        "by": _NULLABLE_STRING,
        "via": _NULLABLE_STRING,
        "status": {"type": "string", "enum": ["answered", "rejected"]},
        "until": {
            "type": "string",
            "format": "date-time",
            "description": "When the claim lapses unless the call took it (then open again).",
        },
    },
}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _ok(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ONE = {
    "type": "object",
    "required": ["request"],
    "properties": {"request": {"$ref": "#/components/schemas/Request"}},
}
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "The same key (same operator) makes the answer or rejection once: a retry "
    "after a 503, a 504 or a timeout returns the first attempt's outcome.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
}
_AUTH_ERRORS = {"401": _error("No or unknown bearer token.")}
_SETTLE = {
    **_AUTH_ERRORS,
    "400": _error("The body is not JSON, nested too deep, or holds a lone surrogate."),
    "404": _error("Unknown request id, or outside your rooms and channels."),
    "409": _error(
        "already_settled (with settled): already answered, rejected, timed out, withdrawn or "
        "abandoned; or being_answered (with claim and Retry-After): another operator's answer "
        "is waiting for the call to take it, and the request is open again if it is not taken "
        "by claim.until."
    ),
    "410": _error(
        "board_state_lost: the board's Redis lost its state (restarted without persistence) "
        "and no worker put this id back; an earlier answer's outcome is unknown here."
    ),
    "413": _error("The body is over 64 KiB."),
    "422": _error("The body does not fit (e.g. an answer the request's spec does not accept)."),
    "503": _error(
        "shutting_down (with Retry-After): the service is stopping, nothing was tried. "
        "Not taken: the board is unreachable, or the call's worker did not take the answer in "
        "time (nothing was delivered); or board_rebuilding (with Retry-After): the board's "
        "Redis lost its state a moment ago and the workers are putting their requests back."
    ),
    "504": _error("Whether the call took the answer is not known yet: retry with the same key."),
}


_STORY = {
    "type": "object",
    "required": ["id", "entries"],
    "properties": {
        "id": {"type": "string"},
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["seq", "request_id", "at", "kind", "data", "prev", "digest"],
                "properties": {
                    "seq": {"type": "integer"},
                    "request_id": {"type": "string"},
                    "at": {"type": "string"},
                    "kind": {
                        "type": "string",
                        "description": "board, opened, notified, noted, settled or delivered.",
                    },
                    "data": {"type": "object"},
                    "prev": {"type": "string"},
                    "digest": {"type": "string"},
                },
            },
        },
    },
}


def _filter(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": {"type": "string"},
        "description": description,
    }


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of ``/v1``."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "voice-hitl operator API",
            "version": "1",
            "description": "Open human-input requests of every worker; answer or reject them.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Request": _REQUEST,
                "Settlement": _SETTLEMENT,
                "Claim": _CLAIM,
                "Error": _ERROR,
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/health": {
                "get": {
                    "operationId": "health",
                    "summary": "ok, or draining while the service stops (a rolling restart).",
                    "security": [],
                    "responses": {
                        "200": _ok(_HEALTH, "Taking answers."),
                        "503": _ok(_HEALTH, "Draining: answers are refused (shutting_down)."),
                    },
                }
            },
            "/v1/sessions": {
                "post": {
                    "operationId": "signIn",
                    "summary": "Sign in with an operator's token: a session id to use as the "
                    "bearer token until it expires or is signed out.",
                    "responses": {
                        "201": _ok(_SESSION, "The session (its id is shown once)."),
                        "401": _error("Not an operator's token (a session opens no other)."),
                    },
                }
            },
            "/v1/sessions/current": {
                "delete": {
                    "operationId": "signOut",
                    "summary": "Sign out: the session id of the Authorization header ends.",
                    "responses": {
                        "204": {"description": "Signed out (or it had ended already)."},
                        "401": _AUTH_ERRORS["401"],
                        "422": _error("An operator's token, not a session: rotate it instead."),
                    },
                }
            },
            "/v1/me": {
                "get": {
                    "operationId": "me",
                    "summary": "The operator the token belongs to, and its scopes.",
                    "responses": {
                        "200": _ok({"type": "object"}, "The operator."),
                        "401": _AUTH_ERRORS["401"],
                    },
                }
            },
            "/v1/requests": {
                "get": {
                    "operationId": "listRequests",
                    "summary": "Open requests the operator may see.",
                    "parameters": [
                        _filter("room", "Only this room."),
                        _filter("channel", "Only this channel."),
                        _filter("tool", "Only this tool."),
                        _filter("for", "Addressed to this person, or to nobody in particular."),
                    ],
                    "responses": {
                        "200": _ok(
                            {
                                "type": "object",
                                "required": ["requests"],
                                "properties": {
                                    "requests": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/Request"},
                                    }
                                },
                            },
                            "The open requests, oldest first.",
                        ),
                        "401": _AUTH_ERRORS["401"],
                    },
                }
            },
            "/v1/requests/{id}": {
                "get": {
                    "operationId": "getRequest",
                    "parameters": [_ID],
                    "responses": {
                        "200": _ok(_ONE, "The request, open or settled."),
                        **_AUTH_ERRORS,
                        "404": _error("Unknown request id, or outside your rooms and channels."),
                        "410": _SETTLE["410"],
                        "503": _error(
                            "The board is unreachable, or board_rebuilding (with Retry-After)."
                        ),
                    },
                }
            },
            "/v1/requests/{id}/story": {
                "get": {
                    "operationId": "getRequestStory",
                    "summary": "The request's journal entries, in order (its whole story).",
                    "parameters": [_ID],
                    "responses": {
                        "200": _ok(_STORY, "The story."),
                        **_AUTH_ERRORS,
                        "404": _error("No such request in the journal, or the journal is off."),
                    },
                }
            },
            "/v1/requests/{id}/answer": {
                "post": {
                    "operationId": "answerRequest",
                    "summary": "Answer; 200 only once the call took the answer.",
                    "parameters": [_ID, _KEY],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["answer"],
                                    "properties": {
                                        "answer": {
                                            "description": "A choice id or label, true/false "
                                            "or yes/no, a number, a digit string, or text."
                                        }
                                    },
                                }
                            }
                        },
                    },
                    "responses": {"200": _ok(_ONE, "Answered: the call took it."), **_SETTLE},
                }
            },
            "/v1/requests/{id}/reject": {
                "post": {
                    "operationId": "rejectRequest",
                    "summary": "Reject; 200 only once the call took the rejection.",
                    "parameters": [_ID, _KEY],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["reason"],
                                    "properties": {"reason": {"type": "string", "minLength": 1}},
                                }
                            }
                        },
                    },
                    "responses": {"200": _ok(_ONE, "Rejected: the call took it."), **_SETTLE},
                }
            },
            **reach_paths(),
        },
    }
