"""Ready-made definitions of the usual human-input tools.

``AskUserQuestion`` and ``ConfirmAction`` as the model sees them; their arguments map onto an
``AnswerSpec`` (``voice_hitl.speech.AnswerSpec.from_tool_call``). In a conference, ``ask``
addresses a question and ``approvers`` + ``quorum`` make a confirmation a quorum approval.
"""

from __future__ import annotations

from ..tools._tools import AITool

__all__ = ["ASK_USER_QUESTION", "CONFIRM_ACTION"]

ASK_USER_QUESTION = AITool(
    name="AskUserQuestion",
    description="Ask a person a question and wait for the answer.",
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, as it is spoken."},
            "choices": {"type": "array", "items": {"type": "string"}},
            "mode": {"enum": ["confirm", "choices", "number", "digits", "free_text"]},
            "ask": {"type": "string", "description": "Who must answer (a conference)."},
        },
        "required": ["question"],
        "additionalProperties": False,
    },
)

CONFIRM_ACTION = AITool(
    name="ConfirmAction",
    description="Have a person confirm an action before it is done.",
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "description": "What will be done."},
            "approvers": {"type": "array", "items": {"type": "string"}},
            "quorum": {"type": "integer", "minimum": 1},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    risk="high",
)
