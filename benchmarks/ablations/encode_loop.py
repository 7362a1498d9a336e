"""Where ``Tokenizer.encode`` spends its time, and what a C-level piece loop would save.

Not a suite workload: an experiment for the encoding target (workload 5), run by
hand on a quiet machine::

    python benchmarks/ablations/encode_loop.py benchmarks/corpora/en13.txt --vocab 32768

It trains (or ``--model`` loads) a GPT-2-pattern tokenizer, then times, in one
process, each variant ``--repeat`` times (median; the piece cache is warm after
the first run of each, as in a long-running encoder):

- ``findall``: the pattern's ``findall`` over the text alone (the floor of any
  encoder that splits with the ``regex`` module);
- ``bpeds encode``: the public ``Tokenizer.encode``;
- ``python loop``: bpeds' piece loop, re-written here (a dict lookup and a list
  extend per piece, in Python);
- ``c loop``: the same result from C-level loops: ``map(cache.get, pieces)``,
  a fill-in of the misses, ``itertools.chain.from_iterable``;
- ``tiktoken encode``: the same vocabulary in tiktoken, for scale.

Every variant's ids are checked equal to ``Tokenizer.encode``'s. Not handled:
special tokens (none are defined), the process pool of ``encode_batch``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path

import regex


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("text", type=Path)
    parser.add_argument("--model", type=Path, help="a saved bpeds model (else train one)")
    parser.add_argument("--vocab", type=int, default=32_768)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import bpeds
    from bpeds.encoder import bpe
    from bpeds.formats import to_tiktoken

    if args.model:
        tok = bpeds.Tokenizer.load(args.model)
    else:
        tok = bpeds.train(args.text, args.vocab, pattern="gpt2", workers=2)
    if tok.pattern is None:
        raise SystemExit("error: the experiment needs a split pattern")
    text = args.text.read_text(encoding="utf-8")
    findall = regex.compile(tok.pattern).findall
    ranks = tok.mergeable_ranks()
    enc = to_tiktoken(tok)

    def python_loop() -> list[int]:
        out: list[int] = []
        for piece in findall(text):
            ids = cache.get(piece)
            if ids is None:
                ids = cache[piece] = bpe(piece.encode("utf-8"), ranks)
            out += ids
        return out

    def c_loop() -> list[int]:
        pieces = findall(text)
        got = list(map(cache_get, pieces))
        if None in got:
            i = got.index(None)
            while True:
                piece = pieces[i]
                ids = cache.get(piece)
                if ids is None:
                    ids = cache[piece] = bpe(piece.encode("utf-8"), ranks)
                got[i] = ids
                try:
                    i = got.index(None, i + 1)
                except ValueError:
                    break
        return list(chain.from_iterable(got))  # type: ignore[arg-type]

    cache: dict[str, list[int]] = {}
    cache_get = cache.get
    variants: list[tuple[str, Callable[[], object]]] = [
        ("findall", lambda: findall(text)),
        ("bpeds encode", lambda: tok.encode(text)),
        ("python loop", python_loop),
        ("c loop", c_loop),
        ("tiktoken encode", lambda: enc.encode(text)),
    ]
    expected = tok.encode(text)
    print(f"{args.text}: {len(text.encode('utf-8')) / 1e6:.1f} MB, {len(expected):,} tokens")
    for name, fn in variants:
        seconds, out = timed(fn, args.repeat)
        same = "" if name == "findall" else ("same ids" if out == expected else "DIFFERENT ids")
        print(f"  {name:16} {seconds:7.3f} s  {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
