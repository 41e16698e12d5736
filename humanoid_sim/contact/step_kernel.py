"""One simulator step, every case, as one compiled call (seed 000, 4.9; DESIGN.md).

``step_nb(data, q, v, tau, n_hard, factored, free)`` runs steps 2 to 5 of ``Simulator.step`` on the
bundles of contact/step_data.py (the dynamics workspace is already at (q, v)):

 2. detection of the collision candidates against the environment, in a band that grows
    with the bodies' speeds (speculative contacts); points moving away faster than
    ``separating`` dropped; each (body, element, surface) group classified point / line /
    surface with its virtual-link frame (4.2, Table 1) and its G, J̇v and velocity;
 3. when a contact or a hard row approaches faster than ``impact`` (a speculative one:
    faster than arriving at the surface or limit within the step): the impulses of
    Eq. 18-19 with restitution Eq. 15 (speculative points: arrive at the surface), checked
    as in 4.6; the velocity jumps to v+; the contacts are built again at v+, those that
    took an impulse and left are reported with it, and while something approaches again
    (an impulse turned it down) another pass, at most CALM_PASSES, then, while the step
    would carry a contact through the band, at most IMPULSE_PASSES;
 4. the solve of Eq. 20a/20b (a speculative contact takes part only if it took an impulse,
    its nearest point arriving no deeper than the surface at the step's end; guards, two
    points per group out of the contacts, only when the step would end their point deeper
    than the surface or than it starts: _build_contacts; the group's other points watched,
    and the solve repeated with those it would drive in as guards: _watch_points) with the
    validity checks of 4.4-4.5 (at most ``max_rounds`` solves per phase): release (f_z <= 0;
    a contact held sticking while it slides slips first), reduction of the area to the edge or vertex
    nearest p_v, slipping (Eq. 31-36, Ĥ_C of Eq. 36), spinning (Eq. 30, 33), a slip that
    would reverse sticks, stopped by the step's end; hard provider rows released when their force turns negative.
    A phase whose checked solve is rank deficient or still fails after the rounds, or
    releases a contact that goes on approaching (Painlevé), or an impulse whose p_v leaves an
    area (reduced, the area would drop points that are striking the ground), or reduces an
    area whose dropped points its accelerations would drive in, is replaced by
    the bounded solve of the same rows (contact/bounded_solve.py; an area the rounds reduced
    taken back as built where the solve would drive one of its points in), valid by
    construction: a failed solve is never integrated;
 5. integration (dynamics/integrator.py: RK4-Munthe-Kaas with the constraint force held; a
    state at rest takes the constant-acceleration step the stages would give);
    reports (wrenches, p_v of Eq. 26, world points, ZMP) and the contact memory.

Returns OK, or CAPACITY (a table was too small: the caller grows it and repeats the step;
nothing of the state or the memory was changed), SINGULAR (M not positive definite),
NONFINITE (the new state is not finite): both a bug or non-finite input.

Symbols: per contact the virtual-link components (v_x, v_y, v_z, ω_x, ω_y, ω_z) = 0..5;
f the wrench in its frame; μ_s, μ_d static and dynamic friction of the element; d the
torsion arm (mean distance over the area from the origin).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from humanoid_sim.contact.bounded_solve import (
    BLOCK_BOX,
    BLOCK_LINE,
    BLOCK_ONE_SIDED,
    BLOCK_POINT,
    BLOCK_SURFACE,
    BoundedRows,
    bounded_solve_nb,
)
from humanoid_sim.contact.broad_phase import shape_aabbs_nb, sweep_and_prune_nb
from humanoid_sim.contact.bundle_records import borrow
from humanoid_sim.contact.kernels import (
    _TRI_RULE,
    argsort_stable_into,
    classify_into,
    contact_kinematics_nb,
    convex_hull_into,
    desired_acceleration_nb,
    detect_points_nb,
    guard_acceleration_nb,
    guard_target_nb,
    lu_solve_into,
    mean_distance_nb,
    nearest_feature_nb,
    rolling_drift_nb,
    schur_solve_into,
    shrink,
    signed_distance_nb,
    speculative_target_nb,
    stop_slip_target_nb,
    zmp_margin,
    zmp_point,
)
from humanoid_sim.contact.methods import CAPACITY, NONFINITE, OK, PENALTY_VOLUME, RELAXED_QP, SINGULAR, VIRTUAL_LINK
from humanoid_sim.contact.pair_contacts import collide_pairs_nb
from humanoid_sim.contact.penalty_volume import penalty_volume_free_acceleration_nb, penalty_volume_nb
from humanoid_sim.contact.relaxed_qp import relaxed_qp_nb
from humanoid_sim.contact.step_data import REPORT_WORDS, result_head
from humanoid_sim.dynamics.integrator import (
    at_rest_nb,
    held_forces_nb,
    held_step_nb,
    hold_wrench_nb,
    lock_stops_nb,
    release_held_wrenches_nb,
    rest_step_nb,
)
from humanoid_sim.dynamics.kernels import point_motion_nb, rnea_nb, update_all_nb, velocities_nb
from humanoid_sim.dynamics.mass_factor import back_project_nb, factor_nb, rows_nb, solve_lt_vec_nb, solve_vec_nb

__all__ = [
    "CAPACITY", "NONFINITE", "OK", "SINGULAR", "free_acceleration_into", "speculative_band_nb", "step_nb",
    "update_dynamics_nb",
]


VX, VY, VZ, WX, WY, WZ = 0, 1, 2, 3, 4, 5
VALID, CHANGED, TO_BOUNDED = 0, 1, 2  # _check's verdicts
POINT, LINE, SURFACE = 1, 2, 3
IMPULSE_PHASE, ACCELERATION_PHASE = 0, 1
# Impulse passes per step (step 3: a pass's impulse can turn points down). The first
# CALM_PASSES stop whatever approaches faster than it may; later ones, up to IMPULSE_PASSES, only
# a contact or hard row the step would carry through the band (_plunging, _hard_targets): a
# slower approach is left to the acceleration phase, which stops it within the band. A foot
# spinning onto the ground rocks from edge to edge over the passes (front, side, back, ...):
# g1's took four, and stopped after three it ended the step 1.8 mm deep. Lying robots' passes
# that go on over approaches of a few mm/s stop at CALM_PASSES, as they did.
CALM_PASSES = 3
IMPULSE_PASSES = 8
# acceleration-phase solves that take in the watched points the last one would drive in, at
# most (_watch_points), beside the first
WATCH_PASSES = 2
# [m/s^2] a contact released by the bounded solve while its normal acceleration stays below its
# target by more than this has no answer with its friction (_bounded)
RELEASE_MARGIN = 1.0
TORSION_ARM = 1.0  # d = TORSION_ARM x the mean distance over the area (Eq. 30, 33)
# Slipping rows make B = H A^-1 Ĥᵀ unsymmetric (LU instead of Cholesky): its rows count as
# dependent when the smallest LU pivot is at most this fraction of the largest (the
# rounding leaves pivots of 1e-13 to 1e-16 of the largest where B is singular (condition
# numbers of 1e18 seen); well-posed contact sets stay above 1e-6).
LU_PIVOT_RATIO = 1e-10  # the same in constrained_solve.solve_constrained


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


# ------------------------------------------------------------------ contacts

FLAT_TOLERANCE = 1e-4  # [m] a face within this of the contact plane is flat on it (narrow phase)


@njit(cache=True)
def _detect_pairs(d, band, k, key0) -> int:
    """The points of the narrow phase (d.pairs: candidate shape pairs, a body's shape and a
    static box or two bodies' shapes, whose AABBs, grown by band [m], overlap; collided
    within band) appended to the detection after its first k points, keyed key0 +
    candidate index (one group per shape pair). Returns the new number of points, or -1
    when a buffer is too small."""
    bp, dyn, det = d.pairs, d.dyn, d.detection
    n = bp.body.shape[0]
    for s in range(n):  # X_world_shape = X_world_body X_body_shape
        b = bp.body[s]
        if b < 0:  # static: its world pose is set once
            continue
        for r in range(3):
            for c in range(3):
                bp.R[s, r, c] = dyn.R[b, r, 0] * bp.R_local[s, 0, c] + dyn.R[b, r, 1] * bp.R_local[s, 1, c] + \
                    dyn.R[b, r, 2] * bp.R_local[s, 2, c]
            bp.p[s, r] = dyn.p[b, r] + dyn.R[b, r, 0] * bp.p_local[s, 0] + dyn.R[b, r, 1] * bp.p_local[s, 1] + \
                dyn.R[b, r, 2] * bp.p_local[s, 2]
    shape_aabbs_nb(bp.shapes, bp.R, bp.p, band, bp.lo, bp.hi)
    m = sweep_and_prune_nb(bp.lo, bp.hi, bp.pair_id, bp.order, bp.pairs)
    if m >= bp.pairs.shape[0]:
        return -1
    rows = collide_pairs_nb(bp.shapes, bp.R, bp.p, bp.pairs, m, band, FLAT_TOLERANCE, bp.contacts, bp.manifold,
                            bp.scratch)  # fmt: skip
    if rows < 0 or k + rows >= det.idx.shape[0]:
        return -1
    pc = bp.contacts
    for r in range(rows):
        a, b = bp.pairs[pc.pair[r], 0], bp.pairs[pc.pair[r], 1]
        cand = bp.pair_id[a, b] - 1
        h = k + r
        det.idx[h] = -1
        det.body[h] = bp.body[b]  # on B's surface; the normal points from A into B
        det.other[h] = bp.body[a]  # -1: a static shape
        det.elem[h] = bp.element[cand]
        det.face[h] = cand
        det.gap[h] = pc.gap[r]
        for c in range(3):
            det.point[h, c] = pc.point_b[r, c]
            det.normal[h, c] = pc.normal[r, c]
            det.tangent[h, c] = pc.tangent[r, c]
        for c in range(4):  # B rolling over A (A's own turning is not counted)
            det.roll[h, c] = pc.roll_b[r, c]
        det.keys[h] = key0 + cand
    return k + rows


@njit(cache=True)
def _components(kind, sticking, spin):
    """The constrained virtual-link components of a contact (Table 1, 2), v_z first: (their
    number n, the components packed 3 bits each, the r-th read by _component). A code, not
    an array: the per-contact helpers that read them allocate nothing."""
    code = VZ
    n = 1
    if kind == SURFACE:
        code |= (WX << 3) | (WY << 6)
        n = 3
    elif kind == LINE:
        code |= WY << 3
        n = 2
    if sticking:
        code |= (VX << (3 * n)) | (VY << (3 * n + 3))
        n += 2
        if kind != POINT and spin == 0.0:
            code |= WZ << (3 * n)
            n += 1
    return n, code


@njit(cache=True, inline="always")
def _component(code, r):
    """The r-th component (VX ... WZ) of a _components code."""
    return (code >> (3 * r)) & 7


@njit(cache=True)
def _refresh(d, tab, i) -> None:
    """G, drift, velocity, rolling and (slipping) slip direction of contact i from its frame
    and points (its torsion arm is reset: _arm computes it when needed)."""
    dyn = d.dyn
    tree = d.tree
    body = tab.body[i]
    contact_kinematics_nb(tree.parent, tree.ndof, tree.v_index, dyn.S, dyn.V, dyn.A, body, tab.origin[i], tab.R[i],
                          d.solve.J, tab.G[i], tab.drift[i], tab.vel[i])  # fmt: skip
    other = tab.other[i]
    if other >= 0:  # between two bodies: the virtual link joins them, J = J_body - J_other
        s = d.solve
        contact_kinematics_nb(tree.parent, tree.ndof, tree.v_index, dyn.S, dyn.V, dyn.A, other, tab.origin[i],
                              tab.R[i], s.J, s.G_other, s.drift_other, s.vel_other)  # fmt: skip
        G = tab.G[i]
        for r in range(6):
            tab.drift[i, r] -= s.drift_other[r]
            tab.vel[i, r] -= s.vel_other[r]
            for col in range(G.shape[1]):
                G[r, col] -= s.G_other[r, col]
    st, cnt = tab.point_start[i], tab.point_count[i]
    tab.rolling[i] = rolling_drift_nb(dyn.V, body, tab.R[i], d.detection.roll, tab.hit[st : st + cnt], cnt, tab.drift[i])
    tab.arm[i] = -1.0  # computed when first needed (_arm)
    # A slipping contact slides along its velocity, else its remembered direction. One new
    # this step slips because its friction reached the bound within this phase: it keeps
    # the direction of Eq. 32 (-f_t) through an area reduction.
    if not tab.sticking[i] and tab.memory_row[i] >= 0:
        vx, vy = tab.vel[i, 0], tab.vel[i, 1]
        n = math.hypot(vx, vy)
        if n > 1e-12:
            tab.slip[i, 0] = vx / n
            tab.slip[i, 1] = vy / n
        else:  # the remembered direction, in this contact's axes
            row = tab.memory_row[i]
            m = d.memory
            cur = m.current[0]
            R = tab.R[i]
            sx, sy = 0.0, 0.0
            for r in range(3):
                sx += R[r, 0] * m.slip[cur, row, r]
                sy += R[r, 1] * m.slip[cur, row, r]
            ns = math.hypot(sx, sy)
            if ns > 1e-12:
                tab.slip[i, 0] = sx / ns
                tab.slip[i, 1] = sy / ns
            else:
                tab.slip[i, 0] = 1.0
                tab.slip[i, 1] = 0.0


@njit(cache=True)
def _arm(d, tab, i) -> float:
    """Contact i's torsion arm d [m] (Eq. 30, 33): TORSION_ARM x the mean distance from the
    origin over its area (0 for a point); computed once per area, when first needed."""
    if tab.arm[i] < 0.0:
        if tab.kind[i] == POINT:
            tab.arm[i] = 0.0
        else:
            tab.arm[i] = TORSION_ARM * mean_distance_nb(_hull_polygon(d, tab, i), _TRI_RULE)
    return tab.arm[i]


@njit(cache=True)
def _hull_polygon(d, tab, i):
    """Contact i's hull (hull_count, 2), its xy in hull order, in the detection's scratch
    (detection.uv: nothing allocated); valid until the scratch is next written."""
    st, hs, hc = tab.point_start[i], tab.hull_start[i], tab.hull_count[i]
    poly = d.detection.uv[:hc]
    for t in range(hc):
        poly[t, 0] = tab.xy[st + tab.hull[hs + t], 0]
        poly[t, 1] = tab.xy[st + tab.hull[hs + t], 1]
    return poly


@njit(cache=True)
def _build_contacts(d, tab, k, spec_dt, separating, guards) -> int:
    """Contacts of the k detected points at the workspace's velocities into ``tab``: points
    grouped by (body, element, surface) (detection.order sorts the keys stably), points
    separating faster than ``separating`` [m/s] dropped (np.inf: none, for a method whose
    solve decides separation itself), each group classified and its state read from the
    memory. Points farther than the tolerance are speculative: kept only when spec_dt > 0
    and they would come within it in spec_dt at their normal velocity.
    guards: of the points a group dropped (moving out, or not arriving at its velocity),
    the two that would end the step deepest at their velocities, g + v_n dt, become guards
    after the group's contact: frictionless point contacts that take part in the
    acceleration phase only, and only when the step's accelerations would take their point
    deeper than the surface or than it starts (kernels.guard_target_nb). A limb turned
    round within the step by full-effort torques accelerates at thousands of m/s^2: a point
    rising at the step's start, or a few millimetres above the ground, ended it 0.5-1 mm
    deep, and again at the next step. (Two: a body tipping about one guarded point drives
    the next one in.) The group's other dropped points are watched (detection.watch,
    _watch_points). Returns the number of contacts, or -1 when a table is too small."""
    det, dyn, par = d.detection, d.dyn, d.params
    V = dyn.V
    tol = par.tolerance
    keys, order, sel = det.keys, det.order, det.sel
    gap, point, normal = det.gap, det.point, det.normal
    counts = d.out.counts[0]
    counts.speculative = 0
    watch = det.watch
    nw = 0
    nc = 0
    npts = 0
    s0 = 0
    while s0 < k:
        s1 = s0 + 1
        while s1 < k and keys[order[s1]] == keys[order[s0]]:
            s1 += 1
        j = order[s0]
        body = det.body[j]
        other = det.other[j]
        n0, n1, n2 = normal[j, 0], normal[j, 1], normal[j, 2]
        w0, w1, w2 = V[body, 3], V[body, 4], V[body, 5]
        vo0, vo1, vo2 = V[body, 0], V[body, 1], V[body, 2]
        if other >= 0:  # the velocity of body relative to other (spatial, world origin)
            w0, w1, w2 = w0 - V[other, 3], w1 - V[other, 4], w2 - V[other, 5]
            vo0, vo1, vo2 = vo0 - V[other, 0], vo1 - V[other, 1], vo2 - V[other, 2]
        nxw0 = n1 * w2 - n2 * w1
        nxw1 = n2 * w0 - n0 * w2
        nxw2 = n0 * w1 - n1 * w0
        vo_n = vo0 * n0 + vo1 * n1 + vo2 * n2
        m = 0
        # the two dropped points that would end the step deepest at their velocities
        first, first_end, second, second_end = -1, 1e300, -1, 1e300
        for t in range(s0, s1):
            h = order[t]
            # normal velocity (v_O + w x p) . n; a penetrating point moving out no faster than
            # the correction of Eq. 20b drives it is being corrected, not separating (the
            # per-vertex methods keep every point in the band: separating = inf)
            vn = vo_n + point[h, 0] * nxw0 + point[h, 1] * nxw1 + point[h, 2] * nxw2
            if gap[h] > tol:
                keep = gap[h] + vn * spec_dt < tol
                if keep:
                    counts.speculative += 1
            else:
                keep = vn <= separating + par.correction_rate * max(0.0, -gap[h])
            if keep:
                sel[m] = h
                m += 1
            elif guards:
                watch[nw] = h
                nw += 1
                end = gap[h] + vn * par.dt
                if end < first_end:
                    second, second_end = first, first_end
                    first, first_end = h, end
                elif end < second_end:
                    second, second_end = h, end
        if m > 0:
            nc, npts = _add_contact(d, tab, nc, npts, j, m, False)
            if nc < 0:
                return -1
        for h in (first, second):
            if guards and h >= 0:
                sel[0] = h
                nc, npts = _add_contact(d, tab, nc, npts, j, 1, True)
                if nc < 0:
                    return -1
                for t in range(nw - 1, -1, -1):  # a guard, not watched (the order kept)
                    if watch[t] == h:
                        for u in range(t, nw - 1):
                            watch[u] = watch[u + 1]
                        nw -= 1
                        break
        s0 = s1
    det.n_watch[0] = nw
    return nc


@njit(cache=True)
def _add_contact(d, tab, nc, npts, j, m, guard) -> tuple:
    """The contact of the m detected points detection.sel[:m] of detected point j's group
    (body, element, surface) into row nc of tab, its points from row npts; a guard
    (_build_contacts) is new, slipping without friction, and out of the impulse phase
    (released, bounced) until _set_aside_speculative admits it to the acceleration phase.
    Returns (nc + 1, the next free point row), or (-1, -1) when a table is too small."""
    det, mem = d.detection, d.memory
    sel, gap, point = det.sel, det.gap, det.point
    if nc >= tab.body.shape[0] or npts + m > tab.xy.shape[0]:
        return -1, -1
    body = det.body[j]
    tab.body[nc] = body
    tab.other[nc] = det.other[j]
    tab.element[nc] = det.elem[j]
    tab.face[nc] = det.face[j]
    tab.point_start[nc] = npts
    tab.hull_start[nc] = npts
    if m == 1:  # a point (every guard): classify_into's frame of one point
        _point_frame(det.normal[j], det.tangent[j], tab.R[nc])
        h = sel[0]
        for c in range(3):
            tab.origin[nc, c] = point[h, c]
        tab.kind[nc] = POINT
        tab.xy[npts, 0] = 0.0
        tab.xy[npts, 1] = 0.0
        tab.gap[npts] = gap[h]
        tab.hit[npts] = h
        tab.hull[npts] = 0
        tab.point_count[nc] = 1
        tab.hull_count[nc] = 1
        tab.min_gap[nc] = gap[h]
    else:
        _classify_into(d, tab, nc, npts, j, m)
    row = -1
    cur = mem.current[0]
    if not guard:
        for r in range(mem.count[cur]):
            if mem.key[cur, r, 0] == body and mem.key[cur, r, 1] == det.elem[j] and mem.key[cur, r, 2] == det.face[j]:
                row = r
                break
    tab.memory_row[nc] = row
    tab.sticking[nc] = 0 if guard else (1 if row < 0 else mem.sticking[cur, row])
    tab.keep_anchor[nc] = 1 if row >= 0 and mem.sticking[cur, row] else 0
    tab.stopping[nc] = 0
    tab.spin[nc] = 0.0
    tab.released[nc] = 1 if guard else 0
    tab.bounced[nc] = 1 if guard else 0
    tab.guard[nc] = 1 if guard else 0
    tab.impulse_taken[nc] = 0
    tab.slip[nc, 0] = 0.0
    tab.slip[nc, 1] = 0.0
    for c in range(6):
        tab.wrench[nc, c] = 0.0
        tab.impulse[nc, c] = 0.0
    _refresh(d, tab, nc)
    return nc + 1, npts + tab.point_count[nc]


@njit(cache=True)
def _point_frame(normal, tangent, R) -> None:
    """The virtual-link axes of a point contact into R (3, 3), columns x, y, z: x the tangent
    made normal to the normal, z the normal (classify_into's frame of one point, the same
    operations)."""
    dot = tangent[0] * normal[0] + tangent[1] * normal[1] + tangent[2] * normal[2]
    x0, x1, x2 = tangent[0] - normal[0] * dot, tangent[1] - normal[1] * dot, tangent[2] - normal[2] * dot
    n = math.sqrt(x0**2 + x1**2 + x2**2)
    x0, x1, x2 = x0 / n, x1 / n, x2 / n
    R[0, 0], R[1, 0], R[2, 0] = x0, x1, x2
    R[0, 1] = normal[1] * x2 - normal[2] * x1
    R[1, 1] = normal[2] * x0 - normal[0] * x2
    R[2, 1] = normal[0] * x1 - normal[1] * x0
    R[0, 2], R[1, 2], R[2, 2] = normal[0], normal[1], normal[2]


@njit(cache=True)
def _classify_into(d, tab, nc, npts, j, m) -> None:
    """Kind, frame, points and hull of contact nc from the m > 1 detected points
    detection.sel[:m] of point j's group (Table 1: kernels.classify_into), its points from row
    npts; a point contact keeps the deepest one."""
    det = d.detection
    sel, gap, point = det.sel, det.gap, det.point
    pts = det.pts
    for t in range(m):
        for c in range(3):
            pts[t, c] = point[sel[t], c]
    # frame, origin and points straight into the table; the hull through the detection's scratch
    hull = det.hull
    kind, hc = classify_into(pts, m, det.normal[j], det.tangent[j], 1e-6, 1e-4, det.uv, det.hull_order, hull, tab.R[nc],
                             tab.origin[nc], tab.xy[npts : npts + m])  # fmt: skip
    tab.kind[nc] = kind
    mg = 1e300
    if kind == POINT:  # one distinct point: the deepest one
        deep = 0
        for t in range(1, m):
            if gap[sel[t]] < gap[sel[deep]]:
                deep = t
        for c in range(3):
            tab.origin[nc, c] = pts[deep, c]
        tab.xy[npts, 0] = 0.0
        tab.xy[npts, 1] = 0.0
        tab.gap[npts] = gap[sel[deep]]
        tab.hit[npts] = sel[deep]
        tab.hull[npts] = 0
        mg = gap[sel[deep]]
        tab.point_count[nc] = 1
        tab.hull_count[nc] = 1
    else:
        for t in range(m):
            g = gap[sel[t]]
            tab.gap[npts + t] = g
            tab.hit[npts + t] = sel[t]
            mg = min(mg, g)
        for t in range(hc):
            tab.hull[npts + t] = hull[t]
        tab.point_count[nc] = m
        tab.hull_count[nc] = hc
    tab.min_gap[nc] = mg


@njit(cache=True)
def _set_target(d, tab, i, phase, slop=0.0) -> None:
    """Desired values of contact i's rows for the phase into tab.target[i] (6,):
    impulses: v_z bounces back by -e v_z above the bounce threshold (Eq. 15), a speculative
    contact not bouncing arrives at the surface (-gap / dt), every other component stops;
    accelerations: θ̈_C of Eq. 20b (penetration, tilt and anchored drift corrected
    critically damped, each only beyond ``slop`` [m]: kernels.desired_acceleration_nb), a
    speculative contact's normal row arriving at the surface by the step's end
    (kernels.speculative_target_nb), a guard's no deeper than the surface or than it starts
    (kernels.guard_target_nb), less the drift J̇v."""
    par = d.params
    out = tab.target[i]
    if tab.guard[i]:  # in the acceleration phase only
        guard_target_nb(tab.gap[tab.point_start[i]], tab.vel[i], par.dt, out)
        for c in range(6):
            out[c] -= tab.drift[i, c]
        return
    if phase == IMPULSE_PHASE:
        for c in range(6):
            out[c] = 0.0
        vz = tab.vel[i, 2]
        if vz < -par.bounce:
            out[VZ] = -d.statics.restitution[tab.element[i]] * vz
        st, cnt = tab.point_start[i], tab.point_count[i]
        g = 1e300
        for t in range(st, st + cnt):
            g = min(g, tab.gap[t])
        if g > par.tolerance and out[VZ] <= 0.0:
            out[VZ] = -g / par.dt
        return
    dyn = d.dyn
    body = tab.body[i]
    st, cnt = tab.point_start[i], tab.point_count[i]
    row = tab.memory_row[i]
    anchored = row >= 0 and tab.keep_anchor[i] and tab.sticking[i] and not tab.rolling[i]
    if anchored and tab.other[i] >= 0:  # the anchor is body's pose in other's frame
        m = d.memory
        cur = m.current[0]
        R_rel, p_rel = _relative_pose(dyn, body, tab.other[i])
        R_vl, origin = _in_frame_of(dyn, tab.other[i], tab.R[i], tab.origin[i])
        desired_acceleration_nb(tab.kind[i], tab.xy[st : st + cnt], tab.gap[st : st + cnt], R_vl, origin, R_rel,
                                p_rel, True, m.R[cur, row], m.p[cur, row], tab.vel[i], par.kp, par.kd, out, slop)  # fmt: skip
    elif anchored:
        m = d.memory
        cur = m.current[0]
        desired_acceleration_nb(tab.kind[i], tab.xy[st : st + cnt], tab.gap[st : st + cnt], tab.R[i], tab.origin[i],
                                dyn.R[body], dyn.p[body], True, m.R[cur, row], m.p[cur, row], tab.vel[i], par.kp,
                                par.kd, out, slop)  # fmt: skip
    else:
        desired_acceleration_nb(tab.kind[i], tab.xy[st : st + cnt], tab.gap[st : st + cnt], tab.R[i], tab.origin[i],
                                dyn.R[body], dyn.p[body], False, dyn.R[body], dyn.p[body], tab.vel[i], par.kp,
                                par.kd, out, slop)  # fmt: skip
    speculative_target_nb(tab.xy[st : st + cnt], tab.gap[st : st + cnt], tab.vel[i], par.tolerance, par.dt, out)
    if tab.stopping[i] and tab.sticking[i]:
        stop_slip_target_nb(tab.vel[i], par.dt, out)
    for c in range(6):
        out[c] -= tab.drift[i, c]


@njit(cache=True)
def _relative_pose(dyn, body, other):
    """body's pose in other's frame: R_other^T R_body (3, 3), R_other^T (p_body - p_other) (3,)."""
    Ro = dyn.R[other]
    R_rel = Ro.T @ dyn.R[body]
    dp = dyn.p[body] - dyn.p[other]
    return R_rel, Ro.T @ dp


@njit(cache=True)
def _in_frame_of(dyn, other, R, origin):
    """A virtual link (R (3, 3), origin (3,), world) in other's frame."""
    Ro = dyn.R[other]
    return Ro.T @ R, Ro.T @ (origin - dyn.p[other])


