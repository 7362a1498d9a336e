"""Make the comparison shown in docs/compare.md: every shipped score, English and multilingual.

Usage::

    python benchmarks/compare_docs.py benchmarks/corpora docs/img   # corpora: get_corpora.py

Writes ``DEST/compare-en/`` and ``DEST/compare-multi/`` (the figures, ``results.csv`` and
``report.md`` of each comparison; existing files are replaced) and prints the Markdown
tables. English: trained on ``scale/en_2mb.txt``, measured on ``en_heldout.txt``.
Multilingual: trained on the first 400,000 characters of six sources as six groups
(English, Russian, Chinese, Japanese, Korean, and the UDHR specimen texts of ~750
languages), measured on the 100,000 characters that follow each (held-out groups); the
Korean source is shorter, so its last fifth is held out and the rest trained on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bpeds.comparison import compare
from bpeds.scoring.registry import SCORES

SOURCES = {
    "en": "en13.txt",
    "ru": "multi/ru_fortunes.txt",
    "zh": "multi/zh_fortunes.txt",
    "ja": "multi/ja_manpages.txt",
    "ko": "multi/ko_gnome_help.txt",
    "udhr": "multi/udhr_samples.txt",
}
TRAIN_CHARS = 400_000
HELDOUT_CHARS = 100_000
VOCAB = 8192
SIZES = [512, 1024, 2048, 4096, 8192]
#: Scores to train to a smaller vocabulary than the others, by name (none: every shipped
#: score, NPMI and GroupFrequency included, trains to 8,192 in minutes).
SMALLER: dict[str, int] = {}


def config(score: str) -> dict[str, object]:
    return {"score": score, "vocab_size": SMALLER.get(score, VOCAB)}


def configs(scores: list[str]) -> dict[str, dict[str, object]]:
    """Every score with its defaults, and PMI once more with pairs seen 100 times or more."""
    out = {s: config(s) for s in scores}
    out["pmi, min_count=100"] = {"score": {"name": "pmi", "min_count": 100}, "vocab_size": VOCAB}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", choices=("en", "multi"))
    args = ap.parse_args()
    scores = sorted(SCORES)
    if args.only != "multi":
        started = time.perf_counter()
        en = compare(
            configs([s for s in scores if s != "group_frequency"]),
            train=args.corpora / "scale/en_2mb.txt",
            heldout=args.corpora / "en_heldout.txt",
            sizes=SIZES,
            workers=args.workers,
        )
        en.report(args.dest / "compare-en", overwrite=True)
        print(f"# English ({time.perf_counter() - started:.0f} s)\n\n{en.to_markdown()}")
        sys.stdout.flush()
    if args.only != "en":
        train: dict[str, str] = {}
        heldout: dict[str, str] = {}
        for name, rel in SOURCES.items():
            text = (args.corpora / rel).read_text(encoding="utf-8")
            # A source shorter than both parts (Korean) keeps a fifth of it held out.
            cut = min(TRAIN_CHARS, len(text) - min(HELDOUT_CHARS, len(text) // 5))
            train[name] = text[:cut]
            heldout[name] = text[cut : cut + HELDOUT_CHARS]
        started = time.perf_counter()
        multi = compare(
            configs(scores),
            train=train,
            heldout=heldout,
            sizes=SIZES,
            reference="en",
            workers=args.workers,
        )
        multi.report(args.dest / "compare-multi", overwrite=True)
        print(f"# Multilingual ({time.perf_counter() - started:.0f} s)\n\n{multi.to_markdown()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
