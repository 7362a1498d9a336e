"""Other tools' file formats: minbpe, Hugging Face ``tokenizers``, tiktoken."""

from __future__ import annotations

from bpeds.formats._common import FormatError
from bpeds.formats.hf import (
    from_hf_json,
    hf_tokenizer_json,
    load_hf,
    load_hf_vocab_merges,
    rank_rule_conflicts,
    save_hf,
    to_hf,
)
from bpeds.formats.minbpe import load_minbpe, parse_minbpe_model, save_minbpe
from bpeds.formats.tiktoken_format import (
    from_tiktoken_encoding,
    from_tiktoken_ranks,
    load_tiktoken,
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
    "load_hf_vocab_merges",
    "load_minbpe",
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
