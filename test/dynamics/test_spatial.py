"""Spatial algebra and rotation helpers against Pinocchio's implementations."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.spatial import (
    axis_angle_to_rotation,
    force_cross,
    motion_cross,
    quaternion_to_rotation,
    rotation_to_quaternion,
    se3_exp,
    se3_log,
    skew,
    so3_exp,
    so3_log,
    spatial_inertia,
)


def _random_quaternion(rng: np.random.Generator) -> np.ndarray:
    quat = rng.normal(size=4)
    return quat / np.linalg.norm(quat)


def test_skew_is_the_cross_product(rng: np.random.Generator) -> None:
    a, b = rng.normal(size=(2, 3))
    assert np.allclose(skew(a) @ b, np.cross(a, b), atol=1e-15)


def test_quaternion_rotation_round_trip_matches_pinocchio(rng: np.random.Generator) -> None:
    for _ in range(50):
        x, y, z, w = _random_quaternion(rng)
        R = quaternion_to_rotation(np.array([x, y, z, w]))
        assert np.allclose(R, pin.Quaternion(w, x, y, z).matrix(), atol=1e-14)
        quat = rotation_to_quaternion(R)
        assert quat[3] >= 0.0
        assert np.allclose(quat, np.sign(w) * np.array([x, y, z, w]), atol=1e-12)
    # not normalised on input: the rotation is still proper
    R = quaternion_to_rotation(np.array([0.0, 0.0, 2.0, 2.0]))
    assert np.allclose(R, axis_angle_to_rotation(np.array([0.0, 0.0, 1.0]), math.pi / 2), atol=1e-15)


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0)])
def test_rotation_to_quaternion_near_half_turn(axis: tuple) -> None:
    """The branches with a negative trace (rotations close to pi)."""
    a = np.array(axis, dtype=float) / np.linalg.norm(axis)
    for angle in (math.pi, math.pi - 1e-3, 3.0):
        R = axis_angle_to_rotation(a, angle)
        assert np.allclose(quaternion_to_rotation(rotation_to_quaternion(R)), R, atol=1e-12)


def test_axis_angle_and_so3_exp_log(rng: np.random.Generator) -> None:
    for _ in range(50):
        w = rng.normal(size=3)
        w *= rng.uniform(0.0, math.pi - 1e-3) / np.linalg.norm(w)
        R = so3_exp(w)
        assert np.allclose(R, pin.exp3(w), atol=1e-14)
        assert np.allclose(so3_log(R), w, atol=1e-10)
    for w in (np.array([math.pi, 0.0, 0.0]), np.array([0.0, -1.0, 1.0]) * (math.pi - 1e-7) / math.sqrt(2)):
        assert np.allclose(so3_exp(so3_log(so3_exp(w))), so3_exp(w), atol=1e-9)
    assert np.allclose(so3_log(np.eye(3)), 0.0)


def test_se3_exp_log_match_pinocchio(rng: np.random.Generator) -> None:
    for _ in range(50):
        twist = rng.normal(size=6)
        X = se3_exp(twist)
        assert np.allclose(X, pin.exp6(pin.Motion(twist)).homogeneous, atol=1e-13)
        assert np.allclose(se3_log(X), pin.log6(pin.SE3(X)).vector, atol=1e-10)
    small = np.full(6, 1e-9)
    assert np.allclose(se3_exp(small), pin.exp6(pin.Motion(small)).homogeneous, atol=1e-16)


def test_spatial_inertia_and_cross_products_match_pinocchio(rng: np.random.Generator) -> None:
    mass = 2.5
    com = rng.normal(size=3)
    L = rng.normal(size=(3, 3))
    inertia = L @ L.T + np.eye(3)
    assert np.allclose(spatial_inertia(mass, com, inertia), pin.Inertia(mass, com, inertia).matrix(), atol=1e-13)
    v, m, f = rng.normal(size=(3, 6))
    assert np.allclose(motion_cross(v, m), pin.Motion(v).cross(pin.Motion(m)).vector, atol=1e-14)
    assert np.allclose(force_cross(v, f), pin.Motion(v).cross(pin.Force(f)).vector, atol=1e-14)
    out = np.empty(6)
    kernels.motion_cross_into(v, m, out)
    assert np.allclose(out, motion_cross(v, m), atol=1e-15)
    kernels.force_cross_into(v, f, out)
    assert np.allclose(out, force_cross(v, f), atol=1e-15)
    # duality: (v x m) . f == -m . (v x* f)
    assert np.dot(motion_cross(v, m), f) == pytest.approx(-np.dot(m, force_cross(v, f)), abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_spd_inverse_into_inverts_a_joint_block(rng: np.random.Generator, n: int) -> None:
    # a multi-dof joint's D = Sᵀ I^A S of the articulated-body method (a free joint: n = 6)
    A = rng.standard_normal((n, n))
    D = np.zeros((6, 6))
    D[:n, :n] = A @ A.T + 0.1 * np.eye(n)
    out = np.full((6, 6), np.nan)
    kernels.spd_inverse_into(D, n, out)
    assert np.allclose(out[:n, :n], np.linalg.inv(D[:n, :n]), rtol=1e-10, atol=1e-12)
