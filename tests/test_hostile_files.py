"""Writing files where something other than a regular file is: FIFOs, devices,
symlinks; flags that are not booleans; ids the target format cannot hold."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from bpeds.cli import EXIT_DATA, main
from bpeds.errors import TargetFileError
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import (
    FormatError,
    hf_tokenizer_json,
    save_hf,
    save_minbpe,
    save_tiktoken,
    to_tiktoken,
)
from bpeds.tokenizer.persist import save

TOK = Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 257})

Saver = Callable[[Tokenizer, Path, bool], object]
SAVERS: dict[str, Saver] = {
    "Tokenizer.save": lambda t, p, o: t.save(p, overwrite=o),
    "persist.save": lambda t, p, o: save(t, p, overwrite=o),
    "save_hf": lambda t, p, o: save_hf(t, p, overwrite=o),
    "save_tiktoken": lambda t, p, o: save_tiktoken(t, p, overwrite=o),
    "save_minbpe": lambda t, p, o: save_minbpe(t, p.with_suffix(""), overwrite=o),
}


def target(tmp_path: Path, name: str) -> Path:
    """Where ``name``'s saver writes (minbpe: the ``.model`` file)."""
    return tmp_path / "out.model" if name == "save_minbpe" else tmp_path / "out.json"


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@needs_fifo
@pytest.mark.parametrize("name", SAVERS)
@pytest.mark.parametrize("overwrite", [True, False])
def test_a_fifo_is_never_replaced(tmp_path: Path, name: str, overwrite: bool) -> None:
    path = target(tmp_path, name)
    os.mkfifo(path)
    with pytest.raises(TargetFileError, match="FIFO") as info:
        SAVERS[name](TOK, path, overwrite)
    assert isinstance(info.value, OSError)
    assert info.value.filename == str(path)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # nothing else written


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
@pytest.mark.parametrize("name", [n for n in SAVERS if n != "save_minbpe"])  # it adds suffixes
def test_dev_null_is_never_replaced(name: str) -> None:
    path = Path("/dev/null")
    with pytest.raises(TargetFileError, match="character device"):
        SAVERS[name](TOK, path, True)
    assert stat.S_ISCHR(os.stat(path).st_mode)


def test_the_command_line_refuses_dev_null_as_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.json"
    TOK.save(model)
    for fmt in ("bpeds", "hf", "tiktoken"):
        argv = ["export", str(model), "-f", fmt, "-o", "/dev/null", "--force"]
        if fmt == "bpeds":
            argv = ["import", "-f", "hf", str(tmp_path / "hf.json"), "-o", "/dev/null", "--force"]
            save_hf(TOK, tmp_path / "hf.json", overwrite=True)
        code = main(argv)
        err = capsys.readouterr().err
        assert code == EXIT_DATA, err
        assert "character device" in err
        assert err.count("\n") == 1
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("name", SAVERS)
def test_a_symlink_is_followed_and_kept(tmp_path: Path, name: str) -> None:
    path = target(tmp_path, name)
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / path.name
    real.write_bytes(b"old")
    os.chmod(real, 0o640)
    path.symlink_to(real)
    SAVERS[name](TOK, path, True)
    assert path.is_symlink()
    assert os.readlink(path) == str(real)
    assert real.read_bytes() != b"old"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # the replaced file keeps its mode
    leftovers = [p.name for p in real_dir.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("name", SAVERS)
def test_a_symlink_is_an_existing_file_without_overwrite(tmp_path: Path, name: str) -> None:
    path = target(tmp_path, name)
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    path.symlink_to(real)
    with pytest.raises(FileExistsError):
        SAVERS[name](TOK, path, False)
    assert real.read_bytes() == b"old"


def test_a_dangling_symlink_or_one_to_a_non_regular_file_is_refused(tmp_path: Path) -> None:
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "missing.json")
    with pytest.raises(TargetFileError, match="does not exist"):
        TOK.save(dangling, overwrite=True)
    assert not (tmp_path / "missing.json").exists()
    assert dangling.is_symlink()
    if os.path.exists("/dev/null"):
        to_null = tmp_path / "null.json"
        to_null.symlink_to("/dev/null")
        with pytest.raises(TargetFileError, match="character device"):
            TOK.save(to_null, overwrite=True)
    to_dir = tmp_path / "dir.json"
    to_dir.symlink_to(tmp_path)
    with pytest.raises(IsADirectoryError):
        TOK.save(to_dir, overwrite=True)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_a_symlink_planted_by_another_user_in_a_shared_directory_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # like /tmp: sticky, writable by all
    real = tmp_path / "victim.json"
    real.write_bytes(b"precious")
    link = shared / "out.json"
    link.symlink_to(real)
    me = os.geteuid()
    # Seen from another user (neither the link's nor the directory's owner):
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    real_stat = os.stat

    def stat_as_other_owner(p: object, *args: object, **kwargs: object) -> os.stat_result:
        st = real_stat(p, *args, **kwargs)  # type: ignore[arg-type]
        if Path(str(p)) == shared:
            fields = list(st)
            fields[stat.ST_UID] = me + 2
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(os, "stat", stat_as_other_owner)
    with pytest.raises(TargetFileError, match="another user"):
        TOK.save(link, overwrite=True)
    monkeypatch.undo()
    assert real.read_bytes() == b"precious"
    TOK.save(link, overwrite=True)  # the owner follows their own link
    assert real.read_bytes() != b"precious"


@pytest.mark.parametrize("name", SAVERS)
@pytest.mark.parametrize("flag", ["no", "", 1, 0, None, 1.0])
def test_overwrite_must_be_a_bool(tmp_path: Path, name: str, flag: object) -> None:
    path = target(tmp_path, name)
    path.write_bytes(b"old")
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        SAVERS[name](TOK, path, flag)  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"


def test_cli_outputs_are_checked_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    text = tmp_path / "t.txt"
    text.write_text("hello hello world", encoding="utf-8")
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    code = main(["train", str(text), "--vocab-size", "260", "-o", str(fifo), "--force", "-q"])
    err = capsys.readouterr().err
    assert code == EXIT_DATA
    assert "FIFO" in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# -- ids that other formats cannot hold -------------------------------------------------------

BIG = Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 2**32})


def test_hf_export_refuses_ids_beyond_u32(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="2\\*\\*32"):
        hf_tokenizer_json(BIG)
    with pytest.raises(FormatError, match="2\\*\\*32"):
        save_hf(BIG, tmp_path / "t.json")
    assert list(tmp_path.iterdir()) == []
    ok = Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 2**32 - 1})
    assert hf_tokenizer_json(ok)["added_tokens"][0]["id"] == 2**32 - 1


def test_tiktoken_export_refuses_ids_beyond_u32() -> None:
    pytest.importorskip("tiktoken")
    with pytest.raises(FormatError, match="2\\*\\*32"):
        to_tiktoken(BIG)
