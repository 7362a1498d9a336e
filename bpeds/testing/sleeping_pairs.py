"""A reference model and a Hypothesis state machine for :class:`~bpeds.structures.SleepingPairs`.

The model (:class:`SleepingPairsModel`) keeps, per live pair, whether it is awake
or asleep under a token, and per band its records (the largest bound and count of
its pairs, ``c(t)`` at its first sleep) and its cover, computed from scratch
whenever the structure must compute it (the token fell, or a rise raised the
records): ``rise(largest bound, largest count, c(t) then, c(t) now)``, with the
structure's rounding margin, never lowered. A band whose cover was never computed
cannot wake. The machine drives both the way the merge driver does:

* **add** new pairs of a few tokens; **forget** a pair (it died);
* **sleep** awake pairs of a token under it (never a pair ``(t, t)``);
* **fall**: lower a token's unigram count, then tell the structure
  (``token_fell``), as the driver does after every merge of that token;
* **rise**: a sleeping pair re-scored through its other token, with a new bound
  and count (``record_rise``);
* **wake** the band whose cover reaches a drawn top (``wake_reaching``): the
  structure must wake exactly the model's band (highest cover; ties by the
  smaller band key) or none; **wake all**.

After every step ``check()`` runs and the awake and asleep pairs must equal the
model's. Use it on your own implementation with the same interface::

    TestMine = sleeping_pairs_machine(lambda unigram, rise: Mine(unigram, rise)).TestCase
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bpeds.structures.sleeping_pairs import BAND_BITS, band_key
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, pack_pair

__all__ = ["SleepingPairsModel", "count_rise", "pmi_rise", "sleeping_pairs_machine"]

TOKENS = 6


def pmi_rise(bound: float, count: int, then: int, now: int) -> float:
    """PMI's rise bound: a fall of ``c(t)`` from ``then`` to ``now`` scales by ``then / now``."""
    return bound * then / now


def count_rise(bound: float, count: int, then: int, now: int) -> float:
    """A rise bound that reads every argument (the machine's default, so that a
    structure dropping any of them is caught): PMI's factor plus a term that grows
    with the count and with the fall."""
    return bound * then / now + count * (then - now) / 64


@dataclass
class _Sleeper:
    token: int
    band: int


@dataclass
class SleepingPairsModel:
    """The truth: live pairs, which sleep under which token, and each band's records."""

    unigram: list[int]
    rise: Callable[[float, int, int, int], float]
    live: set[int] = field(default_factory=set)
    asleep: dict[int, _Sleeper] = field(default_factory=dict)
    #: band -> [largest bound, largest count, c(t) at its first sleep]
    records: dict[int, list[Any]] = field(default_factory=dict)
    #: band -> its cover, for bands whose cover was computed since they began (the
    #: others cannot wake: their token has not fallen, so their pairs' stored bounds hold)
    covers: dict[int, float] = field(default_factory=dict)

    def awake_under(self, tok: int) -> set[int]:
        return {
            pk
            for pk in self.live
            if tok in (pk >> PAIR_SHIFT, pk & PAIR_MASK)
            and not (pk in self.asleep and self.asleep[pk].token == tok)
        }

    def band_pairs(self, band: int) -> set[int]:
        return {pk for pk, s in self.asleep.items() if s.band == band}

    def fresh_cover(self, band: int) -> float:
        bound, count, then = self.records[band]
        now = self.unigram[band >> BAND_BITS]
        if not now:
            return float("inf")
        cv = self.rise(bound, count, then, now)
        return cv + abs(cv) * 1e-9 + 1e-300

    def sleep(self, tok: int, pk: int, bound: float, count: int) -> None:
        band = band_key(tok, count)
        if not self.band_pairs(band):
            self.records[band] = [bound, count, self.unigram[tok]]
            self.covers.pop(band, None)
        else:
            rec = self.records[band]
            rec[0], rec[1] = max(rec[0], bound), max(rec[1], count)
        self.asleep[pk] = _Sleeper(tok, band)

    def push(self, band: int) -> None:
        """The structure computes the band's cover again (kept if it was higher)."""
        if self.band_pairs(band):
            self.covers[band] = max(self.covers.get(band, -float("inf")), self.fresh_cover(band))

    def wake_band(self, stored: Any) -> int | None:
        """The band ``wake_reaching(stored)`` must wake, or None."""
        bands = {s.band for s in self.asleep.values()} & set(self.covers)
        if not bands:
            return None
        best = max(bands, key=lambda b: (self.covers[b], -b))
        if stored is not None and self.covers[best] < stored:
            return None
        return best


