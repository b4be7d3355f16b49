"""Reading a spoken approval: the speech module's yes/no understanding, nothing of its own."""

from __future__ import annotations

from voice_hitl.speech import Answer, AnswerSpec, understand
from voice_hitl.speech._text import tokens
from voice_hitl.tools._approval_policy import asks_always

__all__ = ["read_yes_no", "says_always"]

_YES_OR_NO = AnswerSpec.confirm("approve?", default=None)


def read_yes_no(text: str) -> bool | None:
    """True for a yes ("I approve"), False for a no ("deny", "I do not approve"), None when
    the utterance is neither, both, hedged or empty (the same rules as any confirm question,
    so a negated yes never reads as yes)."""
    understood = understand(text, _YES_OR_NO)
    return (
        understood.value
        if isinstance(understood, Answer) and isinstance(understood.value, bool)
        else None
    )


def says_always(text: str) -> bool:
    """True when an approver's yes asks for "always" unambiguously ("approve always", as the
    question offers; not "yes, but not always")."""
    return asks_always(tokens(text))
