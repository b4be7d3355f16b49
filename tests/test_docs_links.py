"""README.md's links into the site point at pages that exist, and at headings those pages have.

``mkdocs build --strict`` (``.ci/run``) checks the links between the site's own pages; the
README is not a page of the site, so its links are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (?P<title>.+?)\s*(\{#(?P<id>[\w-]+)\})?\s*$", re.M)


def slug(title: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading (its default slugify)."""
    text = re.sub(r"[^\w\s-]", "", title.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {m.group("id") or slug(m.group("title")) for m in HEADING.finditer(text)}


def readme_links() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [m.group("target") for m in LINK.finditer(re.sub(r"```.*?```", "", text, flags=re.S))]


def test_readme_links_resolve() -> None:
    links = [link for link in readme_links() if "://" not in link]
    assert len(links) >= 20, links
    broken = []
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        if not target.is_file():
            broken.append(f"{link}: no file {path}")
        elif anchor and anchor not in anchors(target):
            broken.append(f"{link}: {path} has no heading #{anchor}")
    assert not broken, broken


def test_slug_matches_the_toc_extension() -> None:
    assert slug("The demo") == "the-demo"
    assert slug("Keypad only") == "keypad-only"
    assert slug("`voice-hitl serve`") == "voice-hitl-serve"
    assert "the-demo" in anchors(ROOT / "docs" / "getting-started.md")
