"""minbpe, Hugging Face and tiktoken formats, against the real ``tokenizers`` and ``tiktoken``."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tokenizers
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bpeds.scoring.ties import gpt2_byte_to_unicode
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import (
    FormatError,
    from_hf_json,
    from_tiktoken_encoding,
    from_tiktoken_ranks,
    hf_tokenizer_json,
    load_hf,
    load_hf_vocab_merges,
    load_minbpe,
    load_model,
    load_tiktoken,
    parse_minbpe_model,
    rank_rule_conflicts,
    save_hf,
    save_minbpe,
    save_tiktoken,
    tiktoken_ranks,
    to_hf,
    to_tiktoken,
)
from bpeds.tokenizer.formats.minbpe import minbpe_model_text, minbpe_vocab_text
from bpeds.tokenizer.formats.tiktoken_format import parse_tiktoken_ranks
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, PATTERNS
from bpeds.tokenizer.training import train
from tests.budget import examples
from tests.hf_reference import hf_byte_level_trained

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
SPECIALS = {"<|endoftext|>": 1256, "<|fim_middle|>": 1300}
B2U = gpt2_byte_to_unicode()
U2B = {c: b for b, c in B2U.items()}


@pytest.fixture(scope="module")
def trained() -> dict[str, Tokenizer]:
    """1000 merges on the real text for each named pattern and for no split."""
    out = {}
    for name in ("gpt2", "gpt4", "gpt4o"):
        out[name] = train(TEXT, 1000 + 256 + 2, pattern=name, special_tokens=SPECIALS)
    out["none"] = train(TEXT[:20_000], 300 + 256, pattern=None, special_tokens={"<s>": 600})
    return out


def parts(tok: Tokenizer) -> tuple[list[tuple[int, int]], str | None, dict[str, int]]:
    """What every format keeps: the merges, the pattern and the special tokens (not options)."""
    return tok.merges, tok.pattern, tok.special_tokens


def real_text(name: str) -> str:
    """Text for ``trained[name]``: the whole real text with its special tokens spliced in,
    or for ``"none"`` (no split: slow on long text) a part of it around ``<s>``."""
    return with_specials(TEXT) if name != "none" else TEXT[:20_000] + "<s>" + TEXT[:300]


def with_specials(text: str) -> str:
    """The real text with special-token text spliced in at a few places."""
    cut = len(text) // 3
    return text[:cut] + "<|endoftext|>" + text[cut : 2 * cut] + "x<|fim_middle|>y" + text[2 * cut :]


# Text that exercises the patterns: letters of several scripts, digits, runs of
# spaces and newlines, contractions, punctuation, emoji, and the special tokens.
text_strategy = st.lists(
    st.sampled_from(
        [
            *"aAbé ñ\n\r\t.,'!?0123456789-_ßЖ中🙂\u200d",
            "'s",
            "'ll",
            "  ",
            "\r\n",
            "<|endoftext|>",
            "<s>",
            "<|fim_middle|>",
        ]
    ),
    max_size=30,
).map("".join)
unicode_text = st.text(
    st.characters(exclude_categories=["Cs"]), max_size=40
)  # no lone surrogates: they have no UTF-8 form


def token_bytes_of(hf_tokens: list[str]) -> list[bytes]:
    return [bytes(U2B[c] for c in t) for t in hf_tokens]


# -- minbpe -------------------------------------------------------------------------------


def minbpe_reads(text: str) -> tuple[str, dict[str, int], dict[tuple[int, int], int]]:
    """Read a .model file the way minbpe's ``Tokenizer.load`` does (its documented steps)."""
    lines = iter(text.splitlines(keepends=True))
    assert next(lines).strip() == "minbpe v1"
    pattern = next(lines).strip()
    specials: dict[str, int] = {}
    for _ in range(int(next(lines).strip())):
        special, idx = next(lines).strip().split()
        specials[special] = int(idx)
    merges: dict[tuple[int, int], int] = {}
    for new_id, line in enumerate(lines, 256):
        a, b = map(int, line.split())
        merges[(a, b)] = new_id
    return pattern, specials, merges


