"""A griffe extension for the site's reference: the reST left in docstrings, as Markdown.

The docstrings are Google style, but many name other objects with Sphinx roles
(``:class:`~voice_hitl.ToolGate```) and open literal blocks with ``::``. mkdocstrings renders
Markdown, where both show as stray punctuation. This rewrites them in the loaded docstrings
only (the source is untouched): a role becomes a code span of its target (the last component
for ``~``, the title for ``title <target>``), and a paragraph ending in ``::`` ends in ``:``
(the indented block after it is already a Markdown code block).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|exc|data|obj|const):`(?P<body>[^`]+)`")
LITERAL = re.compile(r"(?<=\S)::$", re.M)
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>")


def _role(match: re.Match[str]) -> str:
    body = match.group("body").strip()
    titled = TITLED.fullmatch(body)
    if titled:
        return f"`{titled.group('title')}`"
    if body.startswith("~"):
        body = body[1:].rsplit(".", 1)[-1]
    return f"`{body.lstrip('.')}`"


def markdown_of(text: str) -> str:
    """The docstring text with its Sphinx roles and ``::`` literal markers as Markdown."""
    return LITERAL.sub(":", ROLE.sub(_role, text))


class RestToMarkdown(griffe.Extension):
    """Rewrites each loaded object's docstring (see the module docstring)."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
