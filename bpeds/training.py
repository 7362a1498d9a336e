"""Training a :class:`~bpeds.tokenizer.Tokenizer` from text, iterables or files.

:func:`train` reads the data as units (see :mod:`bpeds.io`: each ``str`` item
and each file is one unit the pattern sees on its own; special-token text is
cut out), splits it with the pattern, counts the pieces (type mode) or keeps
them in order (sequence mode), and runs :class:`~bpeds.driver.MergeDriver`
for ``vocab_size - 256 - len(special_tokens)`` merges.

Parity (tested): ``preset="rustbpe"`` gives rustbpe's merges,
``preset="hf"`` Hugging Face ``BpeTrainer``'s (ByteLevel, no prefix space,
full byte alphabet), ``preset="minbpe-basic"``/``"minbpe-regex"`` minbpe's.

**Groups.** ``data`` may be a mapping ``{group name: data}`` (a language per
group, say): each group is read and counted on its own and its pieces keep
their group, which per-group scores (``needs_groups``, such as
``GroupFrequency``) read. Such a score refuses data of one group, which would
make it do plain frequency's work at several times its cost.

``workers > 1`` splits and counts batches of text in processes and merges the
per-batch counts in batch order, so the types' first-appearance order (which
the ``leftmost`` tie rule reads) and hence the merges are the same as with
``workers=1``.

Not handled here: the merge algorithm itself (:mod:`bpeds.driver`), encoding.
"""

from __future__ import annotations

import enum
import os
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord, MultisetFactory
from bpeds.fastsplit import fast_findall, splitter
from bpeds.io import DEFAULT_BLOCK_SIZE, InvalidTextError, check_data, check_errors, iter_segments
from bpeds.pretokenize import _compiled, resolve_pattern, segmenter
from bpeds.progress import Progress, resolve_progress
from bpeds.scoring.base import Score
from bpeds.scoring.registry import describe_score, get_score
from bpeds.scoring.ties import TieRule, tie_rule
from bpeds.special import check_special_ids, check_special_texts
from bpeds.tokenizer import Tokenizer
from bpeds.vocab import BYTE_TOKENS

__all__ = ["PRESETS", "count_pieces", "train"]

#: What each preset sets. An argument not given takes the preset's value; an
#: argument given a different value is an error (even the usual default's).
PRESETS: dict[str, dict[str, Any]] = {
    "minbpe-basic": {"pattern": None, "representation": "sequence", "tie": "leftmost"},
    "minbpe-regex": {"pattern": "gpt4", "representation": "sequence", "tie": "leftmost"},
    "hf": {"pattern": "gpt2", "representation": "type", "tie": "hf"},
    "rustbpe": {"pattern": "gpt4", "representation": "type", "tie": "smallest_ids"},
}


class _Default(enum.Enum):
    """The default of an argument a preset sets: the preset's value, else the one held here.

    A distinct object, so that an argument passed explicitly (even with the
    usual default's value) is told apart from one left out.
    """

    PATTERN = "gpt4"
    REPRESENTATION = "type"
    TIE = "smallest_ids"

    def __repr__(self) -> str:
        return f"<the preset's, else {self.value!r}>"


#: Characters of text per batch handed to a worker.
BATCH_CHARS = 1 << 20
#: Texts from this many characters on are counted by :meth:`bpeds.pretokenize.Segmenter.count`
#: (built-in patterns only, where the ASCII fast path of :mod:`bpeds.fastsplit` does not
#: apply: it is faster): the same counts in the same order, ~1.1-1.3x faster on English.
SEGMENT_MIN_CHARS = 1 << 12

OnMerge = Callable[[MergeRecord, bytes], None]

# -- counting (runs in workers too) --------------------------------------------------------


def _findall(source: str | None) -> Callable[[str], list[str]] | None:
    return None if source is None else fast_findall(_compiled(source))


