"""Regenerate ``tests/data/picky_golden.json``: the Picky BPE paper's trainer on bundled text.

The reference is the paper's own code (GitHub ``pchizhov/picky_bpe``, ``bpe_trainer.py`` and
``language.py``; it needs ``numpy``). Check it out anywhere and run, from this repository's root::

    .venv/bin/python tests/data/make_picky_golden.py PATH/TO/picky_bpe

This script imports nothing from ``bpeds``. It changes one thing in the reference: its
selection, ``Counter.most_common(1)``, breaks ties among equal counts by dict insertion order,
which no other implementation can reproduce; here ties go to the lexicographically smallest
pair of UTF-8 token texts with the word-start mark ``▁`` read as a space (bpeds'
``lexicographic`` tie rule on the same words). Everything else (the removal test
``m / (f + m) > threshold``, left token before right, splits into present parts, restored
tokens) is the reference's. The input is ``tinyshakespeare_100k.txt`` (ASCII), so the
reference's characters are bytes and ``▁`` + word is bpeds' ``" " + word``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
SOURCE = "tinyshakespeare_100k.txt"
OUTPUT = DATA / "picky_golden.json"
VOCAB_SIZE = 700
THRESHOLDS = (0.6, 0.9)


def _text(token: Any) -> str:
    return str(token.str).replace("\u2581", " ")


def run(repo: Path, threshold: float, text_path: Path) -> dict[str, Any]:
    sys.path.insert(0, str(repo))
    import bpe_trainer  # type: ignore[import-not-found]
    import utils  # type: ignore[import-not-found]

    def most_common(self: Any, n: int | None = None) -> list[tuple[Any, int]]:
        if n != 1:
            return list(super(utils.MCounter, self).most_common(n))
        if not self:
            return []
        best = max(self.values())
        tied = [p for p, c in self.items() if c == best]
        pick = min(tied, key=lambda p: (_text(p[0]).encode(), _text(p[1]).encode()))
        return [(pick, best)]

    utils.MCounter.most_common = most_common
    trainer = bpe_trainer.BPE(VOCAB_SIZE, coverage=1.0, threshold=threshold)
    out = DATA / "_picky_model.json"
    try:
        trainer.fit(str(text_path), str(out), logging_step=10**9)
    finally:
        out.unlink(missing_ok=True)
    events: list[list[Any]] = []
    for kind, *rest in trainer.events:
        if kind.name == "MERGE":
            pair, new = rest
            events.append(["merge", _text(pair[0]), _text(pair[1]), _text(new)])
        else:
            token, parts = rest
            events.append(["remove", _text(token), [_text(p) for p in parts]])
    return {"threshold": threshold, "vocab_size": VOCAB_SIZE, "events": events}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(sys.argv[1])
    text_path = DATA / SOURCE
    sha = hashlib.sha256(text_path.read_bytes()).hexdigest()
    cases = [run(repo, t, text_path) for t in THRESHOLDS]
    doc = {
        "made_by": "pchizhov/picky_bpe bpe_trainer.py, ties patched to lexicographic",
        "source": SOURCE,
        "sha256": sha,
        "words": "line.strip('\\n').split(), each as '\u2581' + word (bpeds: ' ' + word)",
        "cases": cases,
    }
    OUTPUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT.name}: " + ", ".join(f"{len(c['events'])} events" for c in cases))


if __name__ == "__main__":
    main()
