"""bpeds JSON files: round trips, atomic no-overwrite saves, and hostile input."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import save_hf, save_minbpe, save_tiktoken
from bpeds.tokenizer.persist import ModelFormatError, dumps, load, loads, save
from bpeds.tokenizer.training import train
from tests.budget import examples

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")[:20000]


def trained() -> Tokenizer:
    return train(TEXT, 256 + 200 + 2, pattern="gpt2", special_tokens=["<|endoftext|>", "<|ünï|>"])


def test_round_trip_keeps_everything_and_encodes_the_same(tmp_path: Path) -> None:
    tok = trained()
    path = tmp_path / "tok.json"
    tok.save(path)
    back = Tokenizer.load(path)
    assert back == tok
    assert back.options == tok.options
    assert back.options["tie"] == {"name": "smallest_ids"}
    sample = TEXT[:3000] + "<|endoftext|> <|ünï|>"
    assert back.encode(sample, allowed_special="all") == tok.encode(sample, allowed_special="all")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "bpeds"
    assert doc["version"] == 1
    assert doc["merges"][:2] == [list(p) for p in tok.merges[:2]]
    assert doc["special_tokens"] == {"<|endoftext|>": 456, "<|ünï|>": 457}
    for p in (None, "gpt4", r"\w+|\s+|[^\w\s]+"):
        t = Tokenizer([(97, 98)], pattern=p)
        assert loads(dumps(t)) == t


def test_save_refuses_to_overwrite_and_is_atomic(tmp_path: Path) -> None:
    tok = trained()
    path = tmp_path / "tok.json"
    path.write_text("precious", encoding="utf-8")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tok.save(path)
    assert path.read_text(encoding="utf-8") == "precious"
    tok.save(path, overwrite=True)
    assert load(path) == tok
    assert sorted(os.listdir(tmp_path)) == ["tok.json"]  # no temporary file left behind
    other = Tokenizer([(97, 98)])
    save(other, str(tmp_path / "b.json"))
    assert load(tmp_path / "b.json") == other
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "b.json").st_mode) == 0o666 & ~umask


def _save_bpeds(tok: Tokenizer, path: Path, overwrite: bool) -> None:
    save(tok, path, overwrite=overwrite)


def _save_minbpe(tok: Tokenizer, path: Path, overwrite: bool) -> None:
    save_minbpe(tok, path.with_suffix(""), overwrite=overwrite)


def _save_hf(tok: Tokenizer, path: Path, overwrite: bool) -> None:
    save_hf(tok, path, overwrite=overwrite)


def _save_tiktoken(tok: Tokenizer, path: Path, overwrite: bool) -> None:
    save_tiktoken(tok, path, overwrite=overwrite)


@pytest.mark.parametrize(
    ("writer", "name"),
    [
        (_save_bpeds, "t.json"),
        (_save_minbpe, "t.model"),
        (_save_hf, "tokenizer.json"),
        (_save_tiktoken, "t.tiktoken"),
    ],
)
def test_every_writer_follows_one_file_mode_rule(
    tmp_path: Path, writer: Callable[[Tokenizer, Path, bool], None], name: str
) -> None:
    """New files: 0o666 minus the umask; a replaced file keeps its mode."""
    tok = Tokenizer([(97, 98)])
    path = tmp_path / name
    saved = os.umask(0o027)
    try:
        writer(tok, path, False)
    finally:
        os.umask(saved)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o604)
    writer(tok, path, True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    with pytest.raises(FileExistsError, match="overwrite=True"):
        writer(tok, path, False)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_failed_save_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError):
        trained().save(tmp_path / "missing-dir" / "tok.json")
    assert os.listdir(tmp_path) == []
    path = tmp_path / "tok.json"
    path.write_text("old", encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", full)
    for overwrite in (True, False):
        with pytest.raises(OSError, match="disk full"):
            trained().save(tmp_path / "new.json", overwrite=overwrite)
        with pytest.raises(OSError, match="disk full"):
            trained().save(path, overwrite=True)
    assert os.listdir(tmp_path) == ["tok.json"]
    assert path.read_text(encoding="utf-8") == "old"


def test_symlink_is_not_followed_for_overwrite_check(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep", encoding="utf-8")
    link = tmp_path / "tok.json"
    link.symlink_to(target)
    with pytest.raises(FileExistsError):
        trained().save(link)
    assert target.read_text(encoding="utf-8") == "keep"


VALID = json.loads(dumps(Tokenizer([(97, 98), (256, 99)], special_tokens={"<s>": 300})))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"format": "tiktoken"}, '"format" must be'),
        ({"version": 3}, "newer bpeds"),
        ({"version": 2}, r"missing key\(s\) \[.events.\]"),
        ({"version": 0}, "invalid"),
        ({"version": "1"}, "must be an integer"),
        ({"version": True}, "must be an integer"),
        ({"merges": [[97, 98], [258, 1]]}, "merge 1 .* only use ids 0..256"),
        ({"merges": [[97, 98], [-1, 1]]}, "merge 1"),
        ({"merges": [[97, 10**30]]}, "merge 0"),
        ({"merges": [[97, 98.0]]}, "two integer ids"),
        ({"merges": [[97, True]]}, "two integer ids"),
        ({"merges": [[97]]}, "two integer ids"),
        ({"merges": {"0": [97, 98]}}, "must be an array"),
        ({"special_tokens": {"<s>": 256}}, "belongs to a merge token"),
        ({"special_tokens": {"<s>": "300"}}, "integer id"),
        ({"special_tokens": {"": 300}}, "empty"),
        ({"special_tokens": [["<s>", 300]]}, "must be an object"),
        ({"pattern": "(unclosed"}, "does not compile"),
        ({"pattern": 5}, "string or null"),
        ({"options": []}, "must be an object"),
        ({"extra": 1}, "unknown key"),
    ],
)
def test_invalid_documents_are_refused_clearly(change: dict[str, Any], match: str) -> None:
    doc = VALID | change
    with pytest.raises(ModelFormatError, match=match):
        loads(json.dumps(doc), source="m.json")


def test_missing_keys_and_bad_json_are_refused(tmp_path: Path) -> None:
    for key in ("pattern", "special_tokens", "options", "merges"):
        doc = {k: v for k, v in VALID.items() if k != key}
        with pytest.raises(ModelFormatError, match=f"missing key.*{key}"):
            loads(json.dumps(doc))
    bad: dict[str, str | bytes] = {
        "dup.json": '{"format": "bpeds", "format": "bpeds"}',
        "nan.json": json.dumps(VALID).replace('"options": {}', '"options": {"a": NaN}'),
        "deep.json": "[" * 100000 + "]" * 100000,
        "list.json": "[1, 2]",
        "huge.json": '{"format": "bpeds", "version": ' + "9" * 5000 + "}",
        "bytes.json": b'{"format": "bpeds\xff"}',
        "empty.json": "",
    }
    for name, text in bad.items():
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ModelFormatError, match=name):
            load(path)


def test_every_truncation_is_refused() -> None:
    text = dumps(Tokenizer([(97, 98), (256, 99), (1, 2)], special_tokens={"<s>": 300}))
    for cut in range(len(text) - 1):
        if text[:cut].strip().endswith("}"):
            continue  # pragma: no cover - only the full text ends with the closing brace
        with pytest.raises(ModelFormatError):
            loads(text[:cut])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(ci=300, local=100), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_documents_load_or_fail_cleanly(data: st.DataObject) -> None:
    """Any mutation of a valid file either loads to a valid tokenizer or raises
    ModelFormatError: never another exception."""
    doc: dict[str, Any] = json.loads(json.dumps(VALID))
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["replace", "delete", "merge", "special", "bytes"]))
        key = data.draw(st.sampled_from(sorted(doc) or ["format"]))
        if kind == "replace":
            doc[key] = data.draw(json_values)
        elif kind == "delete":
            doc.pop(key, None)
        elif kind == "merge" and isinstance(doc.get("merges"), list) and doc["merges"]:
            i = data.draw(st.integers(0, len(doc["merges"]) - 1))
            doc["merges"][i] = data.draw(json_values)
        elif kind == "special":
            doc["special_tokens"] = data.draw(
                st.dictionaries(st.text(max_size=4), st.integers(-5, 400), max_size=3)
            )
    text = json.dumps(doc)
    if data.draw(st.booleans()):
        raw = bytearray(text.encode())
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
        blob: str | bytes = bytes(raw)
    else:
        blob = text
    try:
        tok = loads(blob)
    except ModelFormatError:
        return
    # Whatever loads is a fully valid tokenizer that round-trips.
    assert loads(dumps(tok)) == tok
    tok.decode(tok.encode("abc<s>", allowed_special="all", disallowed_special=()))
