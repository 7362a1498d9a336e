"""Benchmark the Multiset implementations and the lazy selection structures, BPE-shaped.

Usage::

    python benchmarks/bench_structures.py                       # sizes 1e3 1e4 1e5
    python benchmarks/bench_structures.py --sizes 1000 1000000 --repeat 3 --csv out.csv

Workload (generated once per size, deterministic, then replayed identically
against every implementation): ``n`` distinct pair-shaped keys with
Zipf-like initial counts (the key of rank r starts at ``max(1, n // r)``, so
most keys share the counts 1 and 2 and the tie rule matters), then rounds of
what a merge does: ``top()`` and ``pop()`` the best pair; for each of its
occurrences (at most ``--max-occurrences``), ``-1`` on a left and a right
neighbour pair drawn from six keys sampled from the 256 most frequent ones
(the left one Zipf-weighted; a neighbour already gone is skipped), and ``+1``
on the two new pairs made with the new token; a ``top()``
every ``--top-every`` updates. Every implementation must pop exactly the
keys the generator expected (the tie rule makes that deterministic), or the
benchmark stops.

Timing: ``time.perf_counter`` around the replay with the garbage collector
disabled, median of ``--repeat`` runs; the build (constructor with the
initial mapping) is timed separately. ``ratio`` is the replay time over the
fastest *baseline* (HeapqMultiset, SortedMultiset, CounterMultiset) at that
size: below 1 beats every baseline. The operation counters (sifts, stale
entries skipped, rebuilds, flushes/applied/netted) come from the last run
and do not depend on the machine. CounterMultiset (a linear scan per top)
only runs up to ``--counter-max`` keys.

A second workload, ``selection``, times the merge driver's *lazy selection*
structures, whose interface differs: they hold upper bounds and ask a
``current(key)`` callback (here ``truth.get`` over a dict of exact priorities)
for the top's exact priority. Same keys and initial counts; each round pops
the best key (it leaves), then applies one merge's changes, netted per key:
*falls* of the neighbour pairs (by one per occurrence; at 0 the key dies),
which the bound structures are **not** told; *births* of the new pairs and a
few *rises* of existing keys (one per ``--rise-every`` occurrences, by 1..8),
which they are told in one ``extend`` call. Structures: ``BoundHeap`` (parked,
the driver's default, and ``park=False``; both with a rebuild ``source``),
``MultisetBounds(HeapyKiYay)``, and two baselines told of *every* change:
``heapq-lazy`` (a C heapq of ``(-priority, key)``, a push per change, stale
entries skipped at the top) and ``HeapyKiYay-exact`` (``update``/``discard``
per change). Every structure must pop exactly the expected ``(key,
priority)`` sequence. ``ratio`` is the replay time over ``heapq-lazy``.

Two everyday workloads compare the heaps with what people would write
instead, ``heapq`` with lazy deletion (a push per change; stale entries
skipped when they surface) and ``sortedcontainers.SortedList`` (skipped if
not installed); every implementation must give exactly the same answer:

* ``dijkstra``: shortest distances from node 0 on a random directed graph
  (``--nodes`` 20,000 and ``--edges`` 100,000 by default: a ring plus random
  edges, weights 1..1000). The heaps use ``order="min"`` and ``update`` as
  decrease-key.
* ``leaderboard``: ``--board-keys`` 50,000 scores, ``--board-changes``
  200,000 changes (+1..+10 on heavy-tailed keys, one in five a fall), and a
  top-10 every ``--board-every`` 100 changes: ``add``/``remove`` and
  ``most_common(10)`` for the heaps; pop-until-10-live-then-push-back for
  ``heapq``; ``islice`` of the first 10 for ``SortedList``.

These two alternate the implementations within each repetition (one round
runs each once), so a change of the machine's load hits every peer alike;
``ratio`` there is the median time over ``heapq-lazy``'s, and the counters
column adds each one's fastest run.
"""

from __future__ import annotations

import argparse
import csv
import gc
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import Any

from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
from bpeds.structures.batched import Batched
from bpeds.structures.bound_heap import BoundHeap, MultisetBounds
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.lazyheap import LazyHeap

