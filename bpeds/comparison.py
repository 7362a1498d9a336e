"""Compare tokenizers: train configurations on the same text, measure them on held-out text.

:func:`compare` (also ``bpeds.compare``) takes configurations (anything
:func:`bpeds.train` takes, as dicts, or tokenizers already trained), trains them
on the same data and measures every one on the same held-out text, at several
vocabulary sizes:
BPE's merges form a prefix, so one training run gives the tokenizer of every
smaller size by keeping its first merges. The result is a :class:`Comparison`:
rows of metrics (one per configuration and vocabulary size), CSV and Markdown
tables, plots (matplotlib, the ``compare`` extra) and a report.

>>> c = compare(
...     [{"score": "frequency"}, {"score": "pmi", "label": "pmi"}],
...     train="low lower lowest newer newest " * 20,
...     heldout="the lowest newer",
...     vocab_size=270,
...     sizes=[262, 270],
... )
>>> [(r["config"], r["vocab_size"]) for r in c.rows]
[('score=frequency', 262), ('score=frequency', 270), ('pmi', 262), ('pmi', 270)]
>>> c.row("score=frequency")["bytes_per_token"] > c.row("score=frequency", 262)["bytes_per_token"]
True

The metrics are defined, with their sources, in ``docs/compare.md``;
:data:`METRICS` lists the columns. The pre-tokens of the training data are
counted once per distinct way of reading it (pattern, special tokens,
representation) and every configuration that reads it that way trains on the
same counts; the held-out text is counted once per pattern. A configuration
with an option this module does not know how to share (a loop variant, say)
is handed to :func:`bpeds.train` as it is and reads the data itself.

Not handled here: training (:mod:`bpeds.tokenizer.training`), encoding
(:mod:`bpeds.tokenizer.encoder`).
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.errors import BpedsError
from bpeds.scoring.registry import describe_score, get_score
from bpeds.scoring.ties import tie_rule
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.encoder import bpe
from bpeds.tokenizer.files import check_targets, write_files
from bpeds.tokenizer.groups import grouped_corpus, named
from bpeds.tokenizer.io import Errors, check_errors, iter_segments, iter_units
from bpeds.tokenizer.pieces import BATCH_CHARS, count_pieces
from bpeds.tokenizer.presets import PresetDefault, resolve_preset
from bpeds.tokenizer.pretokenize import resolve_pattern
from bpeds.tokenizer.progress import NullProgress, Progress, TqdmProgress, resolve_progress
from bpeds.tokenizer.special import check_special_ids, special_texts
from bpeds.tokenizer.training import train
from bpeds.vocab import BYTE_TOKENS

__all__ = [
    "METRICS",
    "Comparison",
    "ConfigError",
    "compare",
    "jaccard",
    "merge_depths",
    "renyi_efficiency",
    "shannon_efficiency",
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

_TRAIN_OWN = ("workers", "progress", "on_merge")
_LENGTH_CAP = 24  # the token-length figure's last point: this many bytes or more
_PLOTS = ("compression.png", "renyi.png", "token_lengths.png", "premium.png", "overlap.png")


class ConfigError(BpedsError, ValueError):
    """Configurations that cannot run; the message lists every one with what to fix.

    ``problems`` maps each bad configuration's label to its message.
    """

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        lines = [f"  {label}: {msg}" for label, msg in self.problems.items()]
        n = len(self.problems)
        super().__init__(
            f"{n} configuration{'' if n == 1 else 's'} cannot run (nothing was trained):\n"
            + "\n".join(lines)
        )


# -- metrics on counts -----------------------------------------------------------------------


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = 2.5) -> float:
    """Rényi efficiency: ``H_alpha(p) / log2(vocab_size)`` for ``p`` the counts normalised.

    ``H_alpha(p) = log2(sum p_i ** alpha) / (1 - alpha)``; ``alpha == 1`` is
    Shannon's entropy (:func:`shannon_efficiency`). Zero counts are ignored.

    >>> renyi_efficiency([1, 1, 1, 1], 4)  # uniform over the whole vocabulary
    1.0
    >>> round(renyi_efficiency([3, 1], 4, alpha=2), 6)  # -log2(0.625) / 2
    0.339036

    ``ValueError`` for no positive count, ``vocab_size < 2`` or ``alpha < 0``.
    O(len(counts)).
    """
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    if alpha == 1:
        return shannon_efficiency(counts, vocab_size)
    ps = _probabilities(counts, vocab_size)
    entropy = math.log2(math.fsum(p**alpha for p in ps)) / (1 - alpha)
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


# -- configurations ----------------------------------------------------------------------------


@dataclass
class _Config:
    label: str
    kwargs: dict[str, Any] | None  # what bpeds.train takes; None for a given tokenizer
    tokenizer: Tokenizer | None = None


def _label_of(kwargs: Mapping[str, Any]) -> str:
    parts = []
    for k, v in kwargs.items():
        if isinstance(v, Mapping):
            inner = ",".join(f"{ik}={iv}" for ik, iv in v.items() if ik != "name")
            v = f"{v.get('name', '?')}({inner})" if inner else v.get("name", "?")
        parts.append(f"{k}={v}")
    return ",".join(parts) or "defaults"


def _configs(configs: object, vocab_size: int | None) -> list[_Config]:
    """The configurations in order, labelled (labels unique), each dict with its vocab_size."""
    if isinstance(configs, Mapping):
        items: list[tuple[str | None, object]] = [(str(k), v) for k, v in configs.items()]
    elif isinstance(configs, str | bytes) or not isinstance(configs, Iterable):
        raise TypeError(
            "configs must be a list of configurations (dicts of bpeds.train's arguments, or "
            f"trained Tokenizers) or a dict label -> configuration, got {type(configs).__name__}"
        )
    else:
        items = [(None, v) for v in configs]
    if not items:
        raise ValueError("compare needs at least one configuration")
    out: list[_Config] = []
    for i, (label, item) in enumerate(items):
        if isinstance(item, Tokenizer):
            name = item.options.get("score", {})
            default = f"tokenizer {i + 1}"
            if isinstance(name, dict) and "name" in name:
                default += f" ({name['name']})"
            out.append(_Config(label or default, None, item))
            continue
        if not isinstance(item, Mapping):
            raise TypeError(
                f"configuration {i + 1} is a {type(item).__name__}: give a dict of bpeds.train's "
                "arguments (e.g. {'score': 'pmi'}) or a trained Tokenizer"
            )
        kwargs = dict(item)
        given = kwargs.pop("label", None)
        if given is not None and not isinstance(given, str):
            raise TypeError(f"configuration {i + 1}: label must be a str, got {given!r}")
        name = label or given or _label_of(kwargs)
        if "vocab_size" not in kwargs:
            if vocab_size is None:
                raise ValueError(
                    f"configuration {name!r} has no vocab_size: give it one, or pass "
                    "vocab_size= to compare for every configuration"
                )
            kwargs["vocab_size"] = vocab_size
        out.append(_Config(name, kwargs))
    seen: set[str] = set()
    for c in out:
        if c.label in seen:
            raise ValueError(
                f"two configurations are labelled {c.label!r}: give them distinct labels"
            )
        seen.add(c.label)
    return out


def _reusable(data: object) -> object:
    """``data`` in a form that can be read more than once: an iterator (a generator, say;
    also a group's) is read into a list once, anything else is kept as it is."""
    if isinstance(data, Mapping):
        return {k: _reusable(v) for k, v in data.items()}
    if isinstance(data, Iterator):
        return list(data)
    return data


def _empty_like(data: object) -> object:
    return dict.fromkeys(data, "") if isinstance(data, Mapping) else ""


def _check_configs(configs: list[_Config], data: object) -> None:
    """Raise :class:`ConfigError` listing every configuration :func:`train` refuses.

    Each is checked by training it on empty text of the data's shape (the
    same groups): :func:`train` checks all its arguments before it reads any.
    """
    problems: dict[str, str] = {}
    shape = _empty_like(data)
    for c in configs:
        if c.kwargs is None:
            continue
        own = [k for k in _TRAIN_OWN if k in c.kwargs]
        if own:
            problems[c.label] = (
                f"{', '.join(own)} cannot be set per configuration: compare sets them "
                "(workers= runs configurations in parallel, progress= draws a bar for each)"
            )
            continue
        kwargs = dict(c.kwargs)
        size = kwargs.pop("vocab_size")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                train(shape, size, **kwargs, progress=False)
        except (ValueError, TypeError, ImportError, BpedsError) as exc:
            problems[c.label] = str(exc)
    if problems:
        raise ConfigError(problems)


# -- counting once, shared ---------------------------------------------------------------------
#
# Everything that shares counts between configurations is in this section: the key that
# says which configurations read the data the same way, the counting, and training a
# configuration on counts (train's steps after counting). Options outside _SHARED make a
# configuration train on the data itself.

_SHARED = frozenset(
    {
        "vocab_size",
        "pattern",
        "special_tokens",
        "min_frequency",
        "max_token_length",
        "score",
        "tie",
        "representation",
        "counting",
        "multiset",
        "preset",
    }
)


@dataclass(frozen=True)
class _Reading:
    """How a configuration reads its data: configurations with equal readings share counts."""

    source: str | None
    specials: tuple[str, ...]
    sequence: bool


@dataclass
class _Counts:
    """The training data's pieces: one part per group (one part when not grouped)."""

    names: list[str] | None
    parts: list[dict[str, int] | list[str]]

    def types(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for p in self.parts:
            out.update(p)
        return out


def _plan(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved options of a shareable configuration (the same resolution as train's)."""
    opts = resolve_preset(
        kwargs.get("preset"),
        {
            "pattern": kwargs.get("pattern", PresetDefault.PATTERN),
            "representation": kwargs.get("representation", PresetDefault.REPRESENTATION),
            "tie": kwargs.get("tie", PresetDefault.TIE),
        },
    )
    source, _ = resolve_pattern(opts["pattern"])
    texts, given = special_texts(kwargs.get("special_tokens", ()))
    return {**opts, "source": source, "texts": texts, "given": given}


def _reading(kwargs: Mapping[str, Any]) -> _Reading | None:
    if not set(kwargs) <= _SHARED:
        return None
    plan = _plan(kwargs)
    return _Reading(plan["source"], tuple(plan["texts"]), plan["representation"] == "sequence")


def _count(data: object, reading: _Reading, errors: Errors, workers: int) -> _Counts:
    """Count ``data`` once as ``reading`` says (what :func:`train` counts)."""

    def pieces_of(part: object, group: str | None = None) -> dict[str, int] | list[str]:
        segments = iter_segments(
            part, pattern=reading.source, special_tokens=reading.specials, errors=errors
        )
        if group is not None:
            segments = named(group, segments)
        return count_pieces(
            segments,
            reading.source,
            sequence=reading.sequence,
            workers=workers,
            batch_chars=BATCH_CHARS,
        )

    if isinstance(data, Mapping):
        names = [str(n) for n in data]
        return _Counts(names, [pieces_of(data[n], n) for n in names])
    return _Counts(None, [pieces_of(data)])


def _train_on_counts(counts: _Counts, kwargs: Mapping[str, Any], progress: Progress) -> Tokenizer:
    """What ``train(data, **kwargs)`` returns, from the data's counts."""
    kw = dict(kwargs)
    vocab_size = kw.pop("vocab_size")
    plan = _plan(kw)
    score = kw.get("score", "frequency")
    score_obj = get_score(score)
    texts, given = plan["texts"], plan["given"]
    num_merges = vocab_size - BYTE_TOKENS - len(texts)
    given_ids = (
        None
        if given is None
        else check_special_ids(given, num_merges, merges_are=" that vocab_size asks for")
    )
    sequence = plan["representation"] == "sequence"
    min_frequency = kw.get("min_frequency", 1)
    with gc_paused():
        corpus: Corpus
        if counts.names is None:
            pieces = counts.parts[0]
            if isinstance(pieces, list):
                corpus = SequenceCorpus(p.encode("utf-8") for p in pieces)
            else:
                corpus = TypeCorpus._from_pieces(pieces)
        else:
            by_name = dict(zip(counts.names, counts.parts, strict=True))
            corpus, _ = grouped_corpus(
                [(n, n) for n in counts.names],
                lambda part, name: by_name[name],
                sequence,
            )
        driver = MergeDriver(
            corpus,
            num_merges,
            score=score_obj,
            tie=tie_rule(plan["tie"]),
            multiset=kw.get("multiset"),
            counting=kw.get("counting", "overlapping"),
            min_count=min_frequency,
            max_token_length=kw.get("max_token_length"),
        )
        progress.start(num_merges)
        try:
            for _ in driver:
                progress.update(1)
        finally:
            progress.close()
    merges = [r.pair for r in driver.records]
    if len(merges) < num_merges:
        warnings.warn(
            f"training stopped after {len(merges)} of {num_merges} merges: no pair is left "
            f"that occurs at least min_frequency={min_frequency} times",
            UserWarning,
            stacklevel=2,
        )
    ids = (
        given_ids
        if given_ids is not None
        else {t: BYTE_TOKENS + len(merges) + i for i, t in enumerate(texts)}
    )
    recorded = driver.options()
    recorded["score"] = describe_score(score, score_obj)
    recorded["min_frequency"] = recorded.pop("min_count")
    recorded["representation"] = plan["representation"]
    recorded["vocab_size"] = vocab_size
    if kw.get("preset") is not None:
        recorded["preset"] = kw["preset"]
    if counts.names is not None:
        recorded["groups"] = list(counts.names)
    return Tokenizer(merges, pattern=plan["source"], special_tokens=ids, options=recorded)


# -- held-out text -----------------------------------------------------------------------------


@dataclass
class _HeldOut:
    """Held-out text read as one pattern reads it: per group, pieces and totals."""

    names: list[str]
    grouped: bool
    pieces: list[dict[str, int]]
    nbytes: list[int]
    nchars: list[int]
    nwords: list[int]


def _read_heldout(
    data: object, source: str | None, specials: Sequence[str], errors: Errors
) -> _HeldOut:
    parts = [(str(k), v) for k, v in data.items()] if isinstance(data, Mapping) else [("", data)]
    out = _HeldOut([n for n, _ in parts], isinstance(data, Mapping), [], [], [], [])
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


def _sizes_for(num_merges: int, sizes: int | Sequence[int], extra: int) -> list[int]:
    """Merge counts to evaluate at, ascending, always with the full count.

    ``sizes`` an int ``n``: all the merges, half of them, a quarter, ... (``n`` counts,
    fewer when they would round to no merge); else the vocabulary sizes given (``extra``
    special tokens counted in them), those in range.

    >>> _sizes_for(32512, 8, 0)
    [254, 508, 1016, 2032, 4064, 8128, 16256, 32512]
    >>> _sizes_for(100, [300, 356, 5000], 0)
    [44, 100]
    """
    if isinstance(sizes, int):
        ks = {round(num_merges / 2**i) for i in range(sizes)}
        ks = {k for k in ks if k > 0}
    else:
        ks = {s - BYTE_TOKENS - extra for s in sizes}
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


def _evaluate(
    label: str,
    tok: Tokenizer,
    heldout: _HeldOut,
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
    ks = _sizes_for(len(merges), sizes, extra) if plain else [len(merges)]
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


@dataclass
class _Job:
    index: int
    config: _Config
    data: object
    counts: _Counts | None  # shared counts of this configuration's reading, if it has one
    train_types: dict[str, int] | None  # the training data's pieces under the tokenizer's reading
    heldout: dict[tuple[str | None, tuple[str, ...]], _HeldOut]
    heldout_data: object
    sizes: int | Sequence[int]
    alpha: float
    reference: str | None
    undertrained_below: int
    errors: Errors
    bar: bool


@dataclass
class _Result:
    label: str
    tokenizer: Tokenizer | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _peak_rss_mb() -> float | None:
    """This process's peak resident memory so far, in MiB (``None`` where not measurable)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _run(job: _Job, isolated: bool) -> _Result:
    """Train (or take) one configuration and measure it; failures become the result's error."""
    c = job.config
    res = _Result(c.label)
    progress: Progress = TqdmProgress(c.label, job.index) if job.bar else NullProgress()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            if c.tokenizer is not None:
                tok = c.tokenizer
            else:
                assert c.kwargs is not None
                started = time.process_time()
                base = _peak_rss_mb() if isolated else None
                if job.counts is not None:
                    tok = _train_on_counts(job.counts, c.kwargs, progress)
                else:
                    kw = dict(c.kwargs)
                    size = kw.pop("vocab_size")
                    kw.setdefault("errors", job.errors)
                    tok = train(job.data, size, **kw, progress=progress)
                res.cpu_s = time.process_time() - started
                peak = _peak_rss_mb() if isolated else None
                if peak is not None and base is not None:
                    res.peak_rss_mb = peak - base
            res.tokenizer = tok
            key = (tok.pattern, tuple(tok.special_tokens))
            heldout = job.heldout.get(key)
            if heldout is None:
                heldout = _read_heldout(job.heldout_data, tok.pattern, key[1], job.errors)
            types = job.train_types
            if types is None and c.tokenizer is None:
                types = _count(
                    job.data, _Reading(tok.pattern, key[1], False), job.errors, 1
                ).types()
            res.rows = _evaluate(
                c.label,
                tok,
                heldout,
                job.sizes,
                job.alpha,
                job.reference,
                types,
                job.undertrained_below,
            )
        res.notes = [str(w.message) for w in caught]
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        res.error = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, BpedsError | ValueError | TypeError | OSError):
            res.notes.append(traceback.format_exc())
    return res


def _child(job: _Job, conn: Any) -> None:
    """A configuration's own process: run it, send the result back."""
    conn.send(_run(job, True))
    conn.close()


def _run_in_processes(jobs: Sequence[_Job], workers: int) -> list[_Result]:
    """Each job in a new process, at most ``workers`` at once, results in job order.

    Processes are forked where the platform can (no ``if __name__ == "__main__"``
    guard needed, and a child starts from the parent's memory, which
    :func:`_run` subtracts from its peak); elsewhere the platform's default
    start method is used. A process that dies gives its job an error result.
    """
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    results: list[_Result | None] = [None] * len(jobs)
    pending = list(enumerate(jobs))
    running: dict[Any, tuple[int, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                i, job = pending.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(job, send), daemon=True)
                proc.start()
                send.close()
                running[recv] = (i, proc)
            ready: list[Any] = multiprocessing.connection.wait(list(running))
            for conn in ready:
                i, proc = running.pop(conn)
                try:
                    results[i] = conn.recv()
                except EOFError:
                    proc.join()
                    results[i] = _Result(
                        jobs[i].config.label,
                        error=f"the process training it stopped (exit code {proc.exitcode})",
                    )
                conn.close()
                proc.join()
    finally:
        for _, proc in running.values():
            proc.terminate()
            proc.join()
    return [r for r in results if r is not None]


# -- the comparison ----------------------------------------------------------------------------


def _fmt(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


class Comparison:
    """The result of :func:`compare`: metric rows, tables, plots and the pairwise measures.

    ``rows``: one dict per configuration and vocabulary size (columns
    ``config``, ``vocab_size``, ``merges``, then :data:`METRICS`, then the
    per-group columns), in configuration order, sizes ascending; ``None``
    where a value does not apply (``undertrained`` and the cost are measured
    at the full size). ``tokenizers``: label -> trained tokenizer (``None``
    for one that failed); ``errors``: label -> what went wrong; ``notes``:
    label -> warnings training gave. ``overlap``: label -> label -> Jaccard
    index of the merged tokens' byte strings; ``agreement``: label -> label ->
    ``(shared merges, Spearman's rho of their ranks)``. ``token_lengths``:
    label -> ``Counter`` of merged-token lengths in bytes. ``counting_s``:
    wall seconds spent counting the training and held-out text (once).
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        tokenizers: dict[str, Tokenizer | None],
        errors: dict[str, str],
        notes: dict[str, list[str]],
        groups: list[str],
        reference: str | None,
        alpha: float,
        counting_s: float,
    ) -> None:
        self.rows = rows
        self.tokenizers = tokenizers
        self.errors = errors
        self.notes = notes
        self.groups = groups
        self.reference = reference
        self.alpha = alpha
        self.counting_s = counting_s
        done = {k: t for k, t in tokenizers.items() if t is not None}
        sets = {
            k: {t.token_bytes(BYTE_TOKENS + i) for i in range(t.num_merges)}
            for k, t in done.items()
        }
        pairs = {
            k: [(t.token_bytes(a), t.token_bytes(b)) for a, b in t.merges] for k, t in done.items()
        }
        self.overlap = {a: {b: jaccard(sets[a], sets[b]) for b in done} for a in done}
        self.agreement = {a: {b: spearman(pairs[a], pairs[b]) for b in done} for a in done}
        self.token_lengths = {
            k: Counter(len(t.token_bytes(BYTE_TOKENS + i)) for i in range(t.num_merges))
            for k, t in done.items()
        }

    @property
    def labels(self) -> list[str]:
        """The configurations' labels, in order."""
        return list(self.tokenizers)

    @property
    def columns(self) -> list[str]:
        """The column names of :attr:`rows`, in order."""
        cols = ["config", "vocab_size", "merges", *METRICS]
        for g in self.groups:
            cols += [f"tokens_per_byte[{g}]", f"premium[{g}]"]
        return [*cols, "error"]

    def row(self, label: str, vocab_size: int | None = None) -> dict[str, Any]:
        """The row of ``label`` at ``vocab_size`` (default: its largest).

        ``KeyError`` naming the labels and sizes there are when there is no such row.
        """
        mine = [r for r in self.rows if r["config"] == label]
        if vocab_size is not None:
            mine = [r for r in mine if r["vocab_size"] == vocab_size]
        if not mine:
            have = sorted({(r["config"], r["vocab_size"]) for r in self.rows})
            raise KeyError(f"no row for {label!r} at vocab_size={vocab_size}; rows: {have}")
        return mine[-1]

    def final_rows(self) -> list[dict[str, Any]]:
        """Each configuration's row at its full size (a failed one: only its error)."""
        out = []
        for label in self.labels:
            mine = [r for r in self.rows if r["config"] == label]
            out.append(mine[-1] if mine else {"config": label, "error": self.errors.get(label)})
        return out

    def to_csv(self, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False) -> str:
        """Every row as CSV (a header, then one line per row); written atomically to
        ``path`` if given (``FileExistsError`` if it exists, unless ``overwrite``)."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in self.columns})
        for label, err in self.errors.items():
            w.writerow({"config": label, "error": err})
        text = buf.getvalue()
        if path is not None:
            write_files([(path, text.encode("utf-8"))], overwrite=overwrite)
        return text

    def to_markdown(self, *, all_sizes: bool = False) -> str:
        """Markdown tables: the metrics at each configuration's full size (every size with
        ``all_sizes``), the per-group columns, and the pairwise overlap and agreement."""
        out: list[str] = []
        rows = self.rows if all_sizes else [r for r in self.final_rows() if "vocab_size" in r]
        metric_cols = ["config", "vocab_size", *METRICS]
        out.append(_table(metric_cols, rows))
        if self.groups:
            out.append("")
            gcols = ["config", "vocab_size"]
            gcols += [f"tokens_per_byte[{g}]" for g in self.groups]
            gcols += [f"premium[{g}]" for g in self.groups]
            out.append(_table(gcols, rows))
        labels = list(self.overlap)
        if len(labels) > 1:
            out.append("")
            out.append("Vocabulary overlap (Jaccard index of the merged tokens):")
            out.append("")
            grid = [{"": a, **{b: self.overlap[a][b] for b in labels}} for a in labels]
            out.append(_table(["", *labels], grid))
            out.append("")
            out.append("Rank agreement of shared merges (Spearman's rho; shared merges):")
            out.append("")
            grid = []
            for a in labels:
                cells: dict[str, Any] = {"": a}
                for b in labels:
                    n, rho = self.agreement[a][b]
                    cells[b] = "" if rho is None else f"{rho:.3f} ({n})"
                grid.append(cells)
            out.append(_table(["", *labels], grid))
        if self.errors:
            out.append("")
            out.append("Failed configurations:")
            out.append("")
            out += [f"- `{label}`: {err}" for label, err in self.errors.items()]
        return "\n".join(out) + "\n"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        return (
            f"Comparison(configs={self.labels!r}, rows={len(self.rows)}, "
            f"errors={sorted(self.errors)!r})"
        )

    def plot(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
        """Write the figures as PNG files in ``directory`` and return their paths.

        ``compression.png`` and ``renyi.png`` (bytes per token and Rényi
        efficiency against vocabulary size, a line per configuration),
        ``token_lengths.png`` (merged-token lengths), ``premium.png`` (per-group
        premium, when the held-out text has groups) and ``overlap.png`` (the
        Jaccard heat map, for two configurations or more). Needs matplotlib
        (``pip install 'bpeds[compare]'``; ``ImportError`` saying so). Files are
        written atomically; one that exists raises ``FileExistsError`` before
        anything is written, unless ``overwrite``.
        """
        target = Path(directory)
        check_targets([target / n for n in self.figure_names()], overwrite=overwrite)
        figures = _figures(self)
        return write_files(
            [(target / name, data) for name, data in figures.items()], overwrite=overwrite
        )

    def figure_names(self) -> list[str]:
        """The files :meth:`plot` writes for this comparison."""
        done = [k for k, t in self.tokenizers.items() if t is not None]
        return [
            n
            for n in _PLOTS
            if (n != "premium.png" or self.groups) and (n != "overlap.png" or len(done) > 1)
        ]

    def report(
        self, directory: str | os.PathLike[str], *, plots: bool = True, overwrite: bool = False
    ) -> list[Path]:
        """Write ``report.md`` (tables, the figures embedded), ``results.csv`` and the PNGs
        to ``directory`` (made if missing); return the paths written. Without
        ``overwrite`` an existing file raises ``FileExistsError`` before anything is
        written."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        names = ["report.md", "results.csv", *(self.figure_names() if plots else [])]
        check_targets([target / n for n in names], overwrite=overwrite)
        figures = _figures(self) if plots else {}
        md = ["# Tokenizer comparison", ""]
        md.append(
            f"Metrics on the held-out text (Rényi efficiency with alpha = {self.alpha:g}); "
            "definitions in the bpeds documentation (docs/compare.md)."
        )
        md += ["", self.to_markdown()]
        titles = {
            "compression.png": "Compression against vocabulary size",
            "renyi.png": "Rényi efficiency against vocabulary size",
            "token_lengths.png": "Lengths of the merged tokens",
            "premium.png": "Tokenization premium per group",
            "overlap.png": "Vocabulary overlap",
        }
        for name in figures:
            md += [f"## {titles.get(name, name)}", "", f"![{titles.get(name, name)}]({name})", ""]
        md += ["## Every vocabulary size", "", self.to_markdown(all_sizes=True)]
        if any(self.notes.values()):
            md += ["## Warnings", ""]
            for label, ns in self.notes.items():
                md += [f"- `{label}`: {n.strip()}" for n in ns]
        files = [
            (target / "report.md", "\n".join(md).encode("utf-8")),
            (target / "results.csv", self.to_csv().encode("utf-8")),
            *[(target / n, d) for n, d in figures.items()],
        ]
        return write_files(files, overwrite=overwrite)


def _figures(c: Comparison) -> dict[str, bytes]:
    """The report's figures as PNG bytes, by file name (see :meth:`Comparison.plot`)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plots need matplotlib, which is not installed: pip install 'bpeds[compare]' "
            "(or matplotlib); the tables and CSV need nothing"
        ) from None

    def png(fig: Any) -> bytes:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        return buf.getvalue()

    out: dict[str, bytes] = {}
    labels = [label for label in c.labels if c.tokenizers.get(label) is not None]
    for name, key, ylabel, title in (
        ("compression.png", "bytes_per_token", "bytes per token (held-out)", "Compression"),
        (
            "renyi.png",
            "renyi_efficiency",
            f"Rényi efficiency, alpha = {c.alpha:g}",
            "Rényi efficiency",
        ),
    ):
        fig = Figure(layout="constrained", figsize=(7, 4.5))
        ax = fig.add_subplot()
        for label in labels:
            pts = [
                (r["vocab_size"], r[key])
                for r in c.rows
                if r["config"] == label and r.get(key) is not None
            ]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ticks = sorted({r["vocab_size"] for r in c.rows if r["config"] in labels})
        if len(ticks) > 10:  # keep about ten labelled ticks
            ticks = ticks[:: math.ceil(len(ticks) / 10)] + ticks[-1:]
        ax.set_xticks(ticks, [str(t) for t in ticks], rotation=45, ha="right")
        ax.minorticks_off()
        ax.set_xlabel("vocabulary size")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} against vocabulary size")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        out[name] = png(fig)

    fig = Figure(layout="constrained", figsize=(7, 4.5))
    ax = fig.add_subplot()
    longest = max((max(h, default=0) for h in c.token_lengths.values()), default=0)
    cap = max(2, min(longest, _LENGTH_CAP))  # lengths from cap on share the last point
    xs = list(range(2, cap + 1))
    for label in labels:
        h = c.token_lengths[label]
        total = sum(h.values()) or 1
        ys = [h.get(x, 0) for x in xs[:-1]]
        ys.append(sum(n for length, n in h.items() if length >= cap))
        ax.plot(xs, [100 * y / total for y in ys], marker="o", markersize=3, label=label)
    names = [str(x) for x in xs]
    if longest > cap:
        names[-1] = f"{cap}+"
    ax.set_xticks(xs, names)
    ax.set_xlabel("token length (bytes)")
    ax.set_ylabel("% of merged tokens")
    ax.set_title("Lengths of the merged tokens")
    ax.legend(fontsize="small")
    out["token_lengths.png"] = png(fig)

    if c.groups:
        width = 0.8 / max(1, len(labels))
        fig = Figure(
            layout="constrained",
            figsize=(max(7.0, min(14.0, 4.0 + 0.25 * len(c.groups) * max(1, len(labels)))), 4.5),
        )
        ax = fig.add_subplot()
        for i, label in enumerate(labels):
            r = c.row(label)
            ax.bar(
                [g - 0.4 + width * (i + 0.5) for g in range(len(c.groups))],
                [r.get(f"premium[{g}]") or 0.0 for g in c.groups],
                width=width,
                label=label,
            )
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(c.groups)), c.groups, rotation=45, ha="right")
        ax.set_ylabel(f"tokens relative to {c.reference}")
        ax.set_title("Tokenization premium per group (1 = as many tokens as the reference)")
        ax.legend(fontsize="small", ncols=2)
        out["premium.png"] = png(fig)

    if len(labels) > 1:
        size = 1.2 + 0.9 * len(labels)
        fig = Figure(layout="constrained", figsize=(size + 1.5, size))
        ax = fig.add_subplot()
        grid = [[c.overlap[a][b] for b in labels] for a in labels]
        im = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        for i in range(len(labels)):
            for j in range(len(labels)):
                v = grid[i][j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w" if v < 0.6 else "k")
        fig.colorbar(im, ax=ax, label="Jaccard index of merged tokens")
        ax.set_title("Vocabulary overlap")
        out["overlap.png"] = png(fig)
    return out


def _table(cols: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(" --- " for _ in cols) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |")
    return "\n".join(lines)


# -- compare -----------------------------------------------------------------------------------


def compare(
    configs: Sequence[Mapping[str, Any] | Tokenizer] | Mapping[str, Mapping[str, Any] | Tokenizer],
    train: object = None,
    heldout: object = None,
    *,
    vocab_size: int | None = None,
    sizes: int | Sequence[int] = 8,
    alpha: float = 2.5,
    reference: str | None = None,
    undertrained_below: int = 1,
    workers: int = 1,
    processes: bool | None = None,
    progress: bool | None = None,
    errors: str = "strict",
) -> Comparison:
    """Train every configuration on ``train`` and measure each on ``heldout``.

    ``configs``: a list of configurations or a dict label -> configuration.
    A configuration is a dict of :func:`bpeds.train`'s keyword arguments
    (``{"score": "pmi", "vocab_size": 4096}``; a ``"label"`` key names it,
    else it is named by its options), or a trained :class:`Tokenizer`
    (measured, not trained). ``vocab_size``: for the dicts that do not give
    one. ``train``: the training data, anything :func:`bpeds.train` takes (a
    mapping gives groups; an iterator, such as a generator, is read into a list
    first, since several configurations read it). ``heldout``: text to measure
    on, in the same forms;
    a mapping ``{group name: data}`` gives per-group columns
    (``tokens_per_byte[NAME]``, ``premium[NAME]``: tokens of the group over
    tokens of ``reference``, by default the first group; parallel text such
    as translations of one document is what makes a premium meaningful).

    ``sizes``: an int ``n`` evaluates each tokenizer with all its merges, half
    of them, a quarter, ... (``n`` sizes); or a list of vocabulary sizes (the
    full size is always added; sizes above it are skipped). ``alpha``: the
    Rényi order. ``undertrained_below``: merged tokens produced fewer than this
    many times when the training data is encoded count as under-trained.

    ``workers``: configurations trained at the same time, each in its own
    process (``processes=True``, the default when ``workers > 1``: CPU time
    and peak memory are the configuration's alone) or one after the other in
    this one (``processes=False``; peak memory is then not measured). The
    counting also uses ``workers`` processes. ``progress``: a bar per
    configuration (``None``: when stderr is a terminal and tqdm is installed).
    ``errors``: how invalid UTF-8 is read (see :func:`bpeds.train`).

    Every configuration is checked before any training starts:
    :class:`ConfigError` (a ``ValueError``) lists each one that cannot run
    with what to fix. A configuration that fails while training or being
    measured is reported in :attr:`Comparison.errors` (and in the tables) and
    the others still finish. Results are the same for any ``workers``.

    Complexity: counting O(training text) once per distinct reading, plus each
    training run, plus O(held-out pieces x sizes) encodings per configuration.
    """
    if train is None or heldout is None:
        raise TypeError(
            "compare needs train= (the training data) and heldout= (text to measure on)"
        )
    errors = check_errors(errors)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if isinstance(sizes, bool) or (isinstance(sizes, int) and sizes < 1):
        raise ValueError(f"sizes must be an int >= 1 or a list of vocabulary sizes, got {sizes!r}")
    if not isinstance(sizes, int):
        sizes = list(sizes)
        if not sizes or not all(isinstance(s, int) and s > BYTE_TOKENS for s in sizes):
            raise ValueError(f"sizes must be vocabulary sizes above {BYTE_TOKENS}, got {sizes!r}")
    if (
        isinstance(undertrained_below, bool)
        or not isinstance(undertrained_below, int)
        or undertrained_below < 1
    ):
        raise ValueError(f"undertrained_below must be an int >= 1, got {undertrained_below!r}")
    if not isinstance(alpha, int | float) or alpha < 0:
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
    groups = [str(k) for k in heldout] if isinstance(heldout, Mapping) else []
    if reference is not None and reference not in groups:
        raise ValueError(
            f"reference group {reference!r} is not a group of the held-out text "
            f"(groups: {', '.join(groups) or 'none: give heldout as a dict name -> text'})"
        )
    train, heldout = _reusable(train), _reusable(heldout)
    cfgs = _configs(configs, vocab_size)
    _check_configs(cfgs, train)
    isolate = workers > 1 if processes is None else bool(processes)
    bar = isinstance(resolve_progress(progress), TqdmProgress)  # ImportError if asked, no tqdm

    started = time.perf_counter()
    readings: dict[_Reading, _Counts] = {}
    types: dict[tuple[str | None, tuple[str, ...]], dict[str, int]] = {}
    heldouts: dict[tuple[str | None, tuple[str, ...]], _HeldOut] = {}
    per_config: list[tuple[_Counts | None, dict[str, int] | None]] = []
    for c in cfgs:
        if c.tokenizer is not None:
            key = (c.tokenizer.pattern, tuple(c.tokenizer.special_tokens))
            if key not in types:
                counted = _count(train, _Reading(key[0], key[1], False), errors, workers)
                types[key] = dict(counted.types())
            per_config.append((None, types[key]))
        else:
            assert c.kwargs is not None
            reading = _reading(c.kwargs)
            if reading is None:
                per_config.append((None, None))
                continue
            if reading not in readings:
                readings[reading] = _count(train, reading, errors, workers)
            key = (reading.source, reading.specials)
            if key not in types:
                types[key] = dict(readings[reading].types())
            per_config.append((readings[reading], types[key]))
        if key not in heldouts:
            heldouts[key] = _read_heldout(heldout, key[0], key[1], errors)
    counting_s = time.perf_counter() - started

    jobs = [
        _Job(
            i,
            c,
            train,
            counts,
            tys,
            heldouts,
            heldout,
            sizes,
            float(alpha),
            reference,
            undertrained_below,
            errors,
            bar,
        )
        for i, (c, (counts, tys)) in enumerate(zip(cfgs, per_config, strict=True))
    ]
    results = _run_in_processes(jobs, workers) if isolate else [_run(j, False) for j in jobs]

    rows: list[dict[str, Any]] = []
    for r in results:
        for row in r.rows:
            row["train_cpu_s"] = None
            row["peak_rss_mb"] = None
            row["error"] = None
        if r.rows:
            r.rows[-1]["train_cpu_s"] = r.cpu_s
            r.rows[-1]["peak_rss_mb"] = r.peak_rss_mb
        rows += r.rows
    return Comparison(
        rows,
        {r.label: r.tokenizer if r.error is None else None for r in results},
        {r.label: r.error for r in results if r.error is not None},
        {r.label: r.notes for r in results},
        groups,
        reference if reference is not None else (groups[0] if groups else None),
        float(alpha),
        counting_s,
    )
