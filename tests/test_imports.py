"""What importing the package loads: the structures alone stay light, names stay reachable."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import bpeds
import bpeds.structures


def _loaded_after(code: str) -> list[str]:
    """The ``bpeds`` modules loaded by running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith('bpeds')))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded: list[str] = eval(out.strip().splitlines()[-1])  # a printed list of str
    return loaded


def test_importing_the_structures_loads_only_them() -> None:
    assert _loaded_after("import bpeds.structures") == [
        "bpeds",
        "bpeds.errors",
        "bpeds.structures",
    ]
    loaded = _loaded_after("from bpeds.structures import HeapyKiYay; HeapyKiYay({1: 2}).top()")
    assert set(loaded) == {
        "bpeds",
        "bpeds.errors",
        "bpeds.structures",
        "bpeds.structures.heapykiyay",
        "bpeds.structures.multiset",
        "bpeds.structures.protocols",
    }


def test_every_public_name_resolves() -> None:
    for name in bpeds.structures.__all__:
        assert getattr(bpeds.structures, name) is not None, name
    for name in bpeds.__all__:
        assert getattr(bpeds, name) is not None, name
    assert bpeds.structures.__all__ == sorted(bpeds.structures._MODULES)
    assert bpeds.driver.MergeDriver is bpeds.MergeDriver  # a subpackage by attribute


def test_dir_shows_public_names_only() -> None:
    assert "annotations" not in dir(bpeds)
    assert "importlib" not in dir(bpeds)
    assert dir(bpeds) == sorted(bpeds.__all__)
    assert "Heapy" in dir(bpeds.structures)


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = bpeds.structures.Nope
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = bpeds.nope


def test_testing_kit_without_hypothesis_names_the_extra() -> None:
    probe = "import sys\nsys.modules['hypothesis'] = None\nimport bpeds.testing"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode != 0
    assert "ModuleNotFoundError: bpeds.testing needs Hypothesis" in run.stderr
    assert "pip install 'bpeds[testing]'" in run.stderr


def test_the_tokenizer_package_exports_its_names_lazily() -> None:
    import bpeds.tokenizer
    import bpeds.tokenizer.core as core

    assert bpeds.tokenizer.__all__ == core.__all__ == sorted(bpeds.tokenizer._LAZY)
    assert "Tokenizer" in core.__all__
    for name in bpeds.tokenizer.__all__:
        assert getattr(bpeds.tokenizer, name) is getattr(core, name), name
    assert dir(bpeds.tokenizer) == bpeds.tokenizer.__all__
    assert bpeds.tokenizer.training is importlib.import_module("bpeds.tokenizer.training")
    with pytest.raises(AttributeError, match=r"module 'bpeds\.tokenizer' has no attribute 'nope'"):
        _ = bpeds.tokenizer.nope
    with pytest.raises(AttributeError, match="has no attribute '__wrapped__'"):
        _ = bpeds.tokenizer.__wrapped__


def test_importing_a_low_module_of_the_tokenizer_stays_light() -> None:
    loaded = set(_loaded_after("import bpeds.tokenizer.pretokenize"))
    assert "bpeds.tokenizer.pretokenize" in loaded
    assert not loaded & {"bpeds.tokenizer.core", "bpeds.tokenizer.training", "bpeds.driver"}
