"""Numba kernels of the tree recursions (world-frame spatial algebra).

All spatial vectors are linear-first and expressed in the world frame about the
world origin (legend in ``spatial.py``), so a child's quantities add to its
parent's without transforms. Every kernel writes into preallocated arrays.

Array names (nb bodies, nv velocity coordinates):
  R (nb, 3, 3), p (nb, 3): X_world_body, rotation and origin [m].
  S (nv, 6): motion subspace column of each velocity coordinate, world frame.
  V (nb, 6): body spatial velocity (v_O [m/s], ω [rad/s]).
  A (nb, 6): body spatial acceleration with q̈ = 0 and no gravity (the
      velocity-product terms used for J̇ v) [m/s^2, rad/s^2].
  Iw (nb, 6, 6): body spatial inertia in the world frame about the origin.
  Ic (nb, 6, 6): composite (subtree) inertia, world frame (CRBA).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

FREE = 0
REVOLUTE = 1
PRISMATIC = 2
FIXED_TO_WORLD = 3


# ---------------------------------------------------------------------------
# small vector helpers
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def motion_cross_into(v: np.ndarray, m: np.ndarray, out: np.ndarray) -> None:
    """out = v x m (spatial motion cross product, linear-first)."""
    w0, w1, w2 = v[3], v[4], v[5]
    x0, x1, x2 = _cross(w0, w1, w2, m[0], m[1], m[2])
    y0, y1, y2 = _cross(v[0], v[1], v[2], m[3], m[4], m[5])
    z0, z1, z2 = _cross(w0, w1, w2, m[3], m[4], m[5])
    out[0] = x0 + y0
    out[1] = x1 + y1
    out[2] = x2 + y2
    out[3] = z0
    out[4] = z1
    out[5] = z2


@njit(cache=True)
def force_cross_into(v: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """out = v x* f (spatial force cross product, linear-first)."""
    w0, w1, w2 = v[3], v[4], v[5]
    x0, x1, x2 = _cross(w0, w1, w2, f[0], f[1], f[2])
    y0, y1, y2 = _cross(w0, w1, w2, f[3], f[4], f[5])
    z0, z1, z2 = _cross(v[0], v[1], v[2], f[0], f[1], f[2])
    out[0] = x0
    out[1] = x1
    out[2] = x2
    out[3] = y0 + z0
    out[4] = y1 + z1
    out[5] = y2 + z2


@njit(cache=True, inline="always")
def _mat6_vec(Mat, x, out):
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += Mat[r, c] * x[c]
        out[r] = s


@njit(cache=True, inline="always")
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def _dot6_rows(a, i, b, j):
    """a[i] . b[j] of two (n, 6) arrays, the arithmetic of _dot6, indexed in place (a view of
    a row takes and drops a reference to its array: two atomic operations)."""
    return (a[i, 0] * b[j, 0] + a[i, 1] * b[j, 1] + a[i, 2] * b[j, 2] + a[i, 3] * b[j, 3] + a[i, 4] * b[j, 4]
            + a[i, 5] * b[j, 5])  # fmt: skip


@njit(cache=True)
def _dot6_sub(a, i, U, k, d):
    """a[i] . U[k, d] of an (n, 6) array and an (m, l, 6) array, as _dot6_rows."""
    return (a[i, 0] * U[k, d, 0] + a[i, 1] * U[k, d, 1] + a[i, 2] * U[k, d, 2] + a[i, 3] * U[k, d, 3]
            + a[i, 4] * U[k, d, 4] + a[i, 5] * U[k, d, 5])  # fmt: skip


@njit(cache=True)
def _dot6_vec(U, k, d, b):
    """U[k, d] . b of an (m, l, 6) array and a (6,) vector, as _dot6_rows."""
    return (U[k, d, 0] * b[0] + U[k, d, 1] * b[1] + U[k, d, 2] * b[2] + U[k, d, 3] * b[3] + U[k, d, 4] * b[4]
            + U[k, d, 5] * b[5])  # fmt: skip


@njit(cache=True)
def spd_inverse_into(D, n, out) -> None:
    """out[:n, :n] = D[:n, :n]^-1 for a symmetric positive definite block (a multi-dof
    joint's D = Sᵀ I^A S, n <= 6): Gauss-Jordan elimination in place, no pivoting (D's
    pivots are positive), nothing allocated."""
    for a in range(n):
        for b in range(n):
            out[a, b] = D[a, b]
    for piv in range(n):
        s = 1.0 / out[piv, piv]
        out[piv, piv] = 1.0
        for c in range(n):
            out[piv, c] *= s
        for r in range(n):
            if r != piv:
                f = out[r, piv]
                out[r, piv] = 0.0
                for c in range(n):
                    out[r, c] -= f * out[piv, c]


# ---------------------------------------------------------------------------
# kinematics
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def joint_transform_nb(i, joint_type, joint_axis, R_parent_joint, p_parent_joint, q_index, q):
    """X_parent_body of body i at q: the rotation's entries row by row, then the translation
    [m] (12 floats). Revolute: X_parent_joint Rot(axis, q); prismatic: X_parent_joint shifted
    along the axis by q; free: q's position and quaternion (x, y, z, w), normalised on the fly."""
    jt = joint_type[i]
    qi = q_index[i]
    if jt == FREE:
        x, y, z, w = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
        s = 2.0 / (x * x + y * y + z * z + w * w)
        return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
                s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
                s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y),
                q[qi], q[qi + 1], q[qi + 2])  # fmt: skip
    if jt == REVOLUTE:  # Rodrigues, then X_parent_joint's rotation times it
        c = math.cos(q[qi])
        s = math.sin(q[qi])
        t = 1.0 - c
        x, y, z = joint_axis[i, 0], joint_axis[i, 1], joint_axis[i, 2]
        j00, j01, j02 = t * x * x + c, t * x * y - s * z, t * x * z + s * y
        j10, j11, j12 = t * x * y + s * z, t * y * y + c, t * y * z - s * x
        j20, j21, j22 = t * x * z - s * y, t * y * z + s * x, t * z * z + c
        return (R_parent_joint[i, 0, 0] * j00 + R_parent_joint[i, 0, 1] * j10 + R_parent_joint[i, 0, 2] * j20, R_parent_joint[i, 0, 0] * j01 + R_parent_joint[i, 0, 1] * j11 + R_parent_joint[i, 0, 2] * j21,
                R_parent_joint[i, 0, 0] * j02 + R_parent_joint[i, 0, 1] * j12 + R_parent_joint[i, 0, 2] * j22, R_parent_joint[i, 1, 0] * j00 + R_parent_joint[i, 1, 1] * j10 + R_parent_joint[i, 1, 2] * j20,
                R_parent_joint[i, 1, 0] * j01 + R_parent_joint[i, 1, 1] * j11 + R_parent_joint[i, 1, 2] * j21, R_parent_joint[i, 1, 0] * j02 + R_parent_joint[i, 1, 1] * j12 + R_parent_joint[i, 1, 2] * j22,
                R_parent_joint[i, 2, 0] * j00 + R_parent_joint[i, 2, 1] * j10 + R_parent_joint[i, 2, 2] * j20, R_parent_joint[i, 2, 0] * j01 + R_parent_joint[i, 2, 1] * j11 + R_parent_joint[i, 2, 2] * j21,
                R_parent_joint[i, 2, 0] * j02 + R_parent_joint[i, 2, 1] * j12 + R_parent_joint[i, 2, 2] * j22,
                p_parent_joint[i, 0], p_parent_joint[i, 1], p_parent_joint[i, 2])  # fmt: skip
    d = q[qi] if jt == PRISMATIC else 0.0  # FIXED_TO_WORLD: the joint frame itself
    return (R_parent_joint[i, 0, 0], R_parent_joint[i, 0, 1], R_parent_joint[i, 0, 2], R_parent_joint[i, 1, 0], R_parent_joint[i, 1, 1], R_parent_joint[i, 1, 2], R_parent_joint[i, 2, 0], R_parent_joint[i, 2, 1], R_parent_joint[i, 2, 2],
            p_parent_joint[i, 0] + d * (R_parent_joint[i, 0, 0] * joint_axis[i, 0] + R_parent_joint[i, 0, 1] * joint_axis[i, 1] + R_parent_joint[i, 0, 2] * joint_axis[i, 2]),
            p_parent_joint[i, 1] + d * (R_parent_joint[i, 1, 0] * joint_axis[i, 0] + R_parent_joint[i, 1, 1] * joint_axis[i, 1] + R_parent_joint[i, 1, 2] * joint_axis[i, 2]),
            p_parent_joint[i, 2] + d * (R_parent_joint[i, 2, 0] * joint_axis[i, 0] + R_parent_joint[i, 2, 1] * joint_axis[i, 1] + R_parent_joint[i, 2, 2] * joint_axis[i, 2]))  # fmt: skip


