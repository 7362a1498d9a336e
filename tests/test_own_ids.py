"""A model's own ids, kept: GPT-2's real ranks (``tests/data/gpt2.tiktoken.gz``, as shipped in
the PyPI package openai-whisper), encoded as tiktoken does, continued as ``bpe-continue``
continues it, and exported with the same ids."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import bpeds
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import hf_tokenizer_json, load_tiktoken, save_tiktoken
from bpeds.tokenizer.pretokenize import GPT2_PATTERN

DATA = Path(__file__).parent / "data"
SWIFT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
EOT = {"<|endoftext|>": 50256}


@pytest.fixture(scope="module")
def gpt2_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gpt2") / "gpt2.tiktoken"
    path.write_bytes(gzip.decompress((DATA / "gpt2.tiktoken.gz").read_bytes()))
    return path


@pytest.fixture(scope="module")
def gpt2(gpt2_file: Path) -> Tokenizer:
    return load_tiktoken(gpt2_file, pattern="gpt2", special_tokens=EOT)


def test_gpt2_keeps_its_ids_and_encodes_as_tiktoken(gpt2: Tokenizer, gpt2_file: Path) -> None:
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load

    ranks = tiktoken.load.load_tiktoken_bpe(str(gpt2_file))
    enc = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=EOT)
    assert gpt2.ids is not None
    assert gpt2.ids[:3] == [ranks[b"\x00"], ranks[b"\x01"], ranks[b"\x02"]]
    assert gpt2.mergeable_ranks() == ranks
    text = SWIFT[:60000] + "<|endoftext|>naïve ☃ 😀 " + SWIFT[-3000:]
    ids = gpt2.encode(text, allowed_special="all")
    assert ids == enc.encode(text, allowed_special="all")
    assert gpt2.decode(ids) == text
    assert gpt2.token_to_id(b" the") == ranks[b" the"]
    assert gpt2.id_to_token(50256) == b"<|endoftext|>"
    assert gpt2.vocab_size == 50257
    assert gpt2.max_token_id == 50256
    assert bpeds.load(gpt2_file, pattern="gpt2").encode(SWIFT[:2000]) == enc.encode(SWIFT[:2000])


def test_exports_and_reloads_with_the_same_ids(gpt2: Tokenizer, tmp_path: Path) -> None:
    import tokenizers

    gpt2.save(tmp_path / "gpt2.json")
    back = Tokenizer.load(tmp_path / "gpt2.json")
    assert back == gpt2
    hf = tokenizers.Tokenizer.from_str(json.dumps(hf_tokenizer_json(gpt2)))
    text = SWIFT[:20000] + "<|endoftext|>"
    assert hf.encode(text).ids == gpt2.encode(text, allowed_special="all")
    save_tiktoken(gpt2, tmp_path / "again.tiktoken")
    assert load_tiktoken(tmp_path / "again.tiktoken", pattern="gpt2", special_tokens=EOT) == gpt2
    assert bpeds.load(tmp_path / "gpt2.json").ids == gpt2.ids


def test_continued_training_keeps_gpt2_s_ids_as_bpe_continue_does(gpt2: Tokenizer) -> None:
    """From GPT-2's real ranks, on the same text, bpeds and bpe-continue learn the same new
    merges and give the new tokens the same ids (after every GPT-2 id)."""
    bpe_continue = pytest.importorskip("bpe_continue")
    base_json = json.dumps(hf_tokenizer_json(gpt2))
    extended = bpe_continue.continue_training(
        base_json, texts=[SWIFT], vocab_size=50257 + 300, show_progress=False
    )
    theirs = json.loads(extended.to_str())["model"]
    ours = bpeds.train(SWIFT, 50257 + 300, base=gpt2, tie="smallest_ids", workers=1)
    mine = hf_tokenizer_json(ours)["model"]
    assert ours.ids is not None
    assert ours.ids[: len(gpt2.ids or [])] == gpt2.ids
    assert ours.special_tokens == EOT
    assert len(mine["merges"]) == len(theirs["merges"]) == 50000 + 300
    assert [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in theirs["merges"]] == [
        tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in mine["merges"]
    ]
    assert mine["vocab"] == theirs["vocab"]
    new = SWIFT[1000:3000]
    assert ours.encode(new) == extended.encode(new).ids
    # the old ids still mean what they meant: the new encoding only glues base tokens
    assert ours.decode(ours.encode(new)) == new


def test_own_ids_are_checked() -> None:
    from bpeds.errors import TokenizerError

    with pytest.raises(TokenizerError, match="ids gives 3 ids, but the tokenizer has 257"):
        Tokenizer([(97, 98)], ids=[0, 1, 2])
    with pytest.raises(TokenizerError, match="id 5 is given twice"):
        Tokenizer([(97, 98)], ids=[5, *range(1, 256), 5])
    with pytest.raises(TokenizerError, match="id 0 is given twice"):
        Tokenizer([(97, 98)], ids=[*range(1, 257), 0], special_tokens={"<s>": 0})
    own = Tokenizer([(97, 98)], pattern=None, ids=[*range(1, 257), 0], special_tokens={"<s>": 999})
    assert own.encode("ab<s>", allowed_special="all") == [0, 999]
    assert own.decode([0, 999, 98]) == "ab<s>a"
    with pytest.raises(bpeds.UnknownTokenError, match="unknown token id 257 at position 1"):
        own.decode([0, 257])
    assert own.renumbered().encode("ab<s>", allowed_special="all") == [256, 257]
    assert Tokenizer([(97, 98)], ids=list(range(257))).ids is None  # bpeds's own numbering


def test_a_model_with_its_own_ids_measures_as_its_renumbered_self() -> None:
    base = bpeds.train(SWIFT[:20000], 400, workers=1)
    ranks = {b: 1000 + i for b, i in base.mergeable_ranks().items()}  # every id moved
    from bpeds.tokenizer.formats import from_tiktoken_ranks

    own = from_tiktoken_ranks(ranks, pattern=base.pattern)
    assert own.ids is not None
    c = bpeds.compare({"own": own, "bpeds": base}, train=SWIFT[:20000], heldout=SWIFT[20000:30000])
    strip = [{k: v for k, v in r.items() if k != "config"} for r in c.rows]
    assert strip[: len(strip) // 2] == strip[len(strip) // 2 :]
    assert c.overlap["own"]["bpeds"] == 1.0