def _count_batch(texts: list[str], source: str | None, sequence: bool) -> Any:
    """Pieces of a batch: ``{piece: count}`` in first-appearance order, or the list.

    Texts are split by :func:`bpeds.fastsplit.fast_findall` (exactly the
    pattern's ``findall``). In type mode, a long text under a built-in pattern
    that the ASCII fast path does not apply to is counted by cutting it where
    cutting provably cannot change the split and splitting each distinct
    stretch once (:class:`bpeds.pretokenize.Segmenter`).
    """
    findall = _findall(source)
    if sequence:
        if findall is None:
            return list(texts)
        pieces: list[str] = []
        for t in texts:
            pieces += findall(t)
        return pieces
    counts: Counter[str] = Counter()
    if findall is None:
        counts.update(texts)
        return dict(counts)
    assert source is not None
    seg = segmenter(source)
    fast = splitter(_compiled(source))
    for t in texts:
        if seg is not None and len(t) >= SEGMENT_MIN_CHARS and not fast.applies(t):
            counts.update(seg.count(t))  # a mapping: added in its (first-appearance) order
        else:
            counts.update(findall(t))
    return dict(counts)


def _batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive texts grouped into lists of at most ``size`` characters (a longer
    text alone): a worker's share stays near ``size``, which keeps the last ones even.

    >>> list(_batches(["ab", "cd", "efgh", "i"], 4))
    [['ab', 'cd'], ['efgh'], ['i']]
    """
    batch: list[str] = []
    chars = 0
    for t in texts:
        if batch and chars + len(t) > size:
            yield batch
            batch, chars = [], 0
        batch.append(t)
        chars += len(t)
    if batch:
        yield batch


def count_pieces(
    texts: Iterable[str],
    pattern: str | None,
    *,
    sequence: bool = False,
    workers: int = 1,
    batch_chars: int = BATCH_CHARS,
) -> dict[str, int] | list[str]:
    """Split every text with ``pattern`` (a regex source or ``None``) and collect the pieces.

    Type mode: ``{piece: count}`` in order of first appearance; sequence mode
    (``sequence=True``): every non-empty piece in order. The result is the same
    for any ``workers`` and ``batch_chars``.

    >>> count_pieces(["a b a", "b"], r"\\S+|\\s+")
    {'a': 2, ' ': 2, 'b': 2}

    Complexity: O(total text); memory O(distinct pieces) in type mode.
    """
    merged: dict[str, int] = {}
    ordered: list[str] = []

    def fold(result: Any) -> None:
        if sequence:
            ordered.extend(p for p in result if p)
        elif not merged:
            merged.update(result)
        else:
            get = merged.get
            for k, v in result.items():
                merged[k] = get(k, 0) + v

    batches = _batches(texts, batch_chars)
    if workers == 1:
        for b in batches:
            fold(_count_batch(b, pattern, sequence))
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            window: deque[Future[Any]] = deque()
            for b in batches:
                window.append(ex.submit(_count_batch, b, pattern, sequence))
                if len(window) >= 2 * workers:
                    fold(window.popleft().result())
            while window:
                fold(window.popleft().result())
    if sequence:
        return ordered
    merged.pop("", None)
    return merged


# -- argument handling ------------------------------------------------------------------------


def _apply_preset(preset: str | None, given: dict[str, Any]) -> dict[str, Any]:
    """The arguments a preset sets: each one not given (a :class:`_Default`) takes the
    preset's value, else its default; one given must agree with the preset."""
    if preset is None:
        return {k: v.value if isinstance(v, _Default) else v for k, v in given.items()}
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: choose one of {sorted(PRESETS)}")
    out = dict(given)
    for key, value in PRESETS[preset].items():
        mine = given[key]
        same = (
            isinstance(mine, _Default)
            or mine == value
            or (
                key == "pattern"
                and mine is not None
                and value is not None
                and resolve_pattern(mine)[0] == resolve_pattern(value)[0]
            )
        )
        if not same:
            raise ValueError(
                f"preset {preset!r} sets {key}={value!r}, but {key}={mine!r} was given: "
                "drop one of them"
            )
        out[key] = value
    return out


def _check_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def _special_texts(
    special_tokens: Iterable[str] | Mapping[str, int],
) -> tuple[list[str], Mapping[str, int] | None]:
    """The special texts, checked, and the mapping text -> id if one was given (its ids
    are checked by :func:`bpeds.special.check_special_ids` once the merges are known)."""
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts or a dict text -> id, not a str")
    if isinstance(special_tokens, Mapping):
        return check_special_texts(special_tokens.keys()), special_tokens
    if not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of texts or a dict, got {type(special_tokens).__name__}"
        )
    return check_special_texts(special_tokens), None


