"""Golden merge lists made once by a reference implementation (``tests/data/``, see SOURCES.md).

``minbpe_golden(text, n, pattern)`` answers what ``tests.minbpe_rule.minbpe_merges(text, n,
pattern)`` would compute, from ``tests/data/minbpe_golden.json`` (made by that function through
``tests/data/make_golden.py``), so the slow pure-Python rule runs once, not on every test run.
The text is found by its SHA-256, so a golden list is only ever compared with the input it was
made from. ``tests/test_golden.py`` checks that the file is current and reruns the reference on
a prefix of every case.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
MINBPE_GOLDEN = DATA / "minbpe_golden.json"
REGENERATE = ".venv/bin/python tests/data/make_golden.py"


@functools.cache
def minbpe_golden_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(MINBPE_GOLDEN.read_text(encoding="utf-8"))
    return doc


def minbpe_golden(text: str, num_merges: int, pattern: str | None) -> list[tuple[int, int]]:
    """minbpe's first ``num_merges`` merges on ``text`` (Basic if ``pattern`` is None, else
    Regex with that split pattern), as the reference computed them for the golden file."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for case in minbpe_golden_doc()["cases"]:
        if (
            case["text_sha256"] == digest
            and case["pattern"] == pattern
            and num_merges <= case["num_merges"]
        ):
            # The rule is greedy: a run of n merges is the first n merges of a longer one.
            return [(a, b) for a, b in case["merges"][:num_merges]]
    raise LookupError(
        f"no golden minbpe merges for this text ({len(text)} characters, sha256 {digest[:16]}), "
        f"pattern={pattern!r}, {num_merges} merges: add a case to tests/data/make_golden.py "
        f"and run {REGENERATE}"
    )
