"""Time integration of one step: fourth-order Runge-Kutta on the configuration manifold.

Why (docs/integration.md has the measurements): semi-implicit Euler, which the first
version used, treats the velocity-product terms (Coriolis, centripetal, gyroscopic)
explicitly and gains energy on every spinning or swinging body: +0.5 % to +13 % of the
kinetic energy in 2 s of free flight of the humanoid, a spinning cube tripling its energy
in 1 s. A fourth-order scheme makes the local error O((ω dt)^5): at dt = 1 ms and 5 rad/s
that is 3e-12 per step, so energy and momentum stay conserved to the 1e-6 level over
seconds, at the price of three more articulated-body evaluations per step. Where some
coordinate would move by more than FAST_MOTION within the step (a limb whirling at 30 rad/s
and more at 1 ms), (ω dt)^5 is no longer small, and the step is taken in two halves
(held_step_nb).

The step: the constraint solve of seed 000 (contacts, impulses, joint-limit rows) gives
the stage-1 acceleration a1 at (q, v) (v after any impulse, Eq. 18-19) and with it the
generalised constraint force Hᵀλ = M (a1 - a0). That force, the joint torques and any
external force are held constant over the step (the solve's forces are step averages, as
seed 002 Eq. 12 takes them); stages 2-4 evaluate the free dynamics
M(q)^-1 (τ_c + Σ J_k(q)ᵀ w_k - D v - b(q, v)) by the articulated-body method (seed 004
Eq. 1) at the intermediate states. Joint damping D v is evaluated at every stage.

How a force is held decides the work it does over the step. A contact's wrench w_k is held
fixed in the world axes on the material point of its body where the solve applied it
(HeldWrenches): its work is then f . Δx + n . Δθ of that point, nothing for a contact that
sticks. Held in the generalised coordinates instead, Jᵀ(q0) w does the work
w . J(q0) Δq, which differs from the point's motion by w . J̇ v dt²/2: on a foot turning
at 80 rad/s under a 450 N contact that was +0.19 J on every step (g1 flailing). A rolling
sphere's or cylinder's contact point moves over its surface: its wrench is held on the
centre, acting the radius below it. The other rows (joint friction, range-of-motion groups)
are held in the generalised coordinates, each free body's share fixed in the world axes. A
joint held on its stop is locked at its solved acceleration for the stages instead
(lock_stops_nb): a stop's force held over a violent step can outgrow what holds the joint
there and throw it off, doing work.

Every free body lives on SE(3): the stage configurations are q ⊕ Θ with Θ in each free
body's body-frame twist coordinates, and the stage velocities enter Θ through dexp⁻¹ (the
Runge-Kutta-Munthe-Kaas method), so the scheme keeps its fourth order on the group:
    Θ̇ = dexp⁻¹_{-Θ}(ξ) = ξ + ½ [Θ, ξ] + 1/12 [Θ, [Θ, ξ]] + O(|Θ|³ |ξ|),
with [·, ·] the se(3) bracket in linear-first coordinates,
    [(v₁, ω₁), (v₂, ω₂)] = (ω₁ × v₂ + v₁ × ω₂, ω₁ × ω₂).
Joint coordinates are a vector space: their stage increments are plain.

A state at rest: when over the step no coordinate would move by more than REST_MOTION and no
velocity would change by more than REST_VELOCITY_CHANGE (|v_i| dt and |a1_i| dt), every stage
would see the state of the first one to within those amounts, and the stages would return a1
to the same order: the velocity-product terms are quadratic in v, the damping force is
linearly implicit (its share of a stage's acceleration changes by at most the stage's
velocity change over dt), and the configuration-dependent terms change with the 1e-13 of
motion. The step is then the one RK4 gives for a constant acceleration, v' = v + a1 dt,
q' = q ⊕ (v + a1 dt / 2) dt, without evaluating the stages (the bundled humanoid standing:
the two differ by 9e-16 m/s, the stages cost 12 µs of its 31 µs step). A robot that moves at
all is integrated by the stages.

Symbols: q (nq,), v (nv,) as in docs/conventions.md; a = v̇ (nv,); τ_c (nv,) generalised
forces held over the step [N, N m]; D (nv,) viscous coefficients; Θ (nv,) increments of
the stage configurations (free bodies: body-frame twist × time).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.dynamics.kernels import (
    FREE,
    _cross,
    _dot6_rows,
    _dot6_sub,
    _dot6_vec,
    body_bias_force_nb,
    body_inertia_nb,
    body_pose_nb,
    body_motion_nb,
    body_subspace_nb,
    integrate_nb,
    joint_transform_nb,
    spd_inverse_into,
)
from humanoid_sim.dynamics.kinematic_tree import KinematicTree

__all__ = [
    "FAST_MOTION",
    "REST_MOTION",
    "REST_VELOCITY_CHANGE",
    "HeldWrenches",
    "StageWork",
    "at_rest_nb",
    "free_acceleration_nb",
    "held_forces_nb",
    "held_step_nb",
    "held_wrenches",
    "hold_wrench_nb",
    "lock_stops_nb",
    "release_held_wrenches_nb",
    "rest_step_nb",
    "rk4_step_nb",
    "runge_kutta_nb",
    "stage_work",
]

# A state at rest over a step (module docstring): no coordinate moves by more than REST_MOTION
# [m or rad] (|v_i| dt) and no velocity changes by more than REST_VELOCITY_CHANGE [m/s or
# rad/s] (|a1_i| dt). The bundled humanoid standing on its rigid contacts moves 4e-17 and
# changes 5e-14 per step; any motion a controller makes is many orders above both.
REST_MOTION = 1e-13
REST_VELOCITY_CHANGE = 1e-10
# A step in which some coordinate would move by more than FAST_MOTION [rad or m] (|v_i| dt) is
# taken as two half steps (held_step_nb): 30 rad/s at dt = 1 ms. The bundled humanoid's passive
# fall (joints below 11 rad/s) never reaches it; limbs flailing under full-effort torques do.
FAST_MOTION = 0.03


class HeldWrenches(NamedTuple):
    """Wrenches held fixed in the world axes over a step, each on a material point of a
    body (module docstring): the contacts' solved wrenches.

    body (K,) int64: the body; point (K, 3): the material point in the body's frame [m];
    offset (K, 3): where the wrench acts from that point, world axes [m] (0, or from a
    rolling sphere's or cylinder's centre down to its contact point); wrench (K, 6): (f, n)
    in world axes, n about the point of action [N, N m]; count (1,) int64: the entries in use."""

    body: np.ndarray
    point: np.ndarray
    offset: np.ndarray
    wrench: np.ndarray
    count: np.ndarray


def held_wrenches(capacity: int) -> HeldWrenches:
    """Room for ``capacity`` held wrenches, none in use."""
    K = max(int(capacity), 1)
    return HeldWrenches(np.zeros(K, np.int64), np.zeros((K, 3)), np.zeros((K, 3)), np.zeros((K, 6)), np.zeros(1, np.int64))


class StageWork(NamedTuple):
    """Buffers of the stage evaluations for one model (allocated once per simulator).

    R, p, S, V, A: kinematics at a stage state (see DynamicsWorkspace);
    armature (nv,): rotor inertia on the joint diagonal of M [kg m^2 or kg];
    IA, pA, U, Dinv, u, acc: articulated-body work arrays (free_acceleration_nb);
    a_gravity (6,): (-g, 0);
    q_s (nq,), v_s, tau_s, theta (nv,): the stage state, its forces and increment;
    xi, acc_stage (4, nv): the stage velocities (dexp⁻¹ applied) and accelerations;
    twist (4, 6): scratch of dexp⁻¹; work (2, 6), D (6, 6): scratch of free_acceleration_nb;
    force (nb, 6): scratch of release_held_wrenches_nb;
    locked (nv,) int64: 1 on the coordinate of a one-dof joint whose acceleration the stages
    hold at locked_acc (nv,) [rad/s² or m/s²] (a joint held on its stop: lock_stops_nb), else 0.
    q_mid (nq,), v_mid, a_mid, tau_mid (nv,): the midpoint of a step taken in two halves, its
    acceleration and its held generalised force (held_step_nb).
    """

    R: np.ndarray
    p: np.ndarray
    S: np.ndarray
    V: np.ndarray
    A: np.ndarray
    IA: np.ndarray
    pA: np.ndarray
    U: np.ndarray
    Dinv: np.ndarray
    u: np.ndarray
    acc: np.ndarray
    a_gravity: np.ndarray
    q_s: np.ndarray
    v_s: np.ndarray
    tau_s: np.ndarray
    theta: np.ndarray
    xi: np.ndarray
    acc_stage: np.ndarray
    armature: np.ndarray
    twist: np.ndarray
    work: np.ndarray
    D: np.ndarray
    force: np.ndarray
    locked: np.ndarray
    locked_acc: np.ndarray
    q_mid: np.ndarray
    v_mid: np.ndarray
    a_mid: np.ndarray
    tau_mid: np.ndarray


def stage_work(tree: KinematicTree, armature: np.ndarray | None = None) -> StageWork:
    """Allocate the stage buffers for ``tree``; armature (nv,): rotor inertia on the joint
    diagonal of M [kg m^2 or kg] (None: zeros)."""
    nb, nv, nq = tree.nb, tree.nv, tree.nq
    a_gravity = np.zeros(6)
    a_gravity[:3] = -np.asarray(tree.gravity, dtype=float)
    return StageWork(
        np.zeros((nb, 3, 3)), np.zeros((nb, 3)), np.zeros((nv, 6)), np.zeros((nb, 6)), np.zeros((nb, 6)),
        np.zeros((nb, 6, 6)), np.zeros((nb, 6)), np.zeros((nb, 6, 6)), np.zeros((nb, 6, 6)), np.zeros(nv),
        np.zeros((nb, 6)), a_gravity, np.zeros(nq), np.zeros(nv), np.zeros(nv), np.zeros(nv), np.zeros((4, nv)),
        np.zeros((4, nv)), np.zeros(nv) if armature is None else np.array(armature, dtype=float), np.zeros((4, 6)),
        np.zeros((2, 6)), np.zeros((6, 6)), np.zeros((nb, 6)), np.zeros(nv, np.int64), np.zeros(nv),
        np.zeros(nq), np.zeros(nv), np.zeros(nv), np.zeros(nv),
    )  # fmt: skip


@njit(cache=True)
def _add_held(held, R, p, sign, F) -> None:
    """F[body] += sign (f, n + x × f) for every held wrench (HeldWrenches), x its point in
    the world at the kinematics R (nb, 3, 3), p (nb, 3): the wrenches as spatial forces,
    world axes about the origin, linear-first; F (nb, 6)."""
    point, offset, wrench = held.point, held.offset, held.wrench
    for e in range(held.count[0]):
        b = held.body[e]
        l0, l1, l2 = point[e, 0], point[e, 1], point[e, 2]
        x0 = R[b, 0, 0] * l0 + R[b, 0, 1] * l1 + R[b, 0, 2] * l2 + p[b, 0] + offset[e, 0]
        x1 = R[b, 1, 0] * l0 + R[b, 1, 1] * l1 + R[b, 1, 2] * l2 + p[b, 1] + offset[e, 1]
        x2 = R[b, 2, 0] * l0 + R[b, 2, 1] * l1 + R[b, 2, 2] * l2 + p[b, 2] + offset[e, 2]
        c0, c1, c2 = _cross(x0, x1, x2, wrench[e, 0], wrench[e, 1], wrench[e, 2])
        F[b, 0] += sign * wrench[e, 0]
        F[b, 1] += sign * wrench[e, 1]
        F[b, 2] += sign * wrench[e, 2]
        F[b, 3] += sign * (wrench[e, 3] + c0)
        F[b, 4] += sign * (wrench[e, 4] + c1)
        F[b, 5] += sign * (wrench[e, 5] + c2)


@njit(cache=True)
def hold_wrench_nb(held, R, p, body, x, lift, R_vl, wrench_vl, sign) -> None:
    """Append sign w to ``held`` (HeldWrenches): w = (f, n) (6,) given in the axes R_vl
    (3, 3) (a contact's virtual-link frame, z its normal), n about the world point x (3,),
    held on the material point of ``body`` at x + lift z: lift 0 for a point of the body,
    a rolling sphere's or cylinder's radius (its centre, the contact point staying under
    it). R (nb, 3, 3), p (nb, 3): the kinematics of the start of the step. The caller sizes
    ``held`` (one entry per contact and body)."""
    e = held.count[0]
    held.count[0] = e + 1
    held.body[e] = body
    d0 = x[0] + lift * R_vl[0, 2] - p[body, 0]
    d1 = x[1] + lift * R_vl[1, 2] - p[body, 1]
    d2 = x[2] + lift * R_vl[2, 2] - p[body, 2]
    for r in range(3):
        held.point[e, r] = R[body, 0, r] * d0 + R[body, 1, r] * d1 + R[body, 2, r] * d2  # R_world_bodyᵀ (x - p)
        held.offset[e, r] = -lift * R_vl[r, 2]
        held.wrench[e, r] = sign * (R_vl[r, 0] * wrench_vl[0] + R_vl[r, 1] * wrench_vl[1] + R_vl[r, 2] * wrench_vl[2])
        held.wrench[e, 3 + r] = sign * (R_vl[r, 0] * wrench_vl[3] + R_vl[r, 1] * wrench_vl[4]
                                        + R_vl[r, 2] * wrench_vl[5])  # fmt: skip


@njit(cache=True)
def release_held_wrenches_nb(tree, w, held, R, p, S, tau_c) -> None:
    """tau_c (nv,) -= Σ J_k(q)ᵀ w_k over the held wrenches at the kinematics R, p, S (nv, 6)
    of the start of the step: what is left of the generalised force held over the step once
    the held wrenches are applied on their points (rk4_step_nb). w: StageWork (force scratch)."""
    F = w.force
    nb = F.shape[0]
    for i in range(nb):
        for r in range(6):
            F[i, r] = 0.0
    _add_held(held, R, p, 1.0, F)
    for i in range(nb - 1, -1, -1):  # towards the root: a body bears its subtree's forces
        vi = tree.v_index[i]
        for dof in range(tree.ndof[i]):
            tau_c[vi + dof] -= _dot6_rows(S, vi + dof, F, i)
        k = tree.parent[i]
        if k >= 0:
            for r in range(6):
                F[k, r] += F[i, r]


@njit(cache=True)
def free_acceleration_nb(tree, w, held, q, v, tau, qdd) -> None:
    """qdd (nv,) = M(q)^-1 (tau + Σ J_k(q)ᵀ w_k - b(q, v)), gravity included, by the
    articulated-body method (seed 004 Eq. 1; Featherstone, RBDA 7.3) at (q, v); tree:
    KinematicTree; w: StageWork; held: HeldWrenches (the w_k, on their bodies' points at q,
    enter as external forces: p^A -= f_ext). World-frame spatial vectors about the origin, linear-first
    (docs/conventions.md), so that a child's quantities add to its parent's untransformed.

    Symbols (per body i, parent k): S_i its joint's motion subspace; V_i its velocity; A_i the
    velocity-product acceleration (q̈ = 0, no gravity), c_i = A_i - A_k; I^A_i (IA) its
    articulated inertia and p^A_i (pA) its bias force; U_i = I^A_i S_i; D_i = S_iᵀ U_i +
    armature; u_i = τ_i - S_iᵀ p^A_i.
    Pass 1, from the root: pose, S, V, A, the body's inertia (I^A starts from it) and its
    bias force V x* I V. Pass 2, towards the root: U, D, u, and the parent's share
    I^a = I^A - U D⁻¹ Uᵀ, p^a = I^a c + p^A + U D⁻¹ u. Pass 3, from the root: a' = a_k + c_i,
    q̈_i = D⁻¹ (u - Uᵀ a'), a_i = a' + S q̈_i.
    A one-dof joint locked at its acceleration (w.locked, w.locked_acc; RBDA 9.2's hybrid
    dynamics) passes its body on rigidly: I^a = I^A, p^a = p^A + I^A (c_i + S_i q̈_i), and
    q̈_i is the locked one; its own torque is then whatever holds it there.
    The arithmetic is that of the separate passes dynamics.kernels.forward_kinematics_nb,
    motion_subspace_nb, velocities_nb, world_inertias_nb, aba_factor_nb, body_bias_forces_nb
    and aba_solve_nb, in the same order: the result is the same to the last bit, three passes
    over the bodies instead of seven, nothing allocated."""
    parent, ndof, v_index, q_index = tree.parent, tree.ndof, tree.v_index, tree.q_index
    joint_type, joint_axis, R_pj, p_pj = tree.joint_type, tree.joint_axis, tree.R_parent_joint, tree.p_parent_joint
    mass, com, inertia_com = tree.mass, tree.com, tree.inertia_com
    R, p, S, V, A, IA, pA, U, Dinv, u, acc = w.R, w.p, w.S, w.V, w.A, w.IA, w.pA, w.U, w.Dinv, w.u, w.acc
    e, g = w.work[0], w.work[1]
    armature = w.armature
    locked, locked_acc = w.locked, w.locked_acc
    # the arrays read once, their rows indexed in place (IA[i, r, c], not I = IA[i]): reading a
    # record's field, or a view of a row, takes and drops a reference to its array, two atomic
    # operations per body and stage
    nb = parent.shape[0]
    for i in range(nb):
        k = parent[i]
        X = joint_transform_nb(i, joint_type, joint_axis, R_pj, p_pj, q_index, q)
        body_pose_nb(i, k, X, R, p)
        body_subspace_nb(i, joint_type, joint_axis, v_index, R, p, S)
        body_motion_nb(i, k, ndof, v_index, S, v, V, A)
        body_inertia_nb(i, mass, com, inertia_com, R, p, IA)
        # p^A = V x* (I V), the inertia's bias force
        pA[i, 0], pA[i, 1], pA[i, 2], pA[i, 3], pA[i, 4], pA[i, 5] = body_bias_force_nb(i, IA, V)
    _add_held(held, R, p, -1.0, pA)
    for i in range(nb - 1, -1, -1):
        n = ndof[i]
        vi = v_index[i]
        k = parent[i]
        if n == 1 and locked[vi]:  # rigidly on: I^a = I^A, p^a = p^A + I^A (c_i + S_i q̈_i)
            if k < 0:
                continue
            for r in range(6):
                e[r] = A[i, r] - A[k, r] + S[vi, r] * locked_acc[vi]
            for r in range(6):
                t = 0.0
                for col in range(6):
                    ia = IA[i, r, col]
                    IA[k, r, col] += ia
                    t += ia * e[col]
                pA[k, r] += t + pA[i, r]
            continue
        if n == 1:  # the same arithmetic as below, with D, u and D⁻¹ u scalars (most joints),
            # S_i, U_i and c_i held in locals: every store into the parent's I^A would otherwise
            # make the compiled code read them again (it cannot tell the arrays apart)
            s0, s1, s2, s3, s4, s5 = S[vi, 0], S[vi, 1], S[vi, 2], S[vi, 3], S[vi, 4], S[vi, 5]
            U0 = IA[i, 0, 0] * s0 + IA[i, 0, 1] * s1 + IA[i, 0, 2] * s2 + IA[i, 0, 3] * s3 + IA[i, 0, 4] * s4 + IA[i, 0, 5] * s5
            U1 = IA[i, 1, 0] * s0 + IA[i, 1, 1] * s1 + IA[i, 1, 2] * s2 + IA[i, 1, 3] * s3 + IA[i, 1, 4] * s4 + IA[i, 1, 5] * s5
            U2 = IA[i, 2, 0] * s0 + IA[i, 2, 1] * s1 + IA[i, 2, 2] * s2 + IA[i, 2, 3] * s3 + IA[i, 2, 4] * s4 + IA[i, 2, 5] * s5
            U3 = IA[i, 3, 0] * s0 + IA[i, 3, 1] * s1 + IA[i, 3, 2] * s2 + IA[i, 3, 3] * s3 + IA[i, 3, 4] * s4 + IA[i, 3, 5] * s5
            U4 = IA[i, 4, 0] * s0 + IA[i, 4, 1] * s1 + IA[i, 4, 2] * s2 + IA[i, 4, 3] * s3 + IA[i, 4, 4] * s4 + IA[i, 4, 5] * s5
            U5 = IA[i, 5, 0] * s0 + IA[i, 5, 1] * s1 + IA[i, 5, 2] * s2 + IA[i, 5, 3] * s3 + IA[i, 5, 4] * s4 + IA[i, 5, 5] * s5
            U[i, 0, 0], U[i, 0, 1], U[i, 0, 2], U[i, 0, 3], U[i, 0, 4], U[i, 0, 5] = U0, U1, U2, U3, U4, U5
            di = 1.0 / ((s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5) + armature[vi])
            Dinv[i, 0, 0] = di
            ui = tau[vi] - _dot6_rows(S, vi, pA, i)
            u[vi] = ui
            if k < 0:
                continue
            gi = di * ui
            e0, e1, e2 = A[i, 0] - A[k, 0], A[i, 1] - A[k, 1], A[i, 2] - A[k, 2]  # c_i
            e3, e4, e5 = A[i, 3] - A[k, 3], A[i, 4] - A[k, 4], A[i, 5] - A[k, 5]
            for r in range(6):  # row r of I^a = I^A - U D⁻¹ Uᵀ into the parent's, and of p^a
                ur = U[i, 0, r]
                vr = ur * di
                a0 = IA[i, r, 0] - vr * U0
                a1 = IA[i, r, 1] - vr * U1
                a2 = IA[i, r, 2] - vr * U2
                a3 = IA[i, r, 3] - vr * U3
                a4 = IA[i, r, 4] - vr * U4
                a5 = IA[i, r, 5] - vr * U5
                IA[k, r, 0] += a0
                IA[k, r, 1] += a1
                IA[k, r, 2] += a2
                IA[k, r, 3] += a3
                IA[k, r, 4] += a4
                IA[k, r, 5] += a5
                pA[k, r] += a0 * e0 + a1 * e1 + a2 * e2 + a3 * e3 + a4 * e4 + a5 * e5 + pA[i, r] + ur * gi
            continue
        for d in range(n):  # U = I^A S
            for r in range(6):
                t = 0.0
                for col in range(6):
                    t += IA[i, r, col] * S[vi + d, col]
                U[i, d, r] = t
        if n > 1:  # D = Sᵀ U + armature
            D = w.D
            for a in range(n):
                for b in range(n):
                    D[a, b] = _dot6_sub(S, vi + a, U, i, b)
                D[a, a] += armature[vi + a]
            spd_inverse_into(D, n, Dinv[i])
        for d in range(n):  # u = τ - Sᵀ p^A
            u[vi + d] = tau[vi + d] - _dot6_rows(S, vi + d, pA, i)
        if k < 0:
            continue
        for r in range(6):
            e[r] = A[i, r] - A[k, r]  # c_i
        for a in range(n):  # D⁻¹ u
            t = 0.0
            for b in range(n):
                t += Dinv[i, a, b] * u[vi + b]
            g[a] = t
        for r in range(6):  # row r of I^a = I^A - U D⁻¹ Uᵀ into the parent's, and of p^a
            t = 0.0
            for col in range(6):
                ia = IA[i, r, col]
                for a in range(n):
                    for b in range(n):
                        ia -= U[i, a, r] * Dinv[i, a, b] * U[i, b, col]
                IA[k, r, col] += ia
                t += ia * e[col]
            t += pA[i, r]
            for a in range(n):
                t += U[i, a, r] * g[a]
            pA[k, r] += t
    ag = w.a_gravity
    for i in range(nb):
        n = ndof[i]
        vi = v_index[i]
        k = parent[i]
        if n == 1:  # as below, a' in locals
            if k < 0:  # a' = a_k + c_i
                e0, e1, e2 = ag[0] + A[i, 0], ag[1] + A[i, 1], ag[2] + A[i, 2]
                e3, e4, e5 = ag[3] + A[i, 3], ag[4] + A[i, 4], ag[5] + A[i, 5]
            else:
                e0, e1, e2 = acc[k, 0] + A[i, 0] - A[k, 0], acc[k, 1] + A[i, 1] - A[k, 1], acc[k, 2] + A[i, 2] - A[k, 2]
                e3, e4, e5 = acc[k, 3] + A[i, 3] - A[k, 3], acc[k, 4] + A[i, 4] - A[k, 4], acc[k, 5] + A[i, 5] - A[k, 5]
            if locked[vi]:
                qi = locked_acc[vi]
            else:
                qi = Dinv[i, 0, 0] * (u[vi] - (U[i, 0, 0] * e0 + U[i, 0, 1] * e1 + U[i, 0, 2] * e2 + U[i, 0, 3] * e3
                                               + U[i, 0, 4] * e4 + U[i, 0, 5] * e5))  # fmt: skip
            qdd[vi] = qi
            acc[i, 0], acc[i, 1], acc[i, 2] = e0 + S[vi, 0] * qi, e1 + S[vi, 1] * qi, e2 + S[vi, 2] * qi
            acc[i, 3], acc[i, 4], acc[i, 5] = e3 + S[vi, 3] * qi, e4 + S[vi, 4] * qi, e5 + S[vi, 5] * qi
            continue
        if k < 0:  # a' = a_k + c_i
            for r in range(6):
                e[r] = ag[r] + A[i, r]
        else:
            for r in range(6):
                e[r] = acc[k, r] + A[i, r] - A[k, r]
        for a in range(n):
            g[a] = u[vi + a] - _dot6_vec(U, i, a, e)
        for a in range(n):  # q̈ = D⁻¹ (u - Uᵀ a')
            t = 0.0
            for b in range(n):
                t += Dinv[i, a, b] * g[b]
            qdd[vi + a] = t
        for r in range(6):
            acc[i, r] = e[r]
        for a in range(n):
            for r in range(6):
                acc[i, r] += S[vi + a, r] * qdd[vi + a]


@njit(cache=True)
def held_forces_nb(M, a, a0, tau, out) -> None:
    """out (nv,) = tau + M (a - a0): the generalised forces held over the step, the known
    ones (tau) and the constraint force Hᵀλ = M (a - a0) of the solve (a: solved
    acceleration, a0: M^-1 (tau - D v - b), both (nv,); M (nv, nv)). Four rows at a time:
    four independent sums, each in the order of one (the same bits as one row at a time)."""
    nv = a.shape[0]
    i = 0
    while i + 3 < nv:
        s0 = s1 = s2 = s3 = 0.0
        for j in range(nv):
            dj = a[j] - a0[j]
            s0 += M[i, j] * dj
            s1 += M[i + 1, j] * dj
            s2 += M[i + 2, j] * dj
            s3 += M[i + 3, j] * dj
        out[i], out[i + 1], out[i + 2], out[i + 3] = tau[i] + s0, tau[i + 1] + s1, tau[i + 2] + s2, tau[i + 3] + s3
        i += 4
    for i in range(i, nv):
        s = 0.0
        for j in range(nv):
            s += M[i, j] * (a[j] - a0[j])
        out[i] = tau[i] + s


@njit(cache=True)
def _bracket(t, x, out) -> None:
    """out (6,) = [t, x] of se(3), linear-first (module docstring)."""
    v1x, v1y, v1z, w1x, w1y, w1z = t[0], t[1], t[2], t[3], t[4], t[5]
    v2x, v2y, v2z, w2x, w2y, w2z = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = w1y * v2z - w1z * v2y + v1y * w2z - v1z * w2y
    out[1] = w1z * v2x - w1x * v2z + v1z * w2x - v1x * w2z
    out[2] = w1x * v2y - w1y * v2x + v1x * w2y - v1y * w2x
    out[3] = w1y * w2z - w1z * w2y
    out[4] = w1z * w2x - w1x * w2z
    out[5] = w1x * w2y - w1y * w2x


@njit(cache=True)
def _stage_velocity(tree, theta, v, twist, out) -> None:
    """out (nv,) = Θ̇ for the stage velocity v at increment Θ: dexp⁻¹ on every free body,
    v itself on the joints; twist (4, 6): scratch."""
    nv = v.shape[0]
    for i in range(nv):
        out[i] = v[i]
    t, x, b1, b2 = twist[0], twist[1], twist[2], twist[3]
    joint_type, v_index = tree.joint_type, tree.v_index
    for body in range(joint_type.shape[0]):
        if joint_type[body] != FREE:
            continue
        s = v_index[body]
        for r in range(6):
            t[r] = theta[s + r]
            x[r] = v[s + r]
        _bracket(t, x, b1)
        _bracket(t, b1, b2)
        for r in range(6):
            out[s + r] = x[r] + 0.5 * b1[r] + b2[r] / 12.0


@njit(cache=True)
def _hold_wrench_in_world(theta, tau_c, tau_s, s) -> None:
    """A free body's held force and moment (tau_c[s:s+6], body-frame axes at the start of
    the step) in the body axes of a stage turned by exp(theta[s+3:s+6]) from the start:
    R_stage^T R_start tau_c, so that the wrench stays fixed in the world over the step.
    s: the body's first v coordinate. Held in the body frame instead, a contact force turns
    with a spinning body (by omega dt / 2 on average): a ball rolling at omega gets a
    spurious push of f omega dt / 2 along its path (3 % too fast at r = 5 cm, 1 s down
    20 degrees)."""
    wx, wy, wz = theta[s + 3], theta[s + 4], theta[s + 5]
    th = math.sqrt(wx * wx + wy * wy + wz * wz)
    if th < 1e-300:
        return
    kx, ky, kz = wx / th, wy / th, wz / th
    c, sn = math.cos(th), math.sin(th)
    k1 = 1.0 - c
    for o in (s, s + 3):
        x, y, z = tau_c[o], tau_c[o + 1], tau_c[o + 2]
        kd = k1 * (kx * x + ky * y + kz * z)
        # Rodrigues with the angle -th: x c - (k x x) s + k (k . x) (1 - c)
        tau_s[o] = x * c - (ky * z - kz * y) * sn + kx * kd
        tau_s[o + 1] = y * c - (kz * x - kx * z) * sn + ky * kd
        tau_s[o + 2] = z * c - (kx * y - ky * x) * sn + kz * kd


@njit(cache=True)
def at_rest_nb(v, a1, dt) -> bool:
    """Whether (v (nv,), a1 (nv,)) is a state at rest over a step dt [s]: |v_i| dt <=
    REST_MOTION and |a1_i| dt <= REST_VELOCITY_CHANGE for every i (False for a non-finite one)."""
    for i in range(v.shape[0]):
        if not (abs(v[i]) * dt <= REST_MOTION and abs(a1[i]) * dt <= REST_VELOCITY_CHANGE):
            return False
    return True


@njit(cache=True)
def rest_step_nb(tree, w, q, v, a1, dt, q_out, v_out) -> None:
    """The step of a state at rest (at_rest_nb; module docstring): v' = v + a1 dt,
    q' = q ⊕ (v + a1 dt / 2) dt into q_out (nq,), v_out (nv,); arguments as runge_kutta_nb's."""
    theta = w.theta
    for i in range(v.shape[0]):
        theta[i] = dt * (v[i] + 0.5 * dt * a1[i])
        v_out[i] = v[i] + dt * a1[i]
    integrate_nb(tree.joint_type, tree.q_index, tree.v_index, q, theta, 1.0, q_out)


@njit(cache=True)
def rk4_step_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_out, v_out) -> int:
    """One step: rest_step_nb for a state at rest, else the fourth-order Runge-Kutta-Munthe-Kaas
    step (held_step_nb: one, or two halves for a fast step); arguments as runge_kutta_nb's.
    Returns the stages evaluated beyond the first: 0 at rest, else 3, or 7 in two halves
    (docs/integration.md). (The simulator's step makes the same choice itself, so that a state at rest
    skips holding its wrenches too: contact/step_kernel.py.)"""
    if at_rest_nb(v, a1, dt):
        rest_step_nb(tree, w, q, v, a1, dt, q_out, v_out)
        return 0
    return held_step_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_out, v_out)


@njit(cache=True)
def runge_kutta_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_out, v_out) -> None:
    """One fourth-order Runge-Kutta-Munthe-Kaas step (module docstring).

    tree: KinematicTree; w: StageWork; held: HeldWrenches, the wrenches held on their bodies'
    points; q (nq,), v (nv,): the state at the start of the step (v after any impulse); a1
    (nv,): the acceleration at (q, v) from the constraint solve; tau_c (nv,): generalised
    forces held over the step (joint torques, external forces and the constraint forces
    Hᵀλ less the held wrenches' Σ J_k(q)ᵀ w_k, release_held_wrenches_nb) [N, N m]; damping (nv,): viscous coefficients (joint damping
    force -damping * v at every stage) [N s/m, N m s/rad]; dt [s].
    Writes the state at the end of the step into q_out (nq,), v_out (nv,).
    """
    nv = v.shape[0]
    xi, acc = w.xi, w.acc_stage
    theta, q_s, v_s, tau_s = w.theta, w.q_s, w.v_s, w.tau_s
    joint_type, q_index, v_index = tree.joint_type, tree.q_index, tree.v_index
    for i in range(nv):
        xi[0, i] = v[i]
        acc[0, i] = a1[i]
    for stage in range(1, 4):
        h = dt if stage == 3 else 0.5 * dt
        for i in range(nv):
            theta[i] = h * xi[stage - 1, i]
            v_s[i] = v[i] + h * acc[stage - 1, i]
            tau_s[i] = tau_c[i] - damping[i] * v_s[i]
        for body in range(tree.nb):
            if joint_type[body] == FREE:
                _hold_wrench_in_world(theta, tau_c, tau_s, v_index[body])
        integrate_nb(joint_type, q_index, v_index, q, theta, 1.0, q_s)
        free_acceleration_nb(tree, w, held, q_s, v_s, tau_s, acc[stage])
        _stage_velocity(tree, theta, v_s, w.twist, xi[stage])
    for i in range(nv):
        theta[i] = dt / 6.0 * (xi[0, i] + 2.0 * xi[1, i] + 2.0 * xi[2, i] + xi[3, i])
        v_out[i] = v[i] + dt / 6.0 * (acc[0, i] + 2.0 * acc[1, i] + 2.0 * acc[2, i] + acc[3, i])
    integrate_nb(joint_type, q_index, v_index, q, theta, 1.0, q_out)


@njit(cache=True)
def held_step_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_out, v_out) -> int:
    """The step with the held forces (arguments as runge_kutta_nb's): one Runge-Kutta step, or,
    where some coordinate would move by more than FAST_MOTION within it (|v_i| dt, rad or m), two
    of dt / 2, the second from the midpoint with its own first-stage acceleration (the held
    forces the same: the free base's part turned into its axes at the midpoint, the held
    wrenches on their points there, a locked joint at its locked acceleration). RK4's error
    grows as (ω dt)⁵: a passive double pendulum in free flight whose elbow whirls at 150 rad/s
    lost 8.7e-6 of its energy in its worst step and 1.2e-4 over 1 s; in halves, 5e-7 and 4e-6
    (docs/integration.md, "A fast step"). Returns the stage evaluations made beyond the first:
    3, or 7."""
    nv = v.shape[0]
    fast = False
    for i in range(nv):
        fast |= abs(v[i]) * dt > FAST_MOTION
    if not fast:
        runge_kutta_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_out, v_out)
        return 3
    h = 0.5 * dt
    runge_kutta_nb(tree, w, held, q, v, a1, tau_c, damping, h, w.q_mid, w.v_mid)
    # the held force in the free base's axes at the midpoint (w.theta: the first half's increment)
    tau_mid = w.tau_mid
    for i in range(nv):
        tau_mid[i] = tau_c[i]
    for body in range(tree.nb):
        if tree.joint_type[body] == FREE:
            _hold_wrench_in_world(w.theta, tau_c, tau_mid, tree.v_index[body])
    for i in range(nv):
        w.tau_s[i] = tau_mid[i] - damping[i] * w.v_mid[i]
    free_acceleration_nb(tree, w, held, w.q_mid, w.v_mid, w.tau_s, w.a_mid)
    runge_kutta_nb(tree, w, held, w.q_mid, w.v_mid, w.a_mid, tau_mid, damping, h, q_out, v_out)
    return 7


@njit(cache=True)
def lock_stops_nb(tree, w, jacobian, force, n, a, tau_c) -> int:
    """Lock each one-dof joint held on its stop at its solved acceleration for the stages, in
    place of holding its stop's force; returns the joints locked (w.locked, w.locked_acc set,
    every other coordinate unlocked).

    A hard row's force λ_r held over the step in the generalised coordinates does the work
    λ_r Δg_r. When the rest of the tree changes fast within the step (g1 flailing: a hip
    decelerating from 82 to 56 rad/s in one step, coupled through the pelvis to the other
    hip's stop), the force that held the joint on its stop at the step's start outgrows what
    holds it there: held, it threw the joint off its stop (from -0.06 to +0.33 rad/s within
    the step, at 883 N m) and did +0.095 J, where a stop that holds does no work. Locked
    instead at the acceleration a_j its solve gave, the joint moves over the step as the solve
    meant (v dt + a_j dt²/2 from where it was, the stop's target), whatever the rest of the
    tree does, and the stop's torque is what holds it there at every stage; its work is its
    torque times that motion, nil for a joint resting on its stop.

    Locked: a row r < n with λ_r > 0 whose Jacobian row is ±1 on one coordinate of a one-dof
    joint and 0 elsewhere (a joint stop); its force is taken out of tau_c (nv,) (tau_c -=
    J_rᵀ λ_r). tree: KinematicTree; w: StageWork; jacobian (K, nv), force (K,) [N m or N]: the
    hard rows and their solved forces; a (nv,): the solved acceleration a1."""
    locked, locked_acc = w.locked, w.locked_acc
    nv = locked.shape[0]
    for i in range(nv):
        locked[i] = 0
    count = 0
    for r in range(n):
        f = force[r]
        if not f > 0.0:
            continue
        col = -1
        for c in range(nv):
            x = jacobian[r, c]
            if x == 0.0:
                continue
            if col >= 0 or not (x == 1.0 or x == -1.0):
                col = -1
                break
            col = c
        if col < 0 or tree.ndof[tree.dof_body[col]] != 1:
            continue
        if not locked[col]:
            locked[col] = 1
            locked_acc[col] = a[col]
            count += 1
        tau_c[col] -= jacobian[r, col] * f
    return count
