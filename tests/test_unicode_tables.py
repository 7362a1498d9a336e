"""The ``unicode`` setting: which tables a pattern's classes are read with, carried by
tokenizers, training, counting and their files (the peers themselves: test_peer_parity.py)."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import pytest
import regex

import bpeds
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.counts import Counts, CountsFormatError
from bpeds.tokenizer.formats import FormatError, from_hf_json, hf_tokenizer_json
from bpeds.tokenizer.persist import ModelFormatError, dumps, loads
from bpeds.tokenizer.pretokenize import compile_pattern, split
from bpeds.tokenizer.training import count_to_file
from bpeds.tokenizer.unicode_tables import (
    UnicodePattern,
    check_unicode,
    unicode_differences,
    with_tables,
)

ODD = "x\u0558y \u0558's A\u0295b \U00016ea0z"  # U+0558, U+16EA0: unassigned in 16.0


def test_the_tables_differ_where_unicode_16_has_no_character_or_another_category() -> None:
    table = unicode_differences("16.0")
    assert table[0x0558] == "Cn"  # a letter in newer tables
    assert table[0x0295] == "Ll"  # Lo in newer tables
    assert 0x0041 not in table
    assert all(not 0xD800 <= cp < 0xE000 for cp in table)


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "gpt4o", r"\p{L}+|\p{N}+|\s+|."])
def test_the_wrapped_pattern_is_the_pattern_on_text_the_tables_agree_on(pattern: str) -> None:
    text = Path("tests/data/taylorswift.txt").read_text(encoding="utf-8")[:20000] + "é中😀"
    plain = compile_pattern(pattern)
    assert compile_pattern(pattern, "16.0").findall(text) == plain.findall(text)


def test_a_code_point_the_tables_disagree_on_is_read_as_the_table_says() -> None:
    rx = compile_pattern(r"\p{L}+|\P{L}+", "16.0")
    assert rx.findall("ab\u0558cd") == ["ab", "\u0558", "cd"]
    assert regex.findall(r"\p{L}+|\P{L}+", "ab\u0558cd") == ["ab\u0558cd"]
    # Matches that leave text out are cut from the original text by their spans.
    gaps = compile_pattern(r"\p{L}+", "16.0")
    assert gaps.findall("ab\u0558cd!") == ["ab", "cd"]
    assert [m.span() for m in gaps.finditer("ab\u0558cd")] == [(0, 2), (3, 5)]
    assert gaps.findall("xx ab\u0558cd", 3) == ["ab", "cd"]
    assert pickle.loads(pickle.dumps(rx)).findall("a\u0558") == ["a", "\u0558"]
    assert with_tables(regex.compile("a"), None) == regex.compile("a")
    assert isinstance(with_tables(regex.compile("a"), "16.0"), UnicodePattern)


def test_bad_tables_are_refused_with_what_to_pass() -> None:
    with pytest.raises(ValueError, match=r"unicode must be None .* or '16.0', got '17.0'"):
        check_unicode("17.0")
    with pytest.raises(TypeError, match="unicode must be a str or None"):
        check_unicode(16)
    with pytest.raises(ValueError, match=r"got '17\.0'"):
        Tokenizer(pattern="gpt4", unicode="17.0")
    with pytest.raises(ValueError, match=r"got '17\.0'"):
        bpeds.train("ab", 257, unicode="17.0")


def test_a_tokenizer_keeps_its_tables_through_save_load_and_pickle(tmp_path: Path) -> None:
    tok = bpeds.train(["x\u0558y x\u0558y", ODD], 265, pattern="gpt4", unicode="16.0")
    assert tok.unicode == "16.0"
    assert "unicode='16.0'" in repr(tok)
    assert '"unicode": "16.0"' in dumps(tok)
    assert loads(dumps(tok)) == tok
    tok.save(tmp_path / "t.json")
    back = Tokenizer.load(tmp_path / "t.json")
    assert back == tok
    assert back.encode(ODD) == tok.encode(ODD)
    assert pickle.loads(pickle.dumps(tok)) == tok
    assert tok != Tokenizer(tok.merges, pattern="gpt4", options=tok.options)
    # Without a pattern there is nothing to read: None, and no key in the file.
    assert Tokenizer([], pattern=None, unicode="16.0").unicode is None
    assert '"unicode"' not in dumps(Tokenizer([], pattern="gpt4"))
    # Retraining in place keeps the tokenizer's tables; a preset's yield to none of them.
    assert tok.train("ab ab", 258).unicode == "16.0"
    assert Tokenizer().train("ab ab", 258, preset="hf").unicode == "16.0"
    assert Tokenizer().train("ab ab", 258, preset="minbpe-regex").unicode is None


def test_a_model_file_with_bad_tables_is_refused() -> None:
    text = dumps(Tokenizer([], pattern="gpt4", unicode="16.0"))
    with pytest.raises(ModelFormatError, match=r"got '9\.0'"):
        loads(text.replace('"16.0"', '"9.0"'))
    with pytest.raises(ModelFormatError, match='"unicode" must be a string'):
        loads(text.replace('"16.0"', "16"))


def test_the_tables_change_the_split_where_they_disagree() -> None:
    assert list(split("\u0558's", "gpt4")) == ["\u0558".encode(), b"'s"]
    assert list(split("\u0558's", "gpt4", unicode="16.0")) == ["\u0558'".encode(), b"s"]
    text = ("x\u0558y " * 30) + "the cat"
    spans = "x\u0558".encode()  # one piece with the regex tables, two with Unicode 16.0's

    def made(tok: Tokenizer) -> bool:
        return any(spans in tok.token_bytes(t) for t in range(256, 256 + tok.num_merges))

    assert made(bpeds.train(text, 262, pattern="gpt4"))
    assert not made(bpeds.train(text, 262, preset="rustbpe"))


def test_presets_set_the_tables_and_refuse_others() -> None:
    assert bpeds.train("ab ab", 258, preset="rustbpe").unicode == "16.0"
    assert bpeds.train("ab ab", 258, preset="hf").unicode == "16.0"
    assert bpeds.train("ab ab", 258, preset="minbpe-regex").unicode is None
    with pytest.raises(ValueError, match=r"preset 'hf' sets unicode='16\.0', but unicode=None"):
        bpeds.train("ab ab", 258, preset="hf", unicode=None)
    base = bpeds.train("ab ab", 258, preset="rustbpe")
    assert bpeds.train("abc abc", 260, base=base).unicode == "16.0"  # the base's


def test_counts_carry_their_tables_and_train_with_them(tmp_path: Path) -> None:
    text = [ODD * 5, "the cat sat"]
    counted = bpeds.count(text, pattern="gpt4", unicode="16.0")
    assert counted.unicode == "16.0"
    assert "unicode='16.0'" in repr(counted)
    counted.save(tmp_path / "c.counts")
    back = Counts.load(tmp_path / "c.counts")
    assert back == counted
    assert back.unicode == "16.0"
    assert pickle.loads(pickle.dumps(back)) == back
    direct = bpeds.train(text, 270, preset="rustbpe")
    assert bpeds.train(back, 270, preset="rustbpe").merges == direct.merges
    assert bpeds.train(back, 270).unicode == "16.0"  # the counts' tables
    count_to_file(text, tmp_path / "d.counts", pattern="gpt4", unicode="16.0", workers=1)
    assert Counts.load(tmp_path / "d.counts") == counted


def test_counts_made_with_other_tables_train_only_where_they_split_alike() -> None:
    plain = bpeds.count(["the cat sat", "on the mat"], pattern="gpt4")
    assert plain.splits_alike("16.0")
    assert bpeds.train(plain, 262, preset="rustbpe").unicode == "16.0"
    odd = bpeds.count([ODD], pattern="gpt4")
    assert not odd.splits_alike("16.0")
    with pytest.raises(ValueError, match=r"count with unicode='16\.0'"):
        bpeds.train(odd, 262, preset="rustbpe")
    with pytest.raises(ValueError, match="different Unicode tables"):
        _ = odd + bpeds.count([ODD], pattern="gpt4", unicode="16.0")


def test_a_counts_header_with_bad_tables_is_refused(tmp_path: Path) -> None:
    c = Counts({"ab": 1}, pattern="gpt4", unicode="16.0")
    c.save(tmp_path / "c.counts")
    data = (tmp_path / "c.counts").read_bytes()
    bad = data.replace(b'"unicode": "16.0"', b'"unicode": "1.00"')
    (tmp_path / "bad.counts").write_bytes(bad)
    with pytest.raises(CountsFormatError, match="header is invalid"):
        Counts.load(tmp_path / "bad.counts")


def test_hf_import_reads_unicode_16_and_warns_on_escapes_oniguruma_reads_otherwise() -> None:
    tok = Tokenizer([(97, 98)], pattern=r"\w+|\s+|.")
    doc = hf_tokenizer_json(tok)
    with pytest.warns(UserWarning, match=r"uses \\w, which Hugging Face's Oniguruma"):
        back = from_hf_json(doc)
    assert back.unicode == "16.0"
    with pytest.warns(UserWarning, match="Oniguruma"):
        assert from_hf_json(doc, unicode=None).unicode is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_hf_json(hf_tokenizer_json(Tokenizer([(97, 98)], pattern="gpt4")))


def test_hf_import_refuses_a_missing_byte_text_can_hold() -> None:
    doc = hf_tokenizer_json(Tokenizer([(97, 98)], pattern="gpt2"))
    vocab = doc["model"]["vocab"]
    del vocab["\u00f5"]  # 0xF5: in no UTF-8 text, so Hugging Face's trainer leaves it out
    assert from_hf_json(json.dumps(doc)).merges == [(97, 98)]
    del vocab["\u0100"]  # 0x00
    with pytest.raises(FormatError, match=r"lacks byte 0x00 .* Hugging Face drops such a byte"):
        from_hf_json(json.dumps(doc))


def test_a_split_pattern_that_matches_nothing_is_refused() -> None:
    doc = hf_tokenizer_json(Tokenizer([], pattern=r"x*"))
    doc["pre_tokenizer"]["pretokenizers"][0].update(behavior="Isolated", invert=False)
    with pytest.raises(FormatError, match="matches the empty string"):
        from_hf_json(doc)
    doc["pre_tokenizer"]["pretokenizers"][0].update(behavior="Cut", invert=False)
    with pytest.raises(FormatError, match="behavior must be one of"):
        from_hf_json(doc)


def test_a_base_with_a_bad_recorded_tie_asks_for_one() -> None:
    base = Tokenizer([(97, 98)], pattern="gpt4", options={"tie_by_file_ids": {"name": "x"}})
    with pytest.raises(ValueError, match=r"pass tie=\.\.\. explicitly"):
        bpeds.train("abab", 260, base=base)
    assert bpeds.train("abab", 258, base=base, tie="smallest_ids").num_merges == 2
    ordered = {"name": "smallest_ids", "byte_order": list(range(255, -1, -1))}
    base = Tokenizer([(97, 98)], pattern="gpt4", options={"tie_by_file_ids": ordered})
    assert bpeds.train("abab", 258, base=base).options["tie"] == ordered


def test_the_command_line_counts_and_trains_with_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bpeds.cli import main

    text = tmp_path / "odd.txt"
    text.write_text(ODD * 4, encoding="utf-8")
    counts, model = tmp_path / "c.counts", tmp_path / "t.json"
    assert main(["count", str(text), "-o", str(counts), "--unicode", "16.0", "-q"]) == 0
    assert Counts.load(counts).unicode == "16.0"
    argv = ["train", "--counts", str(counts), "--vocab-size", "262", "--preset", "rustbpe"]
    assert main([*argv, "-o", str(model), "-q"]) == 0
    assert Tokenizer.load(model).unicode == "16.0"
    assert main(["count", str(text), "-o", str(counts), "--force", "-q"]) == 0
    assert main([*argv, "-o", str(model), "--force", "-q"]) == 2
    assert "count with unicode='16.0'" in capsys.readouterr().err
    again = ["train", str(text), "--vocab-size", "262", "--unicode", "16.0", "--force", "-q"]
    assert main([*again, "-o", str(model)]) == 0
    assert Tokenizer.load(model).unicode == "16.0"
