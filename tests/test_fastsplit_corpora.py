"""The fast split against ``regex`` on the benchmark suite's corpora, file by file.

The corpora are built by ``benchmarks/get_corpora.py`` (not in the repository) and the
check takes over a minute, so it runs only when asked: ``BPEDS_CORPORA=benchmarks/corpora
pytest tests/test_fastsplit_corpora.py``. Files above ``MAX_BYTES`` are left to the
benchmark jobs, which compare the pieces of the old and new split in every run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bpeds.tokenizer.fastsplit import FastSplit
from bpeds.tokenizer.pretokenize import PATTERNS, compile_pattern

CORPORA = Path(os.environ.get("BPEDS_CORPORA", "")) if os.environ.get("BPEDS_CORPORA") else None
MAX_BYTES = 4 << 20
FILES = (
    sorted(p for p in CORPORA.rglob("*.txt") if p.stat().st_size <= MAX_BYTES)
    if CORPORA is not None and CORPORA.is_dir()
    else []
)

pytestmark = pytest.mark.skipif(
    not FILES, reason="set BPEDS_CORPORA to the folder of the benchmark corpora to run"
)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_splits_as_regex(path: Path, name: str) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    compiled = compile_pattern(name)
    fs = FastSplit(compiled)
    want = compiled.findall(text)
    assert fs.findall(text) == want
    assert fs._cut_split(text, 0) == want  # the islands path, whatever the density
