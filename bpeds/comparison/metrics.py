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
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeds.comparison.configs import Reading
from bpeds.tokenizer import BYTE_TOKENS, Tokenizer
from bpeds.tokenizer.encoder import bpe
from bpeds.tokenizer.io import Errors, iter_segments, iter_units
from bpeds.tokenizer.pieces import count_pieces
from bpeds.tokenizer.pretokenize import compile_pattern
from bpeds.tokenizer.pruning import piece_use
from bpeds.tokenizer.trainer import merges_for

__all__ = [
    "METRICS",
    "DigitRun",
    "HeldOut",
    "digit_aligned",
    "digit_runs",
    "emitted_merges",
    "evaluate",
    "gini",
    "jaccard",
    "merge_depths",
    "read_heldout",
    "renyi_efficiency",
    "shannon_efficiency",
    "sizes_for",
    "spearman",
    "splits_character",
]

#: Every metric column of :attr:`Comparison.rows`, with a one-line meaning (the
#: definitions and sources are in docs/compare.md). Per-group columns
#: ``tokens_per_byte[NAME]``, ``tokens_per_word[NAME]`` and ``premium[NAME]`` follow when
#: the held-out text comes in groups (``token_gini`` needs two groups or more).
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
    "char_split_share": "share of tokens produced that split a UTF-8 character (not valid UTF-8)",
    "digit_alignment": "share of digit runs whose tokens follow 3-digit place-value groups",
    "residue_share": "share of merged tokens that are LiteToken residues, F1/(F1+F2) < 0.05",
    "token_gini": "Gini coefficient of the held-out groups' tokens per byte (parity)",
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


def gini(costs: Sequence[float]) -> float | None:
    """The Gini coefficient of ``costs``: ``sum_i sum_j |c_i - c_j| / (2 n^2 mean)``
    (0: all equal). None for fewer than two costs or a zero mean.

    >>> gini([1.0, 1.0, 1.0]), gini([0.0, 0.0, 3.0])
    (0.0, 0.6666666666666666)

    O(n^2) (n: the groups, a handful).
    """
    n = len(costs)
    mean = sum(costs) / n if n else 0.0
    if n < 2 or mean <= 0:
        return None
    return sum(abs(a - b) for a in costs for b in costs) / (2 * n * n * mean)


def splits_character(token: bytes) -> bool:
    """Whether a token of valid UTF-8 text starts or ends inside a character: its bytes
    alone are not valid UTF-8.

    >>> splits_character("é".encode()[:1]), splits_character(" é".encode())
    (True, False)
    """
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


#: A run of ASCII digits, as digit alignment reads numbers.
_DIGITS = re.compile(r"[0-9]{2,}")

#: A digit run as the pattern cut it: ``(piece, start, end)`` per piece it lies in
#: (character offsets of the run's part of the piece).
DigitRun = tuple[tuple[str, int, int], ...]


def digit_runs(segment: str, spans: Sequence[tuple[int, int]]) -> Iterator[DigitRun]:
    """The runs of two or more ASCII digits in ``segment``, each as the pieces
    (``spans``: the pattern's matches, in order) that hold it.

    >>> list(digit_runs("in 12345 ways", [(0, 2), (2, 6), (6, 8), (8, 13)]))
    [((' 123', 1, 4), ('45', 0, 2))]

    O(len(segment)).
    """
    i = 0
    for m in _DIGITS.finditer(segment):
        lo, hi = m.span()
        while i < len(spans) and spans[i][1] <= lo:
            i += 1
        parts: list[tuple[str, int, int]] = []
        j = i
        while j < len(spans) and spans[j][0] < hi:
            a, b = spans[j]
            parts.append((segment[a:b], max(lo, a) - a, min(hi, b) - a))
            j += 1
        yield tuple(parts)


def digit_aligned(lengths: Sequence[Sequence[int]], run: DigitRun) -> bool:
    """Whether every token boundary inside a digit run lies a multiple of three digits
    from its right end (place-value groups: ``1|234|567``). ``lengths``: per piece of the
    run, the byte lengths of its tokens.

    >>> run = (("1234567", 0, 7),)
    >>> digit_aligned([[1, 3, 3]], run), digit_aligned([[3, 3, 1]], run)
    (True, False)
    """
    total = sum(hi - lo for _, lo, hi in run)
    pos = 0  # digits of the run before the current piece's part
    for (piece, lo, hi), sizes in zip(run, lengths, strict=True):
        start = len(piece[:lo].encode("utf-8", "surrogatepass"))
        end = start + (hi - lo)
        offset = 0
        for size in sizes:
            offset += size
            if start < offset < end and (total - (pos + offset - start)) % 3:
                return False
        pos += hi - lo
        if pos < total and (total - pos) % 3:
            return False  # (the pattern itself cut the run off a group)
    return True


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
    #: per group, its runs of ASCII digits as the pattern cut them (none without a pattern)
    digits: list[Counter[DigitRun]] = field(default_factory=list)