@njit(cache=True)
def _to_point(tab, i, j0) -> None:
    """Contact i becomes the point contact at its point row j0: the origin moves there, the
    frame stays."""
    st = tab.point_start[i]
    R = tab.R[i]
    x, y = tab.xy[j0, 0], tab.xy[j0, 1]
    for r in range(3):
        tab.origin[i, r] += R[r, 0] * x + R[r, 1] * y
    g, hit = tab.gap[j0], tab.hit[j0]
    tab.xy[st, 0] = 0.0
    tab.xy[st, 1] = 0.0
    tab.gap[st] = g
    tab.hit[st] = hit
    tab.hull_start[i] = st
    tab.hull[st] = 0
    tab.point_count[i] = 1
    tab.hull_count[i] = 1
    tab.kind[i] = POINT


@njit(cache=True)
def _reduce_area(d, tab, i, h0, h1) -> None:
    """Contact i becomes the point contact at hull position h0 (h1 < 0) or the line contact
    along the hull edge (h0, h1) (seed 000 4.4 (2): p_v left the area)."""
    st = tab.point_start[i]
    hs = tab.hull_start[i]
    R = tab.R[i]
    j0 = st + tab.hull[hs + h0]
    if h1 < 0:
        _to_point(tab, i, j0)
        return
    j1 = st + tab.hull[hs + h1]
    x0, y0, x1, y1 = tab.xy[j0, 0], tab.xy[j0, 1], tab.xy[j1, 0], tab.xy[j1, 1]
    g0, g1, k0, k1 = tab.gap[j0], tab.gap[j1], tab.hit[j0], tab.hit[j1]
    mx, my = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    dx, dy = x1 - x0, y1 - y0
    n = math.hypot(dx, dy)
    dx, dy = dx / n, dy / n
    # new axes: x along the edge, z the same normal
    l0, l1, l2 = R[0, 0] * dx + R[0, 1] * dy, R[1, 0] * dx + R[1, 1] * dy, R[2, 0] * dx + R[2, 1] * dy
    n0, n1, n2 = R[0, 2], R[1, 2], R[2, 2]
    for r in range(3):
        tab.origin[i, r] += R[r, 0] * mx + R[r, 1] * my
    # coordinates in the new axes: (xy - mid) rotated by the in-plane angle of the edge
    ax0, ay0 = (x0 - mx) * dx + (y0 - my) * dy, -(x0 - mx) * dy + (y0 - my) * dx
    ax1, ay1 = (x1 - mx) * dx + (y1 - my) * dy, -(x1 - mx) * dy + (y1 - my) * dx
    tab.R[i, 0, 0], tab.R[i, 1, 0], tab.R[i, 2, 0] = l0, l1, l2
    tab.R[i, 0, 1], tab.R[i, 1, 1], tab.R[i, 2, 1] = n1 * l2 - n2 * l1, n2 * l0 - n0 * l2, n0 * l1 - n1 * l0
    tab.xy[st, 0], tab.xy[st, 1], tab.xy[st + 1, 0], tab.xy[st + 1, 1] = ax0, ay0, ax1, ay1
    tab.gap[st], tab.gap[st + 1] = g0, g1
    tab.hit[st], tab.hit[st + 1] = k0, k1
    tab.hull[st], tab.hull[st + 1] = 0, 1
    tab.point_count[i] = 2
    tab.hull_count[i] = 2
    tab.kind[i] = LINE


