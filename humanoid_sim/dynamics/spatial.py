"""Spatial algebra (Featherstone), reordered linear-first, plus rotation helpers.

Legend of the symbols used throughout ``humanoid_sim.dynamics`` (Featherstone,
*Rigid Body Dynamics Algorithms*, 2008; seed 004 uses the same method). Every
6-vector is **linear first**, as in Pinocchio and ``geometry_msgs/Twist``:

=========  =================================================================
Symbol     Meaning (linear-first ordering)
=========  =================================================================
X          spatial transform; here stored as a rotation R (3, 3) and a
           translation p (3,): ``X_a_b`` is the pose of frame b in frame a.
S          motion subspace of a joint: the columns are the spatial velocities
           produced by unit joint rates, shape (6, n_joint_dof). Stored per
           velocity coordinate as rows of an (nv, 6) array.
I          spatial inertia, 6x6: ``[[m 1, -m [c]x], [m [c]x, I_c - m [c]x [c]x]]``
           about the frame origin (c: centre of mass, I_c: rotational inertia
           about the centre of mass).
v          spatial motion vector (twist) ``(v_O, ω)``: ω angular velocity,
           v_O velocity of the body-fixed point currently at the origin O.
a          spatial acceleration ``d/dt (v_O, ω)`` taken component-wise in the
           fixed frame (NOT the classical acceleration of a point; see
           ``point_drift_acceleration``).
f          spatial force (wrench) ``(f, n)``: force, then moment about O.
v x m      motion cross product ``(ω x m_v + v_O x m_ω, ω x m_ω)``; the
           derivative of a body-fixed motion vector m is ``v x m``.
v x* f     force cross product ``(ω x f, ω x n + v_O x f)`` (= -(v x)^T f).
p          bias force of a body: ``v x* I v`` minus external forces (ABA).
I^A, p^A   articulated-body inertia and bias force (ABA, seed 004).
U, D, u    ABA joint quantities: ``U = I^A S``, ``D = S^T U``,
           ``u = tau - S^T p^A``.
c          velocity-product (bias) acceleration of a joint: ``v_i x (S qd)``.
=========  =================================================================

In the algorithms of this package all spatial quantities are expressed in the
**world frame about the world origin**, so parent/child quantities add without
transforms (the composite and articulated inertias are plain sums).

Quaternions are stored ``(x, y, z, w)`` like Pinocchio's ``q`` and ROS
messages. Functions named ``*_nb`` are numba kernels usable from other numba
code; the others are numpy conveniences.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


# ---------------------------------------------------------------------------
# 3D helpers (numpy)
# ---------------------------------------------------------------------------


def skew(w: np.ndarray) -> np.ndarray:
    """The matrix [w]x such that ``skew(w) @ u == cross(w, u)``, shape (3, 3)."""
    return np.array(
        [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]], dtype=float
    )


def quaternion_to_rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrix (3, 3) of a quaternion (x, y, z, w); normalised first."""
    out = np.empty((3, 3))
    quat_to_rot_nb(np.asarray(quat_xyzw, dtype=float), out)
    return out


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) with w >= 0 of a rotation matrix (3, 3)."""
    out = np.empty(4)
    rot_to_quat_nb(np.asarray(R, dtype=float), out)
    return out


def axis_angle_to_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` [rad] about the unit ``axis`` (3,), shape (3, 3)."""
    out = np.empty((3, 3))
    axis_angle_nb(np.asarray(axis, dtype=float), float(angle), out)
    return out


def so3_exp(w: np.ndarray) -> np.ndarray:
    """Rotation exp([w]x) of a rotation vector w [rad] (3,), shape (3, 3)."""
    w = np.asarray(w, dtype=float)
    theta = float(np.linalg.norm(w))
    if theta < 1e-12:
        return np.eye(3) + skew(w)
    return axis_angle_to_rotation(w / theta, theta)


def so3_log(R: np.ndarray) -> np.ndarray:
    """Rotation vector w [rad] (3,) with exp([w]x) = R, |w| <= pi."""
    cos_theta = min(1.0, max(-1.0, (np.trace(R) - 1.0) / 2.0))
    theta = math.acos(cos_theta)
    vee = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if theta < 1e-6:
        return 0.5 * vee
    if math.pi - theta < 1e-4:
        # Near pi, sin(theta) ~ 0: recover the axis from R + R^T = 2 a a^T (1 - cos) + 2 cos 1.
        B = (R + R.T) / 2.0 - cos_theta * np.eye(3)
        k = int(np.argmax(np.diag(B)))
        axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
        if np.dot(axis, vee) < 0.0:
            axis = -axis
        return theta * axis / np.linalg.norm(axis)
    return theta / (2.0 * math.sin(theta)) * vee


