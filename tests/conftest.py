"""Shared pytest configuration: deterministic Hypothesis profiles."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import InMemoryExampleDatabase

from tests.budget import FULL, PROFILE

# Hypothesis keeps a directory of its own; keep it out of the working tree. It holds tables of
# Unicode that take a second or two to build, so the directory lasts from run to run (one per
# user under the system temp dir); the example database stays new each run (in memory), as
# with a fresh directory each run. The ci profile has none (derandomize implies no database).
_HOME = (
    Path(tempfile.gettempdir()) / f"bpeds-hypothesis-{os.getuid() if hasattr(os, 'getuid') else 0}"
)
_HOME.mkdir(mode=0o700, exist_ok=True)
set_hypothesis_home_dir(str(_HOME))

# "ci": derandomized, so a CI run is reproducible and never flaky; "dev": random
# exploration for local runs; "thorough": many more examples, run by hand.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=InMemoryExampleDatabase(),
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    database=InMemoryExampleDatabase(),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(PROFILE)


def pytest_report_header() -> str:
    budget = (
        "full example budgets"
        if FULL
        else "local example budgets (CI=true runs the full ones; see tests/budget.py)"
    )
    return f"hypothesis profile: {PROFILE}; {budget}"
