"""``SleepingPairs``: each token's live pairs, the ones far below the top asleep under a bound.

A score that reads unigram counts (PMI, LikelihoodGain) can rise when a token's
count falls, so after a merge of ``(a, b)`` every pair containing ``a`` or ``b``
must be re-scored. Most of those pairs score far below the top and stay there.
This structure lets such a pair *sleep* under one of its tokens ``t``: merges of
``t`` stop re-scoring it (merges of its other token, and falls of its own count,
still do), and it wakes when a bound says its score could have reached the top.

The bound comes from the score's ``unigram_bound``, ``rise(bound, count, then,
now)``: the largest score a pair counted at most ``count`` times, scoring at most
``bound`` when ``t`` occurred ``then`` times, can reach now that ``t`` occurs
``now`` times (it must not fall when ``bound``, ``count`` or ``then`` grow).
Sleeping pairs are grouped in *bands*: per token, and per bit length of the
pair's count when it fell asleep (the rise a fall of ``c(t)`` allows grows with
the count, so a band of small counts gets a much lower bound than the token's
largest pairs). A band keeps the largest bound and count recorded for its pairs
and ``c(t)`` when its first pair fell asleep, so every pair asleep in it scores
at most its **cover**, ``rise(top_bound, top_count, count_then, c(t))``. Covers
are kept in a max-heap (entries go stale when a band's cover moves on); the
selection structure asks :meth:`wake_reaching` with its top's bound before it
accepts that top, and re-scores the band that reaches it.

=========================== ==============================================
operation                   cost
=========================== ==============================================
``add``, ``forget``         O(1) per pair
``sleep``                   O(1) per pair
``token_fell``              O(bands of the token · log covers)
``record_rise``             O(log covers)
``wake_reaching``           O(log covers) per stale entry, plus the band
``wake_all``                O(sleeping pairs)
``check``                   O(pairs + bands + covers)
=========================== ==============================================

>>> uni = [0, 0, 100, 40]                      # c(2) = 100, c(3) = 40
>>> s = SleepingPairs(uni, lambda bound, count, then, now: bound * then / now)
>>> s.add([2 << 32 | 3]); sorted(s.awake)
[2, 3]
>>> s.sleep(2, [2 << 32 | 3], [0.5], [7])     # asleep under 2, scoring at most 0.5
>>> s.token_fell(2)                            # (c(2) unchanged: cover 0.5)
>>> s.wake_reaching(0.9) is None               # the top scores 0.9: keep sleeping
True
>>> uni[2] = 50; s.token_fell(2)               # c(2) halved: the cover doubles to 1.0
>>> s.wake_reaching(0.9) == [2 << 32 | 3]      # it could reach the top: awake again
True
>>> s.check()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from heapq import heappop, heappush
from typing import Any

from bpeds.errors import InvariantError
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = ["BAND_BITS", "SleepingPairs", "band_key", "band_token"]

#: A band is keyed ``token << BAND_BITS | count.bit_length()``: room for counts below
#: ``2**255``.
BAND_BITS = 8

RiseBound = Callable[[float, int, int, int], float]

_EMPTY: set[int] = set()
_INF = float("inf")


def band_key(token: int, count: int) -> int:
    """The band of a pair of ``token`` counted ``count`` times.

    >>> band_key(3, 5) == 3 << BAND_BITS | 3, band_token(band_key(3, 5))
    (True, 3)
    """
    return token << BAND_BITS | count.bit_length()


def band_token(band: int) -> int:
    """The token a band's pairs sleep under."""
    return band >> BAND_BITS


