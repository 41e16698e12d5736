"""Fixtures of the model tests: where example-robot-data's public robots are."""

from __future__ import annotations

from pathlib import Path

import pytest

from humanoid_sim.model.resource_paths import example_robot_data_share_dirs


@pytest.fixture
def robots_dir() -> Path:
    """example-robot-data's robots/ directory; skips the test when the package is not installed."""
    for share in example_robot_data_share_dirs():
        robots = share / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    pytest.skip("example-robot-data is not installed")
