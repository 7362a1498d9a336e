"""Loop variants: plug-ins that change the merge loop around the score.

A score says *which* pair to merge; a variant says what else happens around
each merge. Most published BPE variants keep frequency as the score and change
the loop: Picky BPE removes tokens that were only ever intermediates, Scaffold-BPE
hides them at encoding time. A :class:`Variant` is called by the driver (and by
the brute-force oracle in :mod:`bpeds.testing`) through three hooks, and acts
through a :class:`Loop`:

- :meth:`Variant.begin`: once, before the first selection;
- :meth:`Variant.before_merge`: the next pair has been selected (its record is
  known) and is about to be merged;
- :meth:`Variant.after_merge`: a pair was merged everywhere.

From either hook a variant may :meth:`Loop.remove` a token (split it back into
its parts everywhere it occurs; every pair count and heap entry is updated
incrementally, and a later merge can make the same bytes again, under a new
id), :meth:`Loop.mark` a token (it stays in the vocabulary and keeps merging,
but encoding never emits it: an emitted marked token is split into its parts)
and :meth:`Loop.unmark` it, or :meth:`Loop.stop` the run. Every action is an
:class:`Event` in the driver's event log, saved with the model.

The run stops when the vocabulary reaches its target: ``num_merges`` tokens
past the starting vocabulary, counting only tokens that are present (not
removed) and not marked. Without a variant that is exactly ``num_merges``
merges. A run that removes or marks as fast as it merges stops after
``max_merges`` merges (default ``4 * num_merges + 256``).

A variant declares what it needs (``needs_unigrams``: the loop keeps unigram
counts, as for a ``PARTS`` score; ``removes``: the corpus representation must
support splitting, which type mode does) and the driver keeps only that.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any, ClassVar, Literal, Protocol

import regex

from bpeds.specs import make_named, name_and_options
from bpeds.vocab import Vocab

__all__ = [
    "BoundlessBPE",
    "CharSafe",
    "Event",
    "Loop",
    "Picky",
    "Scaffold",
    "Split",
    "SuperBPE",
    "Supermerges",
    "Variant",
    "get_variant",
    "make_token",
    "partial_character",
    "utf8_byte_kind",
    "variant_names",
]

EventKind = Literal["merge", "remove", "mark", "unmark"]
#: What a removed token is split into: its present parts, or its bytes.
Split = Literal["parts", "bytes"]


@dataclass(frozen=True, slots=True)
class Event:
    """One step of a run: ``kind`` happened to ``token``.

    ``merge``: ``token`` was made from ``parts`` (two ids). ``remove``: ``token``
    was split into ``parts`` (the present tokens it is made of) everywhere.
    ``mark`` / ``unmark``: ``token`` was hidden from / returned to encoding
    (``parts`` is empty). ``step``: the number of merges done before this event.
    """

    kind: EventKind
    token: int
    parts: tuple[int, ...]
    step: int


class Loop(Protocol):
    """What a variant sees of a run and may do to it (the driver and the oracle
    both implement it)."""

    @property
    def vocab(self) -> Vocab:
        """The run's vocabulary (ids, parents, bytes)."""
        ...

    @property
    def removed(self) -> Collection[int]:
        """Tokens removed and not made again."""
        ...

    @property
    def marked(self) -> Collection[int]:
        """Tokens marked now."""
        ...

    @property
    def merges_done(self) -> int:
        """Merges done so far."""
        ...

    def unigram(self, token: int) -> int:
        """How often ``token`` occurs in the corpus now (needs ``needs_unigrams``)."""
        ...

    def remaining(self) -> int:
        """Tokens still to add before the vocabulary reaches its target."""
        ...

    def merged_sites(self) -> int:
        """How many occurrences the last merge made (``needs_unigrams``)."""
        ...

    def remove(self, token: int, into: Split = "parts") -> tuple[int, ...]:
        """Split ``token`` everywhere into its present parts (``into="parts"``: its
        parents, each removed one expanded further) or into its bytes
        (``into="bytes"``); return the parts."""
        ...

    def mark(self, token: int) -> None:
        """Hide ``token`` from encoding (it keeps merging)."""
        ...

    def unmark(self, token: int) -> None:
        """Return a marked token to encoding."""
        ...

    def stop(self) -> None:
        """End the run after this hook."""
        ...


