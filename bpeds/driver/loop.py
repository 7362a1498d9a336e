"""The merge driver: one loop over a corpus representation, a selection structure and a score.

``MergeDriver(corpus, num_merges, score=..., tie=..., multiset=...)`` is an
iterable of :class:`MergeRecord`, one per merge, so a caller can stop, log or
plot as training goes. It stops cleanly (no exception) when no eligible pair
is left.

A step, as minbpe writes it, with its tricks behind two seams:

1. *Select.* The selection structure (a :class:`~bpeds.structures.BoundHeap`,
   or any :class:`~bpeds.structures.Multiset` through
   :class:`~bpeds.structures.MultisetBounds`) holds an upper bound of every
   eligible pair's priority and checks its top against the exact priority; the
   first exact top is the maximum (ties by the rule, which :mod:`bpeds.scoring.ties`
   encodes).
2. *Merge.* The corpus representation merges every non-overlapping occurrence,
   left to right, and reports the count changes grouped by neighbour token
   (:class:`~bpeds.corpus.MergeDeltas`); the driver applies them.
3. *Re-score* what the score's declarations say can have risen: the new pairs
   always; pairs whose count fell if ``count_fall_raises``; every pair of the
   merged tokens if a ``PARTS`` score's ``unigram_fall_raises``; everything if a
   ``GLOBAL`` score's ``totals_can_raise`` says so. A fall needs nothing: the
   stored bound still holds. A rise that was not declared is caught at the top
   and raised as :class:`~bpeds.errors.InvariantError` naming the score and the
   declaration that is wrong.

The driver never looks at a score's or a tie rule's class: ``is_count``,
``integer``, ``kernel()`` and the declarations above choose what is computed.
See ``docs/architecture.md`` for the layers and ``docs/scoring.md`` for the
exactness argument.

Costs per merge: O(occurrences) for the merge and count updates (in C for type
mode), O(log n) per pushed bound (O(1) when the heap parks it), plus the
re-scoring the score declares (``PARTS``: pairs of the merged tokens; ``GLOBAL``
when totals can raise: all pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, Counting, MergeDeltas
from bpeds.errors import InvariantError
from bpeds.scoring.base import Dependency, Score, Stats, Totals, declared
from bpeds.scoring.registry import get_score
from bpeds.scoring.strategies import Frequency
from bpeds.scoring.ties import TieRule, tie_rule
from bpeds.structures.bound_heap import BoundError, BoundHeap, MultisetBounds
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.protocols import Multiset
from bpeds.variants import Event, Variant, get_variant, make_token
from bpeds.vocab import BYTE_TOKENS, PAIR_MASK, PAIR_SHIFT, Vocab, pack_pair

__all__ = ["MergeDriver", "MergeRecord", "Progress", "train_merges"]

#: ``progress(done, total)``, called after each merge.
Progress = Callable[[int, int], None]

MultisetFactory = Callable[..., Multiset[int, Any]]


@dataclass(frozen=True, slots=True)
class MergeRecord:
    """One merge: ``pair`` became ``new_id``; it occurred ``count`` times and scored ``score``."""

    pair: tuple[int, int]
    new_id: int
    count: int
    score: Any


class MergeDriver:
    """Learn up to ``num_merges`` merges from ``corpus``; iterate to run.

    >>> from bpeds.corpus import SequenceCorpus
    >>> d = MergeDriver(SequenceCorpus([b"aaabdaaabac"]), 3, tie="leftmost")
    >>> [(r.pair, r.new_id, r.count) for r in d]
    [((97, 97), 256, 4), ((256, 97), 257, 2), ((257, 98), 258, 2)]
    >>> d.vocab.token_bytes(258)
    b'aaab'

    ``score``: a :class:`~bpeds.scoring.base.Score`, a name or a describe-dict
    (default :class:`~bpeds.scoring.strategies.Frequency`). ``tie``: a
    :class:`~bpeds.scoring.ties.TieRule` or its name (default ``smallest_ids``).
    ``multiset``: a factory ``f(tie=...)`` of any
    :class:`~bpeds.structures.protocols.Multiset`, to select through it
    (:class:`~bpeds.structures.MultisetBounds`) instead of the default
    :class:`~bpeds.structures.BoundHeap` (which needs ``numeric`` scores; others
    get a ``HeapyKiYay``).
    ``counting``: ``"overlapping"`` or ``"non_overlapping"``. Pairs seen fewer
    than ``min_count`` times, or longer than ``max_token_length`` bytes, are
    never merged.
    """

    def __init__(
        self,
        corpus: Corpus,
        num_merges: int,
        *,
        score: Score | str | dict[str, Any] | None = None,
        tie: TieRule | str = "smallest_ids",
        multiset: MultisetFactory | None = None,
        counting: Counting = "overlapping",
        min_count: int = 1,
        max_token_length: int | None = None,
        progress: Progress | None = None,
        vocab: Vocab | None = None,
        variant: Variant | str | dict[str, Any] | None = None,
        max_merges: int | None = None,
    ) -> None:
        if not (isinstance(num_merges, int) and num_merges >= 0):
            raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
        if not (isinstance(min_count, int) and min_count >= 1):
            raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
        if max_token_length is not None and not (
            isinstance(max_token_length, int) and max_token_length >= 2
        ):
            raise ValueError(f"max_token_length must be an int >= 2, got {max_token_length!r}")
        self.corpus = corpus
        self.num_merges = num_merges
        self.score = Frequency() if score is None else get_score(score)
        self.tie = tie_rule(tie)
        self.multiset = multiset
        self.counting = counting
        self.min_count = min_count
        self.max_token_length = max_token_length
        self.progress = progress
        self.vocab = Vocab() if vocab is None else vocab
        self.variant = None if variant is None else get_variant(variant)
        if max_merges is not None and not (isinstance(max_merges, int) and max_merges >= 0):
            raise ValueError(f"max_merges must be an int >= 0, got {max_merges!r}")
        #: With a variant: the most merges a run makes (a variant that removes or marks
        #: as fast as it merges would never reach the vocabulary target).
        self.max_merges = 4 * num_merges + 256 if max_merges is None else max_merges
        self.records: list[MergeRecord] = []
        #: Every merge, removal, mark and unmark, in order (see :mod:`bpeds.variants`).
        self.events: list[Event] = []
        #: With a ``multiset``: remove a pair from it as soon as its count reaches zero
        #: (True), or only when it surfaces at the top (False). Both are exact; a speed
        #: knob. (The default BoundHeap drops dead pairs when they surface.)
        self.drop_dead = True
        #: Scores that declare ``unigram_bound``: a pair scoring below this fraction of
        #: the last merge's score is put to sleep under one of its tokens (see
        #: ``_TokenPairs``); 0 never. Exact for any value >= 0; a speed knob (1/16
        #: measured best of 1/64, 1/16, 1/4 for PMI on en13).
        self.sleep_below = 1 / 16
        #: Pause the cyclic garbage collector while iterating (see :meth:`__iter__`).
        self.pause_gc = True

    def options(self) -> dict[str, Any]:
        """The options that determine this run's merges (recorded with a model)."""
        return {
            "score": self.score.describe(),
            "tie": self.tie.describe(),
            "counting": self.counting,
            "min_count": self.min_count,
            "max_token_length": self.max_token_length,
            **({} if self.variant is None else {"variant": self.variant.describe()}),
        }

    def run(self) -> list[MergeRecord]:
        """Run to the end and return every record."""
        for _ in self:
            pass
        return self.records

    def __iter__(self) -> Generator[MergeRecord, None, None]:
        """Run the merges, yielding one :class:`MergeRecord` each.

        While the iteration is under way (between its first ``next`` and its end,
        ``close()`` or an exception) Python's cyclic garbage collector is paused,
        unless ``pause_gc`` is False: training keeps millions of small containers
        alive, and the collector would re-scan all of them again and again (see
        :mod:`bpeds._gc`; about 15% of the merge loop on 13 MB of English, 30% on
        multilingual text). Reference counting still frees everything; only
        objects in reference cycles wait. An iterator dropped half-way restores
        the collector when it is closed or freed.
        """
        if not self.pause_gc:
            yield from self._merges()
            return
        with gc_paused():
            yield from self._merges()

    def _merges(self) -> Iterator[MergeRecord]:
        score, tie, vocab = self.score, self.tie, self.vocab
        depends = score.depends
        want_parts = depends >= Dependency.PARTS
        want_groups = score.needs_groups
        variant = self.variant
        # Unigram counts: for PARTS scores, and for variants that read them.
        want_uni = want_parts or (variant is not None and variant.needs_unigrams)
        run = self.corpus.start(self.counting, want_groups, vocab.length)
        if hasattr(run, "count_sites"):
            run.count_sites = want_uni
        split = getattr(run, "split", None)
        if variant is not None and variant.removes and split is None:
            raise ValueError(
                f"variant {variant.name!r} removes tokens, which {type(self.corpus).__name__} "
                "cannot do: train it in type mode (a TypeCorpus)"
            )
        merge_into = getattr(run, "merge_into", None)
        if variant is not None and variant.same_bytes_same_token and merge_into is None:
            raise ValueError(
                f"variant {variant.name!r} makes tokens again, which "
                f"{type(self.corpus).__name__} cannot do: train it in type mode (a TypeCorpus)"
            )
        if variant is not None and (variant.removes or variant.same_bytes_same_token):
            run.start_holders()  # type: ignore[attr-defined]
        #: bytes -> id of every token made, for variants that make one token of equal bytes
        reuse: dict[bytes, int] | None = (
            {} if variant is not None and variant.same_bytes_same_token else None
        )
        init = run.initial()
        counts = init.pairs
        # Unigram counts by id (ids are dense; a new token's count is appended).
        uni = [0] * len(vocab)
        for t, c in init.unigram.items():
            uni[t] = c
        gcounts, gtokens = init.group_pairs, init.group_tokens
        num_groups = len(gtokens)
        gbytes = tuple(gtokens) if want_groups else ()
        now = Totals(sum(gtokens), sum(counts.values()), gbytes, gbytes)
        # A score with epochs is stored as bounds at its epoch's totals (see step 1).
        epochs = depends is Dependency.GLOBAL and declared(score, "epochs")
        epoch_at = score.epoch(now) if epochs else now

        def stats_for(totals: Callable[[], Totals]) -> Stats:
            return Stats(
                depends,
                vocab.length,
                uni if want_parts else None,
                totals,
                gcounts if want_groups else None,
                pack_pair,
                vocab.token_bytes,
            )

        stats = stats_for((lambda: epoch_at) if epochs else (lambda: now))
        exact_stats = stats_for(lambda: now)  # (epochs: the scores themselves)
        # -- the priority of a pair, from what the score declares -----------------
        min_count = max(self.min_count, score.min_count)
        max_len, length = self.max_token_length, vocab.length
        is_count = declared(score, "is_count")
        raw_score = score.score
        raw = score.epoch_bound if epochs else raw_score
        kernel = declared(score, "kernel") if want_parts and not epochs else None
        if epochs:
            kernel = score.epoch_kernel(epoch_at)
        integer, numeric = declared(score, "integer"), declared(score, "numeric")
        dynamic = tie.dynamic
        shift = run.position_limit.bit_length() + 1
        fold = tie.fold
        pos_lb: dict[int, int] = {}  # dynamic ties: a lower bound of each pair's position

        eligible = (
            self.variant.eligible if self.variant is not None and self.variant.filters else None
        )

        def value(k: int, c: int) -> Any:
            """The pair's score at count c (None: not eligible)."""
            if c < min_count:
                return None
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            if max_len is not None and length(left) + length(right) > max_len:
                return None
            if eligible is not None and not eligible(vocab, left, right):
                return None
            if is_count:
                return c
            if kernel is not None and left != right:
                return kernel(c, uni[left], uni[right], now.tokens)
            return raw(c, left, right, stats)

        def bound(k: int, c: int) -> Any:
            """An upper bound of the pair's priority (its exact score, a position bound)."""
            s = value(k, c)
            if s is None or not dynamic:
                return s
            return fold(s, pos_lb.get(k, 0), shift)

        counts_get = counts.get

        holding: set[int] = set()  # epochs: pairs taken off the heap while selecting

        def current(k: int) -> Any:
            """The pair's exact priority now (the selection structure's check; with
            epochs, its epoch bound). A pair held off the heap has no other entry."""
            if holding and k in holding:
                return None
            s = value(k, counts_get(k, 0))
            if s is None or not dynamic:
                return s
            pos = run.first_position(k)
            if pos is None:  # pragma: no cover - a counted pair always occurs
                raise InvariantError(f"pair {self._show(k)} is counted but not found", k)
            pos_lb[k] = pos
            return fold(s, pos, shift)

        # -- what a merge can raise, from the declarations -------------------------
        rescore_fell = score.count_fall_raises
        rescore_parts = want_parts and score.unigram_fall_raises
        # Only new pairs can have risen: push them, nothing to compare with.
        born_only = not (rescore_fell or rescore_parts or want_groups)
        born_only = born_only and depends is not Dependency.GLOBAL
        fixed_rule = max_len is not None or eligible is not None  # pairs refused for good
        counted = born_only and is_count and not fixed_rule
        plain = counted and not dynamic

        if plain:

            def current(k: int) -> Any:  # the same, for a count without a tie to fold
                c = counts_get(k, 0)
                return c if c >= min_count else None

        elif counted:
            first_position = run.first_position

            def current(k: int) -> Any:  # the same, for a count with a tie to fold
                c = counts_get(k, 0)
                if c < min_count:
                    return None
                return fold(c, first_position(k) or 0, shift)

        # -- the selection structure ---------------------------------------------
        score.begin_step(stats)
        start = ((k, bound(k, c)) for k, c in counts.items())
        select: BoundHeap | MultisetBounds
        on_heap = self.multiset is None and (integer or (numeric and not dynamic))
        # PARTS scores: each token's pairs; with a declared rise, far ones asleep.
        rise = (
            (score.epoch_unigram_bound(epoch_at) if epochs else declared(score, "unigram_bound"))
            if on_heap
            else None
        )
        pairs_of = _TokenPairs(uni, rise) if rescore_parts else None
        sleep_below = self.sleep_below if rise is not None else 0.0

        def rescore(pairs: Iterable[int], deep: float = 0.0) -> tuple[list[int], list[int]]:
            """Re-score ``pairs`` and push the rises. Returns the pairs that can never
            be eligible again and, for ``deep > 0``, the awake ones scoring below it."""
            gone: list[int] = []
            low: list[int] = []
            rises: list[tuple[int, Any]] = []
            n_tokens = now.tokens
            for pk in pairs:
                c = counts_get(pk, 0)
                left_, right_ = pk >> PAIR_SHIFT, pk & PAIR_MASK
                if inline and left_ != right_ and kernel is not None:  # (no value() checks)
                    p = kernel(c, uni[left_], uni[right_], n_tokens) if c >= min_count else None
                else:
                    p = value(pk, c)
                if p is None:
                    if c < min_count or fixed_rule:  # counts never rise
                        gone.append(pk)
                    continue
                if dynamic:
                    p = fold(p, pos_lb.get(pk, 0), shift)
                elif deep > 0 and p < deep and pk not in sleeper and left_ != right_:
                    low.append(pk)  # ((t, t) has c(t) twice: it never sleeps)
                was = bounds_get(pk)
                if was is None or was < p:
                    rises.append((pk, p))
                    if bounds is not None:
                        bounds[pk] = p
            select.extend(rises)  # (rises only: compared with the stored bounds above)
            if sleeper and pairs_of is not None:
                # A sleeping pair's token covers its bound (as stored: parked, 2**e).
                for pk, _ in rises:
                    owner = sleeper.get(pk)
                    if owner is not None:
                        pairs_of.raise_cover(owner, bounds_get(pk) or 0.0, counts_get(pk, 0))
            return gone, low

        def guard(stored: Any) -> bool:
            """Wake the sleeping pairs of a token whose cover reaches the heap's top."""
            if pairs_of is None:
                return False
            woken = pairs_of.waking(stored)
            if woken is None:
                return False
            for pk in rescore(woken)[0]:
                pairs_of.forget(pk)
            return True

        def stored_bounds() -> list[tuple[int, Any]]:
            return list((bounds or {}).items())

        def make_select(items: Iterable[tuple[int, Any]]) -> BoundHeap | MultisetBounds:
            if not on_heap:
                factory = self.multiset or _default_multiset
                return MultisetBounds(
                    factory(tie=None if dynamic else tie.heap_tie(vocab)), current, items
                )
            return BoundHeap(
                current,
                items,
                integer=integer,
                rank=None if dynamic else tie.heap_tie(vocab),
                # (epochs: compacted from the stored bounds, which hold for the epoch)
                source=stored_bounds if epochs else lambda: new_bounds(counts),
                track=not born_only,
                guard=guard if rise is not None else None,
                gap=1 if integer else 0,
            )

        # A score with views: one selection structure per view, built when first selected.
        views = depends is Dependency.GLOBAL and declared(score, "views")
        if views and epochs:
            raise ValueError(f"score {score.name!r} declares both views and epochs: choose one")
        view = stats.view = score.view(now) if views else None
        select = make_select(start)
        heaps = {view: select}
        bounds = select.bounds if isinstance(select, BoundHeap) else None
        bounds_get = bounds.get if bounds is not None else select.bound_of

        def switch(v: int | None) -> None:
            """Score in view ``v`` and push to its structure (built from every pair's
            exact priority the first time)."""
            nonlocal select, bounds, bounds_get
            stats.view = v
            select = heaps.get(v) or heaps.setdefault(
                v, make_select(((k, bound(k, c)) for k, c in counts.items()))
            )
            bounds = select.bounds if isinstance(select, BoundHeap) else None
            bounds_get = bounds.get if bounds is not None else select.bound_of

        def restart() -> None:
            """Rebuild the selection structure from every pair's bound now. O(pairs)."""
            nonlocal select, bounds, bounds_get
            select = heaps[view] = make_select((k, bound(k, c)) for k, c in counts.items())
            bounds = select.bounds if isinstance(select, BoundHeap) else None
            bounds_get = bounds.get if bounds is not None else select.bound_of

        static_rank = None if dynamic else tie.heap_tie(vocab)

        def exact(k: int) -> Any:
            """Epochs: the pair's score now (folded with its tie, as priorities are)."""
            s = raw_score(counts_get(k, 0), k >> PAIR_SHIFT, k & PAIR_MASK, exact_stats)
            if s is None or not dynamic:
                return s
            return fold(s, pos_lb.get(k, 0), shift)

        def checked(entry: tuple[int, Any]) -> Any:
            """The exact score of a pair taken off with its epoch bound: never above it."""
            s = exact(entry[0])
            if s is not None and s > entry[1]:
                holding.clear()
                raise BoundError(entry[0], entry[1], s)
            return s

        def best_exact(top: tuple[int, Any]) -> tuple[int, Any]:
            """Epochs: the heap's top has the best *bound*; the best score is among the
            pairs whose bound reaches it (taken off in order, the others put back).
            Ties between equal scores go to the rule's smaller rank."""
            win, win_s = top[0], checked(top)
            held = [top]
            holding.add(top[0])  # (its older, lower entries are dropped, not checked)
            while True:
                nxt = select.pop()
                if nxt is None:
                    break
                held.append(nxt)
                holding.add(nxt[0])
                k2, b2 = nxt
                if win_s is not None and b2 < win_s:
                    break
                s2 = checked(nxt)
                if s2 is None:
                    continue
                if win_s is None or s2 > win_s:
                    win, win_s = k2, s2
                elif (
                    s2 == win_s
                    and not dynamic
                    and (static_rank(k2) if static_rank else k2)
                    < (static_rank(win) if static_rank else win)
                ):
                    win = k2
            holding.clear()
            back = [(k2, b2) for k2, b2 in held if k2 != win]
            if bounds is not None:
                for k2, b2 in back:
                    bounds[k2] = b2
            select.extend(back)
            return win, win_s

        def rescore_all(pairs: list[int]) -> None:
            """Re-score ``pairs`` in every view built, ending in the selected one."""
            if not views:
                rescore(pairs)
                return
            for v in [v for v in heaps if v != view]:
                switch(v)
                rescore(pairs)
            switch(view)
            rescore(pairs)

        inline = kernel is not None and not dynamic and not fixed_rule
        sleeper = pairs_of.sleeper if pairs_of is not None else {}
        if pairs_of is not None:  # (a pair below min_count never reaches it again)
            pairs_of.add(k for k, c in counts.items() if c >= min_count)
        drop = select.discard if isinstance(select, MultisetBounds) and self.drop_dead else None
        watch = drop is not None or not born_only
        # (a score that keeps no per-step state is not called between steps)
        begin_step = score.begin_step if type(score).begin_step is not Score.begin_step else None

        def new_bounds(born: dict[int, int]) -> Iterable[tuple[int, Any]]:
            """Bounds of the pairs of ``born`` from their counts (the new pairs after a
            merge, or all of them for a rebuild)."""
            if counted:  # the count itself; leftmost folds in each pair's position
                items = (
                    born.items()
                    if min_count <= 1
                    else [x for x in born.items() if x[1] >= min_count]
                )
                return items if plain else tie.fold_many(items, pos_lb, shift)
            return [(pk, p) for pk, c in born.items() if (p := bound(pk, c)) is not None]

        def visit_merged(left: int, right: int, born: dict[int, int], last: Any) -> None:
            """PARTS: re-score the merged tokens' awake pairs (every pair whose count fell
            is one); pairs far below the last merge's score fall asleep."""
            assert pairs_of is not None
            pairs_of.add(pk for pk, c in born.items() if c >= min_count)
            deep = last * sleep_below if sleep_below else 0.0
            for tok in (left,) if left == right else (left, right):
                mine = pairs_of.awake.get(tok)
                if mine:
                    never, low = rescore(list(mine), deep)
                    for pk in never:
                        pairs_of.forget(pk)
                    if low:
                        # Each under its more frequent token: the one merged more often,
                        # whose merges would otherwise re-score it again and again.
                        by: dict[int, list[int]] = {}
                        for pk in low:
                            a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
                            by.setdefault(a if uni[a] >= uni[b] else b, []).append(pk)
                        for under, pks in by.items():
                            pairs_of.sleep(
                                under,
                                pks,
                                [bounds_get(pk) or 0.0 for pk in pks],
                                [counts_get(pk, 0) for pk in pks],
                            )
                if rise is not None:
                    pairs_of.push_cover(tok)

        out = MergeDeltas(num_groups, positions=dynamic, counts=counts, lost=watch)

        def apply(out: MergeDeltas) -> tuple[dict[int, int], list[int], list[int]]:
            """Apply a merge's or split's count changes to the table: the pairs that
            rose (with their counts), fell and died."""
            fell: list[int] = []
            died: list[int] = []
            add_fell = fell.append
            born = out.born
            counts.update(born)
            if watch:  # which pairs fell, which died
                for pk in out.lost or ():
                    if pk in counts:
                        add_fell(pk)
                    else:
                        died.append(pk)
            for pk, dv in out.pairs.items():
                c = counts.get(pk, 0) + dv
                if c > 0:
                    counts[pk] = c
                    if dv > 0:
                        born[pk] = c
                    else:
                        add_fell(pk)
                elif c == 0:
                    counts.pop(pk, None)
                    died.append(pk)
                else:  # pragma: no cover - would be a representation bug
                    raise InvariantError(f"pair count went negative: {self._show(pk)}", c)
            return born, fell, died

        def apply_groups(out: MergeDeltas) -> None:
            for pk, row in out.group_pairs.items():
                cur = gcounts.get(pk)
                if cur is None:
                    cur = gcounts[pk] = [0] * num_groups
                for g, v in enumerate(row):
                    cur[g] += v
                if not any(cur):
                    del gcounts[pk]
            for g, v in enumerate(out.group_sites):
                gtokens[g] -= v

        # -- the variant's side of the loop (see bpeds.variants) --------------------
        events = self.events
        loop = _RunLoop(self, uni if want_uni else None)
        removed, marked = loop.removed, loop.marked

        def remove(t: int) -> tuple[int, ...]:
            """Split ``t`` into its present parts everywhere; re-score what rose."""
            nonlocal now, view, epoch_at, kernel, rise
            parts = tuple(_present_parts(vocab, t, removed))
            out.reset()
            assert split is not None  # (checked above, for variants that remove)
            split(t, parts, out)
            born, _, died = apply(out)
            if drop is not None:
                for pk in died:
                    drop(pk)
            occ = out.sites
            if want_uni:
                uni[t] -= occ
                for p in parts:
                    uni[p] += occ
            if want_groups:
                apply_groups(out)
            if want_parts:
                now = Totals(
                    now.tokens + occ * (len(parts) - 1),
                    now.pairs + sum(out.pairs.values()),
                    tuple(gtokens) if want_groups else (),
                    gbytes,
                )
            for pk in born:  # (a split can move a pair's first occurrence earlier)
                pos_lb.pop(pk, None)
            removed.add(t)
            marked.discard(t)
            events.append(Event("remove", t, parts, done))
            if begin_step is not None:
                begin_step(stats)
            if born_only:
                select.extend(new_bounds(born))
            else:
                if pairs_of is not None:
                    pairs_of.wake_all()
                    pairs_of.add(pk for pk, c in born.items() if c >= min_count)
                if views:
                    view = score.view(now)
                if epochs and not score.in_epoch(now, epoch_at):
                    epoch_at = score.epoch(now)  # (re-scoring everything below bounds it)
                    kernel = score.epoch_kernel(epoch_at)
                    if pairs_of is not None:  # (all awake: wake_all above)
                        pairs_of.bound = rise = score.epoch_unigram_bound(epoch_at)
                rescore_all(list(counts))
            return parts

        loop._remove = remove
        limit = self.num_merges if variant is None else self.max_merges
        if variant is not None:
            variant.begin(loop)
        done = 0
        while done < limit:
            if variant is not None:
                loop.merges_done = done
                if loop.finished():
                    return
            # 1. select
            try:
                best = select.pop()
                if epochs and best is not None:
                    best = best_exact(best)
            except BoundError as exc:
                raise self._undeclared_rise(exc) from None
            if best is None:
                return
            k, priority = best
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            count = counts[k]
            if variant is not None:
                loop.phase = "before"
                variant.before_merge(loop, (left, right), count)
                loop.phase = ""
                if loop.finished():
                    return
            new, remade = make_token(vocab, left, right, reuse)
            if remade:
                removed.discard(new)  # (made again, if it was removed)
            chosen = count if is_count else tie.unfold(priority, shift)
            record = MergeRecord((left, right), new, count, chosen)

            # 2. merge, and apply the count changes (right side first: see MergeDeltas)
            out.reset()
            if not remade:
                run.merge(left, right, new, out)
            else:
                merge_into(left, right, new, out)  # type: ignore[misc]
            born, fell, died = apply(out)
            if remade:  # (its pairs may occur earlier than this merge's)
                for pk in born:
                    pos_lb.pop(pk, None)
            gone = counts.pop(k, 0)  # the merged pair occurs nowhere now
            if drop is not None:
                drop(k)
                for pk in died:
                    drop(pk)
            if out.first_positions:
                pos_lb.update(out.first_positions)

            # 3. statistics the score reads
            before = now
            if want_uni:
                sites = out.sites
                uni[left] -= sites
                uni[right] -= sites
                if new == len(uni):
                    uni.append(sites)
                else:
                    uni[new] += sites
            if want_groups:
                apply_groups(out)
                gcounts.pop(k, None)
            if want_parts:
                # born and lost move counts between pairs: only the others change the sum.
                now = Totals(
                    before.tokens - out.sites,
                    before.pairs + sum(out.pairs.values()) - gone,
                    tuple(gtokens) if want_groups else (),
                    gbytes,
                )
            if begin_step is not None:
                begin_step(stats)
            new_epoch = epochs and not score.in_epoch(now, epoch_at)
            if new_epoch:  # every stored bound is the old epoch's: bound everything again
                epoch_at = score.epoch(now)
                kernel = score.epoch_kernel(epoch_at)
                if pairs_of is not None:
                    pairs_of.wake_all()
                    pairs_of.bound = rise = score.epoch_unigram_bound(epoch_at)
                restart()

            # 4. re-score what can have risen; push the new bounds
            if born_only:
                select.extend(new_bounds(born))
            elif new_epoch:
                if pairs_of is not None:
                    pairs_of.add(pk for pk, c in born.items() if c >= min_count)
            elif views:  # new pairs and group rises, in every view; then select in now's
                # (a pair that rose in one group and fell by as much in another is not
                # born: the shipped representations never report one, the seam allows it)
                rising = list(born)
                rising += (
                    pk
                    for pk, row in out.group_pairs.items()
                    if pk not in born and any(d > 0 for d in row)
                )
                view = score.view(now)
                rescore_all(rising)
            elif (
                not epochs and depends is Dependency.GLOBAL and score.totals_can_raise(before, now)
            ):
                if pairs_of is not None:
                    pairs_of.add(pk for pk, c in born.items() if c >= min_count)
                rescore(list(counts))
            else:
                if pairs_of is not None:
                    visit_merged(left, right, born, priority)
                again = set(born)
                if rescore_fell:
                    again.update(fell)
                if want_groups:
                    again.update(out.group_pairs)
                never, _ = rescore(again)
                if pairs_of is not None:
                    for pk in never:
                        pairs_of.forget(pk)
            events.append(Event("merge", new, (left, right), done))
            done += 1
            self.records.append(record)
            if variant is not None:
                loop.merges_done = done
                loop.sites = out.sites
                loop.phase = "after"
                variant.after_merge(loop, (left, right), new, count)
                loop.phase = ""
            if self.progress is not None:
                self.progress(done, self.num_merges)
            yield record

    def _show(self, k: int) -> str:
        """A packed pair as ids and bytes, for messages."""
        left, right = k >> PAIR_SHIFT, k & PAIR_MASK
        try:
            text = self.vocab.token_bytes(left) + self.vocab.token_bytes(right)
            return f"({left}, {right}) = {text!r}"
        except (IndexError, KeyError, ValueError):
            return f"({left}, {right})"

    def _undeclared_rise(self, exc: BoundError) -> InvariantError:
        """Name the declaration that let a score rise without being re-scored."""
        score = self.score
        if score.depends is Dependency.GLOBAL and declared(score, "epochs"):
            fault = (
                "its epoch bound fell below a score it bounds: epoch_bound() must bound the "
                "score at every totals for which in_epoch() holds, and grow as its "
                "declarations say (count_fall_raises, unigram_fall_raises)"
            )
        elif score.depends is Dependency.GLOBAL:
            fault = (
                "totals_can_raise() returned False for a change of totals that raised it: "
                "return True whenever a change of totals can raise a pair's score"
            )
        elif score.depends is Dependency.PARTS and not score.unigram_fall_raises:
            fault = (
                "it declares unigram_fall_raises = False, but a fall of a token's unigram "
                "count raised it"
            )
        elif not score.count_fall_raises:
            fault = "it declares count_fall_raises = False, but a fall of its count raised it"
        else:
            fault = (
                f"it declares depends={score.depends.name}, but its value depends on more "
                "(e.g. a statistic it reads without declaring it, or state of its own)"
            )
        return InvariantError(
            f"the score of pair {self._show(exc.key)} rose from {exc.stored!r} to "
            f"{exc.fresh!r} without being re-scored: {score!r}: {fault}",
            {"pair": self._show(exc.key), "stored": exc.stored, "fresh": exc.fresh},
        )


