"""Shared pytest setup: seeded randomness for every test."""

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so every random test is reproducible."""
    return np.random.default_rng(20261121)
