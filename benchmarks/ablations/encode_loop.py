"""Where ``Tokenizer.encode`` spends its time, and what a C-level piece loop would save.

Not a suite workload: an experiment for the encoding target (workload 5), run by
hand on a quiet machine::

    python benchmarks/ablations/encode_loop.py benchmarks/corpora/en13.txt --vocab 32768

It trains (or ``--model`` loads) a GPT-2-pattern tokenizer, then times, in one
process, each variant ``--repeat`` times in alternation (median CPU time, which
other jobs on a shared machine disturb less than wall time; the piece cache is
warm after the first run of each, as in a long-running encoder):

- ``findall``: the pattern's ``findall`` over the text alone (the floor of any
  encoder that splits with the ``regex`` module);
- ``bpeds encode``: the public ``Tokenizer.encode``;
- ``python loop``: bpeds' piece loop, re-written here (a dict lookup and a list
  extend per piece, in Python);
- ``c loop``: the same result from C-level loops: ``map(cache.get, pieces)``,
  a fill-in of the misses, ``itertools.chain.from_iterable``;
- ``segmented``: split only the *distinct* stretches between the safe cuts of
  :class:`bpeds.tokenizer.pretokenize.Segmenter` (one ``findall`` over their
  concatenation, see :func:`segmented_encoder`), then one ``bytes.join`` of
  each part's packed ids; a fresh stretch table per call;
- ``tiktoken encode``: the same vocabulary in tiktoken, for scale.

Reading (en13.txt, 32,768 tokens, ``--repeat 5`` on a loaded 2-core machine,
2026-11-22): findall 1.22 s, bpeds encode 2.76 s (its bounded piece cache
holds fewer than en13's 82k distinct pieces, so it stays cold), python loop
1.59 s, c loop 1.64 s, segmented 1.97 s, tiktoken 1.22 s. Segmented loses to
the plain loop with the same warm piece cache; with a cold one (in-process,
alternating) it took 2.69 s against the plain path's 2.45 s. Its stages:
marking and ``str.split`` 0.30 s, the set of parts 0.16 s, ``findall`` over
the 236k distinct stretches (2.8 MB of the 13 MB: 11% of the parts but 21% of
the text) 0.35 s, stretch boundaries and packing 0.40 s, the output join over
2.1M parts 0.41 s: the per-part C-level passes cost about what the skipped
``findall`` saves.

Every variant's ids are checked equal to ``Tokenizer.encode``'s. Not handled:
special tokens (none are defined), the process pool of ``encode_batch``.
"""

from __future__ import annotations

import argparse
import operator
import statistics
import sys
import time
from array import array
from collections.abc import Callable
from itertools import accumulate, chain, compress, count, islice, repeat
from pathlib import Path

import regex

from bpeds.tokenizer.encoder import bpe
from bpeds.tokenizer.pretokenize import GLUED, PATTERNS, Segmenter, restore

#: Every str.isspace character (all lie below U+3001) and GLUED.
_BAD_FIRST = frozenset(c for c in map(chr, range(0x3001)) if c.isspace()) | {GLUED}