class Variant:
    """Base class of loop variants: override the hooks you need.

    ``name``: the registry name. ``needs_unigrams``: the loop keeps unigram
    counts (:meth:`Loop.unigram`, :meth:`Loop.merged_sites`). ``removes``: the
    variant calls :meth:`Loop.remove` (the corpus representation must support
    it: type mode does, sequence mode does not).
    ``same_bytes_same_token``: a merge whose bytes equal a token made before
    (removed or not) makes that token again, under its id, instead of a new id.
    ``filters``: :meth:`eligible` may refuse pairs (a fixed rule of the two
    tokens, like ``max_token_length``: a refused pair is never merged).
    ``switches``: training switches pre-tokenization half-way (the variant
    provides ``stage1_size(first, vocab_size)`` and ``stage2_pattern``; the run
    before the switch has no variant, the run after it has this one).
    ``supermerges``: after this run (the word-level pass), a second run merges
    whole adjacent pre-tokens (BoundlessBPE: the variant provides
    ``superword(piece)`` and ``second_pass(counts, sizes)``).
    """

    name: ClassVar[str] = "custom"
    needs_unigrams: ClassVar[bool] = False
    removes: ClassVar[bool] = False
    same_bytes_same_token: ClassVar[bool] = False
    filters: ClassVar[bool] = False
    switches: ClassVar[bool] = False
    supermerges: bool = False

    def begin(self, loop: Loop) -> None:
        """Called once before the first selection (reset per-run state here).
        Default: nothing."""

    def eligible(self, vocab: Vocab, left: int, right: int) -> bool:
        """With ``filters``: may ``(left, right)`` ever be merged? It must depend on
        the two tokens only (it is asked once per pair and never again)."""
        return True

    def before_merge(self, loop: Loop, pair: tuple[int, int], count: int) -> None:
        """Called when ``pair`` (occurring ``count`` times) was selected, before the
        merge. Default: nothing."""

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        """Called after ``pair`` was merged into ``new`` everywhere. Default: nothing."""

    def options(self) -> dict[str, Any]:
        """The options that determine this variant's events (recorded with a model)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., **options}``: enough to rebuild it with :func:`get_variant`."""
        return {"name": self.name, **self.options()}

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.describe() == self.describe()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self.options().items()))))


def _check_fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


class Picky(Variant):
    """Picky BPE (Chizhov et al., EMNLP 2024): after merging ``(a, b)`` into ``ab``,
    remove ``a`` (then ``b``) when its Intersection-over-Self exceeds ``threshold``.

    IoS(x) = m / (f(x) + m), where m is the number of occurrences the merge made
    and f(x) is ``x``'s count after the merge (so for ``a != b``, m over ``a``'s
    count before the merge). Byte tokens are never removed. A removed token is
    split into the present tokens it is made of, everywhere; a later merge that
    makes the same bytes restores it under its id (as does a second pair making
    a present token's bytes: one token per string, as in the paper's code).
    ``threshold = 1`` never removes.

    ``count_remakes``: stop as the paper's code does. That code adds one to its vocabulary
    size for every merge, also for a merge that makes a token already present (a second
    pair with the same bytes), which adds no token; so it stops one merge earlier for
    every such merge. By default bpeds counts the tokens encoding can emit, and a run ends
    with exactly ``vocab_size`` of them; with ``count_remakes=True`` the run stops when
    that count plus the merges that re-made a present token reaches the target.
    O(1) per merge either way.

    >>> Picky(0.9).describe()
    {'name': 'picky', 'threshold': 0.9}
    >>> Picky(0.9, count_remakes=True).describe()
    {'name': 'picky', 'threshold': 0.9, 'count_remakes': True}
    """

    name = "picky"
    needs_unigrams = True
    removes = True
    same_bytes_same_token = True

    def __init__(self, threshold: float = 0.9, count_remakes: bool = False) -> None:
        self.threshold = _check_fraction(threshold, "Picky threshold")
        if not isinstance(count_remakes, bool):
            raise ValueError(f"Picky count_remakes must be True or False, got {count_remakes!r}")
        self.count_remakes = count_remakes
        self._made: set[int] = set()
        self._gone: set[int] = set()
        self._remade = 0

    def options(self) -> dict[str, Any]:
        if self.count_remakes:
            return {"threshold": self.threshold, "count_remakes": True}
        return {"threshold": self.threshold}

    def begin(self, loop: Loop) -> None:
        self._made = set()
        self._gone = set()
        self._remade = 0

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        if self.count_remakes:
            if new in self._made and new not in self._gone:
                self._remade += 1  # the merge made a token that was there already
            self._made.add(new)
            self._gone.discard(new)  # (a removed token made again is restored)
        self._remove(loop, pair)
        if self._remade and loop.remaining() <= self._remade:
            loop.stop()

    def _remove(self, loop: Loop, pair: tuple[int, int]) -> None:
        m = loop.merged_sites()
        if m <= 0:
            return
        a, b = pair
        for x in (a,) if a == b else (a, b):
            if x < 256 or x in loop.removed:
                continue
            # (the comparison the reference makes: m / (f_after + m) > threshold)
            if m > self.threshold * (loop.unigram(x) + m):
                loop.remove(x)
                self._gone.add(x)


