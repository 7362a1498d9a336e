"""The tokenizer layer's former module paths (``bpeds.training``, ``bpeds.formats``, ...).

Each still imports, as the very module object at its new path under
``bpeds.tokenizer``, with a DeprecationWarning naming that path; pickles that
name a former path still load. The new paths never warn.
"""

from __future__ import annotations

import importlib
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bpeds
import bpeds.tokenizer
from bpeds._aliases import MOVED, message
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.counts import Counts
from bpeds.tokenizer.encoder import SpecialTokenError
from bpeds.tokenizer.formats import FormatError
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.pattern_safety import PatternLimitError
from bpeds.tokenizer.pretokenize import PATTERNS
from bpeds.tokenizer.training import count, train

ROOT = Path(__file__).resolve().parent.parent


def _fresh_import(name: str) -> Any:
    """Import ``name`` as if for the first time in this process (its parents stay)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def test_every_former_module_is_listed_and_exists_at_its_new_path() -> None:
    moved = ROOT / "bpeds" / "tokenizer"
    on_disk = {
        "bpeds.tokenizer." + ".".join(p.relative_to(moved).with_suffix("").parts)
        for p in moved.rglob("*.py")
    }
    on_disk = {m.removesuffix(".__init__") for m in on_disk}
    # Every module of the layer had a former path, except the package itself and its
    # `core` (the former module bpeds.tokenizer, which is now the package).
    assert set(MOVED.values()) == on_disk - {"bpeds.tokenizer", "bpeds.tokenizer.core"}
    assert all(old == new.replace("bpeds.tokenizer.", "bpeds.", 1) for old, new in MOVED.items())
    for old in MOVED:  # no file stands for a former path
        relative = old.replace(".", "/")
        assert not (ROOT / f"{relative}.py").exists(), old
        assert not (ROOT / relative).exists(), old


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_former_path_is_the_same_module_and_warns(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=re.escape(f"{old} is now {new}; import it")):
        module = _fresh_import(old)
    assert module is importlib.import_module(new)
    assert module is sys.modules[old] is sys.modules[new]
    # The module keeps its own identity: name, spec and file are the new path's.
    assert module.__name__ == new
    assert module.__spec__ is not None
    assert module.__spec__.name == new
    assert module.__file__ is not None
    assert Path(module.__file__).is_relative_to(ROOT / "bpeds" / "tokenizer")
    parent, _, leaf = old.rpartition(".")
    assert getattr(sys.modules[parent], leaf) is module  # `import bpeds.x` binds bpeds.x


def test_names_through_a_former_path_are_the_same_objects() -> None:
    for old in ("bpeds.training", "bpeds.formats", "bpeds.formats.hf"):
        with pytest.warns(DeprecationWarning, match=re.escape(message(old))):
            _fresh_import(old)
    from bpeds.formats import FormatError as OldFormatError  # type: ignore[import-not-found]
    from bpeds.formats.hf import save_hf  # type: ignore[import-not-found]
    from bpeds.training import _count_data  # type: ignore[import-not-found]

    import bpeds.tokenizer.formats.hf
    import bpeds.tokenizer.training

    assert sys.modules["bpeds.training"].train is train
    assert _count_data is bpeds.tokenizer.training._count_data  # private names too
    assert OldFormatError is FormatError
    assert save_hf is bpeds.tokenizer.formats.hf.save_hf


def test_a_setting_made_through_a_former_path_is_the_one_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bpeds.tokenizer.pattern_safety as safety

    with pytest.warns(DeprecationWarning, match=re.escape(message("bpeds.pattern_safety"))):
        old = _fresh_import("bpeds.pattern_safety")
    monkeypatch.setattr(old, "MATCH_SECONDS", 123.0)
    assert safety.MATCH_SECONDS == 123.0


def _run(code: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *options, "-c", code], capture_output=True, text=True, cwd=ROOT
    )


def test_the_warning_names_the_importing_line_and_can_be_made_an_error() -> None:
    shown = _run("import bpeds.io")  # the default filters show it: it comes from __main__
    assert shown.returncode == 0, shown.stderr
    assert f"<string>:1: DeprecationWarning: {message('bpeds.io')}" in shown.stderr
    error = _run("import bpeds.formats.minbpe", "-W", "error::DeprecationWarning")
    assert error.returncode == 1
    assert f"DeprecationWarning: {message('bpeds.formats')}" in error.stderr
    attribute = _run("import bpeds; bpeds.counts.Counts", "-W", "error::DeprecationWarning")
    assert attribute.returncode == 1
    assert f"DeprecationWarning: {message('bpeds.counts')}" in attribute.stderr


def test_the_new_paths_the_package_and_the_command_line_never_warn() -> None:
    names = sorted({*MOVED.values(), "bpeds.tokenizer.core", "bpeds.cli", "bpeds.comparison"})
    code = (
        "import importlib, bpeds, bpeds.tokenizer\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "for name in bpeds.__all__: getattr(bpeds, name)\n"
        "for name in bpeds.tokenizer.__all__: getattr(bpeds.tokenizer, name)\n"
        "import bpeds.cli; bpeds.cli.main(['--version'])\n"
    )
    run = _run(code, "-W", "error::DeprecationWarning")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"bpeds {bpeds.__version__}"


def _pickled_under(obj: object, new: str, old: str) -> bytes:
    """``obj`` pickled as an older bpeds did: its class under the module path ``old``."""
    data = pickle.dumps(obj, protocol=2)  # names classes as text: b"c<module>\n<name>\n"
    assert f"c{new}\n".encode() in data
    return data.replace(f"c{new}\n".encode(), f"c{old}\n".encode())


def test_pickles_that_name_a_former_path_load() -> None:
    counts = count(["low lower lowest"])
    tok = train(["low lower lowest"], 260)
    error_args: list[tuple[BaseException, str]] = [
        (InvalidTextError("not UTF-8", "f.txt", 3), "bpeds.tokenizer.io"),
        (FormatError("bad file"), "bpeds.tokenizer.formats._common"),
        (SpecialTokenError("disallowed"), "bpeds.tokenizer.encoder"),
        (PatternLimitError("too long"), "bpeds.tokenizer.pattern_safety"),
    ]
    for error, new in error_args:
        old = new.replace("bpeds.tokenizer.", "bpeds.", 1)
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=re.escape(message(old))):
            loaded = pickle.loads(_pickled_under(error, new, old))
        assert type(loaded) is type(error)
        assert loaded.args == error.args
        assert vars(loaded) == vars(error)
    sys.modules.pop("bpeds.counts", None)
    with pytest.warns(DeprecationWarning, match=re.escape(message("bpeds.counts"))):
        old_counts = pickle.loads(_pickled_under(counts, "bpeds.tokenizer.counts", "bpeds.counts"))
    assert type(old_counts) is Counts
    assert old_counts == counts
    assert dict(old_counts.items()) == dict(counts.items())
    # A Tokenizer was pickled as bpeds.tokenizer.Tokenizer: the package still exports it.
    old_tok = pickle.loads(_pickled_under(tok, "bpeds.tokenizer.core", "bpeds.tokenizer"))
    assert type(old_tok) is Tokenizer
    assert old_tok == tok
    assert old_tok.encode("lowest") == tok.encode("lowest")
    # New pickles name the new paths, and round-trip.
    for obj in (counts, tok):
        data = pickle.dumps(obj)
        assert b"bpeds.tokenizer." in data
        assert pickle.loads(data) == obj
    for error, new in error_args:
        data = pickle.dumps(error)
        assert new.encode() in data
        assert pickle.loads(data).args == error.args


def test_the_tokenizer_package_exports_what_the_module_did() -> None:
    import bpeds.tokenizer.core as core

    # (the former module is bpeds.tokenizer.core; the package lazily loads each name)
    assert bpeds.tokenizer.__all__ == core.__all__ == sorted(bpeds.tokenizer._LAZY)
    assert "Tokenizer" in core.__all__

    for name in bpeds.tokenizer.__all__:
        assert getattr(bpeds.tokenizer, name) is getattr(core, name), name
    assert dir(bpeds.tokenizer) == bpeds.tokenizer.__all__
    # Other names the former module held still resolve (its imports and private names).
    assert bpeds.tokenizer._OWN_PATTERNS is core._OWN_PATTERNS
    assert bpeds.tokenizer.PATTERNS is PATTERNS
    assert bpeds.tokenizer.training is importlib.import_module("bpeds.tokenizer.training")
    with pytest.raises(AttributeError, match=r"module 'bpeds\.tokenizer' has no attribute 'nope'"):
        _ = bpeds.tokenizer.nope
    with pytest.raises(AttributeError, match="has no attribute '__wrapped__'"):
        _ = bpeds.tokenizer.__wrapped__


def test_importing_a_low_module_of_the_layer_stays_light() -> None:
    code = (
        "import sys, bpeds.tokenizer.pretokenize\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpeds')))"
    )
    run = _run(code)
    assert run.returncode == 0, run.stderr
    loaded = set(eval(run.stdout.strip()))
    assert "bpeds.tokenizer.pretokenize" in loaded
    assert not loaded & {"bpeds.tokenizer.core", "bpeds.tokenizer.training", "bpeds.driver"}
