"""Hugging Face ``tokenizers`` as a reference trainer, set up the one way our parity tests use.

A byte-level BPE: ByteLevel pre-tokenizer (GPT-2 pattern, no prefix space) over the full
256-byte initial alphabet, so its merges are comparable with ``tie="hf"`` training.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bpeds.scoring.ties import gpt2_byte_to_unicode

#: GPT-2's printable stand-in character -> the byte it stands for.
U2B = {ch: b for b, ch in gpt2_byte_to_unicode().items()}


def hf_byte_level_trained(
    texts: Sequence[str], vocab_size: int, special_tokens: Sequence[str] = ()
) -> Any:
    """A ``tokenizers.Tokenizer`` trained by ``BpeTrainer`` on ``texts``."""
    import tokenizers

    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    byte_level = tokenizers.pre_tokenizers.ByteLevel
    hf.pre_tokenizer = byte_level(add_prefix_space=False, use_regex=True)
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size,
        show_progress=False,
        initial_alphabet=byte_level.alphabet(),
        special_tokens=list(special_tokens),
    )
    hf.train_from_iterator(list(texts), trainer)
    return hf


def hf_merges_as_bytes(hf: Any) -> list[tuple[bytes, bytes]]:
    """The trained merges, each as the pair of byte strings it joins."""
    raw = json.loads(hf.to_str())["model"]["merges"]
    pairs = [m if isinstance(m, list) else m.split(" ") for m in raw]
    return [(bytes(U2B[c] for c in a), bytes(U2B[c] for c in b)) for a, b in pairs]
