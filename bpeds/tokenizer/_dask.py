"""Counting on Dask: tasks on a ``distributed.Client``, partitions of a ``dask.bag``.

Imported by :func:`bpeds.count` only when it is given a Dask object, so that
bpeds never needs Dask otherwise (``pip install 'bpeds[dask]'`` brings it).
The counting functions are passed in (they live in :mod:`bpeds.tokenizer.executors`);
this module only places them on the cluster and adds their results up in a
tree, in order, so that the result is what counting one unit after the
other gives.

Not public API: :func:`bpeds.count` documents what it promises.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bpeds.tokenizer.counts import Counts, _sum_args, _sum_list

__all__ = ["count_bag", "count_on_client", "tree"]


def tree(parts: Sequence[Any], fanin: int, add: Callable[..., Any]) -> Any:
    """Add ``parts`` up ``fanin`` neighbours at a time, level by level, keeping their order.

    ``add(*group)`` makes one node of the next level (a task, on a cluster);
    a lone last part moves up unchanged. ``None`` for no parts.

    >>> tree(["a", "b", "c", "d", "e"], 2, lambda *xs: "(" + "".join(xs) + ")")
    '(((ab)(cd))e)'

    O(len(parts) / (fanin - 1)) calls of ``add``; depth ``ceil(log_fanin(len(parts)))``.
    """
    if fanin < 2:
        raise ValueError(f"fanin must be at least 2, got {fanin}")
    level = list(parts)
    if not level:
        return None
    while len(level) > 1:
        level = [
            add(*level[i : i + fanin]) if len(level[i : i + fanin]) > 1 else level[i]
            for i in range(0, len(level), fanin)
        ]
    return level[0]


def count_on_client(
    client: Any, tasks: Iterable[tuple[Callable[..., Counts], tuple[Any, ...]]], fanin: int
) -> Counts | None:
    """Submit every task to ``client``, add the results on the cluster in a tree, fetch one.

    A task that fails makes the sum fail with the task's own exception (Dask
    sends it back), which is raised here. A worker lost mid-task has its
    tasks run again by the scheduler; the tasks are pure functions of their
    files and arguments, so the result does not change.
    """
    futures = [client.submit(fn, *args, pure=False) for fn, args in tasks]

    def add(*parts: Any) -> Any:
        return client.submit(_sum_args, *parts, pure=False)

    top = tree(futures, fanin, add)
    if top is None:
        return None
    result = top.result()
    assert isinstance(result, Counts)
    return result


def count_bag(
    bag: Any,
    count_partition: Callable[..., Counts],
    reading: object,
    client: Any,
    fanin: int,
) -> Counts | None:
    """Count each partition of ``bag`` with ``count_partition(items, reading)`` and add the
    partitions' counts in order with Dask's tree reduction (``fanin`` at a time).

    Computed on ``client`` if one is given, else on the bag's default scheduler.
    """
    if bag.npartitions == 0:
        return None
    reduced = bag.reduction(
        functools.partial(count_partition, reading=reading),
        _sum_list,
        split_every=fanin,
    )
    result = client.compute(reduced).result() if client is not None else reduced.compute()
    assert isinstance(result, Counts)
    return result
