"""The driver's side of :class:`bpeds.variants.Loop`: what a loop variant reads and does."""

from __future__ import annotations

from collections.abc import Callable

from bpeds.errors import InvariantError
from bpeds.variants import Event, Split, Variant
from bpeds.vocab import BYTE_TOKENS, Vocab

__all__ = ["VariantLoop", "present_parts"]


def present_parts(vocab: Vocab, token: int, removed: set[int]) -> list[int]:
    """The tokens ``token`` splits into: its parents, each expanded further while it
    is removed (byte tokens are never removed). O(parts).

    >>> v = Vocab(); ab = v.add(97, 98); abc = v.add(ab, 99)
    >>> present_parts(v, abc, set()), present_parts(v, abc, {ab})
    ([256, 99], [97, 98, 99])
    """
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


class VariantLoop:
    """A run as a :class:`~bpeds.variants.Loop` sees it, and the actions it takes.

    Every action is checked (a token that does not exist, a byte, a removed token,
    an action the variant did not declare or took from the wrong hook is a
    ``ValueError`` or ``TypeError``) and logged as an
    :class:`~bpeds.variants.Event`. ``split`` is the run's own split of a token
    everywhere (:meth:`bpeds.driver.state.RunState.split_token`). The run is
    finished when the vocabulary reached its target (``num_merges`` present,
    unmarked tokens past the start) or the variant stopped it. O(1) per call but
    :meth:`remove`, which costs the split.

    >>> from bpeds.variants import Variant
    >>> vocab, events = Vocab(), []
    >>> loop = VariantLoop(Variant(), vocab, events, 10, None, lambda t, parts: parts)
    >>> ab = vocab.add(97, 98)  # (a merge: one token more, 9 to go)
    >>> loop.mark(ab); loop.remaining(), events[0].kind  # (marked: hidden, 10 to go again)
    (10, 'mark')
    >>> loop.remove(ab)
    Traceback (most recent call last):
    ...
    ValueError: variant Variant() removes a token but does not declare removes
    >>> loop.check()
    """

    def __init__(
        self,
        variant: Variant,
        vocab: Vocab,
        events: list[Event],
        num_merges: int,
        unigram: list[int] | None,
        split: Callable[[int, tuple[int, ...]], tuple[int, ...]],
    ) -> None:
        self.variant = variant
        self._vocab = vocab
        self._events = events
        self._target = num_merges
        self._uni = unigram
        self._split = split
        self.removed: set[int] = set()
        self.marked: set[int] = set()
        self.initial = len(vocab)
        self.merges_done = 0
        #: how many occurrences the last merge made
        self.sites = 0
        #: "before" or "after" while the variant's hook of that name runs
        self.phase = ""
        self.stopped = False

    @property
    def vocab(self) -> Vocab:
        return self._vocab

    def _need_uni(self) -> list[int]:
        if self._uni is None:
            raise ValueError(
                f"variant {self.variant!r} reads unigram counts but does not declare "
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
        size = len(self._vocab) - self.initial - len(self.removed) - len(self.marked)
        return self._target - size

    def finished(self, done: int | None = None) -> bool:
        """The vocabulary reached its target, or the variant stopped the run
        (``done``: the merges done so far, when the driver asks between steps)."""
        if done is not None:
            self.merges_done = done
        return self.stopped or self.remaining() <= 0

    def _check(self, token: int) -> None:
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"a token is an int id, got {token!r}")
        if not 0 <= token < len(self._vocab):
            raise ValueError(f"token {token} is not in the vocabulary")

    def _check_live(self, token: int, action: str) -> None:
        self._check(token)
        if token < BYTE_TOKENS:
            raise ValueError(f"cannot {action} token {token}: it is a byte")
        if token in self.removed:
            raise ValueError(f"cannot {action} token {token}: it was removed")

    def remove(self, token: int, into: Split = "parts") -> tuple[int, ...]:
        self._check_live(token, "remove")
        if into not in ("parts", "bytes"):
            raise ValueError(f"a removed token splits into 'parts' or 'bytes', got {into!r}")
        if not self.variant.removes:
            raise ValueError(
                f"variant {self.variant!r} removes a token but does not declare removes"
            )
        if self.phase != "after":
            raise ValueError("a variant removes tokens from after_merge only")
        if into == "bytes":
            parts = tuple(self._vocab.token_bytes(token))
        else:
            parts = tuple(present_parts(self._vocab, token, self.removed))
        self._split(token, parts)
        self.removed.add(token)
        self.marked.discard(token)
        self._events.append(Event("remove", token, parts, self.merges_done))
        return parts

    def mark(self, token: int) -> None:
        self._check_live(token, "mark")
        if token in self.marked:
            return
        self.marked.add(token)
        self._events.append(Event("mark", token, (), self.merges_done))

    def unmark(self, token: int) -> None:
        self._check(token)
        if token not in self.marked:
            raise ValueError(f"cannot unmark token {token}: it is not marked")
        self.marked.discard(token)
        self._events.append(Event("unmark", token, (), self.merges_done))

    def stop(self) -> None:
        self.stopped = True

    def check(self) -> None:
        """Removed and marked tokens are merged tokens of the vocabulary, and none is
        both. O(removed + marked)."""
        size = len(self._vocab)
        for t in self.removed | self.marked:
            if not BYTE_TOKENS <= t < size:
                raise InvariantError(f"token {t} is removed or marked, but not a merge", t)
        if self.removed & self.marked:
            raise InvariantError("tokens both removed and marked", self.removed & self.marked)

    def begin(self) -> None:
        """Call the variant's ``begin`` hook (once, before the first selection)."""
        self.phase = "begin"
        self.variant.begin(self)
        self.phase = ""

    def before_merge(self, left: int, right: int, count: int) -> bool:
        """Call the variant's ``before_merge`` hook; True if the run is finished."""
        self.phase = "before"
        self.variant.before_merge(self, (left, right), count)
        self.phase = ""
        return self.finished()

    def after_merge(
        self, done: int, left: int, right: int, new: int, count: int, sites: int
    ) -> None:
        """Call the variant's ``after_merge`` hook after merge number ``done``
        (``sites``: the occurrences it made)."""
        self.merges_done = done
        self.sites = sites
        self.phase = "after"
        self.variant.after_merge(self, (left, right), new, count)
        self.phase = ""