def sleeping_pairs_machine(
    factory: Callable[[list[int], Callable[[float, int, int, int], float]], Any],
) -> type[RuleBasedStateMachine]:
    """A state machine testing ``factory(unigram, rise)`` against the model."""

    class SleepingPairsMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.unigram = [1000] * TOKENS
            self.model = SleepingPairsModel(self.unigram, count_rise)
            self.s = factory(self.unigram, count_rise)

        @rule(
            pairs=st.lists(
                st.tuples(st.integers(0, TOKENS - 1), st.integers(0, TOKENS - 1)), max_size=6
            )
        )
        def add(self, pairs: list[tuple[int, int]]) -> None:
            keys = [pack_pair(a, b) for a, b in pairs]
            fresh = [k for k in dict.fromkeys(keys) if k not in self.model.live]
            self.s.add(fresh)
            self.model.live.update(fresh)

        @precondition(lambda self: self.model.live)
        @rule(data=st.data())
        def forget(self, data: st.DataObject) -> None:
            pk = data.draw(st.sampled_from(sorted(self.model.live)))
            self.s.forget(pk)
            self.model.live.discard(pk)
            self.model.asleep.pop(pk, None)

        @rule(data=st.data(), tok=st.integers(0, TOKENS - 1))
        def sleep(self, data: st.DataObject, tok: int) -> None:
            can = sorted(
                pk
                for pk in self.model.awake_under(tok)
                if pk not in self.model.asleep and pk >> PAIR_SHIFT != pk & PAIR_MASK
            )
            if not can:
                return
            chosen = data.draw(st.lists(st.sampled_from(can), min_size=1, unique=True))
            bounds = data.draw(
                st.lists(
                    st.integers(1, 64).map(lambda x: x / 8),
                    min_size=len(chosen),
                    max_size=len(chosen),
                )
            )
            counts = data.draw(
                st.lists(st.integers(1, 40), min_size=len(chosen), max_size=len(chosen))
            )
            self.s.sleep(tok, chosen, bounds, counts)
            for pk, b, c in zip(chosen, bounds, counts, strict=True):
                self.model.sleep(tok, pk, b, c)

        @rule(tok=st.integers(0, TOKENS - 1), by=st.integers(0, 600))
        def fall(self, tok: int, by: int) -> None:
            self.unigram[tok] = max(0, self.unigram[tok] - by)
            self.s.token_fell(tok)
            for band in {s.band for s in self.model.asleep.values() if s.token == tok}:
                self.model.push(band)

        @precondition(lambda self: self.model.asleep)
        @rule(
            data=st.data(), bound=st.integers(1, 128).map(lambda x: x / 8), count=st.integers(1, 40)
        )
        def rise(self, data: st.DataObject, bound: float, count: int) -> None:
            pk = data.draw(st.sampled_from(sorted(self.model.asleep)))
            band = self.model.asleep[pk].band
            self.s.record_rise(band, bound, count)
            rec = self.model.records[band]
            raised = bound > rec[0] or count > rec[1]
            rec[0], rec[1] = max(rec[0], bound), max(rec[1], count)
            if raised:
                self.model.push(band)

        @rule(stored=st.none() | st.integers(0, 200).map(lambda x: x / 8))
        def wake(self, stored: float | None) -> None:
            band = self.model.wake_band(stored)
            woken = self.s.wake_reaching(stored)
            while woken == []:  # (a band whose pairs all died: nothing to wake)
                woken = self.s.wake_reaching(stored)
            if band is None:
                assert woken is None
                return
            expected = self.model.band_pairs(band)
            assert woken is not None, band
            assert set(woken) == expected, (band, woken, expected)
            for pk in expected:
                del self.model.asleep[pk]
            self.model.covers.pop(band, None)

        @rule()
        def wake_all(self) -> None:
            self.s.wake_all()
            self.model.asleep.clear()
            self.model.covers.clear()

        @invariant()
        def agrees(self) -> None:
            self.s.check()
            for tok in range(TOKENS):
                assert self.s.awake.get(tok, set()) == self.model.awake_under(tok), tok
            assert set(self.s.band_of) == set(self.model.asleep)
            for pk, sleeper in self.model.asleep.items():
                assert self.s.band_of[pk] == sleeper.band

    return SleepingPairsMachine
