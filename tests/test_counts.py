"""Counts as an artefact: count, add, save/load (untrusted files), train from counts (the
merges of training on the text), executors, compressed inputs, the count command."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import re
import struct
import tempfile
import zlib
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds
import bpeds.tokenizer.pieces
from bpeds.cli import main
from bpeds.tokenizer.counts import (
    MAGIC,
    Counts,
    CountsFormatError,
    SpillCounter,
    _render,
    sum_counts,
)
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.pretokenize import PATTERNS
from bpeds.tokenizer.training import count, count_pieces, count_to_file, train
from tests.budget import examples

DATA = Path(__file__).parent / "data"
TEXT_PATH = DATA / "taylorswift.txt"
TEXT = TEXT_PATH.read_text(encoding="utf-8")
# Several units of real text (so pieces recur across units, with shifting first appearances).
UNITS = [TEXT[i : i + 9000] for i in range(0, 90000, 7000)]

ALPHABET = "ab cé中'sl12!.\n\t😀<>"
units_st = st.lists(st.text(alphabet=ALPHABET, max_size=40), max_size=8)


def items(c: Counts) -> list[tuple[str, int]]:
    return list(c.items())


# -- the object -----------------------------------------------------------------------------


def test_counts_hold_what_was_counted_in_first_appearance_order() -> None:
    c = count(["b a b", "c a"], pattern=r"\S+|\s+")
    assert items(c) == [("b", 2), (" ", 3), ("a", 2), ("c", 1)]
    assert (len(c), c.total, c["a"], c.get("z"), "c" in c) == (4, 8, 2, 0, True)
    assert c.pattern == r"\S+|\s+"
    assert c.special_tokens == ()
    assert count("x", pattern="gpt2").pattern == PATTERNS["gpt2"]


@given(units_st, st.integers(0, 8), st.sampled_from(["gpt2", "gpt4", None]))
@settings(max_examples=examples(ci=200, local=40), deadline=None)
def test_the_counts_of_shards_add_up_to_the_counts_of_the_whole(
    units: list[str], cut: int, pattern: str | None
) -> None:
    """``count(a) + count(b) == count(a + b)``, order of first appearance included."""
    whole = count(units, pattern=pattern, special_tokens=["<>"])
    a = count(units[:cut], pattern=pattern, special_tokens=["<>"])
    b = count(units[cut:], pattern=pattern, special_tokens=["<>"])
    assert items(a + b) == items(whole)
    expected = count_pieces(
        bpeds.tokenizer.io.iter_segments(
            units, special_tokens=["<>"], pattern=PATTERNS.get(pattern or "", pattern)
        ),
        PATTERNS.get(pattern or "", pattern),
    )
    assert whole.as_dict() == expected


def test_adding_counts_made_differently_is_refused() -> None:
    a = count("a b", pattern="gpt2")
    with pytest.raises(ValueError, match="different split patterns: gpt2 and gpt4"):
        _ = a + count("a b", pattern="gpt4")
    with pytest.raises(ValueError, match="different special tokens"):
        _ = a + count("a b", pattern="gpt2", special_tokens=["<s>"])
    with pytest.raises(ValueError, match="at least one"):
        sum_counts([])


@pytest.mark.parametrize(
    ("pieces", "error", "match"),
    [
        ({"": 1}, ValueError, "non-empty str"),
        ({"a": 0}, ValueError, "int >= 1"),
        ({"a": True}, ValueError, "int >= 1"),
        ({"\ud800": 1}, ValueError, "lone surrogate"),
        ([("a", 1, 2)], TypeError, "pairs"),
    ],
)
def test_bad_pieces_are_refused(pieces: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Counts(pieces, pattern=None)


def test_equality_ignores_order_and_special_token_order() -> None:
    a = Counts({"x": 1, "y": 2}, pattern=None, special_tokens=["<a>", "<b>"])
    b = Counts({"y": 2, "x": 1}, pattern=None, special_tokens=["<b>", "<a>"])
    assert a == b
    assert items(a) != items(b)
    assert a != Counts({"x": 1, "y": 3}, pattern=None, special_tokens=["<a>", "<b>"])
    assert a != Counts({"x": 1, "y": 2}, pattern="gpt2", special_tokens=["<a>", "<b>"])


# -- train(counts) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "tie"),
    [
        ("frequency", "smallest_ids"),
        ("frequency", "leftmost"),
        ("frequency", "hf"),
        ("pmi", "smallest_ids"),
        ("length_weighted", "leftmost"),
        ("wordpiece", "hf"),
    ],
)
def test_training_on_counts_gives_the_merges_of_training_on_the_text(score: str, tie: str) -> None:
    options: dict[str, Any] = {"score": score, "tie": tie, "special_tokens": ["<|e|>"]}
    data = [u + "<|e|>" + u[:50] for u in UNITS]
    counts = count(data, special_tokens=["<|e|>"])
    from_text = train(data, 420, **options)
    from_counts = train(counts, 420, **options)
    assert from_counts.merges == from_text.merges
    assert from_counts.special_tokens == from_text.special_tokens
    assert from_counts.pattern == from_text.pattern
    assert from_counts.options == from_text.options


def test_training_on_added_shards_equals_training_on_the_corpus(tmp_path: Path) -> None:
    parts = []
    for i, unit in enumerate(UNITS):
        path = tmp_path / f"shard{i}.counts"
        count(unit).save(path)
        parts.append(Counts.load(path))
    for tie in ("leftmost", "smallest_ids"):
        assert train(sum_counts(parts), 400, tie=tie).merges == train(UNITS, 400, tie=tie).merges


@pytest.mark.parametrize("tie", ["smallest_ids", "leftmost"])
def test_a_run_stopped_and_continued_from_its_model_gives_the_same_merges(
    tmp_path: Path, tie: str
) -> None:
    """Counts plus continued training (base=...): a run saved after 80 merges and continued
    from the file, on the counts, gives the merges of one uninterrupted run."""
    counts = count(UNITS[:6])
    train(counts, 336, tie=tie).save(tmp_path / "stop.json")
    stopped = bpeds.Tokenizer.load(tmp_path / "stop.json")
    continued = train(counts, 450, tie=tie, base=stopped)
    assert continued.merges == train(UNITS[:6], 450, tie=tie).merges


def test_counts_of_groups_train_like_the_groups() -> None:
    groups = {"a": UNITS[:3], "b": UNITS[3:5]}
    counted = {name: count(part) for name, part in groups.items()}
    for score in ("group_frequency", "frequency"):
        assert train(counted, 330, score=score).merges == train(groups, 330, score=score).merges
    with pytest.raises(TypeError, match="every group or for none"):
        train({"a": counted["a"], "b": UNITS[3:5]}, 300)


def test_training_options_must_agree_with_how_the_counts_were_made() -> None:
    c = count(UNITS[0], pattern="gpt2", special_tokens=["<s>"])
    tok = train(c, 300)  # the counts' pattern and special tokens
    assert tok.pattern == PATTERNS["gpt2"]
    assert tok.special_tokens == {"<s>": 299}
    hf = train(UNITS[0], 300, preset="hf", special_tokens=["<s>"])
    assert train(c, 300, preset="hf").merges == hf.merges
    assert train(c, 300, special_tokens={"<s>": 5000}).special_tokens == {"<s>": 5000}
    with pytest.raises(ValueError, match="made with pattern gpt2: leave pattern out"):
        train(c, 300, pattern="gpt4")
    with pytest.raises(ValueError, match="preset 'rustbpe' splits with pattern gpt4"):
        train(c, 300, preset="rustbpe")
    with pytest.raises(ValueError, match="type mode only"):
        train(c, 300, representation="sequence")
    with pytest.raises(ValueError, match="type mode only"):
        train(count("ab", pattern="gpt4"), 300, preset="minbpe-regex")
    with pytest.raises(ValueError, match="texts cut out when counting"):
        train(c, 300, special_tokens=["<t>"])


# -- the file -------------------------------------------------------------------------------


def test_a_saved_file_loads_as_the_same_counts(tmp_path: Path) -> None:
    c = count([*UNITS, "ünïcödé 😀 " * 3], pattern="gpt4o", special_tokens=["<a>", "<b>"])
    path = c.save(tmp_path / "c.counts")
    back = Counts.load(path)
    assert items(back) == items(c)
    assert (back.pattern, back.special_tokens) == (c.pattern, c.special_tokens)
    empty = Counts({}, pattern=None)
    assert items(Counts.load(empty.save(tmp_path / "e.counts"))) == []
    assert path.stat().st_size < len(TEXT.encode()) // 2  # compressed, not one giant JSON


def test_saving_never_replaces_a_file_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "c.counts"
    path.write_bytes(b"keep")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        count("a").save(path)
    assert path.read_bytes() == b"keep"
    count("a").save(path, overwrite=True)
    assert items(Counts.load(path)) == [("a", 1)]
    with pytest.raises(FileNotFoundError):
        count("a").save(tmp_path / "no" / "c.counts")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.counts"]  # no temporary left


def test_blocks_split_a_large_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bpeds.tokenizer.counts, "BLOCK_TARGET", 200)
    c = count(UNITS)
    path = c.save(tmp_path / "c.counts")
    assert items(Counts.load(path)) == items(c)


def _valid_file(tmp_path: Path) -> bytes:
    path = count(UNITS[:2], special_tokens=["<s>"]).save(tmp_path / "ok.counts")
    return path.read_bytes()


def _load(tmp_path: Path, data: bytes) -> Counts:
    path = tmp_path / "x.counts"
    path.write_bytes(data)
    return Counts.load(path)


def test_every_truncation_is_refused_naming_the_file(tmp_path: Path) -> None:
    data = _valid_file(tmp_path)
    step = max(1, len(data) // examples(ci=400, local=100))
    for n in [*range(0, len(data), step), len(data) - 1]:
        with pytest.raises(CountsFormatError, match=r"x\.counts: "):
            _load(tmp_path, data[:n])


def test_every_flipped_byte_is_caught(tmp_path: Path) -> None:
    data = _valid_file(tmp_path)
    step = max(1, len(data) // examples(ci=400, local=100))
    for i in range(0, len(data), step):
        bad = bytearray(data)
        bad[i] ^= 0x41
        with pytest.raises(CountsFormatError):
            _load(tmp_path, bytes(bad))
    with pytest.raises(CountsFormatError, match="after the checksum"):
        _load(tmp_path, data + b"\0")


def _forge(header: dict[str, Any] | bytes, blocks: list[bytes], version: int = 1) -> bytes:
    """A file with a correct checksum around whatever header and blocks are given."""
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    body = MAGIC + struct.pack("<II", version, len(head)) + head
    for raw in blocks:
        packed = zlib.compress(raw)
        body += struct.pack("<II", len(raw), len(packed)) + packed
    body += struct.pack("<II", 0, 0)
    return body + hashlib.sha256(body).digest()


def _raw_block(pieces: list[tuple[str, int]], lengths: list[int] | None = None) -> bytes:
    n = len(pieces)
    lens = lengths if lengths is not None else [len(p) for p, _ in pieces]
    return (
        struct.pack("<I", n)
        + struct.pack(f"<{n}I", *lens)
        + struct.pack(f"<{n}Q", *(c for _, c in pieces))
        + "".join(p for p, _ in pieces).encode()
    )


HEAD: dict[str, Any] = {"pattern": None, "special_tokens": [], "pieces": 2, "total": 3}


@pytest.mark.parametrize(
    ("header", "blocks", "version", "match"),
    [
        (HEAD, [_raw_block([("a", 1), ("b", 2)])], 2, "version 2 is not supported"),
        (b"{", [], 1, "not valid JSON"),
        (b"[]", [], 1, "JSON object with the keys"),
        ({**HEAD, "extra": 1}, [], 1, "JSON object with the keys"),
        ({**HEAD, "pattern": "(a)"}, [], 1, "capturing group"),
        ({**HEAD, "pieces": -1}, [], 1, "pieces must be an int"),
        ({**HEAD, "special_tokens": [""]}, [], 1, "special_tokens must be"),
        (HEAD, [_raw_block([("a", 1), ("a", 2)])], 1, "'a' appears more than once"),
        (HEAD, [_raw_block([("a", 1), ("b", 0)])], 1, "a count of 0"),
        (HEAD, [_raw_block([("a", 1), ("b", 2)], [2, 0])], 1, "an empty piece"),
        (HEAD, [_raw_block([("a", 1), ("b", 2)], [1, 5])], 1, "do not add up"),
        (HEAD, [_raw_block([("a", 1)])], 1, "the header says 2 pieces"),
        ({**HEAD, "total": 4}, [_raw_block([("a", 1), ("b", 2)])], 1, r"\(3 in all\)"),
        (HEAD, [struct.pack("<I", 1 << 30)], 1, "which its size cannot hold"),
        (HEAD, [_raw_block([("a", 1)])[:-1] + b"\xff"], 1, "not valid UTF-8"),
    ],
)
def test_forged_files_with_a_good_checksum_are_still_refused(
    tmp_path: Path, header: Any, blocks: list[bytes], version: int, match: str
) -> None:
    with pytest.raises(CountsFormatError, match=match):
        _load(tmp_path, _forge(header, blocks, version))


def test_declared_sizes_are_bounded_before_anything_is_allocated(tmp_path: Path) -> None:
    huge_header = MAGIC + struct.pack("<II", 1, 1 << 31)
    with pytest.raises(CountsFormatError, match="header claims"):
        _load(tmp_path, huge_header)
    head = json.dumps(HEAD).encode()
    start = MAGIC + struct.pack("<II", 1, len(head)) + head
    with pytest.raises(CountsFormatError, match="impossible lengths"):
        _load(tmp_path, start + struct.pack("<II", 1 << 31, 10))
    # A block that inflates past its declared size is cut off at that size and refused.
    bomb = zlib.compress(b"\0" * 100_000)
    with pytest.raises(CountsFormatError, match="declared 16 bytes"):
        _load(tmp_path, start + struct.pack("<II", 16, len(bomb)) + bomb)
    with pytest.raises(CountsFormatError, match="not a bpeds counts file"):
        _load(tmp_path, b'{"format": "bpeds"}')


# -- where counting runs --------------------------------------------------------------------


def test_an_executor_counts_as_locally(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text(TEXT[:40000], encoding="utf-8")
    data: list[Any] = [*UNITS[:4], path, UNITS[5], path]
    local = count(data)
    with ProcessPoolExecutor(2) as ex:
        assert items(count(data, executor=ex)) == items(local)
    with ThreadPoolExecutor(3) as ex:
        assert items(count(data, executor=ex)) == items(local)
    assert items(count(data, workers=2)) == items(local)


def test_an_executor_names_the_item_as_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bpeds.tokenizer.pieces, "BATCH_CHARS", 10)
    data = ["aaaa", "bbbb", "cccc", "dd\ud800d", "e"]
    with pytest.raises(InvalidTextError) as local:
        count(data)
    with ThreadPoolExecutor(2) as ex, pytest.raises(InvalidTextError) as remote:
        count(data, executor=ex)
    assert str(remote.value) == str(local.value)
    assert remote.value.source == local.value.source == 3


def test_executor_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="not both"), ThreadPoolExecutor(1) as ex:
        count("a", workers=2, executor=ex)
    with pytest.raises(TypeError, match=r"concurrent\.futures\.Executor"):
        count("a", executor=object())
    with pytest.raises(TypeError, match="train on"):
        count({"g": "a"})
    with pytest.raises(ValueError, match="workers must be"):
        count("a", workers=0)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_files_count_as_their_text(tmp_path: Path, suffix: str) -> None:
    opener: Any = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix]
    path = tmp_path / f"t.txt{suffix}"
    with opener(path, "wb") as f:
        f.write(TEXT[:30000].encode())
    assert items(count(path, block_size=4096)) == items(count(TEXT[:30000]))


def test_zstd_files_count_as_their_text(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "t.txt.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(TEXT[:30000].encode()))
    assert items(count(path, block_size=4096)) == items(count(TEXT[:30000]))


def test_zstd_without_zstandard_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "zstandard", None)  # import fails
    path = tmp_path / "t.txt.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(ImportError, match=r"pip install 'bpeds\[zstd\]'"):
        count(path)


def test_parquet_text_columns_count_row_by_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [*UNITS[:3], None, "", "a row<s>with a special token"]
    pq.write_table(pa.table({"id": list(range(6)), "text": rows}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"content": UNITS[3:5]}), tmp_path / "b.parquet")
    files = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    texts = [r for r in rows if r] + UNITS[3:5]  # each row one unit
    expected = count(texts, special_tokens=["<s>"])
    assert items(count(files, special_tokens=["<s>"])) == items(expected)
    with ThreadPoolExecutor(2) as ex:
        assert items(count(files, special_tokens=["<s>"], executor=ex)) == items(expected)
    assert train(files, 300).merges == train(texts, 300).merges
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "c.parquet")
    with pytest.raises(ValueError, match=r"c\.parquet: no text column.*\['body'\]"):
        count(tmp_path / "c.parquet")
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "d.parquet")
    with pytest.raises(ValueError, match=r"d\.parquet: column 'text' holds int64"):
        count(tmp_path / "d.parquet")
    (tmp_path / "e.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match=r"e\.parquet: not a readable Parquet file"):
        count(tmp_path / "e.parquet")


# -- the command line -----------------------------------------------------------------------


def test_count_then_train_from_counts_writes_the_model_of_the_text(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(UNITS[0], encoding="utf-8")
    b.write_text(UNITS[1] + "<s>" + UNITS[2], encoding="utf-8")
    sp = ["--special-token", "<s>"]
    assert main(["count", str(a), str(b), "-o", str(tmp_path / "ab.counts"), "-q", *sp]) == 0
    assert main(["count", str(a), "-o", str(tmp_path / "a.counts"), "-q", *sp]) == 0
    assert main(["count", str(b), "-o", str(tmp_path / "b.counts"), "-q", *sp]) == 0
    added = ["--add", str(tmp_path / "a.counts"), "--add", str(tmp_path / "b.counts")]
    assert main(["count", *added, "-o", str(tmp_path / "sum.counts"), "-q"]) == 0
    glob = str(tmp_path / "*.txt")
    assert main(["count", glob, "-o", str(tmp_path / "g.counts"), "-q", *sp]) == 0
    for name in ("sum", "g"):
        assert (tmp_path / f"{name}.counts").read_bytes() == (tmp_path / "ab.counts").read_bytes()
    common = ["--vocab-size", "330", "--tie", "leftmost", "-q"]
    assert main(["train", str(a), str(b), *sp, "-o", str(tmp_path / "t.json"), *common]) == 0
    counts = ["--counts", str(tmp_path / "ab.counts")]
    assert main(["train", *counts, "-o", str(tmp_path / "c.json"), *common]) == 0
    assert (tmp_path / "c.json").read_bytes() == (tmp_path / "t.json").read_bytes()


def test_count_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.txt"
    a.write_text("x y", encoding="utf-8")
    out = str(tmp_path / "a.counts")
    assert main(["count", "-o", out]) == 2
    assert main(["count", str(a), "-o", out, "-q"]) == 0
    assert main(["count", str(a), "-o", out]) == 1  # exists, no --force
    assert "--force" in capsys.readouterr().err
    assert main(["count", str(tmp_path / "*.none"), "-o", out + "2"]) == 1
    assert "no file matches" in capsys.readouterr().err
    (tmp_path / "bad.counts").write_bytes(b"not counts")
    assert (
        main(
            [
                "train",
                "--counts",
                str(tmp_path / "bad.counts"),
                "--vocab-size",
                "300",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 1
    )
    assert "bad.counts: not a bpeds counts file" in capsys.readouterr().err
    assert (
        main(
            [
                "train",
                "--counts",
                out,
                str(a),
                "--vocab-size",
                "300",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "train",
                "--counts",
                out,
                "--pattern",
                "gpt2",
                "--vocab-size",
                "300",
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
        == 2
    )
    assert "leave pattern out" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_bytes(b"ok \xff")
    assert main(["count", str(tmp_path / "bad.txt"), "-o", str(tmp_path / "b.counts")]) == 1
    assert "bad.txt: invalid UTF-8 at byte offset 3" in capsys.readouterr().err


# -- bounded memory ---------------------------------------------------------------------------

parts_st = st.lists(
    st.dictionaries(st.text(alphabet="abcé😀 ", min_size=1, max_size=4), st.integers(1, 5)),
    max_size=12,
)


@given(parts_st, st.integers(130, 2000))
@settings(max_examples=examples(ci=80, local=20), deadline=None)
def test_spilling_gives_the_unbounded_table_and_file(
    parts: list[dict[str, int]], budget: int
) -> None:
    """Against the reference: one dict, added into in order (first appearance kept)."""
    reference: dict[str, int] = {}
    for part in parts:
        for k, v in part.items():
            reference[k] = reference.get(k, 0) + v
    expected = Counts(reference, pattern=None, special_tokens=["<s>"])
    with SpillCounter(budget) as sc:
        for part in parts:
            sc.add(part)
        assert items(sc.counts(None, ("<s>",))) == items(expected)
    with tempfile.TemporaryDirectory() as d, SpillCounter(budget, d) as sc:
        for part in parts:
            sc.add(part)
        assert sc.save(Path(d) / "s.counts", None, ("<s>",)) == (len(expected), expected.total)
        header: dict[str, Any] = {"pattern": None, "special_tokens": ["<s>"]}
        header |= {"pieces": len(expected), "total": expected.total}
        rendered = b"".join(_render(header, expected.items()))  # what expected.save writes
        assert (Path(d) / "s.counts").read_bytes() == rendered
        for minimum in (2, 4):
            with SpillCounter(budget) as again:
                for part in parts:
                    again.add(part)
                got = again.counts(None, ("<s>",), min_count=minimum)
            assert items(got) == [(p, n) for p, n in reference.items() if n >= minimum]


def test_a_memory_budget_changes_nothing_but_memory(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    whole = count(UNITS)
    with ThreadPoolExecutor(2) as ex:
        bounded = count(UNITS, max_memory=50_000, spill_dir=spill, executor=ex)
    assert items(bounded) == items(whole)
    assert items(count(UNITS, max_memory=50_000, workers=2)) == items(whole)
    assert count_to_file(UNITS, tmp_path / "b.counts", max_memory=50_000, spill_dir=spill) == (
        len(whole),
        whole.total,
    )
    assert (tmp_path / "b.counts").read_bytes() == whole.save(tmp_path / "w.counts").read_bytes()
    assert list(spill.iterdir()) == []  # the runs are gone
    kept = count(UNITS, min_count=3)
    assert items(kept) == [(p, n) for p, n in whole.items() if n >= 3]
    with pytest.raises(ValueError, match="max_memory must be"):
        count(UNITS, max_memory=0)
    with pytest.raises(FileExistsError):
        count_to_file(UNITS, tmp_path / "b.counts")


def test_the_count_command_under_a_budget(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "a.counts"
    assert main(["count", str(a), "-o", str(out), "--max-memory", "1M", "-q"]) == 0
    assert out.read_bytes() == count(a).save(tmp_path / "ref.counts").read_bytes()
    assert main(["count", str(a), "-o", str(tmp_path / "m"), "--max-memory", "12", "-q"]) == 2
    assert main(["count", str(a), "-o", str(tmp_path / "m"), "--min-count", "2", "-q"]) == 0
    assert Counts.load(tmp_path / "m") == Counts(
        {p: n for p, n in count(a).items() if n >= 2}, pattern="gpt4"
    )


# -- resuming ---------------------------------------------------------------------------------


def test_an_interrupted_count_resumes_without_recounting_finished_files(tmp_path: Path) -> None:
    files = []
    for i, unit in enumerate(UNITS[:5]):
        path = tmp_path / f"f{i}.txt"
        path.write_text(unit, encoding="utf-8")
        files.append(path)
    files[3].write_bytes(b"broken \xff")
    parts = tmp_path / "parts"
    parts.mkdir()
    seen: list[tuple[str, bool]] = []

    def on_file(path: Path, size: int, skipped: bool) -> None:
        assert size == path.stat().st_size
        seen.append((path.name, skipped))

    out = tmp_path / "out.counts"
    with pytest.raises(InvalidTextError, match=r"f3\.txt"):
        count_to_file(files, out, resume_dir=parts, on_file=on_file)
    assert seen == [("f0.txt", False), ("f1.txt", False), ("f2.txt", False)]
    assert len(list(parts.iterdir())) == 3
    assert not out.exists()
    files[3].write_text(UNITS[3], encoding="utf-8")  # fixed
    seen.clear()
    with ThreadPoolExecutor(2) as ex:
        got = count_to_file(files, out, resume_dir=parts, on_file=on_file, executor=ex)
    assert sorted(seen[:3]) == [("f0.txt", True), ("f1.txt", True), ("f2.txt", True)]
    assert sorted(seen[3:]) == [("f3.txt", False), ("f4.txt", False)]
    whole = count(files)
    assert got == (len(whole), whole.total)
    assert items(Counts.load(out)) == items(whole)
    assert list(parts.iterdir()) == []  # the parts are gone once the output is written
    with pytest.raises(TypeError, match="paths only"):
        count_to_file(["text"], tmp_path / "t.counts", resume_dir=parts)


def test_a_part_counted_another_way_is_not_reused(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text(UNITS[0], encoding="utf-8")
    parts = tmp_path / "parts"
    parts.mkdir()
    count(path).save(parts / "stray.counts")  # a file of another name is ignored
    count_to_file([path], tmp_path / "a.counts", resume_dir=parts, pattern="gpt2")
    assert Counts.load(tmp_path / "a.counts") == count(path, pattern="gpt2")
    assert [p.name for p in parts.iterdir()] == ["stray.counts"]


def test_the_count_command_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(UNITS[0], encoding="utf-8")
    b.write_bytes(b"\xff")
    argv = ["count", str(a), str(b), "-o", str(tmp_path / "o.counts")]
    assert main([*argv, "--resume", str(tmp_path / "parts")]) == 1
    b.write_text(UNITS[1], encoding="utf-8")
    capsys.readouterr()
    assert main([*argv, "--resume", str(tmp_path / "parts")]) == 0
    err = capsys.readouterr().err
    assert "2/2 files" in err
    assert "done before" in err
    assert Counts.load(tmp_path / "o.counts") == count([a, b])


# -- defaults that use the machine ---------------------------------------------------------------


def test_the_default_uses_the_cores_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(bpeds.tokenizer.pieces, "_cgroup_quota", lambda: None)
    assert bpeds.tokenizer.pieces.available_cores() == 4
    # A container's --cpus 1.5:
    monkeypatch.setattr(bpeds.tokenizer.pieces, "_cgroup_quota", lambda: 2)
    assert bpeds.tokenizer.pieces.available_cores() == 2
    used: list[int] = []

    def batches(
        texts: Any, pattern: Any, sequence: bool, workers: int, size: int, *rest: Any
    ) -> Any:
        used.append(workers)
        return original(texts, pattern, sequence, workers, size, *rest)

    original = bpeds.tokenizer.pieces.batch_results
    monkeypatch.setattr(bpeds.tokenizer.pieces, "batch_results", batches)
    train(UNITS[0], 300)
    count(UNITS[0])
    train(UNITS[0], 300, workers=1)
    assert used == [2, 2, 1]


def test_one_batch_of_text_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(bpeds.tokenizer.pieces, "ProcessPoolExecutor", refuse)
    assert items(count(UNITS, workers=4)) == items(count(UNITS, workers=1))
    monkeypatch.setattr(bpeds.tokenizer.pieces, "BATCH_CHARS", 10_000)
    with pytest.raises(AssertionError, match="process pool"):
        count(UNITS, workers=2)


def test_the_count_command_reports_progress_across_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = []
    for i in range(3):
        path = tmp_path / f"f{i}.txt"
        path.write_text(UNITS[i], encoding="utf-8")
        names.append(str(path))
    assert main(["count", *names, "-o", str(tmp_path / "o.counts")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"3/3 files, [\d.]+ of [\d.]+ MB, [\d.]+ MB/s, about \d+ s left", err)
    assert Counts.load(tmp_path / "o.counts") == count([Path(n) for n in names])
    assert main(["count", *names, "-o", str(tmp_path / "q.counts"), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_count_reports_the_bytes_it_reads(tmp_path: Path) -> None:
    from tests.test_training import StagedRecorder

    path = tmp_path / "t.txt"
    path.write_text("low lower lowest " * 200, encoding="utf-8")
    rec = StagedRecorder()
    bpeds.count(path, progress=rec, workers=1)
    size = path.stat().st_size
    assert rec.events[0] == ("stage reading (B)", size)
    assert sum(n for e, n in rec.events if e == "update") == size
    assert rec.events[-1] == ("close", 0)
