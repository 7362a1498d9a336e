"""The import graph of ``bpeds``: no cycles, and the layers of docs/architecture.md.

Every module under ``bpeds/`` is parsed with :mod:`ast` (nothing is imported)
and its whole tree is read: imports at module level, under ``if
TYPE_CHECKING:``, and inside functions, methods and class bodies alike. An
edge ``a -> b`` means module ``a`` imports ``bpeds`` module ``b``: ``import
bpeds.b``, ``from bpeds.b import x``, ``from bpeds import b`` (``b`` a
submodule) and ``from bpeds import x`` (``x`` a name of the package, an edge
to ``bpeds`` itself). Parent packages are not edges (importing
``bpeds.scoring.base`` runs ``bpeds/__init__.py``, which imports nearly
everything, so counting that would make every module part of a cycle).

Each edge has a kind: ``module`` (runs when ``a`` is imported), ``typing``
(under ``if TYPE_CHECKING:``) and ``function`` (inside a function: runs when it
is called). The checks count all three, with no exemption: an import that
goes up the layers or closes a cycle fails whether it runs at import time,
lazily or only for the type checker.

The applications (``bpeds.comparison``, ``bpeds.cli``) are built on the public
API: they import no name starting with ``_`` from another module.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent / "bpeds"


class Edge(NamedTuple):
    source: str
    target: str
    kind: str  # "module", "typing" or "function"
    line: int


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """Every module under ``root`` (a package directory), by dotted name."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    node: ast.Import | ast.ImportFrom, name: str, is_package: bool, modules: Mapping[str, Path]
) -> list[str]:
    """The package modules one import statement of module ``name`` names."""
    top = next(iter(modules)).split(".")[0]
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            package = ".".join([*base, *([node.module] if node.module else [])])
        else:
            package = node.module or ""
        targets = []
        for alias in node.names:
            sub = f"{package}.{alias.name}"
            targets.append(sub if sub in modules else package)
    out = []
    for t in targets:
        if t != top and not t.startswith(top + "."):
            continue
        while t not in modules and "." in t:  # `import bpeds.x.attr`-like forms
            t = t.rsplit(".", 1)[0]
        out.append(t)
    return out


def import_edges(modules: Mapping[str, Path]) -> list[Edge]:
    """Every import of a package module by a package module, with its kind and line."""
    edges: list[Edge] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"

        def visit(
            node: ast.AST, kind: str, name: str = name, is_package: bool = is_package
        ) -> None:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _imported(node, name, is_package, modules):
                    if target != name:
                        edges.append(Edge(name, target, kind, node.lineno))
                return
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for child in ast.iter_child_nodes(node):
                    visit(child, "function")
                return
            if isinstance(node, ast.If) and _is_type_checking(node.test) and kind == "module":
                for child in node.body:
                    visit(child, "typing")
                for child in node.orelse:
                    visit(child, kind)
                return
            for child in ast.iter_child_nodes(node):
                visit(child, kind)

        visit(tree, "module")
    return edges


