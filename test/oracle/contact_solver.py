"""Test oracle (the former Python contact solve; not part of the package).

Contacts as virtual links: constrained DOFs, the solve with validity checks, impulses.

One ``ActiveContact`` per classified contact area (virtual_link.py). Its
virtual-link velocity (v_x, v_y, v_z, ω_x, ω_y, ω_z) in the virtual-link frame
(seed 000, 4.2) is ``G v`` with ``G`` (6, nv) the point Jacobian of the body
at the virtual-link origin rotated into the virtual-link axes. The axes are
fixed to the (static) environment, so its acceleration is ``G a + drift`` with
drift the point's classical J̇v (Eq. 7).

Constrained DOFs (Table 1, Table 2):
  POINT:   v_z; + v_x, v_y when sticking.
  LINE:    v_z, ω_y; + v_x, v_y, ω_z when sticking (ω_z free while spinning).
  SURFACE: v_z, ω_x, ω_y; + v_x, v_y, ω_z when sticking (ω_z free while spinning).
Slipping: f_x, f_y = -μ_d s f_z (Eq. 34-35) through Ĥ_C (Eq. 36, 20a).
Spinning (sticking translation, rotation about z, Table 2 row 2): n_z =
σ μ_d f_z d (Eq. 30) through the same Ĥ_C construction.

Validity (4.4, 4.5), checked after each solve, at most ``max_rounds`` solves:
  (1) f_z > 0, else the contact is released;
  (2) p_v (Eq. 26) inside the convex hull of the area, else point/line contact
      at the nearest vertex/edge;
  (3) sticking: |f_t| <= μ_s f_z (Eq. 31), else slipping in s (Eq. 32);
      |n_z| <= n_zS = μ_s f_z d (Eq. 33), else spinning;
      slipping: a slip that would reverse within the step sticks instead, stopped by the step's end.
The same loop checks impulses (4.6: the average impulsive force F/dt has the
same signs and ratios as F, so the checks apply to F directly).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from humanoid_sim.contact import kernels
from humanoid_sim.contact.bounded_solve import (
    BLOCK_LINE,
    BLOCK_ONE_SIDED,
    BLOCK_POINT,
    BLOCK_SURFACE,
    BOUNDED_REGULARISATION,
    BOUNDED_SWEEPS,
    BOUNDED_TOLERANCE,
    BoundedRows,
    bounded_solve_nb,
    bounded_work,
)
from humanoid_sim.contact.constrained_solve import solve_constrained
from humanoid_sim.contact.environment import Material
from humanoid_sim.contact.gains import Gains, Thresholds
from humanoid_sim.contact.step_kernel import RELEASE_MARGIN
from humanoid_sim.contact.virtual_link import ContactArea, ContactKind, nearest_on_hull, reduce_area

VX, VY, VZ, WX, WY, WZ = range(6)

# n_zS = μ_s f_z d (Eq. 33) and n_z0 = μ_d f_z d (Eq. 30) with d = ContactArea.size(), the
# mean distance over the area from the origin: exact for uniform pressure about the origin.
TORSION_ARM = 1.0


@dataclass(frozen=True)
class ContactMemory:
    """What a contact remembers from one step to the next.

    sticking: True = no slip at the end of the last step.
    R_anchor, p_anchor: body pose X_world_body when sticking began (the anchor of the
        tangential drift correction), shapes (3, 3), (3,). A rolling contact (points that
        move over the body's surface: ActiveContact.rolling) keeps no anchor: its body
        point changes every step, so only its velocity is held (the pose of the last
        step is stored).
    slip_direction: last slip direction s in the world, shape (3,) (zeros when sticking).
    force, moment: the solved wrench of the last acceleration phase, world axes, the moment
        about ``origin`` (world) [N, N m, m]: the bounded solve's warm start (None: from 0).
    """

    sticking: bool
    R_anchor: np.ndarray
    p_anchor: np.ndarray
    slip_direction: np.ndarray
    force: np.ndarray | None = None
    moment: np.ndarray | None = None
    origin: np.ndarray | None = None

    def with_wrench(self, lam: np.ndarray, R_world_vl: np.ndarray, origin: np.ndarray) -> "ContactMemory":
        """The same memory with the wrench lam (6,) (virtual-link frame at origin) as its warm start."""
        return replace(self, force=R_world_vl @ lam[:3], moment=R_world_vl @ lam[3:], origin=np.array(origin, float))

    def warm_wrench(self, R_world_vl: np.ndarray, origin: np.ndarray) -> np.ndarray:
        """The remembered wrench (6,) in a contact frame (axes R_world_vl, at origin); zeros without one."""
        if self.force is None:
            return np.zeros(6)
        moment = self.moment + np.cross(self.origin - origin, self.force)
        return np.concatenate([R_world_vl.T @ self.force, R_world_vl.T @ moment])


class ActiveContact:
    """The per-step state of one contact (mutable inside one step only)."""

    __slots__ = (
        "area", "material", "body", "R_body", "p_body", "G", "drift", "vel", "desired",
        "sticking", "slip_dir", "spin", "released", "lam", "impulse", "memory", "nv", "_J", "_arm", "_arm_area",
        "rolling", "tolerance", "dt", "guard", "stopping",
    )  # fmt: skip

    def __init__(self, area: ContactArea, material: Material, ws, memory: ContactMemory | None,
                 tolerance: float = 0.0, dt: float = 0.0) -> None:
        self.area = area
        self.tolerance, self.dt = tolerance, dt  # a speculative contact's arrival (set_desired)
        self.material = material
        self.body = area.patch.body
        self.R_body = ws.R[self.body].copy()
        self.p_body = ws.p[self.body].copy()
        self.nv = ws.nv
        self.G = np.empty((6, ws.nv))
        self._J = np.empty((6, ws.nv))
        self._arm = 0.0
        self._arm_area = None
        self.drift = np.empty(6)
        self.vel = np.empty(6)
        self.desired = np.zeros(6)
        self.memory = memory
        self.sticking = True if memory is None else memory.sticking
        self.slip_dir = np.zeros(2)
        self.spin = 0.0
        self.released = False
        self.lam = np.zeros(6)  # wrench in the virtual-link frame at its origin [N, N m]
        self.impulse = np.zeros(6)  # impulse of this step, same frame [N s, N m s]
        self.rolling = False  # a point of the contact moves over the body's surface
        # a guard: one point of the band out of the contacts, frictionless, in the acceleration
        # phase only when the step would end it deeper (step_kernel._build_contacts)
        self.guard = False
        self.stopping = False  # a slip that would reverse within the step: stopped by its end
        self.refresh(ws)

    # -- kinematics ---------------------------------------------------------
    def refresh(self, ws) -> None:
        """Recompute G, drift and velocity from the workspace (after ws.update or a new area)."""
        kernels.contact_kinematics_nb(
            ws.parent, ws.ndof, ws.v_index, ws.S, ws.V, ws.A, self.body, self.area.origin,
            self.area.R_world_vl, self._J, self.G, self.drift, self.vel,
        )  # fmt: skip
        roll = self.area.roll
        self.rolling = kernels.rolling_drift_nb(ws.V, self.body, self.area.R_world_vl, roll, np.arange(len(roll)), len(roll), self.drift)
        R = self.area.R_world_vl
        if not self.sticking and self.memory is not None:
            vt = self.vel[:2]
            n = np.hypot(*vt)
            if n > 1e-12:
                self.slip_dir[:] = vt / n
            else:
                s = R[:, :2].T @ self.memory.slip_direction
                ns = np.hypot(*s)
                self.slip_dir[:] = s / ns if ns > 1e-12 else (1.0, 0.0)

    def set_desired(self, gains: Gains, slop: float = 0.0) -> None:
        """Desired virtual-link accelerations of Eq. 20b (penetration and stick drift), each
        error corrected beyond ``slop`` [m] only (kernels.desired_acceleration_nb); a
        speculative contact's normal row arrives at the surface (kernels.speculative_target_nb);
        a guard's ends the step no deeper than the surface or than it starts (kernels.guard_target_nb)."""
        if self.guard:
            kernels.guard_target_nb(float(self.area.gap[0]), self.vel, self.dt, self.desired)
            return
        m = self.memory
        anchored = m is not None and m.sticking and self.sticking and not self.rolling
        area = self.area
        kernels.desired_acceleration_nb(
            int(area.kind), area.xy, area.gap, area.R_world_vl, area.origin, self.R_body, self.p_body,
            anchored, m.R_anchor if anchored else self.R_body, m.p_anchor if anchored else self.p_body,
            self.vel, gains.kp, gains.kd, self.desired, slop,
        )  # fmt: skip
        if self.dt > 0.0:
            kernels.speculative_target_nb(area.xy, area.gap, self.vel, self.tolerance, self.dt, self.desired)
            if self.stopping and self.sticking:
                kernels.stop_slip_target_nb(self.vel, self.dt, self.desired)

    # -- rows ---------------------------------------------------------------
    def components(self) -> tuple[int, ...]:
        """Constrained virtual-link DOFs (Table 1, 2); v_z always first."""
        kind = self.area.kind
        rows = [VZ]
        if kind == ContactKind.SURFACE:
            rows += [WX, WY]
        elif kind == ContactKind.LINE:
            rows += [WY]
        if self.sticking:
            rows += [VX, VY]
            if kind != ContactKind.POINT and self.spin == 0.0:
                rows += [WZ]
        return tuple(rows)

    def torsion_arm(self) -> float:
        """d of Eq. 30, 33 for the current area [m] (cached until the area changes)."""
        if self._arm_area is not self.area:
            self._arm = TORSION_ARM * self.area.size()
            self._arm_area = self.area
        return self._arm

    def hat_row_z(self) -> np.ndarray:
        """ĥ_Cfz of Eq. 36 (plus the spinning moment, Eq. 30)."""
        h = self.G[VZ].copy()
        if not self.sticking:
            h -= self.material.mu_d * (self.slip_dir[0] * self.G[VX] + self.slip_dir[1] * self.G[VY])
        if self.spin != 0.0:
            h += self.spin * self.material.mu_d * self.torsion_arm() * self.G[WZ]
        return h

    def full_wrench(self, lam: np.ndarray) -> np.ndarray:
        """Wrench (f, n) in the virtual-link frame at its origin from the row forces."""
        f = np.zeros(6)
        f[list(self.components())] = lam
        if not self.sticking:
            f[VX] = -self.material.mu_d * self.slip_dir[0] * f[VZ]
            f[VY] = -self.material.mu_d * self.slip_dir[1] * f[VZ]
        if self.spin != 0.0:
            f[WZ] = self.spin * self.material.mu_d * self.torsion_arm() * f[VZ]
        return f


class HardRows(NamedTuple):
    """Hard one-sided provider rows in solver form (see constraint_rows.py)."""

    jacobian: np.ndarray  # (k, nv)
    drift: np.ndarray  # (k,)
    violation: np.ndarray  # (k,)
    desired_acceleration: np.ndarray  # (k,)
    restitution: np.ndarray  # (k,)


class SolveReport(NamedTuple):
    """x: accelerations or post-impact velocities (nv,); hard_lambda: force per hard row (k,)
    (0 for released rows); rounds: checked solves done; validated: the last checked solve
    passed every check; rank_deficient: a checked solve met a singular B; bounded: x and the
    forces come from the bounded solve (bounded_solve.py), which replaced a checked solve
    that was rank deficient or still failed its checks after the rounds."""

    x: np.ndarray
    hard_lambda: np.ndarray
    rounds: int
    validated: bool
    rank_deficient: bool
    bounded: bool = False


_NO_ROWS = np.zeros(0, dtype=np.int64)
SLIDING_SPEED = Thresholds().separating  # a contact faster than this slides (bounded friction)


def _assemble(contacts: list[ActiveContact], hard: HardRows, hard_active: np.ndarray, rhs_of) -> tuple:
    """Stack the constrained rows H_C, the modified rows Ĥ_C (Eq. 36; the same array when
    nothing slips or spins) and the desired row values of all contacts and hard rows."""
    nv = hard.jacobian.shape[1]
    plan = []
    row = 0
    modified = False
    for c in contacts:
        if c.released:
            continue
        comps = c.components()
        plan.append((c, row, comps))
        row += len(comps)
        modified |= (not c.sticking) or c.spin != 0.0
    idx = np.flatnonzero(hard_active) if len(hard_active) else _NO_ROWS
    k = row + len(idx)
    H = np.empty((k, nv))
    rhs = np.empty(k)
    Hh = np.empty((k, nv)) if modified else H
    layout = []
    for c, r0, comps in plan:
        n = len(comps)
        np.take(c.G, comps, axis=0, out=H[r0 : r0 + n])
        rhs[r0 : r0 + n] = rhs_of(c, comps)
        if modified:
            Hh[r0 : r0 + n] = H[r0 : r0 + n]
            Hh[r0] = c.hat_row_z()
        layout.append((c, r0, n))
    if len(idx):
        H[row:] = hard.jacobian[idx]
        rhs[row:] = rhs_of(None, idx)
        if modified:
            Hh[row:] = H[row:]
    return H, Hh, rhs, layout, idx, row


def solve_with_checks(
    contacts: list[ActiveContact],
    hard: HardRows,
    hard_active: np.ndarray,
    M_factor,
    base: np.ndarray,
    rhs_of,
    next_tangential_velocity,
    ws,
    gains: Gains,
    max_rounds: int = 3,
    release_tolerance: float = np.inf,
    hard_warm: np.ndarray | None = None,
    bounded_slop: float = 0.0,
    bounded_hard_rhs: np.ndarray | None = None,
    impulse: bool = False,
) -> SolveReport:
    """Solve Eq. 20a/20b (or Eq. 18-19) and apply the validity checks of 4.4-4.6.

    rhs_of(contact, comps) -> desired row values (for hard rows: contact None, comps = row
    indices); next_tangential_velocity(contact, x) -> (2,) v_x, v_y after the step.
    release_tolerance: how much faster than its row asks a released contact may approach
    (in the row's unit) before the solve counts as failed; the simulator checks the impulse
    phase (m/s: a released contact must not go on into the surface) and passes inf for the
    acceleration phase, where a contact within the tolerance band that falls faster than
    its critically damped approach asks simply touches down at the next step.
    Contacts are modified in place (released, reduced, sticking/slipping/spinning, lam).
    hard_warm: the acceleration phase's warm start of the bounded solve (the hard rows' forces
    of the previous step; the contacts' from their memory); None: the impulse phase, from 0.
    bounded_slop, bounded_hard_rhs: in the acceleration phase the bounded solve corrects the
    contacts' position errors beyond bounded_slop [m] only (the contact tolerance), and
    bounded_hard_rhs (all hard rows) are the hard rows' desired values corrected the same
    way (step_kernel._bounded).
    impulse: the impulse phase (an area whose p_v leaves its hull sends the phase to the
    bounded solve; the bounded solve's friction takes the whole disc).
    """
    has_hard = len(hard_active) > 0
    hard_active = hard_active.copy() if has_hard else hard_active
    built = [c.area for c in contacts]  # the areas as built: the bounded solve's
    validated = False
    rank_def = False
    rounds = 0
    x = base
    hard_lam = np.zeros(len(hard_active))
    for rounds in range(1, max_rounds + 1):
        H, H_hat, rhs, layout, hidx, nrow = _assemble(contacts, hard, hard_active, rhs_of)
        sol = solve_constrained(M_factor, H, H_hat, rhs, base)
        if sol.rank_deficient:  # redundant rows: the least-squares λ is not a contact force
            rank_def = True
            break
        x = sol.x
        for c, r0, n in layout:
            c.lam = c.full_wrench(sol.lam[r0 : r0 + n])
        apply = rounds < max_rounds
        changed = False
        to_bounded = False
        for c, _, _ in layout:
            check = _check(c, x, next_tangential_velocity, ws, gains, apply, impulse)
            changed |= check != VALID
            to_bounded |= check == TO_BOUNDED
        if to_bounded:
            break
        if has_hard:
            hard_lam[:] = 0.0
            hard_lam[hidx] = sol.lam[nrow:]
            neg = hidx[sol.lam[nrow:] < 0.0]
            if len(neg):
                changed = True
                if apply:
                    hard_active[neg] = False
        if not impulse:  # a released guard that the step would end deeper takes part
            for c in contacts:
                if c.guard and c.released and c.G[VZ] @ x < rhs_of(c, (VZ,))[0] - release_tolerance:
                    changed = True
                    if apply:
                        c.released = False
        if not changed:
            validated = True
            break
    if validated:  # the other half of check (1): a released contact must not go on approaching
        for c in contacts:
            if c.released:
                target = rhs_of(c, (VZ,))[0]
                if c.G[VZ] @ x < target - release_tolerance:
                    validated = False
                    break
    if validated and not impulse:  # a reduced area whose other points would go in does not hold
        validated = not any(c.area is not area and _driven_in(c, area, x, ws) for c, area in zip(contacts, built))
    if not validated:  # never integrate a solve that failed its checks
        if bounded_slop > 0.0:
            for c in contacts:
                c.sticking = True
                c.set_desired(gains, bounded_slop)
            if bounded_hard_rhs is not None:
                plain = rhs_of

                def rhs_of(c, comps):
                    return bounded_hard_rhs[comps] if c is None else plain(c, comps)

        x, hard_lam = _bounded(contacts, hard, M_factor, base, rhs_of, hard_warm, impulse)
        if not impulse:  # an area the rounds reduced, driven in where built: taken back, solved again
            again = False
            for c, area in zip(contacts, built):
                if c.area is not area and _driven_in(c, area, x, ws):
                    c.area = area
                    c.refresh(ws)
                    again = True
            if again:
                for c in contacts:
                    c.sticking = True
                    c.set_desired(gains, bounded_slop)
                x, hard_lam = _bounded(contacts, hard, M_factor, base, rhs_of, hard_warm, impulse)
        return SolveReport(x, hard_lam, rounds, False, rank_def, True)
    for c in contacts:
        if c.released:
            c.lam = np.zeros(6)
    return SolveReport(x, hard_lam, rounds, validated, rank_def)


def _driven_in(c: ActiveContact, built: ContactArea, x: np.ndarray, ws) -> bool:
    """Whether accelerations x would end a point of c's area as built deeper than the surface
    (g > 0) or than it starts (g <= 0), by more than RELEASE_MARGIN of normal acceleration
    (step_kernel._driven_in). c is left as it was."""
    reduced = c.area
    saved = c.G.copy(), c.drift.copy(), c.vel.copy(), c.slip_dir.copy(), c.rolling
    c.area = built
    c.refresh(ws)
    lin, ang = c.G[VZ] @ x + c.drift[VZ], c.G[3:5] @ x + c.drift[3:5]
    w = c.vel[3:]
    px, py = built.xy[:, 0], built.xy[:, 1]
    vn = c.vel[VZ] + w[0] * py - w[1] * px
    an = lin + ang[0] * py - ang[1] * px + w[2] * (w[0] * px + w[1] * py)
    dt = c.dt
    c.area = reduced
    c.G[:], c.drift[:], c.vel[:], c.slip_dir[:], c.rolling = saved
    return bool(np.any(an < -2.0 * (np.maximum(built.gap, 0.0) + vn * dt) / dt**2 - RELEASE_MARGIN))


_BLOCK_OF_KIND = {ContactKind.POINT: BLOCK_POINT, ContactKind.LINE: BLOCK_LINE, ContactKind.SURFACE: BLOCK_SURFACE}


def _bounded(contacts: list[ActiveContact], hard: HardRows, M_factor, base: np.ndarray, rhs_of, hard_warm=None,
             impulse: bool = False):
    """The bounded solve of every contact (sticking rows, released ones taken back) and every
    hard row; the contacts get their wrench and their state from it: released where f_z = 0,
    slipping where |f_t| reached its bound (μ_s f_z on a disc in the acceleration phase, μ_d f_z
    on a sliding contact's half-disc and in an impulse; direction -f_t), spinning where |n_z|
    reached its bound. A contact sliding at the acceleration phase's start has its friction in
    the half-disc that does not push along the sliding; one released while approaching has its
    friction widened (half-disc to disc, disc to none) and the solve runs again; an impulse's
    friction takes the whole disc."""
    nv = len(base)
    H, rhs, start, kind, mu, arm, hull, hull_start, slip = [], [], [0], [], [], [], [], [0], []
    layout = []
    for c in contacts:
        c.released = False
        c.sticking = True
        c.spin = 0.0
        comps = c.components()
        layout.append((c, start[-1], comps))
        H.append(c.G[list(comps)])
        rhs.append(rhs_of(c, comps))
        start.append(start[-1] + len(comps))
        kind.append(_BLOCK_OF_KIND[c.area.kind])
        arm.append(c.torsion_arm())
        vt = c.vel[:2]
        speed = float(np.hypot(*vt))
        sliding = speed > SLIDING_SPEED and not impulse
        slip.append(vt / speed if sliding else np.zeros(2))
        # not sliding in the acceleration phase: the static bound (step_kernel._bounded_rows)
        mu.append(c.material.mu_s if not (impulse or sliding) else c.material.mu_d)
        hxy = c.area.hull_xy
        hull.append(hxy)
        hull_start.append(hull_start[-1] + len(hxy))
    n_hard = len(hard.drift)
    nrow_contacts = start[-1]
    if n_hard:
        idx = np.arange(n_hard)
        H.append(hard.jacobian)
        rhs.append(rhs_of(None, idx))
        for _ in range(n_hard):
            start.append(start[-1] + 1)
            kind.append(BLOCK_ONE_SIDED)
            mu.append(0.0)
            arm.append(0.0)
            slip.append(np.zeros(2))
            hull_start.append(hull_start[-1])
    nb = len(kind)
    rows = BoundedRows(
        np.ascontiguousarray(np.concatenate(H) if H else np.zeros((0, nv))),
        np.concatenate(rhs).astype(float) if rhs else np.zeros(0),
        np.array(start, dtype=np.int64),
        np.array(kind, dtype=np.int64),
        np.array(mu, dtype=float).reshape(nb),
        np.array(arm, dtype=float).reshape(nb),
        np.zeros(nb),
        np.ascontiguousarray(np.concatenate(hull) if hull else np.zeros((0, 2))),
        np.array(hull_start, dtype=np.int64),
        np.array(slip, dtype=float).reshape(nb, 2),
    )
    x = np.empty(nv)
    lam = np.zeros(len(rows.rhs))
    if hard_warm is not None:  # the acceleration phase starts from the previous step's forces
        for c, r0, comps in layout:
            if c.memory is not None:
                lam[r0 : r0 + len(comps)] = c.memory.warm_wrench(c.area.R_world_vl, c.area.origin)[list(comps)]
        lam[nrow_contacts:] = hard_warm
    base = np.ascontiguousarray(base, dtype=float)
    work = bounded_work(len(rows.rhs), nv, len(rows.hull_xy))
    bounded_solve_nb(rows, *M_factor, base, BOUNDED_REGULARISATION, BOUNDED_SWEEPS, BOUNDED_TOLERANCE, x, lam, work,
                     not impulse)  # accelerations: a converged iterate as it is
    # released while approaching: its friction widens (half-disc to disc, disc to none), solved again
    for _ in range(2):
        again = False
        for b, (c, r0, comps) in enumerate(layout):
            if lam[r0] <= 0.0 and rows.mu[b] > 0.0 and rows.H[r0] @ x < rows.rhs[r0] - RELEASE_MARGIN:
                if np.any(rows.slip[b] != 0.0):
                    rows.slip[b] = 0.0
                else:
                    rows.mu[b] = 0.0
                again = True
        if not again:
            break
        bounded_solve_nb(rows, *M_factor, base, BOUNDED_REGULARISATION, BOUNDED_SWEEPS, BOUNDED_TOLERANCE, x, lam, work,
                         not impulse)
    for b, (c, r0, comps) in enumerate(layout):
        f = np.zeros(6)
        f[list(comps)] = lam[r0 : r0 + len(comps)]
        c.lam = f
        fz = f[VZ]
        if fz <= 0.0:
            c.released = True
            c.lam = np.zeros(6)
            continue
        ft = np.hypot(f[VX], f[VY])
        if ft >= rows.mu[b] * fz * (1.0 - 1e-9) and ft > 0.0:
            c.sticking = False
            c.slip_dir[:] = -f[VX:VZ] / ft
        if c.area.kind != ContactKind.POINT and abs(f[WZ]) >= rows.mu[b] * fz * c.torsion_arm() * (1.0 - 1e-9):
            c.spin = float(np.sign(f[WZ]))
    return x, lam[nrow_contacts:].copy()


VALID, CHANGED, TO_BOUNDED = 0, 1, 2  # _check's verdicts


def _check(c: ActiveContact, x: np.ndarray, next_vt, ws, gains: Gains, apply: bool, impulse: bool = False) -> int:
    """One contact's validity checks (4.4, 4.5): VALID, CHANGED when its state must change,
    or TO_BOUNDED: an impulse whose p_v leaves the hull goes to the bounded solve."""
    f = c.lam
    fz = f[VZ]
    mat = c.material
    if fz <= 0.0:  # (1) the bodies separate by themselves, unless held sticking while sliding: it slips first
        speed = float(np.hypot(c.vel[0], c.vel[1]))
        if not impulse and c.sticking and speed > SLIDING_SPEED:
            if apply:
                c.sticking = False
                c.slip_dir[:] = c.vel[:2] / speed
                c.set_desired(gains)
            return CHANGED
        if apply:
            c.released = True
        return CHANGED
    if c.area.kind != ContactKind.POINT:  # (2) p_v of Eq. 26 inside the hull
        pv = np.array([-f[WY] / fz, f[WX] / fz])
        inside, feature = nearest_on_hull(c.area, pv)
        if not inside:  # (the feature is a vertex -> point contact, an edge -> line contact)
            if impulse:
                return TO_BOUNDED
            if apply:
                c.area = reduce_area(c.area, feature)
                c.refresh(ws)
                c.set_desired(gains)
            return CHANGED
    if c.sticking:  # (3) friction, Eq. 31-33
        speed = float(np.hypot(c.vel[0], c.vel[1]))
        pushing = f[VX] * c.vel[0] + f[VY] * c.vel[1] > 0.0
        if not impulse and not c.stopping and speed > SLIDING_SPEED and pushing:
            # held sticking while it slides, its friction pushing along the sliding: it slides,
            # its friction against the sliding (a stopping one keeps its friction)
            if apply:
                c.sticking = False
                c.slip_dir[:] = c.vel[:2] / speed
                c.memory = None if c.memory is None else replace(c.memory, sticking=False)
                c.set_desired(gains)
            return CHANGED
        ft = np.hypot(f[VX], f[VY])
        if ft > mat.mu_s * fz:
            if apply:
                c.sticking = False
                c.slip_dir[:] = -f[VX:VZ] / ft  # Eq. 32
            return CHANGED
        if c.area.kind != ContactKind.POINT and c.spin == 0.0:
            nzs = mat.mu_s * fz * c.torsion_arm()
            if abs(f[WZ]) > nzs:
                if apply:
                    c.spin = float(np.sign(f[WZ]))
                return CHANGED
    else:
        vt = next_vt(c, x)
        if vt @ c.slip_dir < 0.0:  # the slip would reverse within the step: it stops
            if apply:
                c.sticking = True
                c.stopping = True
                # no anchor to hold; the remembered wrench stays the bounded solve's warm start
                c.memory = None if c.memory is None else replace(c.memory, sticking=False)
                c.set_desired(gains)
            return CHANGED
    return VALID
