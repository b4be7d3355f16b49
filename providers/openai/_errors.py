"""Which OpenAI Realtime errors end a session: no retry or reconnect can fix them."""

from __future__ import annotations

__all__ = ["FATAL_CODES", "FATAL_TYPES", "is_fatal"]

FATAL_CODES = frozenset(
    {
        "invalid_api_key",
        "insufficient_quota",
        "account_deactivated",
        "billing_hard_limit_reached",
        "billing_not_active",
        "model_not_found",
        "unsupported_country_region_territory",
        "organization_deactivated",
    }
)
"""Error codes about the account, key or model: the session cannot go on."""

FATAL_TYPES = frozenset({"authentication_error", "permission_error", "insufficient_quota"})
"""Error types that mean the same, whatever their code."""


def is_fatal(code: str | None, kind: str | None) -> bool:
    """True when an error with this ``code`` and ``type`` ends the session."""
    return (code is not None and code in FATAL_CODES) or (kind is not None and kind in FATAL_TYPES)