def _se3_V(w: np.ndarray) -> np.ndarray:
    """Left Jacobian V(w) of SO(3): p = V(w) v in exp of the twist (v, w)."""
    theta = float(np.linalg.norm(w))
    W = skew(w)
    if theta < 1e-6:
        return np.eye(3) + 0.5 * W + W @ W / 6.0
    return (
        np.eye(3)
        + (1.0 - math.cos(theta)) / theta**2 * W
        + (theta - math.sin(theta)) / theta**3 * (W @ W)
    )


def se3_exp(twist: np.ndarray) -> np.ndarray:
    """Pose (4, 4) reached by following the constant twist (v, ω) (6,) for unit time.

    Same convention as ``pinocchio.exp6``: v is the velocity of the moving
    frame's origin and ω its angular velocity, both in the moving frame.
    """
    twist = np.asarray(twist, dtype=float)
    X = np.eye(4)
    X[:3, :3] = so3_exp(twist[3:])
    X[:3, 3] = _se3_V(twist[3:]) @ twist[:3]
    return X


def se3_log(X: np.ndarray) -> np.ndarray:
    """Twist (v, ω) (6,) with ``se3_exp(twist) == X``; inverse of ``se3_exp``."""
    w = so3_log(X[:3, :3])
    v = np.linalg.solve(_se3_V(w), X[:3, 3])
    return np.concatenate([v, w])


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """Spatial inertia (6, 6), linear-first, about the frame origin.

    mass [kg]; com (3,) centre of mass in the frame [m]; inertia_com (3, 3)
    rotational inertia about the centre of mass in the frame axes [kg m^2].
    """
    C = skew(com)
    out = np.empty((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * C
    out[3:, :3] = mass * C
    out[3:, 3:] = inertia_com - mass * C @ C
    return out


def motion_cross(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Spatial motion cross product v x m, both (6,) linear-first."""
    return np.concatenate(
        [np.cross(v[3:], m[:3]) + np.cross(v[:3], m[3:]), np.cross(v[3:], m[3:])]
    )


def force_cross(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Spatial force cross product v x* f, v motion (6,), f force (6,), linear-first."""
    return np.concatenate(
        [np.cross(v[3:], f[:3]), np.cross(v[3:], f[3:]) + np.cross(v[:3], f[:3])]
    )


# ---------------------------------------------------------------------------
# numba kernels (write into preallocated outputs)
# ---------------------------------------------------------------------------


@njit(cache=True)
def quat_to_rot_nb(quat: np.ndarray, out: np.ndarray) -> None:
    """Rotation (3, 3) of the quaternion (x, y, z, w), normalised on the fly."""
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    n2 = x * x + y * y + z * z + w * w
    s = 2.0 / n2
    out[0, 0] = 1.0 - s * (y * y + z * z)
    out[0, 1] = s * (x * y - z * w)
    out[0, 2] = s * (x * z + y * w)
    out[1, 0] = s * (x * y + z * w)
    out[1, 1] = 1.0 - s * (x * x + z * z)
    out[1, 2] = s * (y * z - x * w)
    out[2, 0] = s * (x * z - y * w)
    out[2, 1] = s * (y * z + x * w)
    out[2, 2] = 1.0 - s * (x * x + y * y)


@njit(cache=True)
def rot_to_quat_nb(R: np.ndarray, out: np.ndarray) -> None:
    """Unit quaternion (x, y, z, w), w >= 0, of a rotation (3, 3) (Shepperd's method)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        w = 0.25 * s
        x = (R[2, 1] - R[1, 2]) / s
        y = (R[0, 2] - R[2, 0]) / s
        z = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2.0
        w = (R[2, 1] - R[1, 2]) / s
        x = 0.25 * s
        y = (R[0, 1] + R[1, 0]) / s
        z = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2.0
        w = (R[0, 2] - R[2, 0]) / s
        x = (R[0, 1] + R[1, 0]) / s
        y = 0.25 * s
        z = (R[1, 2] + R[2, 1]) / s
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2.0
        w = (R[1, 0] - R[0, 1]) / s
        x = (R[0, 2] + R[2, 0]) / s
        y = (R[1, 2] + R[2, 1]) / s
        z = 0.25 * s
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    n = math.sqrt(x * x + y * y + z * z + w * w)
    out[0] = x / n
    out[1] = y / n
    out[2] = z / n
    out[3] = w / n


@njit(cache=True)
def axis_angle_nb(axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    """Rodrigues: rotation (3, 3) by angle [rad] about the unit axis (3,)."""
    c = math.cos(angle)
    s = math.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = t * x * x + c
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = t * y * y + c
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = t * z * z + c


@njit(cache=True)
def quat_multiply_nb(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Hamilton product a * b of quaternions (x, y, z, w)."""
    ax, ay, az, aw = a[0], a[1], a[2], a[3]
    bx, by, bz, bw = b[0], b[1], b[2], b[3]
    out[0] = aw * bx + ax * bw + ay * bz - az * by
    out[1] = aw * by - ax * bz + ay * bw + az * bx
    out[2] = aw * bz + ax * by - ay * bx + az * bw
    out[3] = aw * bw - ax * bx - ay * by - az * bz
