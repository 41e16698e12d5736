"""Seed 002's contact method: per-vertex contact rows solved at the velocity level as a
regularised bounded QP with error compensation and continuous friction.

Every point of every contact of the step's table is a contact of its own (Eq. 1-2): its
frame is the contact's (normal n = z of the virtual link, tangents its x and y), its
unknown the impulse Δf_i = (Δf_n, Δf_t1, Δf_t2) over the step [N s] (Eq. 7), its three
rows the velocity of the vertex relative to the other body (the point Jacobian, from the
virtual-link Jacobian G and the vertex's lever arm). With the rows of the hard provider
rows (joint stops: one-sided) and of the joints' Coulomb friction (a box |Δτ| <= F dt) in
the same matrix J (m, nv):

    B = J A^-1 Jᵀ           (Eq. 3-4; test forces through the articulated-body
                             factors, dynamics/kernels.contact_space_matrix_nb)
    b = J (v + dt a0)        (Eq. 6: the velocities after the step without contact)
    v+ = B Δf + b            (Eq. 5)

and the velocity each row should reach is the error compensation of Eq. 10,
v+ = -K d, K = ``compensation`` / dt: d_n the vertex's gap (negative inside), d_t its
tangential displacement from its reference point (Eq. 13-15, 18). A vertex still outside
(a speculative point) may arrive at the surface within the step: v+_n >= -gap / dt.

The QP (Eq. 9, 11) is solved as the strictly convex problem

    min ½ Δfᵀ (B + ε I) Δf - Δfᵀ r,   r = -K d - b,   Δf ∈ K

whose conditions of optimality are v+ - (-K d) = -ε Δf where a vertex pushes and
v+ >= -K d where it does not (a complementarity, so that a vertex that separates by
itself does not count as an error, which Eq. 11's ‖BΔf + b + Kd‖² would do); without
bounds both forms have the same minimiser as ε, λ -> 0, and as in the seed the error ε
leaves always points towards a smaller ‖Δf‖ and the compensation takes it back over the
next steps. ε = ``regularisation`` x the mean diagonal of B is seed 002's λ. The set K:
Δf_n >= 0 (Eq. 9), the friction of Eq. 16-21 (below), hard rows >= 0, joint friction
|Δτ| <= F dt. Projected Gauss-Seidel over the vertices' blocks, warm-started from the
previous step's forces of the same vertices.

Friction (Eq. 16-21), per vertex, remembered from step to step: a vertex static in the
previous step holds while |f_t| <= μ_s f_n (Eq. 16); one that was sliding holds only
while |f_t| <= μ_d f_n (Eq. 19): the hysteresis of the continuous model of Fig. 3. A
vertex whose static friction would exceed its bound slides in this step: from static,
with μ_d f_n along the static friction it needed (Eq. 17, the force on the body); from
sliding, with μ_d f_n w(|v_t|) against its sliding velocity v_t (Eq. 20), w(x) = 1 -
exp(-k_w x) (Eq. 21, k_w = ``friction_rate``), so that a slow slide brakes softly and
does not dither. A sliding vertex's reference point moves to its projection on the
surface (Eq. 18); a static one keeps it (Eq. 15); a vertex new in contact takes the point
where its path over the step crossed the surface (Eq. 13-14, the previous position
p - dt v). The sliding decisions are made after a solve and the solve repeated with
them (at most ``max_rounds`` solves).

The method has no separate impulse phase: v_plus = v, and the step's average force
J ᵀ Δf / dt is held over the step (a = a0 + A^-1 Jᵀ Δf / dt).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.bounded_solve import regularised_product_nb
from humanoid_sim.dynamics.mass_factor import solve_vec_nb
from humanoid_sim.contact.methods import CAPACITY, OK
from humanoid_sim.dynamics.kernels import aba_factor_nb, contact_space_matrix_nb
from humanoid_sim.errors import InvalidValueError

__all__ = ["RelaxedQpData", "RelaxedQpParams", "allocate_relaxed_qp", "contact_matrix_nb", "relaxed_qp_nb", "solve_nb",
           "w_friction"]

STATIC, SLIDING = 0, 1  # a vertex block's friction mode within a step
EXTRA_ROWS = 64  # rows for the hard and joint-friction rows beyond 6 per contact
# vertices the rows have room for: this many per contact (at most P); more return CAPACITY and
# the simulator doubles C (B is (R, R): sized by P alone, a mesh's thousands of candidate
# points would make it gigabytes for every simulator)
VERTICES_PER_CONTACT = 8
CONE_SAMPLES, CONE_SECTIONS = 16, 40  # the search over a friction cone's surface (_static_block)


@dataclass(frozen=True)
class RelaxedQpParams:
    """The constants of seed 002's method (docs/relaxed_qp.md says why these values).

    regularisation: ε / mean diag(B), seed 002's λ of Eq. 9, 11 (> 0, dimensionless).
    compensation: K dt of Eq. 10, the fraction of a vertex's error d taken back in one
    step (0 < K dt <= 1).
    friction_rate: k_w of Eq. 21 [s/m] (> 0): w(x) = 1 - exp(-k_w x) of the sliding speed x.
    sweeps: Gauss-Seidel sweeps per solve at most (>= 1); tolerance: the largest relative
    change of an impulse or of a row's velocity in a sweep that stops it (> 0).
    max_rounds: solves per step for the sliding decisions (>= 1).
    match_radius: a vertex of a contact between two bodies (no candidate index) is the
    remembered one of the same bodies within this distance in the body's frame [m] (> 0).
    """

    regularisation: float = 0.1
    compensation: float = 0.2
    friction_rate: float = 100.0
    sweeps: int = 100
    tolerance: float = 1e-6
    max_rounds: int = 3
    match_radius: float = 2e-3

    def __post_init__(self) -> None:
        checks = (
            ("regularisation", self.regularisation > 0.0, "> 0"),
            ("compensation", 0.0 < self.compensation <= 1.0, "in (0, 1]"),
            ("friction_rate", self.friction_rate > 0.0, "> 0 [s/m]"),
            ("sweeps", self.sweeps >= 1, ">= 1"),
            ("tolerance", self.tolerance > 0.0, "> 0"),
            ("max_rounds", self.max_rounds >= 1, ">= 1"),
            ("match_radius", self.match_radius > 0.0, "> 0 [m]"),
        )
        for name, ok, what in checks:
            value = getattr(self, name)
            if not (ok and math.isfinite(value)):
                raise InvalidValueError(f"RelaxedQpParams.{name} = {value!r}: must be finite and {what}")


class RelaxedQpData(NamedTuple):
    """The method's constants and scratch, allocated once per simulator (rebuilt with the
    tables when they grow: the vertex memory then starts over).

    constants (7,): RelaxedQpParams in field order. Rows (R = 3 min(P, VERTICES_PER_CONTACT C)
    + 6 C + EXTRA_ROWS):
    J (R, nv) the rows, B (R, R) J A^-1 Jᵀ, x (R,) impulses, w (R,) (B + ε I) x,
    r (R,), cap (R,): a box row's bound. Vertices (P): mode, mu (friction radius),
    slip (P, 2) the sliding force's direction in the tangents, coef (P,) its μ_d w,
    p, ref, lever (P, 3) (world; the reference point in the other body's frame for a
    contact between two bodies; the lever in the virtual-link axes), vel (P, 3) (n, t1,
    t2), mem_row (P,), prev_sliding (P,). Articulated-body factors IA, Ia, U, Dinv
    (nb, 6, 6), zero_A, pA, acc (nb, 6) (nb <= nv + 1), qdd, u, g, h (nv,); small (6,).
    Vertex memory (two tables, read one write the other): m_key (2, P, 4) body, other,
    element, candidate (-1: a narrow-phase point); m_local (2, P, 3): the vertex in its
    body's frame [m]; m_ref (2, P, 3): its reference point; m_sliding (2, P); m_force
    (2, P, 3): its force in world axes [N] (the warm start); m_count (2,), m_current (1,)."""

    constants: np.ndarray
    J: np.ndarray
    B: np.ndarray
    x: np.ndarray
    w: np.ndarray
    r: np.ndarray
    cap: np.ndarray
    mode: np.ndarray
    mu: np.ndarray
    slip: np.ndarray
    coef: np.ndarray
    p: np.ndarray
    ref: np.ndarray
    lever: np.ndarray
    vel: np.ndarray
    mem_row: np.ndarray
    prev_sliding: np.ndarray
    IA: np.ndarray
    Ia: np.ndarray
    U: np.ndarray
    Dinv: np.ndarray
    zero_A: np.ndarray
    pA: np.ndarray
    acc: np.ndarray
    qdd: np.ndarray
    u: np.ndarray
    g: np.ndarray
    h: np.ndarray
    small: np.ndarray
    m_key: np.ndarray
    m_local: np.ndarray
    m_ref: np.ndarray
    m_sliding: np.ndarray
    m_force: np.ndarray
    m_count: np.ndarray
    m_current: np.ndarray


def allocate_relaxed_qp(params: RelaxedQpParams, C: int, P: int, nv: int) -> RelaxedQpData:
    """RelaxedQpData for C contacts, P contact points and nv velocity coordinates."""
    R = 3 * min(P, VERTICES_PER_CONTACT * C) + 6 * C + EXTRA_ROWS
    nb = nv + 1
    constants = np.array([params.regularisation, params.compensation, params.friction_rate, params.sweeps,
                          params.tolerance, params.max_rounds, params.match_radius], dtype=float)  # fmt: skip
    return RelaxedQpData(
        constants, np.zeros((R, nv)), np.zeros((R, R)), np.zeros(R), np.zeros(R), np.zeros(R), np.zeros(R),
        np.zeros(P, np.int64), np.zeros(P), np.zeros((P, 2)), np.zeros(P), np.zeros((P, 3)), np.zeros((P, 3)),
        np.zeros((P, 3)), np.zeros((P, 3)), np.zeros(P, np.int64), np.zeros(P, np.int64),
        np.zeros((nb, 6, 6)), np.zeros((nb, 6, 6)), np.zeros((nb, 6, 6)), np.zeros((nb, 6, 6)), np.zeros((nb, 6)),
        np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros(nv), np.zeros(nv), np.zeros(nv), np.zeros(nv), np.zeros(6),
        np.zeros((2, P, 4), np.int64), np.zeros((2, P, 3)), np.zeros((2, P, 3)), np.zeros((2, P), np.int64),
        np.zeros((2, P, 3)), np.zeros(2, np.int64), np.zeros(1, np.int64),
    )  # fmt: skip


@njit(cache=True)
def w_friction(x, k_w) -> float:
    """w(x) = 1 - exp(-k_w x) of Eq. 21: the share of μ_d f_n a vertex sliding at x [m/s]
    gets (k_w [s/m])."""
    return 1.0 - math.exp(-k_w * x)


@njit(cache=True)
def _match(rq, body, other, element, cand, local, radius) -> int:
    """The row of the vertex memory that is this vertex (-1: none): same bodies and element,
    and the same candidate, or (a narrow-phase point, cand < 0) the nearest remembered one
    within radius [m] in the body's frame."""
    cur = rq.m_current[0]
    best, best_d = -1, radius * radius
    for r in range(rq.m_count[cur]):
        key = rq.m_key[cur, r]
        if key[0] != body or key[1] != other or key[2] != element or key[3] != cand:
            continue
        if cand >= 0:
            return r
        dd = 0.0
        for c in range(3):
            e = rq.m_local[cur, r, c] - local[c]
            dd += e * e
        if dd <= best_d:
            best, best_d = r, dd
    return best