@njit(cache=True, inline="always")
def body_pose_nb(i, k, X, R, p) -> None:
    """X_world_body of body i into R[i], p[i]: its parent k's (already there; -1: the world)
    times X = X_parent_body (joint_transform_nb's 12 floats)."""
    if k < 0:
        for r in range(3):
            R[i, r, 0] = X[3 * r]
            R[i, r, 1] = X[3 * r + 1]
            R[i, r, 2] = X[3 * r + 2]
            p[i, r] = X[9 + r]
        return
    for r in range(3):
        a0, a1, a2 = R[k, r, 0], R[k, r, 1], R[k, r, 2]
        R[i, r, 0] = a0 * X[0] + a1 * X[3] + a2 * X[6]
        R[i, r, 1] = a0 * X[1] + a1 * X[4] + a2 * X[7]
        R[i, r, 2] = a0 * X[2] + a1 * X[5] + a2 * X[8]
        p[i, r] = a0 * X[9] + a1 * X[10] + a2 * X[11] + p[k, r]


@njit(cache=True)
def forward_kinematics_nb(
    parent, joint_type, joint_axis, R_parent_joint, p_parent_joint, q_index, q, R, p
) -> None:
    """X_world_body of every body into R (nb, 3, 3), p (nb, 3)."""
    for i in range(parent.shape[0]):
        X = joint_transform_nb(i, joint_type, joint_axis, R_parent_joint, p_parent_joint, q_index, q)
        body_pose_nb(i, parent[i], X, R, p)


