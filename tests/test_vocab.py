"""Vocab: token bytes built on demand equal the plain recursive expansion, whatever the cache."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.vocab import Vocab, pack_pair, unpack_pair
from tests.budget import examples


def expand(vocab: Vocab, token: int) -> bytes:
    out = bytearray()
    stack = [token]
    while stack:
        t = stack.pop()
        parents = vocab.parents(t)
        if parents is None:
            out.append(t)
        else:
            stack += (parents[1], parents[0])
    return bytes(out)


@st.composite
def merge_lists(draw: st.DrawFn) -> list[tuple[int, int]]:
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 60))):
        top = 256 + len(merges)
        # Lean on recent ids so deep merge trees are common.
        pick = st.integers(max(0, top - 8), top - 1) | st.integers(0, top - 1)
        merges.append((draw(pick), draw(pick)))
    return merges


@settings(max_examples=examples(ci=150, local=25))
@given(merges=merge_lists(), cache_size=st.integers(0, 5), order=st.randoms())
def test_token_bytes_equal_the_plain_expansion(
    merges: list[tuple[int, int]], cache_size: int, order: object
) -> None:
    vocab = Vocab(cache_size=cache_size)
    for left, right in merges:
        vocab.add(left, right)
    ids = list(range(len(vocab)))
    order.shuffle(ids)  # type: ignore[attr-defined]
    for t in ids:
        assert vocab.token_bytes(t) == expand(vocab, t)
        assert vocab.length(t) == len(expand(vocab, t))
    assert vocab.merges() == merges


def test_a_deep_chain_needs_no_recursion() -> None:
    vocab = Vocab(cache_size=2)
    t = ord("a")
    for _ in range(20000):
        t = vocab.add(t, ord("b"))
    assert vocab.token_bytes(t) == b"a" + b"b" * 20000


def test_bad_ids_are_refused_clearly() -> None:
    vocab = Vocab()
    with pytest.raises(ValueError, match="unknown token id"):
        vocab.token_bytes(256)
    with pytest.raises(ValueError, match="cannot merge"):
        vocab.add(0, 999)
    assert unpack_pair(pack_pair(300, 7)) == (300, 7)