@njit(cache=True, inline="always")
def _mu(d, tab, i, static) -> float:
    """Contact i's static (μ_s) or dynamic (μ_d) friction coefficient: its element's, 0 for a
    guard (_build_contacts: frictionless)."""
    if tab.guard[i]:
        return 0.0
    return d.statics.mu_s[tab.element[i]] if static else d.statics.mu_d[tab.element[i]]


@njit(cache=True, inline="always")
def _hat_row_z(d, tab, i, out) -> None:
    """Ĥ_Cfz of Eq. 36 (slipping) plus the spinning moment's row (Eq. 30) into out (nv,)."""
    mu_d = _mu(d, tab, i, False)
    G = tab.G[i]
    nv = out.shape[0]
    for col in range(nv):
        out[col] = G[VZ, col]
    if not tab.sticking[i]:
        sx, sy = tab.slip[i, 0], tab.slip[i, 1]
        for col in range(nv):
            out[col] -= mu_d * (sx * G[VX, col] + sy * G[VY, col])
    if tab.spin[i] != 0.0:
        s = tab.spin[i] * mu_d * _arm(d, tab, i)
        for col in range(nv):
            out[col] += s * G[WZ, col]


@njit(cache=True, inline="always")
def _full_wrench(d, tab, i, lam, r0) -> None:
    """Contact i's wrench (f, n) in its virtual-link frame from its row forces lam[r0:]."""
    f = tab.wrench[i]
    for c in range(6):
        f[c] = 0.0
    n, code = _components(tab.kind[i], tab.sticking[i], tab.spin[i])
    for r in range(n):
        f[_component(code, r)] = lam[r0 + r]
    mu_d = d.statics.mu_d[tab.element[i]]
    if not tab.sticking[i]:
        f[VX] = -mu_d * tab.slip[i, 0] * f[VZ]
        f[VY] = -mu_d * tab.slip[i, 1] * f[VZ]
    if tab.spin[i] != 0.0:
        f[WZ] = tab.spin[i] * mu_d * _arm(d, tab, i) * f[VZ]


# ------------------------------------------------------------------ solves


@njit(cache=True)
def _lu_solve(B, r, out, A) -> bool:
    """Solve B out = r (k, k) by LU with partial pivoting (B unchanged; A (k, k): scratch for
    its factors); False for rank-deficient rows: a pivot at or below LU_PIVOT_RATIO times the
    largest, or a residual |B out - r| above 1e-9 (1 + |r|)."""
    k = B.shape[0]
    for a in range(k):
        out[a] = r[a]
        for b in range(k):
            A[a, b] = B[a, b]
    pmin, pmax = lu_solve_into(A, out, k)
    if not pmin > LU_PIVOT_RATIO * pmax:  # dependent rows: λ would be arbitrary
        return False
    res = 0.0
    nr = 0.0
    for a in range(k):
        s = -r[a]
        for b in range(k):
            s += B[a, b] * out[b]
        res += s * s
        nr += r[a] * r[a]
        if not math.isfinite(out[a]):
            return False
    return math.sqrt(res) <= 1e-9 * (1.0 + math.sqrt(nr))


@njit(cache=True)
def _solve_rows(d, nrow, symmetric, base, x, lam) -> int:
    """A x - Ĥᵀ λ = A base, H x = rhs for the assembled rows (constrained_solve.py): 0 on
    success, 1 when B is singular (rank deficient rows), 2 when not finite."""
    s = d.solve
    nv = base.shape[0]
    s.gram[0] = 0
    if nrow == 0:
        for i in range(nv):
            x[i] = base[i]
        return 0
    if nrow > nv:  # B = H A^-1 Ĥᵀ (nrow, nrow) has rank nv at most: singular, without forming it
        return 1
    k = nrow
    ZT = s.ZT[: nv * k].reshape((nv, k))
    B = s.B[: k * k].reshape((k, k))
    LB = s.LB[: k * k].reshape((k, k))
    r = s.r[:k]
    if symmetric:  # its Gram, formed first, is kept for a bounded solve of the same rows (SolveScratch.gram)
        status = schur_solve_into(s.L, d.tree.dof_parent, s.H[:k], s.rhs[:k], base, x, lam[:k], ZT, B, LB, r)
        s.gram[0] = k
        return status
    # Ĥ != H (slipping or spinning): B = H A^-1 Ĥᵀ = (L^-T Hᵀ)ᵀ (L^-T Ĥᵀ) is not symmetric.
    # L^-T Ĥᵀ is L^-T Hᵀ but for the few rows of Ĥ that are not H's (s.hat)
    ZhT = s.ZhT[: nv * k].reshape((nv, k))
    parent = d.tree.dof_parent
    rows_nb(s.L, parent, s.H[:k], ZT)
    for i in range(nv):
        for a in range(k):
            ZhT[i, a] = ZT[i, a]
    for a in range(k):
        if s.hat[a]:
            zh = s.zh
            for i in range(nv):
                zh[i] = s.H_hat[a, i]
            solve_lt_vec_nb(s.L, parent, zh)
            for i in range(nv):
                ZhT[i, a] = zh[i]
    for a in range(k):
        t = s.rhs[a]
        for i in range(nv):
            t -= s.H[a, i] * base[i]
        r[a] = t
        for b in range(k):
            B[a, b] = 0.0
    for i in range(nv):  # B = ZTᵀ ZhT summed over i in order, along ZhT's rows (contiguous), zeros of ZT skipped
        for a in range(k):
            za = ZT[i, a]
            if za != 0.0:
                for b in range(k):
                    B[a, b] += za * ZhT[i, b]
    if not _lu_solve(B, r, lam[:k], LB):
        return 1
    back_project_nb(s.L, parent, ZhT, lam[:k], x)
    for i in range(nv):
        x[i] += base[i]
        if not math.isfinite(x[i]):
            return 2
    return 0


@njit(cache=True)
def _assemble(d, tab, nc, n_hard, n_fric) -> tuple:
    """Stack the constrained rows H_C, the modified rows Ĥ_C (Eq. 36) and the desired values
    of the contacts not released and of the active hard rows into the solve scratch.
    Returns (rows, contact rows, Ĥ = H)."""
    s = d.solve
    hard = d.hard
    nv = s.H.shape[1]
    row = 0
    symmetric = True
    for i in range(nc):
        if tab.released[i] or tab.bounced[i]:
            continue
        n, code = _components(tab.kind[i], tab.sticking[i], tab.spin[i])
        tab.row_start[i] = row
        for r in range(n):
            c = _component(code, r)
            for col in range(nv):
                s.H[row + r, col] = tab.G[i, c, col]
            s.rhs[row + r] = tab.target[i, c]
            s.hat[row + r] = 0
        if (not tab.sticking[i]) or tab.spin[i] != 0.0:  # Ĥ's row differs from H's (only it is written)
            symmetric = False
            _hat_row_z(d, tab, i, s.H_hat[row])
            s.hat[row] = 1
        row += n
    ncrow = row
    for j in range(n_hard):
        if hard.active[j]:
            for col in range(nv):
                s.H[row, col] = hard.jacobian[j, col]
            s.rhs[row] = hard.target[j]
            s.hat[row] = 0
            row += 1
    fr = d.friction
    v = d.out.v_plus
    for j in range(n_fric):  # held joints: stop within the step, v + dt a = 0
        if fr.stick[j]:
            for col in range(nv):
                s.H[row, col] = 0.0
            s.H[row, fr.index[j]] = 1.0
            s.rhs[row] = -v[fr.index[j]] / d.params.dt
            s.hat[row] = 0
            row += 1
    return row, ncrow, symmetric