@njit(cache=True, inline="always")
def body_subspace_nb(i, joint_type, joint_axis, v_index, R, p, S) -> None:
    """Body i's rows of S (motion_subspace_nb) from its pose R[i], p[i]."""
    jt = joint_type[i]
    vi = v_index[i]
    if jt == FREE:
        for j in range(3):
            a0, a1, a2 = R[i, 0, j], R[i, 1, j], R[i, 2, j]
            S[vi + j, 0] = a0
            S[vi + j, 1] = a1
            S[vi + j, 2] = a2
            S[vi + j, 3] = 0.0
            S[vi + j, 4] = 0.0
            S[vi + j, 5] = 0.0
            c0, c1, c2 = _cross(p[i, 0], p[i, 1], p[i, 2], a0, a1, a2)
            S[vi + 3 + j, 0] = c0
            S[vi + 3 + j, 1] = c1
            S[vi + 3 + j, 2] = c2
            S[vi + 3 + j, 3] = a0
            S[vi + 3 + j, 4] = a1
            S[vi + 3 + j, 5] = a2
    elif jt == REVOLUTE or jt == PRISMATIC:
        a0 = R[i, 0, 0] * joint_axis[i, 0] + R[i, 0, 1] * joint_axis[i, 1] + R[i, 0, 2] * joint_axis[i, 2]
        a1 = R[i, 1, 0] * joint_axis[i, 0] + R[i, 1, 1] * joint_axis[i, 1] + R[i, 1, 2] * joint_axis[i, 2]
        a2 = R[i, 2, 0] * joint_axis[i, 0] + R[i, 2, 1] * joint_axis[i, 1] + R[i, 2, 2] * joint_axis[i, 2]
        if jt == REVOLUTE:
            c0, c1, c2 = _cross(p[i, 0], p[i, 1], p[i, 2], a0, a1, a2)
            S[vi, 0] = c0
            S[vi, 1] = c1
            S[vi, 2] = c2
            S[vi, 3] = a0
            S[vi, 4] = a1
            S[vi, 5] = a2
        else:
            S[vi, 0] = a0
            S[vi, 1] = a1
            S[vi, 2] = a2
            S[vi, 3] = 0.0
            S[vi, 4] = 0.0
            S[vi, 5] = 0.0



@njit(cache=True, inline="always")
def body_motion_nb(i, k, ndof, v_index, S, v, V, A) -> None:
    """Body i's spatial velocity V[i] = V[k] + S_i qd_i and velocity-product acceleration
    A[i] = A[k] + V[i] x (S_i qd_i) (velocities_nb), from its parent k's (k < 0: the root)."""
    vi = v_index[i]
    m0 = m1 = m2 = m3 = m4 = m5 = 0.0  # S_i qd_i
    for d in range(ndof[i]):
        qd = v[vi + d]
        m0 += S[vi + d, 0] * qd
        m1 += S[vi + d, 1] * qd
        m2 += S[vi + d, 2] * qd
        m3 += S[vi + d, 3] * qd
        m4 += S[vi + d, 4] * qd
        m5 += S[vi + d, 5] * qd
    if k < 0:
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = m0, m1, m2, m3, m4, m5
    else:
        V[i, 0], V[i, 1], V[i, 2] = V[k, 0] + m0, V[k, 1] + m1, V[k, 2] + m2
        V[i, 3], V[i, 4], V[i, 5] = V[k, 3] + m3, V[k, 4] + m4, V[k, 5] + m5
    w0, w1, w2 = V[i, 3], V[i, 4], V[i, 5]
    x0, x1, x2 = _cross(w0, w1, w2, m0, m1, m2)  # V x (S qd) = (ω x m_v + v x m_ω, ω x m_ω)
    y0, y1, y2 = _cross(V[i, 0], V[i, 1], V[i, 2], m3, m4, m5)
    z0, z1, z2 = _cross(w0, w1, w2, m3, m4, m5)
    if k < 0:
        A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5] = x0 + y0, x1 + y1, x2 + y2, z0, z1, z2
    else:
        A[i, 0], A[i, 1], A[i, 2] = A[k, 0] + (x0 + y0), A[k, 1] + (x1 + y1), A[k, 2] + (x2 + y2)
        A[i, 3], A[i, 4], A[i, 5] = A[k, 3] + z0, A[k, 4] + z1, A[k, 5] + z2

@njit(cache=True)
def motion_subspace_nb(joint_type, joint_axis, v_index, R, p, S) -> None:
    """World-frame motion subspace rows S (nv, 6) from the body poses.

    FREE: base twist coordinates are in the base frame (Pinocchio), so the
    columns are the base axes moved to the world origin. REVOLUTE: (p x a, a)
    with a the world axis through the body origin. PRISMATIC: (a, 0).
    """
    for i in range(joint_type.shape[0]):
        body_subspace_nb(i, joint_type, joint_axis, v_index, R, p, S)


@njit(cache=True)
def velocities_nb(parent, ndof, v_index, S, v, V, A) -> None:
    """Body spatial velocities V and velocity-product accelerations A (q̈ = 0, no gravity).

    V_i = V_parent + S_i qd_i; A_i = A_parent + V_i x (S_i qd_i), since a
    body-fixed motion vector m changes as V_i x m in the world frame (body_motion_nb).
    """
    for i in range(parent.shape[0]):
        body_motion_nb(i, parent[i], ndof, v_index, S, v, V, A)


