"""The JSON a spoken or keyed answer settles its request with."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..speech import Answer

__all__ = ["answer_json"]


def answer_json(
    answer: Answer, actor_id: str | None, evidence: Mapping[str, Any] | None = None
) -> str:
    """``{"answer", "choice_id", "transcript", "confidence", "via", "actor_id"}``, and
    ``"evidence"`` (how the answer was established) when given.

    ``transcript`` is the words as heard, or ``null`` when they are not known verbatim (a
    grammar recogniser's phrase is never reported as what the person said)."""
    body: dict[str, Any] = {
        "answer": answer.value,
        "choice_id": answer.choice_id,
        "transcript": answer.transcript or None,
        "confidence": round(answer.confidence, 3),
        "via": answer.via,
        "actor_id": actor_id,
    }
    if evidence is not None:
        body["evidence"] = dict(evidence)
    return json.dumps(body)