class Scaffold(Variant):
    """Scaffold-BPE (Lian et al., 2024): a merged token whose count falls below
    the count of the next pair to merge becomes a *scaffold* token: it stays in
    the vocabulary as a merge intermediate, but encoding never emits it (an
    emitted scaffold token is split into its parts) and it does not count
    towards the vocabulary size. A scaffold token whose count reaches the count
    of the next pair again is re-activated.

    Checked when the next pair is selected (its count is the threshold): first
    re-activation (count >= the next pair's count), then the tokens of the last
    merge. ``min_count``: additionally, a token below this count always becomes
    scaffold (0: only the rule above).

    >>> Scaffold().describe()
    {'name': 'scaffold', 'min_count': 0}
    """

    name = "scaffold"
    needs_unigrams = True

    def __init__(self, min_count: int = 0) -> None:
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 0:
            raise ValueError(f"Scaffold min_count must be an int >= 0, got {min_count!r}")
        self.min_count = min_count
        self._last: tuple[int, int] | None = None
        self._scaffold: list[tuple[int, int]] = []

    def options(self) -> dict[str, Any]:
        return {"min_count": self.min_count}

    def begin(self, loop: Loop) -> None:
        self._last = None
        self._scaffold = []

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        self._last = pair

    def before_merge(self, loop: Loop, pair: tuple[int, int], count: int) -> None:
        # Scaffold tokens by count, most frequent first: a lazy max-heap of (-count, id)
        # (counts only fall between merges, so a stored count bounds the current one;
        # an entry is checked when it reaches the top). O(log n) per change.
        heap = self._scaffold
        floor = max(count, self.min_count)
        while heap and -heap[0][0] >= floor and loop.remaining() > 0:
            stored, t = heappop(heap)
            if t not in loop.marked:
                continue
            f = loop.unigram(t)
            if f != -stored:
                heappush(heap, (-f, t))
            else:
                loop.unmark(t)
        last, self._last = self._last, None
        if last is None:
            return
        a, b = last
        for x in (a,) if a == b else (a, b):
            if x < 256 or x in loop.marked or x in loop.removed:
                continue
            f = loop.unigram(x)
            if f < count or f < self.min_count:
                loop.mark(x)
                heappush(self._scaffold, (-f, x))


def count_words(token: bytes) -> int:
    """Maximal runs of non-whitespace bytes in ``token`` (ASCII whitespace).

    >>> count_words(b" by the way"), count_words(b"way,"), count_words(b"  ")
    (3, 1, 0)
    """
    return len(token.split())


