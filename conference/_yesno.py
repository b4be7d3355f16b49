"""A tiny reader of spoken yes/no answers (a stopgap until the speech module is wired)."""

from __future__ import annotations

import re

__all__ = ["read_yes_no"]

_YES = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "ok",
        "okay",
        "approve",
        "approved",
        "agree",
        "agreed",
        "confirm",
        "confirmed",
        "affirmative",
        "correct",
        "absolutely",
        "granted",
    ]
)
_NO = frozenset(
    [
        "no",
        "nope",
        "nah",
        "deny",
        "denied",
        "reject",
        "rejected",
        "refuse",
        "negative",
        "veto",
        "decline",
    ]
)
_NEGATORS = frozenset(["not", "don't", "dont", "never"])
_PHRASES_YES = ("go ahead", "sounds good", "do it")
_WORD = re.compile(r"[a-z']+")


def read_yes_no(text: str) -> bool | None:
    """True for a yes, False for a no, None when the utterance is neither or both.

    A negated yes ("I do not approve") reads as no; "no ... yes" without a negator is
    ambiguous and reads as None.
    """
    lowered = text.casefold()
    words = _WORD.findall(lowered)
    yes = any(w in _YES for w in words) or any(p in lowered for p in _PHRASES_YES)
    no = any(w in _NO for w in words)
    negated = any(w in _NEGATORS for w in words)
    if yes and negated and not no:
        return False
    if yes and not no:
        return True
    if no and not yes:
        return False
    return None
