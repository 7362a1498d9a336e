"""Encoding by a variant's event log: merges and removals replayed in order, marks hidden.

A tokenizer trained with a loop variant (see :mod:`bpeds.variants`) records an
event log: ``["merge", new, left, right]``, ``["remove", token, *parts]``,
``["mark", token]``, ``["unmark", token]``, ``["supermerge", new, left, right]``.
Encoding a piece replays the log as training did: each event, in order, applies
to every occurrence at once (a merge left to right, non-overlapping; a removal
splits the token into its parts). Tokens marked at the end of the log are never
emitted: each is split into its parents, recursively, until no marked token is
left. Supermerges (BoundlessBPE's) come last in a log and join whole pre-tokens:
after every piece of a text is encoded, each run of adjacent pieces that are one
token each is merged by the supermerges in their order (:class:`Supermerger`), as
the BoundlessBPE authors' inference does.

:func:`check_events` validates a log against a tokenizer's merges (untrusted
input: every id, kind and part is checked). :class:`Replay` encodes a piece,
:class:`Supermerger` joins pieces.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from bpeds.errors import BpedsError
from bpeds.vocab import BYTE_TOKENS, apply_merge

__all__ = [
    "MAX_STEPS_PER_BYTE",
    "EventLogError",
    "Replay",
    "Supermerger",
    "check_events",
    "hide",
]

#: The most events :class:`Replay` applies to a piece of ``n`` bytes: this many per byte,
#: plus 256. A training run's log applies about one per byte (a merge shortens the piece by
#: one, a removal lengthens it as much); a log that undoes and redoes the same merges over
#: and over applies one per event, and is refused when it passes the bound. Read at each call.
MAX_STEPS_PER_BYTE = 4


class EventLogError(BpedsError, ValueError):
    """An event log that does not describe a valid run over its merges."""


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_events(
    merges: Sequence[tuple[int, int]], events: Sequence[Sequence[Any]]
) -> tuple[list[tuple[Any, ...]], frozenset[int], frozenset[int]]:
    """Validate ``events`` against ``merges`` (``merges[k]`` made id ``256 + k``).

    Returns the normalised log (tuples), the tokens removed at the end and the
    tokens marked at the end. Every id's first merge event must be its entry in
    ``merges``, in id order; a later merge event may only make an existing
    token's bytes again. A removal names a present token and its present parts;
    marks apply to present merged tokens. A supermerge makes a new id like a merge,
    from present tokens; after the first one only supermerges may follow. Raises
    :class:`EventLogError` naming the first bad event. Complexity: O(events + total
    bytes of merged tokens).
    """
    present = set(range(BYTE_TOKENS))
    removed: set[int] = set()
    marked: set[int] = set()
    made = 0
    out: list[tuple[Any, ...]] = []
    table: list[bytes] = [bytes((b,)) for b in range(BYTE_TOKENS)]
    supermerged = False
    for i, ev in enumerate(events):
        if not isinstance(ev, list | tuple) or not ev or not isinstance(ev[0], str):
            raise EventLogError(f"event {i} must be a list [kind, token, ...], got {ev!r}")
        kind, rest = ev[0], list(ev[1:])
        if not rest or not all(_is_id(x) for x in rest):
            raise EventLogError(f"event {i} ({kind}) must name integer ids, got {ev!r}")
        token = rest[0]
        if supermerged and kind != "supermerge":
            raise EventLogError(f"event {i}: only supermerges may follow a supermerge")
        if kind in ("merge", "supermerge"):
            if len(rest) != 3:
                raise EventLogError(f"event {i}: a {kind} is ['{kind}', new, left, right]")
            _, a, b = rest
            if not (a in present and b in present):
                raise EventLogError(
                    f"event {i}: {kind} ({a}, {b}) uses a token that is not present"
                )
            if token == BYTE_TOKENS + made:
                if made >= len(merges) or tuple(merges[made]) != (a, b):
                    raise EventLogError(
                        f"event {i}: {kind} makes id {token} from ({a}, {b}), but the merges "
                        f"list makes it from {merges[made] if made < len(merges) else 'nothing'}"
                    )
                made += 1
                table.append(table[a] + table[b])
            elif not (BYTE_TOKENS <= token < BYTE_TOKENS + made) or (
                table[token] != table[a] + table[b]
            ):
                raise EventLogError(
                    f"event {i}: {kind} ({a}, {b}) -> {token}: a repeated id must be a token "
                    "with the same bytes, made before"
                )
            present.add(token)
            removed.discard(token)
            supermerged = kind == "supermerge"
            out.append((kind, token, a, b))
        elif kind == "remove":
            if token not in present or token < BYTE_TOKENS:
                raise EventLogError(f"event {i}: cannot remove token {token}: not a present merge")
            parts = tuple(rest[1:])
            if (
                not parts
                or b"".join(table[p] if p < len(table) else b"" for p in parts) != (table[token])
                or not all(p in present and p != token for p in parts)
            ):
                raise EventLogError(
                    f"event {i}: removal of {token} must list present parts with its bytes"
                )
            present.discard(token)
            removed.add(token)
            marked.discard(token)
            out.append(("remove", token, *parts))
        elif kind in ("mark", "unmark"):
            if len(rest) != 1 or token not in present or token < BYTE_TOKENS:
                raise EventLogError(f"event {i}: cannot {kind} token {token}")
            if kind == "mark":
                marked.add(token)
            elif token not in marked:
                raise EventLogError(f"event {i}: token {token} is not marked")
            else:
                marked.discard(token)
            out.append((kind, token))
        else:
            raise EventLogError(
                f"event {i}: unknown kind {kind!r} (merge, remove, mark, unmark or supermerge)"
            )
    if made != len(merges):
        raise EventLogError(
            f"the event log makes {made} tokens but the merges list has {len(merges)}"
        )
    return out, frozenset(removed), frozenset(marked)


class Replay:
    """Encode a piece's bytes by replaying an event log (see the module docstring).

    Each step finds, among the events after the last one applied, the first that
    applies to the piece (a merge whose pair occurs, a removal whose token
    occurs), and applies it everywhere in the piece: the result is exactly a
    replay of the whole log, at O(n log e) per step for a piece of n tokens and e
    events, plus the hidden tokens' expansion. At most
    :data:`MAX_STEPS_PER_BYTE` ``* n + 256`` events apply to a piece of ``n``
    bytes; a log that applies more (it loops: ``remove x``, ``merge x`` again and
    again) raises :class:`EventLogError`, so a piece costs O(n^2 log e) at most.

    >>> r = Replay([("merge", 256, 97, 98), ("merge", 257, 256, 99), ("remove", 256, 97, 98)],
    ...            {256: (97, 98), 257: (256, 99)}, frozenset())
    >>> r(b"abcab")
    [257, 97, 98]
    """

    def __init__(
        self,
        events: Sequence[tuple[Any, ...]],
        parents: dict[int, tuple[int, int]],
        hidden: frozenset[int],
    ) -> None:
        self._merge_at: dict[tuple[int, int], list[int]] = {}
        self._remove_at: dict[int, list[int]] = {}
        self._events = list(events)
        self._events = [ev for ev in self._events if ev[0] != "supermerge"]
        for i, ev in enumerate(self._events):
            if ev[0] == "merge":
                self._merge_at.setdefault((ev[2], ev[3]), []).append(i)
            elif ev[0] == "remove":
                self._remove_at.setdefault(ev[1], []).append(i)
        self._parents = parents
        self._hidden = hidden

    @staticmethod
    def _next(at: list[int] | None, cursor: int) -> int | None:
        if not at:
            return None
        j = bisect_right(at, cursor)
        return at[j] if j < len(at) else None

    def __call__(self, piece: bytes) -> list[int]:
        return self._replay(piece, None)

    def trace(self, piece: bytes) -> tuple[list[int], list[int]]:
        """The piece's tokens, and every token a merge consumed on the way (one entry
        per occurrence consumed: each merge of ``(a, b)`` consumes an ``a`` and a
        ``b``). What pruning measures a tokenizer's tokens by.

        >>> r = Replay([("merge", 256, 97, 98), ("merge", 257, 256, 99)],
        ...            {256: (97, 98), 257: (256, 99)}, frozenset())
        >>> r.trace(b"abcab")
        ([257, 256], [97, 98, 97, 98, 256, 99])
        """
        consumed: list[int] = []
        return self._replay(piece, consumed), consumed

    def _replay(self, piece: bytes, consumed: list[int] | None) -> list[int]:
        tokens = list(piece)
        cursor = -1
        merge_at, remove_at, events = self._merge_at, self._remove_at, self._events
        nxt = self._next
        steps = MAX_STEPS_PER_BYTE * len(piece) + 256
        while True:
            best: int | None = None
            for i in range(len(tokens)):
                at = nxt(remove_at.get(tokens[i]), cursor)
                if at is not None and (best is None or at < best):
                    best = at
                if i + 1 < len(tokens):
                    at = nxt(merge_at.get((tokens[i], tokens[i + 1])), cursor)
                    if at is not None and (best is None or at < best):
                        best = at
            if best is None:
                break
            steps -= 1
            if steps < 0:
                raise EventLogError(
                    f"the event log applies more than {MAX_STEPS_PER_BYTE} events per byte to "
                    f"a piece of {len(piece)} bytes: it undoes and redoes the same merges (raise "
                    "bpeds.tokenizer.replay.MAX_STEPS_PER_BYTE if it is meant to)"
                )
            ev = events[best]
            cursor = best
            out: list[int] = []
            if ev[0] == "merge":
                _, new, a, b = ev
                out = apply_merge(tokens, a, b, new)
                if consumed is not None:
                    consumed += [a, b] * (len(tokens) - len(out))
            else:
                token, parts = ev[1], ev[2:]
                for t in tokens:
                    if t == token:
                        out.extend(parts)
                    else:
                        out.append(t)
            tokens = out
        if self._hidden:
            return hide(tokens, self._parents, self._hidden)
        return tokens


def hide(
    tokens: list[int], parents: dict[int, tuple[int, int]], hidden: frozenset[int]
) -> list[int]:
    """Split every hidden token into its parents, recursively. O(output length)."""
    if not any(t in hidden for t in tokens):
        return tokens
    out: list[int] = []
    stack: list[int] = []
    for t in tokens:
        stack.append(t)
        while stack:
            x = stack.pop()
            if x in hidden:
                a, b = parents[x]
                stack += (b, a)
            else:
                out.append(x)
    return out


class Supermerger:
    """Join the pieces of a text by a log's supermerges (BoundlessBPE's encoding).

    Each maximal run of adjacent pieces that are one token each is merged as BPE
    merges by rank: the adjacent pair whose supermerge came first, every occurrence
    left to right, until no adjacent pair is a supermerge; a piece of several tokens
    is left as it is and ends a run. This is the BoundlessBPE authors' inference
    (``Tokenizer.fast_supermerge``). O(run length x supermerges applied) per run.

    >>> join = Supermerger([("supermerge", 300, 10, 11), ("supermerge", 301, 300, 12)])
    >>> join([[10], [11], [12], [13, 14], [10], [11]])
    [301, 13, 14, 300]
    """

    def __init__(self, events: Sequence[tuple[Any, ...]]) -> None:
        self._rank: dict[tuple[int, int], tuple[int, int]] = {}
        for ev in events:
            if ev[0] == "supermerge":
                self._rank.setdefault((ev[2], ev[3]), (len(self._rank), ev[1]))

    def __bool__(self) -> bool:
        return bool(self._rank)

    def __call__(self, pieces: Sequence[list[int]]) -> list[int]:
        out: list[int] = []
        run: list[int] = []
        for ids in pieces:
            if len(ids) == 1:
                run.append(ids[0])
                continue
            if run:
                out += self._join(run) if len(run) > 1 else run
                run = []
            out += ids
        if run:
            out += self._join(run) if len(run) > 1 else run
        return out

    def _join(self, run: list[int]) -> list[int]:
        rank = self._rank
        while len(run) > 1:
            best: tuple[int, int] | None = None
            pair = (0, 0)
            for p in pairwise(run):
                r = rank.get(p)
                if r is not None and (best is None or r < best):
                    best, pair = r, p
            if best is None:
                break
            run = apply_merge(run, pair[0], pair[1], best[1])
        return run
