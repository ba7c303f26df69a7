"""No import cycle among the package's modules, lazy imports included.

A cycle is what a lazy import inside a function usually hides: two modules that each need
the other work only while one of them defers its import, and the next edit that moves an
import to the top (or a tool that imports eagerly) breaks it. Layers whose imports only run
downwards (docs/architecture.md) have none, and this test keeps it so: it reads every module
of ``hiddenhand/``, ``envs/``, ``agents/`` and ``training/`` with :mod:`ast` (nothing is
imported), takes every ``import`` and ``from ... import`` in it, at the top or inside a
function, and fails on any cycle among them, naming it.

Imports under ``if TYPE_CHECKING:`` are left out: they never run, so they cannot make a
cycle (they serve annotations only). ``from package import name`` counts as an import of the
submodule ``package.name`` when there is one, else of the package itself. Importing a
submodule is an edge to that submodule alone, not to the packages above it, as Python
initialises a package before its submodules and a submodule's import of a sibling does not
run the package's ``__init__`` again.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
ROOTS = {
    "hiddenhand": "hiddenhand",
    "hiddenhand.envs": "envs",
    "hiddenhand.agents": "agents",
    "hiddenhand.training": "training",
}


def modules(repository: Path = REPOSITORY) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__.py``)."""
    found = {}
    for name, folder in ROOTS.items():
        for path in sorted((repository / folder).rglob("*.py")):
            parts = path.relative_to(repository / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((name, *parts))] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Every Import and ImportFrom node of ``tree``, at any depth, except under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            for other in node.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules among ``known`` that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
            ]
        out |= {target for target in targets if target in known and target != name}
    return out


def graph(repository: Path = REPOSITORY) -> dict[str, set[str]]:
    known = modules(repository)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """For each strongly connected component of more than one module (Tarjan's algorithm):
    one shortest cycle through it (a breadth-first search inside the component), as a list of
    modules whose last imports the first, and every module of the component, sorted; the
    list sorted too, so the message is the same every run."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    found = []
    for component in components:
        start = min(component)
        parents, frontier = {start: None}, [start]
        while start not in [n for f in frontier for n in edges[f]]:
            step = []
            for node in frontier:
                for nxt in sorted(edges[node] & component):
                    if nxt not in parents:
                        parents[nxt] = node
                        step.append(nxt)
            frontier = step
        last = next(f for f in frontier if start in edges[f])
        path = [last]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])
        found.append((path[::-1], sorted(component)))
    return sorted(found)


def test_the_finder_names_a_cycle_and_passes_a_tree(tmp_path):
    """The finder itself, on a made-up package: a lazy import inside a function closes a
    cycle it reports; a ``TYPE_CHECKING`` import and a downward one do not."""
    folder = tmp_path / "hiddenhand"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "low.py").write_text("def f():\n    from hiddenhand import high\n")
    (folder / "high.py").write_text("from hiddenhand.low import f\n")
    (folder / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import low\nif TYPE_CHECKING:\n    from hiddenhand import typed2\n"
    )
    (folder / "typed2.py").write_text("from hiddenhand import typed\n")
    for other in ("envs", "agents", "training"):
        (tmp_path / other).mkdir()
    edges = graph(tmp_path)
    assert edges["hiddenhand.typed"] == {"hiddenhand.low"}
    assert cycles(edges) == [(["hiddenhand.high", "hiddenhand.low"], ["hiddenhand.high", "hiddenhand.low"])]


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles (each module imports the next, the last the first):\n" + "\n".join(
        " -> ".join([*cycle, cycle[0]])
        + (f" (one of the cycles among {', '.join(knot)})" if len(knot) > len(cycle) else "")
        for cycle, knot in found
    )
