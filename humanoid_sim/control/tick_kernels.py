"""Compiled kernels of one walking-controller tick (numba, allocation-light).

Each kernel is the compiled twin of a reference implementation in this package and is tested
against it (test/control/test_tick_kernels.py):

- ``zmp_samples_nb``      <- FootstepPlan.zmp_reference over the preview window;
- ``frames_nb``           <- TaskKinematics.frame_pose / frame_jacobian / frame_drift;
- ``ik_step_nb``          <- inverse_kinematics.ik_step (seed 001 damped weighted pseudo-inverse
                             with joint locking and the null-space posture term);
- ``whole_body_nb``       <- whole_body_torque.solve_whole_body (seed 000 Eq. 11/23, the KKT
                             system over (θ̈_G, τ_C) with τ_J substituted).

Frames and units as in those modules: world z up, Jacobian rows linear then angular (world
axes, LOCAL_WORLD_ALIGNED), base velocity part in the base frame (docs/conventions.md).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from humanoid_sim.dynamics import kernels

POSE_TASK = 0  # 6 rows: position (world) then orientation (world axes)
ORIENTATION_TASK = 1  # 3 rows: orientation (world axes)
COM_TASK = 2  # 3 rows: whole-body CoM (world)
TASK_ROWS = (6, 3, 3)


@njit(cache=True)
def so3_log_nb(R, out) -> None:
    """Rotation vector (3,) of R (3, 3), |w| <= pi (spatial.so3_log)."""
    cos_theta = (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0
    cos_theta = min(1.0, max(-1.0, cos_theta))
    theta = math.acos(cos_theta)
    vx = R[2, 1] - R[1, 2]
    vy = R[0, 2] - R[2, 0]
    vz = R[1, 0] - R[0, 1]
    if theta < 1e-6:
        out[0], out[1], out[2] = 0.5 * vx, 0.5 * vy, 0.5 * vz
        return
    if math.pi - theta < 1e-4:
        # Near pi: the axis from R + R^T = 2 a a^T (1 - cos) + 2 cos 1 (as spatial.so3_log).
        k = 0
        best = -np.inf
        for i in range(3):
            d = R[i, i] - cos_theta
            if d > best:
                best, k = d, i
        a = np.empty(3)
        for i in range(3):
            a[i] = 0.5 * (R[i, k] + R[k, i]) - (cos_theta if i == k else 0.0)
        scale = 1.0 / math.sqrt(max(best, 1e-300))
        for i in range(3):
            a[i] *= scale
        if a[0] * vx + a[1] * vy + a[2] * vz < 0.0:
            for i in range(3):
                a[i] = -a[i]
        norm = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
        for i in range(3):
            out[i] = theta * a[i] / norm
        return
    f = theta / (2.0 * math.sin(theta))
    out[0], out[1], out[2] = f * vx, f * vy, f * vz


@njit(cache=True)
def zmp_samples_nb(starts, ends, zmp_start, zmp_end, t, dt, out) -> None:
    """ZMP reference (FootstepPlan.zmp_reference) at t + k dt, k = 0..K-1, into out (K, 2).

    starts, ends: phase times (n,) [s]; zmp_start, zmp_end: (n, 2) [m]; linear inside a
    phase, held before the first and after the last phase."""
    n = starts.shape[0]
    idx = 0
    for k in range(out.shape[0]):
        tk = t + dt * k
        while idx + 1 < n and starts[idx + 1] <= tk:
            idx += 1
        s = (tk - starts[idx]) / (ends[idx] - starts[idx])
        s = min(max(s, 0.0), 1.0)
        for a in range(2):
            out[k, a] = zmp_start[idx, a] * (1.0 - s) + zmp_end[idx, a] * s


@njit(cache=True)
def frames_nb(parent, ndof, v_index, S, V, A, R, p, bodies, X_body_frame, X_out, J_out, drift_out,
              with_drift) -> None:
    """For each frame f (bodies[f], X_body_frame[f] (4, 4)): pose X_world_frame into X_out[f]
    (4, 4), Jacobian of its origin into J_out[f] (6, nv), and, if with_drift, J̇ v into
    drift_out[f] (6,) (TaskKinematics.frame_pose / frame_jacobian / frame_drift)."""
    for f in range(bodies.shape[0]):
        b = bodies[f]
        Xf = X_body_frame[f]
        X = X_out[f]
        for r in range(3):
            for c in range(4):
                s = 0.0
                for k in range(3):
                    s += R[b, r, k] * Xf[k, c]
                X[r, c] = s
            X[r, 3] += p[b, r]
        X[3, 0], X[3, 1], X[3, 2], X[3, 3] = 0.0, 0.0, 0.0, 1.0
        origin = X[:3, 3].copy()
        kernels.point_jacobian_into(parent, ndof, v_index, S, b, origin, J_out[f])
        if with_drift:
            kernels.point_drift_into(V, A, b, origin, drift_out[f])


@njit(cache=True)
def ik_task_rows_nb(parent, ndof, v_index, S, R, p, com, com_jacobian, bodies, X_body_frame,
                    kinds, weights, X_target, com_target, J, e) -> int:
    """Stacked, sqrt(weight)-scaled task Jacobian into J[:m] and error (target - current) into
    e[:m] (inverse_kinematics.task_jacobian_and_error); returns m.

    Task k: kinds[k] POSE_TASK (frame bodies[k] / X_body_frame[k] to X_target[k]),
    ORIENTATION_TASK (its rotation to X_target[k][:3, :3]) or COM_TASK (CoM to com_target)."""
    nv = J.shape[1]
    Xw = np.empty((4, 4))
    Jf = np.empty((6, nv))
    Rerr = np.empty((3, 3))
    w3 = np.empty(3)
    row = 0
    for k in range(kinds.shape[0]):
        w = math.sqrt(weights[k])
        kind = kinds[k]
        if kind == COM_TASK:
            for r in range(3):
                for c in range(nv):
                    J[row + r, c] = w * com_jacobian[r, c]
                e[row + r] = w * (com_target[r] - com[r])
            row += 3
            continue
        b = bodies[k]
        Xf = X_body_frame[k]
        for r in range(3):
            for c in range(4):
                s = 0.0
                for i in range(3):
                    s += R[b, r, i] * Xf[i, c]
                Xw[r, c] = s
            Xw[r, 3] += p[b, r]
        origin = Xw[:3, 3].copy()
        kernels.point_jacobian_into(parent, ndof, v_index, S, b, origin, Jf)
        Xt = X_target[k]
        # orientation error log(R_target R^T) (world axes)
        for r in range(3):
            for c in range(3):
                Rerr[r, c] = Xt[r, 0] * Xw[c, 0] + Xt[r, 1] * Xw[c, 1] + Xt[r, 2] * Xw[c, 2]
        so3_log_nb(Rerr, w3)
        if kind == POSE_TASK:
            for r in range(6):
                for c in range(nv):
                    J[row + r, c] = w * Jf[r, c]
            for r in range(3):
                e[row + r] = w * (Xt[r, 3] - Xw[r, 3])
                e[row + 3 + r] = w * w3[r]
            row += 6
        else:
            for r in range(3):
                for c in range(nv):
                    J[row + r, c] = w * Jf[3 + r, c]
                e[row + r] = w * w3[r]
            row += 3
    return row


@njit(cache=True)
def ik_step_nb(J, e, n_base, q_joints, posture_joints, posture_gain, lower, upper, base_weight,
               joint_weight, damping_floor, damping_max, singular_threshold, max_step, delta) -> float:
    """One damped weighted pseudo-inverse step (inverse_kinematics.ik_step), δ into delta (nv,).

    J (m, nv), e (m,): weighted task rows; q_joints, posture_joints, lower, upper: (nj,)
    (limits already margin-reduced, posture already clipped; posture_gain 0 for none).
    δ = J^#_W e + (I - J^#_W J) η (seed 001) computed as W^-1 J^T y + η with
    (J W^-1 J^T + λ² I) y = e - J η, the same vector without forming J^#_W. The damping uses
    σ_min² = the smallest eigenvalue of J W^-1 J^T (m <= nv), as (σ_min / ε)² in ik_step.
    A joint whose step would cross its limit is locked (W^-1 = 0, η = 0), at most 4 passes.
    Returns |e|."""
    m, nv = J.shape
    nj = nv - n_base
    w_inv = np.empty(nv)
    for k in range(n_base):
        w_inv[k] = 1.0 / base_weight
    for k in range(n_base, nv):
        w_inv[k] = 1.0 / joint_weight
    eta = np.zeros(nv)
    if posture_gain > 0.0:
        for j in range(nj):
            eta[n_base + j] = posture_gain * (posture_joints[j] - q_joints[j])
    locked = np.zeros(nj, dtype=np.bool_)
    JWJ = np.empty((m, m))
    r = np.empty(m)
    eps2 = singular_threshold * singular_threshold
    for _ in range(4):
        for i in range(m):
            for j in range(i, m):
                s = 0.0
                for k in range(nv):
                    s += J[i, k] * w_inv[k] * J[j, k]
                JWJ[i, j] = s
                JWJ[j, i] = s
        if m <= nv:
            lam_min = max(np.linalg.eigvalsh(JWJ)[0], 0.0)
        else:
            lam_min = 0.0
        lam2 = damping_floor
        if lam_min < eps2:
            lam2 += damping_max * damping_max * (1.0 - lam_min / eps2)
        for i in range(m):
            JWJ[i, i] += lam2
            s = e[i]
            for k in range(nv):
                s -= J[i, k] * eta[k]
            r[i] = s
        y = np.linalg.solve(JWJ, r)
        norm2 = 0.0
        for k in range(nv):
            s = 0.0
            for i in range(m):
                s += J[i, k] * y[i]
            delta[k] = w_inv[k] * s + eta[k]
            norm2 += delta[k] * delta[k]
        norm = math.sqrt(norm2)
        if norm > max_step:
            f = max_step / norm
            for k in range(nv):
                delta[k] *= f
        crossing = False
        for j in range(nj):
            qn = q_joints[j] + delta[n_base + j]
            if (qn < lower[j] - 1e-12 or qn > upper[j] + 1e-12) and not locked[j]:
                locked[j] = True
                crossing = True
        if not crossing:
            break
        for j in range(nj):
            if locked[j]:
                w_inv[n_base + j] = 0.0
                eta[n_base + j] = 0.0
    s = 0.0
    for i in range(m):
        s += e[i] * e[i]
    return math.sqrt(s)


@njit(cache=True)
def whole_body_nb(M, b, H_C, contact_drift, J_tasks, task_target, task_weight, w_acceleration,
                  w_torque, w_wrench, wrench_reference, n_base, qdd, wrenches, tau) -> None:
    """Seed 000 Eq. 23 as whole_body_torque.solve_whole_body, tasks stacked.

    M (nv, nv), b (nv,); H_C (nc, nv), contact_drift Ḣ_C θ̇ (nc,); J_tasks (m, nv) task
    Jacobians, task_target r̈^d - J̇ θ̇ (m,), task_weight per row (m,); w_wrench (nc,),
    wrench_reference (nc,); n_base: unactuated coordinates (6). Out: qdd (nv,), wrenches (nc,),
    tau (nv - n_base,). The KKT system over x = (θ̈, τ_C) with the base rows of Eq. 11 and the
    contact rows H_C θ̈ = -Ḣ_C θ̇ as equalities (τ_J substituted from the actuated rows):

        [ H  Eᵀ ] [x]   [g]        H = w_τ TᵀT + diag(w_a 1 + Σ JᵀWJ, w_f),  T = [M_act | -H_C,actᵀ]
        [ E  0  ] [λ] = [r]        E = [[M_base, -H_C,baseᵀ], [H_C, 0]]
    """
    nv = M.shape[0]
    nc = H_C.shape[0]
    nu = n_base
    n = nv + nc
    N = n + nu + nc
    K = np.zeros((N, N))
    rhs = np.zeros(N)
    m = J_tasks.shape[0]
    # Σ J_Pᵀ W_P J_P and Σ J_Pᵀ W_P (r̈^d - J̇ θ̇) (Eq. 22 rows, weighted least squares)
    for i in range(nv):
        for k in range(m):
            a = J_tasks[k, i] * task_weight[k]
            if a != 0.0:
                rhs[i] += a * task_target[k]
                for j in range(i, nv):
                    K[i, j] += a * J_tasks[k, j]
        K[i, i] += w_acceleration
        for j in range(i + 1, nv):
            K[j, i] = K[i, j]
    if w_torque > 0.0:
        # w_τ |T x + b_act|²: T = [M_act, -H_C,actᵀ]
        T = np.empty((nv - nu, n))
        for r in range(nv - nu):
            for c in range(nv):
                T[r, c] = M[nu + r, c]
            for c in range(nc):
                T[r, nv + c] = -H_C[c, nu + r]
        for i in range(n):
            for j in range(n):
                s = 0.0
                for r in range(nv - nu):
                    s += T[r, i] * T[r, j]
                K[i, j] += w_torque * s
            s = 0.0
            for r in range(nv - nu):
                s += T[r, i] * b[nu + r]
            rhs[i] -= w_torque * s
    for c in range(nc):
        K[nv + c, nv + c] += w_wrench[c]
        rhs[nv + c] += w_wrench[c] * wrench_reference[c]
    # equality rows
    for r in range(nu):
        row = n + r
        for c in range(nv):
            K[row, c] = M[r, c]
            K[c, row] = M[r, c]
        for c in range(nc):
            K[row, nv + c] = -H_C[c, r]
            K[nv + c, row] = -H_C[c, r]
        rhs[row] = -b[r]
    for r in range(nc):
        row = n + nu + r
        for c in range(nv):
            K[row, c] = H_C[r, c]
            K[c, row] = H_C[r, c]
        rhs[row] = -contact_drift[r]
    sol = np.linalg.solve(K, rhs)
    for i in range(nv):
        qdd[i] = sol[i]
    for c in range(nc):
        wrenches[c] = sol[nv + c]
    for r in range(nv - nu):
        s = b[nu + r]
        for c in range(nv):
            s += M[nu + r, c] * sol[c]
        for c in range(nc):
            s -= H_C[c, nu + r] * sol[nv + c]
        tau[r] = s


# Rows of the gains array of whole_body_rows_nb (columns kp [1/s^2], kd [1/s], weight).
GAIN_COM, GAIN_SWING, GAIN_TORSO, GAIN_POSTURE = 0, 1, 2, 3


@njit(cache=True)
def whole_body_rows_nb(n_base, com_jacobian, com, com_velocity, com_drift, com_ref, com_vel_ref, com_acc_ref,
                       gains, q_ref, q, v, X, J, drift, R_torso, torso_rate, torso_acc, swing,
                       X_feet_ref, swing_vel_ref, swing_acc_ref, stance, zmp, weight_total, wrench_weight,
                       task_J, target, weight, H_C, drift_C, w_f, w_ref):
    """The rows of one whole-body solve (seed 000 Eq. 22/23) of the walking controller.

    Tasks a_des = a_ref + kp e + kd ė, stored as rows J θ̈ = a_des - J̇ θ̇ with a per-row weight:
    rows [0, nj) joint posture towards q_ref (reference velocity 0; task_J[:nj] must hold
    [0 | I], set once by the caller); [nj, nj+3) CoM; [nj+3, nj+6) torso orientation (frame 2 of
    X, J, drift: R_torso, yaw rate/acceleration torso_rate, torso_acc about z); then, if
    swing >= 0, 6 rows for the sole frame ``swing`` (0 left, 1 right) to X_feet_ref[swing] with
    swing_vel_ref, swing_acc_ref (6,). Contacts: stance (k,) sole indices; H_C, drift_C rows
    from J, drift; per foot the vertical load share of the cart-table ZMP ``zmp`` (linear
    between the reference soles X_feet_ref[0, 1]) and a common centre-of-pressure offset d that
    puts the total at ``zmp``: w_ref = (0, 0, f_z, d_y f_z, -d_x f_z, 0) (moment about the sole
    origin, world axes); w_f = wrench_weight / max(share, 0.02), moments x100.
    q_ref, q (nq,), v (nv,): joints are the last nj entries. Returns (m, nc)."""
    nv = v.shape[0]
    nj = nv - n_base
    jq = q.shape[0] - nj
    kp, kd, w = gains[GAIN_POSTURE, 0], gains[GAIN_POSTURE, 1], gains[GAIN_POSTURE, 2]
    for j in range(nj):
        target[j] = kp * (q_ref[jq + j] - q[jq + j]) - kd * v[n_base + j]
        weight[j] = w
    kp, kd, w = gains[GAIN_COM, 0], gains[GAIN_COM, 1], gains[GAIN_COM, 2]
    for r in range(3):
        row = nj + r
        for c in range(nv):
            task_J[row, c] = com_jacobian[r, c]
        target[row] = (com_acc_ref[r] + kp * (com_ref[r] - com[r]) + kd * (com_vel_ref[r] - com_velocity[r])
                       - com_drift[r])
        weight[row] = w
    rot = np.empty(3)
    Rerr = np.empty((3, 3))
    # torso orientation: log(R_torso R^T), angular rows of frame 2
    for r in range(3):
        for c in range(3):
            Rerr[r, c] = R_torso[r, 0] * X[2, c, 0] + R_torso[r, 1] * X[2, c, 1] + R_torso[r, 2] * X[2, c, 2]
    so3_log_nb(Rerr, rot)
    kp, kd, w = gains[GAIN_TORSO, 0], gains[GAIN_TORSO, 1], gains[GAIN_TORSO, 2]
    for r in range(3):
        row = nj + 3 + r
        jv = 0.0
        for c in range(nv):
            task_J[row, c] = J[2, 3 + r, c]
            jv += J[2, 3 + r, c] * v[c]
        rate = torso_rate if r == 2 else 0.0
        acc = torso_acc if r == 2 else 0.0
        target[row] = acc + kp * rot[r] + kd * (rate - jv) - drift[2, 3 + r]
        weight[row] = w
    m = nj + 6
    if swing >= 0:
        Xr = X_feet_ref[swing]
        for r in range(3):
            for c in range(3):
                Rerr[r, c] = Xr[r, 0] * X[swing, c, 0] + Xr[r, 1] * X[swing, c, 1] + Xr[r, 2] * X[swing, c, 2]
        so3_log_nb(Rerr, rot)
        kp, kd, w = gains[GAIN_SWING, 0], gains[GAIN_SWING, 1], gains[GAIN_SWING, 2]
        for r in range(6):
            row = m + r
            jv = 0.0
            for c in range(nv):
                task_J[row, c] = J[swing, r, c]
                jv += J[swing, r, c] * v[c]
            err = Xr[r, 3] - X[swing, r, 3] if r < 3 else rot[r - 3]
            target[row] = swing_acc_ref[r] + kp * err + kd * (swing_vel_ref[r] - jv) - drift[swing, r]
            weight[row] = w
        m += 6
    # contacts and the reference wrench distribution
    ns = stance.shape[0]
    shares = np.ones(ns)
    if ns == 2:
        dx = X_feet_ref[0, 0, 3] - X_feet_ref[1, 0, 3]
        dy = X_feet_ref[0, 1, 3] - X_feet_ref[1, 1, 3]
        alpha = ((zmp[0] - X_feet_ref[1, 0, 3]) * dx + (zmp[1] - X_feet_ref[1, 1, 3]) * dy) / max(dx * dx + dy * dy, 1e-12)
        alpha = min(max(alpha, 0.0), 1.0)
        for k in range(ns):
            shares[k] = alpha if stance[k] == 0 else 1.0 - alpha
    cx = 0.0
    cy = 0.0
    for k in range(ns):
        cx += shares[k] * X_feet_ref[stance[k], 0, 3]
        cy += shares[k] * X_feet_ref[stance[k], 1, 3]
    ox = zmp[0] - cx
    oy = zmp[1] - cy
    for k in range(ns):
        f = stance[k]
        r0 = 6 * k
        for r in range(6):
            for c in range(nv):
                H_C[r0 + r, c] = J[f, r, c]
            drift_C[r0 + r] = drift[f, r]
            w_ref[r0 + r] = 0.0
        fz = shares[k] * weight_total
        w_ref[r0 + 2] = fz
        w_ref[r0 + 3] = oy * fz
        w_ref[r0 + 4] = -ox * fz
        w_foot = wrench_weight / max(shares[k], 0.02)
        for r in range(3):
            w_f[r0 + r] = w_foot
            w_f[r0 + 3 + r] = 100.0 * w_foot
    return m, 6 * ns
