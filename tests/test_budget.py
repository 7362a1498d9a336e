"""The test budgets themselves: a local grid meets every value, a full one every combination."""

from __future__ import annotations

import itertools

import pytest

from tests.budget import examples, matrix, matrix_picks


@pytest.mark.parametrize("lengths", [(1,), (3,), (8, 4), (2, 3), (5, 7), (7, 5), (2, 3, 4)])
def test_the_local_diagonal_meets_every_value_of_every_axis(lengths: tuple[int, ...]) -> None:
    picks = matrix_picks(lengths, full=False)
    assert len(picks) == max(lengths)
    assert len(set(picks)) == len(picks)
    for axis, n in enumerate(lengths):
        assert {pick[axis] for pick in picks} == set(range(n))


@pytest.mark.parametrize("lengths", [(1,), (3,), (8, 4), (2, 3, 4)])
def test_the_full_grid_is_the_whole_product(lengths: tuple[int, ...]) -> None:
    picks = matrix_picks(lengths, full=True)
    assert picks == list(itertools.product(*(range(n) for n in lengths)))
    assert set(matrix_picks(lengths, full=False)) <= set(picks)


def test_matrix_cases_carry_stacked_parametrize_ids() -> None:
    cases = matrix(["a", "b"], [1, 2, 3], ids=[["A", "B"], ["one", "two", "three"]])
    for case in cases:
        letter, number = case.values
        assert case.id == f"{letter.upper()}-{['one', 'two', 'three'][number - 1]}"


def test_bad_budgets_and_grids_are_refused() -> None:
    with pytest.raises(ValueError, match="local <= ci"):
        examples(ci=3, local=4)
    with pytest.raises(ValueError, match="no empty axis"):
        matrix([1, 2], [])
    with pytest.raises(ValueError, match="every value"):
        matrix([1, 2], ids=[["one"]])
