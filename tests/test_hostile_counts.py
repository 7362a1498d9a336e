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

from bpeds.tokenizer.counting import count, count_to_file
from bpeds.tokenizer.counts import (
    FORMAT_VERSION,
    MAGIC,
    MAX_BLOCK,
    Counts,
    CountsFormatError,
    SpillCounter,
)
from tests.budget import FULL
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
        ('{"pattern": null, ' + header()[1:], "appears twice"),
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


# -- resume directories --------------------------------------------------------------------------

TEXTS = ["the cat sat on the mat", "a dog, a cat and a bird", "1 2 3 go!", "the end of it"]


def _files(tmp_path: Path) -> list[Path]:
    out = []
    for i, text in enumerate(TEXTS):
        path = tmp_path / f"f{i}.txt"
        path.write_text(text * 50, encoding="utf-8")
        out.append(path)
    return out


class _StopError(Exception):
    pass


def _interrupted(files: list[Path], parts: Path, after: int, pattern: str = "gpt4") -> list[Path]:
    """Count with ``resume_dir=parts``, stopping once ``after`` files are done; the parts
    written, in the files' order."""
    seen: list[Path] = []

    def on_file(path: Path, size: int, skipped: bool) -> None:
        seen.append(path)
        if len(seen) == after:
            raise _StopError

    before = set(parts.iterdir())
    with pytest.raises(_StopError):
        count_to_file(
            files, parts.parent / "never.counts", resume_dir=parts, on_file=on_file, pattern=pattern
        )
    made = set(parts.iterdir()) - before
    assert len(made) == after
    return sorted(made, key=lambda p: p.stat().st_mtime_ns)


@pytest.mark.parametrize("damage", ["empty", "truncated", "flipped"])
def test_a_damaged_part_is_counted_again(tmp_path: Path, damage: str) -> None:
    files = _files(tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    (part,) = _interrupted(files, parts, 1)
    data = part.read_bytes()
    part.write_bytes(
        {"empty": b"", "truncated": data[: len(data) // 2], "flipped": data[:-40] + b"x" * 40}[
            damage
        ]
    )
    out = tmp_path / "out.counts"
    count_to_file(files, out, resume_dir=parts)
    assert Counts.load(out) == count(files)
    assert list(parts.iterdir()) == []


def test_a_part_made_with_another_pattern_is_counted_again(tmp_path: Path) -> None:
    files = _files(tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    (ours,) = _interrupted(files, parts, 1, pattern="gpt4")
    (theirs,) = _interrupted(files, parts, 1, pattern=r"\S+|\s+")
    theirs.replace(ours)  # another run's counts under this run's name
    out = tmp_path / "out.counts"
    count_to_file(files, out, resume_dir=parts, pattern="gpt4")
    assert Counts.load(out) == count(files, pattern="gpt4")  # counts and label


def test_two_runs_sharing_a_resume_directory_both_finish(tmp_path: Path) -> None:
    files = _files(tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    first, second = tmp_path / "a.counts", tmp_path / "b.counts"

    def on_file(path: Path, size: int, skipped: bool) -> None:
        if path == files[-1]:  # every part is written: the other run finishes first
            count_to_file(files, second, resume_dir=parts)
            assert list(parts.iterdir()) == []

    count_to_file(files, first, resume_dir=parts, on_file=on_file)
    whole = count(files)
    assert Counts.load(first) == whole
    assert Counts.load(second) == whole


def _word(i: int) -> str:
    """A distinct word of letters for each ``i`` (a split pattern keeps it whole)."""
    out = "w"
    while i:
        i, r = divmod(i, 26)
        out += chr(97 + r)
    return out


def test_resuming_keeps_to_the_memory_budget(tmp_path: Path) -> None:
    """Each file's part is counted under ``max_memory`` and the parts are added a block at a
    time: the spill counters spill, never holding a file's table whole."""
    from bpeds.tokenizer import counting

    big = tmp_path / "big.txt"
    big.write_text(" ".join(map(_word, range(60_000))), encoding="utf-8")
    files = [big, *_files(tmp_path)]
    parts = tmp_path / "parts"
    parts.mkdir()
    spills: list[int] = []  # spills of each counter, in the order they were made
    real = SpillCounter

    class Spying(real):  # type: ignore[misc, valid-type]
        def __enter__(self) -> Spying:
            self.at = len(spills)
            spills.append(0)
            return self

        def _spill(self) -> None:
            spills[self.at] += 1
            super()._spill()

    out = tmp_path / "out.counts"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(counting, "SpillCounter", Spying)
        count_to_file(files, out, resume_dir=parts, max_memory=1 << 20)
    assert Counts.load(out) == count(files)
    # The output's counter, then the big file's part's: both spilled under the budget.
    assert spills[0] > 1
    assert spills[1] > 1


@needs_rlimit
@pytest.mark.skipif(not FULL, reason="counts 3 MB of distinct words twice: CI budget")
def test_count_resume_honours_max_memory_on_the_command_line(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text(" ".join(map(_word, range(400_000))), encoding="utf-8")  # 3 MB
    peaks = []
    for resume in ([], ["--resume", str(tmp_path / "parts")]):
        out = run_capped(
            f"""
            import resource, sys
            from bpeds.cli import main
            code = main(["count", {str(big)!r}, "-o", {str(tmp_path / "o.counts")!r},
                         "--force", "--max-memory", "16M", "--workers", "1", "-q", *{resume!r}])
            print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
            """,
            memory=2 << 30,
            timeout=300,
        )
        code, peak = out.split()[-2:]
        assert code == "0", out
        peaks.append(int(peak))
    # The table alone takes over 60 MB; under the budget, with or without --resume, far less.
    assert peaks[1] < peaks[0] + 25, peaks
