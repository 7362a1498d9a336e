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


def test_one_loader_reads_every_format_and_tokenizer_load_names_it(
    tok: Tokenizer, tmp_path: Path
) -> None:
    from bpeds.errors import ModelFormatError
    from bpeds.tokenizer.formats import FormatError, save_hf, save_minbpe, save_tiktoken

    tok.save(tmp_path / "m.json")
    save_hf(tok, tmp_path / "tokenizer.json")
    model, _ = save_minbpe(tok, tmp_path / "m")
    save_tiktoken(tok, tmp_path / "m.tiktoken")
    for path in (tmp_path / "m.json", tmp_path / "tokenizer.json", model):
        back = bpeds.load(path)
        assert (back.merges, back.pattern, back.special_tokens) == (
            tok.merges,
            tok.pattern,
            tok.special_tokens,
        )
    with pytest.raises(FormatError, match=r"holds no split pattern: bpeds.load\(path, pattern="):
        bpeds.load(tmp_path / "m.tiktoken")
    assert bpeds.load(tmp_path / "m.tiktoken", pattern=tok.pattern).merges == tok.merges
    for path, kind in (
        (tmp_path / "tokenizer.json", "Hugging Face tokenizer.json"),
        (model, "minbpe .model"),
        (tmp_path / "m.tiktoken", "tiktoken rank file"),
    ):
        with pytest.raises(ModelFormatError, match=rf"{kind}.*bpeds\.load\(path"):
            Tokenizer.load(path)


def test_the_loader_keeps_hugging_face_s_own_ids(tmp_path: Path) -> None:
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    hf.train_from_iterator([SWIFT[:20000]], trainer)
    hf.save(str(tmp_path / "tokenizer.json"))
    own = bpeds.load(tmp_path / "tokenizer.json")  # Hugging Face's own ids, kept
    text = SWIFT[20000:22000]
    assert own.encode(text) == hf.encode(text).ids
    assert own.get_vocab() == hf.get_vocab()
    ours = bpeds.load(tmp_path / "tokenizer.json", renumber=True)
    shown = {i: s for s, i in ours.get_vocab().items()}
    assert [shown[i] for i in ours.encode(text)] == hf.encode(text).tokens


MULTI = "naïve café 😀 日本語のテキスト, Ελληνικά, e\u0301 ok—«quotes» 🇫🇷\n  tabs\t😀😀"


def test_offsets_equal_hugging_face_s_on_multibyte_text(tok: Tokenizer) -> None:
    from bpeds.tokenizer.formats import to_hf

    hf = to_hf(tok)
    for text in (MULTI, SWIFT[30000:32000], MULTI * 3 + SWIFT[:500]):
        ids, spans = tok.encode_with_offsets(text)
        got = hf.encode(text)
        assert ids == got.ids
        assert spans == got.offsets


def test_offsets_with_special_tokens_and_decoded_offsets_equal_tiktoken_s(tok: Tokenizer) -> None:
    from bpeds.tokenizer.formats import to_tiktoken

    text = "héllo<|endoftext|>😀 wörld"
    ids, spans = tok.encode_with_offsets(text, allowed_special="all")
    assert text[spans[ids.index(tok.special_tokens["<|endoftext|>"])][0] :].startswith("<|end")
    covered = sorted({i for a, b in spans for i in range(a, b)})
    assert covered == list(range(len(text)))
    enc = to_tiktoken(tok)
    for sample in (MULTI, text):
        sample_ids = tok.encode(sample, allowed_special="all")
        assert tok.decode_with_offsets(sample_ids) == enc.decode_with_offsets(sample_ids)


# -- BPE-dropout --------------------------------------------------------------------------


def test_dropout_zero_is_plain_encoding(tok: Tokenizer) -> None:
    import random

    from bpeds.tokenizer.dropout import bpe_dropout, merge_table
    from bpeds.tokenizer.encoder import bpe

    text = SWIFT[30000:40000] + MULTI
    assert tok.encode_with_dropout(text, 0.0) == tok.encode(text)
    ranks, table = tok.mergeable_ranks(), merge_table(tok.merges)
    for piece in {p for p in text.split(" ") if p}:
        data = piece.encode()
        assert bpe_dropout(data, table, 0.0, random.Random(1)) == bpe(data, ranks)


