"""The site's reference renders every public name: each name in the ``__all__`` of every public
module of ``voice_hitl``, ``providers`` and ``conference`` (no path component starting with
``_``) has a ``::: module.name`` directive on a page under ``docs/reference/``, and every
directive names something that exists. ``mkdocs build --strict`` (``.ci/run``) then renders
them and fails on a docstring or a reference it cannot resolve.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
PACKAGES = ("voice_hitl", "providers", "conference")
DIRECTIVE = re.compile(r"^::: (?P<target>[\w.]+)\s*$", re.M)


def public_modules() -> list[str]:
    """Every module of the packages whose dotted name has no private part."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if not any(part.startswith("_") for part in parts):
                found.append(".".join(parts))
    return found


def directives() -> dict[str, str]:
    """Each ``:::`` target, with the page it is on."""
    found: dict[str, str] = {}
    for page in sorted(REFERENCE.rglob("*.md")):
        for match in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            found[match.group("target")] = str(page.relative_to(ROOT))
    return found


DIRECTIVES = directives()
MODULES = public_modules()


def _page_for(module: str) -> str:
    """Where a new name of ``module`` goes: the page already rendering that module's names."""
    pages = sorted({page for target, page in DIRECTIVES.items() if target.startswith(module + ".")})
    if module == "voice_hitl":
        return "the page of its group under docs/reference/voice_hitl/ (human, tools, voice, ...)"
    if pages:
        return " or ".join(pages)
    return "a new page under docs/reference/ (and the nav in mkdocs.yml)"


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_is_on_a_reference_page(module: str) -> None:
    exported = getattr(importlib.import_module(module), "__all__", [])
    missing = [name for name in exported if f"{module}.{name}" not in DIRECTIVES]
    lines = "\n".join(f"::: {module}.{name}" for name in missing)
    assert not missing, (
        f"{module} exports names no reference page renders; add to {_page_for(module)}:\n{lines}"
    )


def test_every_directive_names_an_exported_object() -> None:
    stale = []
    for target, page in sorted(DIRECTIVES.items()):
        module, _, name = target.rpartition(".")
        if name not in getattr(importlib.import_module(module), "__all__", []):
            stale.append(f"{page}: ::: {target}")
    assert not stale, "directives naming nothing the module exports:\n" + "\n".join(stale)


def test_the_reference_is_found() -> None:
    assert {"voice_hitl", "providers.base", "conference.janus"} <= set(MODULES)
    assert len(DIRECTIVES) > 400, len(DIRECTIVES)
