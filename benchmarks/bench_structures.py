"""Benchmark the Multiset implementations on a BPE-shaped workload.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
from bpeds.structures.batched import Batched
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per cell (median)")
    parser.add_argument("--rounds", type=int, default=1000, help="merge rounds (at most n/4)")
    parser.add_argument("--max-occurrences", type=int, default=64)
    parser.add_argument("--top-every", type=int, default=128, help="updates between top()s")
    parser.add_argument("--counter-max", type=int, default=10_000)
    parser.add_argument("--only", nargs="+", choices=list(IMPLEMENTATIONS), default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", metavar="OUT", default=None, help="also write the rows as CSV")
    args = parser.parse_args(argv)
    if args.repeat < 1 or any(n < 4 for n in args.sizes):
        parser.error("--repeat must be >= 1 and every size >= 4")

    results: list[Result] = []
    for n in args.sizes:
        rounds = min(args.rounds, n // 4)
        work = make_workload(
            n,
            rounds,
            max_occurrences=args.max_occurrences,
            top_every=args.top_every,
            seed=args.seed,
        )
        print(
            f"n={n}: {len(work.rounds)} rounds, {work.updates} updates, {work.tops} tops",
            file=sys.stderr,
        )
        names = args.only or list(IMPLEMENTATIONS)
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
        results.extend(row)

    print("| n | structure | build ms | run ms | vs best baseline | counters |")
    print("|---:|---|---:|---:|---:|---|")
    for r in results:
        ratio = "n/a" if math.isnan(r.ratio) else f"{r.ratio:.2f}x"
        print(
            f"| {r.n} | {r.name} | {r.build_s * 1e3:.1f} | {r.run_s * 1e3:.1f} "
            f"| {ratio} | {r.counters} |"
        )
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["n", "structure", "build_s", "run_s", "ratio", "runs", "counters"])
            for r in results:
                writer.writerow(
                    [
                        r.n,
                        r.name,
                        f"{r.build_s:.6f}",
                        f"{r.run_s:.6f}",
                        f"{r.ratio:.4f}",
                        " ".join(f"{t:.6f}" for t in r.runs),
                        r.counters,
                    ]
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
