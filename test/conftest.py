"""Shared pytest setup: the copy of humanoid_sim under test, seeded randomness for every test."""

import numpy as np
import pytest

# Before any test module imports humanoid_sim: which copy this run tests (see the module).
import package_under_test


def pytest_report_header(config: pytest.Config) -> str:
    return f"humanoid_sim under test: {package_under_test.PACKAGE_DIR}: {package_under_test.REASON}"


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so every random test is reproducible."""
    return np.random.default_rng(20261121)
