"""A small type-mode BPE trainer whose techniques are switches (own code, not bpeds).

bpeds has no switch for some techniques (packed pair keys, windowed updates,
``array('I')`` storage, batched deltas): its type mode always packs pair keys
into one int, updates counts in a window around each merge site, stores each
type as a ``list[int]`` and nets a merge's count changes in one dict before
applying them. This script re-implements that core loop (what
``bpeds.corpus._TypeRun.merge`` and the driver's one-pass update do, in one
function) so that each technique can be switched off, one at a time, and
measured against the same baseline:

- ``keys``: ``packed`` (``a << 32 | b``, the baseline) or ``tuple`` (``(a, b)``);
- ``update``: ``windowed`` (change only the pairs next to each merge site) or
  ``recount`` (recount every pair of each changed type, before and after);
- ``storage``: ``list`` or ``array`` (``array('I')`` per type);
- ``deltas``: ``batched`` (one dict of net changes per merge, applied once per
  key) or ``direct`` (every change goes straight into the global counts, and
  the keys that rose are remembered in a set).

So that a switch costs nothing in the other variants, :func:`_template` is
specialised before it runs: the switch names become the constants ``True``
or ``False`` (CPython drops the dead branches when it compiles) and ``KEY(x,
y)`` becomes the key expression itself, inline, as bpeds writes it.

Every variant is exact and gives the same merges (highest count, ties to the
smallest ids, as bpeds' ``smallest_ids``), which the suite checks. Selection
is a ``heapq`` max-heap with lazy entries (a count that rose is pushed, one that
fell is fixed when it surfaces); the pair -> types index is an append-only
list per pair, de-duplicated and checked on use.

Usage: ``python benchmarks/ablations/type_trainer.py SPEC_JSON`` with ``file``,
``vocab``, the switches and optionally ``out`` (merge list); prints one JSON
report (``prep``: read, split with the GPT-2 pattern, count; ``merge``: the
loop). Not handled: sequence mode, other tie rules, non-overlapping counts.
"""

from __future__ import annotations

import heapq
import inspect
import json
import re
import sys
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable
from itertools import pairwise
from pathlib import Path
from typing import Any

