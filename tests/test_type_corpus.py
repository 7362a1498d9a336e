"""TypeCorpus.from_counts: merging, order of first appearance, groups, and bad items."""

from __future__ import annotations

from typing import Any

import pytest

from bpeds.corpus import TypeCorpus
from bpeds.driver import train_merges


def test_equal_chunks_of_one_group_add_up_in_first_appearance_order() -> None:
    c = TypeCorpus.from_counts([(b"ab", 2), (b"cd", 1), (b"ab", 3), ([99, 100], 4)])
    assert c.num_types == 2
    assert c.num_tokens == 2 * 5 + 2 * 5
    same = TypeCorpus([b"ab"] * 5 + [b"cd"] * 5)
    assert [r.pair for r in train_merges(c, 3)] == [r.pair for r in train_merges(same, 3)]


def test_groups_keep_their_own_types() -> None:
    c = TypeCorpus.from_counts([(b"ab", 1, 0), (b"ab", 2, 1), (b"ab", 1, 1), (b"", 5, 2)])
    assert c.num_types == 2
    assert c.num_groups == 2  # the empty chunk of group 2 is dropped with its group
    assert c.num_tokens == 2 * 4


def test_group_zero_as_two_or_three_values_is_one_type() -> None:
    c = TypeCorpus.from_counts([(b"ab", 1), (b"ab", 2, 0)])  # type: ignore[arg-type]
    assert c.num_types == 1


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ((b"ab",), "got 1 values"),
        ((b"ab", 1, 0, 9), "got 4 values"),
        ((b"ab", 0), "count must be an int >= 1"),
        ((b"ab", -2), "count must be an int >= 1"),
        ((b"ab", 1.5), "count must be an int >= 1"),
        ((b"ab", "3"), "count must be an int >= 1"),
        ((b"ab", 1, -1), "group labels must be ints >= 0"),
        (([300], 1), "must hold bytes"),
    ],
)
def test_bad_items_are_refused_clearly(item: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TypeCorpus.from_counts([(b"ok", 1), item])


def test_a_str_chunk_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bytes or a sequence of ints"):
        TypeCorpus.from_counts([("text", 1)])  # type: ignore[arg-type]
