"""The former module paths of the tokenizer layer, kept as deprecated aliases.

The tokenizer layer's modules live in the :mod:`bpeds.tokenizer` package; they
used to sit directly under ``bpeds``. Each former path in :data:`MOVED` still
imports, and gives the *same module object* as its new path::

    import bpeds.training            # DeprecationWarning: bpeds.training is now
    import bpeds.tokenizer.training  # bpeds.tokenizer.training; ...
    assert bpeds.training is bpeds.tokenizer.training

so private names, module settings (``bpeds.pattern_safety.MATCH_SECONDS = 5``),
monkeypatching and pickles that name a former path keep working. The warning is
given once per path and process, the first time it is imported, and names the
new path. Type checkers do not know the former paths: code checked with mypy
should import from the new ones.

No files stand for the former paths: :class:`_AliasFinder`, put first on
:data:`sys.meta_path` when :mod:`bpeds` is imported, answers for exactly the
names in :data:`MOVED` (a dict lookup per import, for any other name it does
nothing).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

_MODULES = (
    "_dask",
    "_files",
    "_limits",
    "_model_json",
    "counts",
    "encoder",
    "fastsplit",
    "formats",
    "formats._common",
    "formats.hf",
    "formats.minbpe",
    "formats.tiktoken_format",
    "io",
    "pattern_safety",
    "persist",
    "pretokenize",
    "progress",
    "replay",
    "special",
    "training",
)

#: Former module path -> where the module lives now.
MOVED: dict[str, str] = {f"bpeds.{m}": f"bpeds.tokenizer.{m}" for m in _MODULES}


def message(old: str) -> str:
    """The deprecation message for importing the former path ``old``.

    >>> print(message("bpeds.training"))
    bpeds.training is now bpeds.tokenizer.training; import it from there (the old path is
    deprecated and will be removed)
    """
    return (
        f"{old} is now {MOVED[old]}; import it from there "
        "(the old path is deprecated and will be removed)"
    )


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a former path (a key of :data:`MOVED`) as the module at its new path.

    The import system builds the module with :meth:`create_module` (which returns
    the new module, imported if need be, and warns) and records it under the former
    name too. It also sets the module's ``__spec__`` to the former name's spec;
    :meth:`exec_module` puts the module's own spec back.
    """

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # stacklevel 2: the importing code (the import machinery's frames are skipped).
        warnings.warn(message(spec.name), DeprecationWarning, stacklevel=2)
        module = importlib.import_module(MOVED[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._specs[module.__name__]


_FINDER = _AliasFinder()


def install() -> None:
    """Put the alias finder first on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)
