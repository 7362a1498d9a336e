"""Shared pytest configuration: deterministic Hypothesis profiles."""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from tests.budget import FULL, PROFILE

# Hypothesis keeps a directory of its own; keep it out of the working tree.
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="bpeds-hypothesis-"))

# "ci": derandomized, so a CI run is reproducible and never flaky; "dev": random
# exploration for local runs; "thorough": many more examples, run by hand.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
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
