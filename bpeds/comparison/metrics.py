"""The metrics of a comparison, and measuring one tokenizer on held-out text.

Each metric is a function of counts (:func:`renyi_efficiency`,
:func:`shannon_efficiency`), of two vocabularies (:func:`jaccard`,
:func:`spearman`) or of merges (:func:`merge_depths`); :data:`METRICS` lists
the columns of :attr:`bpeds.comparison.Comparison.rows`, and ``docs/compare.md``
defines each with its source. :func:`read_heldout` counts held-out text once
per pattern, and :func:`evaluate` measures a tokenizer from those counts at
several vocabulary sizes (BPE's merges form a prefix, so one training run gives
the tokenizer of every smaller size): each distinct pre-token is encoded once
per size.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bpeds.tokenizer import BYTE_TOKENS, Tokenizer
from bpeds.tokenizer.encoder import bpe
from bpeds.tokenizer.io import Errors, iter_segments, iter_units
from bpeds.tokenizer.pieces import count_pieces
from bpeds.tokenizer.trainer import merges_for

__all__ = [
    "METRICS",
    "HeldOut",
    "evaluate",
    "jaccard",
    "merge_depths",
    "read_heldout",
    "renyi_efficiency",
    "shannon_efficiency",
    "sizes_for",
    "spearman",
]

#: Every metric column of :attr:`Comparison.rows`, with a one-line meaning (the
#: definitions and sources are in docs/compare.md). Per-group columns
#: ``tokens_per_byte[NAME]`` and ``premium[NAME]`` follow when the held-out
#: text comes in groups.
METRICS: dict[str, str] = {
    "bytes_per_token": "UTF-8 bytes of held-out text per token (higher: more compression)",
    "chars_per_token": "characters of held-out text per token",
    "tokens_per_word": "tokens per whitespace-separated word (fertility; lower is better)",
    "renyi_efficiency": "Renyi entropy of the token distribution over log2 |V| (Zouhar et al.)",
    "shannon_efficiency": "Shannon entropy of the token distribution over log2 |V|",
    "unused_merges": "share of merged tokens never produced on the held-out text",
    "undertrained": "merged tokens produced fewer than k times on the training data",
    "mean_token_bytes": "mean length in bytes of the merged tokens of the vocabulary",
    "max_token_bytes": "longest merged token, in bytes",
    "mean_merge_depth": "mean depth of the merged tokens' merge trees (a byte has depth 0)",
    "train_cpu_s": "CPU seconds of training (the shared counting not included)",
    "peak_rss_mb": "peak resident memory of the process that trained, in MiB",
}

# -- metrics -----------------------------------------------------------------------------------


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = 2.5) -> float:
    """Rényi efficiency: ``H_alpha(p) / log2(vocab_size)`` for ``p`` the counts normalised.

    ``H_alpha(p) = log2(sum p_i ** alpha) / (1 - alpha)``; ``alpha == 1`` is
    Shannon's entropy (:func:`shannon_efficiency`). Zero counts are ignored.

    >>> renyi_efficiency([1, 1, 1, 1], 4)  # uniform over the whole vocabulary
    1.0
    >>> round(renyi_efficiency([3, 1], 4, alpha=2), 6)  # -log2(0.625) / 2
    0.339036

    ``ValueError`` for no positive count, ``vocab_size < 2`` or an ``alpha``
    that is not a finite number ``>= 0`` (NaN included). A large ``alpha``,
    where every ``p_i ** alpha`` underflows, is computed relative to the
    largest ``p_i`` (it tends to the min-entropy ``-log2(max p_i)``).
    O(len(counts)).

    >>> round(renyi_efficiency([3, 1], 4, alpha=1e6), 6)  # -log2(0.75) / 2
    0.207519
    """
    if not 0 <= alpha < math.inf:
        raise ValueError(f"alpha must be >= 0 and finite, got {alpha!r}")
    if alpha == 1:
        return shannon_efficiency(counts, vocab_size)
    ps = _probabilities(counts, vocab_size)
    total = math.fsum(p**alpha for p in ps)
    if total > 0:
        log_total = math.log2(total)
    else:  # every p ** alpha underflows: scale by the largest p
        top = max(ps)
        log_total = alpha * math.log2(top) + math.log2(math.fsum((p / top) ** alpha for p in ps))
    entropy = log_total / (1 - alpha)
    return entropy / math.log2(vocab_size)


def shannon_efficiency(counts: Iterable[int], vocab_size: int) -> float:
    """Shannon efficiency: ``-sum p_i log2 p_i / log2(vocab_size)``.

    >>> shannon_efficiency([1, 1], 4)
    0.5

    Errors as :func:`renyi_efficiency`. O(len(counts)).
    """
    ps = _probabilities(counts, vocab_size)
    return -math.fsum(p * math.log2(p) for p in ps) / math.log2(vocab_size)


def _probabilities(counts: Iterable[int], vocab_size: int) -> list[float]:
    if vocab_size < 2:
        raise ValueError(f"vocab_size must be >= 2 for an efficiency, got {vocab_size}")
    cs = [c for c in counts if c > 0]
    total = sum(cs)
    if not total:
        raise ValueError("an efficiency needs at least one token")
    return [c / total for c in cs]


def jaccard(a: Iterable[object], b: Iterable[object]) -> float:
    """``|A & B| / |A | B|`` (1.0 for two empty sets).

    >>> jaccard("abc", "bcd")
    0.5
    """
    sa, sb = set(a), set(b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 1.0


def spearman(a: Sequence[object], b: Sequence[object]) -> tuple[int, float | None]:
    """Rank agreement of the items two orderings share: ``(n shared, Spearman's rho)``.

    Each sequence lists distinct items in rank order; the items in both are
    ranked by their order in each, and rho is ``1 - 6 sum d^2 / (n (n^2 - 1))``
    (no ties are possible). ``None`` when fewer than two items are shared.

    >>> spearman("abcd", "abdc")
    (4, 0.8)
    >>> spearman("abc", "cba")
    (3, -1.0)
    >>> spearman("ab", "xy")
    (0, None)

    O(len(a) + len(b)).
    """
    in_b = {x: i for i, x in enumerate(b)}
    shared = [x for x in a if x in in_b]
    n = len(shared)
    if n < 2:
        return n, None
    rank_b = {x: r for r, x in enumerate(sorted(shared, key=in_b.__getitem__))}
    d2 = sum((r - rank_b[x]) ** 2 for r, x in enumerate(shared))
    return n, 1 - 6 * d2 / (n * (n * n - 1))


def merge_depths(merges: Sequence[tuple[int, int]]) -> list[int]:
    """The depth of each merged token's merge tree (a byte token has depth 0).

    >>> merge_depths([(97, 98), (256, 99), (100, 101)])
    [1, 2, 1]

    O(len(merges)).
    """
    depth = [0] * BYTE_TOKENS
    for a, b in merges:
        depth.append(1 + max(depth[a], depth[b]))
    return depth[BYTE_TOKENS:]


# -- held-out text -----------------------------------------------------------------------------


@dataclass
class HeldOut:
    """Held-out text read as one pattern reads it: per group, pieces and totals."""

    names: list[str]
    grouped: bool
    pieces: list[dict[str, int]]
    nbytes: list[int]
    nchars: list[int]
    nwords: list[int]


def read_heldout(
    data: object, source: str | None, specials: Sequence[str], errors: Errors
) -> HeldOut:
    """``data`` (anything :func:`bpeds.train` reads, or ``{group name: data}``) read as
    the pattern ``source`` with ``specials`` cut out reads it: per group, the pieces
    counted and the bytes, characters and words of the text. O(text)."""
    parts = [(str(k), v) for k, v in data.items()] if isinstance(data, Mapping) else [("", data)]
    out = HeldOut([n for n, _ in parts], isinstance(data, Mapping), [], [], [], [])
    for _, part in parts:
        nbytes = nchars = nwords = 0

        def segments(part: object = part) -> Iterator[str]:
            nonlocal nbytes, nchars, nwords
            for unit in iter_units(part):
                joined = False  # the previous piece ended inside a word
                for seg in iter_segments(
                    [unit], pattern=source, special_tokens=specials, errors=errors
                ):
                    nchars += len(seg)
                    nbytes += len(seg.encode("utf-8", "surrogatepass"))
                    nwords += len(seg.split()) - (joined and not seg[0].isspace())
                    joined = not seg[-1].isspace()
                    yield seg

        counted = count_pieces(segments(), source)
        assert isinstance(counted, dict)
        out.pieces.append(counted)
        out.nbytes.append(nbytes)
        out.nchars.append(nchars)
        out.nwords.append(nwords)
    return out


# -- evaluating one tokenizer ------------------------------------------------------------------


def sizes_for(num_merges: int, sizes: int | Sequence[int], extra: int) -> list[int]:
    """Merge counts to evaluate at, ascending, always with the full count.

    ``sizes`` an int ``n``: all the merges, half of them, a quarter, ... (``n`` counts,
    fewer when they would round to no merge); else the vocabulary sizes given (``extra``
    special tokens counted in them), those in range.

    >>> sizes_for(32512, 8, 0)
    [254, 508, 1016, 2032, 4064, 8128, 16256, 32512]
    >>> sizes_for(100, [300, 356, 5000], 0)
    [44, 100]
    >>> sizes_for(100, 10**9, 0)  # O(log num_merges), whatever n
    [1, 2, 3, 6, 12, 25, 50, 100]
    """
    if isinstance(sizes, int):  # past log2(num_merges) halvings, no merge is left
        ks = {round(num_merges / 2**i) for i in range(min(sizes, num_merges.bit_length() + 1))}
        ks = {k for k in ks if k > 0}
    else:
        ks = {merges_for(s, extra) for s in sizes}
    return sorted(k for k in ks | {num_merges} if 0 <= k <= num_merges)


def _encode_counts(ranks: Mapping[bytes, int], pieces: Mapping[str, int]) -> Counter[int]:
    out: Counter[int] = Counter()
    for piece, n in pieces.items():
        for t in bpe(piece.encode("utf-8", "surrogatepass"), ranks):
            out[t] += n
    return out


def _encode_counts_with(tok: Tokenizer, pieces: Mapping[str, int]) -> Counter[int]:
    out: Counter[int] = Counter()
    for piece, n in pieces.items():
        for t in tok.encode_ordinary(piece):
            out[t] += n
    return out


def _truncatable(tok: Tokenizer) -> bool:
    """Whether the first k merges make the tokenizer of size 256 + k (a plain merge list;
    a loop variant's tokenizer is measured at its full size only)."""
    return "variant" not in tok.options


def evaluate(
    label: str,
    tok: Tokenizer,
    heldout: HeldOut,
    sizes: int | Sequence[int],
    alpha: float,
    reference: str | None,
    train_types: Mapping[str, int] | None,
    undertrained_below: int,
) -> list[dict[str, Any]]:
    """One row per vocabulary size of ``tok``'s measurements on ``heldout``."""
    merges = tok.merges
    extra = len(tok.special_tokens)
    plain = _truncatable(tok)
    ks = sizes_for(len(merges), sizes, extra) if plain else [len(merges)]
    rows: list[dict[str, Any]] = []
    all_depths = merge_depths(merges)
    lengths = [len(tok.token_bytes(BYTE_TOKENS + i)) for i in range(len(merges))]
    total_bytes, total_chars, total_words = (
        sum(heldout.nbytes),
        sum(heldout.nchars),
        sum(heldout.nwords),
    )
    for k in ks:
        full = k == len(merges)
        if plain:
            ranks = Tokenizer(merges[:k], pattern=tok.pattern).mergeable_ranks()
            per_group = [_encode_counts(ranks, p) for p in heldout.pieces]
        else:
            per_group = [_encode_counts_with(tok, p) for p in heldout.pieces]
        counts: Counter[int] = Counter()
        for g in per_group:
            counts.update(g)
        ntokens = sum(counts.values())
        produced_merges = sum(1 for t in counts if BYTE_TOKENS <= t < BYTE_TOKENS + k)
        # (a loop variant's tokenizer emits fewer tokens than its ids: removed and hidden
        # ones keep their ids)
        vocab = BYTE_TOKENS + k if plain else tok.vocab_size - extra
        row: dict[str, Any] = {"config": label, "vocab_size": vocab + extra, "merges": k}
        row["bytes_per_token"] = total_bytes / ntokens if ntokens else None
        row["chars_per_token"] = total_chars / ntokens if ntokens else None
        row["tokens_per_word"] = ntokens / total_words if total_words else None
        row["renyi_efficiency"] = (
            renyi_efficiency(counts.values(), vocab, alpha) if ntokens else None
        )
        row["shannon_efficiency"] = shannon_efficiency(counts.values(), vocab) if ntokens else None
        row["unused_merges"] = (k - produced_merges) / k if k else None
        row["undertrained"] = None
        if full and train_types is not None:
            if plain:
                made = _encode_counts(tok.mergeable_ranks(), train_types)
            else:
                made = _encode_counts_with(tok, train_types)
            row["undertrained"] = sum(
                1 for t in range(BYTE_TOKENS, BYTE_TOKENS + k) if made[t] < undertrained_below
            )
        row["mean_token_bytes"] = sum(lengths[:k]) / k if k else None
        row["max_token_bytes"] = max(lengths[:k]) if k else None
        row["mean_merge_depth"] = sum(all_depths[:k]) / k if k else None
        if heldout.grouped:
            ref = heldout.names.index(reference) if reference is not None else 0
            ref_tokens = sum(per_group[ref].values())
            for name, g, nb in zip(heldout.names, per_group, heldout.nbytes, strict=True):
                n = sum(g.values())
                row[f"tokens_per_byte[{name}]"] = n / nb if nb else None
                row[f"premium[{name}]"] = n / ref_tokens if ref_tokens and nb else None
        rows.append(row)
    return rows


# -- running configurations --------------------------------------------------------------------
