"""The OpenAPI paths of the routes in :mod:`._reach` (answer links, dead letters) and of the
service's own pages (the console, this document)."""

from __future__ import annotations

from typing import Any

__all__ = ["reach_paths"]


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json({"$ref": "#/components/schemas/Error"}, description)


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_TOKEN = {
    "name": "token",
    "in": "path",
    "required": True,
    "description": "The signed link token (``<payload>.<mac>``, base64url).",
    "schema": {"type": "string"},
}
_UNAUTHORIZED = _error("No or unknown bearer token.")
_NO_HOOKS = _error("The service has no webhooks (voice-hitl serve --webhooks FILE).")

_DEAD_LETTER = {
    "type": "object",
    "required": [
        "id", "subscription", "event_id", "type", "request_id", "room", "attempts", "error", "at"
    ],
    "properties": {
        "id": {"type": "string", "description": "``<event id>:<subscription>``."},
        "subscription": {"type": "string"},
        "event_id": {"type": "string"},
        "type": {
            "type": "string",
            "enum": ["request.opened", "request.settled", "request.escalated"],
        },
        "request_id": {"type": "string", "nullable": True},
        "room": {"type": "string", "nullable": True},
        "attempts": {"type": "integer"},
        "error": {"type": "string"},
        "at": {"type": "string", "format": "date-time"},
    },
}
_RETRIED = {
    "type": "object",
    "required": ["retried"],
    "properties": {
        "retried": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The dead letters queued again (same event id).",
        }
    },
}
_LINKS = {
    "type": "object",
    "required": ["holder", "expires_in", "links"],
    "properties": {
        "holder": {"type": "string", "description": "``<operator>`` or ``<operator>/<to>``."},
        "expires_in": {"type": "number", "description": "Seconds each link stays valid."},
        "links": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "``yes`` / ``no`` for a confirmation, one per choice id otherwise, "
            "and ``reject``; empty for typed answers (number, digits, text).",
        },
    },
}
_LINK_REFUSALS = {
    "400": _html("The link is not one this service made, or it was altered."),
    "404": _html("Answer links are off, or the request is gone."),
    "409": _html("The request was already settled: the link changed nothing."),
    "410": _html("The link was already used, or it expired."),
    "503": _html("The board cannot be reached; the link stays usable."),
}


def reach_paths() -> dict[str, Any]:
    """The paths of the console, this document, answer links and dead letters."""
    return {
        "/": {
            "get": {
                "operationId": "console",
                "summary": "The operator console (a page; it asks for a token).",
                "security": [],
                "responses": {"200": _html("The console.")},
            }
        },
        "/v1/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document.",
                "security": [],
                "responses": {"200": _json({"type": "object"}, "The OpenAPI document.")},
            }
        },
        "/v1/requests/{id}/links": {
            "post": {
                "operationId": "makeAnswerLinks",
                "summary": "One-time answer links for a message of your own (SMS, e-mail).",
                "parameters": [_ID],
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "to": {
                                        "type": "string",
                                        "pattern": "^[A-Za-z0-9._@+:-]{1,64}$",
                                        "description": "Who gets them (``sms:+33...``); "
                                        "the holder becomes ``<operator>/<to>``.",
                                    }
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": _json(_LINKS, "The links."),
                    "400": _error("The body is not JSON, nested too deep, or holds a lone "
                                  "surrogate."),
                    "401": _UNAUTHORIZED,
                    "404": _error("Unknown request id, outside your rooms and channels, or "
                                  "the service makes no answer links."),
                    "409": _error("Already answered, rejected, timed out, withdrawn or "
                                  "abandoned."),
                    "413": _error("The body is over 64 KiB."),
                    "422": _error("'to' is not 1-64 letters, digits or . _ @ + : -."),
                    "503": _error("The board is unreachable."),
                },
            }
        },
        "/v1/links/{token}": {
            "get": {
                "operationId": "openAnswerLink",
                "summary": "What the link will do, and a button (changes nothing).",
                "security": [],
                "parameters": [_TOKEN],
                "responses": {"200": _html("The request and the button."), **_LINK_REFUSALS},
            },
            "post": {
                "operationId": "useAnswerLink",
                "summary": "Answer or reject as the link says; each link works once.",
                "security": [],
                "parameters": [_TOKEN],
                "responses": {
                    "200": _html("Done: the call took the answer."),
                    **_LINK_REFUSALS,
                    "422": _html("The request's spec does not accept the link's answer."),
                    "503": _html("The board cannot be reached, or the call's worker did not "
                                 "take the answer in time; the link stays usable when the "
                                 "board could not be reached."),
                    "504": _html("Whether the call took the answer is not known yet."),
                },
            },
        },
        "/v1/webhooks/dead": {
            "get": {
                "operationId": "listDeadLetters",
                "summary": "Undelivered webhook events in your rooms and channels.",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "required": ["dead_letters"],
                            "properties": {
                                "dead_letters": {"type": "array", "items": _DEAD_LETTER}
                            },
                        },
                        "The dead letters, oldest first.",
                    ),
                    "401": _UNAUTHORIZED,
                    "404": _NO_HOOKS,
                },
            }
        },
        "/v1/webhooks/dead/retry": {
            "post": {
                "operationId": "retryDeadLetters",
                "summary": "Send every dead letter in your rooms and channels again.",
                "responses": {
                    "200": _json(_RETRIED, "The dead letters queued again."),
                    "401": _UNAUTHORIZED,
                    "404": _NO_HOOKS,
                },
            }
        },
        "/v1/webhooks/dead/{id}/retry": {
            "post": {
                "operationId": "retryDeadLetter",
                "summary": "Send one dead letter again (same event id).",
                "parameters": [_ID],
                "responses": {
                    "200": _json(_RETRIED, "Queued again."),
                    "401": _UNAUTHORIZED,
                    "404": _error("No such dead letter in your rooms and channels, or the "
                                  "service has no webhooks."),
                },
            }
        },
    }