def read_heldout(data: object, reading: Reading, errors: Errors) -> HeldOut:
    """``data`` (anything :func:`bpeds.train` reads, or ``{group name: data}``) read as
    ``reading`` says (its pattern, with its special tokens cut out, the pattern's classes
    read with its Unicode tables): per group, the pieces counted and the bytes, characters
    and words of the text. O(text)."""
    source, specials, unicode = reading.source, reading.specials, reading.unicode
    parts = [(str(k), v) for k, v in data.items()] if isinstance(data, Mapping) else [("", data)]
    out = HeldOut([n for n, _ in parts], isinstance(data, Mapping), [], [], [], [])
    finditer = None if source is None else compile_pattern(source, unicode).finditer
    for _, part in parts:
        nbytes = nchars = nwords = 0
        runs: Counter[DigitRun] = Counter()
        out.digits.append(runs)

        def segments(part: object = part, runs: Counter[DigitRun] = runs) -> Iterator[str]:
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
                    if finditer is not None and _DIGITS.search(seg):
                        runs.update(digit_runs(seg, [m.span() for m in finditer(seg)]))
                    yield seg

        counted = count_pieces(segments(), source, unicode=unicode)
        assert isinstance(counted, dict)
        out.pieces.append(counted)
        out.nbytes.append(nbytes)
        out.nchars.append(nchars)
        out.nwords.append(nwords)
    return out


# -- evaluating one tokenizer ------------------------------------------------------------------


def sizes_for(num_merges: int, sizes: int | Sequence[int], extra: int) -> list[int]:
    """Merge counts to evaluate at, ascending, always with the full count.

    ``sizes`` an int ``n``: the full vocabulary and the ``n - 1`` largest powers of two
    below it that hold a merge (powers of two from 512 on); a vocabulary of 512 tokens
    or fewer is measured at half its merges, a quarter, ... instead. Else the
    vocabulary sizes given (``extra`` special tokens counted in them), those in range.

    >>> [256 + k for k in sizes_for(32512, 8, 0)]
    [512, 1024, 2048, 4096, 8192, 16384, 32768]
    >>> [256 + k for k in sizes_for(9744, 3, 0)]
    [4096, 8192, 10000]
    >>> sizes_for(44, 3, 0)
    [11, 22, 44]
    >>> sizes_for(100, [300, 356, 5000], 0)
    [44, 100]
    >>> sizes_for(100, 10**9, 0)  # O(log num_merges), whatever n
    [1, 2, 3, 6, 12, 25, 50, 100]
    """
    if isinstance(sizes, int):
        full = BYTE_TOKENS + num_merges + extra
        powers = [1 << j for j in range(full.bit_length()) if merges_for(1 << j, extra) > 0]
        ks = {merges_for(s, extra) for s in powers if s < full}
        ks = set(sorted(ks)[::-1][: sizes - 1])
        if not ks:  # a vocabulary of 512 tokens or fewer: half the merges, a quarter, ...
            ks = {
                round(num_merges / 2**i) for i in range(1, min(sizes, num_merges.bit_length() + 2))
            }
            ks -= {0}
    else:
        ks = {merges_for(s, extra) for s in sizes}
    return sorted(k for k in ks | {num_merges} if 0 < k <= num_merges or k == num_merges)


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


def _digit_alignment(
    heldout: HeldOut, tok: Tokenizer, ranks: Mapping[bytes, int] | None
) -> float | None:
    """The share of the held-out digit runs (weighted by count) whose tokens are
    :func:`digit_aligned`; ``ranks``: the merges of the size measured (None: encode with
    ``tok`` itself). None without digit runs."""
    aligned = total = 0
    cache: dict[str, list[int]] = {}
    for runs in heldout.digits:
        for run, n in runs.items():
            lengths = []
            for piece, _, _ in run:
                sizes = cache.get(piece)
                if sizes is None:
                    raw = piece.encode("utf-8", "surrogatepass")
                    ids = bpe(raw, ranks) if ranks is not None else tok.encode_ordinary(piece)
                    sizes = cache[piece] = [len(tok.token_bytes(t)) for t in ids]
                lengths.append(sizes)
            total += n
            aligned += n if digit_aligned(lengths, run) else 0
    return aligned / total if total else None


#: LiteToken's residue threshold the ``residue_share`` column uses.
RESIDUE_THRESHOLD = 0.05


def _residue_share(tok: Tokenizer, heldout: HeldOut) -> float | None:
    """The share of the merged tokens ``tok`` can emit whose ``F1 / (F1 + F2)`` on the
    held-out text is below :data:`RESIDUE_THRESHOLD` (see :mod:`bpeds.tokenizer.pruning`)."""
    pieces: Counter[str] = Counter()
    for group in heldout.pieces:
        pieces.update(group)
    use = piece_use(tok, pieces.items())
    emitted = set(emitted_merges(tok))  # (a loop variant's removed and hidden tokens: none)
    residues = 0
    for t in use.candidates():
        r = use.ratio(t)
        if r is not None and r < RESIDUE_THRESHOLD and t in emitted:
            residues += 1
    return residues / len(emitted) if emitted else None


