"""Training a :class:`~bpeds.tokenizer.Tokenizer`: :func:`train` (also ``bpeds.train``).

:func:`train` checks its arguments, loads a ``base`` given as a model file, and
builds the tokenizer from what :func:`bpeds.tokenizer.trainer.train_model`
trains. The counting it builds on is here too: :func:`count` and
:func:`count_to_file` (:mod:`bpeds.tokenizer.counting`), :func:`count_pieces` and
:func:`available_cores` (:mod:`bpeds.tokenizer.pieces`).

Parity (tested): ``preset="rustbpe"`` gives rustbpe's merges,
``preset="hf"`` Hugging Face ``BpeTrainer``'s (ByteLevel, no prefix space,
full byte alphabet), ``preset="minbpe-basic"``/``"minbpe-regex"`` minbpe's.

**Groups.** ``data`` may be a mapping ``{group name: data}`` (a language per
group, say): each group is read and counted on its own and its pieces keep
their group, which per-group scores (``groups`` in their declaration, such as
``GroupFrequency``) read (:mod:`bpeds.tokenizer.groups`).

``workers > 1`` (by default, the cores available) splits and counts batches of text
in processes and merges the per-batch counts in batch order, so the types'
first-appearance order (which the ``leftmost`` tie rule reads) and hence the
merges are the same as with ``workers=1``.

Layers: this module sits above the ``Tokenizer`` (it builds one) and the file
formats (it loads a base); the training itself sits below the ``Tokenizer``
(:mod:`bpeds.tokenizer.trainer`), which trains in place through it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bpeds.driver import MultisetFactory
from bpeds.scoring.base import Score
from bpeds.scoring.ties import TieRule
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.counting import count, count_to_file
from bpeds.tokenizer.executors import TREE_FANIN
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.io import DEFAULT_BLOCK_SIZE, check_int
from bpeds.tokenizer.pieces import available_cores, count_pieces
from bpeds.tokenizer.presets import PRESETS, PresetDefault
from bpeds.tokenizer.progress import Progress
from bpeds.tokenizer.trainer import OnMerge, TrainArguments, train_model
from bpeds.variants import Variant

__all__ = [
    "PRESETS",
    "TREE_FANIN",
    "available_cores",
    "count",
    "count_pieces",
    "count_to_file",
    "data_or_files",
    "train",
]


def data_or_files(
    data: object, files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None
) -> object:
    """The training data of ``train(data)`` or ``train(files=...)``: ``files`` as a list
    of paths. ``TypeError`` for both or neither, or a file name that is not a ``str`` or
    path.

    >>> data_or_files(None, "a.txt")
    [PosixPath('a.txt')]
    """
    if files is None:
        if data is None:
            raise TypeError("give the training data (data=...) or the files to read (files=[...])")
        return data
    if data is not None:
        raise TypeError("give the training data or files=..., not both")
    names = [files] if isinstance(files, str | os.PathLike) else list(files)
    for name in names:
        if not isinstance(name, str | os.PathLike):
            raise TypeError(f"files must be file names (str or paths), got {name!r}")
    return [Path(name) for name in names]


def train(
    data: object = None,
    vocab_size: int | None = None,
    *,
    files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
    pattern: str | PresetDefault | None = PresetDefault.PATTERN,
    unicode: str | PresetDefault | None = PresetDefault.UNICODE,
    special_tokens: Iterable[str] | Mapping[str, int] = (),
    min_frequency: int = 1,
    max_token_length: int | None = None,
    score: Score | str | dict[str, Any] = "frequency",
    variant: Variant | str | dict[str, Any] | None = None,
    tie: TieRule | str | PresetDefault = PresetDefault.TIE,
    representation: str | PresetDefault = PresetDefault.REPRESENTATION,
    counting: str = "overlapping",
    multiset: MultisetFactory | None = None,
    workers: int | None = None,
    progress: bool | Progress | None = None,
    preset: str | None = None,
    errors: str = "strict",
    on_merge: OnMerge | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    base: Tokenizer | str | os.PathLike[str] | None = None,
    normalizer: str | None = None,
) -> Tokenizer:
    """Train a tokenizer of ``vocab_size`` tokens on ``data``.

    >>> tok = train("low lower lowest", 259, pattern="gpt2")
    >>> [tok.token_bytes(i) for i in range(256, 259)]
    [b'lo', b'low', b' low']

    ``data``: a ``str`` (one unit of text), a path (one file, one unit), or an iterable
    of ``str`` and paths (one unit each; :class:`~bpeds.tokenizer.records.Records` reads
    records of ``.jsonl``, Parquet and Hugging Face datasets); see
    :mod:`bpeds.tokenizer.io` for what a unit means and how files are streamed. Or a
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

    ``files``: file names instead of ``data`` (Hugging Face's ``train(files=[...])``).

    ``data`` may also be :class:`~bpeds.tokenizer.counts.Counts` (:func:`count`) or a
    mapping of groups to counts: the merges of the text they were counted from, unread
    (type mode only), with their pattern and special tokens (another ``pattern``,
    ``preset`` or special texts raise ``ValueError``; ids may be given as a dict).

    A score that declares ``groups`` (``"group_frequency"``) given data that is not
    such a mapping, or fewer than two groups, raises ``ValueError`` (it would give
    frequency's merges at several times the cost); fewer than two groups holding
    text give a ``UserWarning``. ``vocab_size`` counts the 256 byte tokens, the merges
    and the special tokens: ``vocab_size - 256 - len(special_tokens)`` merges are
    learned (fewer, with a ``UserWarning`` saying why, when no eligible pair is left).

    ``pattern``: ``"gpt2"``, ``"gpt4"``, ``"gpt4o"``, a regex source, or
    ``None`` (each unit segment is one chunk, as minbpe's Basic); default: the
    preset's, else ``"gpt4"``. A pattern that does not compile or has
    capturing groups raises ``ValueError``.
    ``unicode``: the tables the pattern's classes are read with (``None``: the ``regex``
    module's, as minbpe; ``"16.0"``: tiktoken's, rustbpe's and Hugging Face's, equal to
    theirs on every code point; :mod:`bpeds.tokenizer.unicode_tables`); default: the
    preset's (``"16.0"`` for ``"hf"`` and ``"rustbpe"``), else the base's, else ``None``.
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
    ``variant``: a loop variant (:mod:`bpeds.variants`: ``"picky"``,
    ``"scaffold"``, a dict ``{"name": ..., **options}`` or your own
    :class:`~bpeds.variants.Variant`); ``vocab_size`` then counts the tokens
    encoding can emit (removed and hidden tokens keep their ids but do not
    count), and the tokenizer keeps the run's event log and encodes by it.
    Variants that remove tokens need ``representation="type"``.
    ``base``: continue training from this tokenizer (a
    :class:`~bpeds.tokenizer.Tokenizer`, or a model file in any format
    :func:`bpeds.tokenizer.formats.load_model` reads): every piece of ``data`` starts as
    the base encodes it, every base token and merge keeps its id and rank, and
    the new merges rank after them, so ``vocab_size`` counts the base's tokens
    too (a base with ids of its own keeps them: ``Tokenizer.ids``; ties compare them).
    ``pattern`` and ``unicode`` default to the base's, ``tie`` to the order of the
    base file's ids where import renumbered them (``"hf"`` for Hugging Face's files, as
    ``bpe-continue``: :data:`~bpeds.tokenizer.continued.FILE_IDS_TIE`); base special tokens
    keep their ids unless a new merge needs the id (then they move after the new merges,
    with a warning); new special tokens (a list) come last. Type representation only.
    ``normalizer``: ``"NFC"``, ``"NFD"``, ``"NFKC"``, ``"NFKD"`` or none (default; a
    base's), applied before splitting (:mod:`bpeds.tokenizer.normalize`; not to counts).
    ``workers``: processes for splitting and counting (the merges do not depend on it);
    default ``None``: the cores available (:func:`available_cores`: CPU affinity and
    quota), started only for data of more than one batch (about a million characters).
    ``progress``: see :func:`bpeds.tokenizer.progress.resolve_progress` (reading, then
    merges). ``preset``: ``"minbpe-basic"``, ``"minbpe-regex"``, ``"hf"``, ``"rustbpe"``
    (:data:`PRESETS`): it sets ``pattern``, ``unicode``, ``tie`` and ``representation``;
    one of them with another value (even ``pattern="gpt4"`` with ``preset="hf"``) raises
    ``ValueError``.
    ``errors``: ``"strict"`` or ``"replace"`` for invalid UTF-8 in files and
    lone surrogates in strings (see :mod:`bpeds.tokenizer.io`). ``on_merge(record,
    token_bytes)`` is called after every merge. ``block_size``: bytes read
    from a file at a time.

    Errors: ``ValueError``/``TypeError`` naming the bad argument (checked
    before any data is read); :class:`~bpeds.tokenizer.io.InvalidTextError` for invalid
    text; ``OSError`` for unreadable files.

    Complexity: O(corpus) to read and count, plus the driver's cost per merge.
    """
    data = data_or_files(data, files)
    size = check_int(vocab_size, "vocab_size", None)  # (None only to let files= come first)
    arguments = TrainArguments(
        pattern=pattern,
        unicode=unicode,
        special_tokens=special_tokens,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        score=score,
        variant=variant,
        tie=tie,
        representation=representation,
        counting=counting,
        multiset=multiset,
        workers=workers,
        progress=progress,
        preset=preset,
        errors=errors,
        on_merge=on_merge,
        block_size=block_size,
        base=load_model(base) if isinstance(base, str | os.PathLike) else base,
        normalizer=normalizer,
    )
    return Tokenizer.from_model(train_model(data, size, arguments))
