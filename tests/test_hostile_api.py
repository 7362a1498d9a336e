"""Small but visible: argument types, one rule for ids, checking before reading, Ctrl-C."""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path
from typing import Any

import pytest

from bpeds.__main__ import run
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.io import check_data, iter_segments
from bpeds.tokenizer.training import train

TEXT = "low lower lowest newer newest wider " * 20


@pytest.mark.parametrize("name", ["vocab_size", "workers", "min_frequency", "block_size"])
@pytest.mark.parametrize("value", [300.0, "300", True, None])
def test_an_int_argument_of_another_type_is_a_type_error(name: str, value: object) -> None:
    if name == "workers" and value is None:
        pytest.skip("workers=None is the default: every available core")
    args: dict[str, Any] = {"vocab_size": 300}
    args[name] = value
    with pytest.raises(TypeError, match=f"{name} must be an int, got"):
        train(TEXT, **args)


def test_out_of_range_ints_are_value_errors_naming_the_real_minimum() -> None:
    with pytest.raises(ValueError, match="vocab_size must be at least 256"):
        train(TEXT, -1)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        train(TEXT, 300, workers=0)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        train(TEXT, 300, block_size=0)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        list(iter_segments([TEXT], block_size=0))
    with pytest.raises(TypeError, match="block_size must be an int"):
        list(iter_segments([TEXT], block_size=2.5))  # type: ignore[arg-type]


def test_a_multiset_that_is_not_a_factory_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="multiset must be a factory"):
        train(TEXT, 300, multiset="bogus")  # type: ignore[arg-type]


def test_every_path_is_checked_before_any_data_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.txt"
    big.write_text(TEXT, encoding="utf-8")
    opened: list[str] = []
    real_open = open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        train([big, tmp_path / "missing.txt"], 300)
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        train({"a": [big], "b": [tmp_path / "missing.txt"]}, 300, score="group_frequency")
    with pytest.raises(IsADirectoryError):
        train([big, tmp_path], 300)
    assert str(big) not in opened
    with pytest.raises(TypeError, match="item 1"):
        check_data(["text", b"bytes"])


def test_decode_and_token_bytes_share_one_rule_for_ids() -> None:
    tok = Tokenizer([(97, 98)], pattern=None)
    for bad in (1.0, 256.0, True, "1", None):
        with pytest.raises(TypeError, match="must be an int"):
            tok.decode([97, bad])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="must be an int"):
            tok.decode_bytes([bad])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="must be an int"):
            tok.token_bytes(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="must be an int"):
            tok.id_to_token(bad)  # type: ignore[arg-type]
    assert tok.decode([97, 256]) == "aab"


def test_integer_types_with_index_are_ids_everywhere() -> None:
    np = pytest.importorskip("numpy")
    tok = Tokenizer([(97, 98)], pattern=None)
    ids = np.array([97, 256], dtype=np.int64)
    assert tok.decode(ids) == "aab"
    assert tok.token_bytes(ids[1]) == b"ab"
    assert tok.id_to_token(np.int32(97)) == b"a"
    with pytest.raises(TypeError):
        tok.decode(np.array([97.0]))


class _InterruptImport(importlib.abc.MetaPathFinder):
    """Raises KeyboardInterrupt when ``bpeds.cli`` is imported (Ctrl-C during the import)."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "bpeds.cli":
            raise KeyboardInterrupt


def test_ctrl_c_while_the_command_imports_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bpeds.cli  # noqa: F401  (so that monkeypatch can put it back)

    monkeypatch.delitem(sys.modules, "bpeds.cli")
    monkeypatch.setattr(sys, "meta_path", [_InterruptImport(), *sys.meta_path])
    assert run() == 130
    err = capsys.readouterr().err
    assert err == "bpeds: interrupted\n"


def test_the_package_imports_its_names_lazily() -> None:
    import bpeds

    assert bpeds.Tokenizer is Tokenizer
    assert set(bpeds.__all__) <= set(dir(bpeds))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = bpeds.nope
