"""Regenerate ``tests/data/picky_golden.json`` and ``tests/data/picky_stop_golden.json``: the
Picky BPE paper's trainer on bundled text.

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

``picky_stop_golden.json`` holds longer runs (to 2,064 tokens, thresholds 0.7 and 0.5) in which
a merge makes a token that is already present: the reference adds one to its vocabulary size
for such a merge too, so it stops earlier than a count of the tokens present would. Each
case records how many merges and removals the reference made before stopping, its starting
vocabulary size (so that a comparison sets the same target), the merges that re-made a
present token, the SHA-256 of the whole event list (as JSON, ``ensure_ascii=False``,
``separators=(",", ":")``) and its last events.
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
STOP_OUTPUT = DATA / "picky_stop_golden.json"
STOP_CASES = ((0.7, 2064), (0.5, 2064))


def _text(token: Any) -> str:
    return str(token.str).replace("\u2581", " ")


def run(
    repo: Path, threshold: float, text_path: Path, vocab_size: int = VOCAB_SIZE
) -> dict[str, Any]:
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
    trainer = bpe_trainer.BPE(vocab_size, coverage=1.0, threshold=threshold)
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
    return {"threshold": threshold, "vocab_size": vocab_size, "events": events}


def stop_case(repo: Path, threshold: float, vocab_size: int, text_path: Path) -> dict[str, Any]:
    """A long run, summarised: counts, the re-making merges, a digest and the tail."""
    events = run(repo, threshold, text_path, vocab_size)["events"]
    merges = sum(e[0] == "merge" for e in events)
    removals = len(events) - merges
    present: set[str] = set()
    remade = []
    for i, e in enumerate(events):
        if e[0] == "merge":
            if e[3] in present:
                remade.append([i, e[3]])
            present.add(e[3])
        else:
            present.discard(e[1])
    rendered = json.dumps(events, ensure_ascii=False, separators=(",", ":"))
    return {
        "threshold": threshold,
        "vocab_size": vocab_size,
        # the reference's size is its start plus one per merge, less one per removal
        "initial_size": vocab_size - merges + removals,
        "merges": merges,
        "removals": removals,
        "remade_present": remade,
        "events_sha256": hashlib.sha256(rendered.encode()).hexdigest(),
        "last_events": events[-3:],
    }


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
    stops = [stop_case(repo, t, v, text_path) for t, v in STOP_CASES]
    doc = {**doc, "cases": stops}
    STOP_OUTPUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {STOP_OUTPUT.name}: " + ", ".join(f"{c['merges']} merges" for c in stops))


if __name__ == "__main__":
    main()
