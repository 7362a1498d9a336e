"""What every corpus representation shares: the run protocol, merge deltas, pair counting.

The representations themselves are :class:`bpeds.corpus.TypeCorpus` and
:class:`bpeds.corpus.SequenceCorpus` (see :mod:`bpeds.corpus`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NamedTuple, Protocol

from bpeds.vocab import PAIR_SHIFT

__all__ = [
    "Chunk",
    "Corpus",
    "CorpusRun",
    "Counting",
    "Initial",
    "MergeDeltas",
    "NoRewrites",
    "count_pairs",
]

Counting = Literal["overlapping", "non_overlapping"]
_COUNTINGS = ("overlapping", "non_overlapping")

Chunk = bytes | Sequence[int]


def count_pairs(tokens: Sequence[int], counting: Counting = "overlapping") -> dict[int, int]:
    """Packed-pair counts of one chunk.

    Non-overlapping counting is greedy from the left: within a run of equal
    tokens of length L, ``(x, x)`` counts ``L // 2``.

    >>> from bpeds.vocab import pack_pair
    >>> count_pairs([1, 1, 1, 1]) == {pack_pair(1, 1): 3}
    True
    >>> count_pairs([1, 1, 1, 1], "non_overlapping") == {pack_pair(1, 1): 2}
    True

    Complexity: O(len(tokens)).
    """
    out: dict[int, int] = {}
    skip = False
    overlapping = counting == "overlapping"
    for i in range(len(tokens) - 1):
        x, y = tokens[i], tokens[i + 1]
        if not overlapping and x == y:
            if skip:
                skip = False
                continue
            skip = True
        else:
            skip = False
        k = (x << PAIR_SHIFT) | y
        out[k] = out.get(k, 0) + 1
    return out


def _check_counting(counting: str) -> None:
    if counting not in _COUNTINGS:
        raise ValueError(f"counting must be one of {_COUNTINGS}, got {counting!r}")


def _as_bytes(chunk: Chunk) -> bytes:
    """``chunk`` as bytes; anything but bytes or a sequence of ints 0..255 is refused."""
    if type(chunk) is bytes:
        return chunk
    if isinstance(chunk, int | str):
        raise TypeError(
            f"a chunk is bytes or a sequence of ints 0..255, not {type(chunk).__name__}"
        )
    try:
        return bytes(chunk)
    except (TypeError, ValueError):
        raise ValueError(f"a chunk must hold bytes (ints 0..255); got {chunk!r:.60}") from None


def _groups_for(groups: Iterable[int] | None, n: int) -> list[int]:
    if groups is None:
        return [0] * n
    out = list(groups)
    if len(out) != n:
        raise ValueError(f"got {len(out)} group labels for {n} chunks: give one per chunk")
    for g in out:
        if not (isinstance(g, int) and g >= 0):
            raise ValueError(f"group labels must be ints >= 0, found {g!r}")
    return out


class Initial(NamedTuple):
    """A run's starting statistics (every table keyed by packed pair or token id)."""

    pairs: dict[int, int]
    unigram: dict[int, int]
    group_pairs: dict[int, list[int]]
    group_tokens: list[int]


