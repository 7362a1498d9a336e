"""No function under ``bpeds/`` is over 150 lines: methods and nested functions included.

A function that long does several things, each of which should have a name. A length runs
from the ``def`` line to the last line of the body (``end_lineno - lineno + 1``), so the
docstring, comments and nested functions count. Every ``.py`` file is parsed with :mod:`ast`
(nothing is imported), and each function over the limit is named by its file, line and
qualified name (``Class.method``, ``outer.<locals>.inner``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT = 150

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, _Function]]:
    """Every function below ``node``, with its qualified name, at any depth."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Function):
            name = prefix + child.name
            yield name, child
            yield from _functions(child, f"{name}.<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions(paths: list[Path], root: Path, limit: int = LIMIT) -> list[str]:
    """``path:line name (n lines)`` of every function of ``paths`` over ``limit`` lines."""
    too_long = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _functions(tree):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                where = path.relative_to(root).as_posix()
                too_long.append(f"{where}:{node.lineno} {name} ({lines} lines)")
    return too_long


def test_no_function_is_over_150_lines() -> None:
    paths = sorted((REPO / "bpeds").rglob("*.py"))
    assert len(paths) > 50
    too_long = long_functions(paths, REPO)
    assert not too_long, f"functions over {LIMIT} lines:\n" + "\n".join(too_long)


def test_the_length_is_counted_from_def_to_the_last_line(tmp_path: Path) -> None:
    code = tmp_path / "m.py"
    code.write_text(
        "def f():\n    x = 1\n\n    return x\n\n\ndef g():\n    pass\n\n\n"
        "class C:\n    def h(self):\n        def inner():\n            return 1\n"
        "        return inner\n"
    )
    assert long_functions([code], tmp_path, 2) == [
        "m.py:1 f (4 lines)",
        "m.py:12 C.h (4 lines)",
    ]
