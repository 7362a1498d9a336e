"""Regenerate ``tests/data/boundless_golden.json``: BoundlessBPE's own trainer on bundled text.

The reference is the authors' pure-Python trainer (GitHub
``kensho-technologies/fastboundlessbpe``, ``python/boundlessbpe/``: ``train.py`` and what it
imports; it needs ``regex`` and ``heapdict``). Check it out anywhere, make an environment with
those two packages, and run, from this repository's root::

    PYTHON -m pip install regex heapdict
    PYTHON tests/data/make_boundless_golden.py PATH/TO/fastboundlessbpe

This script imports nothing from ``bpeds`` and changes nothing in the reference: its
selection is deterministic (the largest count, then the smallest ``(left, right)`` pair of
byte strings) and its output is read from what it returns and saves. The one thing it adds
is an observer: the trainer's ``merge_and_delete`` is wrapped to note, for each supermerge of
the second pass, how many word-level operations had been kept when it was made (the
interleaving, which the saved model does not record); the call itself is unchanged.

Input: the non-empty lines of ``taylorswift.txt``, each one document (one JSONL record) of
the reference; its default pre-tokenizer (the GPT-4o pattern, no script splitting). Cases:
the word-level pass (``BpeTrainer``, ``blowup=True``) without deletions (``tau=1.1``) and
with them (``tau=0.9``), and the second pass (``BoundlessBpeTrainer``) on each; then the
reference's inference (``Tokenizer.from_file`` on the saved word-level and two-pass models)
encodes held-out lines of ``tinyshakespeare_100k.txt``. Token bytes are written as hex.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
SOURCE = "taylorswift.txt"
HELDOUT = "tinyshakespeare_100k.txt"
HELDOUT_CHARS = 6000
OUTPUT = DATA / "boundless_golden.json"
#: The reference's vocabulary size (it counts the 243 byte values valid in UTF-8).
VOCAB_SIZE = 1200
TAUS = (1.1, 0.9)


def documents() -> list[str]:
    text = (DATA / SOURCE).read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line]


def heldout() -> list[str]:
    """Text to encode with the trained models: lines the training never saw."""
    text = (DATA / HELDOUT).read_text(encoding="utf-8")[:HELDOUT_CHARS]
    return [line for line in text.split("\n") if line]


def encodings(model_file: Path) -> list[str]:
    """The reference's inference (``Tokenizer.from_file``) on the held-out lines, each
    as the hex of its tokens' bytes joined by spaces."""
    from boundlessbpe import Tokenizer  # type: ignore[import-not-found]

    tok = Tokenizer.from_file(str(model_file))
    out = []
    for line in heldout():
        ids = tok.encode(line)
        out.append(" ".join(tok.vocab.id_to_token[i].hex() for i in ids))
    return out


def word_ops(model: Any) -> list[list[Any]]:
    """The word-level operations of a trainer's InferenceData, in index order."""
    ops: list[tuple[int, list[Any]]] = []
    for idx, ((left, right), count, _flag) in model.merges.items():
        ops.append((idx, ["merge", left.hex(), right.hex(), count]))
    for idx, token in model.deletions.items():
        ops.append((idx, ["remove", token.hex()]))
    return [op for _, op in sorted(ops, key=lambda item: item[0])]


def run(repo: Path, tau: float, workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(repo / "python"))
    from boundlessbpe import BoundlessBpeTrainer, BpeTrainer

    corpus = workdir / "docs.jsonl"
    docs = documents()
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    quiet = io.StringIO()
    words = BpeTrainer()
    with contextlib.redirect_stdout(quiet):
        words.train(
            tau=tau,
            filepath=str(corpus),
            outprefix=str(workdir / "w"),
            num_lines=len(docs),
            vocab_size=VOCAB_SIZE,
            recalc=0,
            blowup=True,
            checkpoint_iterations=0,
            verbose=False,
            progress_interval=0,
        )
        words.save(str(workdir / "words"))
    first = word_ops(words.inf_data)

    second = BoundlessBpeTrainer()
    made: list[list[Any]] = []
    inner = second.merge_and_delete

    def observed(best_pair: Any, i: int, *args: Any, **kwargs: Any) -> Any:
        count = second.get_pair_count(best_pair)
        kept = second.current_word_op_idx
        made.append([best_pair[0].hex(), best_pair[1].hex(), count, kept])
        return inner(best_pair, i, *args, **kwargs)

    second.merge_and_delete = observed
    with contextlib.redirect_stdout(quiet):
        second.train(
            filepath=str(corpus),
            outprefix=str(workdir / "b"),
            num_lines=len(docs),
            recalc=0,
            word_model_file=str(workdir / "words.model"),
            checkpoint_iterations=0,
            verbose=False,
            progress_interval=0,
        )
        second.save(str(workdir / "boundless"))
        encoded_words = encodings(workdir / "words.model")
        encoded = encodings(workdir / "boundless.model")
    return {
        "tau": tau,
        "vocab_size": VOCAB_SIZE,
        "words": first,
        "supermerges": made,
        "kept_ops": second.current_word_op_idx,
        "encoded_words": encoded_words,
        "encoded": encoded,
    }


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(sys.argv[1])
    sha = hashlib.sha256((DATA / SOURCE).read_bytes()).hexdigest()
    cases = []
    for tau in TAUS:
        with tempfile.TemporaryDirectory() as tmp:
            cases.append(run(repo, tau, Path(tmp)))
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "made_by": "kensho-technologies/fastboundlessbpe python/boundlessbpe train.py, unpatched",
        "reference_commit": commit,
        "python": sys.version.split()[0],
        "source": SOURCE,
        "sha256": sha,
        "documents": "the non-empty lines of the source, one JSONL record each",
        "heldout": f"the non-empty lines of the first {HELDOUT_CHARS} characters of {HELDOUT}",
        "heldout_sha256": hashlib.sha256("\n".join(heldout()).encode()).hexdigest(),
        "cases": cases,
    }
    OUTPUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(
        f"wrote {OUTPUT.name}: "
        + ", ".join(
            f"tau {c['tau']}: {len(c['words'])} word ops, {len(c['supermerges'])} supermerges"
            for c in cases
        )
    )


if __name__ == "__main__":
    main()