def segmented_encoder(
    findall: Callable[[str], list[str]], ranks: dict[bytes, int], cache: dict[str, list[int]]
) -> Callable[[str], list[int]]:
    """An encoder that splits each distinct stretch of the text once (GPT-2/4/4o patterns).

    ``Segmenter.parts`` cuts the text before every rule-1/3 space: part 0 is a
    stretch, every later part ``p`` the stretch ``" " + restore(p)``. The
    distinct stretches whose ``p`` starts with a non-whitespace character are
    concatenated and split by ONE ``findall``: each junction is then a space
    followed by a non-whitespace character, a rule-3 safe cut whatever
    precedes it, so the split of the concatenation is the concatenation of
    the stretches' splits. In stretches without glued spaces the only space is
    the first character and the first piece starts with it, so the pieces
    starting with a space mark the stretch starts (C-level ``compress``);
    stretches with glued spaces are concatenated separately and their
    boundaries found from the pieces' lengths; the rest (empty ``p``, or
    ``p`` starting with whitespace or a glued space) are split one by one.
    Each distinct piece is encoded once and packed as 4-byte ids; each
    stretch's ids are a slice of its concatenation's packed ids; the output is
    one ``bytes.join`` over the parts.
    """

    def packed_pieces(pieces: list[str]) -> dict[str, bytes]:
        values = dict.fromkeys(pieces, b"")
        for piece in values:
            ids = cache.get(piece)
            if ids is None:
                ids = cache[piece] = bpe(piece.encode("utf-8"), ranks)
            values[piece] = array("I", ids).tobytes()
        return values

    def concatenated(stretches: list[str], out: dict[str, bytes]) -> None:
        if not stretches:
            return
        plain = stretches
        glued_flags = list(map(operator.contains, plain, repeat(GLUED)))
        glued = list(compress(plain, glued_flags))
        if glued:
            plain = list(compress(plain, map(operator.not_, glued_flags)))
        if plain:
            pieces = findall(" " + " ".join(plain))
            piece_bytes = list(map(packed_pieces(pieces).__getitem__, pieces))
            offsets = list(accumulate(map(len, piece_bytes), initial=0))
            firsts = list(compress(count(), map(str.startswith, pieces, repeat(" "))))
            firsts.append(len(pieces))
            assert len(firsts) == len(plain) + 1
            bounds = list(map(offsets.__getitem__, firsts))
            blob = b"".join(piece_bytes)
            slices = map(slice, bounds, islice(bounds, 1, None))
            out.update(zip(plain, map(blob.__getitem__, slices), strict=True))
        if glued:
            pieces = findall(restore(" " + " ".join(glued)))
            piece_bytes = list(map(packed_pieces(pieces).__getitem__, pieces))
            byte_end = dict(
                zip(accumulate(map(len, pieces)), accumulate(map(len, piece_bytes)), strict=True)
            )
            stretch_ends = accumulate(map(operator.add, map(len, glued), repeat(1)))
            ends = list(map(byte_end.__getitem__, stretch_ends))
            blob = b"".join(piece_bytes)
            slices = map(slice, [0, *ends[:-1]], ends)
            out.update(zip(glued, map(blob.__getitem__, slices), strict=True))

    def one(stretch: str) -> bytes:
        pieces = findall(stretch)
        return b"".join(map(packed_pieces(pieces).__getitem__, pieces))

    def encode(text: str) -> list[int]:
        parts = Segmenter.parts(text)
        if parts is None:
            raise ValueError("the text holds GLUED")
        new = set(islice(parts, 1, None))
        table: dict[str, bytes] = {}
        if "" in new:
            new.discard("")
            table[""] = one(" ")
        good = list(new)
        bad = list(map(_BAD_FIRST.__contains__, map(operator.itemgetter(0), good)))
        for p in compress(good, bad):
            table[p] = one(" " + restore(p))
        concatenated(list(compress(good, map(operator.not_, bad))), table)
        out = array("I", array("I", one(restore(parts[0]))) if parts[0] else ())
        out.frombytes(b"".join(map(table.__getitem__, islice(parts, 1, None))))
        return out.tolist()

    return encode


def timed_alternating(
    variants: list[tuple[str, Callable[[], object]]], repeat: int
) -> dict[str, tuple[float, object]]:
    """Median CPU time and last output of each variant, the variants run in turn."""
    times: dict[str, list[float]] = {name: [] for name, _ in variants}
    outs: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in variants:
            start = time.process_time()
            outs[name] = fn()
            times[name].append(time.process_time() - start)
    return {name: (statistics.median(times[name]), outs[name]) for name, _ in variants}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("text", type=Path)
    parser.add_argument("--model", type=Path, help="a saved bpeds model (else train one)")
    parser.add_argument("--vocab", type=int, default=32_768)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import bpeds
    from bpeds.tokenizer.formats import to_tiktoken

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
        ("segmented", lambda: segmented(text)),
        ("tiktoken encode", lambda: enc.encode(text)),
    ]
    segmented = segmented_encoder(findall, ranks, {})
    if tok.pattern not in PATTERNS.values() or GLUED in text:
        variants = [v for v in variants if v[0] != "segmented"]
    expected = tok.encode(text)
    print(f"{args.text}: {len(text.encode('utf-8')) / 1e6:.1f} MB, {len(expected):,} tokens")
    for name, (seconds, out) in timed_alternating(variants, args.repeat).items():
        same = "" if name == "findall" else ("same ids" if out == expected else "DIFFERENT ids")
        print(f"  {name:16} {seconds:7.3f} s  {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