@njit(cache=True, inline="always")
def body_inertia_nb(i, mass, com, inertia_com, R, p, I) -> None:
    """Body i's spatial inertia in the world frame about the origin into I[i] (I: (nb, 6, 6)),
    from its pose R[i], p[i]: (m 1, -m [c]x; m [c]x, R I_c Rᵀ - m [c]x [c]x), c its CoM in the
    world. Indexed in place: a view I[i] would take and drop a reference to I."""
    m = mass[i]
    c0 = R[i, 0, 0] * com[i, 0] + R[i, 0, 1] * com[i, 1] + R[i, 0, 2] * com[i, 2] + p[i, 0]
    c1 = R[i, 1, 0] * com[i, 0] + R[i, 1, 1] * com[i, 1] + R[i, 1, 2] * com[i, 2] + p[i, 1]
    c2 = R[i, 2, 0] * com[i, 0] + R[i, 2, 1] * com[i, 1] + R[i, 2, 2] * com[i, 2] + p[i, 2]
    for s in range(3):  # R I_c Rᵀ, column by column
        t0 = inertia_com[i, 0, 0] * R[i, s, 0] + inertia_com[i, 0, 1] * R[i, s, 1] + inertia_com[i, 0, 2] * R[i, s, 2]
        t1 = inertia_com[i, 1, 0] * R[i, s, 0] + inertia_com[i, 1, 1] * R[i, s, 1] + inertia_com[i, 1, 2] * R[i, s, 2]
        t2 = inertia_com[i, 2, 0] * R[i, s, 0] + inertia_com[i, 2, 1] * R[i, s, 1] + inertia_com[i, 2, 2] * R[i, s, 2]
        for r in range(3):
            I[i, 3 + r, 3 + s] = R[i, r, 0] * t0 + R[i, r, 1] * t1 + R[i, r, 2] * t2
    # m [c]x below, -m [c]x above; m (|c|^2 1 - c cᵀ) = -m [c]x [c]x added to the rotational block
    mc0, mc1, mc2 = m * c0, m * c1, m * c2
    I[i, 0, 0], I[i, 0, 1], I[i, 0, 2], I[i, 1, 0], I[i, 1, 1], I[i, 1, 2], I[i, 2, 0], I[i, 2, 1], I[i, 2, 2] = m, 0.0, 0.0, 0.0, m, 0.0, 0.0, 0.0, m
    I[i, 0, 3], I[i, 0, 4], I[i, 0, 5], I[i, 1, 3], I[i, 1, 4], I[i, 1, 5], I[i, 2, 3], I[i, 2, 4], I[i, 2, 5] = 0.0, mc2, -mc1, -mc2, 0.0, mc0, mc1, -mc0, 0.0
    I[i, 3, 0], I[i, 3, 1], I[i, 3, 2], I[i, 4, 0], I[i, 4, 1], I[i, 4, 2], I[i, 5, 0], I[i, 5, 1], I[i, 5, 2] = 0.0, -mc2, mc1, mc2, 0.0, -mc0, -mc1, mc0, 0.0
    cc = c0 * c0 + c1 * c1 + c2 * c2
    I[i, 3, 3] += m * (cc - c0 * c0)
    I[i, 3, 4] += m * (0.0 - c0 * c1)
    I[i, 3, 5] += m * (0.0 - c0 * c2)
    I[i, 4, 3] += m * (0.0 - c1 * c0)
    I[i, 4, 4] += m * (cc - c1 * c1)
    I[i, 4, 5] += m * (0.0 - c1 * c2)
    I[i, 5, 3] += m * (0.0 - c2 * c0)
    I[i, 5, 4] += m * (0.0 - c2 * c1)
    I[i, 5, 5] += m * (cc - c2 * c2)


@njit(cache=True, inline="always")
def _inertia_times_row(I, i, X, j):
    """I[i] @ X[j] as six floats: I (n, 6, 6), X (m, 6), indexed in place (no views), the
    columns summed in order."""
    t0 = t1 = t2 = t3 = t4 = t5 = 0.0
    for c in range(6):
        x = X[j, c]
        t0 += I[i, 0, c] * x
        t1 += I[i, 1, c] * x
        t2 += I[i, 2, c] * x
        t3 += I[i, 3, c] * x
        t4 += I[i, 4, c] * x
        t5 += I[i, 5, c] * x
    return t0, t1, t2, t3, t4, t5


@njit(cache=True, inline="always")
def body_bias_force_nb(i, I, V):
    """Body i's velocity-product force V_i x* (I_i V_i) (I (nb, 6, 6): world-frame inertias
    about the origin; V (nb, 6): velocities; linear-first): with h = I_i V_i, (ω x h_v,
    ω x h_ω + v x h_v), as six floats."""
    h0, h1, h2, h3, h4, h5 = _inertia_times_row(I, i, V, i)
    w0, w1, w2 = V[i, 3], V[i, 4], V[i, 5]
    x0, x1, x2 = _cross(w0, w1, w2, h0, h1, h2)
    y0, y1, y2 = _cross(w0, w1, w2, h3, h4, h5)
    z0, z1, z2 = _cross(V[i, 0], V[i, 1], V[i, 2], h0, h1, h2)
    return x0, x1, x2, y0 + z0, y1 + z1, y2 + z2


