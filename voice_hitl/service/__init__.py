"""The operator service: answer requests from anywhere (extra ``server``).

``voice-hitl serve`` runs :func:`create_app` under uvicorn over a request board: a ``/v1`` HTTP
JSON API, a live feed (WebSocket, JSON-RPC 2.0, see :mod:`voice_hitl.service._rpc`), bearer
tokens per operator with room/channel scopes, and the web console at ``/``. The CLI client
(``voice-hitl pending / answer / reject``) talks to it over HTTP. The typed
operations live in :class:`OperatorDesk`, which the API, the feed and the CLI share.
:class:`Webhooks` POSTs signed request events to subscribed receivers, and
:class:`AnswerLinks` makes the one-time links that answer a request from a chat message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._public import publish
from ._auth import (
    OPERATORS_ENV,
    Operator,
    Operators,
    OperatorsError,
    load_operators,
    parse_operators,
)
from ._desk import OperatorDesk
from ._links import (
    LINK_KEY_ENV,
    AnswerLinks,
    LinkClaim,
    LinkError,
    LinkExpiredError,
    LinkInvalidError,
    LinkUsedError,
)
from ._openapi import openapi_document
from ._refusals import (
    BeingAnsweredError,
    BoardRebuildingError,
    BoardStateLostError,
    DeskError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
    NotRecordedError,
    NotTakenError,
    OutcomeUnknownError,
    SettledError,
    ShuttingDownError,
    UnauthorizedError,
)
from ._webhook_wire import (
    WebhookError,
    WebhookSignatureError,
    WebhookSubscription,
    parse_webhooks,
    sign_webhook,
    verify_webhook,
    webhook_event,
)
from ._webhooks import DeadLetter, Webhooks

if TYPE_CHECKING:
    from ._app import create_app

__all__ = [
    "LINK_KEY_ENV",
    "OPERATORS_ENV",
    "AnswerLinks",
    "BeingAnsweredError",
    "BoardRebuildingError",
    "BoardStateLostError",
    "DeadLetter",
    "DeskError",
    "ForbiddenError",
    "InvalidError",
    "LinkClaim",
    "LinkError",
    "LinkExpiredError",
    "LinkInvalidError",
    "LinkUsedError",
    "NotFoundError",
    "NotRecordedError",
    "NotTakenError",
    "Operator",
    "OperatorDesk",
    "Operators",
    "OperatorsError",
    "OutcomeUnknownError",
    "SettledError",
    "ShuttingDownError",
    "UnauthorizedError",
    "WebhookError",
    "WebhookSignatureError",
    "WebhookSubscription",
    "Webhooks",
    "create_app",
    "load_operators",
    "openapi_document",
    "parse_operators",
    "parse_webhooks",
    "sign_webhook",
    "verify_webhook",
    "webhook_event",
]


def __getattr__(name: str) -> Any:
    # The web framework is imported on first use, so the CLI client needs only httpx.
    if name == "create_app":
        from ._app import create_app

        create_app.__module__ = __name__
        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


publish(__name__, globals(), [n for n in __all__ if n != "create_app"])
