"""Our own statement of minbpe's training rule, used as an oracle.

minbpe is not on PyPI, so its rule is restated here from its documented
behaviour: each step counts the pairs of every chunk left to right into a dict
(overlapping: ``aaa`` holds ``(a, a)`` twice), takes the *first* pair with the
largest count in the dict's insertion order (Python's ``max`` returns the first
maximum), and replaces it left to right, non-overlapping, in every chunk. The
Basic tokenizer has one chunk (the whole text); the Regex tokenizer's chunks
are the split pattern's matches. Unlike minbpe this stops when no pair is left
instead of failing.
"""

from __future__ import annotations

import itertools

import regex


def _merge(ids: list[int], pair: tuple[int, int], new: int) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def minbpe_merges(text: str, num_merges: int, pattern: str | None) -> list[tuple[int, int]]:
    """minbpe's merges: Basic when ``pattern`` is None, Regex otherwise."""
    pieces = [text] if pattern is None else regex.findall(pattern, text)
    chunks = [list(p.encode("utf-8")) for p in pieces]
    merges: list[tuple[int, int]] = []
    for i in range(num_merges):
        stats: dict[tuple[int, int], int] = {}
        for ids in chunks:
            for pair in itertools.pairwise(ids):
                stats[pair] = stats.get(pair, 0) + 1
        if not stats:
            break
        best = max(stats, key=stats.__getitem__)
        chunks = [_merge(ids, best, 256 + i) for ids in chunks]
        merges.append(best)
    return merges