def test_minbpe_golden_wikipedia_example() -> None:
    tok = train("aaabdaaabac", 259, pattern=None, tie="leftmost")
    assert minbpe_model_text(tok) == "minbpe v1\n\n0\n97 97\n256 97\n257 98\n"
    vocab = minbpe_vocab_text(tok).splitlines()
    assert vocab[-3:] == ["[a][a] -> [aa] 256", "[aa][a] -> [aaa] 257", "[aaa][b] -> [aaab] 258"]
    assert vocab[10] == "[\\u000a] 10"
    assert vocab[32] == "[ ] 32"
    assert len(vocab) == 259


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o", "none"])
def test_minbpe_round_trip(trained: dict[str, Tokenizer], name: str, tmp_path: Path) -> None:
    tok = trained[name]
    model, vocab = save_minbpe(tok, tmp_path / "tok")
    assert (model.name, vocab.name) == ("tok.model", "tok.vocab")
    back = load_minbpe(model)
    assert parts(back) == parts(tok)
    text = with_specials(TEXT[:5000])
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    # minbpe's own reading steps give the same model.
    pattern, specials, merges = minbpe_reads(model.read_text(encoding="utf-8"))
    assert pattern == (tok.pattern or "")
    assert specials == tok.special_tokens
    assert list(merges) == tok.merges
    assert list(merges.values()) == list(range(256, 256 + tok.num_merges))
    lines = vocab.read_text(encoding="utf-8").splitlines()
    assert len(lines) == tok.vocab_size