@njit(cache=True)
def _vertices(d, tab, nc, v) -> int:
    """Each contact point of tab (rows 0..nc-1) as a vertex: its three rows into rq.J
    (n, t1, t2 of the contact's frame), position, lever, velocity, memory row and
    reference point (Eq. 13-15). Returns the number of vertices."""
    rq = d.relaxed
    det, dyn = d.detection, d.dyn
    nv = v.shape[0]
    dt = d.params.dt
    cur = rq.m_current[0]
    radius = rq.constants[6]
    local = rq.small[:3]
    nvert = 0
    for i in range(nc):
        Rv = tab.R[i]
        G = tab.G[i]
        body, other = tab.body[i], tab.other[i]
        st, cnt = tab.point_start[i], tab.point_count[i]
        for t in range(st, st + cnt):
            h = tab.hit[t]
            for c in range(3):
                rq.p[t, c] = det.point[h, c]
            # lever in the virtual-link axes: Rᵀ (p - origin)
            for c in range(3):
                rq.lever[t, c] = Rv[0, c] * (rq.p[t, 0] - tab.origin[i, 0]) + Rv[1, c] * (rq.p[t, 1] - tab.origin[i, 1]) + \
                    Rv[2, c] * (rq.p[t, 2] - tab.origin[i, 2])
            lx, ly, lz = rq.lever[t, 0], rq.lever[t, 1], rq.lever[t, 2]
            row = 3 * t
            Jn, J1, J2 = rq.J[row], rq.J[row + 1], rq.J[row + 2]
            vn, v1, v2 = 0.0, 0.0, 0.0
            for col in range(nv):  # v_point = v_origin + ω x lever (virtual-link axes)
                Jn[col] = G[2, col] + G[3, col] * ly - G[4, col] * lx
                J1[col] = G[0, col] + G[4, col] * lz - G[5, col] * ly
                J2[col] = G[1, col] + G[5, col] * lx - G[3, col] * lz
                vn += Jn[col] * v[col]
                v1 += J1[col] * v[col]
                v2 += J2[col] * v[col]
            rq.vel[t, 0], rq.vel[t, 1], rq.vel[t, 2] = vn, v1, v2
            # the vertex in its body's frame: the memory's key
            Rb = dyn.R[body]
            for c in range(3):
                local[c] = Rb[0, c] * (rq.p[t, 0] - dyn.p[body, 0]) + Rb[1, c] * (rq.p[t, 1] - dyn.p[body, 1]) + \
                    Rb[2, c] * (rq.p[t, 2] - dyn.p[body, 2])
            cand = det.idx[h]
            mrow = _match(rq, body, other, tab.element[i], cand, local, radius)
            rq.mem_row[t] = mrow
            rq.prev_sliding[t] = rq.m_sliding[cur, mrow] if mrow >= 0 else 0
            gap = tab.gap[t]
            rolling = det.roll[h, 0] != 0.0  # the point moves over the body's surface
            if mrow >= 0 and not rolling:  # contact kept: the previous reference point (Eq. 15)
                if other >= 0:
                    Ro = dyn.R[other]
                    for c in range(3):
                        rq.ref[t, c] = dyn.p[other, c] + Ro[c, 0] * rq.m_ref[cur, mrow, 0] + \
                            Ro[c, 1] * rq.m_ref[cur, mrow, 1] + Ro[c, 2] * rq.m_ref[cur, mrow, 2]
                else:
                    for c in range(3):
                        rq.ref[t, c] = rq.m_ref[cur, mrow, c]
            else:
                # new in contact (Eq. 13-14): where the path from p_prev = p - dt v crossed the
                # surface; a point not yet inside, not moving in, or rolling: its projection
                s = 1.0
                if gap < 0.0 and vn < 0.0 and not rolling:
                    s = min(1.0, max(0.0, 1.0 - gap / (dt * vn)))
                back = (1.0 - s) * dt  # p_n = p - (1 - s) dt v_world, then onto the surface
                for c in range(3):
                    rq.ref[t, c] = rq.p[t, c] - back * (Rv[c, 0] * v1 + Rv[c, 1] * v2)
            nvert = t + 1
    return nvert


