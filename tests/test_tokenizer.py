"""The Tokenizer data model: validation, read-only attributes, bytes on demand."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.errors import BpedsError
from bpeds.testing.oracle import brute_force_merges
from bpeds.tokenizer import Tokenizer, TokenizerError, UnknownTokenError, check_special_texts
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, GPT4_PATTERN, PATTERNS
from tests.budget import examples


def test_defaults() -> None:
    tok = Tokenizer()
    assert tok.merges == []
    assert tok.pattern == GPT4_PATTERN
    assert tok.special_tokens == {}
    assert tok.options == {}
    assert tok.vocab_size == 256
    assert tok.max_token_id == 255
    assert [tok.token_bytes(i) for i in (0, 97, 255)] == [b"\x00", b"a", b"\xff"]


def test_named_patterns_resolve_to_their_source() -> None:
    for name, source in PATTERNS.items():
        assert Tokenizer(pattern=name).pattern == source
    assert Tokenizer(pattern=GPT2_PATTERN).pattern == GPT2_PATTERN
    assert Tokenizer(pattern=r"\w+|\W+").pattern == r"\w+|\W+"
    assert Tokenizer(pattern=None).pattern is None


@settings(max_examples=40)
@given(chunks=st.lists(st.binary(min_size=1, max_size=12), min_size=1, max_size=6))
def test_token_bytes_equal_the_concatenation_of_parents(chunks: list[bytes]) -> None:
    records = brute_force_merges(chunks, 20)
    tok = Tokenizer([r.pair for r in records], pattern=None)
    table = [bytes([b]) for b in range(256)]
    for a, b in tok.merges:
        table.append(table[a] + table[b])
    assert [tok.token_bytes(i) for i in range(len(table))] == table
    assert tok.vocab_size == len(table)


def test_vocab_size_counts_specials_and_max_id_sees_gaps() -> None:
    tok = Tokenizer([(97, 98)], special_tokens={"<a>": 257, "<z>": 5000})
    assert tok.vocab_size == 259
    assert tok.max_token_id == 5000
    assert tok.num_merges == 1


@pytest.mark.parametrize(
    ("merges", "error", "match"),
    [
        ([(97, 256)], TokenizerError, r"merge 0 is \(97, 256\) but makes id 256: .*0..255"),
        ([(97, 98), (257, 1)], TokenizerError, "merge 1 .* only use ids 0..256"),
        ([(-1, 98)], TokenizerError, "merge 0"),
        ([(97, 98), (97, 98)], TokenizerError, "repeats"),
        ([(97,)], TypeError, "pair of ids"),
        ([(97, 98, 99)], TypeError, "pair of ids"),
        (["ab"], TypeError, "pair of ids"),
        ([(97, "b")], TypeError, "right id must be an int"),
        ([(True, 98)], TypeError, "left id must be an int"),
        ([(97.0, 98)], TypeError, "must be an int"),
        ("abc", TypeError, "sequence of"),
        (5, TypeError, "sequence of"),
    ],
)
def test_bad_merges_are_refused(merges: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tokenizer(merges)


@pytest.mark.parametrize(
    ("special", "error", "match"),
    [
        ({"<a>": 100}, TokenizerError, "id 100, which belongs to a byte token"),
        ({"<a>": 256}, TokenizerError, "id 256, which belongs to a merge token"),
        ({"<a>": -3}, TokenizerError, "negative id"),
        ({"<a>": 300, "<b>": 300}, TokenizerError, "share the id 300"),
        ({"": 300}, TokenizerError, "empty string"),
        ({"ab": 300, "bc": 301}, TokenizerError, "overlap"),
        ({"\udc80": 300}, TokenizerError, "surrogate"),
        ({"<a>": "300"}, TypeError, "must be an int"),
        ({1: 300}, TypeError, "is a str"),
        ([("<a>", 300)], TypeError, "mapping"),
    ],
)
def test_bad_special_tokens_are_refused(special: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tokenizer([(97, 98)], special_tokens=special)


def test_contained_special_tokens_are_allowed() -> None:
    tok = Tokenizer(special_tokens={"<a>": 256, "<a>b": 257, "a": 258})
    assert tok.vocab_size == 259


@pytest.mark.parametrize(
    ("pattern", "error", "match"),
    [
        ("(unclosed", TokenizerError, "does not compile"),
        (r"(\w+)|\s", TokenizerError, "capturing group"),
        (b"\\w+", TypeError, "pattern must be a str"),
    ],
)
def test_bad_patterns_are_refused(pattern: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tokenizer(pattern=pattern)


def test_bad_options_are_refused() -> None:
    with pytest.raises(TypeError, match="JSON-compatible"):
        Tokenizer(options={"x": object()})
    with pytest.raises(TypeError, match="JSON-compatible"):
        Tokenizer(options={"x": float("nan")})
    with pytest.raises(TypeError, match="option names"):
        Tokenizer(options={1: "x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="mapping"):
        Tokenizer(options=[("a", 1)])  # type: ignore[arg-type]


def test_errors_are_bpeds_errors_and_value_errors() -> None:
    with pytest.raises(BpedsError):
        Tokenizer([(300, 1)])
    with pytest.raises(ValueError, match="merge 0"):
        Tokenizer([(300, 1)])


def test_attributes_are_copies() -> None:
    tok = Tokenizer([(97, 98)], special_tokens={"<s>": 257}, options={"tie": {"name": "x"}})
    tok.merges.append((1, 2))
    tok.special_tokens["<t>"] = 400
    tok.options["tie"]["name"] = "changed"
    assert tok.merges == [(97, 98)]
    assert tok.special_tokens == {"<s>": 257}
    assert tok.options == {"tie": {"name": "x"}}
    with pytest.raises(AttributeError):
        tok.merges = []  # type: ignore[misc]


def test_token_bytes_of_special_and_unknown_ids() -> None:
    tok = Tokenizer([(97, 98)], special_tokens={"<s>": 257})
    with pytest.raises(UnknownTokenError, match=r"special token '<s>'.*id_to_token"):
        tok.token_bytes(257)
    with pytest.raises(UnknownTokenError, match=r"unknown token id 258: .* 0..256"):
        tok.token_bytes(258)
    with pytest.raises(UnknownTokenError, match="unknown token id -1"):
        tok.token_bytes(-1)
    with pytest.raises(TypeError, match="must be an int"):
        tok.token_bytes("a")  # type: ignore[arg-type]
    assert tok.id_to_token(257) == b"<s>"


def test_equality_pickling_and_repr() -> None:
    a = Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 257}, options={"k": 1})
    b = Tokenizer([(97, 98)], pattern=GPT2_PATTERN, special_tokens={"<s>": 257}, options={"k": 1})
    assert a == b
    assert a != Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 257})
    assert a != "tokenizer"
    c = pickle.loads(pickle.dumps(a))
    assert c == a
    assert c.encode("ab<s>", allowed_special="all") == [256, 257]
    assert repr(a) == "Tokenizer(merges=<1>, pattern='gpt2', special_tokens={'<s>': 257})"
    with pytest.raises(TypeError):
        hash(a)


def _overlap_by_definition(texts: list[str]) -> bool:
    for a in texts:
        for b in texts:
            if a is b or a in b or b in a:
                continue
            if any(a[-k:] == b[:k] for k in range(1, min(len(a), len(b)))):
                return True
    return False


@settings(max_examples=examples(ci=300, local=100))
@given(texts=st.lists(st.text(alphabet="ab<", min_size=1, max_size=6), unique=True, max_size=5))
def test_overlap_check_equals_its_definition(texts: list[str]) -> None:
    try:
        check_special_texts(texts)
    except TokenizerError:
        assert _overlap_by_definition(texts)
    else:
        assert not _overlap_by_definition(texts)


def test_in_place_training_is_what_train_builds() -> None:
    """Tokenizer.train builds itself from the model training describes, as bpeds.train
    does; it continues from a loaded base, and says to load a base given as a path."""
    from bpeds.tokenizer.trained import TrainedModel
    from bpeds.tokenizer.trainer import TrainArguments, train_model
    from bpeds.tokenizer.training import train

    text = "low lower lowest newer newest " * 20
    model = train_model(text, 270, TrainArguments(pattern="gpt2"))
    assert isinstance(model, TrainedModel)
    assert Tokenizer.from_model(model) == train(text, 270, pattern="gpt2")
    base = train(text, 262, pattern="gpt2")
    again = Tokenizer(pattern="gpt2").train(text, 270, base=base)
    assert again == train(text, 270, pattern="gpt2", base=base)
    with pytest.raises(TypeError, match="load it first"):
        Tokenizer(pattern="gpt2").train(text, 270, base="model.json")
