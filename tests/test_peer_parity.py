"""Parity with the peers on what the other parity tests do not reach: every code point
(Unicode tables), every Hugging Face ``Split`` behaviour, the vocabularies Hugging Face
writes by default, continued training from a Hugging Face base, and counts past 2**32.

The peers are the real packages (tiktoken, rustbpe, ``tokenizers``, ``bpe-continue``); a test
is skipped when its peer is not installed. Locally the per-code-point probes take every code
point the tables disagree on and a sample of the rest; under CI (``tests/budget.py``) every
code point.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import regex

import bpeds
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import from_hf_json, from_tiktoken_encoding, load_tiktoken
from bpeds.tokenizer.formats.hf import SPLIT_BEHAVIORS, split_pattern
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, GPT4_PATTERN, GPT4O_PATTERN, compile_pattern
from bpeds.tokenizer.unicode_tables import unicode_differences
from tests.budget import FULL
from tests.hf_reference import U2B, hf_byte_level_trained

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
OTHER = (DATA / "tinyshakespeare_100k.txt").read_text(encoding="utf-8")
SURROGATES = range(0xD800, 0xE000)
#: Text in several scripts, with marks, joiners, digits of other systems and a code point
#: that newer Unicode tables call a letter (U+0558).
WORLD = (
    "Swift's \u0dc1\u0dca\u200d\u0dbb\u0dd3 \u09b8\u09cd\u09ac\u09be\u09a7\u09c0\u09a8\u200c"
    "\u0987 \u0939\u093f\u0928\u094d\u0926\u0940 \u0661\u0662\u0663 \u0295ab \u0558's "
    "\u4e2d\u6587 \U0001f600 na\u00efve \u2163 \u00bd \uff21\uff42"
)


@cache
def probe_points(every: bool = FULL) -> list[int]:
    """Every code point (``every``: under CI); else every fifth the tables disagree on (and
    U+0295, whose category changed), the first 768 and every 509th."""
    odd = sorted(unicode_differences("16.0"))
    sample = {*odd[::5], 0x0295}
    return [
        cp
        for cp in range(0x110000)
        if cp not in SURROGATES and (every or cp in sample or cp % 509 == 0 or cp < 0x300)
    ]


def probe_text(every: bool = FULL) -> str:
    """For each probed code point, ``chr(cp)`` before a Devanagari mark and letter, before
    ``'s``, and between an upper- and a lower-case letter, one line each."""
    points = probe_points(every)
    return "".join(f"{chr(cp)}\u094b\u0928 {chr(cp)}'s A{chr(cp)}b\n" for cp in points)


# -- Unicode tables ----------------------------------------------------------------------------

CATEGORIES = (
    *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe"),
    *("Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"),
)


def _matched(engine: str, pattern: str, text: str) -> set[str]:
    """The characters of ``text`` (each once) that ``engine``'s regex matches with ``pattern``."""
    if engine == "tiktoken":
        tiktoken = pytest.importorskip("tiktoken")
        ranks = {bytes([b]): b for b in range(256)}
        enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        return set(enc.decode(enc.encode(text, disallowed_special=())))
    if engine == "rustbpe":
        rustbpe = pytest.importorskip("rustbpe")
        rb = rustbpe.Tokenizer()
        rb.train_from_iterator(iter(["ab"]), vocab_size=256, pattern=pattern)
        return set(rb.decode(rb.encode(text)))
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="removed")
    return set(text) - set("".join(p for p, _ in split.pre_tokenize_str(text)))


@pytest.mark.parametrize("engine", ["tiktoken", "rustbpe", "tokenizers"])
def test_every_engine_reads_the_unicode_16_table(engine: str) -> None:
    """tiktoken, rustbpe and Hugging Face (Oniguruma) put every code point in the category
    of bpeds's Unicode 16.0 table, which the regex module's newer tables do not."""
    text = "".join(map(chr, probe_points()))
    wrapped = compile_pattern(r"\p{L}", "16.0")
    # Every category against tiktoken (the table's source); against the others, those the
    # published patterns use (Hugging Face takes seconds a category on every code point).
    cats = (
        CATEGORIES if engine == "tiktoken" else ("L", "N", "M", "Lu", "Ll", "Lt", "Lm", "Lo", "Cn")
    )
    for cat in cats:
        pattern = rf"\p{{{cat}}}"
        theirs = _matched(engine, pattern, text)
        ours = set("".join(compile_pattern(pattern, "16.0").findall(text)))
        assert ours == theirs, (engine, cat, sorted(map(hex, map(ord, ours ^ theirs)))[:5])
    assert wrapped.findall("a\u0558b") == ["a", "b"]  # U+0558: Lm in newer tables
    assert set("".join(regex.findall(r"\p{L}", text))) != _matched(engine, r"\p{L}", text)


