"""No import cycle among the package's modules, lazy imports included, and no import from a
layer to a higher one.

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

The same imports are held to the layers of docs/architecture.md, read from its table ("The
layers, from the bottom"), so that the page stays the one statement of them: every module
belongs to one layer, and imports only from its own layer and those below. A cycle is the
worst of what an upward import brings; the others are a low module that cannot be read,
tested or reused without what sits above it (the registry reaching into the agents, an agent
into a game's declaration).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


def imports(name: str, path: Path, known: dict[str, Path]):
    """Each import of module ``name`` (at ``path``) of a module among ``known``, as the pair
    (that module, the import statement that names it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
            ]
        for target in targets:
            if target in known and target != name:
                yield target, node


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules among ``known`` that module ``name`` (at ``path``) imports."""
    return {target for target, _ in imports(name, path, known)}


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


ARCHITECTURE = Path("docs") / "architecture.md"
LAYER_TABLE = "## The layers, from the bottom"
PLACEHOLDER = re.compile(r"<\w+>")


def layer_table(text: str) -> list[tuple[str, list[str]]]:
    """Each row of the table under ``LAYER_TABLE`` in ``text``, bottom first, as the layer's
    name and the paths its Modules column names.

    Every code span in that column is a path in the repository: a module, or a folder (ending
    in ``/``) standing for every module under it. A path that does not start with a package's
    folder continues the folder of the last one in its row that does (``hiddenhand/validation.py``,
    ``files.py``), and ``<game>`` (any ``<word>``) stands for any name.
    """
    section = text.split(LAYER_TABLE + "\n", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.lstrip().startswith("|")]
    header, _rule, *body = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    table = []
    for row in body:
        layer, cell = row[header.index("Layer")], row[header.index("Modules")]
        paths, folder = [], None
        for span in re.findall(r"`([^`]+)`", cell):
            if not span.endswith(("/", ".py")):
                raise ValueError(f"the {layer} layer's {span!r} is neither a module (.py) nor a folder (/)")
            if span.startswith(tuple(f"{root}/" for root in ROOTS.values())):
                folder = span if span.endswith("/") else span.rpartition("/")[0] + "/"
            elif folder is None:
                raise ValueError(f"the {layer} layer's {span!r} comes before any path it could continue")
            else:
                span = folder + span
            paths.append(span)
        table.append((layer, paths))
    return table


def _matches(pattern: str, path: str) -> bool:
    regex = r"\w+".join(re.escape(part) for part in PLACEHOLDER.split(pattern))
    return re.fullmatch(regex + (".*" if pattern.endswith("/") else ""), path) is not None


def placement(table: list[tuple[str, list[str]]], files: dict[str, str]) -> tuple[dict[str, int], list[str]]:
    """The layer (its row in ``table``) of every module of ``files`` (dotted name to path from
    the repository's root), by the most specific path that matches it, the one with the most
    characters besides placeholders; and what is wrong with the table: a module that no path
    matches, or that two layers' paths match equally, and a path that matches no module."""
    layer_of, problems, used = {}, [], set()
    for name, path in sorted(files.items()):
        found = [
            (len(PLACEHOLDER.sub("", pattern)), row, pattern)
            for row, (_, patterns) in enumerate(table)
            for pattern in patterns
            if _matches(pattern, path)
        ]
        if not found:
            problems.append(f"{path} is in no layer")
            continue
        best = max(length for length, _, _ in found)
        rows = sorted({row for length, row, _ in found if length == best})
        used |= {pattern for length, _, pattern in found if length == best}
        if len(rows) > 1:
            problems.append(f"{path} is in two layers: {' and '.join(table[row][0] for row in rows)}")
        layer_of[name] = rows[0]
    problems += [
        f"the {layer} layer's {pattern} matches no module"
        for layer, patterns in table
        for pattern in patterns
        if pattern not in used
    ]
    return layer_of, problems


def upward_imports(repository: Path = REPOSITORY) -> tuple[list[str], list[str]]:
    """Every import from a module to one in a layer above its own, in the layers of the
    table in ``docs/architecture.md`` of ``repository``, each named with its place, the
    statement and both layers; and what is wrong with the table (see :func:`placement`)."""
    table = layer_table((repository / ARCHITECTURE).read_text())
    known = modules(repository)
    files = {name: path.relative_to(repository).as_posix() for name, path in known.items()}
    layer_of, problems = placement(table, files)
    upward = []
    for name, path in known.items():
        for target, node in imports(name, path, known):
            if name in layer_of and target in layer_of and layer_of[target] > layer_of[name]:
                upward.append(
                    f"{files[name]}:{node.lineno} {ast.unparse(node)}: {name} ({table[layer_of[name]][0]}) "
                    f"imports {target} ({table[layer_of[target]][0]})"
                )
    return sorted(upward), problems


def test_the_layer_check_names_an_upward_import(tmp_path):
    """The check itself, on a made-up repository: the most specific path places a module (a
    game's declaration above its rules engine); an import from a lower layer to a higher one
    fails, a lazy one too, naming the module, the import and both layers; a downward import
    and one under ``TYPE_CHECKING`` pass; a module the table leaves out or places in two
    layers, and a path that matches nothing, are named."""
    (tmp_path / "docs").mkdir()
    (tmp_path / ARCHITECTURE).write_text(
        "# Architecture\n\n" + LAYER_TABLE + "\n\nText | with a bar.\n\n"
        "| Layer | Modules | What it holds |\n|---|---|---|\n"
        "| Core | `hiddenhand/core.py`, `typed.py`, `both.py` | the protocol |\n"
        "| Rules | `envs/<game>.py`, `envs/__init__.py`, `hiddenhand/both.py` | engines |\n"
        "| Agents | `agents/` | agents |\n"
        "| Declarations | `envs/<game>_v0.py`, `hiddenhand/gone.py` | games |\n\n"
        "## Next\n\n| Other | `training/` | |\n"
    )
    for folder in ("hiddenhand", "envs", "agents", "training"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "hiddenhand" / "core.py").write_text("def f():\n    from hiddenhand.envs import game\n")
    (tmp_path / "hiddenhand" / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hiddenhand.agents import base\n"
    )
    (tmp_path / "hiddenhand" / "both.py").write_text("")
    (tmp_path / "envs" / "game.py").write_text("from hiddenhand import core\n")
    (tmp_path / "envs" / "game_v0.py").write_text("from .game import x\nfrom hiddenhand.agents.base import A\n")
    (tmp_path / "agents" / "base.py").write_text("from hiddenhand.envs.game_v0 import LEVELS\n")
    upward, problems = upward_imports(tmp_path)
    assert upward == [
        "agents/base.py:1 from hiddenhand.envs.game_v0 import LEVELS: hiddenhand.agents.base (Agents) "
        "imports hiddenhand.envs.game_v0 (Declarations)",
        "hiddenhand/core.py:2 from hiddenhand.envs import game: hiddenhand.core (Core) "
        "imports hiddenhand.envs.game (Rules)",
    ]
    assert problems == [
        "hiddenhand/__init__.py is in no layer",
        "hiddenhand/both.py is in two layers: Core and Rules",
        "training/__init__.py is in no layer",
        "the Declarations layer's hiddenhand/gone.py matches no module",
    ]


def test_the_layer_table_names_only_paths():
    """A code span in the Modules column that is not a module or a folder (a command, a
    class) is refused rather than read as a path that matches nothing."""
    text = LAYER_TABLE + "\n\n| Layer | Modules |\n|---|---|\n| Command line | `hiddenhand/cli/`, `hiddenhand play` |\n"
    with pytest.raises(ValueError, match="the Command line layer's 'hiddenhand play' is neither"):
        layer_table(text)


def test_imports_run_down_the_layers():
    """Every module imports only modules of its own layer or below, in the table of
    docs/architecture.md, which places every module exactly once."""
    upward, problems = upward_imports()
    report = []
    if problems:
        report += ["the layer table of docs/architecture.md:", *problems]
    if upward:
        report += ["imports from a layer to one above it (docs/architecture.md):", *upward]
    assert not report, "\n".join(report)
