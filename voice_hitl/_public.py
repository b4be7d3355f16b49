"""Shared by the packages' ``__init__`` modules: present objects under their public package."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["publish"]


def publish(package: str, namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` of the named objects defined in ``package``'s private modules to
    ``package``, so reprs and tracebacks show the public path."""
    for name in names:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith(f"{package}._"):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = package