def _truncatable(tok: Tokenizer) -> bool:
    """Whether the first k merges make the tokenizer of size 256 + k (a plain merge list;
    a loop variant's tokenizer, and one that encodes by an event log, such as a pruned
    one, is measured at its full size only)."""
    return "variant" not in tok.options and not tok.replays


def emitted_merges(tok: Tokenizer) -> list[int]:
    """The merged tokens ``tok`` can emit, ascending, in bpeds's numbering
    (:meth:`~bpeds.tokenizer.Tokenizer.renumbered`): ids ``256 ..`` less those a loop
    variant removed or hid. Every metric over "the merged tokens" reads these. O(vocab)."""
    tok = tok.renumbered()
    top = BYTE_TOKENS + tok.num_merges
    return [t for t in tok.token_ids() if BYTE_TOKENS <= t < top]


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
    """One row per vocabulary size of ``tok``'s measurements on ``heldout``.

    Every metric is over the vocabulary ``tok`` can emit (:func:`emitted_merges`): a
    loop variant's removed and hidden tokens keep their ids but are never produced, so
    they count neither in ``|V|`` nor among the merged tokens. A model with ids of its own
    is measured in bpeds's numbering (the same tokens).
    """
    tok = tok.renumbered()
    merges = tok.merges
    extra = len(tok.special_tokens)
    plain = _truncatable(tok)
    ks = sizes_for(len(merges), sizes, extra) if plain else [len(merges)]
    rows: list[dict[str, Any]] = []
    all_depths = merge_depths(merges)
    emitted = emitted_merges(tok)
    total_bytes, total_chars, total_words = (
        sum(heldout.nbytes),
        sum(heldout.nchars),
        sum(heldout.nwords),
    )
    for k in ks:
        full = k == len(merges)
        merged = emitted if not plain else list(range(BYTE_TOKENS, BYTE_TOKENS + k))
        ranks: Mapping[bytes, int] = {}
        if plain:
            ranks = Tokenizer(merges[:k], pattern=tok.pattern).mergeable_ranks()
            per_group = [_encode_counts(ranks, p) for p in heldout.pieces]
        else:
            per_group = [_encode_counts_with(tok, p) for p in heldout.pieces]
        counts: Counter[int] = Counter()
        for g in per_group:
            counts.update(g)
        ntokens = sum(counts.values())
        n = len(merged)
        vocab = BYTE_TOKENS + k if plain else tok.vocab_size - extra
        row: dict[str, Any] = {"config": label, "vocab_size": vocab + extra, "merges": k}
        row["bytes_per_token"] = total_bytes / ntokens if ntokens else None
        row["chars_per_token"] = total_chars / ntokens if ntokens else None
        row["tokens_per_word"] = ntokens / total_words if total_words else None
        row["renyi_efficiency"] = (
            renyi_efficiency(counts.values(), vocab, alpha) if ntokens else None
        )
        row["shannon_efficiency"] = shannon_efficiency(counts.values(), vocab) if ntokens else None
        row["unused_merges"] = sum(1 for t in merged if not counts[t]) / n if n else None
        row["undertrained"] = None
        if full and train_types is not None:
            if plain:
                made = _encode_counts(tok.mergeable_ranks(), train_types)
            else:
                made = _encode_counts_with(tok, train_types)
            row["undertrained"] = sum(1 for t in merged if made[t] < undertrained_below)
        lengths = [len(tok.token_bytes(t)) for t in merged]
        row["mean_token_bytes"] = sum(lengths) / n if n else None
        row["max_token_bytes"] = max(lengths) if n else None
        depths = [all_depths[t - BYTE_TOKENS] for t in merged]
        row["mean_merge_depth"] = sum(depths) / n if n else None
        split = sum(n for t, n in counts.items() if splits_character(tok.token_bytes(t)))
        row["char_split_share"] = split / ntokens if ntokens else None
        row["digit_alignment"] = _digit_alignment(heldout, tok, ranks if plain else None)
        row["residue_share"] = _residue_share(tok, heldout) if full else None
        costs = [
            sum(g.values()) / nb for g, nb in zip(per_group, heldout.nbytes, strict=True) if nb
        ]
        row["token_gini"] = gini(costs) if heldout.grouped else None
        if heldout.grouped:
            ref = heldout.names.index(reference) if reference is not None else 0
            ref_tokens = sum(per_group[ref].values())
            for name, g, nb, nw in zip(
                heldout.names, per_group, heldout.nbytes, heldout.nwords, strict=True
            ):
                n = sum(g.values())
                row[f"tokens_per_byte[{name}]"] = n / nb if nb else None
                row[f"tokens_per_word[{name}]"] = n / nw if nw else None
                row[f"premium[{name}]"] = n / ref_tokens if ref_tokens and nb else None
        rows.append(row)
    return rows


# -- running configurations --------------------------------------------------------------------