@njit(cache=True)
def _check(d, tab, i, phase, x, apply, built) -> int:
    """Contact i's validity checks (4.4, 4.5) on its wrench: VALID, CHANGED when its state
    must change (changed when apply), or TO_BOUNDED when the phase must go to the bounded
    solve: an impulse whose p_v leaves the area. An area reduced for the first time in the
    phase is first kept as built in row i of the table ``built`` (kind 0 there: not yet), for
    the bounded solve should the rounds fail (_bounded). (Reduced to the nearest edge or vertex as
    in the acceleration phase, the area would drop its other points, and a body hitting the
    ground at metres per second drives those on into it within the step; the bounded solve
    keeps p_v inside the hull, which holds every vertex of the area.)"""
    par = d.params
    f = tab.wrench[i]
    fz = f[VZ]
    kind = tab.kind[i]
    if not fz > 0.0:  # (1) the bodies separate by themselves
        # unless it was held sticking while it slides: asked to stop the slide within a few
        # steps (Eq. 20b), far beyond μ f_z, its friction pulls it down before the friction
        # check (3) is reached (a bar falling with one end sliding on the ground was released
        # every step, and sank); it slips first (Eq. 31-36), along its sliding
        speed = math.hypot(tab.vel[i, VX], tab.vel[i, VY])
        if phase == ACCELERATION_PHASE and tab.sticking[i] and speed > par.separating:
            if apply:
                tab.sticking[i] = 0
                tab.slip[i, 0] = tab.vel[i, VX] / speed
                tab.slip[i, 1] = tab.vel[i, VY] / speed
                _set_target(d, tab, i, phase)
            return CHANGED
        if apply:
            tab.released[i] = 1
        return CHANGED
    st, hs, hc = tab.point_start[i], tab.hull_start[i], tab.hull_count[i]
    if kind != POINT:  # (2) p_v of Eq. 26 inside the area's hull
        px = -f[WY] / fz
        py = f[WX] / fz
        h0, h1 = -1, -1
        if kind == LINE:
            x0 = tab.xy[st + tab.hull[hs], 0]
            x1 = tab.xy[st + tab.hull[hs + 1], 0]
            if not (min(x0, x1) - 1e-12 <= px <= max(x0, x1) + 1e-12):
                h0 = 0 if abs(px - x0) < abs(px - x1) else 1
        else:
            poly = _hull_polygon(d, tab, i)
            if not signed_distance_nb(px, py, poly) >= -1e-12:
                h0, h1 = nearest_feature_nb(px, py, poly)
        if h0 >= 0:  # the nearest vertex -> point contact, edge -> line contact
            if phase == IMPULSE_PHASE:
                return TO_BOUNDED
            if apply:
                if built.kind[i] == 0:
                    _copy_contact(tab, i, built, i, tab.point_start[i])
                _reduce_area(d, tab, i, h0, h1)
                _refresh(d, tab, i)
                _set_target(d, tab, i, phase)
            return CHANGED
    if tab.guard[i]:  # frictionless: nothing more to check
        return VALID
    mu_s = _mu(d, tab, i, True)
    if tab.sticking[i]:  # (3) friction, Eq. 31-33
        vx, vy = tab.vel[i, VX], tab.vel[i, VY]
        speed = math.hypot(vx, vy)
        pushing = f[VX] * vx + f[VY] * vy > 0.0
        if phase == ACCELERATION_PHASE and not tab.stopping[i] and speed > par.separating and pushing:
            # held sticking while it slides (its target Eq. 20b's -kd v_t), its friction
            # pushes it along its sliding where the torques decelerate it faster: that friction
            # does work on it (0.23 J in a step of g1's foot sliding at 1.8 m/s). It slides
            # (Eq. 34-36), its friction against the sliding; should that reverse it within
            # the step, the slipping check below stops it by the step's end. (A stopping one
            # keeps its friction: static friction holding it once stopped, against a push
            # that alone would reverse it.)
            if apply:
                tab.sticking[i] = 0
                tab.keep_anchor[i] = 0
                tab.slip[i, 0] = vx / speed
                tab.slip[i, 1] = vy / speed
                _set_target(d, tab, i, phase)
            return CHANGED
        ft = math.hypot(f[VX], f[VY])
        if ft > mu_s * fz:
            if apply:
                tab.sticking[i] = 0
                tab.slip[i, 0] = -f[VX] / ft  # Eq. 32
                tab.slip[i, 1] = -f[VY] / ft
            return CHANGED
        if kind != POINT and tab.spin[i] == 0.0:
            if abs(f[WZ]) > mu_s * fz * _arm(d, tab, i):
                if apply:
                    tab.spin[i] = 1.0 if f[WZ] > 0.0 else -1.0
                return CHANGED
        return VALID
    # slipping: a slip that would reverse within the step stops by its end (stop_slip_target_nb)
    G = tab.G[i]
    vt0, vt1 = 0.0, 0.0
    for col in range(x.shape[0]):
        vt0 += G[VX, col] * x[col]
        vt1 += G[VY, col] * x[col]
    if phase == ACCELERATION_PHASE:
        vt0 = tab.vel[i, VX] + par.dt * (vt0 + tab.drift[i, VX])
        vt1 = tab.vel[i, VY] + par.dt * (vt1 + tab.drift[i, VY])
    if vt0 * tab.slip[i, 0] + vt1 * tab.slip[i, 1] < 0.0:
        if apply:
            tab.sticking[i] = 1
            tab.keep_anchor[i] = 0
            tab.stopping[i] = 1
            _set_target(d, tab, i, phase)
        return CHANGED
    return VALID


@njit(cache=True)
def _bounded(d, tab, nc, n_hard, n_fric, phase, base, x, built) -> None:
    """The bounded solve (_bounded_rows) of the contacts as the checked rounds left them; in
    the acceleration phase a contact whose area the rounds reduced (_check) and whose
    accelerations would drive a point of the area as built into the surface (_driven_in)
    comes back from row i of ``built`` as built, and the solve runs again. (Kept reduced, a
    line whose p_v had left it at one end was held at that end only, and the other end went
    0.8 mm into the ground: g1's foot under random torques, every other step, to 4.2 mm.
    Taken back always, the sliver areas of a robot lying on redundant contacts kept it
    rocking.)"""
    _bounded_rows(d, tab, nc, n_hard, n_fric, phase, base, x)
    if phase != ACCELERATION_PHASE:
        return
    again = False
    for i in range(nc):
        if not tab.bounced[i] and built.kind[i] != 0 and _driven_in(d, built, i, x):
            _copy_contact(built, i, tab, i, built.point_start[i])
            again = True
    if again:
        _bounded_rows(d, tab, nc, n_hard, n_fric, phase, base, x)


@njit(cache=True)
def _driven_in(d, tab, i, x) -> bool:
    """Whether accelerations x (nv,) would end a point of contact i deeper than the surface
    (gap g > 0) or than it starts (g <= 0), by more than RELEASE_MARGIN [m/s^2] of normal
    acceleration (a guard's target: kernels.guard_target_nb). A point (px, py, 0) of the
    area, virtual-link axes: a_n = a_z + α_x py - α_y px + ω_z (ω_x px + ω_y py) (the normal
    part of a_O + α × r + ω × (ω × r)), v_n = v_z + ω_x py - ω_y px."""
    G, dr, vel = tab.G[i], tab.drift[i], tab.vel[i]
    az, ax, ay = dr[VZ], dr[WX], dr[WY]
    for col in range(x.shape[0]):
        az += G[VZ, col] * x[col]
        ax += G[WX, col] * x[col]
        ay += G[WY, col] * x[col]
    wx, wy, wz = vel[WX], vel[WY], vel[WZ]
    dt = d.params.dt
    st, cnt = tab.point_start[i], tab.point_count[i]
    for t in range(st, st + cnt):
        px, py = tab.xy[t, 0], tab.xy[t, 1]
        vn = vel[VZ] + wx * py - wy * px
        an = az + ax * py - ay * px + wz * (wx * px + wy * py)
        if an < guard_acceleration_nb(tab.gap[t], vn, dt) - RELEASE_MARGIN:
            return True
    return False


