"""Regenerate ``tests/data/parity_golden.json``: parity-aware BPE's own code on FLORES text.

The reference is the paper's code (GitHub ``cimeister/parity-aware-bpe``,
``parity_aware_bpe/parity_aware_learn_bpe.py``; it needs ``numpy`` and ``tokenizers``). Check
it out anywhere, make an environment with those packages, and run, from this repository's
root::

    PYTHON -m pip install numpy tokenizers
    PYTHON tests/data/make_parity_golden.py PATH/TO/parity-aware-bpe

This script imports nothing from ``bpeds`` and patches nothing: it runs the reference's command
line (``python parity_aware_learn_bpe.py --input ... --dev ... --symbols N --output F``) in a
child process, once per case, and reads the merges it writes. Its pre-tokenization is its own
(Hugging Face ``Whitespace`` then ``ByteLevel`` with a prefix space, per line).

Input: ``flores/{en,ru,zh,ja,ko}.txt`` (180 parallel lines of FLORES-200 each): the first 120
lines of each language are its training text, the last 60 its development text. Cases: the
paper's base algorithm with development sets (its default), in ratio mode (all ratios 1),
the moving-window variant (window 100, alpha 2) in both modes, and hybrid mode (50 global
merges first) with development sets, plain and moving-window. Merges are written as the
reference writes them (pairs of byte-level strings).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
LANGUAGES = ("en", "ru", "zh", "ja", "ko")
TRAIN_LINES = 120
SYMBOLS = 400
CASES: tuple[tuple[str, list[str]], ...] = (
    ("dev", []),
    ("ratio", ["--ratio", *["1"] * len(LANGUAGES)]),
    ("dev-window", ["--variant", "window"]),
    ("ratio-window", ["--variant", "window", "--ratio", *["1"] * len(LANGUAGES)]),
    ("dev-hybrid", ["--global-merges", "50"]),
    ("dev-hybrid-window", ["--global-merges", "50", "--variant", "window"]),
)


def split_files(tmp: Path) -> tuple[list[Path], list[Path]]:
    """Each language's training and development text, as files."""
    train, dev = [], []
    for lang in LANGUAGES:
        lines = (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines(True)
        train.append(tmp / f"{lang}.train")
        dev.append(tmp / f"{lang}.dev")
        train[-1].write_text("".join(lines[:TRAIN_LINES]), encoding="utf-8")
        dev[-1].write_text("".join(lines[TRAIN_LINES:]), encoding="utf-8")
    return train, dev


def run(repo: Path, name: str, extra: list[str], tmp: Path) -> dict[str, Any]:
    train, dev = split_files(tmp)
    out = tmp / f"{name}.merges"
    argv = [sys.executable, str(repo / "parity_aware_bpe" / "parity_aware_learn_bpe.py")]
    argv += ["--input", *map(str, train), "--symbols", str(SYMBOLS), "--output", str(out)]
    if "--ratio" not in extra:
        argv += ["--dev", *map(str, dev)]
    subprocess.run(argv + extra, check=True, capture_output=True)
    lines = out.read_text(encoding="utf-8").splitlines()
    merges = [line.split(" ") for line in lines if not line.startswith("#version")]
    return {"case": name, "arguments": extra, "merges": merges}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(sys.argv[1])
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [run(repo, name, extra, Path(tmp)) for name, extra in CASES]
    doc = {
        "made_by": "cimeister/parity-aware-bpe parity_aware_learn_bpe.py, unpatched",
        "reference_commit": commit,
        "python": sys.version.split()[0],
        "versions": {p: version(p) for p in ("numpy", "tokenizers")},
        "languages": list(LANGUAGES),
        "train_lines": TRAIN_LINES,
        "sha256": {
            lang: hashlib.sha256((DATA / "flores" / f"{lang}.txt").read_bytes()).hexdigest()
            for lang in LANGUAGES
        },
        "symbols": SYMBOLS,
        "cases": cases,
    }
    out = DATA / "parity_golden.json"
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.name}: " + ", ".join(f"{c['case']} {len(c['merges'])}" for c in cases))


if __name__ == "__main__":
    main()