@cache
def _trained_for_probes(pattern: str) -> Tokenizer:
    """A vocabulary with the probes' tokens: the Devanagari pair, ``'s``, letters."""
    extra = ("\u094b\u0928 x's Ab " * 40) + WORLD * 20
    return bpeds.train([TEXT[:30000], extra], 700, pattern=pattern, unicode="16.0")


@cache
def _cl100k() -> Any | None:
    """tiktoken's cl100k_base if its file is in tiktoken's cache (no download), else None."""
    tiktoken = pytest.importorskip("tiktoken")
    import hashlib
    import tempfile

    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    folder = folder or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not os.path.exists(os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())):
        return None
    return tiktoken.get_encoding("cl100k_base")


@pytest.mark.parametrize("pattern", ["gpt4", "gpt4o", "gpt2"])
def test_every_code_point_encodes_like_tiktoken(pattern: str, tmp_path: Path) -> None:
    """``chr(cp) + "\\u094b\\u0928"`` (and ``chr(cp) + "'s"``, ``"A" + chr(cp) + "b"``) for
    every code point: a tokenizer imported from a ``.tiktoken`` file (the real cl100k_base
    when tiktoken has it cached, for GPT-4's pattern; else one trained here) encodes it as
    tiktoken does. With the regex module's tables it would not (shown too). Under CI every
    code point with GPT-4's pattern and the sample with the others."""
    tiktoken = pytest.importorskip("tiktoken.load")  # (the module holds the package too)

    from bpeds.tokenizer.formats import save_tiktoken, to_tiktoken

    text = probe_text(FULL and pattern == "gpt4")
    real = _cl100k() if pattern == "gpt4" else None
    if real is not None:
        enc = real
        tok = from_tiktoken_encoding(real, renumber=True)
        ids = [tok.token_bytes(i) for i in tok.encode_ordinary(text)]
        assert ids == [enc.decode_single_token_bytes(i) for i in enc.encode_ordinary(text)]
        return
    trained = _trained_for_probes(pattern)
    save_tiktoken(trained, tmp_path / "t.tiktoken")
    ranks = tiktoken.load_tiktoken_bpe(str(tmp_path / "t.tiktoken"))
    enc = pytest.importorskip("tiktoken").Encoding(
        "t", pat_str=trained.pattern, mergeable_ranks=ranks, special_tokens={}
    )
    tok = load_tiktoken(tmp_path / "t.tiktoken", pattern=pattern)
    assert tok.unicode == "16.0"
    theirs = enc.encode_ordinary(text)
    assert tok.encode_ordinary(text) == theirs
    assert to_tiktoken(tok).encode_ordinary(text) == theirs
    sample = probe_text(False)
    assert from_tiktoken_encoding(enc).encode_ordinary(sample) == enc.encode_ordinary(sample)
    regex_tables = Tokenizer(tok.merges, pattern=pattern)
    assert regex_tables.encode_ordinary("\u0558's") != enc.encode_ordinary("\u0558's")


def test_every_code_point_splits_like_oniguruma() -> None:
    """Hugging Face's Split (Oniguruma) cuts the per-code-point probe text into exactly the
    pieces bpeds cuts it into with Unicode 16.0's tables, for the three published patterns
    (under CI every code point with GPT-4o's, whose classes are the finest, the sample with
    the others)."""
    tokenizers = pytest.importorskip("tokenizers")
    for pattern in (GPT2_PATTERN, GPT4_PATTERN, GPT4O_PATTERN):
        text = probe_text(FULL and pattern == GPT4O_PATTERN)
        split = tokenizers.pre_tokenizers.Split(
            tokenizers.Regex(pattern), behavior="removed", invert=True
        )
        theirs = [p for p, _ in split.pre_tokenize_str(text)]
        assert compile_pattern(pattern, "16.0").findall(text) == theirs
        sample = probe_text(False)
        assert compile_pattern(pattern).findall(sample) != [
            p for p, _ in split.pre_tokenize_str(sample)
        ]