def _groups(data: object) -> list[tuple[str, object]] | None:
    """``[(name, data), ...]`` of a mapping of groups (each value's shape checked), else None."""
    if not isinstance(data, Mapping):
        return None
    out: list[tuple[str, object]] = []
    for name, part in data.items():
        if not isinstance(name, str):
            raise TypeError(
                f"group names must be str (they are recorded with the model), got {name!r}"
            )
        try:
            check_data(part)
        except TypeError as exc:
            raise TypeError(f"group {name!r}: {exc}") from None
        out.append((name, part))
    return out


def _check_groups(score: Score, groups: list[tuple[str, object]] | None) -> None:
    """A per-group score needs at least two groups: with one it is frequency, at a cost."""
    if not score.needs_groups or (groups is not None and len(groups) >= 2):
        return
    if groups is None:
        have = "all the training data is one group"
    else:
        names = ", ".join(repr(n) for n, _ in groups)
        have = f"the training data has {len(groups)} group{'' if len(groups) == 1 else 's'}"
        have += f" ({names})" if names else ""
    raise ValueError(
        f"score {score.name!r} compares groups of text (needs_groups), but {have}, so it "
        "would give frequency's merges at several times the cost: give at least two groups, "
        "as a mapping {group name: texts or paths} (on the command line: --group NAME=FILE "
        "per file)"
    )


def _named(name: str, segments: Iterator[str]) -> Iterator[str]:
    """``segments``, with the group's name put in front of an :class:`InvalidTextError`."""
    try:
        yield from segments
    except InvalidTextError as exc:
        raise InvalidTextError(f"group {name!r}: {exc}", exc.source, exc.offset) from None