def find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One concrete cycle ``[a, b, ..., a]`` per strongly connected component that has one.

    >>> find_cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]})
    [['a', 'b', 'c', 'a']]
    >>> find_cycles({"a": ["b"], "b": []})
    []
    """
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    succ = {n: sorted(set(graph.get(n, ()))) for n in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def strong(v: str) -> None:  # Tarjan; the graph is small, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in succ[v]:
                components.append(sorted(comp))

    for n in nodes:
        if n not in index:
            strong(n)
    cycles = []
    for comp in sorted(components):
        members = set(comp)
        start = comp[0]
        # Breadth-first from start, inside the component, back to start: a shortest cycle.
        parent: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in succ[v]:
                    if w == start:
                        found = v
                        break
                    if w in members and w not in parent:
                        parent[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        assert found is not None
        path = [found]
        while path[-1] != start:
            path.append(parent[path[-1]])
        cycles.append([*reversed(path), start])
    return cycles


def graph_of(edges: Iterable[Edge], kinds: Iterable[str] = ("module",)) -> dict[str, set[str]]:
    wanted = set(kinds)
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.kind in wanted:
            graph.setdefault(e.source, set()).add(e.target)
    return graph


def describe(cycle: list[str], edges: Iterable[Edge]) -> str:
    where = {(e.source, e.target): e for e in edges}
    steps = []
    for a, b in itertools.pairwise(cycle):
        e = where[(a, b)]
        steps.append(f"{a} -> {b} ({e.kind} import, line {e.line})")
    return "; ".join(steps)


MODULES = module_names()
EDGES = import_edges(MODULES)

#: The stack, bottom to top. An import may only go to a lower layer or within one
#: layer (acyclic, checked below), whatever its kind.
LAYERS: list[tuple[str, ...]] = [
    ("bpeds.errors", "bpeds._gc", "bpeds.processes", "bpeds.specs", "bpeds.vocab"),
    # The structures, each importable on its own.
    tuple(sorted(m for m in MODULES if m.startswith("bpeds.structures"))),
    # Scores, tie rules and the score registry (scores know nothing of tokenizers).
    tuple(sorted(m for m in MODULES if m.startswith("bpeds.scoring"))),
    # Corpus representations, then the one merge loop over them (and its loop variants).
    ("bpeds.corpus.base", "bpeds.corpus.type_mode", "bpeds.corpus.sequence_mode", "bpeds.corpus"),
    ("bpeds.variants", *sorted(m for m in MODULES if m.startswith("bpeds.driver"))),
    tuple(sorted(m for m in MODULES if m.startswith("bpeds.testing"))),
    # The tokenizer layer, the package bpeds.tokenizer: patterns and their limits,
    # special-token rules, event logs, the JSON format's core.
    (
        "bpeds.tokenizer._unicode_16_0",
        "bpeds.tokenizer.unicode_tables",
        "bpeds.tokenizer.limits",
        "bpeds.tokenizer.pattern_safety",
        "bpeds.tokenizer.pretokenize",
        "bpeds.tokenizer.normalize",
        "bpeds.tokenizer.special",
        "bpeds.tokenizer._model_json",
        "bpeds.tokenizer.replay",
    ),
    ("bpeds.tokenizer.fastsplit",),  # the exact ASCII fast path of the patterns' split
    ("bpeds.tokenizer.files", "bpeds.tokenizer.counts"),
    ("bpeds.tokenizer.encoder", "bpeds.tokenizer.dropout", "bpeds.tokenizer.idmap"),
    # Training, below the Tokenizer: its input and counting, here or as tasks ...
    (
        "bpeds.tokenizer.io",
        "bpeds.tokenizer.records",
        "bpeds.tokenizer.progress",
        "bpeds.tokenizer.pieces",
        "bpeds.tokenizer.executors",
        "bpeds.tokenizer._dask",
        "bpeds.tokenizer.counting",
    ),
    # ... then the run: presets, groups, continued training, SuperBPE's stages, the
    # model description a Tokenizer is built from.
    (
        "bpeds.tokenizer.trained",
        "bpeds.tokenizer.presets",
        "bpeds.tokenizer.groups",
        "bpeds.tokenizer.continued",
        "bpeds.tokenizer.superbpe",
        "bpeds.tokenizer.boundless",
        "bpeds.tokenizer.stops",
        "bpeds.tokenizer.trainer",
    ),
    ("bpeds.tokenizer.core",),  # the Tokenizer
    (  # persistence, other tools' formats, and train (which builds a Tokenizer)
        "bpeds.tokenizer.persist",
        *sorted(m for m in MODULES if m.startswith("bpeds.tokenizer.formats")),
        "bpeds.tokenizer.training",
        "bpeds.tokenizer.pruning",
    ),
    ("bpeds.tokenizer",),  # the package: exports the Tokenizer's names
    # Applications on the public API: compare, then the command line.
    tuple(sorted(m for m in MODULES if m.startswith("bpeds.comparison"))),
    ("bpeds",),  # the package: re-exports everything
    (*sorted(m for m in MODULES if m.startswith("bpeds.cli")), "bpeds.__main__"),
]
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}

#: The applications: built on what a user can import.
APPLICATIONS = ("bpeds.comparison", "bpeds.cli", "bpeds.__main__")


def test_the_graph_was_read() -> None:
    assert "bpeds.tokenizer" in MODULES
    assert "bpeds.tokenizer.formats.hf" in MODULES
    assert all(m in MODULES for m in RANK), sorted(set(RANK) - set(MODULES))
    kinds = {(e.source, e.target): e.kind for e in EDGES}
    assert kinds[("bpeds.tokenizer.core", "bpeds.tokenizer.encoder")] == "module"
    assert kinds[("bpeds.tokenizer", "bpeds.tokenizer.core")] == "typing"
    assert kinds[("bpeds.tokenizer.core", "bpeds.tokenizer.trainer")] == "function"
    assert kinds[("bpeds.cli", "bpeds")] == "module"  # `from bpeds import __version__`
    assert kinds[("bpeds.cli.compare", "bpeds.comparison")] == "function"  # loaded when run


def test_every_module_has_a_layer() -> None:
    assert sorted(set(MODULES) - set(RANK)) == []


def test_the_stack_is_layered() -> None:
    """Every import between the stack's modules, lazy and TYPE_CHECKING ones included,
    goes down (or sideways within a layer)."""
    upward = sorted(
        {
            (e.source, e.target, e.kind)
            for e in EDGES
            if e.source in RANK and e.target in RANK and RANK[e.target] > RANK[e.source]
        }
    )
    assert not upward, "imports that go up the layers (source, target, kind): " + ", ".join(
        f"{s} -> {t} ({k})" for s, t, k in upward
    )


def test_no_cycle_even_lazily() -> None:
    """No cycle anywhere in the package, counting every kind of import."""
    cycles = find_cycles(graph_of(EDGES, ("module", "typing", "function")))
    assert not cycles, "import cycles: " + " | ".join(describe(c, EDGES) for c in cycles)


def private_imports(modules: Mapping[str, Path], prefixes: Iterable[str]) -> list[str]:
    """Names starting with ``_`` (dunders aside) that the modules under ``prefixes``
    import from another module, and private modules they import, each with its line."""
    found: list[str] = []
    for name, path in modules.items():
        if not any(name == p or name.startswith(p + ".") for p in prefixes):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = [a.name for a in node.names]
                targets = [module, *(f"{module}.{n}" for n in names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if any(
                    part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
                    for part in target.split(".")
                ):
                    found.append(f"{name} line {node.lineno}: {target}")
    return found


def test_the_applications_use_only_public_names() -> None:
    assert private_imports(MODULES, APPLICATIONS) == []


def test_the_private_name_scan_sees_every_form(tmp_path: Path) -> None:
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from lib import __version__, public\n"
        "from lib.mod import _helper\n"
        "from lib import _private_module\n"
        "import lib._internal\n"
        "def f():\n"
        "    from lib.x import _late\n"
    )
    found = private_imports(module_names(pkg), ["app"])
    assert found == [
        "app line 2: lib.mod._helper",
        "app line 3: lib._private_module",
        "app line 4: lib._internal",
        "app line 6: lib.x._late",
    ]


def test_find_cycles_names_every_cycle() -> None:
    graph = {"x": {"y"}, "y": {"x", "z"}, "z": {"z"}, "w": {"x"}}
    assert find_cycles(graph) == [["x", "y", "x"], ["z", "z"]]


def test_imports_of_every_form_are_read(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("VERSION = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "leaf.py").write_text("from pkg import VERSION\n")
    (pkg / "a.py").write_text(
        "from __future__ import annotations\n"
        "import os\n"
        "import pkg.sub.leaf\n"
        "from pkg import b\n"
        "from . import c\n"
        "from .sub import leaf\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.d import Thing\n"
        "else:\n"
        "    from pkg import e\n"
        "def f():\n"
        "    from pkg.sub import g\n"
        "class K:\n"
        "    import pkg.h\n"
    )
    for m in "bcdegh":
        (pkg / ("sub" if m == "g" else "") / f"{m}.py").write_text("")
    modules = module_names(pkg)
    got = sorted((e.source, e.target, e.kind) for e in import_edges(modules))
    assert got == [
        ("pkg.a", "pkg.b", "module"),
        ("pkg.a", "pkg.c", "module"),
        ("pkg.a", "pkg.d", "typing"),
        ("pkg.a", "pkg.e", "module"),
        ("pkg.a", "pkg.h", "module"),
        ("pkg.a", "pkg.sub.g", "function"),
        ("pkg.a", "pkg.sub.leaf", "module"),
        ("pkg.a", "pkg.sub.leaf", "module"),
        ("pkg.sub.leaf", "pkg", "module"),
    ]
