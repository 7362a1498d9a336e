"""Regenerate ``tests/data/minbpe_golden.json``: minbpe's merges on parts of taylorswift.txt.

Run from the repository root after changing ``tests/minbpe_rule.py``, the bundled text or the
cases below (tests name an input that has no golden case, or ``tests/test_golden.py`` reports a
stale file)::

    .venv/bin/python tests/data/make_golden.py

The merges are computed by the reference, ``tests/minbpe_rule.py`` (our statement of minbpe's
training rule), never by bpeds: this script imports nothing from ``bpeds``. It takes about half a
minute; the tests then read the file instead of rerunning the reference. See ``SOURCES.md``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import sys
from pathlib import Path
from typing import Any

import regex

DATA = Path(__file__).resolve().parent
ROOT = DATA.parent.parent
SOURCE = "taylorswift.txt"
OUTPUT = DATA / "minbpe_golden.json"
REFERENCE = "tests/minbpe_rule.py"

#: minbpe's GPT4_SPLIT_PATTERN (``minbpe/regex.py``), written out here so nothing of bpeds is used.
GPT4_SPLIT_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s+"""
)

#: (first character, end character, pattern or None for minbpe's Basic tokenizer, merges).
#: A golden case of N merges also answers any shorter run on the same text: its first k merges.
CASES: list[tuple[int, int, str | None, int]] = [
    (0, 12_000, None, 150),
    (0, 20_000, None, 300),
    (0, 40_000, GPT4_SPLIT_PATTERN, 300),
    (50_000, 80_000, GPT4_SPLIT_PATTERN, 150),
]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pieces_sha256(text: str, pattern: str | None) -> str:
    """The SHA-256 of the chunks the reference trains on (the ``regex`` module's split)."""
    pieces = [text] if pattern is None else regex.findall(pattern, text)
    return sha256(json.dumps(pieces, ensure_ascii=False).encode("utf-8"))


def build() -> dict[str, Any]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.minbpe_rule import minbpe_merges

    text = (DATA / SOURCE).read_text(encoding="utf-8")
    cases = []
    for start, end, pattern, num_merges in CASES:
        part = text[start:end]
        merges = minbpe_merges(part, num_merges, pattern)
        assert len(merges) == num_merges, (start, end, len(merges))
        cases.append(
            {
                "source": SOURCE,
                "chars": [start, end],
                "text_sha256": sha256(part.encode("utf-8")),
                "pattern": pattern,
                "pieces_sha256": pieces_sha256(part, pattern),
                "num_merges": num_merges,
                "merges": [list(pair) for pair in merges],
            }
        )
        print(f"{SOURCE}[{start}:{end}] pattern={'gpt4' if pattern else None}: {len(merges)}")
    return {
        "what": "minbpe's training merges (Basic: pattern null; Regex: the split pattern given)",
        "made_by": f"{REFERENCE} via tests/data/make_golden.py",
        "reference_sha256": sha256((ROOT / REFERENCE).read_bytes()),
        "source_sha256": sha256((DATA / SOURCE).read_bytes()),
        "versions": {
            "python": platform.python_version(),
            "regex": importlib.metadata.version("regex"),
        },
        "cases": cases,
    }


def dump(doc: dict[str, Any]) -> str:
    """Indented JSON, except that each merge list stays on one line (small, readable diffs)."""
    cases = doc["cases"]
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, indent=2)
    body = ",\n".join(
        "    {"
        + ", ".join(
            f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in c.items()
        )
        + "}"
        for c in cases
    )
    return head[:-2] + ',\n  "cases": [\n' + body + "\n  ]\n}\n"


def main() -> None:
    doc = build()
    text = dump(doc)
    assert json.loads(text) == doc
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(text):,} bytes)")


if __name__ == "__main__":
    main()
