"""Training input that is not what it seems: compressed files cut short or corrupt, and
devices that never end. Each is an error naming the file, never shorter text read as if
whole, a traceback at the command line or a run that never ends."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

import bpeds
from bpeds.cli import EXIT_DATA, main
from bpeds.tokenizer.io import InvalidTextError

TEXT = ("hello world, this is some text to compress. " * 4000).encode()
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


def damaged(tmp_path: Path, ext: str, how: str) -> Path:
    data = COMPRESSORS[ext](TEXT)
    half = len(data) // 2
    body = {
        "cut-by-one": data[:-1],
        "cut-in-half": data[:half],
        "corrupt": data[:half] + b"\x00 not compressed data " * 8 + data[half:],
    }[how]
    path = tmp_path / f"{how}{ext}"
    path.write_bytes(body)
    return path


@pytest.mark.parametrize("how", ["cut-by-one", "cut-in-half", "corrupt"])
@pytest.mark.parametrize("ext", COMPRESSORS)
def test_a_damaged_compressed_file_is_an_error_naming_it(
    tmp_path: Path, ext: str, how: str
) -> None:
    path = damaged(tmp_path, ext, how)
    for read in (
        lambda: bpeds.count(path, workers=1),
        lambda: bpeds.train([path], 300, workers=1),
    ):
        with pytest.raises(InvalidTextError, match="cut short or corrupt") as info:
            read()
        assert info.value.source == str(path)


@pytest.mark.parametrize("ext", COMPRESSORS)
def test_the_command_line_reports_a_truncated_file_in_one_line(
    tmp_path: Path, ext: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = damaged(tmp_path, ext, "cut-by-one")
    for argv in (
        ["count", str(path), "-o", str(tmp_path / "c.counts")],
        ["train", str(path), "--vocab-size", "300", "-o", str(tmp_path / "m.json")],
    ):
        assert main(argv) == EXIT_DATA
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert "cut short or corrupt" in err
        assert "Traceback" not in err
    assert not (tmp_path / "c.counts").exists()
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("ext", COMPRESSORS)
def test_whole_and_concatenated_compressed_files_read_as_their_text(
    tmp_path: Path, ext: str
) -> None:
    one, two = tmp_path / f"one{ext}", tmp_path / f"two{ext}"
    one.write_bytes(COMPRESSORS[ext](TEXT))
    two.write_bytes(COMPRESSORS[ext](TEXT) + COMPRESSORS[ext](TEXT))
    expected = bpeds.count(TEXT.decode(), workers=1)
    assert bpeds.count(one, workers=1) == expected
    assert bpeds.count(two, workers=1) == bpeds.count(TEXT.decode() * 2, workers=1)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("command", ["train", "count"])
def test_a_device_that_never_ends_is_refused(tmp_path: Path, command: str) -> None:
    argv = [command, "/dev/zero", "-o", str(tmp_path / "out")]
    if command == "train":
        argv += ["--vocab-size", "300"]
    done = subprocess.run(  # a child: reading /dev/zero would never end
        [sys.executable, "-m", "bpeds", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_DATA, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "never ends" in done.stderr
    with pytest.raises(OSError, match="never ends"):
        bpeds.count(Path("/dev/zero"))
    assert bpeds.count(Path(os.devnull)).total == 0  # /dev/null is an empty file