import regex

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import ChildTimer, peak_rss_mib

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Placeholders, replaced in the specialised source (these values only let the
# template be imported and type-checked as it is).
PACKED = WINDOWED = AS_ARRAY = BATCHED = True


def KEY(a: int, b: int) -> Any:  # noqa: N802 - a macro, inlined when specialised
    return (a << 32) | b


Train = Callable[[list[bytes], list[int], int], list[tuple[int, int]]]


def _template(types: list[bytes], counts: list[int], merges: int) -> list[tuple[int, int]]:
    words: list[Any] = [array("I", list(t)) if AS_ARRAY else list(t) for t in types]
    pair_counts: defaultdict[Hashable, int] = defaultdict(int)
    index: defaultdict[Hashable, list[int]] = defaultdict(list)
    for t, w in enumerate(words):
        c = counts[t]
        for x, y in pairwise(w):
            k = KEY(x, y)
            pair_counts[k] += c
            index[k].append(t)
    heap: list[tuple[int, Any]] = [(-c, k) for k, c in pair_counts.items()]
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop
    out: list[tuple[int, int]] = []
    while len(out) < merges and heap:
        negc, k = pop(heap)
        current = pair_counts.get(k, 0)
        if current != -negc:  # stale: the count fell since this entry was pushed
            if current > 0:
                push(heap, (-current, k))
            continue
        a, b = (k >> 32, k & 0xFFFFFFFF) if PACKED else k
        new = 256 + len(out)
        out.append((a, b))
        d: defaultdict[Hashable, int] = defaultdict(int) if BATCHED else pair_counts
        rose: set[Hashable] = set()
        fresh: defaultdict[Hashable, list[int]] = defaultdict(list)
        for t in dict.fromkeys(index.pop(k)):  # unique, in order; stale entries find no site
            w = words[t]
            c = counts[t]
            res: list[int] = []
            i, n, sites = 0, len(w), 0
            while i < n:
                if w[i] == a and i + 1 < n and w[i + 1] == b:
                    if WINDOWED:
                        if res:
                            p = res[-1]
                            d[KEY(p, a)] -= c
                            k2 = KEY(p, new)
                            d[k2] += c
                            fresh[k2].append(t)
                            if not BATCHED:
                                rose.add(k2)
                        if i + 2 < n:
                            q = w[i + 2]
                            d[KEY(b, q)] -= c
                            k2 = KEY(new, q)
                            d[k2] += c
                            fresh[k2].append(t)
                            if not BATCHED:
                                rose.add(k2)
                    res.append(new)
                    sites += 1
                    i += 2
                else:
                    res.append(w[i])
                    i += 1
            if not sites:
                continue
            if WINDOWED:
                d[k] -= sites * c
            else:
                for x, y in pairwise(w):
                    d[KEY(x, y)] -= c
                for x, y in pairwise(res):
                    k2 = KEY(x, y)
                    d[k2] += c
                    if not BATCHED:
                        rose.add(k2)
                    if x == new or y == new:
                        fresh[k2].append(t)
            words[t] = array("I", res) if AS_ARRAY else res
        if BATCHED:
            for k2, dv in d.items():
                if dv > 0:
                    c2 = pair_counts[k2] + dv
                    pair_counts[k2] = c2
                    push(heap, (-c2, k2))
                elif dv < 0:
                    c2 = pair_counts[k2] + dv
                    if c2:
                        pair_counts[k2] = c2
                    else:
                        del pair_counts[k2]
        else:
            for k2 in rose:
                c2 = pair_counts[k2]
                if c2 > 0:
                    push(heap, (-c2, k2))
        pair_counts.pop(k, None)
        for k2, ts in fresh.items():
            index[k2].extend(ts)
    return out


def specialise(opts: dict[str, Any]) -> Train:
    """:func:`_template` with the switches of ``opts`` compiled in."""
    flags = {
        "PACKED": opts.get("keys", "packed") == "packed",
        "WINDOWED": opts.get("update", "windowed") == "windowed",
        "AS_ARRAY": opts.get("storage", "list") == "array",
        "BATCHED": opts.get("deltas", "batched") == "batched",
    }
    source = inspect.getsource(_template)
    for name, value in flags.items():
        source = re.sub(rf"\b{name}\b", str(value), source)
    key = r"((\1) << 32 | (\2))" if flags["PACKED"] else r"((\1), (\2))"
    source = re.sub(r"\bKEY\(([^,()]+), ([^()]+?)\)", key, source)
    namespace: dict[str, Any] = {}
    exec(compile(source, __file__, "exec"), globals(), namespace)
    fn: Train = namespace["_template"]
    return fn


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    start = time.perf_counter()
    train = specialise(spec)
    timer = ChildTimer()
    text = Path(spec["file"]).read_text(encoding="utf-8")
    counted = Counter(regex.compile(GPT2).findall(text))
    types = [p.encode("utf-8") for p in counted]
    counts = list(counted.values())
    del text, counted
    timer.mark("prep")
    merges = train(types, counts, spec["vocab"] - 256)
    timer.mark("merge")
    timer.finish()
    table = [bytes((i,)) for i in range(256)]
    for a, b in merges:
        table.append(table[a] + table[b])
    if spec.get("out"):
        Path(spec["out"]).write_text("".join(t.hex() + "\n" for t in table[256:]), "ascii")
    report: dict[str, Any] = timer.report()
    report["merges"] = len(merges)
    report["wall_child_total"] = time.perf_counter() - start
    report.setdefault("peak_rss_mib", peak_rss_mib())  # ChildTimer.finish() sets it
    report["peak_rss_end_mib"] = peak_rss_mib()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