@njit(cache=True)
def contact_matrix_nb(tree, dyn, rq, m) -> None:
    """rq.B[:m, :m] = J A^-1 Jᵀ of the rows rq.J[:m] (Eq. 3-4): unit test forces through the
    articulated-body factors of the workspace dyn (A = M with dyn.diagonal, the armature and
    the implicit damping, on its diagonal), O(nb) per column (Kokkevis)."""
    aba_factor_nb(tree.parent, tree.ndof, tree.v_index, dyn.S, dyn.Iw, dyn.diagonal, rq.IA, rq.Ia, rq.U, rq.Dinv)
    contact_space_matrix_nb(tree.parent, tree.ndof, tree.v_index, dyn.S, rq.Ia, rq.U, rq.Dinv, rq.J[:m], rq.B[:m, :m],
                            rq.zero_A, rq.pA, rq.qdd, rq.acc, rq.u)  # fmt: skip


@njit(cache=True)
def _project_vertex(rq, row, t) -> None:
    """Vertex t's impulses x[row:row+3] onto its set: Δf_n >= 0; static: |Δf_t| <= μ Δf_n
    (f_t scaled); sliding: Δf_t = coef Δf_n along slip."""
    x = rq.x
    fn = x[row]
    if fn <= 0.0:
        x[row] = 0.0
        x[row + 1] = 0.0
        x[row + 2] = 0.0
        return
    if rq.mode[t] == SLIDING:
        x[row + 1] = rq.coef[t] * fn * rq.slip[t, 0]
        x[row + 2] = rq.coef[t] * fn * rq.slip[t, 1]
        return
    ft = math.hypot(x[row + 1], x[row + 2])
    cap = rq.mu[t] * fn
    if ft > cap:
        s = cap / ft
        x[row + 1] *= s
        x[row + 2] *= s


