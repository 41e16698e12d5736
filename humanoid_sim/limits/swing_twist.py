"""Swing-twist angles of a ball joint (seed 003, section 2.1 and 3.2).

A ball joint's relative rotation ``R_rel`` (child relative to parent, expressed
in the parent frame, identity at the reference posture) is split as

    R_rel = R_swing @ R_twist,

``R_twist`` a rotation by the *twist angle* ψ about the twist axis ``a`` (the
limb axis in the parent frame at the reference posture) and ``R_swing`` a
rotation by the *swing angle* θ about an axis perpendicular to ``a``. The limb
direction ``d = R_rel a`` leans by θ from ``a`` towards the *azimuth* φ,
measured in the plane perpendicular to ``a`` from the reference direction
``e1`` towards ``e2 = a × e1`` (Fig. 2.2, seed 003).

The (φ, θ) pair is drawn in the polar plane of Fig. 2.3 (radius θ, angle φ).
We work with the Cartesian point of that plane, the *swing point*
``s = θ (cos φ, sin φ)`` [rad], which is smooth at θ = 0 where φ is undefined
(the singularity the seed discusses with Fig. 1.5); only θ = π is singular.

Angular velocities: ``ω_rel`` is the angular velocity of the child relative to
the parent, expressed in the parent frame, so ``dR_rel/dt = [ω_rel]× R_rel``.
``swing_twist_rates`` gives the 2x3 and 1x3 matrices with
``ds/dt = G_swing ω_rel`` and ``dψ/dt = g_twist · ω_rel``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.limits.kernels import axis_angle_matrix, swing_twist_angles_nb, swing_twist_rates_nb


class SwingTwist(NamedTuple):
    """Swing-twist coordinates of one ball-joint posture.

    phi: azimuth φ [rad] in (-π, π] (0 when θ = 0).
    theta: swing angle θ [rad] in [0, π].
    psi: twist angle ψ [rad] in (-π, π].
    swing_point: s = θ (cos φ, sin φ) [rad], shape (2,).
    """

    phi: float
    theta: float
    psi: float
    swing_point: np.ndarray


def reference_basis(twist_axis: np.ndarray, zero_azimuth_axis: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orthonormal (a, e1, e2) from the twist axis and the φ = 0 direction.

    ``zero_azimuth_axis`` is projected onto the plane perpendicular to ``a``;
    raises ValueError when it is (nearly) parallel to the twist axis.
    """
    a = np.asarray(twist_axis, dtype=float)
    a = a / np.linalg.norm(a)
    r = np.asarray(zero_azimuth_axis, dtype=float)
    e1 = r - a * (r @ a)
    n = np.linalg.norm(e1)
    if n < 1e-6:
        raise ValueError(f"zero_azimuth_axis {r.tolist()} is parallel to twist_axis {a.tolist()}")
    e1 = e1 / n
    return a, e1, np.cross(a, e1)


def swing_twist_angles(R_rel: np.ndarray, a: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> SwingTwist:
    """Swing-twist angles of ``R_rel`` (3, 3) for the basis (a, e1, e2) (seed 003, 3.21-3.27).

    The seed computes θ from the child z axis (3.21), φ from its projection
    (3.22-3.23) and ψ from the quaternion after removing the swing (3.24-3.27);
    here the same quantities follow from the swing-twist split of the
    quaternion: twist = normalise(w, (v·a) a). At θ = π the swing's direction is undefined:
    φ = 0 there.
    """
    phi, theta, psi, s0, s1 = swing_twist_angles_nb(np.ascontiguousarray(R_rel, dtype=np.float64), a, e1, e2)
    return SwingTwist(phi, theta, psi, np.array([s0, s1]))


def rotation_from_swing_twist(phi: float, theta: float, psi: float, a: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Inverse of ``swing_twist_angles``: R_rel = R_swing(φ, θ) R_twist(ψ), shape (3, 3)."""
    lean = np.cos(phi) * e1 + np.sin(phi) * e2  # direction the limb leans towards
    swing_axis = np.cross(a, lean)
    return axis_angle_matrix(swing_axis, theta) @ axis_angle_matrix(a, psi)


def swing_twist_rates(R_rel: np.ndarray, a: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rate matrices of the swing point and the twist angle.

    Returns (G_swing (2, 3), g_twist (3,)) with ds/dt = G_swing ω_rel and
    dψ/dt = g_twist · ω_rel, ω_rel in the parent frame [rad/s]. These are
    the exact derivatives behind the constraint axes of Eq. 3.34-3.35.
    Singular only at θ = π (both returned as zeros there; the range-of-motion rows stop short
    of it: limits.kernels.SWING_CHART_LIMIT).
    """
    return swing_twist_rates_nb(np.ascontiguousarray(R_rel, dtype=np.float64), a, e1, e2)