def test_dropout_is_reproducible_and_decodes_to_the_text(tok: Tokenizer) -> None:
    import random

    text = SWIFT[30000:33000] + MULTI + "<|endoftext|>"
    a = tok.encode_with_dropout(text, 0.2, seed=7, allowed_special="all")
    assert a == tok.encode_with_dropout(text, 0.2, seed=7, allowed_special="all")
    assert a == tok.encode_with_dropout(text, 0.2, seed=random.Random(7), allowed_special="all")
    assert a != tok.encode_with_dropout(text, 0.2, seed=8, allowed_special="all")
    assert tok.decode(a) == text
    assert len(a) > len(tok.encode(text, allowed_special="all"))
    assert tok.encode_with_dropout(text[:200], 1.0) == list(text[:200].encode())
    with pytest.raises(bpeds.SpecialTokenError):
        tok.encode_with_dropout(text, 0.1)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\]"):
        tok.encode_with_dropout(text, 1.5)


def test_the_drop_rate_observed_is_the_rate_asked_for(tok: Tokenizer) -> None:
    """Every candidate merge taken from the queue is dropped with probability p: counted
    over all draws, the share dropped is within 4 standard errors of p."""
    import random

    from bpeds.tokenizer.dropout import bpe_dropout, merge_table

    class Counting(random.Random):
        draws = drops = 0
        p = 0.0

        def random(self) -> float:
            x = super().random()
            self.draws += 1
            self.drops += x < self.p
            return x

    table = merge_table(tok.merges)
    pieces = [w.encode() for w in SWIFT[30000:50000].split()]
    for p in (0.05, 0.3):
        rng = Counting(3)
        rng.p = p
        for piece in pieces:
            bpe_dropout(piece, table, p, rng)
        rate = rng.drops / rng.draws
        assert abs(rate - p) < 4 * (p * (1 - p) / rng.draws) ** 0.5


def test_dropout_splits_like_hugging_face_s_bpe_with_dropout(tok: Tokenizer) -> None:
    """Token counts under dropout have the same mean as Hugging Face's BPE with the same
    dropout: over 200 encodings of 40 words each, within 5 standard errors."""
    import json
    import statistics

    import tokenizers

    from bpeds.tokenizer.formats import hf_tokenizer_json

    spec = hf_tokenizer_json(tok)
    text = " ".join(SWIFT[30000:40000].split()[:40])
    for p in (0.1, 0.4):
        spec["model"]["dropout"] = p
        hf = tokenizers.Tokenizer.from_str(json.dumps(spec))
        theirs = [len(hf.encode(text).ids) for _ in range(200)]
        ours = [len(tok.encode_with_dropout(text, p, seed=i)) for i in range(200)]
        se = (statistics.variance(theirs) / 200 + statistics.variance(ours) / 200) ** 0.5
        assert abs(statistics.mean(theirs) - statistics.mean(ours)) < 5 * se
        assert statistics.mean(ours) > len(tok.encode(text)) + 1


def test_dropout_is_refused_for_a_tokenizer_that_replays_an_event_log() -> None:
    picky = bpeds.train(SWIFT[:20000], 420, variant={"name": "picky", "threshold": 0.5})
    with pytest.raises(ValueError, match="event log"):
        picky.encode_with_dropout("some text", 0.1)


# -- normalisation ------------------------------------------------------------------------