def _odd_text() -> str:
    """Text where the tables matter: words holding code points they disagree on."""
    odd = sorted(unicode_differences("16.0"))
    words = [f"x{chr(odd[i * 37 % len(odd)])}y{chr(odd[i * 11 % len(odd)])}'s" for i in range(400)]
    return TEXT[:60000] + " " + " ".join(words * 3) + " \u0295ab \u0295Ab" * 50 + WORLD * 30


def test_preset_rustbpe_equals_rustbpe_on_every_code_point() -> None:
    rustbpe = pytest.importorskip("rustbpe")
    text, merges = _odd_text(), 600
    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter([text]), vocab_size=256 + merges, pattern=GPT4_PATTERN)
    theirs = [t for t, r in sorted(rb.get_mergeable_ranks(), key=lambda x: x[1]) if r >= 256]
    tok = bpeds.train(text, 256 + merges, preset="rustbpe")
    assert tok.unicode == "16.0"
    assert [tok.token_bytes(256 + k) for k in range(merges)] == theirs
    regex_tables = bpeds.train(text, 256 + merges, pattern="gpt4", tie="smallest_ids")
    assert [regex_tables.token_bytes(256 + k) for k in range(merges)] != theirs


def test_preset_hf_equals_huggingface_on_every_code_point() -> None:
    pytest.importorskip("tokenizers")
    from tests.hf_reference import hf_merges_as_bytes

    text, merges = _odd_text(), 600
    theirs = hf_merges_as_bytes(hf_byte_level_trained([text], 256 + merges))
    tok = bpeds.train(text, 256 + merges, preset="hf")
    assert [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in tok.merges] == theirs


# -- Hugging Face Split behaviours -----------------------------------------------------------

#: Patterns that leave text between their matches (the published ones match every character).
SPLIT_PATTERNS = [
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)",  # SuperBPE's second stage
    r"\s+",
    r"[.,!?]",
    r"ab",
    r"\p{Lu}\p{Ll}+",
    r"(?<=\n)\s",
    GPT2_PATTERN,
]
_SNAKE = {
    "Removed": "removed",
    "Isolated": "isolated",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}


@pytest.mark.parametrize("behavior", SPLIT_BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
def test_split_pieces_equal_tokenizers(behavior: str, invert: bool) -> None:
    """Every behaviour, inverted or not, on English and on many scripts: the pieces of
    :func:`split_pattern`'s pattern are those of Hugging Face's ``Split``."""
    tokenizers = pytest.importorskip("tokenizers")
    texts = [TEXT[:60000], OTHER[:20000] + WORLD * 20] if FULL else [TEXT[:15000] + WORLD * 10]
    for pattern in SPLIT_PATTERNS:
        split = tokenizers.pre_tokenizers.Split(
            tokenizers.Regex(pattern), behavior=_SNAKE[behavior], invert=invert
        )
        ours = compile_pattern(split_pattern(pattern, behavior, invert), "16.0")
        for text in texts:
            theirs = [p for p, _ in split.pre_tokenize_str(text)]
            assert [p for p in ours.findall(text) if p] == theirs, (pattern, behavior, invert)


def _every_byte_text() -> str:
    """Text holding every byte UTF-8 can hold (so a trained alphabet lacks only the 13
    bytes no UTF-8 text holds, like the published SuperBPE tokenizers')."""
    leads = [0x800, *range(0x1000, 0x10000, 0x1000), 0x10000, 0x40000, 0x80000, 0xC0000]
    return "".join(map(chr, range(0x800))) + "".join(map(chr, [*leads, 0x100000]))


def _superbpe_style(pattern: str, vocab_size: int) -> Any:
    """A tokenizer trained as SuperBPE's code trains one: ``Sequence[Split(pattern,
    isolated), ByteLevel(use_regex=false)]`` and ``BpeTrainer``'s default alphabet."""
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Split(
                tokenizers.Regex(pattern), behavior="isolated", invert=False
            ),
            tokenizers.pre_tokenizers.ByteLevel(
                add_prefix_space=False, trim_offsets=True, use_regex=False
            ),
        ]
    )
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False)
    hf.train_from_iterator([TEXT, WORLD * 50, _every_byte_text()], trainer)
    return hf


