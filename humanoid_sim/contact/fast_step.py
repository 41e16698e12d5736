"""The common case of one simulator step as one compiled call.

``fast_step_nb`` runs steps 2 to 5 of ``Simulator.step`` (detection, virtual links, the
impulses of Eq. 18-19 when a contact approaches, the solve of seed 000 Eq. 20a/20b with the
validity checks of 4.4-4.5, integration) for the case that covers standing and walking,
touch-downs included: every contact sticks (or is new), no provider rows, and each solve
(impulses, then accelerations) passes every check or fails only by contacts to release
(f_z <= 0: a foot unloading before lift-off, or the stance foot in the impulse of the other
one's touch-down), in which case it is solved again without them, as the general path's next
round does. It computes exactly what the general Python path (simulator.py,
contact_solver.py) computes for that case, with the same kernels (bit for bit,
test/simulator/test_fast_step.py), and returns ``FAST_OK``; in every other case (a contact
slipping, spinning or reduced to an edge, one bouncing off, provider rows) it returns
``FAST_FALLBACK`` with the state and the contact memory untouched (only scratch written, and
V, A, b of the workspace at the post-impact velocities when counts[N_IMPULSE] says so), and
the caller runs the general path.
Allocation: the buffers are allocated once per simulator; inside the kernel only a few
tiny arrays per contact remain (classification outputs, hull polygons, the ZMP's).

Contact memory (ContactMemory of contact_solver.py) is kept in a table of arrays:
key (body, element, surface), sticking flag, anchor pose R (3, 3), p (3,), slip direction.
Per-contact outputs go to preallocated buffers (``FastBuffers``), indexed by contact.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from humanoid_sim.contact.kernels import (
    _TRI_RULE,
    cho_solve_vec,
    cholesky_into,
    classify_nb,
    contact_kinematics_nb,
    desired_acceleration_nb,
    detect_points_nb,
    mean_distance_nb,
    rolling_drift_nb,
    schur_solve_nb,
    signed_distance_nb,
    zmp_nb,
)
from humanoid_sim.dynamics.integrator import held_forces_nb, rk4_step_nb
from humanoid_sim.dynamics.kernels import rnea_nb, velocities_nb

FAST_OK = 0
FAST_FALLBACK = 1

# constrained virtual-link components (Table 1, 2) of a sticking, non-spinning contact,
# v_z first as in ActiveContact.components(): (v_x, v_y, v_z, w_x, w_y, w_z) = 0..5
_COMPS = np.array(
    [
        [2, 0, 1, -1, -1, -1],  # POINT: v_z, v_x, v_y
        [2, 4, 0, 1, 5, -1],  # LINE: v_z, w_y, v_x, v_y, w_z
        [2, 3, 4, 0, 1, 5],  # SURFACE: v_z, w_x, w_y, v_x, v_y, w_z
    ],
    dtype=np.int64,
)
_NCOMPS = np.array([3, 5, 6], dtype=np.int64)


# layout of one contact's floats in FastBuffers.c_float
CF_ORIGIN, CF_R, CF_WRENCH, CF_WRENCH_WORLD, CF_PV, CF_MIN_GAP, CF_IMPULSE, CF_SIZE = 0, 3, 12, 18, 24, 27, 28, 34
# layout of one memory row: key (body, element, surface), sticking, anchor R, p, slip direction
MEM_KEY, MEM_STICK, MEM_R, MEM_P, MEM_SLIP, MEM_SIZE = 0, 3, 4, 13, 16, 19
# counts: contacts, ground points, ground hull size, hits, memory rows in, memory rows out, solves of the
# acceleration phase, impulse phase ran (0/1)
# acceleration phase, impulse phase ran (0/1), speculative points kept by the last contact build
N_CONTACTS, N_GROUND_POINTS, N_GROUND_HULL, N_HITS, N_MEMORY_IN, N_MEMORY_OUT, N_ROUNDS, N_IMPULSE, N_SPECULATIVE = range(9)


class FastBuffers:
    """Preallocated buffers of ``fast_step_nb`` for one model and environment.

    nv, nq: the model's sizes; hit_cap: capacity of detected points; contact_cap: of
    contacts; memory_cap: of remembered contacts. Scratch lives in two flat arrays (one
    numba argument each: every argument costs about 0.4 µs of dispatch).
    c_int (C, 9): body, element, surface, kind, point start, point count, hull start,
        hull count, memory row or -1. c_float (C, CF_SIZE): origin, R_world_vl, wrench
        (virtual-link frame), wrench (world axes), p_v, deepest gap, impulse (virtual-link
        frame).
    memory: two tables (cap, MEM_SIZE), read one, write the other.
    """

    def __init__(self, nv: int, nq: int, hit_cap: int, contact_cap: int = 16, memory_cap: int = 64) -> None:
        self.hit_cap = hit_cap
        C = contact_cap
        self.float_scratch = np.zeros(float_scratch_size(nv, hit_cap, C))
        self.int_scratch = np.zeros(6 * hit_cap + 5 * C, np.int64)
        self.c_int = np.zeros((C, 9), np.int64)
        self.c_float = np.zeros((C, CF_SIZE))
        self.p_world = np.zeros((hit_cap, 3))
        self.zmp = np.zeros(10)  # ZMP point (3,), margin, force (3,), moment (3,)
        self.zmp_pts = np.zeros((hit_cap, 2))
        self.zmp_hull = np.zeros(hit_cap, np.int64)
        self.counts = np.zeros(9, np.int64)
        self.q_next = np.zeros(nq)
        self.v_next = np.zeros(nv)
        self.a = np.zeros(nv)
        self.memory = [np.zeros((memory_cap, MEM_SIZE)), np.zeros((memory_cap, MEM_SIZE))]


def float_scratch_size(nv: int, hit: int, C: int) -> int:
    """Length of the flat float scratch of ``fast_step_nb``."""
    return 14 * hit + nv * nv + 6 * C * nv + 6 * nv + 6 * C * nv + 12 * C + 3 * nv + 18 * C + 3 * hit + nv + 6 * C


# verdicts of _check_nb
_VALID, _RELEASES, _CHANGES = 0, 1, 2


@njit(cache=True)
def speculative_band_nb(V, p, reach, dt) -> float:
    """The farthest any collision point can move in dt at the bodies' velocities, twice over
    (so that what the step's accelerations add is covered): 2 dt max_b (|v_b| + |ω_b| reach_b)
    [m], with v_b the velocity of the body origin and reach_b (nb,) the farthest extent of
    the body's collision geometry from its origin [m] (0 without geometry).
    V (nb, 6): spatial velocities (world, about the world origin); p (nb, 3): body origins."""
    best = 0.0
    for b in range(V.shape[0]):
        if reach[b] <= 0.0:
            continue
        wx, wy, wz = V[b, 3], V[b, 4], V[b, 5]
        vx = V[b, 0] + wy * p[b, 2] - wz * p[b, 1]
        vy = V[b, 1] + wz * p[b, 0] - wx * p[b, 2]
        vz = V[b, 2] + wx * p[b, 1] - wy * p[b, 0]
        speed = math.sqrt(vx * vx + vy * vy + vz * vz) + math.sqrt(wx * wx + wy * wy + wz * wz) * reach[b]
        best = max(best, speed)
    return 2.0 * dt * best


@njit(cache=True)
def _build_contacts_nb(
    k, keys, order, g_body, idx, elem, face, gap, point, normal, tangent, roll, separating, correction_rate, tol, spec_dt,
    parent, ndof, v_index, S, V, A, m_in, n_memory_in, sel, p_xy, p_gap, p_hull,
    c_int, c_float, c_R, G, J, c_drift, c_vel, counts,
) -> int:  # fmt: skip
    """Contacts of the k detected points at the body velocities V, as Simulator._contacts:
    points grouped by their key (body, element, surface; ``order`` sorts the keys stably),
    separating points dropped, each group
    classified (virtual-link frame, hull) and its G, drift and virtual-link velocity
    computed (contact_kinematics_nb, rolling_drift_nb: a rolling contact gets no memory
    row, it keeps no anchor). Points farther than ``tol`` are speculative: kept
    only when spec_dt > 0 and they would come within ``tol`` in spec_dt at their normal
    velocity (counted in counts[N_SPECULATIVE]). Returns the number of contacts, or -1
    when the general path must run (capacity exceeded, or a contact remembered as
    slipping)."""
    C = c_int.shape[0]
    cap = p_hull.shape[0]
    c_origin = c_float[:, CF_ORIGIN : CF_ORIGIN + 3]
    nc = 0
    npts = 0
    s0 = 0
    counts[N_SPECULATIVE] = 0
    while s0 < k:
        s1 = s0 + 1
        while s1 < k and keys[order[s1]] == keys[order[s0]]:
            s1 += 1
        j = order[s0]
        body = g_body[idx[j]]
        # separating points dropped: normal velocity (v_O + w x p) . n
        n0, n1, n2 = normal[j, 0], normal[j, 1], normal[j, 2]
        w0, w1, w2 = V[body, 3], V[body, 4], V[body, 5]
        nxw0 = n1 * w2 - n2 * w1
        nxw1 = n2 * w0 - n0 * w2
        nxw2 = n0 * w1 - n1 * w0
        vo_n = V[body, 0] * n0 + V[body, 1] * n1 + V[body, 2] * n2
        m = 0
        for t in range(s0, s1):
            h = order[t]
            vn = vo_n + point[h, 0] * nxw0 + point[h, 1] * nxw1 + point[h, 2] * nxw2
            if gap[h] > tol:
                if gap[h] + vn * spec_dt < tol:
                    sel[m] = h
                    m += 1
                    counts[N_SPECULATIVE] += 1
            elif vn <= separating + correction_rate * max(0.0, -gap[h]):
                sel[m] = h
                m += 1
        if m > 0:
            if nc >= C:
                return -1
            pts = np.empty((m, 3))
            for t in range(m):
                for c in range(3):
                    pts[t, c] = point[sel[t], c]
            kind, Rv, origin, xy, _, hull = classify_nb(pts, normal[j], tangent[j], 1e-6, 1e-4)
            ci = c_int[nc]
            ci[0] = body
            ci[1] = elem[j]
            ci[2] = face[j]
            ci[3] = kind
            ci[4] = npts
            ci[6] = npts
            mg = 1e300
            d0, dm = 0, m  # the points of the contact (rolling_drift_nb)
            if kind == 1:  # one distinct point: the deepest one
                deep = 0
                for t in range(1, m):
                    if gap[sel[t]] < gap[sel[deep]]:
                        deep = t
                d0, dm = deep, 1
                for c in range(3):
                    origin[c] = pts[deep, c]
                p_xy[npts, 0] = 0.0
                p_xy[npts, 1] = 0.0
                p_gap[npts] = gap[sel[deep]]
                p_hull[npts] = 0
                mg = gap[sel[deep]]
                ci[5] = 1
                ci[7] = 1
            else:
                if npts + m > cap:
                    return -1
                for t in range(m):
                    p_xy[npts + t, 0] = xy[t, 0]
                    p_xy[npts + t, 1] = xy[t, 1]
                    g = gap[sel[t]]
                    p_gap[npts + t] = g
                    mg = min(mg, g)
                for t in range(hull.shape[0]):
                    p_hull[npts + t] = hull[t]
                ci[5] = m
                ci[7] = hull.shape[0]
            c_float[nc, CF_MIN_GAP] = mg
            for r in range(3):
                c_origin[nc, r] = origin[r]
                for c in range(3):
                    c_R[nc, r, c] = Rv[r, c]
            # memory of this contact
            row = -1
            for r in range(n_memory_in):
                if m_in[r, MEM_KEY] == body and m_in[r, MEM_KEY + 1] == elem[j] and m_in[r, MEM_KEY + 2] == face[j]:
                    row = r
                    break
            ci[8] = row
            if row >= 0 and m_in[row, MEM_STICK] == 0.0:
                return -1  # slipping contact: general path (Eq. 34-36)
            contact_kinematics_nb(parent, ndof, v_index, S, V, A, body, c_origin[nc], c_R[nc], J, G[nc],
                                  c_drift[nc], c_vel[nc])  # fmt: skip
            if rolling_drift_nb(V, body, c_R[nc], roll, sel[d0 : d0 + dm], dm, c_drift[nc]):
                ci[8] = -1
            npts += ci[5]
            nc += 1
        s0 = s1
    return nc


@njit(cache=True)
def _solve_rows_nb(c_int, nc, released, G, target, L, base, H, rhs, lam, x) -> bool:
    """Stack the rows of the contacts not released (components in the order of
    ActiveContact.components()) with their desired values ``target`` (C, 6) and solve
    A x - H^T λ = A base, H x = target (Eq. 20a/20b for accelerations, Eq. 18-19 for
    post-impact velocities) into x (nv,) and lam (rows). False when the Schur solve fails
    (the general path then decides)."""
    nv = base.shape[0]
    nrow = 0
    for ci_ in range(nc):
        if released[ci_]:
            continue
        kind = c_int[ci_, 3]
        ncomp = _NCOMPS[kind - 1]
        for r in range(ncomp):
            comp = _COMPS[kind - 1, r]
            for col in range(nv):
                H[nrow + r, col] = G[ci_, comp, col]
            rhs[nrow + r] = target[ci_, comp]
        nrow += ncomp
    if nrow == 0:
        for i in range(nv):
            x[i] = base[i]
        return True
    return schur_solve_nb(L, H[:nrow], H[:nrow], rhs[:nrow], base, True, x, lam[:nrow]) == 0


@njit(cache=True)
def _check_nb(c_int, c_float, nc, released, lam, p_xy, p_hull, mu_s) -> int:
    """The wrenches of the contacts from the row forces (into c_float; zero for released
    contacts) and the validity checks of 4.4-4.5 (contact_solver._check) of those not
    released: _VALID; _RELEASES when the only failures are f_z <= 0 (released[i] = 1 marks
    them); _CHANGES when any contact must change otherwise (area reduction, slipping,
    spinning)."""
    verdict = _VALID
    r0 = 0
    for ci_ in range(nc):
        ci = c_int[ci_]
        kind = ci[3]
        f = c_float[ci_, CF_WRENCH : CF_WRENCH + 6]
        for c in range(6):
            f[c] = 0.0
        if released[ci_]:
            continue
        ncomp = _NCOMPS[kind - 1]
        for r in range(ncomp):
            f[_COMPS[kind - 1, r]] = lam[r0 + r]
        r0 += ncomp
        fz = f[2]
        if not fz > 0.0:  # (1) the bodies separate by themselves
            released[ci_] = 1
            verdict = _RELEASES
            continue
        hs, hc = ci[6], ci[7]
        st = ci[4]
        poly = np.empty((hc if kind != 1 else 0, 2))  # the area's hull (line: its two ends)
        for t in range(poly.shape[0]):
            poly[t, 0] = p_xy[st + p_hull[hs + t], 0]
            poly[t, 1] = p_xy[st + p_hull[hs + t], 1]
        if kind != 1:  # (2) p_v of Eq. 26 in the hull
            px = -f[4] / fz
            py = f[3] / fz
            if kind == 2:
                x0, x1 = poly[0, 0], poly[1, 0]
                if not (min(x0, x1) - 1e-12 <= px <= max(x0, x1) + 1e-12):
                    return _CHANGES
            elif not signed_distance_nb(px, py, poly) >= -1e-12:
                return _CHANGES
        mu = mu_s[ci[1]]
        if math.hypot(f[0], f[1]) > mu * fz:  # (3) Eq. 31
            return _CHANGES
        if kind != 1:  # Eq. 33, d = TORSION_ARM (1) * mean distance over the area
            arm = 1.0 * mean_distance_nb(poly, _TRI_RULE)
            if abs(f[5]) > mu * fz * arm:
                return _CHANGES
    return verdict


@njit(cache=True)
def _released_separate_nb(nc, released, G, target, x, tolerance) -> bool:
    """The other half of check (1): a released contact must not approach faster than its
    row asks (G_z x >= target_z - tolerance, in the row's unit): when it would, releasing it
    was wrong and the checked solve has failed (the bounded solve, with f_z >= 0 and the
    row together, decides)."""
    nv = x.shape[0]
    for ci_ in range(nc):
        if not released[ci_]:
            continue
        s = 0.0
        for col in range(nv):
            s += G[ci_, 2, col] * x[col]
        if s < target[ci_, 2] - tolerance:
            return False
    return True


@njit(cache=True)
def _solve_with_releases_nb(c_int, c_float, nc, released, G, target, L, base, H, rhs, lam, x, p_xy, p_hull,
                            mu_s, max_rounds, release_tolerance) -> int:  # fmt: skip
    """solve_with_checks of the general path for the case the fast path covers: a round
    whose only failures are contacts to release (f_z <= 0: a foot unloading before it lifts
    off, or touching down unloaded) is solved again without them. Returns the rounds done
    (the last one valid), or 0 when any other change is due (the general path decides)."""
    for i in range(nc):
        released[i] = 0
    rounds = 1
    while True:
        if not _solve_rows_nb(c_int, nc, released, G, target, L, base, H, rhs, lam, x):
            return 0
        verdict = _check_nb(c_int, c_float, nc, released, lam, p_xy, p_hull, mu_s)
        if verdict == _VALID:
            if not _released_separate_nb(nc, released, G, target, x, release_tolerance):
                return 0
            return rounds
        if verdict != _RELEASES or rounds >= max_rounds:
            return 0
        rounds += 1

@njit(cache=True)
def fast_step_nb(
    # dynamics at (q, v), filled by DynamicsWorkspace.update (V, A, b are recomputed at the
    # post-impact velocities when the impulse phase runs: counts[N_IMPULSE] = 1)
    parent, ndof, v_index, S, V, A, R, p, M, b, Iw, a_gravity, acc, f_work, zero_nv,
    # integration: the tree and stage buffers of dynamics/integrator.py, joint damping (nv,)
    joint_type, q_index, q, v, tau_full, tree, stage, damping,
    # detection: candidates (ContactGeometry), their bodies' reach, static boxes
    g_body, g_kind, g_local, g_axis, g_radius, g_reach, box_R, box_p, box_half,
    # static friction and restitution per element; params: dt, ground height, tolerance,
    # separating, impact, correction rate, kp, kd, has ground (0/1), max rounds, bounce
    mu_s, restitution, params,
    # memory in, memory out (MEM_SIZE columns); scratch; outputs
    m_in, m_out, fs, iscr,
    c_int, c_float, p_world, zmp, zmp_pts, zmp_hull, counts, q_next, v_next, a_out,
) -> int:  # fmt: skip
    """One step of the common case (see the module docstring); FAST_OK or FAST_FALLBACK.

    Shapes: nv velocity coordinates, nb bodies; tau_full (nv,) = joint torques + known
    generalized forces [N m or N]; dt [s]. On FAST_OK: q_next (nq,), v_next (nv,), the
    contacts in c_int / c_float (counts[N_CONTACTS] of them, ordered by (body, element,
    surface) like the general path; released ones removed unless they took an impulse),
    the solves of the acceleration phase in counts[N_ROUNDS], counts[N_IMPULSE] = 1 when
    the impulse phase ran, the new memory table in m_out, the ZMP in zmp / zmp_pts / zmp_hull.
    """
    dt, ground_h, tol, separating, impact = params[0], params[1], params[2], params[3], params[4]
    correction_rate, kp, kd = params[5], params[6], params[7]
    has_ground = params[8] != 0.0
    max_rounds = int(params[9])
    bounce = params[10]
    band = params[11]  # speculative detection band beyond tol [m]
    nv = M.shape[0]
    C = c_int.shape[0]
    cap = zmp_hull.shape[0]
    counts[N_IMPULSE] = 0
    # carve the scratch (views, no allocation)
    o = 0
    gap = fs[o : o + cap]
    o += cap
    point = fs[o : o + 3 * cap].reshape((cap, 3))
    o += 3 * cap
    normal = fs[o : o + 3 * cap].reshape((cap, 3))
    o += 3 * cap
    tangent = fs[o : o + 3 * cap].reshape((cap, 3))
    o += 3 * cap
    L = fs[o : o + nv * nv].reshape((nv, nv))
    o += nv * nv
    G = fs[o : o + 6 * C * nv].reshape((C, 6, nv))
    o += 6 * C * nv
    J = fs[o : o + 6 * nv].reshape((6, nv))
    o += 6 * nv
    H = fs[o : o + 6 * C * nv].reshape((6 * C, nv))
    o += 6 * C * nv
    rhs = fs[o : o + 6 * C]
    o += 6 * C
    lam = fs[o : o + 6 * C]
    o += 6 * C
    a = fs[o : o + nv]
    o += nv
    a0 = fs[o : o + nv]
    o += nv
    work_nv = fs[o : o + nv]
    o += nv
    c_drift = fs[o : o + 6 * C].reshape((C, 6))
    o += 6 * C
    c_vel = fs[o : o + 6 * C].reshape((C, 6))
    o += 6 * C
    c_desired = fs[o : o + 6 * C].reshape((C, 6))
    o += 6 * C
    p_xy = fs[o : o + 2 * cap].reshape((cap, 2))
    o += 2 * cap
    p_gap = fs[o : o + cap]
    o += cap
    v_plus = fs[o : o + nv]
    o += nv
    impulse_value = fs[o : o + 6 * C].reshape((C, 6))
    o += 6 * C
    roll = fs[o : o + 4 * cap].reshape((cap, 4))
    idx = iscr[0:cap]
    elem = iscr[cap : 2 * cap]
    face = iscr[2 * cap : 3 * cap]
    sel = iscr[3 * cap : 4 * cap]
    keys = iscr[4 * cap : 5 * cap]
    p_hull = iscr[5 * cap : 6 * cap]
    released = iscr[6 * cap : 6 * cap + C]
    has_impulse = iscr[6 * cap + C : 6 * cap + 2 * C]
    impulse_key = iscr[6 * cap + 2 * C : 6 * cap + 5 * C].reshape((C, 3))
    c_origin = c_float[:, CF_ORIGIN : CF_ORIGIN + 3]
    c_wrench = c_float[:, CF_WRENCH : CF_WRENCH + 6]
    c_wrench_world = c_float[:, CF_WRENCH_WORLD : CF_WRENCH_WORLD + 6]
    c_pv = c_float[:, CF_PV : CF_PV + 3]
    c_impulse = c_float[:, CF_IMPULSE : CF_IMPULSE + 6]
    c_R = np.empty((C, 3, 3))
    if max_rounds < 2:  # with one solve the checks do not apply changes: general path
        return FAST_FALLBACK
    nbox = box_p.shape[0]
    # 2. detection (seed 000 4.9 (1))
    band = max(band, speculative_band_nb(V, p, g_reach, dt))
    k = detect_points_nb(g_body, g_kind, g_local, g_axis, g_radius, R, p, has_ground, ground_h, box_R, box_p,
                         box_half, tol + band, tol, idx, elem, face, gap, point, normal, tangent, roll)  # fmt: skip
    counts[N_HITS] = k
    if k >= cap:
        return FAST_FALLBACK
    for i in range(k):
        keys[i] = (g_body[idx[i]] * (nbox + 1) + elem[i]) * 8 + face[i]
    order = np.argsort(keys[:k], kind="mergesort")
    nc = _build_contacts_nb(
        k, keys, order, g_body, idx, elem, face, gap, point, normal, tangent, roll, separating, correction_rate, tol, dt,
        parent, ndof, v_index, S, V, A, m_in, counts[N_MEMORY_IN], sel, p_xy, p_gap, p_hull,
        c_int, c_float, c_R, G, J, c_drift, c_vel, counts,
    )  # fmt: skip
    if nc < 0:
        return FAST_FALLBACK
    if not cholesky_into(M, L):
        return FAST_FALLBACK
    # 3. impulses (Eq. 18-19) when a contact approaches: post-impact velocities v+ with the
    # normal bouncing back by -e v_z above the bounce threshold (Eq. 15), every other
    # constrained component stopped; then the contacts again at v+.
    approaching = False
    for ci_ in range(nc):
        if c_vel[ci_, 2] < -impact:
            approaching = True
    for ci_ in range(C):
        has_impulse[ci_] = 0
    base = v
    if approaching:
        for ci_ in range(nc):
            for c in range(6):
                c_desired[ci_, c] = 0.0
            vz = c_vel[ci_, 2]
            if vz < -bounce:
                c_desired[ci_, 2] = -restitution[c_int[ci_, 1]] * vz
            if c_float[ci_, CF_MIN_GAP] > tol and c_desired[ci_, 2] <= 0.0:
                # speculative and not bouncing: it arrives at the surface at the step's end
                c_desired[ci_, 2] = -c_float[ci_, CF_MIN_GAP] / dt
        if _solve_with_releases_nb(c_int, c_float, nc, released, G, c_desired, L, v, H, rhs, lam, v_plus, p_xy,
                                   p_hull, mu_s, max_rounds, impact) == 0:  # fmt: skip
            return FAST_FALLBACK
        n_impulses = 0
        for ci_ in range(nc):
            if not released[ci_]:
                for c in range(3):
                    impulse_key[n_impulses, c] = c_int[ci_, c]
                for c in range(6):
                    impulse_value[n_impulses, c] = c_wrench[ci_, c]
                n_impulses += 1
        counts[N_IMPULSE] = 1  # V, A, b below are at v+ (the caller restores them on fallback)
        velocities_nb(parent, ndof, v_index, S, v_plus, V, A)
        rnea_nb(parent, ndof, v_index, S, Iw, V, A, zero_nv, a_gravity, b, acc, f_work)
        nc = _build_contacts_nb(
            k, keys, order, g_body, idx, elem, face, gap, point, normal, tangent, roll, separating, correction_rate, tol, 0.0,
            parent, ndof, v_index, S, V, A, m_in, counts[N_MEMORY_IN], sel, p_xy, p_gap, p_hull,
            c_int, c_float, c_R, G, J, c_drift, c_vel, counts,
        )  # fmt: skip
        if nc < 0:
            return FAST_FALLBACK
        matched = 0
        for ci_ in range(nc):
            for r in range(n_impulses):
                if (impulse_key[r, 0] == c_int[ci_, 0] and impulse_key[r, 1] == c_int[ci_, 1]
                        and impulse_key[r, 2] == c_int[ci_, 2]):  # fmt: skip
                    has_impulse[ci_] = 1
                    for c in range(6):
                        c_impulse[ci_, c] = impulse_value[r, c]
                    matched += 1
                    break
        if matched != n_impulses:  # a contact bounced off: the general path reports it
            return FAST_FALLBACK
        base = v_plus
    elif counts[N_SPECULATIVE] > 0:  # speculative points take part in impulses only
        nc = _build_contacts_nb(
            k, keys, order, g_body, idx, elem, face, gap, point, normal, tangent, roll, separating, correction_rate, tol, 0.0,
            parent, ndof, v_index, S, V, A, m_in, counts[N_MEMORY_IN], sel, p_xy, p_gap, p_hull,
            c_int, c_float, c_R, G, J, c_drift, c_vel, counts,
        )  # fmt: skip
        if nc < 0:
            return FAST_FALLBACK
    for ci_ in range(nc):
        if not has_impulse[ci_]:
            for c in range(6):
                c_impulse[ci_, c] = 0.0
    # 4. a0 = M^-1 (tau - b) (Eq. 20 without contacts)
    for i in range(nv):
        work_nv[i] = tau_full[i] - damping[i] * base[i] - b[i]
    cho_solve_vec(L, work_nv, a0)
    # desired virtual-link accelerations θ̈_C of Eq. 20b, less the drift: the rows' values
    for ci_ in range(nc):
        ci = c_int[ci_]
        kind = ci[3]
        row = ci[8]
        st, cnt = ci[4], ci[5]
        if row >= 0:  # anchored: sticking memory (the contact sticks too)
            R_anchor = np.empty((3, 3))
            p_anchor = np.empty(3)
            for r in range(3):
                p_anchor[r] = m_in[row, MEM_P + r]
                for c in range(3):
                    R_anchor[r, c] = m_in[row, MEM_R + 3 * r + c]
            desired_acceleration_nb(kind, p_xy[st : st + cnt], p_gap[st : st + cnt], c_R[ci_], c_origin[ci_],
                                    R[ci[0]], p[ci[0]], True, R_anchor, p_anchor, c_vel[ci_], kp, kd,
                                    c_desired[ci_])  # fmt: skip
        else:
            desired_acceleration_nb(kind, p_xy[st : st + cnt], p_gap[st : st + cnt], c_R[ci_], c_origin[ci_],
                                    R[ci[0]], p[ci[0]], False, R[ci[0]], p[ci[0]], c_vel[ci_], kp, kd,
                                    c_desired[ci_])  # fmt: skip
        for c in range(6):
            c_desired[ci_, c] = c_desired[ci_, c] - c_drift[ci_, c]
    rounds = _solve_with_releases_nb(c_int, c_float, nc, released, G, c_desired, L, a0, H, rhs, lam, a, p_xy, p_hull,
                                     mu_s, max_rounds, np.inf)  # fmt: skip
    if rounds == 0:
        return FAST_FALLBACK
    # released contacts are reported only with the impulse they took (wrench F/dt)
    kept = 0
    for ci_ in range(nc):
        if released[ci_] and not has_impulse[ci_]:
            continue
        if kept != ci_:
            c_int[kept, :] = c_int[ci_, :]
            c_float[kept, :] = c_float[ci_, :]
            c_R[kept] = c_R[ci_]
            released[kept] = released[ci_]
            has_impulse[kept] = has_impulse[ci_]
        kept += 1
    nc = kept
    counts[N_CONTACTS] = nc
    counts[N_ROUNDS] = rounds
    # 5. integration (dynamics/integrator.py): the constraint force Hᵀλ = M (a - a0) is held
    # over the step beside the joint torques
    held_forces_nb(M, a, a0, tau_full, work_nv)
    for i in range(nv):
        a_out[i] = a[i]
    rk4_step_nb(tree, stage, q, base, a, work_nv, damping, dt, q_next, v_next)
    for i in range(q_next.shape[0]):
        if not math.isfinite(q_next[i]):
            return FAST_FALLBACK
    for i in range(nv):
        if not math.isfinite(v_next[i]):
            return FAST_FALLBACK
    # the reported wrench: the solved one plus the step's impulse / dt (the average force)
    for ci_ in range(nc):
        if has_impulse[ci_]:
            for c in range(6):
                c_wrench[ci_, c] = c_wrench[ci_, c] + c_impulse[ci_, c] / dt
    # reports: wrench in world axes, p_v (Eq. 26), contact points in the world; memory
    nmem = 0
    ngp = 0
    for ci_ in range(nc):
        ci = c_int[ci_]
        f = c_wrench[ci_]
        Rv = c_R[ci_]
        for r in range(3):
            c_wrench_world[ci_, r] = Rv[r, 0] * f[0] + Rv[r, 1] * f[1] + Rv[r, 2] * f[2]
            c_wrench_world[ci_, 3 + r] = Rv[r, 0] * f[3] + Rv[r, 1] * f[4] + Rv[r, 2] * f[5]
        if f[2] > 0:
            for r in range(3):
                c_pv[ci_, r] = c_origin[ci_, r] + Rv[r, 0] * (-f[4] / f[2]) + Rv[r, 1] * (f[3] / f[2])
        else:
            for r in range(3):
                c_pv[ci_, r] = np.nan
        st, cnt = ci[4], ci[5]
        for t in range(st, st + cnt):
            for r in range(3):
                p_world[t, r] = c_origin[ci_, r] + (p_xy[t, 0] * Rv[r, 0] + p_xy[t, 1] * Rv[r, 1])
            if has_ground and ci[1] == 0:
                zmp_pts[ngp, 0] = p_world[t, 0]
                zmp_pts[ngp, 1] = p_world[t, 1]
                ngp += 1
        row = ci[8]
        for r in range(3):
            for c in range(3):
                c_float[ci_, CF_R + 3 * r + c] = Rv[r, c]
        if released[ci_]:  # released: no memory
            continue
        if nmem >= m_out.shape[0]:
            return FAST_FALLBACK
        m_out[nmem, MEM_KEY] = ci[0]
        m_out[nmem, MEM_KEY + 1] = ci[1]
        m_out[nmem, MEM_KEY + 2] = ci[2]
        m_out[nmem, MEM_STICK] = 1.0
        for c in range(3):
            m_out[nmem, MEM_SLIP + c] = 0.0
        if row >= 0:  # sticking before and now, no spin: the anchor stays
            for c in range(MEM_R, MEM_P + 3):
                m_out[nmem, c] = m_in[row, c]
        else:
            body = ci[0]
            for r in range(3):
                m_out[nmem, MEM_P + r] = p[body, r]
                for c in range(3):
                    m_out[nmem, MEM_R + 3 * r + c] = R[body, r, c]
        nmem += 1
    counts[N_MEMORY_OUT] = nmem
    # ZMP of the ground contacts
    ng = 0
    for ci_ in range(nc):
        if has_ground and c_int[ci_, 1] == 0:
            ng += 1
    F = np.empty((ng, 3))
    N = np.empty((ng, 3))
    O = np.empty((ng, 3))
    g = 0
    for ci_ in range(nc):
        if has_ground and c_int[ci_, 1] == 0:
            for r in range(3):
                F[g, r] = c_wrench_world[ci_, r]
                N[g, r] = c_wrench_world[ci_, 3 + r]
                O[g, r] = c_origin[ci_, r]
            g += 1
    z, zh, margin, Ft, Nt = zmp_nb(F, O, N, zmp_pts[:ngp], ground_h)
    for r in range(3):
        zmp[r] = z[r]
        zmp[4 + r] = Ft[r]
        zmp[7 + r] = Nt[r]
    zmp[3] = margin
    for t in range(zh.shape[0]):
        zmp_hull[t] = zh[t]
    counts[N_GROUND_POINTS] = ngp
    counts[N_GROUND_HULL] = zh.shape[0]
    return FAST_OK
