"""Unicode normalisation of text before it is split: NFC, NFD, NFKC or NFKD.

A tokenizer may carry a normaliser (``Tokenizer(normalizer="NFKC")``,
``bpeds.train(..., normalizer="NFKC")``), as Hugging Face ``tokenizers`` and
sentencepiece do: training normalises every text it reads and encoding every text it
encodes, the same way, and the model file records it. Special tokens are found in the
text *before* normalising (as Hugging Face's added tokens with ``normalized: false``),
so a special token's text is never produced or hidden by normalisation; the text
between them is normalised piece by piece. That equals normalising it whole, because
pieces are cut only before a space or after a newline (see
:mod:`bpeds.tokenizer.io`), characters with which no normalisation form composes or
reorders anything.

Not handled here: where training and encoding call it (:mod:`bpeds.tokenizer.trainer`,
:class:`bpeds.tokenizer.Tokenizer`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Literal

__all__ = ["NORMALIZERS", "Form", "check_normalizer", "normalized"]

#: A normalisation form.
Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
#: The normalisation forms a tokenizer may apply (Python's :func:`unicodedata.normalize`).
NORMALIZERS: tuple[Form, ...] = ("NFC", "NFD", "NFKC", "NFKD")


def check_normalizer(value: object) -> Form | None:
    """``value`` if it is ``None`` or one of :data:`NORMALIZERS` (case-insensitive),
    upper-cased; ``ValueError`` (``TypeError`` for a non-str) otherwise.

    >>> check_normalizer("nfkc"), check_normalizer(None)
    ('NFKC', None)
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"normalizer must be a str or None, got {type(value).__name__}")
    for form in NORMALIZERS:
        if form == value.upper():
            return form
    raise ValueError(f"normalizer must be one of {list(NORMALIZERS)} or None, got {value!r}")


def normalized(form: Form | None, texts: Iterable[str]) -> Iterator[str]:
    """Each text normalised to ``form`` (``None``: as it is), empty results dropped.

    >>> list(normalized("NFKC", ["ﬁne", "①"]))
    ['fine', '1']

    O(total text).
    """
    if form is None:
        yield from texts
        return
    norm = unicodedata.normalize
    for text in texts:
        out = norm(form, text)
        if out:
            yield out