class SuperBPE(Variant):
    """SuperBPE (Liu et al., COLM 2025): ordinary BPE up to ``transition`` of the
    vocabulary, then training continues on chunks cut by a second pattern that does
    not split at whitespace, so that tokens can span words ("superwords").

    Stage 1 uses the training ``pattern``. At the switch, every stage-2 chunk
    (``stage2_pattern``; ``None``, the default, is SuperBPE's own,
    :data:`bpeds.tokenizer.superbpe.SUPERBPE_STAGE2`: no whitespace split;
    digits in groups of three from the right; newlines apart) starts as the
    stage-1 merges encode it, and stage 2 continues from the stage-1 vocabulary
    (ids and ranks kept), refusing merges that would make a token of more than
    ``max_words`` words (the paper's limit, 4). ``transition``: a fraction of
    the merges (default 0.9, as the paper's best setting of 180k of 200k) or a
    vocabulary size. The tokenizer encodes with ``stage2_pattern`` and all merges
    by rank, as the paper's tokenizers do.

    >>> SuperBPE(0.8).describe()["transition"]
    0.8
    """

    name = "superbpe"
    filters = True
    switches = True

    def __init__(
        self,
        transition: float | int = 0.9,
        max_words: int = 4,
        stage2_pattern: str | None = None,
    ) -> None:
        if isinstance(transition, bool) or not isinstance(transition, int | float):
            raise ValueError(f"SuperBPE transition must be a number, got {transition!r}")
        if isinstance(transition, float) and not 0 < transition <= 1:
            raise ValueError(
                f"SuperBPE transition must be a fraction in (0, 1] or a vocabulary size, "
                f"got {transition!r}"
            )
        if isinstance(transition, int) and transition < 256:
            raise ValueError(f"a SuperBPE transition vocabulary size is >= 256, got {transition}")
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
            raise ValueError(f"SuperBPE max_words must be an int >= 1, got {max_words!r}")
        if stage2_pattern is not None and not isinstance(stage2_pattern, str):
            raise TypeError(f"SuperBPE stage2_pattern must be a str, got {stage2_pattern!r}")
        self.transition = transition
        self.max_words = max_words
        self.stage2_pattern = stage2_pattern
        self._words_of: list[int] = []
        self._starts: list[bool] = []
        self._ends: list[bool] = []

    def options(self) -> dict[str, Any]:
        return {
            "transition": self.transition,
            "max_words": self.max_words,
            "stage2_pattern": self.stage2_pattern,
        }

    def stage1_size(self, first: int, vocab_size: int) -> int:
        """The vocabulary size at the switch, for a run from ``first`` tokens (bytes and
        special tokens) to ``vocab_size``."""
        if isinstance(self.transition, int):
            if not first <= self.transition <= vocab_size:
                raise ValueError(
                    f"the SuperBPE transition {self.transition} must lie between {first} and "
                    f"the vocabulary size {vocab_size}"
                )
            return self.transition
        return first + round((vocab_size - first) * self.transition)

    def begin(self, loop: Loop) -> None:
        self._words_of = []
        self._starts = []
        self._ends = []

    def eligible(self, vocab: Vocab, left: int, right: int) -> bool:
        # words(l + r) = words(l) + words(r), less one when a word runs across the join;
        # each token's words and whether it starts / ends inside a word, kept by id.
        words = self._words_of
        if max(left, right) >= len(words):
            self._extend(vocab, max(left, right) + 1)
        return (
            words[left] + words[right] - (self._ends[left] and self._starts[right])
            <= self.max_words
        )

    def _extend(self, vocab: Vocab, size: int) -> None:
        for t in range(len(self._words_of), size):
            raw = vocab.token_bytes(t)
            self._words_of.append(count_words(raw))
            self._starts.append(not raw[:1].isspace())
            self._ends.append(not raw[-1:].isspace())


