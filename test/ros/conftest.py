"""Fixtures of the ROS tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def ros():
    """rclpy initialised for the test (the test process's own context), shut down after."""
    rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
    rclpy.init()
    yield
    rclpy.try_shutdown()