@njit(cache=True, inline="always")
def body_force_nb(i, Iw, acc, V, f) -> None:
    """The RNEA's force on body i, f[i] = Iw_i acc_i + V_i x* (Iw_i V_i) (Iw (nb, 6, 6), acc, V,
    f (nb, 6), world frame, linear-first), rows indexed in place: a view (Iw[i], f[i]) would
    take and drop a reference to its array, a scratch array would be allocated."""
    h0, h1, h2, h3, h4, h5 = _inertia_times_row(Iw, i, acc, i)
    b0, b1, b2, b3, b4, b5 = body_bias_force_nb(i, Iw, V)
    f[i, 0] = h0 + b0
    f[i, 1] = h1 + b1
    f[i, 2] = h2 + b2
    f[i, 3] = h3 + b3
    f[i, 4] = h4 + b4
    f[i, 5] = h5 + b5


@njit(cache=True)
def world_inertias_nb(mass, com, inertia_com, R, p, Iw) -> None:
    """Spatial inertias Iw (nb, 6, 6) of the bodies in the world frame about the origin."""
    for i in range(mass.shape[0]):
        body_inertia_nb(i, mass, com, inertia_com, R, p, Iw)


# ---------------------------------------------------------------------------
# dynamics
# ---------------------------------------------------------------------------


@njit(cache=True)
def composite_inertias_nb(parent, Iw, Ic) -> None:
    """Ic_i = sum of Iw over the subtree of i (world frame: plain sums)."""
    nb = parent.shape[0]
    for i in range(nb):
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = Iw[i, r, c]
    for i in range(nb - 1, 0, -1):
        k = parent[i]
        if k >= 0:
            for r in range(6):
                for c in range(6):
                    Ic[k, r, c] += Ic[i, r, c]


@njit(cache=True)
def mass_matrix_nb(parent, ndof, v_index, S, Ic, M) -> None:
    """Composite-rigid-body joint-space inertia M (nv, nv), from Ic and S.

    M[j, k] = S_j^T Ic_{body(k)} S_k for j a dof of body(k) or of an ancestor.
    """
    nb = parent.shape[0]
    F = np.empty(6)
    for i in range(nb):
        vi = v_index[i]
        for d in range(ndof[i]):
            kk = vi + d
            _mat6_vec(Ic[i], S[kk], F)
            # own dofs (d2 <= d), then the ancestors' dofs
            for d2 in range(d + 1):
                val = _dot6(S[vi + d2], F)
                M[vi + d2, kk] = val
                M[kk, vi + d2] = val
            j = parent[i]
            while j >= 0:
                vj = v_index[j]
                for d2 in range(ndof[j]):
                    val = _dot6(S[vj + d2], F)
                    M[vj + d2, kk] = val
                    M[kk, vj + d2] = val
                j = parent[j]


@njit(cache=True)
def rnea_nb(parent, ndof, v_index, S, Iw, V, A, qdd, a_root, tau, acc, f) -> None:
    """Recursive Newton-Euler: tau = M qdd + b(q, v) with the root accelerating as a_root.

    A: velocity-product accelerations (from velocities_nb); a_root: (6,) spatial
    acceleration added to every body, (-g, 0) to include gravity. acc, f:
    (nb, 6) work arrays (body accelerations, body forces on exit).
    """
    nb = parent.shape[0]
    for i in range(nb):
        k = parent[i]
        vi = v_index[i]
        # acc_i = acc_parent + c_i + S_i qdd_i, with c_i = A_i - A_parent
        for r in range(6):
            if k >= 0:
                acc[i, r] = acc[k, r] + A[i, r] - A[k, r]
            else:
                acc[i, r] = a_root[r] + A[i, r]
        for d in range(ndof[i]):
            for r in range(6):
                acc[i, r] += S[vi + d, r] * qdd[vi + d]
        body_force_nb(i, Iw, acc, V, f)  # nothing allocated: the impulse passes of a step run this
    for i in range(nb - 1, -1, -1):
        vi = v_index[i]
        for d in range(ndof[i]):
            tau[vi + d] = _dot6(S[vi + d], f[i])
        k = parent[i]
        if k >= 0:
            for r in range(6):
                f[k, r] += f[i, r]


@njit(cache=True)
def aba_factor_nb(parent, ndof, v_index, S, Iw, armature, IA, Ia, U, Dinv) -> None:
    """Articulated-body inertias (pass 2 of ABA, the part that depends on q only).
    armature (nv,): rotor inertia added to each joint's own inertia D_i [kg m^2 or kg]
    (zeros: the rigid bodies alone).

    Seed 004, Eq. 1: the force from the parent on body i is f_i = I^A_i a_i + Z^A_i
    as if body i and its subtree were one rigid body; I^A is computed leaves to
    root here, Z^A (= p^A) in aba_solve_nb (the seed's passes 2 and 3).

    IA_i = Iw_i + sum_children Ia_c; U_i = IA_i S_i (stored as rows, (ndof, 6));
    D_i = S_i^T U_i, stored inverted; Ia_i = IA_i - U_i D_i^-1 U_i^T.
    """
    nb = parent.shape[0]
    for i in range(nb):
        for r in range(6):
            for c in range(6):
                IA[i, r, c] = Iw[i, r, c]
    for i in range(nb - 1, -1, -1):
        n = ndof[i]
        vi = v_index[i]
        for d in range(n):
            _mat6_vec(IA[i], S[vi + d], U[i, d])
        D = Dinv[i]  # D_i, inverted in place (nothing allocated)
        for a in range(n):
            for b in range(n):
                D[a, b] = _dot6(S[vi + a], U[i, b])
            D[a, a] += armature[vi + a]
        if n == 1:
            D[0, 0] = 1.0 / D[0, 0]
        elif n > 1:
            spd_inverse_into(D, n, D)  # it copies D into its output first: in place is exact
        for r in range(6):
            for c in range(6):
                Ia[i, r, c] = IA[i, r, c]
        for a in range(n):
            for b in range(n):
                w = Dinv[i, a, b]
                for r in range(6):
                    ua = U[i, a, r] * w
                    for c in range(6):
                        Ia[i, r, c] -= ua * U[i, b, c]
        k = parent[i]
        if k >= 0:
            for r in range(6):
                for c in range(6):
                    IA[k, r, c] += Ia[i, r, c]


