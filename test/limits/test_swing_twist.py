"""Swing-twist decomposition (seed 003, 3.2) against constructions and finite differences."""

import numpy as np
import pytest

from humanoid_sim.limits.swing_twist import (
    axis_angle_matrix,
    reference_basis,
    rotation_from_swing_twist,
    swing_twist_angles,
    swing_twist_rates,
)


@pytest.fixture
def basis():
    # limb hanging down, φ = 0 forward: e2 = a × e1 = -y
    return reference_basis(np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0]))


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_basis_is_right_handed(basis):
    a, e1, e2 = basis
    np.testing.assert_allclose(e2, [0.0, -1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(np.cross(e1, e2), a, atol=1e-15)


def test_round_trip_angles_to_rotation_and_back(basis, rng):
    a, e1, e2 = basis
    for _ in range(200):
        phi, theta, psi = rng.uniform(-np.pi, np.pi), rng.uniform(0.01, np.pi - 0.01), rng.uniform(-np.pi, np.pi)
        st = swing_twist_angles(rotation_from_swing_twist(phi, theta, psi, a, e1, e2), a, e1, e2)
        assert st.phi == pytest.approx(phi, abs=1e-9)
        assert st.theta == pytest.approx(theta, abs=1e-9)
        assert st.psi == pytest.approx(psi, abs=1e-9)
        np.testing.assert_allclose(st.swing_point, theta * np.array([np.cos(phi), np.sin(phi)]), atol=1e-9)


def test_round_trip_rotation_to_angles_and_back(basis, rng):
    a, e1, e2 = basis
    for _ in range(200):
        R = random_rotation(rng)
        st = swing_twist_angles(R, a, e1, e2)
        np.testing.assert_allclose(rotation_from_swing_twist(st.phi, st.theta, st.psi, a, e1, e2), R, atol=1e-9)


def test_pure_twist_and_pure_swing(basis):
    a, e1, e2 = basis
    st = swing_twist_angles(axis_angle_matrix(a, 0.7), a, e1, e2)
    assert (st.theta, st.psi) == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.7))
    # arm swung forward (towards +x) by 0.5 rad: rotation about -y
    st = swing_twist_angles(axis_angle_matrix(np.array([0.0, -1.0, 0.0]), 0.5), a, e1, e2)
    assert (st.phi, st.theta, st.psi) == (pytest.approx(0.0), pytest.approx(0.5), pytest.approx(0.0, abs=1e-12))
    # arm swung to -y (φ = 90°): rotation about -x
    st = swing_twist_angles(axis_angle_matrix(np.array([-1.0, 0.0, 0.0]), 0.5), a, e1, e2)
    assert (st.phi, st.theta) == (pytest.approx(np.pi / 2), pytest.approx(0.5))


@pytest.mark.parametrize("theta_range", [(1e-6, 1e-3), (0.05, 3.0)])
def test_rates_match_finite_differences(basis, rng, theta_range):
    a, e1, e2 = basis
    h = 1e-6
    for _ in range(50):
        R = rotation_from_swing_twist(rng.uniform(-3, 3), rng.uniform(*theta_range), rng.uniform(-3, 3), a, e1, e2)
        w = rng.normal(size=3)
        G_swing, g_twist = swing_twist_rates(R, a, e1, e2)
        plus = swing_twist_angles(axis_angle_matrix(w / np.linalg.norm(w), h * np.linalg.norm(w)) @ R, a, e1, e2)
        minus = swing_twist_angles(axis_angle_matrix(w / np.linalg.norm(w), -h * np.linalg.norm(w)) @ R, a, e1, e2)
        np.testing.assert_allclose(G_swing @ w, (plus.swing_point - minus.swing_point) / (2 * h), atol=2e-6)
        dpsi = (plus.psi - minus.psi + np.pi) % (2 * np.pi) - np.pi
        assert g_twist @ w == pytest.approx(dpsi / (2 * h), abs=2e-6)


def test_parallel_zero_azimuth_axis_is_rejected():
    with pytest.raises(ValueError, match="parallel"):
        reference_basis(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -2.0]))