class BoundlessBPE(Variant):
    """BoundlessBPE (Schmidt et al., 2025, arXiv 2504.00178), as the authors' trainer
    (GitHub ``kensho-technologies/fastboundlessbpe``, ``python/boundlessbpe/train.py``)
    runs it: a word-level pass, then *supermerges* of whole adjacent pre-tokens that
    compete with the word-level merges.

    This object's own hooks are the **word-level pass** (the authors' ``BpeTrainer``):
    ordinary BPE in which, after merging ``(a, b)``, each of ``a`` then ``b`` that is
    not a byte is removed, split into its **bytes**, when its Intersection-over-Self
    ``c(ab) / c(x)`` (counts before the merge; ``c(ab)`` the occurrences the merge
    made) is at least ``tau`` (``None``: never; the authors' ``tau > 1``). A merge that
    makes the bytes of an earlier token makes that token again (one token per
    string). With ``supermerges`` (the default) training then runs the **second
    pass** (:meth:`second_pass`): every maximal run of two or more adjacent
    pre-tokens that the word-level tokenizer encodes as one token each and that
    ``superword`` finds (a ``regex`` searched in the piece; default: it holds a
    letter) is a sequence of whole-word tokens, and a supermerge of two of them
    competes with the word-level pass's merges in their order: it wins when it occurs
    more often than the next word-level merge did when that was made (ties go to the
    word-level merge). The word-level merges that lost to none are dropped, so the
    vocabulary keeps the word-level pass's size.

    To train exactly as the authors' code: ``pattern="gpt4o"`` (their default
    pre-tokenizer's), ``tie="lexicographic"`` and ``counting="non_overlapping"``;
    their vocabulary sizes count 243 byte tokens (the bytes valid in UTF-8), so their
    size V is bpeds' V + 13.

    >>> BoundlessBPE(0.9).describe()
    {'name': 'boundless', 'tau': 0.9, 'supermerges': True, 'superword': '\\\\p{L}'}
    """

    name = "boundless"
    needs_unigrams = True
    removes = True
    same_bytes_same_token = True

    def __init__(
        self, tau: float | None = 0.9, supermerges: bool = True, superword: str = r"\p{L}"
    ) -> None:
        if tau is not None and (
            isinstance(tau, bool) or not isinstance(tau, int | float) or not 0 < tau <= 1
        ):
            raise ValueError(f"BoundlessBPE tau must be a number in (0, 1] or None, got {tau!r}")
        if not isinstance(supermerges, bool):
            raise TypeError(f"BoundlessBPE supermerges must be a bool, got {supermerges!r}")
        if not isinstance(superword, str):
            raise TypeError(f"BoundlessBPE superword must be a regex str, got {superword!r}")
        try:
            self._superword = regex.compile(superword)
        except regex.error as exc:
            raise ValueError(
                f"BoundlessBPE superword {superword!r} does not compile: {exc}"
            ) from None
        self.tau = None if tau is None else float(tau)
        self.supermerges = supermerges
        self.superword_pattern = superword

    def options(self) -> dict[str, Any]:
        return {
            "tau": self.tau,
            "supermerges": self.supermerges,
            "superword": self.superword_pattern,
        }

    def superword(self, piece: str) -> bool:
        """May the pre-token ``piece`` (if it is one word-level token) join a supermerge?

        >>> BoundlessBPE().superword(" the"), BoundlessBPE().superword(", ")
        (True, False)
        """
        return self._superword.search(piece) is not None

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        if self.tau is None:
            return
        made = loop.merged_sites()
        a, b = pair
        # Counts before the merge: each occurrence made took one a and one b.
        before_a = loop.unigram(a) + (2 * made if a == b else made)
        before_b = before_a if a == b else loop.unigram(b) + made
        doomed = [
            x
            for x, before in ((a, before_a), (b, before_b))
            if x >= 256 and before > 0 and made / before >= self.tau
        ]
        for x in dict.fromkeys(doomed):
            if x not in loop.removed:
                loop.remove(x, into="bytes")

    def second_pass(self, counts: Sequence[int], sizes: Sequence[int]) -> Supermerges:
        """The second pass's loop variant, for a word-level pass whose merges occurred
        ``counts`` times and whose vocabulary held ``sizes[i]`` merged tokens with its
        first ``i`` merges (and the removals after them) kept."""
        return Supermerges(counts, sizes)


class Supermerges(Variant):
    """BoundlessBPE's second pass: the selected supermerge competes with the word-level
    pass's next merge (see :class:`BoundlessBPE`).

    Run on sequences of whole-word tokens (the corpus) from the word-level vocabulary.
    ``counts[i]``: how often word-level merge ``i`` occurred when it was made;
    ``sizes[i]``: the word-level vocabulary's merged tokens with merges ``0..i-1`` kept
    (``sizes[-1]`` is the target). Before each supermerge of count ``c``, every next
    word-level merge with a count of at least ``c`` is kept; the run stops as soon as
    the kept merges plus the supermerges made reach the target. :attr:`kept` is the
    number of word-level merges kept; :attr:`at` gives, per supermerge, the word-level
    merges kept when it was made. O(1) per step besides the merges it keeps.

    >>> s = Supermerges([9, 5, 2], [0, 1, 2, 3]); s.describe()
    {'name': 'supermerges'}
    """

    name = "supermerges"
    same_bytes_same_token = True

    def __init__(self, counts: Sequence[int], sizes: Sequence[int]) -> None:
        if len(sizes) != len(counts) + 1:
            raise ValueError("sizes holds one entry more than counts")
        self.counts = list(counts)
        self.sizes = list(sizes)
        self.kept = 0
        self.at: list[int] = []
        self._made: set[int] = set()

    def begin(self, loop: Loop) -> None:
        self.kept = 0
        self.at = []
        self._made = set()
        if self._full():
            loop.stop()

    def _full(self) -> bool:
        return self.sizes[self.kept] + len(self._made) >= self.sizes[-1]

    def before_merge(self, loop: Loop, pair: tuple[int, int], count: int) -> None:
        counts = self.counts
        while self.kept < len(counts) and count <= counts[self.kept]:
            self.kept += 1
            if self._full():
                loop.stop()
                return

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        self._made.add(new)
        self.at.append(self.kept)
        if self._full():
            loop.stop()