@njit(cache=True)
def aba_solve_nb(parent, ndof, v_index, S, Ia, U, Dinv, A, pA, a_root, tau, qdd, acc, u) -> None:
    """Passes 2 (bias part, Z^A of seed 004 Eq. 1) and 3 of ABA: qdd for joint forces tau.

    External (e.g. contact) wrenches enter pass 2 by subtracting them from the
    body bias forces, as seed 004 adds the penalty contact forces in step 2.

    A: velocity-product accelerations (joint bias c_i = A_i - A_parent);
    pA (nb, 6): on entry the body bias forces p_i = V_i x* Iw_i V_i - f_ext_i,
    overwritten; a_root: (6,) root acceleration ((-g, 0) for gravity);
    acc (nb, 6) body accelerations on exit; u (nv,) work.
    """
    nb = parent.shape[0]
    # nothing allocated (a contact-space matrix solves once per row): rows indexed in place,
    # the body's acceleration built in acc[i], D⁻¹'s right-hand side in u, D⁻¹ u of pass 2 in qdd
    for i in range(nb - 1, -1, -1):
        n = ndof[i]
        vi = v_index[i]
        for d in range(n):
            u[vi + d] = tau[vi + d] - _dot6(S[vi + d], pA[i])
        k = parent[i]
        if k >= 0:  # p^a = Ia c + p^A + U D⁻¹ u, c = A_i - A_k, to the parent
            for a in range(n):  # D⁻¹ u, held in q̈'s rows until pass 3 writes them
                s = 0.0
                for b in range(n):
                    s += Dinv[i, a, b] * u[vi + b]
                qdd[vi + a] = s
            for r in range(6):
                t = 0.0
                for col in range(6):
                    t += Ia[i, r, col] * (A[i, col] - A[k, col])
                t += pA[i, r]
                for a in range(n):
                    t += U[i, a, r] * qdd[vi + a]
                pA[k, r] += t
    for i in range(nb):
        n = ndof[i]
        vi = v_index[i]
        k = parent[i]
        for r in range(6):  # a' = a_k + c_i
            if k >= 0:
                acc[i, r] = acc[k, r] + A[i, r] - A[k, r]
            else:
                acc[i, r] = a_root[r] + A[i, r]
        for a in range(n):  # u - Uᵀ a', then q̈ = D⁻¹ (u - Uᵀ a')
            u[vi + a] = u[vi + a] - _dot6(U[i, a], acc[i])
        for a in range(n):
            s = 0.0
            for b in range(n):
                s += Dinv[i, a, b] * u[vi + b]
            qdd[vi + a] = s
        for a in range(n):
            for r in range(6):
                acc[i, r] += S[vi + a, r] * qdd[vi + a]


@njit(cache=True)
def body_bias_forces_nb(Iw, V, p_out) -> None:
    """p_i = V_i x* (Iw_i V_i) for every body (ABA pass 1 bias forces)."""
    nb = Iw.shape[0]
    h = np.empty(6)
    for i in range(nb):
        _mat6_vec(Iw[i], V[i], h)
        force_cross_into(V[i], h, p_out[i])


# ---------------------------------------------------------------------------
# point quantities (usable from other numba code)
# ---------------------------------------------------------------------------


@njit(cache=True)
def point_jacobian_into(parent, ndof, v_index, S, body, point, out) -> None:
    """Jacobian (6, nv) of a point fixed to ``body`` at ``point`` (world) [m].

    Rows 0-2: linear velocity of the point, rows 3-5: angular velocity, both in
    world axes (Pinocchio LOCAL_WORLD_ALIGNED). ``out`` is fully overwritten.
    """
    nv = out.shape[1]
    for r in range(6):
        for k in range(nv):
            out[r, k] = 0.0
    px, py, pz = point[0], point[1], point[2]
    j = body
    while j >= 0:
        vj = v_index[j]
        for d in range(ndof[j]):
            k = vj + d
            wx, wy, wz = S[k, 3], S[k, 4], S[k, 5]
            cx, cy, cz = _cross(wx, wy, wz, px, py, pz)
            out[0, k] = S[k, 0] + cx
            out[1, k] = S[k, 1] + cy
            out[2, k] = S[k, 2] + cz
            out[3, k] = wx
            out[4, k] = wy
            out[5, k] = wz
        j = parent[j]


