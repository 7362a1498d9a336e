"""Counts files and resume directories that are not what they claim: headers that are not
JSON a writer makes, blocks that inflate, parts of another run, runs that share a directory."""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpeds.tokenizer.counts import FORMAT_VERSION, MAGIC, MAX_BLOCK, Counts, CountsFormatError
from tests.test_hostile_limits import needs_rlimit, run_capped


def counts_file(path: Path, header: str, blocks: Iterator[bytes] | None = None) -> Path:
    """A counts file with this raw JSON ``header`` and the framed ``blocks`` (default one
    block holding "ab" once), checksummed as bpeds writes it."""
    digest = hashlib.sha256()
    with path.open("wb") as f:

        def out(chunk: bytes) -> None:
            digest.update(chunk)
            f.write(chunk)

        head = header.encode("utf-8", "surrogatepass")
        out(MAGIC + struct.pack("<II", FORMAT_VERSION, len(head)) + head)
        for block in blocks if blocks is not None else iter([_block(["ab"])]):
            out(block)
        out(struct.pack("<II", 0, 0))
        f.write(digest.digest())
    return path


def _block(pieces: list[str]) -> bytes:
    text = "".join(pieces).encode()
    raw = struct.pack(
        f"<I{len(pieces)}I{len(pieces)}Q", len(pieces), *map(len, pieces), *[1] * len(pieces)
    )
    packed = zlib.compress(raw + text)
    return struct.pack("<II", len(raw) + len(text), len(packed)) + packed


def header(**fields: object) -> str:
    head: dict[str, object] = {"pattern": None, "special_tokens": [], "pieces": 1, "total": 1}
    head.update(fields)
    return json.dumps(head)


# -- headers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (header()[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"pattern": null, ' + header()[1:], "given twice"),
        (header(special_tokens="<s>"), "list of non-empty strings"),
        (header(special_tokens=["\ud800"]), "lone surrogate"),
        (header(special_tokens=["<a|", "|b>"]), "overlap"),
        (header(pattern="\udfff+"), "lone surrogate"),
    ],
    ids=["deep", "duplicate-key", "string-specials", "surrogate", "overlap", "surrogate-pattern"],
)
def test_a_header_no_writer_makes_is_refused_in_one_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = counts_file(tmp_path / "h.counts", text)
    with pytest.raises(CountsFormatError, match=message):
        Counts.load(path)


def test_counts_refuse_special_tokens_a_tokenizer_would_refuse() -> None:
    with pytest.raises(ValueError, match="overlap"):
        Counts({"a": 1}, pattern=None, special_tokens=["<a|", "|b>"])
    with pytest.raises(ValueError, match="lone surrogate"):
        Counts({"a": 1}, pattern=None, special_tokens=["\ud800"])


# -- blocks that inflate -------------------------------------------------------------------------


def _inflating_blocks(n: int) -> Iterator[bytes]:
    """``n`` blocks, each one piece of about MAX_BLOCK bytes of one letter (a distinct
    length each): about 64 KiB compressed, a thousand times more decompressed."""
    for k in range(n):
        length = MAX_BLOCK - 16 - k
        head = struct.pack("<IIQ", 1, length, 1)
        z = zlib.compressobj(9)
        chunks = [z.compress(head)]
        chunk = b"a" * (1 << 20)
        left = length
        while left:
            chunks.append(z.compress(chunk[: min(left, len(chunk))]))
            left -= min(left, len(chunk))
        chunks.append(z.flush())
        packed = b"".join(chunks)
        yield struct.pack("<II", len(head) + length, len(packed)) + packed


@needs_rlimit
def test_blocks_that_inflate_far_beyond_the_files_size_are_refused(tmp_path: Path) -> None:
    path = counts_file(tmp_path / "bomb.counts", header(pieces=6, total=6), _inflating_blocks(6))
    assert path.stat().st_size < 1 << 20  # 384 MiB of pieces from under 1 MiB
    out = run_capped(
        f"""
        from bpeds.tokenizer.counts import Counts, CountsFormatError
        try:
            Counts.load({str(path)!r})
        except CountsFormatError as exc:
            assert "MAX_INFLATION" in str(exc), exc
            print("refused")
        """,
        memory=400 << 20,
    )
    assert out.split() == ["refused"], out


def test_files_bpeds_writes_are_far_inside_the_inflation_bound(tmp_path: Path) -> None:
    runs = Counts({"a" * n: 1 for n in range(1, 3000)}, pattern=None)  # ~450x, 4.5 MB
    runs.save(tmp_path / "runs.counts")
    assert Counts.load(tmp_path / "runs.counts") == runs
