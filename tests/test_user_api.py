"""What users of Hugging Face ``tokenizers`` and tiktoken expect of a tokenizer, held
against those libraries: ``get_vocab``, ``decode_batch``, ``token_ids``."""

from __future__ import annotations

from pathlib import Path

import pytest

import bpeds
from bpeds.tokenizer import Tokenizer

SWIFT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return bpeds.train(SWIFT[:30000], 600, special_tokens=["<|endoftext|>"], workers=1)


def test_get_vocab_equals_hugging_face_s(tok: Tokenizer) -> None:
    from bpeds.tokenizer.formats import to_hf

    hf = to_hf(tok)
    assert tok.get_vocab() == hf.get_vocab()
    assert len(tok.get_vocab()) == tok.vocab_size == hf.get_vocab_size()
    for text, i in list(tok.get_vocab().items())[::37]:
        assert hf.token_to_id(text) == i
        assert hf.id_to_token(i) == text


def test_token_to_id_and_id_to_token_are_inverse_over_the_vocabulary(tok: Tokenizer) -> None:
    for i in tok.token_ids():
        assert tok.token_to_id(tok.id_to_token(i)) == i


def test_decode_batch_equals_tiktoken_s(tok: Tokenizer) -> None:
    from bpeds.tokenizer.formats import to_tiktoken

    texts = [SWIFT[i : i + 300] for i in range(30000, 33000, 300)]
    batch = tok.encode_batch(texts)
    assert tok.decode_batch(batch) == to_tiktoken(tok).decode_batch(batch) == texts


def test_a_variant_s_vocabulary_leaves_out_removed_tokens() -> None:
    picky = bpeds.train(SWIFT[:20000], 420, variant={"name": "picky", "threshold": 0.5})
    ids = picky.token_ids()
    assert len(ids) == len(picky.get_vocab()) == picky.vocab_size < 256 + picky.num_merges
    assert set(picky.encode(SWIFT[20000:26000])) <= set(ids)
