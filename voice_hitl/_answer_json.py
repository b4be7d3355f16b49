"""The JSON a spoken or keyed answer settles its request with."""

from __future__ import annotations

import json

from .speech import Answer

__all__ = ["answer_json"]


def answer_json(answer: Answer, actor_id: str | None) -> str:
    """``{"answer", "choice_id", "transcript", "confidence", "via", "actor_id"}``."""
    return json.dumps(
        {
            "answer": answer.value,
            "choice_id": answer.choice_id,
            "transcript": answer.transcript,
            "confidence": round(answer.confidence, 3),
            "via": answer.via,
            "actor_id": actor_id,
        }
    )
