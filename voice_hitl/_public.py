"""Shared by the packages' ``__init__`` modules: present objects under their public package."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["is_private_to", "lazy_attributes", "publish"]


def publish(package: str, namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` of the named objects defined in ``package``'s private modules to
    ``package``, so reprs and tracebacks show the public path.

    A private module is one named ``_x`` in the package, or in one of its layout subpackages
    (``voice_hitl.tools._gate``); an object of a public subpackage keeps its own module.
    """
    for name in names:
        obj = namespace[name]
        owner = getattr(obj, "__module__", None)
        if isinstance(owner, str) and is_private_to(owner, package):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = package


def is_private_to(module: str, package: str) -> bool:
    """True when ``module`` is a private module of ``package``: ``package._x``, or
    ``package.sub._x`` where ``sub`` is a layout subpackage (one whose module is private)."""
    if not module.startswith(package + "."):
        return False
    parts = module[len(package) + 1 :].split(".")
    return parts[0].startswith("_") or (len(parts) == 2 and parts[1].startswith("_"))


def lazy_attributes(
    package: str, namespace: MutableMapping[str, Any], lazy: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    ``lazy`` maps each such name to the module that defines it. The first access imports the
    module, presents the object under ``package`` when a private module of the library defines
    it (as :func:`publish` does; ``voice_hitl.recording`` re-exports the replays of
    ``voice_hitl.demo``) and keeps it in ``namespace``, so later accesses are plain attribute
    reads. Assign them under
    ``if not TYPE_CHECKING:`` so type checkers see only the names imported for them.
    """

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        owner = getattr(value, "__module__", None)
        if isinstance(owner, str) and _private_in_library(owner, package):
            with contextlib.suppress(AttributeError, TypeError):
                value.__module__ = package
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return __getattr__, __dir__


def _private_in_library(module: str, package: str) -> bool:
    root = package.split(".")[0]
    return module.startswith(root + ".") and any(p.startswith("_") for p in module.split("."))