@njit(cache=True)
def _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, th):
    """On the cone's surface along the angle th: u = (1, μ cos th, μ sin th). Returns
    uᵀc / sqrt(uᵀ Bb u) (the larger, the lower ½ yᵀ Bb y - yᵀ c at the best multiple
    y = ρ u, whose value is -½ of its square when it is positive) and that ρ >= 0."""
    u1, u2 = mu * math.cos(th), mu * math.sin(th)
    quad = b00 + 2.0 * (b01 * u1 + b02 * u2) + b11 * u1 * u1 + 2.0 * b12 * u1 * u2 + b22 * u2 * u2
    lin = c0 + c1 * u1 + c2 * u2
    return lin / math.sqrt(quad), max(0.0, lin / quad)


@njit(cache=True)
def _static_block(rq, m, row, t, eps) -> None:
    """The exact minimiser over vertex t's friction cone {Δf_n >= 0, |Δf_t| <= μ Δf_n} of
    the objective with every other row held (block coordinate descent, which converges for
    a strictly convex objective): the unconstrained minimiser when it is inside the cone,
    else the best point of the cone's surface (a search over the direction of Δf_t)."""
    B, x, w = rq.B, rq.x, rq.w
    b00, b01, b02 = B[row, row] + eps, B[row, row + 1], B[row, row + 2]
    b11, b12, b22 = B[row + 1, row + 1] + eps, B[row + 1, row + 2], B[row + 2, row + 2] + eps
    x0, x1, x2 = x[row], x[row + 1], x[row + 2]
    # c = r_b - (w_b - Bb x_b): the block's right-hand side without its own forces
    c0 = rq.r[row] - w[row] + b00 * x0 + b01 * x1 + b02 * x2
    c1 = rq.r[row + 1] - w[row + 1] + b01 * x0 + b11 * x1 + b12 * x2
    c2 = rq.r[row + 2] - w[row + 2] + b02 * x0 + b12 * x1 + b22 * x2
    mu = rq.mu[t]
    # unconstrained: Bb y = c (Cramer; Bb is positive definite)
    m00, m01, m02 = b11 * b22 - b12 * b12, b02 * b12 - b01 * b22, b01 * b12 - b02 * b11
    det = b00 * m00 + b01 * m01 + b02 * m02
    y0, y1, y2 = 0.0, 0.0, 0.0
    inside = False
    if det > 0.0:
        m11, m12, m22 = b00 * b22 - b02 * b02, b01 * b02 - b00 * b12, b00 * b11 - b01 * b01
        y0 = (m00 * c0 + m01 * c1 + m02 * c2) / det
        y1 = (m01 * c0 + m11 * c1 + m12 * c2) / det
        y2 = (m02 * c0 + m12 * c1 + m22 * c2) / det
        inside = y0 >= 0.0 and math.hypot(y1, y2) <= mu * y0
    if not inside:
        if mu <= 0.0:  # a frictionless vertex: the ray of Δf_n alone
            y0 = max(0.0, c0 / b00)
            y1, y2 = 0.0, 0.0
        else:  # the cone's surface: the best direction by a coarse search, then golden sections
            best, best_th = -1e300, 0.0
            for k in range(CONE_SAMPLES):
                th = 2.0 * math.pi * k / CONE_SAMPLES
                h, _ = _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, th)
                if h > best:
                    best, best_th = h, th
            lo, hi = best_th - 2.0 * math.pi / CONE_SAMPLES, best_th + 2.0 * math.pi / CONE_SAMPLES
            gr = 0.5 * (math.sqrt(5.0) - 1.0)
            for _ in range(CONE_SECTIONS):
                a = hi - gr * (hi - lo)
                b = lo + gr * (hi - lo)
                ha, _ = _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, a)
                hb, _ = _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, b)
                if ha > hb:
                    hi = b
                else:
                    lo = a
            th = 0.5 * (lo + hi)
            h, rho = _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, th)
            if h < best:  # keep the sampled one
                th = best_th
                h, rho = _ray(b00, b01, b02, b11, b12, b22, c0, c1, c2, mu, th)
            y0, y1, y2 = rho, rho * mu * math.cos(th), rho * mu * math.sin(th)
            # the search is accurate to its last sections: keep the current forces unless the
            # new ones are lower (so that sweeps at the minimiser change nothing and stop)
            old = 0.5 * (x0 * (b00 * x0 + b01 * x1 + b02 * x2) + x1 * (b01 * x0 + b11 * x1 + b12 * x2) +
                         x2 * (b02 * x0 + b12 * x1 + b22 * x2)) - (c0 * x0 + c1 * x1 + c2 * x2)  # fmt: skip
            new = 0.5 * (y0 * (b00 * y0 + b01 * y1 + b02 * y2) + y1 * (b01 * y0 + b11 * y1 + b12 * y2) +
                         y2 * (b02 * y0 + b12 * y1 + b22 * y2)) - (c0 * y0 + c1 * y1 + c2 * y2)  # fmt: skip
            if not new < old:
                return
    _apply(rq, m, row, y0 - x0, eps)
    _apply(rq, m, row + 1, y1 - x1, eps)
    _apply(rq, m, row + 2, y2 - x2, eps)