@njit(cache=True, inline="always")
def point_motion_nb(V, A, body, point) -> tuple:
    """(v_p, a_p): the classical velocity and linear acceleration (world axes) of the point
    fixed to ``body`` at ``point`` (world) [m], as two 3-tuples [m/s, m/s^2], from the bodies'
    spatial velocities V and accelerations A (nb, 6) (world axes about the origin):
    v_p = v_O + ω x p, a_p = a_O + α x p + ω x v_p."""
    px, py, pz = point[0], point[1], point[2]
    wx, wy, wz = V[body, 3], V[body, 4], V[body, 5]
    ox, oy, oz = _cross(wx, wy, wz, px, py, pz)
    vx, vy, vz = V[body, 0] + ox, V[body, 1] + oy, V[body, 2] + oz
    tx, ty, tz = _cross(A[body, 3], A[body, 4], A[body, 5], px, py, pz)
    ux, uy, uz = _cross(wx, wy, wz, vx, vy, vz)
    return (vx, vy, vz), (A[body, 0] + tx + ux, A[body, 1] + ty + uy, A[body, 2] + tz + uz)


@njit(cache=True)
def point_drift_into(V, A, body, point, out) -> None:
    """J̇ v of a point fixed to ``body`` at ``point`` (world) [m], shape (6,).

    Classical linear acceleration of the point and angular acceleration of the
    body with q̈ = 0 and no gravity: a_p = a_O + α x p + ω x (v_O + ω x p)
    (point_motion_nb with A the velocity-product accelerations).
    """
    _, a = point_motion_nb(V, A, body, point)
    out[0], out[1], out[2] = a
    out[3] = A[body, 3]
    out[4] = A[body, 4]
    out[5] = A[body, 5]


@njit(cache=True)
def center_of_mass_nb(mass, com, R, p, out) -> float:
    """Whole-body centre of mass (world) into out (3,); returns the total mass."""
    total = 0.0
    out[0] = 0.0
    out[1] = 0.0
    out[2] = 0.0
    for i in range(mass.shape[0]):
        m = mass[i]
        total += m
        for r in range(3):
            out[r] += m * (R[i, r, 0] * com[i, 0] + R[i, r, 1] * com[i, 1] + R[i, r, 2] * com[i, 2] + p[i, r])
    for r in range(3):
        out[r] /= total
    return total


@njit(cache=True)
def com_jacobian_nb(dof_body, S, Ic, total_mass, out) -> None:
    """J_com (3, nv): column k is the linear momentum of the subtree of the
    body moved by dof k, per unit rate, over the total mass: (Ic S_k)_lin / m."""
    nv = S.shape[0]
    for k in range(nv):
        b = dof_body[k]
        for r in range(3):
            s = 0.0
            for c in range(6):
                s += Ic[b, r, c] * S[k, c]
            out[r, k] = s / total_mass


# ---------------------------------------------------------------------------
# configuration space
# ---------------------------------------------------------------------------


@njit(cache=True)
def integrate_nb(joint_type, q_index, v_index, q, v, dt, out) -> None:
    """q ⊕ v dt into out (nq,): joints add; the free base follows exp on SE(3)
    of the base-frame twist (as pinocchio.integrate), quaternion renormalised."""
    nb = joint_type.shape[0]
    for i in range(nb):
        jt = joint_type[i]
        qi = q_index[i]
        vi = v_index[i]
        if jt == REVOLUTE or jt == PRISMATIC:
            out[qi] = q[qi] + v[vi] * dt
        elif jt == FREE:
            vx, vy, vz = v[vi] * dt, v[vi + 1] * dt, v[vi + 2] * dt
            wx, wy, wz = v[vi + 3] * dt, v[vi + 4] * dt, v[vi + 5] * dt
            th2 = wx * wx + wy * wy + wz * wz
            th = math.sqrt(th2)
            if th < 1e-6:
                a = 0.5 - th2 / 24.0
                b = 1.0 / 6.0 - th2 / 120.0
                half_sinc = 0.5 - th2 / 48.0
                half_cos = 1.0 - th2 / 8.0
            else:
                a = (1.0 - math.cos(th)) / th2
                b = (th - math.sin(th)) / (th2 * th)
                half_sinc = math.sin(0.5 * th) / th
                half_cos = math.cos(0.5 * th)
            # translation in the base frame: V(w) v = v + a w x v + b w x (w x v)
            c0, c1, c2 = _cross(wx, wy, wz, vx, vy, vz)
            d0, d1, d2 = _cross(wx, wy, wz, c0, c1, c2)
            t0 = vx + a * c0 + b * d0
            t1 = vy + a * c1 + b * d1
            t2 = vz + a * c2 + b * d2
            x, y, z, w = q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6]
            n = math.sqrt(x * x + y * y + z * z + w * w)
            x, y, z, w = x / n, y / n, z / n, w / n
            # R(quat) t, then quat * dq
            tx, ty, tz = _cross(x, y, z, t0, t1, t2)
            tx, ty, tz = tx + w * t0, ty + w * t1, tz + w * t2
            ux, uy, uz = _cross(x, y, z, tx, ty, tz)
            out[qi] = q[qi] + t0 + 2.0 * ux
            out[qi + 1] = q[qi + 1] + t1 + 2.0 * uy
            out[qi + 2] = q[qi + 2] + t2 + 2.0 * uz
            bx, by, bz, bw = half_sinc * wx, half_sinc * wy, half_sinc * wz, half_cos
            nx = w * bx + x * bw + y * bz - z * by
            ny = w * by - x * bz + y * bw + z * bx
            nz = w * bz + x * by - y * bx + z * bw
            nw = w * bw - x * bx - y * by - z * bz
            nn = math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
            out[qi + 3] = nx / nn
            out[qi + 4] = ny / nn
            out[qi + 5] = nz / nn
            out[qi + 6] = nw / nn


