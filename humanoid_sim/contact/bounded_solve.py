"""The bounded solve: contact and limit forces that are valid by construction.

Seed 000 solves the constrained rows as equalities and checks the result (4.4-4.6); with
redundant contacts (a body lying flat, two feet and a knee down, a planar chain) the
matrix B = H A^-1 H^T of Eq. 21 is singular and, after the allowed rounds, the checks can
still fail. Seed 002 relaxes the same constraints into a regularised, bounded quadratic
programme (Eq. 9, 11). This module solves that relaxation over the virtual-link rows of
seed 000: with r = rhs - H base,

    min_λ  ½ λᵀ B λ - λᵀ r + ½ ε |λ - λ0|²      subject to  λ ∈ K,

and x = base + A^-1 Hᵀ λ. Without bounds and with ε = 0 its minimiser solves B λ = r, the
equality of Eq. 21, which is also the minimiser of Eq. 9's residual ‖B λ - r‖² (B symmetric
positive definite): the two differ only where the bounds act. This form is used because
projected Gauss-Seidel on it converges with the condition number of B, not of its square.
ε = ``reg`` × the mean diagonal of B is seed 002's λ: it makes every B well-posed. Its centre
λ0 is the first iterate, the caller's warm start (the previous step's forces of the same
rows; zeros for impulses and new rows): a proximal term. Centred on 0, as in seed 002, it
leaves every row short by ε λ, which a steady load makes permanent: a forearm pressed against
the torso crept into it at ε λ / kd, and a robot lying still never stopped creeping. Centred
on the last forces, the bias vanishes as the forces settle: the same rows at rest repeat the
same forces, exactly.

K is the product of one cone per block, the validity checks of seed 000 4.4-4.5 made
into bounds, so that every iterate passes them:
  ONE_SIDED  (a hard provider row):        λ >= 0.
  BOX        (joint friction):             |λ| <= bound.
  POINT      rows (f_z, f_x, f_y):         f_z >= 0, |f_t| <= μ f_z (Eq. 31); a contact
                                           already sliding along s: f_t . s <= 0 too.
  LINE       rows (f_z, n_y, f_x, f_y, n_z): f_z >= 0, p_v (Eq. 26) on the segment,
                                           |f_t| <= μ f_z, |n_z| <= μ f_z d (Eq. 33).
  SURFACE    rows (f_z, n_x, n_y, f_x, f_y, n_z): f_z >= 0, p_v inside the hull,
                                           |f_t| <= μ f_z, |n_z| <= μ f_z d.
Rows are in the virtual-link frame of each contact (z the normal), in the order of
``ActiveContact.components()`` for a sticking, non-spinning contact. Each sweep visits the
blocks in turn, the other blocks held. A line's or surface's normal rows (f_z and the moments
that place p_v) take their exact minimiser over the cone of the area's vertex forces, which
is what p_v inside the hull means (_area_normal_rows); the friction pair (f_x, f_y) takes its
exact minimiser over its disc of radius μ f_z, f_z held (_friction_pair), so that at the
disc's edge it opposes the rows' acceleration error; n_z takes its Gauss-Seidel update, and the
block is then projected: f_z kept, n_z clipped to its bound (p_v is already in the hull and
f_t in its disc, to rounding). (Row updates of the normal rows followed by a projection of p_v
onto the hull stall at points that are not minimisers wherever the hull binds: a body turning
fast onto the ground got no force at all.) With the friction bound following f_z (f_z held
while the friction takes its bound), the sweeps converge to Coulomb's answer, not to the least
of the objective over K, which presses harder to buy friction.

From the SUBSPACE_FIRST-th sweep on, the faces of the sets on which the sweeps have put the
blocks are solved exactly (_subspace_step): the sweeps alone move the forces of redundant
contacts along B's near-null space at the pace of ε, and converge slowly wherever B is badly
conditioned (a light link touching far from its centre of mass). A subspace solve holds the
direction of each friction on its bound (Coulomb's sliding) as it finds it; where that
direction is still turning, the sweeps turn it at a steady rate, one slow mode (ratios
0.96-0.97 per sweep in a humanoid's fall: a foot's friction angle halving every 20 sweeps,
100-200 sweeps to the tolerance). From the EXTRAPOLATE_AFTER-th sweep on, while some friction
lies on its bound, two successive changes of λ that are aligned and shrink by a steady ratio ρ
are extrapolated to their limit (Aitken's Δ²: λ + d ρ / (1 - ρ), _aitken), projected onto the
sets; the sweeps then go on from there and decide convergence as before. (Six solves of 100
sweeps or more captured in the bundled humanoid's passive fall: the five with a friction on
its bound went from 154, 169, 147, 157 and 200 (the cap) sweeps to 55, 63, 52, 51 and 161,
and each answer came closer to the one of a 1e-13 tolerance: at the cap 9.7e-4 of the largest
force away, now 8.3e-7.) A subspace solve on the faces of the last one that failed in the same
solve (none succeeded since) is not formed again: on the same faces it fails again, but for
the directions of the frictions on their bounds, which the sweeps turn slowly (the bundled
humanoid's passive fall: the solves of more than 30 sweeps tried 11.8 subspace solves each and
2.7 succeeded; its bounded steps 75.0-75.4 → 71.7-72.2 µs, the sweeps the same, 9.8 a solve).
The sweeps stop when no force
changes by more than ``tol`` relative to the largest one, or no row's acceleration
(B + ε I) λ by more than ``tol`` relative to the largest |r| (plus one), or after
``max_sweeps``. Each step starts from the
previous step's forces of the same contacts and rows (the caller's warm start). The result
is the best multiple α λ (0 <= α <= 1) of the last iterate, so that it is never worse than
no force; in the acceleration phase a converged iterate is returned as it is unless it does
worse than no force (bounded_solve_nb).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.kernels import cho_solve_vec, cholesky_into, lu_solve_into
from humanoid_sim.dynamics.mass_factor import add_rows_times_nb, back_project_nb, rows_gram_nb

__all__ = [
    "BLOCK_BOX",
    "BLOCK_LINE",
    "BLOCK_ONE_SIDED",
    "BLOCK_POINT",
    "BLOCK_SURFACE",
    "BOUNDED_REGULARISATION",
    "BOUNDED_SWEEPS",
    "BOUNDED_TOLERANCE",
    "BoundedRows",
    "BoundedWork",
    "bounded_solve_nb",
    "bounded_work",
    "regularised_product_nb",
]

BLOCK_ONE_SIDED, BLOCK_POINT, BLOCK_LINE, BLOCK_SURFACE, BLOCK_BOX = 0, 1, 2, 3, 4

BOUNDED_REGULARISATION = 1e-6  # ε / mean diag(B) of seed 002 Eq. 9, 11
BOUNDED_SWEEPS = 200  # Gauss-Seidel sweeps at most
BOUNDED_TOLERANCE = 1e-8  # largest change in a sweep, of a force or of a row's acceleration, relative, to stop
SUBSPACE_FIRST = 4  # sweeps before the first subspace minimisation
SUBSPACE_EVERY_SWEEP = 10  # subspace minimisations after as many sweeps in a row, then after 2^n sweeps
RELAXATION_MIN = 0.125  # the smallest under-relaxation of the blocks' updates (halved from 1 while sweeps diverge)
RELAXATION_AFTER = SUBSPACE_FIRST + SUBSPACE_EVERY_SWEEP  # sweeps undamped first (the subspace solves' series)
RELAXATION_STALL = 5  # sweeps without a smaller change, turning back on themselves, before ω is halved
EXTRAPOLATE_AFTER = SUBSPACE_FIRST + SUBSPACE_EVERY_SWEEP  # sweeps before the first extrapolation (_aitken)
EXTRAPOLATE_ALIGNED = 0.999  # cosine between two successive sweeps' changes for one mode to dominate


class BoundedRows(NamedTuple):
    """The rows of one bounded solve (k rows in nb blocks).

    H: constrained rows (k, nv); rhs: their desired values (k,) (accelerations [m/s^2,
    rad/s^2] or, for impulses, velocities [m/s, rad/s]).
    block_start (nb + 1,): first row of each block; block_kind (nb,): BLOCK_* above.
    mu (nb,): friction coefficient of a contact block; arm (nb,): torsion arm d [m];
    bound (nb,): |λ| bound of a BOX block [N m or N].
    hull_xy (h, 2): each contact's hull in its virtual-link frame [m] (ccw for a surface,
    the two ends for a line); hull_start (nb + 1,): each block's first hull row.
    slip (nb, 2): a contact sliding at the start of the phase: its unit sliding direction s
    in the virtual-link x, y (zeros: not sliding). Its friction lies in the half of its disc
    that does not push along s (f_t . s <= 0, |f_t| <= μ f_z): it never does positive work
    on the sliding, and it holds the point across it as a sticking contact's does. (Held on
    the ray -s, the friction could not hold it across: the corner of a lying g1's foot,
    sliding a few mm/s, was pushed across its sliding on every step, kept sliding that way,
    and crept along the ground at 6 mm/s under 0.5-0.7 f_z of friction with μ_s = 1.)
    """

    H: np.ndarray
    rhs: np.ndarray
    block_start: np.ndarray
    block_kind: np.ndarray
    mu: np.ndarray
    arm: np.ndarray
    bound: np.ndarray
    hull_xy: np.ndarray
    hull_start: np.ndarray
    slip: np.ndarray


class SubspaceWork(NamedTuple):
    """Scratch of the subspace solve (_subspace_step) of up to k rows (part of a BoundedWork:
    allocated once, not per solve)."""

    V: np.ndarray  # (k, k): the faces' basis, λ = V μ
    W: np.ndarray  # (k, k): V without the friction's ties (the rows whose equations hold)
    Q: np.ndarray  # (k, k): Wᵀ (B + ε I) V
    y: np.ndarray  # (k,): Wᵀ r, then μ
    target: np.ndarray  # (k,): V μ
    lo: np.ndarray  # (k,) int64: each column's first row
    hi: np.ndarray  # (k,) int64: one past each column's last row
    failed: np.ndarray  # (k + 1,) int64: the faces of the last solve that failed (m, then each column's rows)
    failed_sum: np.ndarray  # (k,): and Σ_a (a + 1) W[a, c] of each column (which edge or vertex; not the ties)


class BoundedWork(NamedTuple):
    """Scratch of bounded_solve_nb for up to K rows over nv dofs and areas of up to h hull
    vertices (bounded_work: allocated once, not per solve).

    ZT (nv K,): L^-T Hᵀ (M = Lᵀ L), used as (nv, k); B (K K,): H A^-1 Hᵀ, used as (k, k); r, w, w_old,
    dw (K,): the right side, (B + ε I) λ, its value at the start of a sweep and its change over
    the last sweep; old, pre (6,):
    a block's forces before its sweep and before its projection; G (3, h), P (3, 3), c (9,):
    _area_normal_rows's scratch; subspace: _subspace_step's, for K rows; last, step (K,): λ at
    the end of the last sweep and its change over the one before (_aitken)."""

    ZT: np.ndarray
    B: np.ndarray
    r: np.ndarray
    w: np.ndarray
    w_old: np.ndarray
    dw: np.ndarray
    old: np.ndarray
    pre: np.ndarray
    G: np.ndarray
    P: np.ndarray
    c: np.ndarray
    subspace: SubspaceWork
    last: np.ndarray
    step: np.ndarray


def bounded_work(rows: int, nv: int, hull: int) -> BoundedWork:
    """A BoundedWork for up to ``rows`` rows over nv dofs and hulls of up to ``hull`` vertices."""
    K, h = max(rows, 1), max(hull, 2)
    subspace = SubspaceWork(np.zeros((K, K)), np.zeros((K, K)), np.zeros((K, K)), np.zeros(K), np.zeros(K),
                            np.zeros(K, np.int64), np.zeros(K, np.int64), np.zeros(K + 1, np.int64),
                            np.zeros(K))  # fmt: skip
    return BoundedWork(np.zeros(nv * K), np.zeros(K * K), np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K),
                       np.zeros(6), np.zeros(6), np.zeros((3, h)), np.zeros((3, 3)), np.zeros(9), subspace, np.zeros(K),
                       np.zeros(K))  # fmt: skip


@njit(cache=True)
def _nearest_in_polygon(px, py, poly):
    """(px, py) if inside the ccw polygon (k >= 3, 2), else the nearest boundary point."""
    k = poly.shape[0]
    inside = True
    best = 1e300
    bx, by = px, py
    for i in range(k):
        j = (i + 1) % k
        ax, ay = poly[i, 0], poly[i, 1]
        ex, ey = poly[j, 0] - ax, poly[j, 1] - ay
        if ex * (py - ay) - ey * (px - ax) < 0.0:
            inside = False
        ee = ex * ex + ey * ey
        t = 0.0 if ee == 0.0 else ((px - ax) * ex + (py - ay) * ey) / ee
        t = min(1.0, max(0.0, t))
        cx, cy = ax + t * ex, ay + t * ey
        d = (cx - px) * (cx - px) + (cy - py) * (cy - py)
        if d < best:
            best = d
            bx, by = cx, cy
    if inside:
        return px, py
    return bx, by


@njit(cache=True)
def _project_block(kind, lam, s, mu, arm, bound, hull, sx, sy):
    """Project the forces lam[s:...] of one block onto its cone (module docstring)."""
    if kind == BLOCK_ONE_SIDED:
        if lam[s] < 0.0:
            lam[s] = 0.0
        return
    if kind == BLOCK_BOX:
        lam[s] = min(bound, max(-bound, lam[s]))
        return
    # contact blocks: f_z first, then the moments that place p_v, then f_x, f_y (, n_z)
    if kind == BLOCK_POINT:
        nrow, ft = 3, s + 1
    elif kind == BLOCK_LINE:
        nrow, ft = 5, s + 2
    else:
        nrow, ft = 6, s + 3
    fz = lam[s]
    if fz <= 0.0:
        for r in range(s, s + nrow):
            lam[r] = 0.0
        return
    if kind == BLOCK_LINE:  # p_v x = -n_y / f_z on the segment
        x0, x1 = hull[0, 0], hull[hull.shape[0] - 1, 0]
        lo, hi = min(x0, x1), max(x0, x1)
        px = min(hi, max(lo, -lam[s + 1] / fz))
        lam[s + 1] = -px * fz
    elif kind == BLOCK_SURFACE:  # p_v = (-n_y / f_z, n_x / f_z) inside the hull (Eq. 26)
        px, py = _nearest_in_polygon(-lam[s + 2] / fz, lam[s + 1] / fz, hull)
        lam[s + 1] = py * fz
        lam[s + 2] = -px * fz
    cap = mu * fz
    along = lam[ft] * sx + lam[ft + 1] * sy
    if along > 0.0:  # sliding along s: friction never along the sliding (onto the half-disc's diameter)
        lam[ft] -= along * sx
        lam[ft + 1] -= along * sy
    t = math.sqrt(lam[ft] * lam[ft] + lam[ft + 1] * lam[ft + 1])
    if t > cap:
        scale = cap / t
        lam[ft] *= scale
        lam[ft + 1] *= scale
    if kind != BLOCK_POINT:
        cap_z = mu * arm * fz
        lam[ft + 2] = min(cap_z, max(-cap_z, lam[ft + 2]))


@njit(cache=True)
def _area_normal_rows(kind, s, hull, B, eps, r, w, lam, G, P, c) -> None:
    """The exact minimiser over the normal rows of one line or surface block, the other rows
    held: (f_z, n_x, n_y) of a surface (f_z, n_y of a line). With p_v inside the hull (Eq. 26)
    these forces form the cone of the vertices' unit normal forces g_v = (1, y_v, -x_v)
    (a line's: (1, -x_v)); the least of ½ λᵀ P λ - λᵀ c over it (P: the rows' block of
    B + ε I, c: their r less the other rows' share of w) is the unconstrained one when that
    lies in the cone, else the least of the minimisers over each edge's face (two adjacent
    generators, both weights >= 0), each single generator, and zero. (Row updates followed by
    a projection of p_v onto the hull stall at points that are not minimisers where the hull
    binds, as when a body turns fast onto the ground.) G (3, h), P (3, 3), c (9,): scratch;
    updates lam and w."""
    nn = 2 if kind == BLOCK_LINE else 3
    h = 2 if kind == BLOCK_LINE else hull.shape[0]
    for v in range(h):
        e = v if (kind != BLOCK_LINE or v == 0) else hull.shape[0] - 1
        G[0, v] = 1.0
        if kind == BLOCK_LINE:  # rows f_z, n_y: n_y = -x f_z
            G[1, v] = -hull[e, 0]
        else:  # rows f_z, n_x, n_y: n_x = y f_z, n_y = -x f_z
            G[1, v] = hull[e, 1]
            G[2, v] = -hull[e, 0]
    for a in range(nn):
        t = r[s + a] - w[s + a]
        for b in range(nn):
            P[a, b] = B[s + a, s + b] + (eps if a == b else 0.0)
            t += P[a, b] * lam[s + b]
        c[a] = t
    best = c[3:6]  # the least so far: zero force (objective 0)
    best[:] = 0.0
    best_f = 0.0
    trial = c[6:9]
    trial[:] = 0.0
    # the unconstrained minimiser P^-1 c: the answer when it lies in the cone
    if nn == 2:
        det = P[0, 0] * P[1, 1] - P[0, 1] * P[1, 0]
        if det > 0.0:
            trial[0] = (P[1, 1] * c[0] - P[0, 1] * c[1]) / det
            trial[1] = (P[0, 0] * c[1] - P[1, 0] * c[0]) / det
            trial[2] = 0.0
    else:
        _solve3(P, c, trial)
    if _in_area_cone(kind, trial, hull):
        h = 0  # no face to try
        if _half_quadratic(P, c, trial, nn) < best_f:
            for a in range(3):
                best[a] = trial[a]
    # each edge's face (a surface's; a line has one, the unconstrained one above) and each generator
    for u in range(h):
        guc, guu = 0.0, 0.0
        for a in range(nn):
            pg = 0.0
            for b in range(nn):
                pg += P[a, b] * G[b, u]
            guu += G[a, u] * pg
            guc += G[a, u] * c[a]
        if guu > 0.0 and guc > 0.0:
            t = guc / guu
            f = -0.5 * guc * t
            if f < best_f:
                best_f = f
                for a in range(3):
                    best[a] = t * G[a, u]
        if kind == BLOCK_SURFACE and h >= 3:
            v = (u + 1) % h
            gvv, guv, gvc = 0.0, 0.0, 0.0
            for a in range(nn):
                pv_, pu_ = 0.0, 0.0
                for b in range(nn):
                    pv_ += P[a, b] * G[b, v]
                    pu_ += P[a, b] * G[b, u]
                gvv += G[a, v] * pv_
                guv += G[a, v] * pu_
                gvc += G[a, v] * c[a]
            det = guu * gvv - guv * guv
            if det > 1e-300:
                wu = (gvv * guc - guv * gvc) / det
                wv = (guu * gvc - guv * guc) / det
                if wu >= 0.0 and wv >= 0.0:
                    f = -0.5 * (wu * guc + wv * gvc)
                    if f < best_f:
                        best_f = f
                        for a in range(3):
                            best[a] = wu * G[a, u] + wv * G[a, v]
    for a in range(nn):
        delta = best[a] - lam[s + a]
        if delta != 0.0:
            lam[s + a] = best[a]
            for k in range(w.shape[0]):  # B's row, not its column: B is symmetric, rows are contiguous
                w[k] += B[s + a, k] * delta
            w[s + a] += eps * delta


@njit(cache=True)
def _solve3(P, c, out) -> None:
    """out = P^-1 c for a 3 x 3 P by its adjugate (zeros when P is not positive definite)."""
    a00 = P[1, 1] * P[2, 2] - P[1, 2] * P[2, 1]
    a01 = P[0, 2] * P[2, 1] - P[0, 1] * P[2, 2]
    a02 = P[0, 1] * P[1, 2] - P[0, 2] * P[1, 1]
    a10 = P[1, 2] * P[2, 0] - P[1, 0] * P[2, 2]
    a11 = P[0, 0] * P[2, 2] - P[0, 2] * P[2, 0]
    a12 = P[0, 2] * P[1, 0] - P[0, 0] * P[1, 2]
    a20 = P[1, 0] * P[2, 1] - P[1, 1] * P[2, 0]
    a21 = P[0, 1] * P[2, 0] - P[0, 0] * P[2, 1]
    a22 = P[0, 0] * P[1, 1] - P[0, 1] * P[1, 0]
    d = P[0, 0] * a00 + P[0, 1] * a10 + P[0, 2] * a20
    if not d > 0.0:
        out[0] = out[1] = out[2] = 0.0
        return
    out[0] = (a00 * c[0] + a01 * c[1] + a02 * c[2]) / d
    out[1] = (a10 * c[0] + a11 * c[1] + a12 * c[2]) / d
    out[2] = (a20 * c[0] + a21 * c[1] + a22 * c[2]) / d


@njit(cache=True)
def _half_quadratic(P, c, x, n) -> float:
    """½ xᵀ P x - xᵀ c over the first n entries."""
    f = 0.0
    for a in range(n):
        t = 0.0
        for b in range(n):
            t += P[a, b] * x[b]
        f += x[a] * (0.5 * t - c[a])
    return f


@njit(cache=True)
def _in_area_cone(kind, x, hull) -> bool:
    """Whether the normal forces x (f_z, n_y of a line; f_z, n_x, n_y of a surface) have f_z > 0
    and p_v inside the hull (a line's: between its ends)."""
    fz = x[0]
    if not fz > 0.0:
        return False
    if kind == BLOCK_LINE:
        px = -x[1] / fz
        x0, x1 = hull[0, 0], hull[hull.shape[0] - 1, 0]
        return min(x0, x1) <= px <= max(x0, x1)
    px, py = -x[2] / fz, x[1] / fz
    qx, qy = _nearest_in_polygon(px, py, hull)
    return qx == px and qy == py


@njit(cache=True)
def _friction_rows(kind, s0):
    """The first friction row of a contact block (f_x, f_y, then n_z for a line or surface)."""
    return s0 + (1 if kind == BLOCK_POINT else (2 if kind == BLOCK_LINE else 3))


@njit(cache=True)
def _friction_pair(B, eps, r, w, lam, ft, cap, sx, sy, k) -> None:
    """A contact block's friction rows ft, ft + 1 at their exact minimiser, the block's other
    rows and every other block held: min ½ xᵀ P x - cᵀ x over |x| <= cap (and x . s <= 0 for
    a contact sliding along s), P = B_tt + ε I their 2 x 2 block, c their right side less the
    other rows' share of w. Updates lam and w = (B + ε I) lam. At the disc's edge P x - c =
    -γ x (γ >= 0): the friction opposes the rows' acceleration error, Coulomb's maximal
    dissipation. (Each row's Gauss-Seidel update, then f_t scaled onto the disc, opposes that
    error only where P is a multiple of I: a g1 foot's corner, light and far from the ankle,
    took friction at μ f_z across its error, and the friction drove the point along itself to
    3 m/s within the step: 0.3 J of work.) On the diameter of a sliding contact's half-disc
    the minimiser is the one along it, within the disc."""
    f0, f1 = ft, ft + 1
    p00 = B[f0, f0] + eps
    p01 = B[f0, f1]
    p11 = B[f1, f1] + eps
    det = p00 * p11 - p01 * p01
    if not (det > 0.0 and p00 > 0.0):
        return
    x0, x1 = lam[f0], lam[f1]
    c0 = r[f0] - w[f0] + p00 * x0 + p01 * x1
    c1 = r[f1] - w[f1] + p01 * x0 + p11 * x1
    y0 = (p11 * c0 - p01 * c1) / det
    y1 = (p00 * c1 - p01 * c0) / det
    if not cap > 0.0:
        y0, y1 = 0.0, 0.0
    elif y0 * y0 + y1 * y1 > cap * cap:
        # the disc's edge: (P + γ I) y = c with |y| = cap, Newton on 1/|y(γ)| - 1/cap (increasing
        # and nearly linear in γ: from γ = 0 it converges from below in a few steps)
        g = 0.0
        for _ in range(50):
            a00, a11 = p00 + g, p11 + g
            dg = a00 * a11 - p01 * p01
            y0 = (a11 * c0 - p01 * c1) / dg
            y1 = (a00 * c1 - p01 * c0) / dg
            n2 = y0 * y0 + y1 * y1
            n = math.sqrt(n2)
            if abs(n - cap) <= 1e-12 * cap:
                break
            z0 = (a11 * y0 - p01 * y1) / dg  # (P + γ I)^-1 y
            z1 = (a00 * y1 - p01 * y0) / dg
            slope = (y0 * z0 + y1 * z1) / (n2 * n)
            if not slope > 0.0:
                break
            g -= (1.0 / n - 1.0 / cap) / slope
        n = math.sqrt(y0 * y0 + y1 * y1)
        if n > 0.0:
            y0 *= cap / n
            y1 *= cap / n
    if (sx != 0.0 or sy != 0.0) and y0 * sx + y1 * sy > 0.0:  # on the half-disc's diameter
        u0, u1 = -sy, sx
        t = (u0 * c0 + u1 * c1) / (u0 * (p00 * u0 + p01 * u1) + u1 * (p01 * u0 + p11 * u1))
        t = min(cap, max(-cap, t)) if cap > 0.0 else 0.0
        y0, y1 = t * u0, t * u1
    d0, d1 = y0 - x0, y1 - x1
    if d0 == 0.0 and d1 == 0.0:
        return
    lam[f0] = y0
    lam[f1] = y1
    for a in range(k):
        w[a] += B[f0, a] * d0 + B[f1, a] * d1
    w[f0] += eps * d0
    w[f1] += eps * d1


@njit(cache=True)
def _face_columns(rows, blk, lam, V, W, c0, tol) -> int:
    """Columns c0.. (at most six) of V (k, m), zero in the block's rows on entry: a basis of
    the face of block blk's set on which its forces lam lie, so that the forces on that face
    are V μ (and none of the block's rows is free when it has no force); entries in the
    block's rows only. W the same columns without the ties below (the rows whose
    equations hold on the face: Coulomb's, where friction is tied to f_z, are the normal
    rows' alone, as Ĥ of seed 000 Eq. 36). Returns the number of columns.

    One-sided and box rows: free inside their bounds, held at them. A contact: none when
    f_z = 0; else its normal rows are free where p_v lies inside the area, the two vertex
    generators g = (1, y, -x) (a line's (1, -x)) of the edge p_v lies on, or the one of its
    vertex; its friction free inside its bound or, at the bound, tied to f_z along its present
    direction (f_t = μ f_z u, Coulomb's sliding); a sliding contact's on the diameter of its
    half-disc free across its sliding only; its torsion free inside its bound or tied to f_z
    at it (n_z = ±μ d f_z). The ties enter every column that carries f_z."""
    kind = rows.block_kind[blk]
    s0 = rows.block_start[blk]
    if kind == BLOCK_ONE_SIDED or kind == BLOCK_BOX:
        free = lam[s0] > 0.0 if kind == BLOCK_ONE_SIDED else abs(lam[s0]) < rows.bound[blk] * (1.0 - tol)
        if free:
            V[s0, c0] = W[s0, c0] = 1.0
            return 1
        return 0
    fz = lam[s0]
    if not fz > 0.0:
        return 0
    mu, arm = rows.mu[blk], rows.arm[blk]
    ft = _friction_rows(kind, s0)
    sx, sy = rows.slip[blk, 0], rows.slip[blk, 1]
    tie0, tie1, tie2 = 0.0, 0.0, 0.0  # d(f_x, f_y, n_z) / d f_z on a bound
    free_friction = 0
    t = math.sqrt(lam[ft] * lam[ft] + lam[ft + 1] * lam[ft + 1])
    if t > 0.0 and t >= mu * fz * (1.0 - tol):  # on the arc (or a corner of a half-disc)
        tie0, tie1 = mu * lam[ft] / t, mu * lam[ft + 1] / t
    elif (sx != 0.0 or sy != 0.0) and lam[ft] * sx + lam[ft + 1] * sy >= -tol * mu * fz:
        free_friction = 1  # on a sliding contact's diameter: free across the sliding only
    else:
        free_friction = 2
    free_torsion = False
    if kind != BLOCK_POINT:
        cap = mu * arm * fz
        if cap > 0.0 and abs(lam[ft + 2]) >= cap * (1.0 - tol):
            tie2 = mu * arm if lam[ft + 2] > 0.0 else -mu * arm
        else:
            free_torsion = cap > 0.0
    # the normal rows' columns: (f_z entry, area entries), each with the ties
    m = 0
    h0, h1 = rows.hull_start[blk], rows.hull_start[blk + 1]
    hull = rows.hull_xy[h0:h1]
    if kind == BLOCK_POINT:
        V[s0, c0] = 1.0
        m = 1
    elif kind == BLOCK_LINE:
        x0, x1 = hull[0, 0], hull[hull.shape[0] - 1, 0]
        px = -lam[s0 + 1] / fz
        near = tol * max(1e-12, abs(x1 - x0))
        if abs(px - x0) <= near or abs(px - x1) <= near:  # at an end: its generator (1, -x)
            V[s0, c0] = 1.0
            V[s0 + 1, c0] = -(x0 if abs(px - x0) <= abs(px - x1) else x1)
            m = 1
        else:
            V[s0, c0] = 1.0
            V[s0 + 1, c0 + 1] = 1.0
            m = 2
    else:
        px, py = -lam[s0 + 2] / fz, lam[s0 + 1] / fz
        h = hull.shape[0]
        size = 0.0
        for v in range(h):
            size = max(size, abs(hull[v, 0]), abs(hull[v, 1]))
        on = -1  # the edge p_v lies on, if any
        on2 = -1
        for i in range(h):
            j = (i + 1) % h
            ex, ey = hull[j, 0] - hull[i, 0], hull[j, 1] - hull[i, 1]
            n = math.sqrt(ex * ex + ey * ey)
            if n == 0.0:
                continue
            dist = (ex * (py - hull[i, 1]) - ey * (px - hull[i, 0])) / n  # >= 0 inside (ccw)
            if dist <= tol * max(1e-12, size):
                if on < 0:
                    on = i
                else:
                    on2 = i
        if on < 0:  # inside: f_z, n_x, n_y free
            V[s0, c0] = 1.0
            V[s0 + 1, c0 + 1] = 1.0
            V[s0 + 2, c0 + 2] = 1.0
            m = 3
        else:
            verts = (on, (on + 1) % h)
            if on2 >= 0:  # two edges: their common vertex
                verts = ((on + 1) % h, (on + 1) % h) if (on + 1) % h == on2 else (on, on)
            count = 1 if verts[0] == verts[1] else 2
            for c in range(count):
                v = verts[c]
                V[s0, c0 + c] = 1.0
                V[s0 + 1, c0 + c] = hull[v, 1]
                V[s0 + 2, c0 + c] = -hull[v, 0]
            m = count
    for c in range(c0, c0 + m):  # W: the normal rows' columns without the ties
        for a in range(s0, ft):
            W[a, c] = V[a, c]
    for c in range(c0, c0 + m):  # the ties ride on f_z
        V[ft, c] = tie0 * V[s0, c]
        V[ft + 1, c] = tie1 * V[s0, c]
        if kind != BLOCK_POINT:
            V[ft + 2, c] = tie2 * V[s0, c]
    if free_friction == 2:
        V[ft, c0 + m] = W[ft, c0 + m] = 1.0
        V[ft + 1, c0 + m + 1] = W[ft + 1, c0 + m + 1] = 1.0
        m += 2
    elif free_friction == 1:
        V[ft, c0 + m] = W[ft, c0 + m] = -sy
        V[ft + 1, c0 + m] = W[ft + 1, c0 + m] = sx
        m += 1
    if free_torsion:
        V[ft + 2, c0 + m] = W[ft + 2, c0 + m] = 1.0
        m += 1
    return m


@njit(cache=True)
def _in_set(rows, blk, lam, tol) -> bool:
    """Whether block blk's forces lam lie in its set (module docstring), to tol relative."""
    kind = rows.block_kind[blk]
    s0 = rows.block_start[blk]
    if kind == BLOCK_ONE_SIDED:
        return lam[s0] >= 0.0
    if kind == BLOCK_BOX:
        return abs(lam[s0]) <= rows.bound[blk] * (1.0 + tol)
    fz = lam[s0]
    ft = _friction_rows(kind, s0)
    n = (3 if kind == BLOCK_POINT else (5 if kind == BLOCK_LINE else 6))
    if not fz > 0.0:
        scale = 0.0
        for a in range(s0, s0 + n):
            scale = max(scale, abs(lam[a]))
        return scale == 0.0
    mu, arm = rows.mu[blk], rows.arm[blk]
    slack = tol * fz
    sx, sy = rows.slip[blk, 0], rows.slip[blk, 1]
    if lam[ft] * sx + lam[ft + 1] * sy > slack or math.sqrt(lam[ft] ** 2 + lam[ft + 1] ** 2) > mu * fz + slack:
        return False
    h0, h1 = rows.hull_start[blk], rows.hull_start[blk + 1]
    hull = rows.hull_xy[h0:h1]
    if kind == BLOCK_LINE:
        x0, x1 = hull[0, 0], hull[hull.shape[0] - 1, 0]
        px = -lam[s0 + 1] / fz
        span = tol * max(1e-12, abs(x1 - x0))
        if px < min(x0, x1) - span or px > max(x0, x1) + span:
            return False
    elif kind == BLOCK_SURFACE:
        px, py = -lam[s0 + 2] / fz, lam[s0 + 1] / fz
        qx, qy = _nearest_in_polygon(px, py, hull)
        size = 0.0
        for v in range(hull.shape[0]):
            size = max(size, abs(hull[v, 0]), abs(hull[v, 1]))
        if math.hypot(qx - px, qy - py) > tol * max(1e-12, size):
            return False
    if kind != BLOCK_POINT and abs(lam[ft + 2]) > mu * arm * fz + slack:
        return False
    return True


@njit(cache=True)
def _solve_faces(Q, x, m, symmetric, L, y) -> bool:
    """Q[:m, :m] μ = x[:m], μ into x[:m]: by Cholesky when ``symmetric`` (Q = Vᵀ (B + ε I) V:
    half the work of LU) and Q is positive definite to rounding, else by LU (Q overwritten).
    L (m, m), y (m,): scratch. False when Q is singular."""
    if symmetric:
        Qm = Q[:m, :m]
        if cholesky_into(Qm.T, L[:m, :m]):  # from Q's upper triangle, the one formed first
            cho_solve_vec(L[:m, :m], x[:m], y[:m])
            x[:m] = y[:m]
            return True
    return lu_solve_into(Q, x, m)[0] != 0.0


@njit(cache=True)
def _subspace_step(rows, B, eps, r, lam, w, sw, tol) -> bool:
    """One subspace solve: the forces λ = V μ on the faces on which the blocks' forces lam lie
    (_face_columns) whose rows' equations hold there, Wᵀ ((B + ε I) V μ - r) = 0, solved
    exactly (B's near-null space included), taken when they lie in the sets (then returns True
    and updates lam and w = (B + ε I) lam); else lam is kept for the sweeps, which find the
    faces again. Faces equal to those of the last solve that failed (sw.failed, -1 after one
    that succeeded; bounded_solve_nb clears it) are not solved again: False. With no friction
    at a bound W = V and this is the least of the objective on
    the faces; with friction tied to f_z (Coulomb's sliding) the normal rows hold and the
    friction rides on f_z, the fixed point the sweeps converge to (the least of the objective
    would press harder to buy friction). A column of V or W has entries in its block's rows
    only (at most six), so Wᵀ B V costs the product of the columns' row counts per entry,
    not a pass over B or the dofs. sw: SubspaceWork of at least k rows. (Projected
    Gauss-Seidel alone moves the forces of redundant contacts along B's near-null space at
    the pace of ε: 200 sweeps left a robot lying on ten contacts with its support 25 % off
    its weight.)"""
    V, W, Q, x, target, lo, hi = sw.V, sw.W, sw.Q, sw.y, sw.target, sw.lo, sw.hi
    k = lam.shape[0]
    nb = rows.block_kind.shape[0]
    start = rows.block_start
    m = 0
    for blk in range(nb):
        # a block's columns (at most six) have entries in its rows only: only those are cleared and read
        s0, s1 = start[blk], start[blk + 1]
        for a in range(s0, s1):
            for c in range(m, min(m + 6, k)):
                V[a, c] = 0.0
                W[a, c] = 0.0
        n = _face_columns(rows, blk, lam, V, W, m, tol)
        for c in range(m, m + n):  # each column's rows with an entry
            lo[c], hi[c] = s1, s0
            for a in range(s0, s1):
                if V[a, c] != 0.0 or W[a, c] != 0.0:
                    lo[c] = min(lo[c], a)
                    hi[c] = a + 1
        m += n
    if m == 0:
        return False
    # the faces of the last solve that failed, -1 after one succeeded (module docstring): each
    # column's rows and its entries without the ties (two edges of one area span the same rows;
    # a tie's direction turns with its friction, and is not a face of its own)
    failed, failed_sum = sw.failed, sw.failed_sum
    repeat = failed[0] == m
    for c in range(m):
        t = 0.0
        for a in range(lo[c], hi[c]):
            t += (a + 1) * W[a, c]
        key = lo[c] * (k + 1) + hi[c]
        repeat = repeat and failed[c + 1] == key and failed_sum[c] == t
        failed[c + 1] = key
        failed_sum[c] = t
    if repeat:
        return False
    failed[0] = m
    symmetric = True  # W = V (no friction tied to f_z): Q is symmetric positive definite
    for c in range(m):
        t = 0.0
        for a in range(lo[c], hi[c]):
            t += W[a, c] * r[a]
            symmetric &= W[a, c] == V[a, c]
        x[c] = t
        unit = hi[c] - lo[c] == 1 and W[lo[c], c] == 1.0  # W's column c is a row's unit vector
        for d in range(m):  # Q[c, d] = W[:, c]ᵀ (B + ε I) V[:, d] over the two columns' rows
            if unit and hi[d] - lo[d] == 1 and V[lo[d], d] == 1.0:  # two unit vectors (a free row's
                # columns, most of them): B's entry, plus ε on the diagonal, as the sums below give it
                Q[c, d] = B[lo[c], lo[d]] + eps if lo[c] == lo[d] else B[lo[c], lo[d]]
                continue
            t = 0.0
            for a in range(lo[c], hi[c]):
                wa = W[a, c]
                if wa == 0.0:
                    continue
                u = 0.0
                for b in range(lo[d], hi[d]):
                    u += B[a, b] * V[b, d]
                if lo[d] <= a < hi[d]:
                    u += eps * V[a, d]
                t += wa * u
            Q[c, d] = t
    if not _solve_faces(Q, x, m, symmetric, W, target):  # W is free once Q is formed
        return False
    for a in range(k):
        target[a] = 0.0
    for c in range(m):
        for a in range(lo[c], hi[c]):
            target[a] += V[a, c] * x[c]
    for blk in range(nb):
        if not _in_set(rows, blk, target, 1e-9):
            return False
    failed[0] = -1
    for a in range(k):
        lam[a] = target[a]
    regularised_product_nb(B, eps, lam, r, w, k)
    return True


@njit(cache=True)
def _friction_on_bound(rows, lam) -> bool:
    """Whether some contact block's friction lam lies on its bound |f_t| = μ f_z (f_z > 0), to
    1e-9 relative: a sliding contact, whose friction's direction the sweeps may still be turning."""
    for blk in range(rows.block_kind.shape[0]):
        kind = rows.block_kind[blk]
        if kind == BLOCK_ONE_SIDED or kind == BLOCK_BOX:
            continue
        s0 = rows.block_start[blk]
        ft = _friction_rows(kind, s0)
        fz = lam[s0]
        if fz > 0.0 and math.sqrt(lam[ft] ** 2 + lam[ft + 1] ** 2) >= rows.mu[blk] * fz * (1.0 - 1e-9):
            return True
    return False


@njit(cache=True, inline="always")
def _aitken(lam, last, step, k, rho_last, sliding):
    """Aitken's Δ² on the sweeps: d = λ - last, the change over the last sweep, against the
    one before (step). Where both are aligned (cosine above EXTRAPOLATE_ALIGNED) and shrink by a
    steady ratio ρ (0.3 < ρ < 0.999, within 1 % of 1 - ρ of the last sweep's) while some
    friction lies on its bound (``sliding``), one slow mode dominates the sweeps, the turning
    of that friction, and their limit λ + d ρ / (1 - ρ) is taken at once (module docstring).
    Without a friction on its bound the slow mode is the drift of redundant contacts' forces
    along B's near-null space, which the warm starts of the next steps go on converging:
    extrapolated too, talos lying after its collapse kept 1.6e-3 J of kinetic energy over its
    last second (2.9e-30 J with it left alone). Returns (ρ, 0.0
    after a jump; whether λ jumped); last and step follow λ (step zeroed after a jump: the
    next needs two more sweeps)."""
    dd = pp = nn = 0.0
    for a in range(k):
        d = lam[a] - last[a]
        dd += d * step[a]
        pp += step[a] * step[a]
        nn += d * d
    rho = dd / pp if pp > 0.0 else 0.0
    jump = (sliding and pp > 0.0 and nn > 0.0 and dd > EXTRAPOLATE_ALIGNED * math.sqrt(pp * nn) and 0.3 < rho < 0.999
            and abs(rho - rho_last) < 0.01 * (1.0 - rho))  # fmt: skip
    f = rho / (1.0 - rho) if jump else 0.0
    for a in range(k):
        d = lam[a] - last[a]
        lam[a] += f * d
        step[a] = 0.0 if jump else d
        last[a] = lam[a]
    return (0.0 if jump else rho), jump


@njit(cache=True)
def regularised_product_nb(B, eps, x, r, w, m) -> float:
    """w[:m] = (B + ε I) x over the first m rows and columns (a projected Gauss-Seidel
    solver's running product, then updated row by row); returns max |r[:m]|, the scale of
    its stopping test. Each row's sum starts from ε x[a] (add_rows_times_nb)."""
    r_max = 0.0
    for a in range(m):
        w[a] = eps * x[a]
        r_max = max(r_max, abs(r[a]))
    add_rows_times_nb(B, x, m, m, w)
    return r_max


@njit(cache=True)
def bounded_solve_nb(rows, L, parent, base, reg, max_sweeps, tol, x, lam, work, converged_as_is=False,
                     gram_ready=False) -> int:
    """Solve the bounded, regularised problem of the module docstring.

    rows: BoundedRows; L (nv, nv), parent (nv,): the tree factor A = Lᵀ L of the joint-space
    inertia and its coordinates' parents (dynamics/mass_factor.py);
    base: the unconstrained solution (nv,) (A^-1 (τ - b), or the pre-impact velocity).
    lam (k,): on entry the first iterate and the centre λ0 of the regularisation (zeros, or
    the previous step's forces of the same rows: a warm start; the problem is strictly convex,
    and the start moves its minimiser by O(ε) only, towards itself); on return λ (row forces,
    or impulses). work: BoundedWork of at least k rows and the largest hull of rows.
    converged_as_is: return a converged iterate as it is unless it does worse than no force
    (accelerations); False: always the best multiple of the iterate (impulses: the most the
    iterate's direction takes out of the kinetic energy).
    gram_ready: work.ZT and work.B already hold L^-T Hᵀ and B = H A^-1 Hᵀ of rows.H at this L
    (a caller that formed them for the same rows: the checked solve's Schur complement, or an
    earlier bounded solve of the same rows); else they are formed here.
    Writes x (nv,). Returns the sweeps done.
    """
    H = rows.H
    k, nv = H.shape
    for i in range(nv):
        x[i] = base[i]
    if k == 0:
        return 0
    ZT = work.ZT[: nv * k].reshape((nv, k))  # L^-T Hᵀ
    B = work.B[: k * k].reshape((k, k))
    if not gram_ready:
        rows_gram_nb(L, parent, H, ZT, B)
    r = work.r[:k]
    rhs = rows.rhs
    for a in range(k):
        r[a] = 0.0
    add_rows_times_nb(H, base, k, nv, r)  # H base
    mean_diag = 0.0
    for a in range(k):
        r[a] = rhs[a] - r[a]
        mean_diag += B[a, a]
    eps = reg * mean_diag / k
    # the regularisation pulls towards the first iterate (the warm start: the previous step's
    # forces of the same rows), not towards no force: ½ ε |λ - λ0|² (a proximal term). Pulled
    # towards 0, a force λ held over many steps leaves every row short by ε λ, and a body
    # resting against another under a steady load crept into it at ε λ / kd
    for a in range(k):
        r[a] += eps * lam[a]
    w = work.w[:k]  # (B + ε I) λ: the rows' accelerations (velocities, for impulses) from λ
    r_max = regularised_product_nb(B, eps, lam, r, w, k)
    w_old = work.w_old[:k]
    old, pre, G, P, c = work.old, work.pre, work.G, work.P, work.c
    # the rows' arrays read once: reading a field in the sweeps takes and drops a reference
    block_start, block_kind, hull_start, hull_xy = rows.block_start, rows.block_kind, rows.hull_start, rows.hull_xy
    mu, arm, bound, slip = rows.mu, rows.arm, rows.bound, rows.slip
    nb = block_kind.shape[0]
    sw = work.subspace
    sw.failed[0] = -1
    subspace_at = SUBSPACE_FIRST
    sweeps = 0
    # Under-relaxation: each block's update taken as old + ω (new - old). The friction cone's
    # projection makes the sweeps a fixed-point iteration, not a descent, and its fixed point
    # can repel them into a cycle: a shin landing on a 2.4 cm line contact while turning at
    # 12 rad/s about it spiralled out 1.6x per sweep from a change of 3e-6 (or flipped between
    # two iterates from the first sweep), the impulses cycled until the cap, the solve returned
    # none and the shin went 1.08 mm into the ground. So ω = 1 until the sweeps stall: for
    # RELAXATION_STALL sweeps no change smaller than the least since ω (or the faces of a
    # subspace solve) last changed, the last of them turning the rows' accelerations back
    # against the one before (w's changes over the two sweeps have a negative dot product).
    # Then ω is halved, down to RELAXATION_MIN, and the shin's sweeps converge. Sweeps that
    # converge, however slowly, stay undamped (damping them slows them: talos flailing reached
    # the cap on 3-5 % of its steps instead of 1 %), and so do the first RELAXATION_AFTER
    # sweeps, whose subspace solves mostly find the answer from undamped sweeps (a light body
    # on a far contact, test_bounded_solve: 10 sweeps; damped from the start, 67). old and new
    # both lie in the block's set, a convex cone or box: so does every ω between.
    omega = 1.0
    least_change = np.inf  # the least change since ω or the faces last changed
    stalled = 0  # sweeps since that least change
    dw_last = work.dw[:k]
    for a in range(k):
        dw_last[a] = 0.0
    last, step = work.last[:k], work.step[:k]
    rho_last = 0.0  # the last ratio of successive changes (_aitken)
    for sweeps in range(1, max_sweeps + 1):
        change = 0.0
        largest = 0.0
        for a in range(k):
            w_old[a] = w[a]
        for blk in range(nb):
            s0, s1 = block_start[blk], block_start[blk + 1]
            for j in range(s0, s1):
                old[j - s0] = lam[j]
            kind = block_kind[blk]
            h0, h1 = hull_start[blk], hull_start[blk + 1]
            first = s0
            if kind == BLOCK_LINE or kind == BLOCK_SURFACE:  # the normal rows exactly, over the hull's cone
                _area_normal_rows(kind, s0, hull_xy[h0:h1], B, eps, r, w, lam, G, P, c)
                first = s0 + (2 if kind == BLOCK_LINE else 3)
            ft = _friction_rows(kind, s0) if kind != BLOCK_ONE_SIDED and kind != BLOCK_BOX else s1
            for j in range(first, s1):  # Gauss-Seidel over the block's (other) rows
                if j == ft:  # the friction pair, exactly
                    _friction_pair(B, eps, r, w, lam, ft, mu[blk] * lam[s0], slip[blk, 0], slip[blk, 1], k)
                    continue
                if j == ft + 1:
                    continue
                d = B[j, j] + eps
                if d <= 0.0:
                    continue
                delta = (r[j] - w[j]) / d
                lam[j] += delta
                for a in range(k):  # B[j, a] = B[a, j] (rows_gram_nb mirrors it): the contiguous row
                    w[a] += B[j, a] * delta
                w[j] += eps * delta
            for j in range(s0, s1):
                pre[j - s0] = lam[j]
            _project_block(kind, lam, s0, mu[blk], arm[blk], bound[blk], hull_xy[h0:h1], slip[blk, 0], slip[blk, 1])
            if omega < 1.0:
                for j in range(s0, s1):
                    lam[j] = old[j - s0] + omega * (lam[j] - old[j - s0])
            for j in range(s0, s1):
                delta = lam[j] - pre[j - s0]
                if delta != 0.0:
                    for a in range(k):
                        w[a] += B[j, a] * delta
                    w[j] += eps * delta
                change = max(change, abs(lam[j] - old[j - s0]))
                largest = max(largest, abs(lam[j]))
        moved = 0.0
        turn = 0.0
        for a in range(k):
            dw = w[a] - w_old[a]
            moved = max(moved, abs(dw))
            turn += dw * dw_last[a]
            dw_last[a] = dw
        # converged: no force moved, or no row's acceleration did (redundant contacts: the
        # sweeps then only shift load along directions of B's near-null space, which change
        # no motion and which the next steps' warm starts go on converging)
        if change <= tol * (1.0 + largest) or moved <= tol * (1.0 + r_max):
            break
        if sweeps >= EXTRAPOLATE_AFTER:
            rho_last, jumped = _aitken(lam, last, step, k, rho_last, _friction_on_bound(rows, lam))
            if jumped:  # back into the sets (the sweeps' limit lies in them, to rounding), w anew
                for blk in range(nb):
                    h0, h1 = hull_start[blk], hull_start[blk + 1]
                    _project_block(block_kind[blk], lam, block_start[blk], mu[blk], arm[blk], bound[blk],
                                   hull_xy[h0:h1], slip[blk, 0], slip[blk, 1])  # fmt: skip
                regularised_product_nb(B, eps, lam, r, w, k)
                for a in range(k):
                    last[a] = lam[a]
                least_change = np.inf
        if change < least_change:
            least_change = change
            stalled = 0
        else:
            stalled += 1
        if turn < 0.0 and stalled >= RELAXATION_STALL and sweeps >= RELAXATION_AFTER and omega > RELAXATION_MIN:
            omega *= 0.5
            least_change = np.inf
        if sweeps == subspace_at:  # the faces the sweeps have found, solved exactly; the next
            # sweep checks them (a force that leaves its face moves, and the faces are found again)
            _subspace_step(rows, B, eps, r, lam, w, sw, 1e-9)
            least_change = np.inf
            for a in range(k):  # the extrapolation's sequence starts again from here
                last[a] = lam[a]
                step[a] = 0.0
            rho_last = 0.0
            subspace_at += 1 if sweeps < SUBSPACE_FIRST + SUBSPACE_EVERY_SWEEP - 1 else subspace_at
    # Never worse than no force: α λ stays in K for 0 <= α <= 1 (every block is a cone, or a
    # box about 0), and f(α λ) = ½ α² λᵀ(B + ε I)λ - α λᵀ r (r with ε λ0) is least at
    # α = λᵀ r / λᵀ(B + ε I)λ, which is 1 at the minimiser. An impulse changes the kinetic
    # energy by f + λᵀ rhs: its best multiple (f <= 0) with no restitution and no speculative
    # target (rhs = 0) takes energy out, never puts it in (unscaled, the impulses of a g1 wrist
    # and ankle landing on one point, their sweeps damped for 160-180 sweeps, gained 0.15 and
    # 0.23 J; a talos head spinning on the ground, at the sweeps' cap, 0.14 J). Accelerations
    # (converged_as_is): a converged iterate, not one at the cap, is returned as it is unless it
    # does worse than no force (f(λ) > 0): Coulomb's answer, with friction on its bound, is
    # not the least of f over K, and its best multiple (α 0.98-0.999 on g1 lying on twelve
    # contacts) took up to 2 % off every force, the weight's share too: the body sagged and was
    # pushed back every step.
    quad = 0.0
    lin = 0.0
    for a in range(k):
        quad += lam[a] * w[a]
        lin += lam[a] * r[a]
    worse_than_none = lin < 0.5 * quad  # f(λ) > 0
    as_is = converged_as_is and sweeps < max_sweeps
    if quad > 0.0 and lin < quad and (worse_than_none or not as_is):
        alpha = max(0.0, lin / quad)
        for a in range(k):
            lam[a] *= alpha
    back_project_nb(L, parent, ZT, lam, x)
    for i in range(nv):
        x[i] += base[i]
    return sweeps
