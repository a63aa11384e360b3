"""Shared fixtures: the datasets folder beside the checkout, hypothesis profiles."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real datasets (``../shared/data`` beside the checkout)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"datasets folder not found at {SHARED_DATA}")
    return SHARED_DATA
