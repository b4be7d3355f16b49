""":class:`OperatorClient`: the operator API from Python or a terminal (httpx, synchronous)."""

from __future__ import annotations

import builtins
from typing import Any

import httpx

__all__ = ["ClientError", "OperatorClient"]


class ClientError(Exception):
    """The service refused a call, or could not be reached (``status`` 0)."""

    def __init__(self, status: int, code: str, message: str, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.body = body


class OperatorClient:
    """Calls ``/v1`` of a running ``voice-hitl serve``.

    Args:
        url: The service, e.g. ``http://127.0.0.1:8765``.
        token: The operator's bearer token.
        timeout: Seconds per call.
        client_name: Recorded as the answer's ``via`` (``cli``, the default, or ``api``).
    """

    def __init__(
        self, url: str, token: str, *, timeout: float = 10.0, client_name: str = "cli"
    ) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "X-Voice-Hitl-Client": client_name},
            timeout=timeout,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> OperatorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ClientError(0, "unreachable", f"cannot reach {self.url}: {exc}") from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = body.get("error", {}) if isinstance(body, dict) else {}
            message = error.get("message") or f"HTTP {response.status_code}"
            raise ClientError(response.status_code, error.get("code", "error"), message, error)
        return body

    def list(self, **filters: str | None) -> list[dict[str, Any]]:
        """Open requests (filters ``room``, ``channel``, ``tool``, ``for_``)."""
        params = {k.rstrip("_"): v for k, v in filters.items() if v is not None}
        requests: list[dict[str, Any]] = self._call("GET", "/v1/requests", params=params)[
            "requests"
        ]
        return requests

    def get(self, request_id: str) -> dict[str, Any]:
        """One request."""
        found: dict[str, Any] = self._call("GET", f"/v1/requests/{request_id}")["request"]
        return found

    def answer(
        self, request_id: str, value: Any, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Answer a request; returns it settled (the call took the answer).

        With an ``idempotency_key``, calling again after an error or a timeout returns the
        first attempt's outcome instead of answering twice.
        """
        body = {"answer": value}
        settled: dict[str, Any] = self._call(
            "POST",
            f"/v1/requests/{request_id}/answer",
            json=body,
            headers=_key_header(idempotency_key),
        )["request"]
        return settled

    def reject(
        self, request_id: str, reason: str, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Reject a request; returns it settled (the call took the rejection)."""
        body = {"reason": reason}
        settled: dict[str, Any] = self._call(
            "POST",
            f"/v1/requests/{request_id}/reject",
            json=body,
            headers=_key_header(idempotency_key),
        )["request"]
        return settled

    def dead_letters(self) -> builtins.list[dict[str, Any]]:
        """Webhook events that were not delivered, in your rooms and channels."""
        body = self._call("GET", "/v1/webhooks/dead")
        letters: builtins.list[dict[str, Any]] = body["dead_letters"]
        return letters

    def retry_dead(self, dead_id: str | None = None) -> builtins.list[str]:
        """Send one dead letter again (or all of them, without ``dead_id``); returns their ids."""
        path = "/v1/webhooks/dead/" + ("retry" if dead_id is None else f"{dead_id}/retry")
        retried: builtins.list[str] = self._call("POST", path)["retried"]
        return retried

def _key_header(key: str | None) -> dict[str, str]:
    return {} if key is None else {"Idempotency-Key": key}