def test_minbpe_prefix_may_end_in_model_and_never_overwrites(tmp_path: Path) -> None:
    tok = Tokenizer([(97, 98)], pattern="gpt2")
    (tmp_path / "x.vocab").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_minbpe(tok, tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()  # refused before writing either file
    assert (tmp_path / "x.vocab").read_text() == "mine"
    model, _ = save_minbpe(tok, tmp_path / "x.model", overwrite=True)
    assert model == tmp_path / "x.model"
    assert load_minbpe(model).merges == [(97, 98)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.model", "x.vocab"]  # no temp files


def test_written_files_get_normal_permissions(tmp_path: Path) -> None:
    path = save_tiktoken(Tokenizer([(97, 98)]), tmp_path / "t.tiktoken")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize(
    ("tok", "message"),
    [
        (Tokenizer(pattern="a|\nb"), "line break"),
        (Tokenizer(pattern=" ?[a-z]+"), "whitespace"),
        (Tokenizer(pattern=""), "empty split pattern"),
        (Tokenizer(special_tokens={"<end of text>": 256}), "contains whitespace"),
    ],
)
def test_minbpe_refuses_what_it_cannot_hold(tok: Tokenizer, message: str, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=message):
        save_minbpe(tok, tmp_path / "t")
    assert list(tmp_path.iterdir()) == []


GOOD = "minbpe v1\n\\w+\n1\n<|e|> 258\n97 97\n256 97\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "truncated: it ends before the version line"),
        ("minbpe v2\n\n0\n", "not a minbpe model"),
        ("minbpe v1\n", "ends before the pattern line"),
        ("minbpe v1", "truncated: its last line \\('minbpe v1'\\) has no line end"),
        ("minbpe v1\n\n0\n97 97\n256 9", "truncated: its last line \\('256 9'\\)"),
        ("minbpe v1\n\n", "ends before the number of special tokens"),
        ("minbpe v1\n\nthree\n", "line 3: the number of special tokens must be"),
        ("minbpe v1\n\n-1\n", "must be a non-negative integer"),
        ("minbpe v1\n\n\u0663\n", "must be a non-negative integer"),  # Arabic-Indic 3
        ("minbpe v1\n\n9" + "9" * 30 + "\n", "implausibly large"),
        ("minbpe v1\n\n2\n<a> 256\n", "announces 2 special tokens but only 1 line follows"),
        ("minbpe v1\n\n1\n<a>\n", "line 4: a special token line"),
        ("minbpe v1\n\n1\n<a> x\n", "a special token's id must be"),
        ("minbpe v1\n\n2\n<a> 256\n<a> 257\n", "line 5: special token '<a>' is given twice"),
        ("minbpe v1\n\n2\n<a> 256\n<b> 256\n", "share id 256"),
        ("minbpe v1\n\n1\n<a> 100\n", "byte"),
        ("minbpe v1\n\n1\n<a> 256\n97 97\n", "merge"),
        ("minbpe v1\n\n0\n97\n", "line 4: a merge line"),
        ("minbpe v1\n\n0\n97 98 99\n", "a merge line"),
        ("minbpe v1\n\n0\n97 256\n", "may only use ids 0..255"),
        ("minbpe v1\n\n0\n97 98\n97 98\n", "line 5: merge \\(97, 98\\) repeats"),
        ("minbpe v1\n\n0\n97 98\n\n97 99\n", "line 5: a merge line"),
        ("minbpe v1\n(\n0\n", "does not compile"),
        ("minbpe v1\n(\\w)+\n0\n", "capturing group"),
        ("minbpe v1\ngpt2\n0\n", "literal regex 'gpt2'"),
        ("minbpe v1\n\n2\nab 256\nbc 257\n", "overlap"),
    ],
)
def test_minbpe_corrupt_files_are_refused_clearly(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse_minbpe_model(text)


def test_minbpe_reads_other_line_endings_and_trailing_blank_lines(tmp_path: Path) -> None:
    crlf = GOOD.replace("\n", "\r\n") + "\r\n\r\n"
    (tmp_path / "w.model").write_bytes(b"\xef\xbb\xbf" + crlf.encode())
    tok = load_minbpe(tmp_path / "w.model")
    assert parts(tok) == ([(97, 97), (256, 97)], r"\w+", {"<|e|>": 258})


def test_load_model_recognises_each_kind_from_the_contents(tmp_path: Path) -> None:
    tok = Tokenizer([(97, 98), (256, 99)], pattern=PATTERNS["gpt2"], special_tokens={"<s>": 258})
    tok.save(tmp_path / "bpeds.json")
    save_hf(tok, tmp_path / "hf.model")  # the name says nothing: the contents do
    model, _ = save_minbpe(tok, tmp_path / "m")
    (model.parent / "m.json").write_bytes(model.read_bytes())
    assert load_model(tmp_path / "bpeds.json") == tok
    for path in (tmp_path / "hf.model", tmp_path / "m.json"):
        back = load_model(path)
        assert parts(back) == parts(tok)
    (tmp_path / "t.tiktoken").write_bytes(b"YQ== 97\n")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    for name, message in [
        ("t.tiktoken", "holds no split pattern"),
        ("other.json", "neither a bpeds model"),
        (".", "is a directory"),
    ]:
        with pytest.raises(FormatError, match=message):
            load_model(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.json")


def test_minbpe_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_minbpe(tmp_path / "missing.model")
    with pytest.raises(FormatError, match="is a directory"):
        load_minbpe(tmp_path)
    (tmp_path / "bin.model").write_bytes(b"minbpe v1\n\xff\xfe\n0\n")
    with pytest.raises(FormatError, match=r"not UTF-8 text .* line 2"):
        load_minbpe(tmp_path / "bin.model")


@settings(
    max_examples=examples(ci=150, local=50),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_minbpe_damaged_files_load_or_raise_format_error(data: st.DataObject) -> None:
    raw = bytearray(GOOD.encode())
    action = data.draw(st.sampled_from(["truncate", "flip", "insert"]))
    pos = data.draw(st.integers(0, len(raw)))
    if action == "truncate":
        del raw[pos:]
    elif action == "flip" and pos < len(raw):
        raw[pos] = data.draw(st.integers(0, 255))
    else:
        raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        tok = parse_minbpe_model(text)
    except FormatError:
        return
    assert isinstance(tok, Tokenizer)  # loaded: a valid tokenizer, checked by its constructor


# -- Hugging Face -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o", "none"])
def test_hf_export_encodes_real_text_like_bpeds(
    trained: dict[str, Tokenizer], name: str, tmp_path: Path
) -> None:
    tok = trained[name]
    path = save_hf(tok, tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = real_text(name)
    ours = tok.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ours
    assert hf.decode(ours, skip_special_tokens=False) == text
    assert hf.get_vocab_size() == tok.vocab_size
    for line in TEXT.splitlines()[:300]:
        assert hf.encode(line).ids == tok.encode_ordinary(line)


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o"])
@settings(
    max_examples=examples(ci=60, local=20),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=text_strategy | unicode_text)
def test_hf_export_encodes_any_text_like_bpeds(
    trained: dict[str, Tokenizer], name: str, text: str
) -> None:
    tok = trained[name]
    hf = _hf_cache(tok)
    assert hf.encode(text).ids == tok.encode(text, allowed_special="all")


_HF: dict[int, Any] = {}


def _hf_cache(tok: Tokenizer) -> Any:
    if id(tok) not in _HF:
        _HF[id(tok)] = to_hf(tok)
    return _HF[id(tok)]


@pytest.mark.filterwarnings("ignore::bpeds.tokenizer.pattern_safety.UncoveredTextWarning")
def test_hf_split_keeps_matches_only_like_findall() -> None:
    """A pattern that skips text: bpeds and tiktoken drop the skipped text, and so does
    the exported split (behavior Removed, inverted); Isolated would keep it."""
    tok = train(["ab", "ab", "abc", "abc"], 258, pattern=r"\w+")  # each text all matched
    text = "ab  abc!! x"
    data = hf_tokenizer_json(tok)
    assert tokenizers.Tokenizer.from_str(json.dumps(data)).encode(text).ids == tok.encode(text)
    assert to_tiktoken(tok).encode(text) == tok.encode(text)
    isolated = data["pre_tokenizer"]["pretokenizers"][0]
    isolated.update(behavior="Isolated", invert=False)
    assert tokenizers.Tokenizer.from_str(json.dumps(data)).encode(text).ids != tok.encode(text)


def test_pair_rank_and_bytes_rank_can_differ() -> None:
    """Merges (a, a) and (a, aa): Hugging Face has no merge (aa, a), bpeds ranks the bytes."""
    tok = Tokenizer([(97, 97), (97, 256)], pattern=None)
    assert rank_rule_conflicts(tok) == [257]
    assert tok.encode("aaa") == [257]
    assert to_tiktoken(tok).encode("aaa") == [257]
    assert to_hf(tok).encode("aaa").ids == [256, 97]
    # The other order is what training learns, and there the rules agree.
    assert rank_rule_conflicts(Tokenizer([(97, 97), (256, 97)], pattern=None)) == []


ties = st.sampled_from(["smallest_ids", "leftmost", "lexicographic", "hf"])
scores = st.sampled_from(["frequency", "pmi", "likelihood_gain", "length_weighted"])
small_text = st.text(st.sampled_from("aab b\n"), min_size=1, max_size=40)


@settings(max_examples=examples(ci=40, local=15), suppress_health_check=[HealthCheck.too_slow])
@given(
    units=st.lists(small_text, min_size=1, max_size=6),
    merges=st.integers(1, 20),
    tie=ties,
    score=scores,
    pattern=st.sampled_from(["gpt2", None]),
    probes=st.lists(small_text, max_size=10),
)
def test_trained_merges_have_no_rank_conflicts(
    units: list[str], merges: int, tie: str, score: str, pattern: str | None, probes: list[str]
) -> None:
    """Whatever the score and tie rule, trained merges encode alike under both rules."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "training stopped after k merges"
        tok = train(units, 256 + merges, pattern=pattern, tie=tie, score=score)
    assert rank_rule_conflicts(tok) == []
    hf = to_hf(tok)
    for text in [*units, *probes]:
        assert hf.encode(text).ids == tok.encode(text)


def test_hf_import_round_trip(trained: dict[str, Tokenizer], tmp_path: Path) -> None:
    for tok in trained.values():
        path = save_hf(tok, tmp_path / "t.json", overwrite=True)
        back = load_hf(path)
        assert parts(back) == parts(tok)
        assert back.options == {"imported_from": "tokenizer.json"}


@pytest.fixture(scope="module")
def hf_trained() -> Any:
    """A GPT-2-style tokenizer trained by Hugging Face itself (ids in HF's byte order)."""
    return hf_byte_level_trained([TEXT], 256 + 800 + 1, ["<|endoftext|>"])


def hf_token_bytes(hf: Any, text: str) -> list[bytes]:
    return [
        t.encode() if t == "<|endoftext|>" else bytes(U2B[c] for c in t)
        for t in hf.encode(text).tokens
    ]


def our_token_bytes(tok: Tokenizer, text: str) -> list[bytes]:
    return [tok.id_to_token(i) for i in tok.encode(text, allowed_special="all")]


def test_hf_import_of_a_tokenizer_trained_by_hf(hf_trained: Any, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    hf_trained.save(str(path))
    own = load_hf(path)  # Hugging Face's own ids, kept
    assert own.ids is not None
    sample = with_specials(TEXT[:20000]).replace("<|fim_middle|>", "")
    assert own.encode(sample, allowed_special="all") == hf_trained.encode(sample).ids
    assert own.get_vocab() == hf_trained.get_vocab()
    tok = load_hf(path, renumber=True)
    assert tok.pattern == GPT2_PATTERN
    assert tok.num_merges == 800
    assert tok.special_tokens == {"<|endoftext|>": 256 + 800}
    text = with_specials(TEXT).replace("<|fim_middle|>", "")
    assert our_token_bytes(tok, text) == hf_token_bytes(hf_trained, text)
    # The merges are Hugging Face's, in order, as bpeds id pairs.
    raw = json.loads(path.read_text())["model"]["merges"]
    first = raw[0] if isinstance(raw[0], list) else raw[0].split(" ")
    a, b = tok.merges[0]
    assert [tok.token_bytes(a), tok.token_bytes(b)] == token_bytes_of(first)


def test_hf_vocab_and_merges_import(hf_trained: Any, tmp_path: Path) -> None:
    vocab_path, merges_path = hf_trained.model.save(str(tmp_path))
    vocab = json.loads(Path(vocab_path).read_text())
    assert "<|endoftext|>" in vocab  # GPT-2's files keep it in the vocab
    tok = load_hf_vocab_merges(vocab_path, merges_path, renumber=True)
    assert tok.special_tokens == {"<|endoftext|>": 256 + 800}
    assert tok.pattern == PATTERNS["gpt2"]
    text = TEXT[:30_000]
    assert our_token_bytes(tok, text) == hf_token_bytes(hf_trained, text)
    # GPT-2's files number bytes by stand-in character: ties by those ids are "hf".
    assert tok.options == {
        "imported_from": "vocab.json+merges.txt",
        "tie_by_file_ids": {"name": "hf"},
    }
    (tmp_path / "bad.txt").write_text("#version: 0.2\na b c\n")
    with pytest.raises(FormatError, match=r"bad\.txt, line 2"):
        load_hf_vocab_merges(vocab_path, tmp_path / "bad.txt", renumber=True)


def _hf_doc() -> dict[str, Any]:
    return hf_tokenizer_json(
        Tokenizer([(97, 98), (256, 99)], pattern="gpt2", special_tokens={"<s>": 258})
    )


def _edit(path: str, value: Any) -> dict[str, Any]:
    doc = _hf_doc()
    keys = path.split(".")
    target: Any = doc
    for k in keys[:-1]:
        target = target[int(k)] if isinstance(target, list) else target[k]
    if value is _DELETE:
        del target[keys[-1]]
    elif isinstance(target, list):
        target[int(keys[-1])] = value
    else:
        target[keys[-1]] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_edit("normalizer", {"type": "Lowercase"}), "normalizer 'Lowercase'"),
        (_edit("pre_tokenizer", None), "no ByteLevel step"),
        (_edit("pre_tokenizer", {"type": "Whitespace"}), "no ByteLevel step"),
        (
            _edit("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": True}),
            "add_prefix_space",
        ),
        (_edit("pre_tokenizer.pretokenizers.1.use_regex", True), "splits text twice"),
        (_edit("pre_tokenizer.pretokenizers.0.behavior", "Cut"), "behavior must be one of"),
        (_edit("pre_tokenizer.pretokenizers.0.pattern", {"Regex": "(a)"}), "capturing group"),
        (_edit("model.type", "WordPiece"), "not a BPE model"),
        (_edit("model.continuing_subword_prefix", "##"), "continuing_subword_prefix"),
        (_edit("model.dropout", 0.1), "dropout"),
        (_edit("model.byte_fallback", True), "byte_fallback"),
        (_edit("model.merges", ["a b c"]), "merge 0 must be"),
        (_edit("model.merges", ["ab c", "a b"]), "comes before any merge makes it"),
        (_edit("model.merges", ["a b", "a b"]), "repeats|already makes"),
        (_edit("model.merges", ["a q"]), "not in the vocab"),
        (_edit("model.merges", ["a b", "b c"]), "makes 'bc', which is not in the vocab"),
        (_edit("model.vocab.a", 98), "share id 98"),
        (_edit("model.vocab.Ġ", _DELETE), "lacks byte 0x20"),
        (_edit("model.vocab.xyz", 257), "share id 257"),
        (_edit("added_tokens.0.lstrip", True), "lstrip"),
        (_edit("added_tokens.0.id", 300), "has id 300 but 258 in the vocab"),
        (_edit("added_tokens", "x"), "added_tokens must be a list"),
        ("[1, 2", "not valid JSON"),
        ([1, 2], "holds a JSON object"),
    ],
)
def test_hf_import_refuses_what_bpeds_cannot_reproduce(doc: Any, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        from_hf_json(json.dumps(doc) if not isinstance(doc, str) else doc)


def test_hf_import_accepts_hf_written_shapes() -> None:
    """List-form merges (tokenizers >= 0.20), an Isolated split, ignore_merges."""
    doc = _hf_doc()
    doc["model"]["merges"] = [m.split(" ") for m in doc["model"]["merges"]]
    doc["model"]["ignore_merges"] = True
    doc["pre_tokenizer"]["pretokenizers"][0].update(behavior="Isolated", invert=False)
    tok = from_hf_json(doc)
    assert tok.merges == [(97, 98), (256, 99)]
    assert tok.pattern == GPT2_PATTERN


@pytest.mark.parametrize(
    ("tok", "message"),
    [
        (Tokenizer([(104, 105)], special_tokens={"hi": 257}), "same text as token 256"),
        (Tokenizer([(97, 97), (256, 97), (97, 256)]), "tokens 257 and 258 have the same bytes"),
    ],
)
def test_hf_and_tiktoken_export_refuse_ambiguous_vocabularies(tok: Tokenizer, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        hf_tokenizer_json(tok)
    if "same bytes" in message:
        with pytest.raises(FormatError, match=message):
            tiktoken_ranks(tok)


# -- tiktoken ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o", "none"])
def test_tiktoken_export_encodes_like_bpeds(
    trained: dict[str, Tokenizer], name: str, tmp_path: Path
) -> None:
    tok = trained[name]
    enc = to_tiktoken(tok, "mine")
    text = real_text(name)
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert enc.decode(tok.encode_ordinary(text)) == text
    path = save_tiktoken(tok, tmp_path / "mine.tiktoken")
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    assert ranks == tok.mergeable_ranks()
    lines = path.read_bytes().splitlines()
    assert lines[256] == base64.b64encode(tok.token_bytes(256)) + b" 256"


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o", "none"])
def test_tiktoken_import_recovers_the_merges(
    trained: dict[str, Tokenizer], name: str, tmp_path: Path
) -> None:
    tok = trained[name]
    path = save_tiktoken(tok, tmp_path / "t.tiktoken")
    back = load_tiktoken(path, pattern=tok.pattern, special_tokens=tok.special_tokens)
    assert parts(back) == parts(tok)
    again = from_tiktoken_encoding(to_tiktoken(tok))
    assert parts(again) == parts(tok)


@settings(
    max_examples=examples(ci=60, local=20),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=text_strategy | unicode_text)
def test_tiktoken_export_encodes_any_text_like_bpeds(
    trained: dict[str, Tokenizer], text: str
) -> None:
    for name in ("gpt4", "none"):
        tok = trained[name]
        enc = _tt_cache(tok)
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


_TT: dict[int, Any] = {}


def _tt_cache(tok: Tokenizer) -> Any:
    if id(tok) not in _TT:
        _TT[id(tok)] = to_tiktoken(tok)
    return _TT[id(tok)]


@settings(max_examples=examples(ci=40, local=15), suppress_health_check=[HealthCheck.too_slow])
@given(
    units=st.lists(small_text, min_size=1, max_size=6),
    merges=st.integers(1, 20),
    tie=ties,
    score=scores,
)
def test_tiktoken_round_trip_keeps_every_token(
    units: list[str], merges: int, tie: str, score: str
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tok = train(units, 256 + merges, pattern=None, tie=tie, score=score)
    assume(len(set(tiktoken_ranks(tok))) == 256 + tok.num_merges)
    back = from_tiktoken_ranks(tiktoken_ranks(tok), pattern=None)
    assert [back.token_bytes(i) for i in range(back.num_merges + 256)] == [
        tok.token_bytes(i) for i in range(tok.num_merges + 256)
    ]
    for text in units:
        assert back.encode(text) == tok.encode(text)


def _ranks(extra: dict[bytes, int]) -> dict[bytes, int]:
    return {**{bytes([b]): b for b in range(256)}, **extra}


def test_tiktoken_import_renumbers_on_request() -> None:
    # Bytes ranked in reverse and a gap: the rank order is kept, the ids are bpeds's.
    ranks = {bytes([b]): 255 - b for b in range(256)} | {b"ab": 300, b"abc": 310}
    own = from_tiktoken_ranks(ranks, pattern="gpt2", special_tokens={"<e>": 400})
    assert own.ids is not None
    assert own.mergeable_ranks() == ranks
    enc0 = tiktoken.Encoding("x", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    assert own.encode("abc ab abcabc cba") == enc0.encode("abc ab abcabc cba")
    tok = from_tiktoken_ranks(ranks, pattern="gpt2", special_tokens={"<e>": 400}, renumber=True)
    assert tok.merges == [(97, 98), (256, 99)]
    assert tok.special_tokens == {"<e>": 258}
    enc = tiktoken.Encoding("x", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    text = "abc ab abcabc cba"
    theirs = [enc.decode_single_token_bytes(t) for t in enc.encode(text)]
    assert [tok.id_to_token(i) for i in tok.encode(text)] == theirs


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"YQ== 97\nnot-base64! 1\n", "line 2: b'not-base64!' is not valid base64"),
        (b"YQ==\n", "line 1: a line is"),
        (b"YQ== x\n", "rank must be a non-negative integer"),
        (b"YQ== 97\nYQ== 98\n", "line 2: token b'a' is given twice"),
        (b"YQ== 97\nYg== 97\n", "rank 97 is given twice"),
        (b" 5\n", "a line is"),
        (b"YQ== 97\n= 3\n", "not valid base64|must not be empty"),
    ],
)
def test_tiktoken_corrupt_files_are_refused_clearly(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse_tiktoken_ranks(data)


@pytest.mark.parametrize(
    ("ranks", "message"),
    [
        ({b"a": 0}, "byte 0x00 has no rank"),
        (_ranks({b"abc": 256}), "cannot be built by merging two lower-ranked tokens"),
        (_ranks({b"abc": 256, b"ab": 257}), "cannot be built"),
    ],
)
def test_tiktoken_import_refuses_unbuildable_vocabularies(
    ranks: dict[bytes, int], message: str
) -> None:
    with pytest.raises(FormatError, match=message):
        from_tiktoken_ranks(ranks, pattern=None)


def test_tiktoken_file_import_checks_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_tiktoken(tmp_path / "none.tiktoken", pattern="gpt4")
    path = tmp_path / "t.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(255)))
    with pytest.raises(FormatError, match=f"{path.name}: byte 0xff has no rank"):
        load_tiktoken(path, pattern="gpt4")
    with pytest.raises(TypeError, match=r"expected a tiktoken\.Encoding"):
        from_tiktoken_encoding(object())