@njit(cache=True)
def _apply(rq, m, j, delta, eps) -> None:
    """x[j] += delta with w = (B + ε I) x kept."""
    rq.x[j] += delta
    B, w = rq.B, rq.w
    for a in range(m):
        w[a] += B[a, j] * delta
    w[j] += eps * delta


@njit(cache=True)
def _gs_row(rq, m, j, eps) -> None:
    """One Gauss-Seidel update of row j (unbounded)."""
    diag = rq.B[j, j] + eps
    if diag > 0.0:
        _apply(rq, m, j, (rq.r[j] - rq.w[j]) / diag, eps)


@njit(cache=True)
def solve_nb(rq, nvert, n_hard, n_fric, eps, sweeps, tol) -> int:
    """Projected Gauss-Seidel on min ½ xᵀ(B + ε I)x - xᵀ r over rq's rows: nvert vertex
    blocks (rows 3t: n, t1, t2; rq.mode, mu, coef, slip say each one's set), n_hard hard
    rows (x >= 0), n_fric joint-friction rows (|x| <= rq.cap); rq.x holds the first
    iterate and gets the solution, rq.w = (B + ε I) x. Returns the sweeps done."""
    m = 3 * nvert + n_hard + n_fric
    x, w, B = rq.x, rq.w, rq.B
    r_max = regularised_product_nb(B, eps, x, rq.r, w, m)
    old = rq.small[3:]
    done = 0
    for sweep in range(1, sweeps + 1):
        done = sweep
        change, largest, moved = 0.0, 0.0, 0.0
        for t in range(nvert):
            row = 3 * t
            for c in range(3):
                old[c] = x[row + c]
            w0 = w[row]
            if rq.mode[t] == SLIDING:  # Δf_n from its own row, friction following it
                _gs_row(rq, m, row, eps)
                pre0, pre1, pre2 = x[row], x[row + 1], x[row + 2]
                _project_vertex(rq, row, t)
                post0, post1, post2 = x[row], x[row + 1], x[row + 2]
                x[row], x[row + 1], x[row + 2] = pre0, pre1, pre2
                _apply(rq, m, row, post0 - pre0, eps)
                _apply(rq, m, row + 1, post1 - pre1, eps)
                _apply(rq, m, row + 2, post2 - pre2, eps)
            else:
                _static_block(rq, m, row, t, eps)
            for c in range(3):
                change = max(change, abs(x[row + c] - old[c]))
                largest = max(largest, abs(x[row + c]))
            moved = max(moved, abs(w[row] - w0))
        for j in range(3 * nvert, m):
            o = x[j]
            w0 = w[j]
            _gs_row(rq, m, j, eps)
            y = x[j]
            if j < 3 * nvert + n_hard:
                y = max(0.0, y)
            else:
                y = min(rq.cap[j], max(-rq.cap[j], y))
            if y != x[j]:
                _apply(rq, m, j, y - x[j], eps)
            change = max(change, abs(x[j] - o))
            largest = max(largest, abs(x[j]))
            moved = max(moved, abs(w[j] - w0))
        if change <= tol * (1.0 + largest) or moved <= tol * (1.0 + r_max):
            break
    return done