def _present_parts(vocab: Vocab, token: int, removed: set[int]) -> list[int]:
    """The tokens ``token`` splits into: its parents, each expanded further while it
    is removed (byte tokens are never removed). O(parts)."""
    parents = vocab.parents(token)
    if parents is None:
        raise ValueError(f"token {token} is a byte: bytes cannot be removed")
    out: list[int] = []
    stack = [parents[1], parents[0]]
    while stack:
        t = stack.pop()
        if t in removed:
            pl, pr = vocab.parents(t) or (t, t)
            stack += (pr, pl)
        else:
            out.append(t)
    return out


class _RunLoop:
    """The driver's side of :class:`bpeds.variants.Loop`: what a variant reads, and
    the actions it takes (checked, logged as events)."""

    def __init__(self, driver: MergeDriver, uni: list[int] | None) -> None:
        self._driver = driver
        self._uni = uni
        self._remove: Callable[[int], tuple[int, ...]] | None = None
        self.removed: set[int] = set()
        self.marked: set[int] = set()
        self.initial = len(driver.vocab)
        self.merges_done = 0
        self.sites = 0
        self.phase = ""
        self.stopped = False

    @property
    def vocab(self) -> Vocab:
        return self._driver.vocab

    def _need_uni(self) -> list[int]:
        if self._uni is None:
            variant = self._driver.variant
            raise ValueError(
                f"variant {variant!r} reads unigram counts but does not declare "
                "needs_unigrams = True"
            )
        return self._uni

    def unigram(self, token: int) -> int:
        uni = self._need_uni()
        self._check(token)
        return uni[token]

    def merged_sites(self) -> int:
        self._need_uni()
        return self.sites

    def remaining(self) -> int:
        size = len(self._driver.vocab) - self.initial - len(self.removed) - len(self.marked)
        return self._driver.num_merges - size

    def finished(self) -> bool:
        """The vocabulary reached its target, or the variant stopped the run."""
        return self.stopped or self.remaining() <= 0

    def _check(self, token: int) -> None:
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"a token is an int id, got {token!r}")
        if not 0 <= token < len(self._driver.vocab):
            raise ValueError(f"token {token} is not in the vocabulary")

    def _check_live(self, token: int, action: str) -> None:
        self._check(token)
        if token < BYTE_TOKENS:
            raise ValueError(f"cannot {action} token {token}: it is a byte")
        if token in self.removed:
            raise ValueError(f"cannot {action} token {token}: it was removed")

    def remove(self, token: int) -> tuple[int, ...]:
        self._check_live(token, "remove")
        variant = self._driver.variant
        if variant is None or not variant.removes:
            raise ValueError(f"variant {variant!r} removes a token but does not declare removes")
        if self.phase != "after" or self._remove is None:
            raise ValueError("a variant removes tokens from after_merge only")
        return self._remove(token)

    def mark(self, token: int) -> None:
        self._check_live(token, "mark")
        if token in self.marked:
            return
        self.marked.add(token)
        self._driver.events.append(Event("mark", token, (), self.merges_done))

    def unmark(self, token: int) -> None:
        self._check(token)
        if token not in self.marked:
            raise ValueError(f"cannot unmark token {token}: it is not marked")
        self.marked.discard(token)
        self._driver.events.append(Event("unmark", token, (), self.merges_done))

    def stop(self) -> None:
        self.stopped = True


