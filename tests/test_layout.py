"""The layout's two rules, read from the source with ``ast`` (nothing is imported to check them).

1. The core does not import the applications above it: no module of ``voice_hitl`` outside
   ``voice_hitl.demo`` imports ``providers`` or ``conference`` at run time, at module level or
   inside a function. Imports under ``if TYPE_CHECKING:`` are allowed (they never run).
2. No import circle: the graph of run-time imports between the modules of ``voice_hitl``,
   ``providers`` and ``conference`` has no cycle through a ``voice_hitl`` module. An edge is any
   import that can run: module level, inside a function (a deferred import still closes a
   circle when it runs), and a package's lazy names (the ``_LAZY`` map of its ``__init__``,
   what its ``__getattr__`` imports). ``if TYPE_CHECKING:`` imports are not edges.
   ``from pkg import x`` is an edge to ``pkg.x`` when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("voice_hitl", "providers", "conference")
APPLICATIONS = ("providers", "conference")
DEMO = "voice_hitl.demo"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _runtime_imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def _targets(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]
) -> Iterator[str]:
    """The modules the statement ``node`` in ``module`` loads (absolute names)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base_parts = package[: len(package) - (node.level - 1)]
        base = ".".join([*base_parts, *(node.module.split(".") if node.module else [])])
    else:
        base = node.module or ""
    subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
    yield from subs
    if len(subs) < len(node.names):
        yield base


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _runtime_imports(tree):
            for target in _targets(name, path.name == "__init__.py", node, known):
                if target in known and target != name:
                    graph[name].add(target)
    # the lazy names of a package (``_LAZY`` in its ``__init__``): what its ``__getattr__``
    # imports on first use
    for name, path in modules.items():
        if path.name != "__init__.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.AnnAssign | ast.Assign) or not isinstance(
                node.value, ast.Dict
            ):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
                for value in node.value.values:
                    assert isinstance(value, ast.Constant) and isinstance(value.value, str)
                    target = value.value
                    if target not in known:  # a map relative to its package ("_interface")
                        target = f"{name}.{target.lstrip('.')}"
                    assert target in known, f"{name}._LAZY names no module {value.value!r}"
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return components


def test_the_core_does_not_import_providers_or_conference() -> None:
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("voice_hitl") or name == DEMO or name.startswith(DEMO + "."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _runtime_imports(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if not node.level
                else []
            )
            for target in names:
                if target.split(".")[0] in APPLICATIONS:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {target}")
    assert not offenders, "only voice_hitl.demo may import providers or conference:\n" + "\n".join(
        offenders
    )


def test_no_runtime_import_circle_through_voice_hitl() -> None:
    circles = [c for c in _cycles(_graph()) if any(m.startswith("voice_hitl") for m in c)]
    assert not circles, "run-time import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_checks_see_a_circle_and_a_forbidden_import() -> None:
    """The checks themselves: a circle and a deferred import of providers are found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import providers\n"
        "def f():\n    from conference import X\n"
    )
    found = [
        node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
        for node in _runtime_imports(ast.parse(source))
    ]
    assert found == ["typing", "conference"]