@njit(cache=True)
def _bounded_rows(d, tab, nc, n_hard, n_fric, phase, base, x) -> None:
    """The bounded solve (contact/bounded_solve.py) of every contact not bounced off
    (released ones taken back, all sticking) and every hard row; the contacts get their
    wrench and state from it: released where f_z = 0, slipping where |f_t| reached its bound
    (μ_s f_z on the disc of a contact not sliding, μ_d f_z on a sliding one's half-disc;
    direction -f_t), spinning where |n_z| reached its bound. Hard forces into hard.force
    (acceleration phase) or hard.impulse; joint friction rows (held joints: |λ| <= F) into
    friction.torque. In the acceleration phase the contacts' and hard rows' position errors
    are corrected beyond the contact band only (its slop, read in the row's unit for a hard
    row: kernels.desired_acceleration_nb): redundant rows cannot all reach 0 at once. A
    contact sliding at the acceleration phase's start has its friction in the half-disc that
    does not push along the slip; one that comes out released and approaching has its friction
    widened (half-disc to disc, disc to none) and the solve runs again."""
    s = d.solve
    hard = d.hard
    nv = base.shape[0]
    row = 0
    nb = 0
    nh = 0
    same = True  # the rows are those whose Gram the scratch holds (SolveScratch.gram), so far
    s.block_start[0] = 0
    s.hull_start[0] = 0
    for i in range(nc):
        if tab.bounced[i]:
            continue
        tab.released[i] = 0
        # a guard stays frictionless (its bound 0 below) and so not sticking: a later checked
        # pass of the phase (the watch: _watch_points, _watch_hard) gives it no friction rows
        # (sticking, a g1 shoulder's guard sliding at 4.8 m/s took 455 N of friction on 85 N
        # and did 0.54 J of work)
        tab.sticking[i] = 0 if tab.guard[i] else 1
        tab.spin[i] = 0.0
        if phase == ACCELERATION_PHASE:  # position errors corrected beyond the contact band only
            _set_target(d, tab, i, phase, d.params.tolerance)
        n, code = _components(tab.kind[i], 1, 0.0)
        tab.row_start[i] = row
        for r in range(n):
            c = _component(code, r)
            for col in range(nv):
                same &= _write(s.H, row + r, col, tab.G[i, c, col])
            s.rhs[row + r] = tab.target[i, c]
        row += n
        kind = tab.kind[i]
        s.block_kind[nb] = BLOCK_POINT if kind == POINT else (BLOCK_LINE if kind == LINE else BLOCK_SURFACE)
        s.arm[nb] = _arm(d, tab, i)
        s.bound[nb] = 0.0
        # sliding at the acceleration phase's start (faster than the separating threshold):
        # friction up to μ_d f_z in the half of the disc that does not push along the sliding
        # (bounded_solve.BoundedRows.slip). An impulse's friction may take the whole disc: it
        # aims at no slip after the impulse (its tangential targets are 0), which it may reach
        # (a body hitting the ground while sliding stops, or slides on with what the disc
        # cannot take), and held against the sliding a sliding impact can have no answer
        # with f_z > 0 (Painlevé: its friction would drive it into the ground; the sweeps
        # release it). A contact not sliding holds up to μ_s f_z (Eq. 31, as the checked
        # solve): held to μ_d, a lying g1 whose torso needed 0.8 f_z of friction slid and
        # rocked, its support off its weight by 5-15 %, and never came to rest
        vx, vy = tab.vel[i, VX], tab.vel[i, VY]
        speed = math.hypot(vx, vy)
        sliding = phase == ACCELERATION_PHASE and speed > d.params.separating
        s.mu[nb] = _mu(d, tab, i, phase == ACCELERATION_PHASE and not sliding)
        s.slip[nb, 0] = vx / speed if sliding else 0.0
        s.slip[nb, 1] = vy / speed if sliding else 0.0
        st, hs, hc = tab.point_start[i], tab.hull_start[i], tab.hull_count[i]
        for t in range(hc):
            s.hull_xy[nh + t, 0] = tab.xy[st + tab.hull[hs + t], 0]
            s.hull_xy[nh + t, 1] = tab.xy[st + tab.hull[hs + t], 1]
        nh += hc
        nb += 1
        s.block_start[nb] = row
        s.hull_start[nb] = nh
    ncrow = row
    for j in range(n_hard):
        if phase == ACCELERATION_PHASE:  # corrected beyond the band only, as the contacts
            hv = 0.0
            for col in range(nv):
                hv += hard.jacobian[j, col] * d.out.v_plus[col]
            _hard_acceleration_target(d, j, hv, d.params.tolerance)
            if hard.violation[j] < -d.params.tolerance:  # short of its limit: not carried past it (_watch_hard)
                hard.target[j] = max(hard.target[j], _hard_guard_target(d, j, hv))
        for col in range(nv):
            same &= _write(s.H, row, col, hard.jacobian[j, col])
        s.rhs[row] = hard.target[j]
        row += 1
        s.block_kind[nb] = BLOCK_ONE_SIDED
        s.mu[nb] = 0.0
        s.arm[nb] = 0.0
        s.bound[nb] = 0.0
        s.slip[nb, 0] = 0.0
        s.slip[nb, 1] = 0.0
        nb += 1
        s.block_start[nb] = row
        s.hull_start[nb] = nh
    fr = d.friction
    for j in range(n_fric):
        for col in range(nv):
            same &= _write(s.H, row, col, 1.0 if col == fr.index[j] else 0.0)
        s.rhs[row] = -d.out.v_plus[fr.index[j]] / d.params.dt
        row += 1
        s.block_kind[nb] = BLOCK_BOX
        s.mu[nb] = 0.0
        s.arm[nb] = 0.0
        s.bound[nb] = fr.bound[j]
        s.slip[nb, 0] = 0.0
        s.slip[nb, 1] = 0.0
        nb += 1
        s.block_start[nb] = row
        s.hull_start[nb] = nh
    rows = BoundedRows(s.H[:row], s.rhs[:row], s.block_start[: nb + 1], s.block_kind[:nb], s.mu[:nb], s.arm[:nb],
                       s.bound[:nb], s.hull_xy[:nh], s.hull_start[: nb + 1], s.slip[:nb])  # fmt: skip
    _warm_start(d, tab, nc, n_hard, n_fric, phase, ncrow, s.lam)
    par = d.params
    accelerations = phase == ACCELERATION_PHASE  # a converged iterate as it is (bounded_solve_nb)
    sweeps = bounded_solve_nb(rows, s.L, d.tree.dof_parent, base, par.bounded_regularisation, par.bounded_sweeps,
                              par.bounded_tolerance, x, s.lam[:row], s.bounded, accelerations,
                              same and row == s.gram[0])  # fmt: skip
    s.gram[0] = row
    # a contact that comes out released while it goes on approaching has no answer with its
    # friction: held against its slip (Painlevé: that friction, on a light limb at
    # the end of a long lever, drives it into the ground), or in the disc where the sweeps
    # let the friction's pull on the normal row win. Its friction widens, half-disc to disc,
    # disc to none for this step (a step without friction does no work; one without a normal force
    # lets the torques drive the limb into the ground), and the solve runs again from where
    # it stopped, at most twice
    for _ in range(2):
        again = False
        b = 0
        for i in range(nc):
            if tab.bounced[i]:
                continue
            r0 = s.block_start[b]
            if s.lam[r0] <= 0.0 and s.mu[b] > 0.0:
                acc = 0.0
                for col in range(nv):
                    acc += s.H[r0, col] * x[col]
                if acc < s.rhs[r0] - RELEASE_MARGIN:
                    if s.slip[b, 0] != 0.0 or s.slip[b, 1] != 0.0:
                        s.slip[b, 0] = 0.0
                        s.slip[b, 1] = 0.0
                    else:
                        s.mu[b] = 0.0
                    again = True
            b += 1
        if not again:
            break
        sweeps = max(sweeps, bounded_solve_nb(rows, s.L, d.tree.dof_parent, base, par.bounded_regularisation,
                                              par.bounded_sweeps, par.bounded_tolerance, x, s.lam[:row], s.bounded,
                                              accelerations, True))  # fmt: skip
    counts = d.out.counts[0]
    counts.sweeps = max(counts.sweeps, sweeps)
    b = -1
    for i in range(nc):
        if tab.bounced[i]:
            continue
        b += 1
        f = tab.wrench[i]
        for c in range(6):
            f[c] = 0.0
        n, code = _components(tab.kind[i], 1, 0.0)
        r0 = tab.row_start[i]
        for r in range(n):
            f[_component(code, r)] = s.lam[r0 + r]
        fz = f[VZ]
        if fz <= 0.0:
            tab.released[i] = 1
            for c in range(6):
                f[c] = 0.0
            continue
        mu = s.mu[b]  # its block's bound: μ_s, μ_d on a ray, or 0 where the friction was widened away
        ft = math.hypot(f[VX], f[VY])
        if ft >= mu * fz * (1.0 - 1e-9) and ft > 0.0:
            tab.sticking[i] = 0
            tab.slip[i, 0] = -f[VX] / ft
            tab.slip[i, 1] = -f[VY] / ft
        if tab.kind[i] != POINT and abs(f[WZ]) >= mu * fz * _arm(d, tab, i) * (1.0 - 1e-9):
            tab.spin[i] = 1.0 if f[WZ] > 0.0 else (-1.0 if f[WZ] < 0.0 else 0.0)
    out = hard.force if phase == ACCELERATION_PHASE else hard.impulse
    for j in range(n_hard):
        out[j] = s.lam[ncrow + j]
    for j in range(n_fric):
        fr.torque[j] = s.lam[ncrow + n_hard + j]
        fr.stick[j] = 1


@njit(cache=True, inline="always")
def _write(H, a, col, value) -> bool:
    """H[a, col] = value; whether it held that value already."""
    if H[a, col] == value:
        return True
    H[a, col] = value
    return False


@njit(cache=True)
def _warm_start(d, tab, nc, n_hard, n_fric, phase, ncrow, lam) -> None:
    """The bounded solve's first iterate: the contacts' rows lam[:ncrow], then n_hard hard
    rows and n_fric joint-friction rows. In the acceleration phase a contact remembered from
    the previous step starts from its solved wrench there (the world wrench moved to this
    step's origin, in this step's virtual-link axes), a hard row from its previous force
    (hard.warm), a joint's friction from its last torque; everything else, and every
    impulse, from 0. A body at rest repeats nearly the same problem every step, so the
    Gauss-Seidel sweeps of successive steps add up instead of starting over."""
    for j in range(ncrow + n_hard + n_fric):
        lam[j] = 0.0
    if phase != ACCELERATION_PHASE:
        return
    for j in range(n_hard):
        lam[ncrow + j] = d.hard.warm[j]
    for j in range(n_fric):
        lam[ncrow + n_hard + j] = d.friction.torque[j]
    mem = d.memory
    cur = mem.current[0]
    for i in range(nc):
        row = tab.memory_row[i]
        if tab.bounced[i] or row < 0:
            continue
        f = mem.force[cur, row]
        o = mem.origin[cur, row]
        # n about the new origin: n_old + (o_old - o_new) x f
        dx, dy, dz = o[0] - tab.origin[i, 0], o[1] - tab.origin[i, 1], o[2] - tab.origin[i, 2]
        nx = mem.moment[cur, row, 0] + dy * f[2] - dz * f[1]
        ny = mem.moment[cur, row, 1] + dz * f[0] - dx * f[2]
        nz = mem.moment[cur, row, 2] + dx * f[1] - dy * f[0]
        Rv = tab.R[i]
        n, code = _components(tab.kind[i], 1, 0.0)
        r0 = tab.row_start[i]
        for r in range(n):  # world to the virtual-link axes: Rᵀ
            c = _component(code, r)
            if c < 3:
                lam[r0 + r] = Rv[0, c] * f[0] + Rv[1, c] * f[1] + Rv[2, c] * f[2]
            else:
                lam[r0 + r] = Rv[0, c - 3] * nx + Rv[1, c - 3] * ny + Rv[2, c - 3] * nz


@njit(cache=True)
def _friction_base(d, n_fric, base):
    """The solve's unconstrained solution with the slipping joints' known friction torques:
    base itself when none slips, else friction.base (nv,) = base + A^-1 Σ F σ e_j."""
    fr = d.friction
    slipping = False
    for j in range(n_fric):
        slipping |= not fr.stick[j]
    if not slipping:
        return base
    nv = base.shape[0]
    e = fr.base  # the known torques first, then A^-1 of them in place
    for i in range(nv):
        e[i] = 0.0
    for j in range(n_fric):
        if not fr.stick[j]:
            e[fr.index[j]] = fr.bound[j] * fr.sign[j]
    solve_vec_nb(d.solve.L, d.tree.dof_parent, e, e)
    for i in range(nv):
        e[i] += base[i]
    return e


@njit(cache=True)
def _check_friction(d, n_fric, row0, x, apply) -> bool:
    """Joint friction's checks: a held joint whose holding torque exceeds F slips (the
    friction torque F sign(λ) known from now on); a slipping joint whose velocity would
    reverse within the step is held. Writes friction.torque; True when a state changes."""
    fr = d.friction
    s = d.solve
    v = d.out.v_plus
    dt = d.params.dt
    changed = False
    r = row0
    for j in range(n_fric):
        F = fr.bound[j]
        if fr.stick[j]:
            lam = s.lam[r]
            r += 1
            fr.torque[j] = lam
            if abs(lam) > F * (1.0 + 1e-12):
                changed = True
                if apply:
                    fr.stick[j] = 0
                    fr.sign[j] = 1.0 if lam > 0.0 else -1.0
        else:
            fr.torque[j] = F * fr.sign[j]
            k = fr.index[j]
            if (v[k] + dt * x[k]) * fr.sign[j] > 0.0:  # it would move with its friction: reversed
                changed = True
                if apply:
                    fr.stick[j] = 1
    return changed


@njit(cache=True)
def _solve_with_checks(d, tab, nc, n_hard, n_fric, phase, base, x, release_tolerance, built) -> tuple:
    """Solve one phase and apply the validity checks of 4.4-4.6 (the module docstring's
    step 4) and those of joint friction (the first n_fric joints of d.friction); a phase
    that is rank deficient or still fails after the rounds, or an impulse whose p_v leaves
    an area, or an acceleration phase that reduced an area whose other points it would drive
    in (_driven_in), is replaced by the bounded solve. Returns (rounds, validated, bounded). Wrenches into tab.wrench, hard forces into
    hard.force (acceleration phase) or hard.impulse (0 for released rows), joint friction
    torques into friction.torque. built: the other table, where the acceleration phase keeps
    the areas its checks reduce as they were built (kind 0 in rows 0..nc-1: none yet)."""
    s = d.solve
    hard = d.hard
    par = d.params
    out = hard.force if phase == ACCELERATION_PHASE else hard.impulse
    validated = False
    rounds = 0
    for rounds in range(1, par.max_rounds + 1):
        nrow, ncrow, symmetric = _assemble(d, tab, nc, n_hard, n_fric)
        status = _solve_rows(d, nrow, symmetric, _friction_base(d, n_fric, base), x, s.lam)
        if status != 0:  # redundant rows: the least-squares λ is not a contact force
            break
        for i in range(nc):
            if not (tab.released[i] or tab.bounced[i]):
                _full_wrench(d, tab, i, s.lam, tab.row_start[i])
        apply = rounds < par.max_rounds
        changed = False
        to_bounded = False
        for i in range(nc):
            if not (tab.released[i] or tab.bounced[i]):
                check = _check(d, tab, i, phase, x, apply, built)
                changed |= check != VALID
                to_bounded |= check == TO_BOUNDED
        if to_bounded:
            break
        r = ncrow
        for j in range(n_hard):
            out[j] = 0.0
            if hard.active[j]:
                out[j] = s.lam[r]
                if s.lam[r] < 0.0:
                    changed = True
                    if apply:
                        hard.active[j] = 0
                r += 1
        changed |= _check_friction(d, n_fric, r, x, apply)
        if phase == ACCELERATION_PHASE:
            changed |= _check_guards(d, tab, nc, x, release_tolerance, apply)
        if not changed:
            validated = True
            break
    if validated:  # the other half of check (1): a released contact must not go on approaching
        for i in range(nc):
            if tab.released[i] and not tab.bounced[i] and _below_target(tab, i, x, release_tolerance):
                validated = False
                break
    if validated and phase == ACCELERATION_PHASE:
        # an area reduced to the edge or vertex nearest p_v (4.5) turns about it, its other
        # points lifting; where they would go in instead (a tilted area, its deepest point not
        # the one kept: g1's sole kept a point at the surface and its deepest point, 0.64 mm
        # in, went 0.65 mm deeper), the reduction does not hold
        for i in range(nc):
            if built.kind[i] != 0 and not tab.bounced[i] and _driven_in(d, built, i, x):
                validated = False
                break
    if not validated:  # never integrate a solve that failed its checks
        _bounded(d, tab, nc, n_hard, n_fric, phase, base, x, built)
        return rounds, False, True
    for i in range(nc):
        if tab.released[i]:
            for c in range(6):
                tab.wrench[i, c] = 0.0
    return rounds, True, False


