"""Training data as records: a field of each record of a dataset, one unit per record.

:class:`Records` is an iterable of ``str`` (so :func:`bpeds.train`, :func:`bpeds.count`
and :func:`bpeds.compare` read it as any iterable of texts, each record one unit) over

- a JSON Lines file (``.jsonl``, also compressed: ``.jsonl.gz``, ...): ``field`` of
  each line's object, read a line at a time (:func:`bpeds.tokenizer.io.jsonl_texts`;
  a ``.jsonl`` path given directly is read with ``field="text"``);
- a Parquet file: the column ``field``, a batch of rows at a time
  (:func:`bpeds.tokenizer.io.parquet_texts`; the ``parquet`` extra);
- a Hugging Face ``datasets`` ``Dataset`` or ``IterableDataset`` (streaming ones
  too): the column ``field``, a batch at a time, other columns not decoded;
- any iterable of mappings (a list of dicts, a generator of records): ``record[field]``.

Memory is one record (one batch of rows for Parquet and datasets), whatever the size
of the data. Records whose field is ``None`` are skipped; a record without the field,
or whose field is not a string, raises ``ValueError`` naming the record. A source that
can be read again (a file, a dataset, a list) is read again on each iteration (several
configurations of a comparison, SuperBPE's second stage); a one-shot iterator only once.

Not handled here: splitting the texts (:mod:`bpeds.tokenizer.io`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from bpeds.tokenizer.io import is_jsonl, is_parquet, jsonl_texts, parquet_texts

__all__ = ["Records"]

#: Rows fetched at a time from a Hugging Face dataset.
BATCH_ROWS = 1000


class Records:
    """The ``field`` of every record of ``source``, as an iterable of training texts.

    >>> rows = [{"text": "low lower", "id": 1}, {"text": "lowest", "id": 2}]
    >>> list(Records(rows))
    ['low lower', 'lowest']
    >>> import bpeds
    >>> bpeds.train(Records(rows), 258, pattern="gpt2").token_bytes(257)
    b'low'

    ``source``: a path (``str`` or ``os.PathLike``) of a ``.jsonl`` or ``.parquet``
    file, a Hugging Face dataset, or an iterable of mappings. ``TypeError`` for
    anything else (a path of another kind raises ``ValueError``). Complexity: O(data).
    """

    def __init__(self, source: object, field: str = "text") -> None:
        if not isinstance(field, str) or not field:
            raise TypeError(f"field must be a non-empty str, got {field!r}")
        self.field = field
        self.path: str | None = None
        if isinstance(source, str | os.PathLike):
            path = os.fspath(source)
            if not (is_jsonl(path) or is_parquet(path)):
                raise ValueError(
                    f"{path}: Records reads .jsonl and .parquet files; pass a text file "
                    "itself (a pathlib.Path) to train on its text"
                )
            if not os.path.isfile(path):
                raise FileNotFoundError(f"no such file: {path!r}")
            self.path = path
        elif isinstance(source, bytes | bytearray | Mapping) or not isinstance(source, Iterable):
            raise TypeError(
                "Records reads a .jsonl or .parquet path, a Hugging Face dataset or an "
                f"iterable of records (mappings), got {type(source).__name__}"
            )
        self.source = source

    def __iter__(self) -> Iterator[str]:
        if self.path is not None:
            if is_jsonl(self.path):
                return jsonl_texts(self.path, self.field)
            return parquet_texts(self.path, self.field)
        if _is_dataset(self.source):
            return self._dataset()
        return self._records(self.source)  # type: ignore[arg-type]

    def _dataset(self) -> Iterator[str]:
        """A Hugging Face dataset's column, a batch at a time."""
        ds: Any = self.source
        names = getattr(ds, "column_names", None)
        if names is not None and self.field not in names:
            raise ValueError(f"the dataset has no column {self.field!r}; it has {names}")
        if names is not None and hasattr(ds, "select_columns"):
            ds = ds.select_columns([self.field])
        at = 0
        for batch in ds.iter(batch_size=BATCH_ROWS):
            for text in batch[self.field]:
                yield from self._text(text, at)
                at += 1

    def _records(self, records: Iterable[object]) -> Iterator[str]:
        for at, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise TypeError(
                    f"record {at} is a {type(record).__name__}, not a mapping with a "
                    f"{self.field!r} field"
                )
            if self.field not in record:
                raise ValueError(
                    f"record {at} has no field {self.field!r} (it has {sorted(map(str, record))})"
                )
            yield from self._text(record[self.field], at)

    def _text(self, text: object, at: int) -> Iterator[str]:
        if text is None:
            return
        if not isinstance(text, str):
            raise ValueError(
                f"record {at}: field {self.field!r} holds {type(text).__name__}, not text"
            )
        if text:
            yield text

    def __repr__(self) -> str:
        shown = repr(self.path) if self.path is not None else type(self.source).__name__
        return f"Records({shown}, field={self.field!r})"


def _is_dataset(source: object) -> bool:
    """A Hugging Face ``Dataset`` or ``IterableDataset`` (by what it offers, not its class)."""
    return hasattr(source, "iter") and hasattr(source, "column_names")