COMPAT = (
    "ﬁne ﬂour ① ② \uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 "
    "\uff76\uff80\uff76\uff85 café cafe\u0301 Å Å ㎏ ¼ x² Ⅻ"
)


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD"])
def test_a_normaliser_applies_in_training_and_encoding_as_hugging_face_s(
    form: str, tmp_path: Path
) -> None:
    import unicodedata

    from bpeds.tokenizer.formats import load_hf, save_hf, to_hf

    text = (SWIFT[:15000] + COMPAT) * 2
    tok = bpeds.train(text, 500, normalizer=form, special_tokens=["<|endoftext|>"], workers=1)
    assert tok.normalizer == form
    # training reads the normalised text: the same merges as on text normalised first
    first = bpeds.train(unicodedata.normalize(form, text), 499, workers=1)
    assert tok.merges == first.merges
    # encoding normalises the same way, as Hugging Face's normalizer does
    hf = to_hf(tok)
    probe = COMPAT + "<|endoftext|>\uff21\uff22\uff23" + SWIFT[20000:21000]
    assert tok.encode(probe, allowed_special="all") == hf.encode(probe).ids
    assert tok.encode_ordinary(COMPAT) == tok.encode_ordinary(unicodedata.normalize(form, COMPAT))
    ids, spans = tok.encode_with_offsets(probe, allowed_special="all")
    assert ids == hf.encode(probe).ids
    seen = "<|endoftext|>".join(
        unicodedata.normalize(form, p) for p in probe.split("<|endoftext|>")
    )
    assert sorted({i for a, b in spans for i in range(a, b)}) == list(range(len(seen)))
    # saved with the model, in bpeds's format and in tokenizer.json
    tok.save(tmp_path / "m.json")
    assert bpeds.Tokenizer.load(tmp_path / "m.json") == tok
    save_hf(tok, tmp_path / "tokenizer.json")
    assert load_hf(tmp_path / "tokenizer.json").normalizer == form


def test_special_tokens_are_found_before_normalising() -> None:
    """A fullwidth look-alike of a special token is text (NFKC makes it ASCII), as Hugging
    Face's added tokens with normalized=false."""
    from bpeds.tokenizer.formats import to_hf

    tok = bpeds.train(SWIFT[:5000], 300, normalizer="NFKC", special_tokens=["<s>"], workers=1)
    look_alike = "\uff1cs\uff1e and <s>"
    ids = tok.encode(look_alike, allowed_special="all")
    assert ids.count(tok.special_tokens["<s>"]) == 1
    assert ids == to_hf(tok).encode(look_alike).ids
    with pytest.raises(bpeds.SpecialTokenError):
        tok.encode("<s>")
    assert tok.encode("\uff1cs\uff1e")  # not a special token, before normalising


def test_formats_without_a_normaliser_refuse_one_and_counts_cannot_be_normalised() -> None:
    from bpeds.tokenizer.formats import FormatError, save_minbpe, tiktoken_ranks

    tok = bpeds.train(SWIFT[:3000], 300, normalizer="NFKC", workers=1)
    with pytest.raises(FormatError, match="no place for a normaliser"):
        save_minbpe(tok, "never-written")
    with pytest.raises(FormatError, match="no place for a normaliser"):
        tiktoken_ranks(tok)
    with pytest.raises(ValueError, match="counts hold text already read"):
        bpeds.train(bpeds.count(SWIFT[:3000]), 300, normalizer="NFC")
    with pytest.raises(ValueError, match="normalizer must be one of"):
        bpeds.train(SWIFT[:3000], 300, normalizer="NFX")
    more = bpeds.train(SWIFT[3000:6000], 350, base=tok)  # continued: the base's normaliser
    assert more.normalizer == "NFKC"
    with pytest.raises(ValueError, match="the base normalises with 'NFKC'"):
        bpeds.train(SWIFT[3000:6000], 350, base=tok, normalizer="NFC")


def test_the_train_command_takes_a_normaliser(tmp_path: Path) -> None:
    from bpeds.cli import main

    src = tmp_path / "in.txt"
    src.write_text(SWIFT[:4000] + COMPAT, encoding="utf-8")
    out = tmp_path / "m.json"
    assert (
        main(
            ["train", str(src), "--vocab-size", "300", "--normalizer", "NFKC", "-q", "-o", str(out)]
        )
        == 0
    )
    assert bpeds.load(out).normalizer == "NFKC"