@njit(cache=True)
def relaxed_qp_nb(d, tab, nc, k, v, tau, n_hard) -> tuple:
    """Steps 3-4 of the step by seed 002 (module docstring; contract:
    step_kernel._virtual_link_nb) on the nc contacts of d.tables[0] built at v.
    Returns (status, 0, nc): CAPACITY when the rows do not fit."""
    rq = d.relaxed
    out, dyn, par = d.out, d.dyn, d.params
    tree = d.tree
    hard, fr = d.hard, d.friction
    counts = out.counts[0]
    nv = v.shape[0]
    dt = par.dt
    reg, kdt, k_w = rq.constants[0], rq.constants[1], rq.constants[2]
    sweeps, tol, max_rounds = int(rq.constants[3]), rq.constants[4], int(rq.constants[5])
    n_fric = fr.index.shape[0]
    P = rq.p.shape[0]
    nvert = 0
    if nc > 0:
        nvert = tab.point_start[nc - 1] + tab.point_count[nc - 1]
    m = 3 * nvert + n_hard + n_fric
    if nvert > P or m > rq.x.shape[0] or tree.parent.shape[0] > rq.IA.shape[0]:
        return CAPACITY, 0, 0
    # the free motion: a0 = A^-1 (tau - D v - b), v_plus = v (no separate impulse phase)
    for i in range(nv):
        out.v_plus[i] = v[i]
        out.tau_c[i] = tau[i] - dyn.damping[i] * v[i] - dyn.b[i]
    solve_vec_nb(d.solve.L, d.tree.dof_parent, out.tau_c, out.a0)
    counts.impulse = 0
    counts.bounded = 0
    counts.validated = 1
    counts.rounds = 0
    if m == 0:
        for i in range(nv):
            out.a[i] = out.a0[i]
        _remember(d, tab, nc, 0)
        return OK, 0, nc
    # the rows: vertices (Eq. 1-2), hard rows, joint friction
    nvert = _vertices(d, tab, nc, v)
    for j in range(n_hard):
        row = 3 * nvert + j
        for col in range(nv):
            rq.J[row, col] = hard.jacobian[j, col]
    for j in range(n_fric):
        row = 3 * nvert + n_hard + j
        for col in range(nv):
            rq.J[row, col] = 0.0
        rq.J[row, fr.index[j]] = 1.0
        rq.cap[row] = fr.bound[j] * dt
    contact_matrix_nb(tree, dyn, rq, m)
    mean_diag = 0.0
    for a in range(m):
        mean_diag += rq.B[a, a]
    eps = reg * mean_diag / m
    # r = -K d - b with b = J (v + dt a0) (Eq. 6, 10)
    K = kdt / dt
    g = rq.g
    for i in range(nv):
        g[i] = v[i] + dt * out.a0[i]
    for a in range(m):
        s = 0.0
        for col in range(nv):
            s += rq.J[a, col] * g[col]
        rq.r[a] = -s
    cur = rq.m_current[0]
    for i in range(nc):
        Rv = tab.R[i]
        st, cnt = tab.point_start[i], tab.point_count[i]
        mu_s = d.statics.mu_s[tab.element[i]]
        mu_d = d.statics.mu_d[tab.element[i]]
        for t in range(st, st + cnt):
            row = 3 * t
            gap = tab.gap[t]
            rq.r[row] += -K * gap if gap <= 0.0 else -gap / dt
            d1, d2 = 0.0, 0.0
            for c in range(3):
                e = rq.p[t, c] - rq.ref[t, c]
                d1 += Rv[c, 0] * e
                d2 += Rv[c, 1] * e
            rq.r[row + 1] -= K * d1
            rq.r[row + 2] -= K * d2
            rq.mode[t] = STATIC
            rq.mu[t] = mu_d if rq.prev_sliding[t] else mu_s  # Eq. 19 / Eq. 16
            # warm start: the vertex's force of the previous step, in this step's axes
            mrow = rq.mem_row[t]
            for c in range(3):
                f = 0.0
                if mrow >= 0:
                    f = Rv[0, (c + 2) % 3] * rq.m_force[cur, mrow, 0] + Rv[1, (c + 2) % 3] * rq.m_force[cur, mrow, 1] + \
                        Rv[2, (c + 2) % 3] * rq.m_force[cur, mrow, 2]
                rq.x[row + c] = f * dt
    for j in range(n_hard):
        row = 3 * nvert + j
        viol = hard.violation[j]
        target = dt * hard.desired[j] + (K * viol if viol > 0.0 else viol / dt)
        rq.r[row] += target
        rq.x[row] = max(0.0, hard.warm[j]) * dt
    for j in range(n_fric):
        row = 3 * nvert + n_hard + j
        rq.x[row] = min(rq.cap[row], max(-rq.cap[row], fr.torque[j] * dt))
    # solve; vertices whose friction reached its bound slide (Eq. 17, 20); solve again
    total = 0
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        total += solve_nb(rq, nvert, n_hard, n_fric, eps, sweeps, tol)
        changed = False
        if rounds == max_rounds:
            break
        for t in range(nvert):
            row = 3 * t
            fn = rq.x[row]
            if rq.mode[t] == SLIDING or fn <= 0.0:
                continue
            ft = math.hypot(rq.x[row + 1], rq.x[row + 2])
            if ft < rq.mu[t] * fn * (1.0 - 1e-9):
                continue
            changed = True
            rq.mode[t] = SLIDING
            i_el = _contact_of(tab, nc, t)
            mu_d = d.statics.mu_d[tab.element[i_el]]
            if rq.prev_sliding[t]:  # Eq. 20: against the sliding velocity, w(|v_t|)
                vs = math.hypot(rq.vel[t, 1], rq.vel[t, 2])
                rq.coef[t] = mu_d * w_friction(vs, k_w)
                if vs > 1e-12:
                    rq.slip[t, 0] = -rq.vel[t, 1] / vs
                    rq.slip[t, 1] = -rq.vel[t, 2] / vs
                else:
                    rq.slip[t, 0] = rq.x[row + 1] / ft
                    rq.slip[t, 1] = rq.x[row + 2] / ft
            else:  # Eq. 17: μ_d f_n along the static friction it needed
                rq.coef[t] = mu_d
                rq.slip[t, 0] = rq.x[row + 1] / ft
                rq.slip[t, 1] = rq.x[row + 2] / ft
            _project_vertex(rq, row, t)
        if not changed:
            break
    counts.rounds = rounds
    counts.sweeps = total
    # a = a0 + A^-1 Jᵀ Δf / dt; the wrenches, per-vertex forces, hard and friction forces
    for i in range(nv):
        g[i] = 0.0
    for a in range(m):
        xa = rq.x[a] / dt
        if xa != 0.0:
            for col in range(nv):
                g[col] += rq.J[a, col] * xa
    solve_vec_nb(d.solve.L, d.tree.dof_parent, g, rq.h)
    for i in range(nv):
        out.a[i] = out.a0[i] + rq.h[i]
    for j in range(n_hard):
        hard.force[j] = rq.x[3 * nvert + j] / dt
        hard.impulse[j] = 0.0
        hard.active[j] = 1 if hard.force[j] > 0.0 else 0
    for j in range(n_fric):
        fr.torque[j] = rq.x[3 * nvert + n_hard + j] / dt
        fr.stick[j] = 1 if abs(rq.x[3 * nvert + n_hard + j]) < rq.cap[3 * nvert + n_hard + j] else 0
    for i in range(nc):
        Rv = tab.R[i]
        st, cnt = tab.point_start[i], tab.point_count[i]
        wr = tab.wrench[i]
        for c in range(6):
            wr[c] = 0.0
        sticking = 1
        for t in range(st, st + cnt):
            row = 3 * t
            fx, fy, fz = rq.x[row + 1] / dt, rq.x[row + 2] / dt, rq.x[row] / dt
            lx, ly, lz = rq.lever[t, 0], rq.lever[t, 1], rq.lever[t, 2]
            wr[0] += fx
            wr[1] += fy
            wr[2] += fz
            wr[3] += ly * fz - lz * fy
            wr[4] += lz * fx - lx * fz
            wr[5] += lx * fy - ly * fx
            for c in range(3):
                tab.point_force[t, c] = Rv[c, 0] * fx + Rv[c, 1] * fy + Rv[c, 2] * fz
            if rq.mode[t] == SLIDING and fz > 0.0:
                sticking = 0
        tab.sticking[i] = sticking
        tab.spin[i] = 0.0
        tab.released[i] = 0 if wr[2] > 0.0 else 1
        tab.impulse_taken[i] = 0
        tab.bounced[i] = 0
        if not sticking:
            ft = math.hypot(wr[0], wr[1])
            if ft > 0.0:
                tab.slip[i, 0] = -wr[0] / ft
                tab.slip[i, 1] = -wr[1] / ft
    _remember(d, tab, nc, nvert)
    return OK, 0, nc