class SleepingPairs:
    """Each token's live pairs; pairs far below the top asleep in bands (module docstring).

    ``unigram``: the unigram counts, by token id (read, never written: the caller
    lowers them and calls :meth:`token_fell`). ``rise``: the score's rise bound
    (None: nothing ever sleeps; the structure is then a token -> pairs index).

    ``awake[t]``: the pairs of ``t`` that a fall of ``c(t)`` must re-score;
    ``asleep[band]``: the pairs asleep in a band; ``band_of[pair]``: the band it
    sleeps in. A pair asleep under ``t`` stays in ``awake`` of its other token. A
    pair ``(t, t)`` (its score reads ``c(t)`` twice) never sleeps.
    """

    __slots__ = (
        "_covers",
        "asleep",
        "awake",
        "band_of",
        "bands_of",
        "count_then",
        "cover",
        "covered_at",
        "rise",
        "top_bound",
        "top_count",
        "unigram",
    )

    def __init__(self, unigram: list[int], rise: RiseBound | None) -> None:
        self.unigram = unigram
        self.rise = rise
        self.awake: dict[int, set[int]] = {}
        self.asleep: dict[int, set[int]] = {}
        self.band_of: dict[int, int] = {}
        #: token -> its bands that hold sleeping pairs
        self.bands_of: dict[int, set[int]] = {}
        #: band -> c(t) when its first pair fell asleep
        self.count_then: dict[int, int] = {}
        #: band -> the largest bound recorded for one of its pairs
        self.top_bound: dict[int, float] = {}
        #: band -> the largest count one of its pairs had
        self.top_count: dict[int, int] = {}
        #: band -> its cover, as last pushed
        self.cover: dict[int, float] = {}
        #: band -> c(t) when its cover was last computed
        self.covered_at: dict[int, int] = {}
        self._covers: list[tuple[float, int]] = []  # (-cover, band), stale entries kept

    def add(self, pairs: Iterable[int]) -> None:
        """Index new pairs, awake under both tokens. O(1) each."""
        awake = self.awake
        for pk in pairs:
            for tok in (pk >> PAIR_SHIFT, pk & PAIR_MASK):
                mine = awake.get(tok)
                if mine is None:
                    awake[tok] = {pk}
                else:
                    mine.add(pk)

    def forget(self, pk: int) -> None:
        """``pk`` can never be eligible again: drop it. O(1)."""
        self.awake.get(pk >> PAIR_SHIFT, _EMPTY).discard(pk)
        self.awake.get(pk & PAIR_MASK, _EMPTY).discard(pk)
        band = self.band_of.pop(pk, None)
        if band is not None:
            self.asleep[band].discard(pk)

    def sleep(self, tok: int, pairs: list[int], bounds: list[float], counts: list[int]) -> None:
        """Put ``pairs`` (awake pairs of ``tok``, none ``(tok, tok)``), with their
        bounds and counts, to sleep under ``tok``, each in its count's band. O(pairs)."""
        awake = self.awake[tok]
        asleep, band_of = self.asleep, self.band_of
        top_bound, top_count = self.top_bound, self.top_count
        base = tok << BAND_BITS
        for pk, b, c in zip(pairs, bounds, counts, strict=True):
            band = base | c.bit_length()
            mine = asleep.get(band)
            if not mine:  # (a new band, or one whose pairs all died: begin it again)
                mine = asleep[band] = set()
                self.bands_of.setdefault(tok, set()).add(band)
                self.count_then[band] = self.unigram[tok]
                self.cover.pop(band, None)
                self.covered_at.pop(band, None)
                top_bound[band] = b
                top_count[band] = c
            else:
                if b > top_bound[band]:
                    top_bound[band] = b
                if c > top_count[band]:
                    top_count[band] = c
            awake.discard(pk)
            mine.add(pk)
            band_of[pk] = band

    def record_rise(self, band: int, bound: float, count: int) -> None:
        """A pair asleep in ``band`` was re-scored (through its other token, or its own
        count) and stored with ``bound``: the band's cover grows to hold it. O(log covers)."""
        if bound > self.top_bound[band] or count > self.top_count[band]:
            self.top_bound[band] = max(self.top_bound[band], bound)
            self.top_count[band] = max(self.top_count[band], count)
            self._push(band)

    def token_fell(self, tok: int) -> None:
        """``c(tok)`` fell: push the new covers of its bands."""
        bands = self.bands_of.get(tok)
        if bands:
            for band in list(bands):
                self._push(band)

    def _cover_of(self, band: int) -> float:
        """The band's cover now (infinite once its token is all merged away: its pairs
        are then dead, and waking drops them)."""
        rise = self.rise
        if rise is None:
            raise ValueError("pairs cannot sleep without a rise bound")
        now = self.unigram[band >> BAND_BITS]
        if not now:
            return _INF
        cv = rise(self.top_bound[band], self.top_count[band], self.count_then[band], now)
        return cv + abs(cv) * 1e-9 + 1e-300  # against rounding

    def _push(self, band: int) -> None:
        if not self.asleep.get(band):
            return
        self.covered_at[band] = self.unigram[band >> BAND_BITS]
        cv = self._cover_of(band)
        if cv > self.cover.get(band, -_INF):
            self.cover[band] = cv
            heappush(self._covers, (-cv, band))

    def wake_all(self) -> None:
        """Wake every sleeping pair (counts rose: no cover holds any more). O(asleep)."""
        awake = self.awake
        for band, pairs in self.asleep.items():
            awake.setdefault(band >> BAND_BITS, set()).update(pairs)
        for table in (self.asleep, self.bands_of, self.band_of, self.count_then):
            table.clear()
        for table_ in (self.top_bound, self.top_count, self.cover):
            table_.clear()
        self.covered_at.clear()
        self._covers.clear()

    def wake_reaching(self, stored: Any) -> list[int] | None:
        """Wake the band of the highest cover if it reaches ``stored`` (a selection
        top's bound; None: the selection is empty, so any band reaches it) and return
        its pairs, awake again; None if no band's cover reaches it."""
        covers = self._covers
        while covers:
            neg, band = covers[0]
            if self.cover.get(band) != -neg:
                heappop(covers)  # stale
                continue
            if stored is not None and -neg < stored:
                return None
            heappop(covers)
            del self.cover[band], self.count_then[band], self.top_bound[band]
            del self.top_count[band], self.covered_at[band]
            pairs = self.asleep.pop(band)
            tok = band >> BAND_BITS
            bands = self.bands_of[tok]
            bands.discard(band)
            if not bands:
                del self.bands_of[tok]
            awake = self.awake.setdefault(tok, set())
            for pk in pairs:
                del self.band_of[pk]
                awake.add(pk)
            return list(pairs)
        return None

    def check(self) -> None:
        """Verify the invariants. O(pairs + bands + covers).

        A sleeping pair is in its band and in no ``awake`` set of the band's token,
        which is one of its two tokens, and it is still awake under the other one;
        ``bands_of`` lists exactly the non-empty bands; a non-empty band has its
        records, its cover (if pushed) is on the heap, and its token has not fallen
        since the cover was last computed (or, with no cover, since the band began: its
        pairs' stored bounds still hold); an awake pair is awake under both of its
        tokens unless it sleeps under one. (A band's cover may lag a pair that joined it
        since: that pair's own stored bound covers it until the token falls again.)
        """
        for pk, band in self.band_of.items():
            tok = band >> BAND_BITS
            left, right = pk >> PAIR_SHIFT, pk & PAIR_MASK
            if pk not in self.asleep.get(band, _EMPTY):
                raise InvariantError(f"pair {pk} is not in its band {band}", pk)
            if tok not in (left, right) or left == right:
                raise InvariantError(f"pair {pk} sleeps under token {tok}", pk)
            if pk in self.awake.get(tok, _EMPTY):
                raise InvariantError(f"pair {pk} is awake and asleep under {tok}", pk)
            if pk not in self.awake.get(right if tok == left else left, _EMPTY):
                raise InvariantError(f"pair {pk} is not awake under its other token", pk)
        listed = {b for bands in self.bands_of.values() for b in bands}
        full = {b for b, pairs in self.asleep.items() if pairs}
        if any(self.band_of.get(pk) != b for b, pairs in self.asleep.items() for pk in pairs):
            raise InvariantError("a band holds a pair that sleeps elsewhere", sorted(full))
        if not full <= listed or any(
            b >> BAND_BITS != t for t, bs in self.bands_of.items() for b in bs
        ):
            raise InvariantError("bands_of does not list the bands", sorted(listed ^ full))
        on_heap = {band for neg, band in self._covers if self.cover.get(band) == -neg}
        for band in full:
            if band not in self.count_then or band not in self.top_bound:
                raise InvariantError(f"band {band} has no records", band)
            now = self.unigram[band >> BAND_BITS]
            if band in self.cover:
                if band not in on_heap:
                    raise InvariantError(f"band {band}'s cover is not on the heap", band)
                if now < self.covered_at[band]:
                    raise InvariantError(f"band {band}'s cover is stale", band)
            elif now < self.count_then[band]:
                raise InvariantError(f"band {band}'s token fell, and no cover was pushed", band)
        for tok, pairs in self.awake.items():
            for pk in pairs:
                left, right = pk >> PAIR_SHIFT, pk & PAIR_MASK
                if tok not in (left, right):
                    raise InvariantError(f"pair {pk} is awake under {tok}", pk)
                other = right if tok == left else left
                if (
                    other != tok
                    and pk not in self.awake.get(other, _EMPTY)
                    and (self.band_of.get(pk, -1) >> BAND_BITS != other)
                ):
                    raise InvariantError(f"pair {pk} is lost under token {other}", pk)