def _hf_bytes(hf: Any, ids: list[int]) -> list[bytes]:
    return [bytes(U2B[c] for c in hf.id_to_token(i)) for i in ids]


@pytest.mark.parametrize("pattern", [SPLIT_PATTERNS[0], GPT4O_PATTERN])
def test_superbpe_style_tokenizer_json_encodes_like_tokenizers(pattern: str) -> None:
    """An isolated ``Split`` (SuperBPE's stage-2 pattern keeps words and spaces together
    between its matches) over a default alphabet: 13 bytes missing, bytes numbered by
    stand-in character. Imported with ``renumber=True``, bpeds encodes as Hugging Face does."""
    hf = _superbpe_style(pattern, 2000)
    doc = json.loads(hf.to_str())
    assert len([t for t in doc["model"]["vocab"] if len(t) == 1]) == 256 - 13
    tok = from_hf_json(doc, renumber=True)
    assert tok.unicode == "16.0"
    assert tok.options["tie_by_file_ids"] == {"name": "hf"}
    held_out = OTHER[:40000] + WORLD * 10 + "the cat sat on the mat, 123 times!!"
    ours = [tok.token_bytes(i) for i in tok.encode(held_out)]
    assert ours == _hf_bytes(hf, hf.encode(held_out).ids)


def test_gpt2_files_with_a_plain_endoftext_entry_encode_like_tokenizers() -> None:
    """A GPT-2 tokenizer built from ``encoder.json`` + ``vocab.bpe`` (``BPE(vocab, merges)``)
    has ``<|endoftext|>`` as a plain vocab entry, no added token: bpeds imports it as a
    special token with its id, and ``encode_ordinary`` gives Hugging Face's encoding, whose
    BPE never emits the entry."""
    tokenizers = pytest.importorskip("tokenizers")
    base = json.loads(hf_byte_level_trained([TEXT], 1256).to_str())
    vocab = dict(base["model"]["vocab"])
    vocab["<|endoftext|>"] = len(vocab)
    merges = [
        tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in base["model"]["merges"]
    ]
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    doc = json.loads(hf.to_str())
    assert doc["added_tokens"] == []
    assert "<|endoftext|>" in doc["model"]["vocab"]
    tok = from_hf_json(doc, renumber=True)
    assert tok.special_tokens == {"<|endoftext|>": 1256}
    text = OTHER[:30000] + " <|endoftext|> and on"
    assert [tok.token_bytes(i) for i in tok.encode_ordinary(text)] == _hf_bytes(
        hf, hf.encode(text).ids
    )
    assert tok.decode([1256]) == hf.decode([vocab["<|endoftext|>"]]) == "<|endoftext|>"


def test_continued_training_from_a_hugging_face_base_equals_bpe_continue() -> None:
    """A base Hugging Face trained numbers its bytes by stand-in character; continued from it
    with the tie rule left out, bpeds breaks ties by those ids (``"hf"``), as bpe-continue
    does, and learns the same merges. Ties by bpeds's own ids part from it (shown too)."""
    bpe_continue = pytest.importorskip("bpe_continue")
    from bpeds.tokenizer.formats.hf import hf_tokenizer_json

    hf_base = hf_byte_level_trained([TEXT[:90000]], 600)
    extended = bpe_continue.continue_training(
        hf_base.to_str(), texts=[TEXT[90000:]], vocab_size=1200, show_progress=False
    )
    theirs = [
        tuple(m) if isinstance(m, list) else tuple(m.split(" "))
        for m in json.loads(extended.to_str())["model"]["merges"]
    ]
    base = from_hf_json(hf_base.to_str(), renumber=True)
    ours = bpeds.train(TEXT[90000:], 1200, base=base)
    assert [tuple(m.split(" ")) for m in hf_tokenizer_json(ours)["model"]["merges"]] == theirs
    by_own_ids = bpeds.train(TEXT[90000:], 1200, base=base, tie="smallest_ids")
    assert by_own_ids.merges != ours.merges