@njit(cache=True)
def _contact_of(tab, nc, t) -> int:
    """The contact (row of tab) that vertex t belongs to."""
    for i in range(nc):
        if tab.point_start[i] <= t < tab.point_start[i] + tab.point_count[i]:
            return i
    return 0


@njit(cache=True)
def _remember(d, tab, nc, nvert) -> None:
    """The vertex memory for the next step: every vertex in contact (gap within the
    tolerance) with its reference point (a sliding one: its projection on the surface,
    Eq. 18), whether it slid, and its force (world axes)."""
    rq = d.relaxed
    det, dyn = d.detection, d.dyn
    tol = d.params.tolerance
    cur = rq.m_current[0]
    nxt = 1 - cur
    n = 0
    for i in range(nc):
        Rv = tab.R[i]
        body, other = tab.body[i], tab.other[i]
        st, cnt = tab.point_start[i], tab.point_count[i]
        for t in range(st, st + cnt):
            if t >= nvert or tab.gap[t] > tol:
                continue
            h = tab.hit[t]
            rq.m_key[nxt, n, 0] = body
            rq.m_key[nxt, n, 1] = other
            rq.m_key[nxt, n, 2] = tab.element[i]
            rq.m_key[nxt, n, 3] = det.idx[h]
            Rb = dyn.R[body]
            for c in range(3):
                rq.m_local[nxt, n, c] = Rb[0, c] * (rq.p[t, 0] - dyn.p[body, 0]) + \
                    Rb[1, c] * (rq.p[t, 1] - dyn.p[body, 1]) + Rb[2, c] * (rq.p[t, 2] - dyn.p[body, 2])
            sliding = rq.mode[t] == SLIDING and rq.x[3 * t] > 0.0
            rq.m_sliding[nxt, n] = 1 if sliding else 0
            gap = tab.gap[t]
            if sliding:  # Eq. 18: the projection of the vertex on the surface
                e0, e1, e2 = rq.p[t, 0] - gap * Rv[0, 2], rq.p[t, 1] - gap * Rv[1, 2], rq.p[t, 2] - gap * Rv[2, 2]
            else:
                e0, e1, e2 = rq.ref[t, 0], rq.ref[t, 1], rq.ref[t, 2]
            for c in range(3):
                rq.m_force[nxt, n, c] = tab.point_force[t, c]
            if other >= 0:  # in the other body's frame
                Ro = dyn.R[other]
                for c in range(3):
                    rq.m_ref[nxt, n, c] = Ro[0, c] * (e0 - dyn.p[other, 0]) + Ro[1, c] * (e1 - dyn.p[other, 1]) + \
                        Ro[2, c] * (e2 - dyn.p[other, 2])
            else:
                rq.m_ref[nxt, n, 0], rq.m_ref[nxt, n, 1], rq.m_ref[nxt, n, 2] = e0, e1, e2
            n += 1
    rq.m_count[nxt] = n
    rq.m_current[0] = nxt