@njit(cache=True)
def update_all_nb(
    parent, joint_type, joint_axis, R_parent_joint, p_parent_joint, mass, com, inertia_com,
    q_index, v_index, ndof, a_gravity, q, v, R, p, S, V, A, Iw, Ic, M, b, acc, f, zero_nv,
) -> None:
    """The simulator's per-step kinematics and dynamics in one call.

    Fills X_world_body (R, p), S, V, A (J̇v terms), Iw, Ic, the mass matrix M
    (nv, nv) and the bias forces b (nv,) = C(q, v) v + g(q) (RNEA with q̈ = 0;
    a_gravity = (-g, 0) makes every body accelerate against gravity).
    zero_nv: an (nv,) array of zeros (the q̈ of the bias RNEA; unused: the fused passes
    below skip its terms).

    The same arithmetic as forward_kinematics_nb, motion_subspace_nb, velocities_nb,
    world_inertias_nb, composite_inertias_nb, mass_matrix_nb and rnea_nb one after the other,
    fused into one pass from the root (poses, S, V, A, Iw, the RNEA's accelerations and body
    forces) and one towards it (b, Ic, the CRBA's columns of M): each body's data is touched
    while it is in cache.
    """
    nb = parent.shape[0]
    for i in range(nb):
        k = parent[i]
        X = joint_transform_nb(i, joint_type, joint_axis, R_parent_joint, p_parent_joint, q_index, q)
        body_pose_nb(i, k, X, R, p)
        body_subspace_nb(i, joint_type, joint_axis, v_index, R, p, S)
        body_motion_nb(i, k, ndof, v_index, S, v, V, A)
        body_inertia_nb(i, mass, com, inertia_com, R, p, Iw)
        # RNEA from the root with q̈ = 0: acc_i = acc_k + (A_i - A_k); f_i = Iw acc_i + V_i x* Iw V_i
        for r in range(6):
            acc[i, r] = a_gravity[r] + A[i, r] if k < 0 else acc[k, r] + A[i, r] - A[k, r]
        body_force_nb(i, Iw, acc, V, f)
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = Iw[i, r, c]
    for i in range(nb - 1, -1, -1):
        k = parent[i]
        vi = v_index[i]
        for d in range(ndof[i]):
            b[vi + d] = _dot6_rows(S, vi + d, f, i)
        # the CRBA's columns of body i's dofs: Ic_i is complete (its subtree has been added)
        for d in range(ndof[i]):
            kk = vi + d
            F0, F1, F2, F3, F4, F5 = _inertia_times_row(Ic, i, S, kk)
            for d2 in range(d + 1):
                j2 = vi + d2
                val = S[j2, 0] * F0 + S[j2, 1] * F1 + S[j2, 2] * F2 + S[j2, 3] * F3 + S[j2, 4] * F4 + S[j2, 5] * F5
                M[j2, kk] = val
                M[kk, j2] = val
            j = k
            while j >= 0:
                vj = v_index[j]
                for d2 in range(ndof[j]):
                    j2 = vj + d2
                    val = S[j2, 0] * F0 + S[j2, 1] * F1 + S[j2, 2] * F2 + S[j2, 3] * F3 + S[j2, 4] * F4 + S[j2, 5] * F5
                    M[j2, kk] = val
                    M[kk, j2] = val
                j = parent[j]
        if k >= 0:
            for r in range(6):
                f[k, r] += f[i, r]
                for c in range(6):
                    Ic[k, r, c] += Ic[i, r, c]


@njit(cache=True)
def contact_space_matrix_nb(parent, ndof, v_index, S, Ia, U, Dinv, J_c, out, zero_A, pA, qdd, acc, u) -> None:
    """out (m, m) = J_c M^-1 J_c^T by unit test forces (Kokkevis; seed 002, Eq. 3-4).

    Needs the articulated inertias of aba_factor_nb. Test force e_j on contact
    row j is the joint force J_c[j]; with zero velocity and no gravity a0 = 0,
    so column j is J_c qdd_j (Eq. 4). zero_A: (nb, 6) zeros; pA (nb, 6), qdd,
    u (nv,), acc (nb, 6): work arrays.
    """
    m = J_c.shape[0]
    nv = J_c.shape[1]
    for j in range(m):
        for i in range(pA.shape[0]):
            for r in range(6):
                pA[i, r] = 0.0
        aba_solve_nb(parent, ndof, v_index, S, Ia, U, Dinv, zero_A, pA, zero_A[0], J_c[j], qdd, acc, u)
        for i in range(m):
            s = 0.0
            for k in range(nv):
                s += J_c[i, k] * qdd[k]
            out[i, j] = s
