"""Regenerate ``tests/data/charsafe_golden.json``: SCRIPT-BPE's trainer with character
boundaries on FLORES text.

The reference is the paper's code (GitHub ``sanderland/script_bpe``: ``script_bpe/bpe/train.py``
with the ``bytes_gpt4o_cb`` pre-tokenizer of ``script_bpe/pretokenize``; it needs ``regex`` and
``numpy``). Check it out anywhere, make an environment with those packages, and run, from this
repository's root::

    PYTHON tests/data/make_charsafe_golden.py PATH/TO/script_bpe

This script imports nothing from ``bpeds`` and changes nothing in the reference's training. The
modules its corpus and reporting code import at load time but this path never calls
(``polars``, ``tabulate``) are stubbed, and its corpus (normally Parquet shards of a Hugging
Face dataset) is a small class that hands the trainer the same ``(chunk, count)`` items.

Input: the first 120 lines of each of ``flores/{en,ru,zh,ja,ko}.txt``, each line a document,
pre-tokenized by the reference (NFC, the GPT-4o pattern, UTF-8 bytes as ids 1..256). Output:
its 600 merges, each as the hex of its two parts' bytes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

for _stub in ("polars", "tabulate"):  # imported at load time, never called on this path
    sys.modules.setdefault(_stub, types.ModuleType(_stub))

DATA = Path(__file__).resolve().parent
LANGUAGES = ("en", "ru", "zh", "ja", "ko")
TRAIN_LINES = 120
MERGES = 600


class Corpus:
    """What the reference's ``train_bpe`` reads of a PretokenizedCorpus."""

    def __init__(self, items: list[tuple[list[int], int]]) -> None:
        self.items = items
        self.name = "flores-sample"
        self.metadata: dict[str, Any] = {"items": len(items)}

    def worker_iterate(self, worker_id: int, num_workers: int) -> Any:
        from script_bpe.utils import token_array  # type: ignore[import-not-found]

        for i, (seq, count) in enumerate(self.items):
            if i % num_workers == worker_id:
                yield token_array(seq), count


def documents() -> list[str]:
    out = []
    for lang in LANGUAGES:
        lines = (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        out += lines[:TRAIN_LINES]
    return out


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(sys.argv[1])
    sys.path.insert(0, str(repo))
    from script_bpe.bpe.train import train_bpe  # type: ignore[import-not-found]
    from script_bpe.pretokenize import get_pretokenizer  # type: ignore[import-not-found]

    pre = get_pretokenizer("bytes_gpt4o_cb")
    docs = documents()
    assert all(pre.normalize(d) == d for d in docs), "the sample changes under NFC"
    counts: Counter[tuple[int, ...]] = Counter()
    for text in docs:
        for chunk in pre.encode_and_chunk(text):
            counts[tuple(chunk)] += 1
    corpus = Corpus([(list(seq), n) for seq, n in counts.items()])
    tok = train_bpe(pre, corpus, MERGES, num_workers=1, verbose=False)
    table: dict[int, bytes] = {i + 1: bytes([i]) for i in range(256)}
    merges = []
    for rule in tok.merge_rules:
        a, b = rule.tokens_from
        table[rule.token_to] = table[a] + table[b]
        merges.append([table[a].hex(), table[b].hex()])
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "made_by": "sanderland/script_bpe bpe/train.py, pre-tokenizer bytes_gpt4o_cb, unpatched",
        "reference_commit": commit,
        "python": sys.version.split()[0],
        "documents": f"the first {TRAIN_LINES} lines of flores/{{{','.join(LANGUAGES)}}}.txt",
        "sha256": hashlib.sha256("\n".join(docs).encode()).hexdigest(),
        "merges": merges,
    }
    out = DATA / "charsafe_golden.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out.name}: {len(merges)} merges")


if __name__ == "__main__":
    main()
