"""Other tools' file formats: minbpe, Hugging Face ``tokenizers``, tiktoken.

:func:`load_model` reads any model file the ``bpeds`` command reads,
recognising its kind from the contents.
"""

from __future__ import annotations

import re

from bpeds.tokenizer import _model_json
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.formats._common import (
    FormatError,
    PathLike,
    decode_utf8,
    parse_json,
    read_bytes,
)
from bpeds.tokenizer.formats.hf import (
    from_hf_json,
    hf_tokenizer_json,
    load_hf,
    load_hf_vocab_merges,
    rank_rule_conflicts,
    save_hf,
    to_hf,
)
from bpeds.tokenizer.formats.minbpe import (
    MINBPE_VERSION,
    load_minbpe,
    parse_minbpe_model,
    save_minbpe,
)
from bpeds.tokenizer.formats.tiktoken_format import (
    from_tiktoken_encoding,
    from_tiktoken_ranks,
    load_tiktoken,
    parse_tiktoken_ranks,
    save_tiktoken,
    tiktoken_ranks,
    to_tiktoken,
)

__all__ = [
    "FormatError",
    "from_hf_json",
    "from_tiktoken_encoding",
    "from_tiktoken_ranks",
    "hf_tokenizer_json",
    "load_hf",
    "load",
    "load_hf_vocab_merges",
    "load_minbpe",
    "load_model",
    "load_tiktoken",
    "parse_minbpe_model",
    "rank_rule_conflicts",
    "save_hf",
    "save_minbpe",
    "save_tiktoken",
    "tiktoken_ranks",
    "to_hf",
    "to_tiktoken",
]


_NO_PATTERN = object()  # load_model's pattern= when none is given

#: How a bpeds JSON file starts (so a damaged one is still reported as a bpeds model).
_BPEDS_HEAD = re.compile(rb'^\{\s*"format"\s*:\s*"bpeds"')


def load_model(
    path: PathLike, *, pattern: str | object | None = _NO_PATTERN, renumber: bool = False
) -> Tokenizer:
    """Read a model file of any kind recognised from its contents (also ``bpeds.load``).

    bpeds JSON (``"format": "bpeds"``, see :mod:`bpeds.tokenizer.persist`), a Hugging
    Face ``tokenizer.json`` (an object with a ``model``), a minbpe ``.model`` (first
    line ``minbpe v1``) or a tiktoken ``.tiktoken`` rank file (lines ``base64 rank``),
    which holds no split pattern, so ``pattern=`` must name it (``"gpt2"``,
    ``"gpt4"``, a regex source, or ``None``). A file whose ids do not follow bpeds's
    numbering (bytes by value, merge ``k`` as ``256 + k``: Hugging Face's own and
    OpenAI's files) needs ``renumber=True``, which keeps every token and the rank
    order and gives bpeds's ids; the error says so. These are the files every
    ``bpeds`` command that takes a MODEL reads.

    A missing file raises ``FileNotFoundError``; a corrupt bpeds JSON file
    (one that starts as bpeds's files do, ``{"format": "bpeds"``, truncated or
    not), :class:`~bpeds.tokenizer.persist.ModelFormatError`; anything else wrong (another kind
    of file, a corrupt file of these kinds), :class:`FormatError` saying how to
    convert it. Complexity: that of the reader for its kind.
    """
    where = str(path)
    data = read_bytes(path, "a model file")
    head = data[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    if _model_json.other_kind(head) == "tiktoken":
        if pattern is _NO_PATTERN:
            raise FormatError(
                f"{where} is a tiktoken rank file, which holds no split pattern: "
                "bpeds.load(path, pattern='gpt2') (or the pattern it was made with; "
                "bpeds import --format tiktoken --pattern ...)"
            )
        if pattern is not None and not isinstance(pattern, str):
            raise TypeError(f"pattern must be a str or None, got {type(pattern).__name__}")
        ranks = parse_tiktoken_ranks(data, source=where)
        return from_tiktoken_ranks(ranks, pattern=pattern, renumber=renumber, source=where)
    if head.startswith(MINBPE_VERSION.encode()):
        return parse_minbpe_model(decode_utf8(data, where), source=where)
    if head.startswith(b"{"):
        try:
            obj = parse_json(decode_utf8(data, where), where)
        except FormatError:
            if _BPEDS_HEAD.search(head) is None:
                raise
            obj = {"format": "bpeds"}  # a damaged bpeds file: its own parser says what is wrong
        if isinstance(obj, dict) and obj.get("format") == "bpeds":
            return _model_json.build(Tokenizer, _model_json.parse(data, source=where))
        if isinstance(obj, dict) and "model" in obj:
            try:
                return from_hf_json(obj, source=where, renumber=renumber)
            except FormatError as exc:
                if renumber:
                    raise
                raise FormatError(
                    f"{exc}\n(bpeds.load(path, renumber=True) reads it with bpeds's ids; "
                    f"or convert it first: bpeds import --format hf --renumber {where} "
                    "-o model.json)"
                ) from None
        raise FormatError(
            f'{where} is JSON but neither a bpeds model (no "format": "bpeds") nor a '
            'Hugging Face tokenizer.json (no "model")'
        )
    raise FormatError(
        f"{where} is not a model bpeds can read (bpeds JSON, Hugging Face tokenizer.json, "
        "minbpe .model, .tiktoken); read vocab.json + merges.txt with load_hf_vocab_merges "
        "or 'bpeds import'"
    )


#: ``bpeds.load``: every supported model file, recognised from its contents.
load = load_model