@njit(cache=True)
def _check_guards(d, tab, nc, x, release_tolerance, apply) -> bool:
    """The released guards (_build_contacts) whose normal acceleration at x falls below
    their target by more than release_tolerance [m/s^2] (the step would end them deeper):
    taken into the solve (when apply). True when one is."""
    changed = False
    for i in range(nc):
        if tab.guard[i] and tab.released[i] and not tab.bounced[i] and _below_target(tab, i, x, release_tolerance):
            changed = True
            if apply:
                tab.released[i] = 0
    return changed


@njit(cache=True, inline="always")
def _below_target(tab, i, x, tolerance) -> bool:
    """Whether contact i's normal row G_z x (its target is net of the drift) falls below its
    target by more than tolerance: a released contact that x takes on into the surface."""
    acc = 0.0
    for col in range(x.shape[0]):
        acc += tab.G[i, VZ, col] * x[col]
    return acc < tab.target[i, VZ] - tolerance


@njit(cache=True)
def _hard_targets(d, n_hard, v, phase, calm=False) -> bool:
    """Hard rows' desired values and which take part. Impulse phase: a row takes part unless it
    separates faster than the correction of Eq. 20b drives it; it bounces (Eq. 15), stops, or
    (short of its limit, speculative) arrives at it. Acceleration phase: the rows at or past
    their limit take part, with the critically damped correction, or, moving out faster than
    that correction (capped) would drive them, so as to end the step no deeper than they start.
    Returns whether a row approaches faster than the impact threshold (_too_fast); calm (an
    impulse pass after the CALM_PASSES-th), only one so fast that the step would take it past
    its limit by more than the tolerance at its velocity ġ: -violation + ġ dt < -tolerance, as
    _plunging for a contact. (A late pass's impulse on a contact can turn a joint into its stop,
    g1 flailing: an ankle, at 11.6 rad/s; left to the acceleration phase, whose target ends the
    step at the limit, the joint left it as fast, and the step gained 4.7 J.)"""
    hard = d.hard
    par = d.params
    nv = v.shape[0]
    approaching = False
    for j in range(n_hard):
        hv = 0.0
        for col in range(nv):
            hv += hard.jacobian[j, col] * v[col]
        viol = hard.violation[j]
        if _too_fast(par, hv, -viol):  # its gap to the limit: -viol
            approaching |= not calm or -viol + hv * par.dt < -par.tolerance
        active = hv < par.separating + par.correction_rate * max(0.0, viol)
        if phase == IMPULSE_PHASE:
            t = -hard.restitution[j] * hv if hv < -par.bounce else 0.0
            if viol < -par.tolerance and t <= 0.0:
                t = viol / par.dt
            hard.target[j] = t
        else:
            active = viol >= -par.tolerance
            _hard_acceleration_target(d, j, hv, 0.0)
        hard.active[j] = 1 if active else 0
    return approaching


@njit(cache=True)
def _hard_acceleration_target(d, j, hv, slop) -> None:
    """Hard row j's desired acceleration at its velocity hv: Eq. 20b's, its violation corrected
    critically damped beyond ``slop`` (kernels.shrink), the stiff term capped
    (Thresholds.max_correction); at or past its limit and moving out faster than that
    correction would drive it, the acceleration that ends the step no deeper than it starts."""
    par = d.params
    hard = d.hard
    viol = shrink(hard.violation[j], slop) if slop > 0.0 else hard.violation[j]
    drive = min(par.correction_rate * max(0.0, viol), par.correction_cap / par.kd)
    if hard.violation[j] >= -par.tolerance and hv > par.separating + drive:
        # held only so that the efforts, which may turn it round within the step, do not take
        # it deeper: a = -2 hv / dt. Held by Eq. 20b's damping term instead (a = -kd hv), its
        # force slowed the separation against the efforts and did positive work on a joint
        # moving out of its stop: 0.1-0.9 J in a step of a robot flailing at full effort. Left
        # free, a twist limit turned round within a step went 6 mrad deeper.
        hard.target[j] = hard.desired[j] - 2.0 * hv / par.dt - hard.drift[j]
        return
    push = min(par.correction_cap, max(-par.correction_cap, par.kp * viol))
    hard.target[j] = hard.desired[j] + push - par.kd * hv - hard.drift[j]


# ------------------------------------------------------------------ the step


@njit(cache=True)
def _copy_fields(src, i, dst, j) -> None:
    """Contact i of table src into row j of dst: every per-contact field (the point rows
    are referenced by point_start, hull_start, not copied)."""
    dst.body[j] = src.body[i]
    dst.other[j] = src.other[i]
    dst.element[j] = src.element[i]
    dst.face[j] = src.face[i]
    dst.kind[j] = src.kind[i]
    dst.point_start[j] = src.point_start[i]
    dst.point_count[j] = src.point_count[i]
    dst.hull_start[j] = src.hull_start[i]
    dst.hull_count[j] = src.hull_count[i]
    dst.memory_row[j] = src.memory_row[i]
    dst.sticking[j] = src.sticking[i]
    dst.spin[j] = src.spin[i]
    dst.released[j] = src.released[i]
    dst.rolling[j] = src.rolling[i]
    dst.keep_anchor[j] = src.keep_anchor[i]
    dst.stopping[j] = src.stopping[i]
    dst.bounced[j] = src.bounced[i]
    dst.impulse_taken[j] = src.impulse_taken[i]
    dst.guard[j] = src.guard[i]
    dst.row_start[j] = src.row_start[i]
    dst.min_gap[j] = src.min_gap[i]
    dst.arm[j] = src.arm[i]
    dst.slip[j] = src.slip[i]
    dst.origin[j] = src.origin[i]
    dst.R[j] = src.R[i]
    dst.G[j] = src.G[i]
    dst.drift[j] = src.drift[i]
    dst.vel[j] = src.vel[i]
    dst.target[j] = src.target[i]
    dst.wrench[j] = src.wrench[i]
    dst.impulse[j] = src.impulse[i]


@njit(cache=True)
def _copy_contact(src, i, dst, j, point_start) -> int:
    """Contact i of table src into row j of another table dst with its points at
    point_start; returns the next free point row."""
    _copy_fields(src, i, dst, j)
    st, cnt = src.point_start[i], src.point_count[i]
    hs, hc = src.hull_start[i], src.hull_count[i]
    dst.point_start[j] = point_start
    dst.hull_start[j] = point_start
    for t in range(cnt):
        dst.xy[point_start + t] = src.xy[st + t]
        dst.gap[point_start + t] = src.gap[st + t]
        dst.hit[point_start + t] = src.hit[st + t]
    for t in range(hc):
        dst.hull[point_start + t] = src.hull[hs + t]
    return point_start + cnt


@njit(cache=True)
def update_dynamics_nb(data, q, v) -> bool:
    """Step 1 of Simulator.step: the dynamics workspace d.dyn of the StepData ``data`` (d, or
    its borrowed view: contact/bundle_records.py) at (q (nq,), v (nv,)) -- kinematics, M with
    the armature and implicit damping on its diagonal, b -- and M's tree factor M = Lᵀ L into
    d.solve.L (dynamics/mass_factor.py). False when M is not positive definite."""
    d = borrow(data)
    t, dyn = d.tree, d.dyn
    update_all_nb(t.parent, t.joint_type, t.joint_axis, t.R_parent_joint, t.p_parent_joint, t.mass, t.com,
                  t.inertia_com, t.q_index, t.v_index, t.ndof, dyn.a_gravity, q, v, dyn.R, dyn.p, dyn.S, dyn.V,
                  dyn.A, dyn.Iw, dyn.Ic, dyn.M, dyn.b, dyn.acc, dyn.f, dyn.zero_nv)  # fmt: skip
    for i in range(dyn.diagonal.shape[0]):
        dyn.M[i, i] += dyn.diagonal[i]
    return factor_nb(dyn.M, t.dof_parent, d.solve.L)


@njit(cache=True)
def step_nb(d, q, v, tau, n_hard, factored, free) -> int:
    """One step from (q, v) with the generalized forces tau (nv,) (joint torques, pushes,
    soft rows) [N, N m] and the first n_hard rows of d.hard; factored: d.solve.L already
    holds the tree factor of d.dyn.M (else the step factors it); free: d.out.a0 already holds
    the free acceleration at (q, v, tau) (free_acceleration_into, which the acceleration phase
    then does not solve again unless an impulse changed v); see the module docstring.
    On OK: d.out holds the new state, the acceleration, the counts and the ZMP;
    d.tables[counts.table] the reported contacts; d.memory the new memory."""
    par = d.params
    dyn = d.dyn
    st_ = d.statics
    det = d.detection
    out = d.out
    counts = out.counts[0]
    nv = v.shape[0]
    dt = par.dt
    tol = par.tolerance
    counts.impulse = 0
    counts.watched = 0
    counts.bounded = 0
    counts.sweeps = 0
    counts.validated = 1
    d.solve.gram[0] = 0  # no rows' Gram at this step's L yet
    if not factored and not factor_nb(dyn.M, d.tree.dof_parent, d.solve.L):
        return SINGULAR
    # 2. detection (seed 000 4.9 (1)) in a band that grows with the bodies' speeds
    band = max(par.band, speculative_band_nb(dyn.V, dyn.p, st_.reach, dt))
    N = det.idx.shape[0]
    k = detect_points_nb(st_.g_body, st_.g_kind, st_.g_local, st_.g_axis, st_.g_radius, dyn.R, dyn.p, par.has_ground,
                         par.ground_height, st_.box_R, st_.box_p, st_.box_half, tol + band, tol, det.idx, det.elem,
                         det.face, det.gap, det.point, det.normal, det.tangent, det.roll, det.frame)  # fmt: skip
    if k >= N:
        return CAPACITY
    nbox = st_.box_p.shape[0]
    g_body, body, other, keys, idx, elem, face = st_.g_body, det.body, det.other, det.keys, det.idx, det.elem, det.face
    for i in range(k):
        body[i] = g_body[idx[i]]
        other[i] = -1
        keys[i] = (body[i] * (nbox + 1) + elem[i]) * 8 + face[i]
    if d.pairs.body.shape[0] > 0:  # contacts between two bodies (seed 000's virtual link joins them)
        k = _detect_pairs(d, tol + band, k, dyn.R.shape[0] * (nbox + 1) * 8)
        if k < 0:
            return CAPACITY
    counts.hits = k
    argsort_stable_into(det.keys, k, det.order, det.hull_order)
    tab = d.tables[0]
    # the per-vertex methods keep the separating points of the band: their solves release them
    vl = par.method == VIRTUAL_LINK
    nc = _build_contacts(d, tab, k, dt, par.separating if vl else np.inf, vl)
    if nc < 0:
        return CAPACITY
    # 3-4. impulses, accelerations and contact wrenches by the configured contact method
    if par.method == RELAXED_QP:
        status, t_index, nc = relaxed_qp_nb(d, tab, nc, k, v, tau, n_hard)
    elif par.method == PENALTY_VOLUME:  # the contact forces, then the hard rows with them known
        status, t_index, nc = penalty_volume_nb(d, tab, nc, k, v, tau, n_hard)
        if status == OK:
            status, _, _ = _virtual_link_nb(d, tab, 0, k, v, d.penalty.tau, n_hard, False, False)
            penalty_volume_free_acceleration_nb(d, tau)
    else:
        status, t_index, nc = _virtual_link_nb(d, tab, nc, k, v, tau, n_hard, True, free)
    if status != OK:
        return status
    tab = d.tables[t_index]
    a, a0, v_plus = out.a, out.a0, out.v_plus
    # 5. integration with the constraint force Hᵀλ = M (a - a0) held over the step, the
    # contacts' wrenches on their bodies' points (dynamics/integrator.py); a state at rest
    # takes the constant-acceleration step, which needs neither (integrator.rk4_step_nb's
    # choice, made here once so that the wrenches are held only for the stages)
    if at_rest_nb(v_plus, a, dt):
        rest_step_nb(d.tree, d.stage, q, v_plus, a, dt, out.q_next, out.v_next)
        counts.stages = 0
    else:
        tau_c = out.tau_c
        held_forces_nb(dyn.M, a, a0, tau, tau_c)
        # a joint held on its stop moves as its solve meant, locked at its acceleration (the
        # stop's force held instead can outgrow what holds it within the step, and do work)
        locks = lock_stops_nb(d.tree, d.stage, d.hard.jacobian, d.hard.force, n_hard, a, tau_c)
        _hold_contact_wrenches(d, tab, nc)
        release_held_wrenches_nb(d.tree, d.stage, out.held, dyn.R, dyn.p, dyn.S, tau_c)
        # one Runge-Kutta step, or two halves where a coordinate moves fast (integrator.held_step_nb)
        counts.stages = held_step_nb(d.tree, d.stage, out.held, q, v_plus, a, tau_c, dyn.damping, dt, out.q_next,
                                     out.v_next)  # fmt: skip
        if locks:
            d.stage.locked[:] = 0
    for i in range(out.q_next.shape[0]):
        if not math.isfinite(out.q_next[i]):
            return NONFINITE
    for i in range(nv):
        if not math.isfinite(out.v_next[i]):
            return NONFINITE
    _report(d, tab, nc, t_index)
    return OK