# -- counts past 2**32 and 2**63 -------------------------------------------------------------


def _weighted_bpe(
    pieces: dict[str, int], merges: int, tie: str, min_count: int = 1
) -> tuple[list[tuple[int, int]], dict[str, list[int]]]:
    """BPE on weighted pieces the obvious way (Python ints throughout): every step counts
    every pair, takes the largest count (ties by ids, or by the tokens' bytes), merges it
    left to right everywhere. The merges and each piece's final tokens."""
    words = {p: list(p.encode()) for p in pieces}
    vocab = {i: bytes([i]) for i in range(256)}
    made: list[tuple[int, int]] = []
    for k in range(merges):
        counts: dict[tuple[int, int], int] = {}
        for p, c in pieces.items():
            for pair in zip(words[p], words[p][1:], strict=False):
                counts[pair] = counts.get(pair, 0) + c
        eligible = [q for q, c in counts.items() if c >= min_count]
        if not eligible:
            break
        if tie == "smallest_ids":
            best = min(eligible, key=lambda q: (-counts[q], q))
        else:
            best = min(eligible, key=lambda q: (-counts[q], vocab[q[0]], vocab[q[1]]))
        vocab[256 + k] = vocab[best[0]] + vocab[best[1]]
        made.append(best)
        for p, w in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(256 + k)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[p] = out
    return made, words


#: Piece counts around 2**32, 2**63 and up to 2**64 - 1 (the largest a counts file holds):
#: the pair ``(a, b)`` alone is counted more than 2**65 times.
HUGE = {
    "ab": 2**64 - 1,
    " abc": 2**63 + 12345,
    "bca": 2**32 + 7,
    "cab": 2**32 - 1,
    "xyz": 3,
    " ab": 2**63,
    "abab": 2**62 + 1,
    "zz": 2**40,
}


@pytest.mark.parametrize("tie", ["smallest_ids", "lexicographic"])
@pytest.mark.parametrize("multiset", [None, "HeapyKiYay"])
def test_counts_past_2_to_the_63_train_exactly_and_encode_consistently(
    tie: str, multiset: str | None, tmp_path: Path
) -> None:
    """A counts file whose pair counts pass 2**32, 2**63 and 2**64 trains to the merges of
    BPE done with Python ints (Hugging Face and rustbpe keep pair counts in 32 bits:
    docs/scale.md), and the tokenizer encodes every piece into the tokens training left
    it in."""
    from bpeds.structures import HeapyKiYay
    from bpeds.tokenizer.counts import Counts

    Counts(HUGE, pattern="gpt2").save(tmp_path / "huge.counts")
    counted = Counts.load(tmp_path / "huge.counts")
    assert counted.total == sum(HUGE.values()) > 2**65
    kw: dict[str, Any] = {} if multiset is None else {"multiset": HeapyKiYay}
    with pytest.warns(UserWarning, match="training stopped after 10 of 12 merges"):
        tok = bpeds.train(counted, 256 + 12, tie=tie, **kw)
    merges, final = _weighted_bpe(HUGE, 12, tie)
    assert tok.merges == merges
    for piece, tokens in final.items():
        assert tok.encode_ordinary(piece) == tokens
    with pytest.warns(UserWarning, match="at least min_frequency=9223372036854775808"):
        high = bpeds.train(counted, 256 + 12, tie=tie, min_frequency=2**63, **kw)
    assert high.merges == _weighted_bpe(HUGE, 12, tie, min_count=2**63)[0]


def test_counts_beyond_what_a_format_holds_are_refused(tmp_path: Path) -> None:
    """A piece counted 2**64 times cannot be written (the file holds u64 counts), and the
    per-group score, which packs a count into 48 bits, refuses larger pair counts."""
    from bpeds.tokenizer.counts import Counts

    with pytest.raises(ValueError, match="2\\*\\*64 or more cannot be saved"):
        Counts({"ab": 2**64}, pattern="gpt2").save(tmp_path / "c.counts")
    groups = {"a": Counts({"ab": 2**48}, pattern="gpt2"), "b": Counts({"ab": 1}, pattern="gpt2")}
    with pytest.raises(ValueError, match="packs counts into 48 bits"):
        bpeds.train(groups, 258, score="group_frequency")