def utf8_byte_kind(byte: int) -> int:
    """0 for a UTF-8 continuation byte, 1 for ASCII, 2, 3 or 4 for the lead byte of a
    character of that many bytes, 5 for a byte UTF-8 never uses.

    >>> [utf8_byte_kind(b) for b in "aé€😀".encode()[:4]], utf8_byte_kind(0xFF)
    ([1, 2, 0, 3], 5)
    """
    if byte < 0x80:
        return 1
    if byte < 0xC0:
        return 0
    if byte < 0xE0:
        return 2
    if byte < 0xF0:
        return 3
    if byte < 0xF8:
        return 4
    return 5


def partial_character(token: bytes) -> tuple[int, bool]:
    """``(kind of the first byte, whether the token is part of one character)``, as
    SCRIPT-BPE's byte pre-tokenizer judges a token (``_is_partial_seq``): more than four
    bytes, or two or more bytes that begin characters, are whole characters; else the
    token is partial when it starts with a continuation byte or is shorter than the
    character its first byte begins.

    >>> partial_character("é".encode()[:1]), partial_character("é".encode())
    ((2, True), (2, False))
    """
    if len(token) > 4:
        return 1, False
    kinds = [utf8_byte_kind(b) for b in token]
    if kinds[0] == 0:
        return 0, True
    if sum(k in (1, 2, 3, 4) for k in kinds) > 1:
        return kinds[0], False
    return kinds[0], len(token) != kinds[0]


class CharSafe(Variant):
    """Character-safe merges: SCRIPT-BPE's character-boundary rule (Land and Arnett, 2025,
    arXiv 2505.24689; code GitHub ``sanderland/script_bpe``, the ``_cb`` pre-tokenizers).

    A pair is merged only if both tokens are whole characters (runs of them), or the left
    one is the start of a character and the right one continues it: a character's bytes
    join left to right into the character first, and no token holds part of a character
    next to another character. So no token ends inside a character except a character's
    own prefix. A fixed rule of the two tokens (``filters``); the merges' ranks encode
    as ordinary BPE.

    >>> from bpeds.vocab import Vocab
    >>> v = Vocab(); e1, e2 = "é".encode(); e = v.add(e1, e2)
    >>> rule = CharSafe()
    >>> rule.eligible(v, e1, e2), rule.eligible(v, e2, 97), rule.eligible(v, e, 97)
    (True, False, True)
    """

    name = "charsafe"
    filters = True

    def __init__(self) -> None:
        self._kind: list[tuple[int, bool]] = []

    def begin(self, loop: Loop) -> None:
        self._kind = []

    def eligible(self, vocab: Vocab, left: int, right: int) -> bool:
        kind = self._kind
        if max(left, right) >= len(kind):
            for t in range(len(kind), max(left, right) + 1):
                kind.append(partial_character(vocab.token_bytes(t)))
        (lk, lp), (rk, rp) = kind[left], kind[right]
        if lp and rp:
            return lk != 0 and rk == 0
        return not lp and not rp


_VARIANTS: dict[str, type[Variant]] = {
    "picky": Picky,
    "scaffold": Scaffold,
    "superbpe": SuperBPE,
    "boundless": BoundlessBPE,
    "charsafe": CharSafe,
}


def variant_names() -> list[str]:
    """The names :func:`get_variant` knows."""
    return sorted(_VARIANTS)


def get_variant(spec: Variant | str | Mapping[str, Any]) -> Variant:
    """A variant from an instance, a name (``"picky"``) or a describe-dict
    (``{"name": "picky", "threshold": 0.6}``).

    >>> get_variant({"name": "picky", "threshold": 0.6})
    Picky(threshold=0.6)
    """
    if isinstance(spec, Variant):
        return spec
    named = name_and_options(spec, "variant")
    if named is None:
        raise TypeError(f"variant must be a Variant, a name or a dict, got {spec!r}")
    return make_named(*named, _VARIANTS, "variant")


def make_token(
    vocab: Vocab, left: int, right: int, made: dict[bytes, int] | None
) -> tuple[int, bool]:
    """The id a merge of ``(left, right)`` makes, and whether it was made before.

    Without ``made`` (bytes -> id of every token made so far), a new id. With it (a
    variant whose ``same_bytes_same_token`` holds), the id of an earlier token with the
    same bytes if there is one (True: it is made again), else a new id, recorded.
    O(length of the bytes).
    """
    if made is None:
        return vocab.add(left, right), False
    text = vocab.token_bytes(left) + vocab.token_bytes(right)
    old = made.get(text)
    if old is not None:
        return old, True
    new = made[text] = vocab.add(left, right)
    return new, False