class MergeDeltas:
    """What one merge of ``(a, b)`` into ``new`` changed: filled by a representation,
    read by the driver.

    The common form is **grouped by neighbour token**, as a merge changes only the
    pairs next to its sites: each distinct neighbour ``z`` of the sites moves some
    weight ``w`` (occurrences, weighted by type counts) from an old pair to a new
    one: a right neighbour from ``(b, z)`` to ``(new, z)``, a left one from
    ``(z, a)`` to ``(z, new)``. The representation lists every new pair with its
    count in ``born`` (each contains ``new``); it subtracts each old pair's loss
    from ``counts`` (the driver's pair-count table; deleting a pair that reaches 0)
    when one is given, and lists the losses in ``lost`` when that is a dict. Sites
    are taken left to right and a neighbour is read as the text stands, so two
    adjacent sites (``abab``) make a ``(new, a)`` at the first site's right that
    the second site's left ends: that weight comes off ``born`` (a pair made and
    ended by one merge never reaches the table).

    ``pairs``: any other change, packed pair -> change of count (a representation
    that recounts, e.g. for non-overlapping counts, reports everything here; zero
    entries are kept: a pair whose per-group counts moved but whose total did not is
    still *touched*). The merged pair itself occurs nowhere after its merge: the
    driver drops it whatever the deltas say of it.

    ``sites``: merge sites weighted by type counts (each turns two tokens into one);
    ``group_pairs``: packed pair -> per-group changes; ``group_sites``;
    ``first_positions``: when asked for, the first position of each pair the merge
    made (or a lower bound of it).
    """

    __slots__ = (
        "born",
        "counts",
        "first_positions",
        "group_pairs",
        "group_sites",
        "lost",
        "pairs",
        "sites",
    )

    def __init__(
        self,
        groups: int,
        *,
        positions: bool = False,
        counts: dict[int, int] | None = None,
        lost: bool = True,
    ) -> None:
        self.born: dict[int, int] = {}
        #: The table losses are subtracted from (None: nothing to update).
        self.counts = counts
        self.lost: dict[int, int] | None = {} if lost else None
        self.pairs: defaultdict[int, int] = defaultdict(int)
        self.sites = 0
        self.group_pairs: dict[int, list[int]] = {}
        self.group_sites = [0] * groups
        #: When asked for (``positions=True``), a representation that can may record
        #: here a lower bound of each new pair's first position.
        self.first_positions: dict[int, int] | None = {} if positions else None

    def reset(self) -> None:
        """Empty every table for the next merge (the driver reuses one object). O(1)
        per table plus what they held."""
        self.born = {}
        if self.lost is not None:
            self.lost = {}
        if self.pairs:
            self.pairs.clear()
        self.sites = 0
        if self.group_pairs:
            self.group_pairs = {}
        if any(self.group_sites):  # (sites without a neighbour change no pair)
            self.group_sites = [0] * len(self.group_sites)
        if self.first_positions:
            self.first_positions = {}

    def net(self, a: int, b: int, new: int) -> dict[int, int]:
        """Every change as packed pair -> change of count (the merged pair excluded).

        For tests and tools; the driver reads the grouped form directly. O(changes).
        """
        out: defaultdict[int, int] = defaultdict(int)
        for k, w in self.born.items():
            out[k] += w
        for k, w in (self.lost or {}).items():
            out[k] -= w
        for k, v in self.pairs.items():
            out[k] += v
        out.pop((a << PAIR_SHIFT) | b, None)
        return {k: v for k, v in out.items() if v}


class CorpusRun(Protocol):
    """One training run's mutable state over a corpus (what the driver drives).

    ``position_limit``: every :meth:`first_position` is below it. ``count_sites``:
    report unigram counts (:meth:`initial`) and merge sites (``MergeDeltas.sites``);
    the driver sets it False when nothing reads them, and a run may then skip that
    work. ``rewrites``: the run can change tokens that exist already, for loop
    variants: :meth:`start_holders` (before the first merge), :meth:`split` and
    :meth:`merge_into`; a run that cannot says False and raises ``ValueError``
    from those three.
    """

    num_groups: int
    position_limit: int
    count_sites: bool
    rewrites: bool

    def initial(self) -> Initial:
        """Pair counts, unigram counts, per-group pair counts and tokens, at the start."""
        ...

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)``, left to right, into ``new``."""
        ...

    def first_position(self, pk: int) -> int | None:
        """The first position of pair ``pk`` (for the ``leftmost`` tie), or None."""
        ...

    def start_holders(self) -> None:
        """Keep, from now on, which types hold each token (for :meth:`split`)."""
        ...

    def split(self, token: int, parts: tuple[int, ...], out: MergeDeltas) -> None:
        """Replace every occurrence of ``token`` by ``parts``."""
        ...

    def merge_into(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge ``(a, b)`` into ``new``, a token made before (and maybe split since)."""
        ...

    def check(self) -> None:
        """Verify the run's invariants."""
        ...


class NoRewrites:
    """For runs that cannot change existing tokens (``rewrites = False``)."""

    rewrites = False
    count_sites = True

    def _refuse(self) -> None:
        raise ValueError(
            f"{type(self).__name__} cannot split or remake tokens: train in type mode "
            "(a TypeCorpus) for loop variants that do"
        )

    def start_holders(self) -> None:
        self._refuse()

    def split(self, token: int, parts: tuple[int, ...], out: MergeDeltas) -> None:
        self._refuse()

    def merge_into(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        self._refuse()


class Corpus(Protocol):
    """A corpus representation: anything that starts a :class:`CorpusRun`."""

    num_groups: int

    def start(
        self, counting: Counting, want_groups: bool, length: Callable[[int], int]
    ) -> CorpusRun: ...


def _take(table: dict[int, int], key: int, weight: int) -> None:
    """Subtract ``weight`` from ``table[key]``, deleting it at 0."""
    c = table[key] - weight
    if c:
        table[key] = c
    else:
        del table[key]


def _lose(out: MergeDeltas, lost: dict[int, int]) -> None:
    """Report old pairs' losses (see :class:`MergeDeltas`): subtracted from
    ``out.counts`` and listed in ``out.lost``, where given. O(len(lost))."""
    counts = out.counts
    if counts is not None:
        for key, w in lost.items():
            c = counts[key] - w
            if c:
                counts[key] = c
            else:
                del counts[key]
    if out.lost is not None:
        for key, w in lost.items():
            out.lost[key] = out.lost.get(key, 0) + w
