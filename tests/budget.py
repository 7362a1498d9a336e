"""How much the slow property tests draw: their full budget under CI, a sample locally.

The Hypothesis profile is ``HYPOTHESIS_PROFILE`` if set, else ``ci`` when ``CI`` is set (as in
CI: derandomized) and ``dev`` otherwise (random, so every local run tries new inputs).
``examples(ci=..., local=...)`` is a test's ``max_examples``: the ``ci`` count under the ``ci``
and ``thorough`` profiles, the smaller ``local`` count under ``dev``. A test that had no count of
its own takes ``profile_examples(local=...)``: the profile's count (Hypothesis's 100 under ``ci``,
1000 under ``thorough``) in full runs, ``local`` under ``dev``. Tests that take no budget from
here draw the same number of examples everywhere.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
#: True when tests run their full CI budget (every profile but the local default).
FULL = PROFILE != "dev"


def examples(*, ci: int, local: int) -> int:
    """``max_examples`` for this run: ``ci`` under CI (and ``thorough``), ``local`` under dev."""
    if not 0 < local <= ci:
        raise ValueError(f"need 0 < local <= ci, got local={local}, ci={ci}")
    return ci if FULL else local


def profile_examples(*, local: int) -> int:
    """``max_examples`` for this run: the loaded profile's own count in full runs, ``local`` under
    dev (for tests that draw the profile's default count under CI)."""
    if FULL:
        count: int = settings.default.max_examples
        return count
    if local <= 0:
        raise ValueError(f"need local > 0, got local={local}")
    return local