@njit(cache=True)
def _hold_contact_wrenches(d, tab, nc) -> None:
    """d.out.held: the solved wrench of every contact of tab that is not released, on its
    body's point at the virtual-link origin (and the opposite one on the other body's), to
    be held there over the integration (dynamics/integrator.py). A rolling contact's point
    moves over its body's surface, staying under the centre of its sphere or cylinder: its
    wrench is held on that centre, acting the radius below it."""
    held = d.out.held
    held.count[0] = 0
    dyn = d.dyn
    roll = d.detection.roll
    for i in range(nc):
        if tab.released[i]:
            continue
        lift = 0.0
        if tab.rolling[i]:
            st = tab.point_start[i]
            for t in range(st, st + tab.point_count[i]):
                lift = max(lift, roll[tab.hit[t], 0])
        hold_wrench_nb(held, dyn.R, dyn.p, tab.body[i], tab.origin[i], lift, tab.R[i], tab.wrench[i], 1.0)
        if tab.other[i] >= 0:
            hold_wrench_nb(held, dyn.R, dyn.p, tab.other[i], tab.origin[i], 0.0, tab.R[i], tab.wrench[i], -1.0)


@njit(cache=True)
def _virtual_link_nb(d, tab, nc, k, v, tau, n_hard, with_contacts, free) -> tuple:
    """Steps 3 and 4 of seed 000 (module docstring) on the nc contacts of tab (built at v from
    the k detected points): impulses, then accelerations and wrenches with the validity
    checks. Returns (status, t_index, nc): d.tables[t_index] holds the nc contacts to report;
    out.v_plus, out.a0, out.a, the wrenches and the hard rows' forces are filled.
    with_contacts False: the hard rows and joint friction only (nc = 0, the contacts are
    not built again after an impulse; penalty_volume passes its contact forces in tau);
    free: out.a0 holds the free acceleration at (v, tau) (step_nb)."""
    par = d.params
    dyn = d.dyn
    out = d.out
    s = d.solve
    hard = d.hard
    counts = out.counts[0]
    nv = v.shape[0]
    # 3. impulses (Eq. 18-19) when a contact or a hard row approaches faster than it may, in
    # passes: an impulse turns the bodies, and a point that was moving away, or was above the
    # band's speculative reach, can be turned down into the ground by it. The contacts are
    # built again at v+ (speculative points included) and a second pass stops what the first
    # one turned down, up to IMPULSE_PASSES passes; the impulses of a contact (by key) and of
    # a hard row add up over the passes.
    approaching = _hard_targets(d, n_hard, v, IMPULSE_PHASE)
    for i in range(nc):
        approaching |= not tab.guard[i] and _approaching(d, tab, i)
    for j in range(n_hard):
        hard.impulse[j] = 0.0
    v_plus = out.v_plus
    for i in range(nv):
        v_plus[i] = v[i]
    t_index = 0
    if approaching:
        counts.impulse = 1
        v_pass = out.v_pass
        for p in range(IMPULSE_PASSES):
            for i in range(nv):
                v_pass[i] = v_plus[i]
            for j in range(n_hard):
                hard.earlier[j] = hard.impulse[j]
            for i in range(nc):
                if not tab.bounced[i]:
                    _set_target(d, tab, i, IMPULSE_PHASE)
            _, _, bounded = _solve_with_checks(d, tab, nc, n_hard, 0, IMPULSE_PHASE, v_pass, v_plus, par.impact,
                                             d.tables[1 - t_index])  # fmt: skip
            if bounded:
                counts.bounded = 1
                counts.validated = 0
            for j in range(n_hard):
                hard.impulse[j] += hard.earlier[j]
            for i in range(nc):
                if not (tab.released[i] or tab.bounced[i]):
                    tab.impulse_taken[i] = 1
                    for c in range(6):
                        tab.impulse[i, c] += tab.wrench[i, c]
            # the dynamics at v+, the contacts again
            velocities_nb(d.tree.parent, d.tree.ndof, d.tree.v_index, dyn.S, v_plus, dyn.V, dyn.A)
            rnea_nb(d.tree.parent, d.tree.ndof, d.tree.v_index, dyn.S, dyn.Iw, dyn.V, dyn.A, dyn.zero_nv,
                    dyn.a_gravity, dyn.b, dyn.acc, dyn.f)  # fmt: skip
            last = p == IMPULSE_PASSES - 1
            calm = p >= CALM_PASSES - 1  # the next pass only for what would go through the band
            approaching = False
            if not last:  # the hard rows' targets at v+ for the next pass, a calm one's too
                approaching = _hard_targets(d, n_hard, v_plus, IMPULSE_PHASE, calm)
            if not with_contacts:
                if approaching:
                    continue
                return _virtual_link_acceleration(d, tab, 0, v_plus, tau, n_hard, 0, False)
            after = d.tables[1 - t_index]
            nc_after = _carry_impulses(d, tab, nc, after, k)
            if nc_after < 0:
                return CAPACITY, 0, 0
            for i in range(nc_after):
                if not last and not after.bounced[i]:
                    approaching |= _plunging(d, after, i) if calm else _approaching(d, after, i)
            tab = after
            nc = nc_after
            t_index = 1 - t_index
            if not approaching:
                break
    _set_aside_speculative(d, tab, nc)
    # without an impulse v+ = v and b is unchanged: a free acceleration at (v, tau) is still a0
    return _virtual_link_acceleration(d, tab, nc, v_plus, tau, n_hard, t_index, free and counts.impulse == 0)


@njit(cache=True)
def _set_aside_speculative(d, tab, nc) -> None:
    """Speculative contacts (every point above the tolerance) that took no impulse take no
    part in the acceleration phase but as a guard of one point (_to_guard): not
    solved, and without an impulse not reported, unless the step's accelerations would take
    that point through the surface. One that took an impulse is arriving within the step and
    keeps its place, with the arrival target of kernels.speculative_target_nb. (Kept, a
    contact not yet touching would press to buy friction in the bounded solve: a robot lying
    still carried 20 % more than its weight; set aside, a point arriving at the surface at
    its velocity by the step's end was driven 0.25 mm through it by a push of 50 g.) The
    guards (_build_contacts) enter the acceleration phase released: the checked solve takes
    one in when the step would end it deeper."""
    tol = d.params.tolerance
    for i in range(nc):
        if tab.guard[i]:
            tab.bounced[i] = 0
        elif not tab.impulse_taken[i] and not tab.bounced[i] and tab.min_gap[i] > tol:
            _to_guard(d, tab, i)


@njit(cache=True)
def _to_guard(d, tab, i) -> None:
    """Contact i becomes the guard (_build_contacts) of its point that would end the step
    nearest the surface at its velocity (g + v_n dt, v_n as in kernels.speculative_target_nb):
    a frictionless point contact there, new (no memory), released; its other points are
    watched (_watch_points)."""
    st, cnt = tab.point_start[i], tab.point_count[i]
    vel, dt = tab.vel[i], d.params.dt
    near = st
    near_end = 1e300
    for t in range(st, st + cnt):
        end = tab.gap[t] + (vel[2] + vel[3] * tab.xy[t, 1] - vel[4] * tab.xy[t, 0]) * dt
        if end < near_end:
            near, near_end = t, end
    det = d.detection
    for t in range(st, st + cnt):
        if t != near:
            det.watch[det.n_watch[0]] = tab.hit[t]
            det.n_watch[0] += 1
    _to_point(tab, i, near)
    tab.guard[i] = 1
    tab.sticking[i] = 0
    tab.spin[i] = 0.0
    tab.released[i] = 1
    tab.bounced[i] = 0
    tab.memory_row[i] = -1
    tab.keep_anchor[i] = 0
    tab.stopping[i] = 0
    _refresh(d, tab, i)


@njit(cache=True, inline="always")
def _too_fast(par, v, gap) -> bool:
    """Whether a contact or hard row at normal velocity v [m/s or rad/s] and gap [m or rad]
    approaches faster than it may (the impulse phase is needed): faster than ``impact``
    within the tolerance, or, speculative (gap above the tolerance), faster than arriving
    within the step (gap / dt) by more than ``impact``."""
    allowed = gap / par.dt if gap > par.tolerance else 0.0
    return v < -allowed - par.impact


@njit(cache=True)
def _approaching(d, tab, i) -> bool:
    """Whether contact i approaches faster than it may (_too_fast at its nearest point's gap)."""
    return _too_fast(d.params, tab.vel[i, VZ], tab.min_gap[i])


@njit(cache=True)
def _plunging(d, tab, i) -> bool:
    """Whether contact i approaches so fast that the step would take its nearest point deeper
    than the contact tolerance at its normal velocity: g + v_z dt < -tolerance."""
    par = d.params
    return _approaching(d, tab, i) and tab.min_gap[i] + tab.vel[i, VZ] * par.dt < -par.tolerance


@njit(cache=True)
def _carry_impulses(d, src, n_src, dst, k) -> int:
    """The contacts of the k detected points built again into dst at the workspace's
    velocities (after an impulse pass, speculative points included), with the
    impulses the n_src contacts of src took carried over by key; a contact that took one and
    is not built again (it bounced off) is kept, released, and reported with its impulse
    only. Returns the number of contacts in dst, or -1 when a table is too small."""
    n_dst = _build_contacts(d, dst, k, d.params.dt, d.params.separating, True)
    if n_dst < 0:
        return -1
    P = dst.xy.shape[0]
    C = dst.body.shape[0]
    free_point = 0
    if n_dst > 0:
        free_point = dst.point_start[n_dst - 1] + dst.point_count[n_dst - 1]
    n_total = n_dst
    for i in range(n_src):
        if not src.impulse_taken[i]:
            continue
        found = False
        for j in range(n_dst):
            if dst.guard[j]:
                continue
            if dst.body[j] == src.body[i] and dst.element[j] == src.element[i] and dst.face[j] == src.face[i]:
                dst.impulse_taken[j] = 1
                for c in range(6):
                    dst.impulse[j, c] = src.impulse[i, c]
                found = True
                break
        if not found:
            if n_total >= C or free_point + src.point_count[i] > P:
                return -1
            free_point = _copy_contact(src, i, dst, n_total, free_point)
            dst.released[n_total] = 1
            dst.bounced[n_total] = 1
            n_total += 1
    return n_total


@njit(cache=True)
def free_acceleration_into(d, v, tau, rhs, a0) -> None:
    """a0 (nv,) = A^-1 (tau - D v - b): the acceleration without constraint forces, with the
    step's inertia A = M + diag(armature + dt D) (its factor d.solve.L) and the bias forces
    d.dyn.b at the state; v (nv,), tau (nv,) the generalized forces [N, N m]; rhs (nv,):
    scratch. Joint damping D is linearly implicit (simulator.py)."""
    dyn = d.dyn
    for i in range(v.shape[0]):
        rhs[i] = tau[i] - dyn.damping[i] * v[i] - dyn.b[i]
    solve_vec_nb(d.solve.L, d.tree.dof_parent, rhs, a0)


@njit(cache=True)
def _virtual_link_acceleration(d, tab, nc, v_plus, tau, n_hard, t_index, free) -> tuple:
    """Step 4 of seed 000 from v_plus: a0 (free: already in out.a0), the checked solve of the
    nc contacts' and the hard rows' accelerations and joint friction. Returns (OK, t_index, nc)."""
    par = d.params
    out = d.out
    counts = out.counts[0]
    # 4. accelerations and wrenches (Eq. 20a, 20b): a0 = A^-1 (tau - D v+ - b)
    a0 = out.a0
    if not free:
        free_acceleration_into(d, v_plus, tau, out.tau_c, a0)
    for i in range(nc):
        if not tab.bounced[i]:
            _set_target(d, tab, i, ACCELERATION_PHASE)
    _hard_targets(d, n_hard, v_plus, ACCELERATION_PHASE)
    # joint friction: a joint moving slower than the separating threshold is held, a faster
    # one slips with the friction torque against its motion
    fr = d.friction
    n_fric = fr.index.shape[0]
    for j in range(n_fric):
        vj = v_plus[fr.index[j]]
        fr.stick[j] = 1 if abs(vj) <= par.separating else 0
        fr.sign[j] = -1.0 if vj > 0.0 else 1.0
    a = out.a
    # a released contact must not go on approaching here either: its acceleration below its
    # target by more than RELEASE_MARGIN (Painlevé: sliding, no force on its friction ray holds
    # it) sends the phase to the bounded solve, which widens its friction
    # the other table keeps the areas as built of the contacts the checks reduce (_check)
    built = d.tables[1 - t_index]
    for i in range(nc):
        built.kind[i] = 0
    end = 0  # the first free point row (an area reduced and taken back keeps its rows)
    for i in range(nc):
        end = max(end, tab.point_start[i] + tab.point_count[i])
    for passes in range(WATCH_PASSES + 1):
        rounds, _, bounded = _solve_with_checks(d, tab, nc, n_hard, n_fric, ACCELERATION_PHASE, a0, a, RELEASE_MARGIN,
                                                built)  # fmt: skip
        if passes == WATCH_PASSES:
            break
        n_new, end = _watch_points(d, tab, nc, end, a)
        if n_new < 0:
            return CAPACITY, t_index, nc
        n_watched = _watch_hard(d, n_hard, v_plus, a)
        if n_watched == 0 and n_new == nc:
            break
        counts.watched += n_new - nc
        for i in range(nc, n_new):
            built.kind[i] = 0
        nc = n_new
    counts.rounds = rounds
    if bounded:
        counts.bounded = 1
        counts.validated = 0
    return OK, t_index, nc


