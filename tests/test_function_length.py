"""No function of the tokenizer layer, the comparison or the command line is over 150 lines.

A function that long does several things; each should have a name. Counted from
the ``def`` line to the last line of the body, docstring and nested functions
included (the merge driver and the testing kit are not held to this here).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "bpeds"
PACKAGES = ("tokenizer", "comparison", "cli")
MODULES = ("__init__.py", "__main__.py")
LIMIT = 150


def long_functions(paths: list[Path], limit: int) -> list[str]:
    """``path:line name (n lines)`` of every function of ``paths`` longer than ``limit``."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_over_150_lines() -> None:
    paths = [p for name in PACKAGES for p in sorted((ROOT / name).rglob("*.py"))]
    paths += [ROOT / name for name in MODULES]
    assert len(paths) > 40
    assert long_functions(paths, LIMIT) == []


def test_the_length_is_counted_from_def_to_the_last_line(tmp_path: Path) -> None:
    code = tmp_path / "m.py"
    code.write_text("def f():\n    x = 1\n\n    return x\n\n\ndef g():\n    pass\n")
    assert long_functions([code], 3) == ["m.py:1 f (4 lines)"]