def train(
    data: object,
    vocab_size: int,
    *,
    pattern: str | _Default | None = _Default.PATTERN,
    special_tokens: Iterable[str] | Mapping[str, int] = (),
    min_frequency: int = 1,
    max_token_length: int | None = None,
    score: Score | str | dict[str, Any] = "frequency",
    tie: TieRule | str | _Default = _Default.TIE,
    representation: str | _Default = _Default.REPRESENTATION,
    counting: str = "overlapping",
    multiset: MultisetFactory | None = None,
    workers: int = 1,
    progress: bool | Progress | None = None,
    preset: str | None = None,
    errors: str = "strict",
    on_merge: OnMerge | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> Tokenizer:
    """Train a tokenizer of ``vocab_size`` tokens on ``data``.

    >>> tok = train("low lower lowest", 259, pattern="gpt2")
    >>> [tok.token_bytes(i) for i in range(256, 259)]
    [b'lo', b'low', b' low']

    ``data``: a ``str`` (one unit of text; a warning is given if it is also
    the name of a file), a path (``os.PathLike``: one file, one unit), or an
    iterable of ``str`` items and paths (one unit each); see
    :mod:`bpeds.io` for what a unit means and how files are streamed. Or a
    mapping ``{group name: data}`` (names are ``str``, each value any of the
    above): every piece keeps its group (numbered in the mapping's order),
    for scores that read per-group counts, and the model records the names
    as ``options["groups"]``:

    >>> data = {"en": "the the the the", "de": "der der"}
    >>> tok = train(data, 258, pattern="gpt2", score="group_frequency")
    >>> [tok.token_bytes(i) for i in (256, 257)], tok.options["groups"]
    ([b'he', b'de'], ['en', 'de'])
    >>> [train(data, 258, pattern="gpt2").token_bytes(i) for i in (256, 257)]
    [b'he', b'the']

    (after ``he``, English is compressed better than German, so
    ``group_frequency`` serves German next; frequency takes ``the``.)

    A score with ``needs_groups`` (``"group_frequency"``) given data that is
    not such a mapping, or a mapping of fewer than two groups, raises
    ``ValueError`` (it would give frequency's merges at several times the
    cost); if fewer than two groups turn out to hold any text, a
    ``UserWarning`` says so.
    ``vocab_size`` counts the 256 byte tokens, the merges and the special
    tokens: ``vocab_size - 256 - len(special_tokens)`` merges are learned
    (fewer, with a ``UserWarning``, when no eligible pair is left; an empty
    corpus gives a tokenizer with no merges and that warning).

    ``pattern``: ``"gpt2"``, ``"gpt4"``, ``"gpt4o"``, a regex source, or
    ``None`` (each unit segment is one chunk, as minbpe's Basic); default: the
    preset's, else ``"gpt4"``. A pattern that does not compile or has
    capturing groups raises ``ValueError``.
    ``special_tokens``: a list of texts (ids ``256 + merges + i``, after the
    merges actually learned) or a dict text -> id (ids must be at least
    ``256 + vocab_size - 256 - len(special_tokens)``); their text is cut out
    of the training data. ``min_frequency``: pairs seen fewer times are never
    merged. ``max_token_length``: tokens longer than this many bytes are never
    made. ``score``: a name (``"frequency"``, ``"pmi"``, ...), a dict
    ``{"name": ..., **options}``, a :class:`~bpeds.scoring.base.Score`
    object, or ``"module:attribute"`` naming your own (see
    :func:`bpeds.scoring.registry.get_score`; a bad one raises ``ValueError``
    or ``TypeError`` naming the score and its options). ``tie``,
    ``counting``, ``multiset``: the driver's
    (:class:`~bpeds.driver.MergeDriver`); ``tie`` defaults to the preset's,
    else ``"smallest_ids"``. ``representation``: ``"type"`` (counts of
    distinct pieces; scales to large corpora) or ``"sequence"`` (every piece
    in order, as minbpe; ``counting="overlapping"`` only); default: the
    preset's, else ``"type"``.
    ``workers``: processes for splitting and counting (the merges do not
    depend on it). ``progress``: see :func:`bpeds.progress.resolve_progress`
    (the bar counts merges). ``preset``: ``"minbpe-basic"``,
    ``"minbpe-regex"``, ``"hf"``, ``"rustbpe"`` (see :data:`PRESETS`): it sets
    ``pattern``, ``tie`` and ``representation``; passing one of them with
    another value (even the usual default, such as ``pattern="gpt4"`` with
    ``preset="hf"``) raises ``ValueError``.
    ``errors``: ``"strict"`` or ``"replace"`` for invalid UTF-8 in files and
    lone surrogates in strings (see :mod:`bpeds.io`). ``on_merge(record,
    token_bytes)`` is called after every merge. ``block_size``: bytes read
    from a file at a time.

    Errors: ``ValueError``/``TypeError`` naming the bad argument (checked
    before any data is read); :class:`~bpeds.io.InvalidTextError` for invalid
    text; ``OSError`` for unreadable files.

    Complexity: O(corpus) to read and count, plus the driver's cost per merge.
    """
    opts = _apply_preset(preset, {"pattern": pattern, "representation": representation, "tie": tie})
    source, _ = resolve_pattern(opts["pattern"])
    representation = opts["representation"]
    if representation not in ("type", "sequence"):
        raise ValueError(f"representation must be 'type' or 'sequence', got {representation!r}")
    if counting not in ("overlapping", "non_overlapping"):
        raise ValueError(f"counting must be 'overlapping' or 'non_overlapping', got {counting!r}")
    if representation == "sequence" and counting != "overlapping":
        raise ValueError("representation='sequence' counts pairs overlapping only")
    vocab_size = _check_int(vocab_size, "vocab_size", 0)
    min_frequency = _check_int(min_frequency, "min_frequency", 1)
    if max_token_length is not None:
        max_token_length = _check_int(max_token_length, "max_token_length", 2)
    workers = _check_int(workers, "workers", 1)
    errors = check_errors(errors)
    score_obj = get_score(score)
    tie_obj = tie_rule(opts["tie"])
    prog = resolve_progress(progress)
    texts, given = _special_texts(special_tokens)
    minimum = BYTE_TOKENS + len(texts)
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size must be at least {minimum} (256 byte tokens + {len(texts)} special "
            f"tokens), got {vocab_size}"
        )
    num_merges = vocab_size - minimum
    given_ids = (
        None
        if given is None
        else check_special_ids(given, num_merges, merges_are=" that vocab_size asks for")
    )

    groups = _groups(data)
    _check_groups(score_obj, groups)

    for part in [data] if groups is None else [part for _, part in groups]:
        _warn_if_path_like_text(part)
    sequence = representation == "sequence"

    def pieces_of(part: object, group: str | None = None) -> dict[str, int] | list[str]:
        segments = iter_segments(
            part, pattern=source, special_tokens=texts, errors=errors, block_size=block_size
        )
        if group is not None:
            segments = _named(group, segments)
        return count_pieces(
            segments, source, sequence=sequence, workers=workers, batch_chars=BATCH_CHARS
        )

    # The cyclic collector would re-scan the growing corpus structures over and over
    # (see bpeds._gc); reference counting frees everything training drops.
    with gc_paused():
        corpus: Corpus
        if groups is None:
            pieces = pieces_of(data)
            if isinstance(pieces, list):
                corpus = SequenceCorpus(p.encode("utf-8") for p in pieces)
            else:
                corpus = TypeCorpus._from_pieces(pieces)
            del pieces
        else:
            corpus, filled = _grouped_corpus(groups, pieces_of, sequence)
            if score_obj.needs_groups and len(filled) < 2:
                warnings.warn(
                    f"score {score_obj.name!r} compares groups, but only {len(filled)} of the "
                    f"{len(groups)} groups hold any text ({', '.join(map(repr, filled)) or 'none'}"
                    "): its merges are frequency's",
                    UserWarning,
                    stacklevel=2,
                )

        driver = MergeDriver(
            corpus,
            num_merges,
            score=score_obj,
            tie=tie_obj,
            multiset=multiset,
            counting=counting,  # type: ignore[arg-type]
            min_count=min_frequency,
            max_token_length=max_token_length,
        )
        prog.start(num_merges)
        try:
            for record in driver:
                prog.update(1)
                if on_merge is not None:
                    on_merge(record, driver.vocab.token_bytes(record.new_id))
        finally:
            prog.close()
    merges = [r.pair for r in driver.records]
    if len(merges) < num_merges:
        warnings.warn(
            f"training stopped after {len(merges)} of {num_merges} merges: no pair is left "
            f"that occurs at least min_frequency={min_frequency} times"
            + (" (the corpus is empty)" if not merges and corpus_is_empty(corpus) else ""),
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
    recorded["representation"] = representation
    recorded["vocab_size"] = vocab_size
    if preset is not None:
        recorded["preset"] = preset
    if groups is not None:
        recorded["groups"] = [name for name, _ in groups]
    return Tokenizer(merges, pattern=source, special_tokens=ids, options=recorded)


def _grouped_corpus(
    groups: list[tuple[str, object]],
    pieces_of: Callable[[object, str], dict[str, int] | list[str]],
    sequence: bool,
) -> tuple[Corpus, list[str]]:
    """The corpus of every group's pieces, each labelled with its group's index, and the
    names of the groups that hold any. Groups are counted one after the other (type mode
    keeps one group's counts at a time besides the corpus being built)."""
    filled: list[str] = []
    if sequence:
        chunks: list[bytes] = []
        labels: list[int] = []
        for g, (name, part) in enumerate(groups):
            pieces = pieces_of(part, name)
            assert isinstance(pieces, list)
            if pieces:
                filled.append(name)
            chunks += [p.encode("utf-8") for p in pieces]
            labels += [g] * len(pieces)
        return SequenceCorpus(chunks, labels), filled

    def items() -> Iterator[tuple[bytes, int, int]]:
        for g, (name, part) in enumerate(groups):
            counts = pieces_of(part, name)
            assert isinstance(counts, dict)
            if counts:
                filled.append(name)
            for p, n in counts.items():
                yield p.encode("utf-8"), n, g

    return TypeCorpus.from_counts(items()), filled


def _warn_if_path_like_text(data: object) -> None:
    """A lone short ``str`` naming an existing file is almost surely meant as a path."""
    if isinstance(data, str) and 0 < len(data) < 4096 and "\n" not in data:
        try:
            is_file = os.path.isfile(data)
        except (OSError, ValueError):
            is_file = False
        if is_file:
            warnings.warn(
                f"training on the text {data!r}, which is also the name of a file: a str is "
                f"text; pass pathlib.Path({data!r}) to train on the file",
                UserWarning,
                stacklevel=3,
            )


def corpus_is_empty(corpus: Corpus) -> bool:
    """Whether a corpus holds no bytes at all."""
    if isinstance(corpus, TypeCorpus | SequenceCorpus):
        return corpus.num_tokens == 0
    return False  # pragma: no cover - only our two representations are built here
