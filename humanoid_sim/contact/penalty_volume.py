"""Seed 004's contact method: a spring-damper force per area element of the penetration
volume, distributed Coulomb friction, the dynamics with those forces as external forces.

Per contact of the table (contact/step_data.ContactTable: its points xy (virtual-link frame,
z = the normal) with their gaps), the penetration volume is integrated by area elements
(quadrature points with an area weight w [m^2] and a depth d [m], the depth interpolated
linearly between the contact's points):

- a surface (hull of >= 3 points): the hull is fanned into triangles from the mean of its
  vertices; each triangle is clipped to its penetrating part (d >= 0: the depth is linear
  over a planar face, so the clipped polygon is the exact intersection of the face with
  the half space below the surface) and integrated by the 3-point rule of degree 2. For
  a planar face whose points are all in the table this is EXACT: Σ w d is the
  intersection volume (a box face pressed evenly or tilted, also partly out) and
  Σ w d (x, y) its first moment, so the normal force k V acts at the volume's centroid;
- a line (2 points): the penetrating part of the segment, 2-point Gauss rule, each point
  standing for a strip of width ``line_width``, or for a cylinder of radius r on its side
  the chord (4/3) sqrt(2 r d) where wider (its intersection volume per length to first
  order in d/r); a box edge: an approximation (its true volume grows with d^2 and depends
  on the faces' angles);
- a point: one element of area ``point_area``, or π r d for a sphere of radius r where
  larger (the cap's volume π r d^2 to first order); a box corner: an approximation.

Each element: a normal force w (k d - c v_n), never pulling (k ``stiffness`` per unit area
and depth [N/m^3], c ``damping`` [N s/m^3], v_n its normal velocity, > 0 separating) and a
friction force against its own sliding velocity v_t, regularised near zero slip,
f_t = -μ(|v_t|) f_n v_t / sqrt(|v_t|^2 + ε^2) with μ(s) = μ_d + (μ_s - μ_d) exp(-(s / v_s)^2)
(ε ``slip_regularisation``, v_s ``stribeck_velocity``): a contact gets a friction force and
a friction torque (a spinning box slows).

Time discretisation (docs/penalty_volume.md): linearly implicit (``implicit``, default).
The forces are taken at the end of the step, linearised in the step's acceleration a:
v_n' = v_n + dt (J_n a + J̇_n v), d' = d - dt v_n', so f_n = f_pred - W J_n a with
W = w (k dt + c) dt, and f_t = -g v_t' = f_t0 + dt D (J_t a + J̇_t v) with the friction's
coefficient g = μ(|v_t|) f_n / sqrt(|v_t|^2 + ε^2) at the step's start and D = -g I (an
implicit damper: the slip slows to zero, never reverses within a step). Then
(M + Σ Jᵀ W J - dt Σ J_tᵀ D J_t) a = τ - D_j v - b + Σ Jᵀ f_pred + ..., solved in passes
(the friction bounded by the explicit normal forces, then by those of the previous pass; an
element whose force would pull leaves the solve: at least two passes, until none leaves)
with the Cholesky factor of the modified matrix (the implicit terms of a contact between two
bodies couple two branches of the tree, which the articulated-body recursion cannot hold);
the final element forces are clamped (f_n >= 0; the friction scaled to the final f_n,
|f_t| <= μ f_n) and go into the shared solve of the hard rows (joint stops) and joint
friction as known generalized forces. Without clamping the resulting a is the implicit one.
``implicit=False``: the forces at the start of the step (explicit; stable only for small
k dt^2 / m, see the sensitivity table of bench/penalty_volume_sensitivity.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.kernels import cho_solve_vec, cholesky_into
from humanoid_sim.dynamics.mass_factor import solve_vec_nb
from humanoid_sim.contact.methods import CAPACITY, OK, SINGULAR

__all__ = [
    "PenaltyVolumeData",
    "PenaltyVolumeParams",
    "allocate_penalty_volume",
    "contact_elements_nb",
    "penalty_volume_nb",
    "penalty_volume_free_acceleration_nb",
]

VX, VY, VZ, WX, WY, WZ = 0, 1, 2, 3, 4, 5
POINT, LINE, SURFACE = 1, 2, 3
# parameter vector indices (PenaltyVolumeData.params)
P_K, P_C, P_EPS, P_VS, P_LINE, P_POINT, P_IMPLICIT = 0, 1, 2, 3, 4, 5, 6
MAX_PASSES = 6  # implicit solves per step at most (StepResult.rounds)
# the 3-point triangle rule of degree 2 (barycentric, weight fraction of the area)
_TRI3 = np.array([[2.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0], [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0], [1.0 / 6.0, 1.0 / 6.0, 2.0 / 3.0]])
_GAUSS2 = 0.5 / math.sqrt(3.0)  # 2-point Gauss on [0, 1]: 0.5 -+ this


@dataclass(frozen=True)
class PenaltyVolumeParams:
    """The method's constants (docs/penalty_volume.md says why these values).

    stiffness: k, normal force per unit area per unit depth [N/m^3] (a box of mass m resting
    on a face of area A sinks m g / (k A)); damping: c, per unit area per unit normal speed
    [N s/m^3]; slip_regularisation: ε [m/s], the slip speed below which friction grows
    linearly (creep of a held contact ~ ε tan α / μ_s); stribeck_velocity: v_s [m/s], the
    slip speed over which μ falls from μ_s to μ_d; line_width: the width a line contact
    stands for [m] (at least; a cylinder's chord where wider); point_area: the area a point
    contact stands for [m^2] (at least; π r d for a sphere where larger); implicit: the
    linearly implicit forces (True) or explicit ones."""

    stiffness: float = 2.0e7
    damping: float = 2.0e5
    slip_regularisation: float = 1.0e-4
    stribeck_velocity: float = 1.0e-2
    line_width: float = 0.03
    point_area: float = 1.0e-3
    implicit: bool = True

    def __post_init__(self) -> None:
        for name in ("stiffness", "slip_regularisation", "stribeck_velocity", "line_width", "point_area"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"PenaltyVolumeParams.{name} = {value!r}: must be finite and > 0")
        if not (isinstance(self.damping, (int, float)) and math.isfinite(self.damping) and self.damping >= 0.0):
            raise ValueError(f"PenaltyVolumeParams.damping = {self.damping!r}: must be finite and >= 0 [N s/m^3]")
        if not isinstance(self.implicit, bool):
            raise ValueError(f"PenaltyVolumeParams.implicit = {self.implicit!r}: must be a bool")


class PenaltyVolumeData(NamedTuple):
    """The method's constants and scratch, allocated once per simulator.

    params (7,): stiffness, damping, slip_regularisation, stribeck_velocity, line_width,
    point_area, implicit (1.0/0.0). Area elements (E,): contact (int64), x, y (virtual-link
    frame [m]), w (area [m^2]), d (depth [m]); pa, pb (int64): the table point rows the element
    is interpolated from, bc, ba, bb: its weights on the fan centre (shared equally by the
    hull's points), pa and pb; fn (normal force [N]), ft (E, 2) (friction, virtual-link x, y
    [N]), wpred, fpred (the linearised normal force: f_n = fpred - wpred J_n a), D (E, 2, 2)
    (the friction's -g I [N s/m]), ft0 (E, 2). Per contact: K6 (C, 6, 6), w6 (C, 6) scratch.
    Mt, Lt (nv, nv): the modified matrix and its factor; rhs, acc (nv,) scratch; tau (nv,):
    τ plus the contact forces (the known forces of the shared solve). Scratch: six (4, 6) an
    element's rows and a contact's acceleration, tri (3, 3) a triangle, clip (4, 3) its
    clipped polygon, KG (6, nv). passes (1,) int64: the step's implicit passes (0: explicit),
    StepResult.rounds (set by penalty_volume_free_acceleration_nb, after the shared solve of
    the hard rows, whose rounds they replace)."""

    params: np.ndarray
    contact: np.ndarray
    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    d: np.ndarray
    pa: np.ndarray
    pb: np.ndarray
    bc: np.ndarray
    ba: np.ndarray
    bb: np.ndarray
    fn: np.ndarray
    fn_used: np.ndarray
    active: np.ndarray
    ft: np.ndarray
    wpred: np.ndarray
    fpred: np.ndarray
    D: np.ndarray
    ft0: np.ndarray
    K6: np.ndarray
    w6: np.ndarray
    Mt: np.ndarray
    Lt: np.ndarray
    rhs: np.ndarray
    acc: np.ndarray
    tau: np.ndarray
    six: np.ndarray
    tri: np.ndarray
    clip: np.ndarray
    KG: np.ndarray
    passes: np.ndarray


def allocate_penalty_volume(params: PenaltyVolumeParams, C: int, P: int, nv: int) -> PenaltyVolumeData:
    """PenaltyVolumeData for C contacts, P contact points and nv velocity coordinates."""
    E = 6 * P + 2 * C + 2  # a hull edge's clipped triangle: at most 2 sub-triangles of 3 points
    par = np.array([params.stiffness, params.damping, params.slip_regularisation, params.stribeck_velocity,
                    params.line_width, params.point_area, 1.0 if params.implicit else 0.0])  # fmt: skip
    f = lambda *s: np.zeros(s)  # noqa: E731
    i = lambda n: np.zeros(n, np.int64)  # noqa: E731
    return PenaltyVolumeData(par, i(E), f(E), f(E), f(E), f(E), i(E), i(E), f(E), f(E), f(E), f(E), f(E), i(E), f(E, 2),
                             f(E), f(E), f(E, 2, 2), f(E, 2), f(max(C, 1), 6, 6), f(max(C, 1), 6), f(nv, nv), f(nv, nv),
                             f(nv), f(nv), f(nv), f(4, 6), f(3, 3), f(4, 3), f(6, nv), i(1))  # fmt: skip


# ------------------------------------------------------------------ quadrature


@njit(cache=True)
def _add_element(pv, e, i, x, y, w, d, pa, pb, bc, ba, bb) -> int:
    if e >= pv.x.shape[0]:
        return -1
    pv.contact[e] = i
    pv.x[e] = x
    pv.y[e] = y
    pv.w[e] = w
    pv.d[e] = d
    pv.pa[e] = pa
    pv.pb[e] = pb
    pv.bc[e] = bc
    pv.ba[e] = ba
    pv.bb[e] = bb
    return e + 1


@njit(cache=True)
def _triangle_elements(pv, e, i, X, Y, Dp, pa, pb) -> int:
    """Elements of the penetrating part (depth >= 0) of the triangle (fan centre, pa, pb):
    vertices X, Y (3,), depths Dp (3,) (linear over it). Returns the next element or -1."""
    # clip against d >= 0 (Sutherland-Hodgman), vertices as barycentric coordinates
    B = pv.clip
    for j in range(4):
        for c in range(3):
            B[j, c] = 0.0
    n = 0
    for j in range(3):
        k = (j + 1) % 3
        dj, dk = Dp[j], Dp[k]
        if dj >= 0.0:
            B[n, j] = 1.0
            n += 1
        if (dj >= 0.0) != (dk >= 0.0):
            t = dj / (dj - dk)
            B[n, j] = 1.0 - t
            B[n, k] = t
            n += 1
    if n < 3:
        return e
    area0 = 0.5 * ((X[1] - X[0]) * (Y[2] - Y[0]) - (X[2] - X[0]) * (Y[1] - Y[0]))
    for s in range(1, n - 1):  # fan of the clipped polygon
        # sub-triangle (B[0], B[s], B[s+1]); its area from the barycentric determinant
        det = (B[0, 0] * (B[s, 1] * B[s + 1, 2] - B[s, 2] * B[s + 1, 1])
               - B[0, 1] * (B[s, 0] * B[s + 1, 2] - B[s, 2] * B[s + 1, 0])
               + B[0, 2] * (B[s, 0] * B[s + 1, 1] - B[s, 1] * B[s + 1, 0]))  # fmt: skip
        area = abs(det * area0)
        if area <= 0.0:
            continue
        for q in range(3):
            b0 = _TRI3[q, 0] * B[0, 0] + _TRI3[q, 1] * B[s, 0] + _TRI3[q, 2] * B[s + 1, 0]
            b1 = _TRI3[q, 0] * B[0, 1] + _TRI3[q, 1] * B[s, 1] + _TRI3[q, 2] * B[s + 1, 1]
            b2 = _TRI3[q, 0] * B[0, 2] + _TRI3[q, 1] * B[s, 2] + _TRI3[q, 2] * B[s + 1, 2]
            x = b0 * X[0] + b1 * X[1] + b2 * X[2]
            y = b0 * Y[0] + b1 * Y[1] + b2 * Y[2]
            d = max(0.0, b0 * Dp[0] + b1 * Dp[1] + b2 * Dp[2])
            e = _add_element(pv, e, i, x, y, area / 3.0, d, pa, pb, b0, b1, b2)
            if e < 0:
                return -1
    return e


@njit(cache=True)
def _radius(tab, j, det_idx, g_radius) -> float:
    """The radius [m] of the sphere or cylinder rim that table point j was detected on (0 for
    a box vertex or a point between two bodies)."""
    h = tab.hit[j]
    if h < 0 or h >= det_idx.shape[0]:
        return 0.0
    c = det_idx[h]
    if c < 0 or c >= g_radius.shape[0]:
        return 0.0
    return g_radius[c]


@njit(cache=True)
def contact_elements_nb(pv, tab, nc, det_idx, g_radius) -> int:
    """The area elements of the nc contacts of tab into pv (module docstring: exact for a
    planar face whose points are all in the table; a line: a strip of line_width, or of the
    chord (4/3) sqrt(2 r d) of a cylinder of radius r on its side where wider (its
    intersection volume per length to first order); a point: point_area, or π r d for a
    sphere of radius r where larger (the cap's volume π r d^2 to first order)). det_idx (N,):
    the detected points' candidates, g_radius: the candidates' radii [m] (StepStatics).
    Returns the number of elements, or -1 when pv is too small."""
    par = pv.params
    e = 0
    X, Y, Dp = pv.tri[0], pv.tri[1], pv.tri[2]
    for i in range(nc):
        st, hs, hc = tab.point_start[i], tab.hull_start[i], tab.hull_count[i]
        kind = tab.kind[i]
        if kind == SURFACE and hc >= 3:
            cx, cy, cd = 0.0, 0.0, 0.0
            for t in range(hc):
                j = st + tab.hull[hs + t]
                cx += tab.xy[j, 0]
                cy += tab.xy[j, 1]
                cd -= tab.gap[j]
            cx /= hc
            cy /= hc
            cd /= hc
            for t in range(hc):
                ja = st + tab.hull[hs + t]
                jb = st + tab.hull[hs + (t + 1) % hc]
                X[0], Y[0], Dp[0] = cx, cy, cd
                X[1], Y[1], Dp[1] = tab.xy[ja, 0], tab.xy[ja, 1], -tab.gap[ja]
                X[2], Y[2], Dp[2] = tab.xy[jb, 0], tab.xy[jb, 1], -tab.gap[jb]
                e = _triangle_elements(pv, e, i, X, Y, Dp, ja, jb)
                if e < 0:
                    return -1
        elif kind == LINE or (kind == SURFACE and hc == 2):
            ja, jb = st + tab.hull[hs], st + tab.hull[hs + 1]
            xa, ya, da = tab.xy[ja, 0], tab.xy[ja, 1], -tab.gap[ja]
            xb, yb, db = tab.xy[jb, 0], tab.xy[jb, 1], -tab.gap[jb]
            t0, t1 = 0.0, 1.0  # the penetrating part of the segment
            if da < 0.0 and db < 0.0:
                continue
            if da < 0.0:
                t0 = da / (da - db)
            elif db < 0.0:
                t1 = da / (da - db)
            length = math.hypot(xb - xa, yb - ya) * (t1 - t0)
            r = min(_radius(tab, ja, det_idx, g_radius), _radius(tab, jb, det_idx, g_radius))
            for s in range(2):
                t = 0.5 * (t0 + t1) + (t1 - t0) * (_GAUSS2 if s else -_GAUSS2)
                x = xa + t * (xb - xa)
                y = ya + t * (yb - ya)
                d = max(0.0, da + t * (db - da))
                width = max(par[P_LINE], 4.0 / 3.0 * math.sqrt(2.0 * r * d))
                e = _add_element(pv, e, i, x, y, 0.5 * length * width, d, ja, jb, 0.0, 1.0 - t, t)
                if e < 0:
                    return -1
        else:  # a point (or a degenerate area: its first point)
            j = st + tab.hull[hs]
            d = -tab.gap[j]
            if d <= 0.0:
                continue
            area = max(par[P_POINT], math.pi * _radius(tab, j, det_idx, g_radius) * d)
            e = _add_element(pv, e, i, tab.xy[j, 0], tab.xy[j, 1], area, d, j, j, 0.0, 1.0, 0.0)
            if e < 0:
                return -1
    return e


# ------------------------------------------------------------------ forces


@njit(cache=True)
def _element_rows(x, y, out_n, out_t1, out_t2) -> None:
    """The element's rows in the virtual-link 6-vector (vx, vy, vz, wx, wy, wz): normal
    velocity of the point (x, y, 0) = c_n · v6, tangential c_t1 · v6, c_t2 · v6."""
    for c in range(6):
        out_n[c] = 0.0
        out_t1[c] = 0.0
        out_t2[c] = 0.0
    out_n[VZ] = 1.0
    out_n[WX] = y
    out_n[WY] = -x
    out_t1[VX] = 1.0
    out_t1[WZ] = -y
    out_t2[VY] = 1.0
    out_t2[WZ] = x


@njit(cache=True)
def _dot6(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def _mu(s, mu_s, mu_d, vs) -> float:
    """μ at slip speed s [m/s]: μ_d + (μ_s - μ_d) exp(-(s / v_s)^2)."""
    r = s / vs
    return mu_d + (mu_s - mu_d) * math.exp(-r * r)


@njit(cache=True)
def _add_contact_matrix(G, K6, Mt, KG) -> None:
    """Mt += Gᵀ K6 G (G (6, nv), K6 (6, 6) symmetric; KG (6, nv) scratch)."""
    nv = G.shape[1]
    for r in range(6):
        for col in range(nv):
            KG[r, col] = 0.0
    for r in range(6):
        for c in range(6):
            k = K6[r, c]
            if k != 0.0:
                for col in range(nv):
                    KG[r, col] += k * G[c, col]
    for r in range(6):
        for a in range(nv):
            g = G[r, a]
            if g != 0.0:
                for b in range(nv):
                    Mt[a, b] += g * KG[r, b]


@njit(cache=True)
def penalty_volume_nb(d, tab, nc, k, v, tau, n_hard) -> tuple:
    """The contact forces of seed 004 on the nc contacts of tab (built at v): per area element
    the linearly implicit (or explicit) spring-damper normal force and regularised Coulomb
    friction (module docstring). Fills tab.wrench (virtual-link frame, at origin), point_force
    (world), released (no force), sticking/slip, d.out.v_plus = v and d.penalty.tau = τ + Σ Jᵀ f
    (τ (nv,) the applied generalized forces): the step then solves the hard rows and joint
    friction with those known forces (step_kernel) and penalty_volume_free_acceleration_nb
    restores a0. Returns (status, t_index, nc); status CAPACITY when the elements do not fit,
    SINGULAR when the modified matrix is not positive definite."""
    pv = d.penalty
    par = pv.params
    out = d.out
    nv = v.shape[0]
    dt = d.params.dt
    kk, cc = par[P_K], par[P_C]
    implicit = par[P_IMPLICIT] > 0.5
    for a in range(nv):
        out.v_plus[a] = v[a]
        pv.tau[a] = tau[a]
    ne = contact_elements_nb(pv, tab, nc, d.detection.idx, d.statics.g_radius)
    if ne < 0:
        return CAPACITY, 0, 0
    cn, t1, t2, ga = pv.six[0], pv.six[1], pv.six[2], pv.six[3]
    # the elements' normal forces at the step's start (explicit), or their linearisation
    for e in range(ne):
        i = pv.contact[e]
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        vn = _dot6(cn, tab.vel[i])
        w = pv.w[e]
        if implicit:
            pv.fpred[e] = w * (kk * pv.d[e] - (kk * dt + cc) * (vn + dt * _dot6(cn, tab.drift[i])))
            pv.wpred[e] = w * (kk * dt + cc) * dt
        else:
            pv.fpred[e] = w * (kk * pv.d[e] - cc * vn)
            pv.wpred[e] = 0.0
        pv.fn[e] = max(0.0, pv.fpred[e])
    if not implicit:
        _friction_coefficients(d, pv, tab, ne, cn, t1, t2)
        for e in range(ne):
            pv.ft[e, 0] = pv.ft0[e, 0]
            pv.ft[e, 1] = pv.ft0[e, 1]
        pv.passes[0] = 0
    else:
        # passes of the linearly implicit solve, each with the friction bounded by the
        # previous normal forces (the first: the explicit ones; the friction's moment moves
        # the pressure) and the normal springs of the elements still pressing (an element
        # whose solved force would pull leaves: the forces never pull within the solve
        # either); at least two, until no element leaves
        for e in range(ne):
            pv.active[e] = 1 if pv.fpred[e] > 0.0 else 0
        passes = 0
        for passes in range(1, MAX_PASSES + 1):
            _friction_coefficients(d, pv, tab, ne, cn, t1, t2)
            _assemble_implicit(pv, tab, nc, ne, dt, cn, t1, t2)
            if not _solve(d, pv, tab, nc):
                return SINGULAR, 0, 0
            left = _normal_forces(pv, tab, ne, cn, t1, t2, ga)
            if passes >= 2 and not left:
                break
        _implicit_friction(d, pv, tab, ne, dt, cn, t1, t2, ga)
        pv.passes[0] = passes
    _wrenches(d, pv, tab, nc, ne, cn, t1, t2)
    counts = out.counts[0]
    counts.validated = 1
    counts.impulse = 0
    return OK, 0, nc


@njit(cache=True)
def _friction_coefficients(d, pv, tab, ne, cn, t1, t2) -> None:
    """Each element's friction at its normal force pv.fn (kept in pv.fn_used) and the slip at
    the step's start: f_t0 = -g v_t, g = μ(|v_t|) f_n / sqrt(|v_t|^2 + ε^2), D = -g I
    (implicit in the end-of-step slip with the coefficient of the current one: a tangent D
    would keep the full force over a step that reverses the slip, which then jumps across
    zero every step)."""
    par = pv.params
    st_ = d.statics
    eps, vs = par[P_EPS], par[P_VS]
    for e in range(ne):
        i = pv.contact[e]
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        vel = tab.vel[i]
        ux, uy = _dot6(t1, vel), _dot6(t2, vel)
        s = math.hypot(ux, uy)
        mu = _mu(s, st_.mu_s[tab.element[i]], st_.mu_d[tab.element[i]], vs)
        g = mu * pv.fn[e] / math.sqrt(s * s + eps * eps)
        pv.fn_used[e] = pv.fn[e]
        pv.ft0[e, 0] = -g * ux
        pv.ft0[e, 1] = -g * uy
        pv.D[e, 0, 0] = -g
        pv.D[e, 0, 1] = 0.0
        pv.D[e, 1, 0] = 0.0
        pv.D[e, 1, 1] = -g


@njit(cache=True)
def _assemble_implicit(pv, tab, nc, ne, dt, cn, t1, t2) -> None:
    """Each contact's linearised wrench w6 and matrix K6 (virtual-link 6-space): the normal
    f_pred - W J_n a of the elements pressing, the friction f_t0 + dt D (J_t a + J̇_t v)."""
    for i in range(nc):
        for r in range(6):
            pv.w6[i, r] = 0.0
            for c in range(6):
                pv.K6[i, r, c] = 0.0
    for e in range(ne):
        i = pv.contact[e]
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        if pv.active[e]:
            W = pv.wpred[e]
            for r in range(6):
                pv.w6[i, r] += cn[r] * pv.fpred[e]
                for c in range(6):
                    pv.K6[i, r, c] += W * cn[r] * cn[c]
        if pv.fn_used[e] > 0.0:  # -dt D = dt g I in the matrix, the known part into w6
            dr = tab.drift[i]
            g = -pv.D[e, 0, 0]
            f1 = pv.ft0[e, 0] - dt * g * _dot6(t1, dr)
            f2 = pv.ft0[e, 1] - dt * g * _dot6(t2, dr)
            for r in range(6):
                pv.w6[i, r] += t1[r] * f1 + t2[r] * f2
                for c in range(6):
                    pv.K6[i, r, c] += dt * g * (t1[r] * t1[c] + t2[r] * t2[c])


@njit(cache=True)
def _implicit_friction(d, pv, tab, ne, dt, cn, t1, t2, ga) -> None:
    """The elements' friction at the solved acceleration pv.acc, -g v_t' scaled from the
    normal force it was bounded by to the final one, at most μ(|v_t|) f_n."""
    par = pv.params
    st_ = d.statics
    last = -1
    for e in range(ne):
        i = pv.contact[e]
        if i != last:
            _contact_acceleration(tab.G[i], pv.acc, ga)
            last = i
        pv.ft[e, 0] = 0.0
        pv.ft[e, 1] = 0.0
        if pv.fn[e] <= 0.0 or pv.fn_used[e] <= 0.0:
            continue
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        dr = tab.drift[i]
        vel = tab.vel[i]
        g = -pv.D[e, 0, 0] * pv.fn[e] / pv.fn_used[e]
        f1 = -g * (_dot6(t1, vel) + dt * (_dot6(t1, ga) + _dot6(t1, dr)))
        f2 = -g * (_dot6(t2, vel) + dt * (_dot6(t2, ga) + _dot6(t2, dr)))
        s = math.hypot(_dot6(t1, vel), _dot6(t2, vel))
        bound = _mu(s, st_.mu_s[tab.element[i]], st_.mu_d[tab.element[i]], par[P_VS]) * pv.fn[e]
        fm = math.hypot(f1, f2)
        if fm > bound:
            f1 *= bound / fm
            f2 *= bound / fm
        pv.ft[e, 0] = f1
        pv.ft[e, 1] = f2


@njit(cache=True)
def _contact_acceleration(G, acc, out) -> None:
    """out (6,) = G acc."""
    for r in range(6):
        s = 0.0
        for col in range(acc.shape[0]):
            s += G[r, col] * acc[col]
        out[r] = s


@njit(cache=True)
def _normal_forces(pv, tab, ne, cn, t1, t2, ga) -> bool:
    """The active elements' normal forces at the solved acceleration pv.acc, fpred - W J_n a;
    an element whose force would pull leaves the active set (force 0). Returns whether one
    left."""
    last = -1
    left = False
    for e in range(ne):
        pv.fn[e] = 0.0
        if not pv.active[e]:
            continue
        i = pv.contact[e]
        if i != last:
            _contact_acceleration(tab.G[i], pv.acc, ga)
            last = i
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        f = pv.fpred[e] - pv.wpred[e] * _dot6(cn, ga)
        if f > 0.0:
            pv.fn[e] = f
        else:
            pv.active[e] = 0
            left = True
    return left


@njit(cache=True)
def _solve(d, pv, tab, nc) -> bool:
    """pv.acc = (M + Σ Gᵀ K6 G)^-1 (τ - D_j v - b + Σ Gᵀ w6). False: not positive definite."""
    dyn = d.dyn
    nv = pv.rhs.shape[0]
    for a in range(nv):
        for b in range(nv):
            pv.Mt[a, b] = dyn.M[a, b]
        pv.rhs[a] = pv.tau[a] - dyn.damping[a] * d.out.v_plus[a] - dyn.b[a]
    for i in range(nc):
        K6 = pv.K6[i]
        nz = False
        for r in range(6):
            for c in range(6):
                nz |= K6[r, c] != 0.0
        if nz:
            _add_contact_matrix(tab.G[i], K6, pv.Mt, pv.KG)
        G = tab.G[i]
        for r in range(6):
            wr = pv.w6[i, r]
            if wr != 0.0:
                for col in range(nv):
                    pv.rhs[col] += G[r, col] * wr
    if not cholesky_into(pv.Mt, pv.Lt):
        return False
    cho_solve_vec(pv.Lt, pv.rhs, pv.acc)
    return True


@njit(cache=True)
def _wrenches(d, pv, tab, nc, ne, cn, t1, t2) -> None:
    """Each contact's wrench (virtual-link frame, at origin), its points' forces (world),
    released / sticking / slip, and pv.tau += Σ Gᵀ wrench."""
    nv = pv.tau.shape[0]
    for i in range(nc):
        for c in range(6):
            tab.wrench[i, c] = 0.0
            tab.impulse[i, c] = 0.0
        st, cnt = tab.point_start[i], tab.point_count[i]
        for t in range(st, st + cnt):
            for r in range(3):
                tab.point_force[t, r] = 0.0
    lf = pv.tri[0]  # the element's force, world axes
    for e in range(ne):
        i = pv.contact[e]
        _element_rows(pv.x[e], pv.y[e], cn, t1, t2)
        fn, f1, f2 = pv.fn[e], pv.ft[e, 0], pv.ft[e, 1]
        for r in range(6):
            tab.wrench[i, r] += cn[r] * fn + t1[r] * f1 + t2[r] * f2
        # the element's force on the points it is interpolated from (consistent loads: the
        # points' forces have the elements' resultant and moment)
        R = tab.R[i]
        for r in range(3):
            lf[r] = R[r, 0] * f1 + R[r, 1] * f2 + R[r, 2] * fn
        if pv.bc[e] != 0.0:
            hs, hc, st = tab.hull_start[i], tab.hull_count[i], tab.point_start[i]
            share = pv.bc[e] / hc
            for t in range(hc):
                j = st + tab.hull[hs + t]
                for r in range(3):
                    tab.point_force[j, r] += share * lf[r]
        for r in range(3):
            tab.point_force[pv.pa[e], r] += pv.ba[e] * lf[r]
            tab.point_force[pv.pb[e], r] += pv.bb[e] * lf[r]
    for i in range(nc):
        f = tab.wrench[i]
        tab.bounced[i] = 0
        tab.impulse_taken[i] = 0
        tab.spin[i] = 0.0
        tab.released[i] = 0 if f[VZ] > 0.0 else 1
        vx, vy = tab.vel[i, VX], tab.vel[i, VY]
        s = math.hypot(vx, vy)
        slipping = s > 10.0 * pv.params[P_EPS]
        tab.sticking[i] = 0 if slipping else 1
        tab.keep_anchor[i] = 0
        if slipping:
            tab.slip[i, 0] = vx / s
            tab.slip[i, 1] = vy / s
        G = tab.G[i]
        for r in range(6):
            if f[r] != 0.0:
                for col in range(nv):
                    pv.tau[col] += G[r, col] * f[r]


@njit(cache=True)
def penalty_volume_free_acceleration_nb(d, tau) -> None:
    """After the shared solve of the hard rows with the contact forces as known forces:
    d.out.a0 = A^-1 (τ - D v_plus - b) with the applied τ only (the contract: M (a - a0) is
    every contact, limit and friction force), and the step's rounds: the method's implicit
    passes."""
    out, dyn = d.out, d.dyn
    out.counts[0].rounds = d.penalty.passes[0]
    for i in range(tau.shape[0]):
        out.tau_c[i] = tau[i] - dyn.damping[i] * out.v_plus[i] - dyn.b[i]
    solve_vec_nb(d.solve.L, d.tree.dof_parent, out.tau_c, out.a0)