def _default_multiset(tie: Any = None) -> Multiset[int, Any]:
    return HeapyKiYay(tie=tie)


def train_merges(corpus: Corpus, num_merges: int, **options: Any) -> list[MergeRecord]:
    """Run a :class:`MergeDriver` to the end; the options are the driver's."""
    return MergeDriver(corpus, num_merges, **options).run()


class _TokenPairs:
    """Each token's live pairs, for scores re-scored when a token's count falls (PARTS).

    ``awake[t]``: the pairs of ``t`` a fall of ``t``'s count re-scores. With a
    declared :meth:`~bpeds.scoring.base.Score.unigram_bound`, a pair scoring far
    below the top (under ``deep``) is put to sleep under one of its tokens ``t``
    (never a pair ``(t, t)``): falls of ``t`` stop re-scoring it (its other
    token's, and falls of its own count, still do). Sleeping pairs are grouped by
    token and by *band*, the bit length of their count when they fell asleep
    (the rise a fall of ``c(t)`` allows grows with the count, so a band of small
    counts has a much lower cover than the token's largest pairs). Between
    re-scores only ``c(t)`` moves a sleeping pair, so every sleeping pair of a
    group is below ``cover = bound(drowse, most, since, c(t))``: ``drowse``, the
    largest bound recorded for a pair of the group; ``most``, the largest count one
    had; ``since``, ``c(t)`` when the group's first pair fell asleep. :meth:`waking`
    wakes a group (its pairs are re-scored) once its cover reaches the heap's top.
    Covers are kept in a heap of ``(-cover, group)``, stale once the group's cover
    moved on. A group is keyed ``t * 64 + band``.
    """

    __slots__ = (
        "asleep",
        "awake",
        "bands",
        "bound",
        "cover",
        "drowse",
        "most",
        "since",
        "sleeper",
        "uni",
        "wakes",
    )

    def __init__(
        self, uni: list[int], bound: Callable[[float, int, int, int], float] | None
    ) -> None:
        self.awake: dict[int, set[int]] = {}
        self.asleep: dict[int, set[int]] = {}  # group -> its sleeping pairs
        self.bands: dict[int, set[int]] = {}  # token -> its groups with sleeping pairs
        self.sleeper: dict[int, int] = {}  # pair -> the group it sleeps in
        self.since: dict[int, int] = {}
        self.drowse: dict[int, float] = {}
        self.most: dict[int, int] = {}
        self.cover: dict[int, float] = {}
        self.wakes: list[tuple[float, int]] = []
        self.uni = uni
        self.bound = bound

    def add(self, pairs: Iterable[int]) -> None:
        """Index new pairs under both tokens. O(1) each."""
        awake = self.awake
        for pk in pairs:
            for tok in (pk >> PAIR_SHIFT, pk & PAIR_MASK):
                mine = awake.get(tok)
                if mine is None:
                    awake[tok] = {pk}
                else:
                    mine.add(pk)

    def forget(self, pk: int) -> None:
        """``pk`` can never be eligible again. O(1)."""
        self.awake.get(pk >> PAIR_SHIFT, _EMPTY).discard(pk)
        self.awake.get(pk & PAIR_MASK, _EMPTY).discard(pk)
        owner = self.sleeper.pop(pk, None)
        if owner is not None:
            self.asleep[owner].discard(pk)

    def sleep(self, tok: int, pairs: list[int], bounds: list[float], counts: list[int]) -> None:
        """Put ``pairs`` (awake pairs of ``tok``, with their bounds and counts) to sleep
        under ``tok``, each in its count's band. O(pairs)."""
        awake = self.awake[tok]
        asleep, sleeper = self.asleep, self.sleeper
        drowse, most = self.drowse, self.most
        base = tok << 6
        for pk, b, c in zip(pairs, bounds, counts, strict=True):
            group = base | c.bit_length()
            mine = asleep.get(group)
            if not mine:
                mine = asleep[group] = set()
                self.bands.setdefault(tok, set()).add(group)
                self.since[group] = self.uni[tok]
                drowse[group] = b
                most[group] = c
            else:
                if b > drowse[group]:
                    drowse[group] = b
                if c > most[group]:
                    most[group] = c
            awake.discard(pk)
            mine.add(pk)
            sleeper[pk] = group

    def raise_cover(self, group: int, bound: float, count: int) -> None:
        """A sleeping pair of ``group`` was re-scored (through its other token or its
        own count) and given ``bound``."""
        if bound > self.drowse[group] or count > self.most[group]:
            self.drowse[group] = max(self.drowse[group], bound)
            self.most[group] = max(self.most[group], count)
            self._push(group)

    def push_cover(self, tok: int) -> None:
        """Record the covers of ``tok``'s groups after its count fell."""
        groups = self.bands.get(tok)
        if groups:
            for group in list(groups):
                self._push(group)

    def _push(self, group: int) -> None:
        if not self.asleep.get(group):
            return
        assert self.bound is not None
        now = self.uni[group >> 6]
        # (a token all merged away has no live pair left: wake its pairs to drop them)
        if now:
            cv = self.bound(self.drowse[group], self.most[group], self.since[group], now)
            cv += abs(cv) * 1e-9 + 1e-300  # against rounding
        else:
            cv = _INF
        if cv > self.cover.get(group, -_INF):
            self.cover[group] = cv
            heappush(self.wakes, (-cv, group))

    def wake_all(self) -> None:
        """Wake every sleeping pair (after counts rose: the covers no longer hold)."""
        awake = self.awake
        for group, pairs in self.asleep.items():
            awake.setdefault(group >> 6, set()).update(pairs)
        self.asleep.clear()
        self.bands.clear()
        self.sleeper.clear()
        self.since.clear()
        self.drowse.clear()
        self.most.clear()
        self.cover.clear()
        self.wakes.clear()

    def waking(self, stored: Any) -> list[int] | None:
        """The pairs of a group whose cover reaches ``stored`` (None: the heap is empty),
        woken (awake again); None if no cover does."""
        wakes = self.wakes
        while wakes:
            neg, group = wakes[0]
            if self.cover.get(group) != -neg:
                heappop(wakes)  # stale
                continue
            if stored is not None and -neg < stored:
                return None
            heappop(wakes)
            del self.cover[group], self.since[group], self.drowse[group], self.most[group]
            pairs = self.asleep.pop(group)
            tok = group >> 6
            groups = self.bands[tok]
            groups.discard(group)
            if not groups:
                del self.bands[tok]
            awake = self.awake.setdefault(tok, set())
            for pk in pairs:
                del self.sleeper[pk]
                awake.add(pk)
            return list(pairs)
        return None


_EMPTY: set[int] = set()
_INF = float("inf")
