"""How much the slow property tests draw: their full budget under CI, a sample locally.

The Hypothesis profile is ``HYPOTHESIS_PROFILE`` if set, else ``ci`` when ``CI`` is set (as in
CI: derandomized) and ``dev`` otherwise (random, so every local run tries new inputs).
``examples(ci=..., local=...)`` is a test's ``max_examples``: the ``ci`` count under the ``ci``
and ``thorough`` profiles, the smaller ``local`` count under ``dev``. A test that had no count of
its own takes ``profile_examples(local=...)``: the profile's count (Hypothesis's 100 under ``ci``,
1000 under ``thorough``) in full runs, ``local`` under ``dev``. Tests that take no budget from
here draw the same number of examples everywhere.

``matrix(axis, ...)`` is a parametrization grid: the full cross product of its axes in full runs,
and locally a diagonal through it that takes every value of every axis at least once (the i-th
case takes the i-th value of each axis, wrapping round), so a local run still meets every score,
every tie rule, every variant, while CI meets every combination. The case ids are the same as
those of stacked ``@pytest.mark.parametrize`` decorators (the first axis first).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
#: True when tests run their full CI budget (every profile but the local default).
FULL = PROFILE != "dev"


def examples(*, ci: int, local: int) -> int:
    """``max_examples`` for this run: ``ci`` under CI (and ``thorough``), ``local`` under dev."""
    if not 0 < local <= ci:
        raise ValueError(f"need 0 < local <= ci, got local={local}, ci={ci}")
    return ci if FULL else local


def profile_examples(*, local: int) -> int:
    """``max_examples`` for this run: the loaded profile's own count in full runs, ``local`` under
    dev (for tests that draw the profile's default count under CI)."""
    if FULL:
        count: int = settings().max_examples  # the loaded profile's count
        return count
    if local <= 0:
        raise ValueError(f"need local > 0, got local={local}")
    return local


def matrix(*axes: Sequence[Any], ids: Sequence[Sequence[str]] | None = None) -> list[Any]:
    """``pytest.param`` cases for ``@pytest.mark.parametrize(("a", "b", ...), matrix(A, B, ...))``:
    every combination of the axes in full runs; under dev the diagonal, ``max(len(axis))``
    cases that together take every value of every axis. ``ids`` names each axis's values
    (default: ``str`` of each). The full product has ``prod(len(axis))`` cases."""
    if not axes or any(len(axis) == 0 for axis in axes):
        raise ValueError("matrix needs at least one axis, and no empty axis")
    names = ids if ids is not None else [[str(v) for v in axis] for axis in axes]
    if len(names) != len(axes) or any(len(n) != len(a) for n, a in zip(names, axes, strict=True)):
        raise ValueError("ids must name every value of every axis")
    picks = matrix_picks([len(axis) for axis in axes], full=FULL)
    return [
        pytest.param(
            *(axis[i] for axis, i in zip(axes, pick, strict=True)),
            id="-".join(n[i] for n, i in zip(names, pick, strict=True)),
        )
        for pick in picks
    ]


def matrix_picks(lengths: Sequence[int], *, full: bool) -> list[tuple[int, ...]]:
    """The index tuples ``matrix`` takes from axes of these lengths: the whole product when
    ``full``, else the diagonal ``(i % n0, i % n1, ...)`` for ``i < max(lengths)``."""
    if full:
        return list(itertools.product(*(range(n) for n in lengths)))
    return [tuple(i % n for n in lengths) for i in range(max(lengths))]