Key = tuple[int, int]

IMPLEMENTATIONS: dict[str, Callable[[dict[Key, int]], Any]] = {
    "Heapy": lambda initial: Heapy(initial),
    "HeapyKiYay": lambda initial: HeapyKiYay(initial),
    "Batched(Heapy)": lambda initial: Batched(Heapy(initial)),
    "Batched(HeapyKiYay)": lambda initial: Batched(HeapyKiYay(initial)),
    "HeapqMultiset": lambda initial: HeapqMultiset(initial),
    "SortedMultiset": lambda initial: SortedMultiset(initial),
    "CounterMultiset": lambda initial: CounterMultiset(initial),
}
BASELINES = ("HeapqMultiset", "SortedMultiset", "CounterMultiset")


@dataclass
class Workload:
    """One size's initial counts and its rounds (segments of (is_add, key) between tops)."""

    n: int
    initial: dict[Key, int]
    rounds: list[list[list[tuple[bool, Key]]]]
    expected_pops: list[Key]
    updates: int = 0
    tops: int = 0


def make_workload(
    n: int, rounds: int, *, max_occurrences: int, top_every: int, seed: int
) -> Workload:
    """Generate the workload for ``n`` keys by simulating it on a HeapyKiYay (untimed)."""
    rng = random.Random(seed * 1_000_003 + n)
    keys = [(i >> 10, i & 1023) for i in range(n)]
    rng.shuffle(keys)
    initial = {key: max(1, n // (rank + 1)) for rank, key in enumerate(keys)}
    sim: HeapyKiYay[Key, int] = HeapyKiYay(initial)
    work = Workload(n, initial, [], [])
    next_token = 1 << 20
    pool: list[Key] = []
    for r in range(rounds):
        if not sim:
            break
        key, count = sim.pop()
        work.expected_pops.append(key)
        if r % 4 == 0:
            pool = [k for k, _ in sim.most_common(256)]
        new = next_token
        next_token += 1
        # The neighbours of this merge: six frequent keys (those still present are used).
        neighbours = rng.sample(pool, min(6, len(pool)))
        ops: list[tuple[bool, Key]] = []
        for _ in range(min(count, max_occurrences)):
            left = neighbours[min(int(rng.paretovariate(1.2)) - 1, len(neighbours) - 1)]
            right = rng.choice(neighbours)
            if sim.count(left) > 0:
                ops.append((False, left))
                sim.remove(left)
            ops.append((True, (left[0], new)))
            sim.add((left[0], new))
            if sim.count(right) > 0:
                ops.append((False, right))
                sim.remove(right)
            ops.append((True, (new, right[1])))
            sim.add((new, right[1]))
        segments = [ops[i : i + top_every] for i in range(0, len(ops), top_every)] or [[]]
        work.rounds.append(segments)
        work.updates += len(ops)
        work.tops += 1 + len(segments)
    return work


def replay(ms: Any, work: Workload) -> list[Key]:
    """Run the rounds on ``ms``; return the popped keys."""
    top = ms.top
    pop = ms.pop
    add = ms.add
    remove = ms.remove
    popped: list[Key] = []
    push = popped.append
    for segments in work.rounds:
        top()
        push(pop()[0])
        for segment in segments:
            for is_add, key in segment:
                if is_add:
                    add(key)
                else:
                    remove(key)
            top()
    return popped


def counters(ms: Any) -> str:
    """The operation counters of ``ms`` (and of its inner multiset, if batched)."""
    parts = []
    for name in ("sifts", "stale_skipped", "rebuilds", "flushes", "applied", "netted"):
        if hasattr(ms, name):
            parts.append(f"{name}={getattr(ms, name)}")
    inner = getattr(ms, "inner", None)
    if inner is not None and hasattr(inner, "sifts"):
        parts.append(f"inner.sifts={inner.sifts}")
    return " ".join(parts)


@dataclass
class Result:
    n: int
    name: str
    build_s: float
    run_s: float
    counters: str
    ratio: float = float("nan")
    runs: list[float] = field(default_factory=list)


def measure(name: str, work: Workload, repeat: int) -> Result:
    """Median build and replay times of one implementation on one workload."""
    factory = IMPLEMENTATIONS[name]
    builds: list[float] = []
    runs: list[float] = []
    last: Any = None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            ms = factory(work.initial)
            t1 = time.perf_counter()
            popped = replay(ms, work)
            t2 = time.perf_counter()
        finally:
            gc.enable()
        if popped != work.expected_pops:
            first = next(
                i
                for i, (a, b) in enumerate(zip(popped, work.expected_pops, strict=False))
                if a != b
            )
            raise RuntimeError(f"{name} popped a different key at round {first}: not exact")
        builds.append(t1 - t0)
        runs.append(t2 - t1)
        last = ms
    return Result(
        work.n, name, statistics.median(builds), statistics.median(runs), counters(last), runs=runs
    )


# -- the selection workload -------------------------------------------------------------------

Change = tuple[int, int | None]  # (key, new priority); None: the key died


@dataclass
class Selection:
    """One size's initial counts, its rounds (falls, rises) and the pops they must give."""

    n: int
    initial: dict[int, int]
    rounds: list[tuple[list[Change], list[tuple[int, int]]]]
    expected: list[tuple[int, int]]
    falls: int = 0
    deaths: int = 0
    rises: int = 0


def make_selection(
    n: int, rounds: int, *, max_occurrences: int, rise_every: int, seed: int
) -> Selection:
    """Generate the selection workload for ``n`` keys, simulated exactly on a HeapyKiYay."""
    rng = random.Random(seed * 1_000_003 + n + 1)
    keys = list(range(n))
    rng.shuffle(keys)
    initial = {key: max(1, n // (rank + 1)) for rank, key in enumerate(keys)}
    truth = dict(initial)
    sim: HeapyKiYay[int, int] = HeapyKiYay(initial)
    work = Selection(n, initial, [], [])
    next_key = n
    pool: list[int] = []
    for r in range(rounds):
        if not sim:
            break
        key, count = sim.pop()
        del truth[key]
        work.expected.append((key, count))
        if r % 4 == 0:
            pool = [k for k, _ in sim.most_common(256)]
        live_pool = [k for k in pool if k in truth]
        neighbours = rng.sample(live_pool, min(6, len(live_pool)))
        delta: dict[int, int] = {}  # existing keys: net change this round
        born: dict[int, int] = {}  # new keys: their count
        new_keys: dict[tuple[int, int], int] = {}
        for occ in range(min(count, max_occurrences)):
            if not neighbours:
                break
            left = neighbours[min(int(rng.paretovariate(1.2)) - 1, len(neighbours) - 1)]
            right = rng.choice(neighbours)
            for side, nb in ((0, left), (1, right)):
                if truth[nb] + delta.get(nb, 0) > 0:
                    delta[nb] = delta.get(nb, 0) - 1
                nk = new_keys.get((side, nb))
                if nk is None:
                    nk = new_keys[(side, nb)] = next_key
                    next_key += 1
                born[nk] = born.get(nk, 0) + 1
            if rise_every and occ % rise_every == rise_every - 1:
                up = keys[min(int(rng.paretovariate(0.8)), n - 1)]  # mostly low-count keys
                if up in truth:
                    delta[up] = delta.get(up, 0) + rng.randint(1, 8)
        falls: list[Change] = []
        rises: list[tuple[int, int]] = []
        for k, d in delta.items():
            v = truth[k] + d
            if v <= 0:
                falls.append((k, None))
                del truth[k]
                sim.discard(k)
                work.deaths += 1
            else:
                (rises if d > 0 else falls).append((k, v))
                truth[k] = v
                sim.update(k, v)
                if d < 0:
                    work.falls += 1
        for k, v in born.items():
            rises.append((k, v))
            truth[k] = v
            sim.update(k, v)
        work.rises += len(rises)
        work.rounds.append((falls, rises))
    return work


class _Bounds:
    """A bound structure: told of rises only (one ``extend``), falls left to ``current``."""

    def __init__(self, select: Any) -> None:
        self.select = select
        self.pop = select.pop

    def changed(self, falls: list[Change], rises: list[tuple[int, int]]) -> None:
        self.select.extend(rises)

    def counters(self) -> str:
        parked = getattr(self.select, "parked", None)
        extra = f" parked={parked()}" if parked is not None else ""
        return f"entries={len(self.select)}{extra}"


class _HeapqLazy:
    """The baseline: a C heapq of ``(-priority, key)``, a push per change, stale entries
    (priority no longer the key's) skipped at the top."""

    def __init__(self, truth: dict[int, int]) -> None:
        self.truth = truth
        self.heap = [(-p, k) for k, p in truth.items()]
        heapify(self.heap)
        self.stale = 0

    def pop(self) -> tuple[int, int] | None:
        heap, get = self.heap, self.truth.get
        while heap:
            neg, k = heappop(heap)
            if get(k) == -neg:
                return k, -neg
            self.stale += 1
        return None

    def changed(self, falls: list[Change], rises: list[tuple[int, int]]) -> None:
        heap = self.heap
        for k, v in falls:
            if v is not None:
                heappush(heap, (-v, k))
        for k, v in rises:
            heappush(heap, (-v, k))

    def counters(self) -> str:
        return f"entries={len(self.heap)} stale_skipped={self.stale}"


class _Exact:
    """The baseline: a HeapyKiYay holding exact priorities, updated on every change."""

    def __init__(self, truth: dict[int, int]) -> None:
        self.ms: HeapyKiYay[int, int] = HeapyKiYay(truth)

    def pop(self) -> tuple[int, int] | None:
        return self.ms.pop() if self.ms else None

    def changed(self, falls: list[Change], rises: list[tuple[int, int]]) -> None:
        update, discard = self.ms.update, self.ms.discard
        for k, v in falls:
            if v is None:
                discard(k)
            else:
                update(k, v)
        for k, v in rises:
            update(k, v)

    def counters(self) -> str:
        return f"entries={len(self.ms)} sifts={self.ms.sifts}"


def _source(truth: dict[int, int]) -> Callable[[], Iterable[tuple[int, int]]]:
    return lambda: truth.items()


SELECTORS: dict[str, Callable[[dict[int, int]], Any]] = {
    "BoundHeap": lambda t: _Bounds(BoundHeap(t.get, t.items(), source=_source(t))),
    "BoundHeap(park=False)": lambda t: _Bounds(
        BoundHeap(t.get, t.items(), park=False, source=_source(t))
    ),
    "MultisetBounds(HeapyKiYay)": lambda t: _Bounds(MultisetBounds(HeapyKiYay(), t.get, t.items())),
    "heapq-lazy": _HeapqLazy,
    "HeapyKiYay-exact": _Exact,
}
SELECTION_BASELINE = "heapq-lazy"


def replay_selection(sel: Any, truth: dict[int, int], work: Selection) -> list[tuple[int, int]]:
    """Run the rounds on ``sel`` (built over ``truth``); return the pops."""
    pop = sel.pop
    changed = sel.changed
    popped: list[tuple[int, int]] = []
    push = popped.append
    for falls, rises in work.rounds:
        best = pop()
        if best is None:
            break
        push(best)
        del truth[best[0]]
        for k, v in falls:
            if v is None:
                del truth[k]
            else:
                truth[k] = v
        for k, v in rises:
            truth[k] = v
        changed(falls, rises)
    return popped


def measure_selection(name: str, work: Selection, repeat: int) -> Result:
    """Median build and replay times of one selection structure on one workload."""
    factory = SELECTORS[name]
    builds: list[float] = []
    runs: list[float] = []
    last: Any = None
    for _ in range(repeat):
        truth = dict(work.initial)
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            sel = factory(truth)
            t1 = time.perf_counter()
            popped = replay_selection(sel, truth, work)
            t2 = time.perf_counter()
        finally:
            gc.enable()
        if popped != work.expected:
            first = next(
                (i for i, (a, b) in enumerate(zip(popped, work.expected, strict=False)) if a != b),
                min(len(popped), len(work.expected)),
            )
            raise RuntimeError(f"{name} popped a different key at round {first}: not exact")
        builds.append(t1 - t0)
        runs.append(t2 - t1)
        last = sel
    return Result(
        work.n,
        name,
        statistics.median(builds),
        statistics.median(runs),
        last.counters(),
        runs=runs,
    )


# -- the everyday workloads: Dijkstra and a top-k leaderboard --------------------------------
#
# What people reach for instead of a position-aware heap: ``heapq`` with lazy deletion (push a
# new entry on every change, skip stale ones when they surface) and ``SortedList``. Each
# implementation below is written the way its users would write it, and must give exactly the
# answer of the others.

Graph = list[list[tuple[int, int]]]


def make_graph(nodes: int, edges: int, seed: int) -> Graph:
    """A random directed graph: a ring (so every node is reachable) plus random edges, weights
    1..1000; deterministic for a seed."""
    rng = random.Random(seed * 7_919 + nodes)
    adj: Graph = [[] for _ in range(nodes)]
    for u in range(nodes):
        adj[u].append(((u + 1) % nodes, rng.randint(1, 1000)))
    for _ in range(edges - nodes):
        adj[rng.randrange(nodes)].append((rng.randrange(nodes), rng.randint(1, 1000)))
    return adj


def dijkstra_heapq(adj: Graph, src: int) -> dict[int, int]:
    """Textbook ``heapq`` Dijkstra: push on every relaxation, skip stale pops."""
    dist: dict[int, int] = {}
    best = {src: 0}
    heap = [(0, src)]
    while heap:
        d, u = heappop(heap)
        if u in dist:
            continue
        dist[u] = d
        for v, w in adj[u]:
            nd = d + w
            if nd < best.get(v, 1 << 62):
                best[v] = nd
                heappush(heap, (nd, v))
    return dist


def dijkstra_sortedlist(adj: Graph, src: int) -> dict[int, int]:
    """Dijkstra over a ``SortedList`` of (distance, node): decrease-key is remove + add."""
    from sortedcontainers import SortedList

    dist: dict[int, int] = {}
    best = {src: 0}
    queue = SortedList([(0, src)])
    while queue:
        d, u = queue.pop(0)
        dist[u] = d
        for v, w in adj[u]:
            if v in dist:
                continue
            nd = d + w
            old = best.get(v)
            if old is None or nd < old:
                if old is not None:
                    queue.remove((old, v))
                best[v] = nd
                queue.add((nd, v))
    return dist


def dijkstra_multiset(make: Callable[[], Any], sign: int) -> Callable[[Graph, int], dict[int, int]]:
    """Dijkstra over a Multiset: ``update`` is decrease-key, ``pop`` the next node.

    ``sign`` is 1 for a min-ordered multiset, -1 for a max-heap fed negated distances.
    """

    def run(adj: Graph, src: int) -> dict[int, int]:
        dist: dict[int, int] = {}
        best = {src: 0}
        queue = make()
        queue.update(src, 0)
        update = queue.update
        pop = queue.pop
        while queue:
            u, d = pop()
            d *= sign
            dist[u] = d
            for v, w in adj[u]:
                nd = d + w
                if nd < best.get(v, 1 << 62):
                    best[v] = nd
                    update(v, sign * nd)
        return dist

    return run


DIJKSTRA: dict[str, Callable[[Graph, int], dict[int, int]]] = {
    "heapq-lazy": dijkstra_heapq,
    "HeapyKiYay(order=min)": dijkstra_multiset(lambda: HeapyKiYay(order="min"), 1),
    "Heapy(order=min)": dijkstra_multiset(lambda: Heapy(order="min"), 1),
    "LazyHeap(order=min)": dijkstra_multiset(lambda: LazyHeap(order="min"), 1),
    "SortedList": dijkstra_sortedlist,
}


@dataclass
class Leaderboard:
    """Keys with initial scores, then a stream of score changes with a top-k query every few."""

    initial: dict[int, int]
    changes: list[tuple[int, int]]  # (key, delta): delta > 0 adds, < 0 removes
    every: int
    k: int


def make_leaderboard(keys: int, changes: int, every: int, k: int, seed: int) -> Leaderboard:
    """Scores 1..1000; changes mostly rises (+1..+10) on Zipf-ish keys, one in five a fall
    (never below 1, so every key stays on the board)."""
    rng = random.Random(seed * 104_729 + keys)
    initial = {key: rng.randint(1, 1000) for key in range(keys)}
    score = dict(initial)
    out: list[tuple[int, int]] = []
    for _ in range(changes):
        key = min(int(rng.paretovariate(0.6)) - 1, keys - 1)
        key = (key * 7_919) % keys
        delta = rng.randint(1, 10)
        if rng.random() < 0.2 and score[key] > delta:
            delta = -delta
        score[key] += delta
        out.append((key, delta))
    return Leaderboard(initial, out, every, k)


def board_heapq(work: Leaderboard) -> list[list[tuple[int, int]]]:
    """``heapq`` with lazy deletion: a push per change; top-k pops until k live entries, then
    pushes them back; rebuilt from the scores when stale entries outnumber live ones 2:1."""
    score = dict(work.initial)
    heap = [(-s, key) for key, s in score.items()]
    heapify(heap)
    every, k = work.every, work.k
    answers = []
    for i, (key, delta) in enumerate(work.changes, 1):
        s = score[key] + delta
        score[key] = s
        heappush(heap, (-s, key))
        if len(heap) > 3 * len(score) + 64:
            heap = [(-s, key) for key, s in score.items()]
            heapify(heap)
        if i % every == 0:
            top: list[tuple[int, int]] = []
            while len(top) < k and heap:
                neg, key2 = heappop(heap)
                if score[key2] == -neg and (not top or top[-1][0] != key2):
                    top.append((key2, -neg))
            for key2, s2 in top:
                heappush(heap, (-s2, key2))
            answers.append(top)
    return answers


def board_sortedlist(work: Leaderboard) -> list[list[tuple[int, int]]]:
    """A ``SortedList`` of (-score, key): a change is remove + add, top-k the first k."""
    from sortedcontainers import SortedList

    score = dict(work.initial)
    board = SortedList((-s, key) for key, s in score.items())
    every, k = work.every, work.k
    answers = []
    for i, (key, delta) in enumerate(work.changes, 1):
        s = score[key]
        board.remove((-s, key))
        score[key] = s + delta
        board.add((-s - delta, key))
        if i % every == 0:
            answers.append([(key2, -neg) for neg, key2 in board.islice(0, k)])
    return answers


def board_multiset(make: Callable[[dict[int, int]], Any]) -> Callable[[Leaderboard], Any]:
    """A Multiset leaderboard: ``add``/``remove`` per change, ``most_common(k)`` per query."""

    def run(work: Leaderboard) -> list[list[tuple[int, int]]]:
        board = make(work.initial)
        add, remove, most_common = board.add, board.remove, board.most_common
        every, k = work.every, work.k
        answers = []
        for i, (key, delta) in enumerate(work.changes, 1):
            if delta > 0:
                add(key, delta)
            else:
                remove(key, -delta)
            if i % every == 0:
                answers.append(most_common(k))
        return answers

    return run


LEADERBOARD: dict[str, Callable[[Leaderboard], list[list[tuple[int, int]]]]] = {
    "heapq-lazy": board_heapq,
    "HeapyKiYay": board_multiset(lambda initial: HeapyKiYay(initial)),
    "Heapy": board_multiset(lambda initial: Heapy(initial)),
    "LazyHeap": board_multiset(lambda initial: LazyHeap(initial)),
    "Batched(HeapyKiYay)": board_multiset(lambda initial: Batched(HeapyKiYay(initial))),
    "SortedList": board_sortedlist,
}
EVERYDAY_BASELINE = "heapq-lazy"


def _interleaved(
    fns: dict[str, Callable[[], Any]], repeat: int, what: str
) -> list[tuple[str, list[float], Any]]:
    """Time every function ``repeat`` times, alternating (one round = each function once), so a
    change of the machine's load hits every peer alike; check they all return the same answer.
    """
    runs: dict[str, list[float]] = {name: [] for name in fns}
    answers: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                out = fn()
                runs[name].append(time.perf_counter() - t0)
            finally:
                gc.enable()
            answers[name] = out
    first = next(iter(answers.values()), None)
    for name, out in answers.items():
        if out != first:
            raise RuntimeError(f"{what}: {name} gave another answer than {next(iter(answers))}")
    return [(name, runs[name], answers[name]) for name in fns]


def _have_sortedcontainers() -> bool:
    try:
        import sortedcontainers  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def _chosen(table: dict[str, Any], args: argparse.Namespace) -> list[str]:
    return [
        name
        for name in table
        if (not args.only or name in args.only)
        and (name != "SortedList" or _have_sortedcontainers())
    ]


def _rows(n: int, timed: list[tuple[str, list[float], Any]], count: str) -> list[Result]:
    rows = []
    for name, runs, out in timed:
        median = statistics.median(runs)
        rows.append(
            Result(
                n, name, 0.0, median, f"{count}={len(out)} min_ms={min(runs) * 1e3:.1f}", runs=runs
            )
        )
        print(f"  {name}: {median * 1e3:.1f} ms (min {min(runs) * 1e3:.1f})", file=sys.stderr)
    _ratios(rows)
    return rows


def _dijkstra_rows(args: argparse.Namespace) -> list[Result]:
    adj = make_graph(args.nodes, args.edges, args.seed)
    print(f"dijkstra: {args.nodes} nodes, {args.edges} edges", file=sys.stderr)
    fns = {name: (lambda fn=DIJKSTRA[name]: fn(adj, 0)) for name in _chosen(DIJKSTRA, args)}
    return _rows(args.nodes, _interleaved(fns, args.repeat, "dijkstra"), "reached")


def _leaderboard_rows(args: argparse.Namespace) -> list[Result]:
    work = make_leaderboard(args.board_keys, args.board_changes, args.board_every, 10, args.seed)
    print(
        f"leaderboard: {args.board_keys} keys, {args.board_changes} changes, "
        f"top-10 every {args.board_every}",
        file=sys.stderr,
    )
    fns = {name: (lambda fn=LEADERBOARD[name]: fn(work)) for name in _chosen(LEADERBOARD, args)}
    return _rows(args.board_keys, _interleaved(fns, args.repeat, "leaderboard"), "queries")


def _ratios(rows: list[Result]) -> None:
    base = [r.run_s for r in rows if r.name == EVERYDAY_BASELINE]
    if base:
        for r in rows:
            r.ratio = r.run_s / base[0]


def _print_table(results: list[Result], versus: str) -> None:
    print(f"| n | structure | build ms | run ms | vs {versus} | counters |")
    print("|---:|---|---:|---:|---:|---|")
    for r in results:
        ratio = "n/a" if math.isnan(r.ratio) else f"{r.ratio:.2f}x"
        print(
            f"| {r.n} | {r.name} | {r.build_s * 1e3:.1f} | {r.run_s * 1e3:.1f} "
            f"| {ratio} | {r.counters} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per cell (median)")
    parser.add_argument("--rounds", type=int, default=1000, help="merge rounds (at most n/4)")
    parser.add_argument("--max-occurrences", type=int, default=64)
    parser.add_argument("--top-every", type=int, default=128, help="updates between top()s")
    parser.add_argument("--counter-max", type=int, default=10_000)
    parser.add_argument(
        "--workloads",
        nargs="+",
        choices=["multiset", "selection", "dijkstra", "leaderboard"],
        default=["multiset", "selection", "dijkstra", "leaderboard"],
        help="which workloads to run (default: all four)",
    )
    parser.add_argument("--nodes", type=int, default=20_000, help="dijkstra: graph nodes")
    parser.add_argument("--edges", type=int, default=100_000, help="dijkstra: graph edges")
    parser.add_argument("--board-keys", type=int, default=50_000, help="leaderboard: keys")
    parser.add_argument(
        "--board-changes", type=int, default=200_000, help="leaderboard: score changes"
    )
    parser.add_argument(
        "--board-every", type=int, default=100, help="leaderboard: changes between top-10s"
    )
    parser.add_argument(
        "--rise-every",
        type=int,
        default=8,
        help="selection: one rise of an existing key per this many occurrences (0: none)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted({*IMPLEMENTATIONS, *SELECTORS, *DIJKSTRA, *LEADERBOARD}),
        default=None,
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", metavar="OUT", default=None, help="also write the rows as CSV")
    args = parser.parse_args(argv)
    if args.repeat < 1 or any(n < 4 for n in args.sizes):
        parser.error("--repeat must be >= 1 and every size >= 4")
    if args.nodes < 2 or args.edges < args.nodes or args.board_keys < 10 or args.board_every < 1:
        parser.error(
            "need --nodes >= 2, --edges >= --nodes, --board-keys >= 10, --board-every >= 1"
        )

    results: list[Result] = []
    selection: list[Result] = []
    for n in args.sizes if {"multiset", "selection"} & set(args.workloads) else []:
        rounds = min(args.rounds, n // 4)
        if "multiset" in args.workloads:
            results.extend(_multiset_row(n, rounds, args))
        if "selection" in args.workloads:
            selection.extend(_selection_row(n, rounds, args))

    everyday: list[tuple[str, list[Result]]] = []
    if "dijkstra" in args.workloads:
        everyday.append(("dijkstra", _dijkstra_rows(args)))
    if "leaderboard" in args.workloads:
        everyday.append(("leaderboard", _leaderboard_rows(args)))

    tables = [("multiset", results, "best baseline"), ("selection", selection, SELECTION_BASELINE)]
    tables += [(name, rows, EVERYDAY_BASELINE) for name, rows in everyday]
    printed = False
    for name, rows, versus in tables:
        if rows:
            if printed:
                print()
            print(f"{name}:")
            _print_table(rows, versus)
            printed = True
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(
                ["n", "structure", "build_s", "run_s", "ratio", "runs", "counters", "workload"]
            )
            for workload, rows, _ in tables:
                for r in rows:
                    writer.writerow(
                        [
                            r.n,
                            r.name,
                            f"{r.build_s:.6f}",
                            f"{r.run_s:.6f}",
                            f"{r.ratio:.4f}",
                            " ".join(f"{t:.6f}" for t in r.runs),
                            r.counters,
                            workload,
                        ]
                    )
    return 0


def _multiset_row(n: int, rounds: int, args: argparse.Namespace) -> list[Result]:
    work = make_workload(
        n, rounds, max_occurrences=args.max_occurrences, top_every=args.top_every, seed=args.seed
    )
    print(
        f"n={n}: {len(work.rounds)} rounds, {work.updates} updates, {work.tops} tops",
        file=sys.stderr,
    )
    names = [m for m in args.only or IMPLEMENTATIONS if m in IMPLEMENTATIONS]
    row: list[Result] = []
    for name in names:
        if name == "CounterMultiset" and n > args.counter_max:
            continue
        row.append(measure(name, work, args.repeat))
        print(f"  {name}: {row[-1].run_s * 1e3:.1f} ms", file=sys.stderr)
    base = [r.run_s for r in row if r.name in BASELINES]
    if base:
        for r in row:
            r.ratio = r.run_s / min(base)
    return row


def _selection_row(n: int, rounds: int, args: argparse.Namespace) -> list[Result]:
    work = make_selection(
        n, rounds, max_occurrences=args.max_occurrences, rise_every=args.rise_every, seed=args.seed
    )
    print(
        f"n={n} (selection): {len(work.rounds)} pops, {work.falls} falls and {work.deaths} "
        f"deaths (not told), {work.rises} rises (told)",
        file=sys.stderr,
    )
    names = [m for m in args.only or SELECTORS if m in SELECTORS]
    row = []
    for name in names:
        row.append(measure_selection(name, work, args.repeat))
        print(f"  {name}: {row[-1].run_s * 1e3:.1f} ms", file=sys.stderr)
    base = [r.run_s for r in row if r.name == SELECTION_BASELINE]
    if base:
        for r in row:
            r.ratio = r.run_s / base[0]
    return row


if __name__ == "__main__":
    raise SystemExit(main())
