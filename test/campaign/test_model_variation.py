"""Scaled models and the slope's gravity."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.campaign.model_variation import scaled_model, slope_gravity
from humanoid_sim.model.urdf_loader import load_urdf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model():
    return load_urdf(ROOT / "urdf" / "humanoid.urdf")


def test_scaling_multiplies_masses_and_inertias_and_leaves_the_original(model):
    scaled = scaled_model(model, 1.1, 0.8)
    np.testing.assert_allclose(scaled.mass, 1.1 * model.mass)
    np.testing.assert_allclose(scaled.inertia_com, 1.1 * 0.8 * model.inertia_com)
    np.testing.assert_array_equal(scaled.com, model.com)
    assert scaled.total_mass == pytest.approx(1.1 * model.total_mass)
    assert scaled_model(model) is model


def test_slope_gravity_pulls_downhill_with_the_same_magnitude(model):
    assert slope_gravity(model, 0.0) is None
    g = slope_gravity(model, 10.0, 90.0)  # uphill towards +y
    assert np.linalg.norm(g) == pytest.approx(9.81)
    assert g[0] == pytest.approx(0.0, abs=1e-12)
    assert g[1] == pytest.approx(-9.81 * np.sin(np.radians(10.0)))
    assert g[2] == pytest.approx(-9.81 * np.cos(np.radians(10.0)))
