"""Fail early, and say what to install, when the testing kit's dependency is missing."""

from __future__ import annotations

try:
    import hypothesis
except ModuleNotFoundError as missing:  # exercised in a subprocess by tests/test_imports.py
    raise ModuleNotFoundError(
        "bpeds.testing needs Hypothesis, which is not installed: "
        "pip install 'bpeds[testing]' (or pip install hypothesis)",
        name=missing.name,
    ) from missing

__all__ = ["hypothesis"]