@njit(cache=True)
def _watch_hard(d, n_hard, v, x) -> int:
    """The hard rows short of their limit (left out of the acceleration phase: _hard_targets)
    that the accelerations x (nv,) would carry past it within the step, by more than
    RELEASE_MARGIN of row acceleration, taken into the solve with the acceleration that ends
    the step at the limit (kernels.guard_acceleration_nb; v (nv,): the velocity after any
    impulse). Returns how many. (A g1 elbow reaching its stop speculatively at 65 rad/s was
    carried 3 mrad past it by the efforts within the step, and the next step's correction,
    pushing it back out, did 0.16 J of work.)"""
    hard = d.hard
    nv = v.shape[0]
    added = 0
    for j in range(n_hard):
        if hard.active[j]:
            continue
        hv = 0.0
        ha = 0.0
        for col in range(nv):
            hv += hard.jacobian[j, col] * v[col]
            ha += hard.jacobian[j, col] * x[col]
        target = _hard_guard_target(d, j, hv)
        if ha >= target - RELEASE_MARGIN:
            continue
        hard.active[j] = 1
        hard.target[j] = target
        added += 1
    return added


@njit(cache=True, inline="always")
def _hard_guard_target(d, j, hv) -> float:
    """Hard row j's target (its row acceleration J x, net of its drift) that ends the step
    exactly at its limit, from its violation and its rate hv (kernels.guard_acceleration_nb)."""
    hard = d.hard
    return hard.desired[j] + guard_acceleration_nb(-hard.violation[j], hv, d.params.dt) - hard.drift[j]


@njit(cache=True)
def _watch_points(d, tab, nc, end, x) -> tuple:
    """The watched points (detection.watch: the points a group dropped beyond its two guards,
    and a set-aside speculative contact's points beyond its guard's: _build_contacts,
    _to_guard) that the accelerations x (nv,) would end deeper than the surface or than they
    start, by more than RELEASE_MARGIN [m/s^2] of normal acceleration
    (kernels.guard_acceleration_nb), become guards taken into the solve: rows nc on of tab,
    their point rows from end. (A box pushed down at 800 g and turning about its two guarded
    corners drove its far corners, 4-7 mm up and not moving down, 2 mm in.) A point's
    acceleration: dynamics/kernels.point_motion_nb, each body's spatial acceleration
    (a_O, α) = A + Σ S q̈ over its chain; between two bodies, relative. Returns (the number of contacts, the next free point row), or
    (-1, -1) when the table is full."""
    det, dyn, tree = d.detection, d.dyn, d.tree
    nw = det.n_watch[0]
    if nw == 0:
        return nc, end
    acc = dyn.acc  # (nb, 6) the bodies' spatial accelerations at x (the RNEA scratch, free here)
    A, parent, ndof, v_index, S = dyn.A, tree.parent, tree.ndof, tree.v_index, dyn.S
    for i in range(parent.shape[0]):
        k = parent[i]
        for c in range(6):
            ai = A[i, c] + (acc[k, c] - A[k, c] if k >= 0 else 0.0)  # A holds its chain's sum already
            for dof in range(ndof[i]):
                ai += S[v_index[i] + dof, c] * x[v_index[i] + dof]
            acc[i, c] = ai
    dt = d.params.dt
    kept = 0
    for t in range(nw):
        h = det.watch[t]
        n = det.normal[h]
        v, a = point_motion_nb(dyn.V, acc, det.body[h], det.point[h])
        vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2]
        an = a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
        if det.other[h] >= 0:
            v, a = point_motion_nb(dyn.V, acc, det.other[h], det.point[h])
            vn -= v[0] * n[0] + v[1] * n[1] + v[2] * n[2]
            an -= a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
        if an >= guard_acceleration_nb(det.gap[h], vn, dt) - RELEASE_MARGIN:
            det.watch[kept] = h  # still watched
            kept += 1
            continue
        det.sel[0] = h
        i = nc
        nc, end = _add_contact(d, tab, nc, end, h, 1, True)
        if nc < 0:
            return -1, -1
        tab.released[i] = 0
        tab.bounced[i] = 0
        _set_target(d, tab, i, ACCELERATION_PHASE)
    det.n_watch[0] = kept
    return nc, end



@njit(cache=True)
def _report_row(tab, i, rec) -> None:
    """Contact i of tab into rec, a record of REPORT_DTYPE (step_data.py)."""
    rec.body = tab.body[i]
    rec.element = tab.element[i]
    rec.kind = tab.kind[i]
    rec.sticking = tab.sticking[i]
    rec.spin = tab.spin[i]
    rec.other = tab.other[i]
    rec.point_start = tab.point_start[i]
    rec.point_count = tab.point_count[i]
    for r in range(3):
        rec.origin[r] = tab.origin[i, r]
        rec.pv[r] = tab.pv[i, r]
        for c in range(3):
            rec.R[r, c] = tab.R[i, r, c]
    for c in range(6):
        rec.wrench[c] = tab.wrench[i, c]
        rec.wrench_world[c] = tab.wrench_world[i, c]
        rec.impulse[c] = tab.impulse[i, c]


@njit(cache=True)
def _report(d, tab, nc, t_index) -> None:
    """Reported wrenches (the solved one plus impulse / dt: the step's average force), world
    axes, p_v (Eq. 26), world points, the deepest penetration, the new contact memory and
    the ZMP of the ground contacts. Contacts released without an impulse are dropped;
    counts.table says which of d.tables holds the reports (rows 0..counts.contacts - 1), and
    out.reports holds them as records (REPORT_DTYPE), their points in that table's world
    rows 0..counts.report_points - 1; all of it, with the ZMP's support polygon, also in
    out.result (step_data.StepOutput)."""
    par = d.params
    dyn = d.dyn
    out = d.out
    counts = out.counts[0]
    mem = d.memory
    cur = mem.current[0]
    nxt = 1 - cur
    cap = mem.key.shape[1]
    dt = par.dt
    # the deepest point of every body in the band, reported or not (a point released or
    # moving out is still in the surface)
    max_pen = 0.0
    det = d.detection
    for h in range(counts.hits):
        max_pen = max(max_pen, -det.gap[h])
    kept = 0  # released without an impulse: dropped (the order is kept)
    for i in range(nc):
        if tab.released[i] and not tab.impulse_taken[i]:
            continue
        if kept != i:
            _copy_fields(tab, i, tab, kept)
        kept += 1
    nc = kept
    nmem = 0
    ngp = 0
    zp = out.zmp_points
    for i in range(nc):
        f = tab.wrench[i]
        Rv = tab.R[i]
        remembered = not (tab.released[i] or tab.guard[i]) and nmem < cap  # (a guard is not remembered)
        if remembered:  # the solved wrench, world axes: the next warm start
            for r in range(3):
                mem.force[nxt, nmem, r] = Rv[r, 0] * f[0] + Rv[r, 1] * f[1] + Rv[r, 2] * f[2]
                mem.moment[nxt, nmem, r] = Rv[r, 0] * f[3] + Rv[r, 1] * f[4] + Rv[r, 2] * f[5]
                mem.origin[nxt, nmem, r] = tab.origin[i, r]
        if tab.impulse_taken[i]:
            if tab.released[i]:
                for c in range(6):
                    f[c] = 0.0
            for c in range(6):
                f[c] += tab.impulse[i, c] / dt
        for r in range(3):
            tab.wrench_world[i, r] = Rv[r, 0] * f[0] + Rv[r, 1] * f[1] + Rv[r, 2] * f[2]
            tab.wrench_world[i, 3 + r] = Rv[r, 0] * f[3] + Rv[r, 1] * f[4] + Rv[r, 2] * f[5]
        if f[2] > 0:
            for r in range(3):
                tab.pv[i, r] = tab.origin[i, r] + Rv[r, 0] * (-f[4] / f[2]) + Rv[r, 1] * (f[3] / f[2])
        else:
            for r in range(3):
                tab.pv[i, r] = np.nan
        st, cnt = tab.point_start[i], tab.point_count[i]
        for t in range(st, st + cnt):
            for r in range(3):
                tab.world[t, r] = tab.origin[i, r] + (tab.xy[t, 0] * Rv[r, 0] + tab.xy[t, 1] * Rv[r, 1])
            if par.has_ground and tab.element[i] == 0 and d.statics.robot[tab.body[i]]:
                zp[ngp, 0] = tab.world[t, 0]
                zp[ngp, 1] = tab.world[t, 1]
                ngp += 1
        if not remembered:  # released: no memory
            continue
        body = tab.body[i]
        mem.key[nxt, nmem, 0] = body
        mem.key[nxt, nmem, 1] = tab.element[i]
        mem.key[nxt, nmem, 2] = tab.face[i]
        row = tab.memory_row[i]
        other = tab.other[i]
        if tab.sticking[i]:
            mem.sticking[nxt, nmem] = 1
            for c in range(3):
                mem.slip[nxt, nmem, c] = 0.0
            if row >= 0 and tab.keep_anchor[i] and tab.spin[i] == 0.0 and not tab.rolling[i]:
                mem.R[nxt, nmem] = mem.R[cur, row]  # sticking before and now: the anchor stays
                mem.p[nxt, nmem] = mem.p[cur, row]
            elif other >= 0:  # between two bodies: the anchor is body's pose in other's frame
                R_rel, p_rel = _relative_pose(dyn, body, other)
                mem.R[nxt, nmem] = R_rel
                mem.p[nxt, nmem] = p_rel
            else:
                mem.R[nxt, nmem] = dyn.R[body]
                mem.p[nxt, nmem] = dyn.p[body]
        else:
            mem.sticking[nxt, nmem] = 0
            mem.R[nxt, nmem] = dyn.R[body]
            mem.p[nxt, nmem] = dyn.p[body]
            for c in range(3):
                mem.slip[nxt, nmem, c] = Rv[c, 0] * tab.slip[i, 0] + Rv[c, 1] * tab.slip[i, 1]
        nmem += 1
    mem.count[nxt] = nmem
    mem.current[0] = nxt
    counts.memory = nmem
    counts.contacts = nc
    end = 0
    for i in range(nc):
        _report_row(tab, i, out.reports[i])
        end = max(end, tab.point_start[i] + tab.point_count[i])
    counts.report_points = end
    counts.max_penetration = max_pen
    counts.table = t_index
    # ZMP of the ground contacts (balance/zmp.py's, nothing allocated): their total wrench about
    # the world origin, the hull of their points
    zmp = out.zmp
    for r in range(4, 10):
        zmp[r] = 0.0
    for i in range(nc):
        if par.has_ground and tab.element[i] == 0 and d.statics.robot[tab.body[i]]:
            w, o = tab.wrench_world, tab.origin
            for r in range(3):
                zmp[4 + r] += w[i, r]
            zmp[7] += o[i, 1] * w[i, 2] - o[i, 2] * w[i, 1] + w[i, 3]
            zmp[8] += o[i, 2] * w[i, 0] - o[i, 0] * w[i, 2] + w[i, 4]
            zmp[9] += o[i, 0] * w[i, 1] - o[i, 1] * w[i, 0] + w[i, 5]
    zmp[0], zmp[1], zmp[2] = zmp_point(zmp[4], zmp[5], zmp[6], zmp[7], zmp[8], par.ground_height)
    # the result block's tail (StepOutput.result): the support polygon, the reported points (and
    # their forces), the records
    res = out.result
    o = result_head(out.q_next.shape[0], out.v_next.shape[0], out.applied.shape[0])
    nh = convex_hull_into(zp, ngp, det.hull_order, det.hull)
    for t in range(nh):
        res[o + 2 * t] = zp[det.hull[t], 0]
        res[o + 2 * t + 1] = zp[det.hull[t], 1]
    zmp[3] = zmp_margin(zmp[0], zmp[1], res[o : o + 2 * nh].reshape((nh, 2)))
    o += 2 * nh
    for t in range(end):
        for r in range(3):
            res[o + 3 * t + r] = tab.world[t, r]
    o += 3 * end
    if par.method != VIRTUAL_LINK:  # the per-point methods' forces
        for t in range(end):
            for r in range(3):
                res[o + 3 * t + r] = tab.point_force[t, r]
        o += 3 * end
    for w in range(nc * REPORT_WORDS):
        res[o + w] = out.report_words[w]
    counts.ground_points = ngp
    counts.ground_hull = nh
