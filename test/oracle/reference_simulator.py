"""The former Python step of the simulator, kept as a test oracle only.

``ReferenceSimulator`` is a ``Simulator`` whose ``step`` runs the Python implementation of
steps 2-5 (contacts as ``ActiveContact`` objects, ``solve_with_checks`` of
test/oracle/contact_solver.py) instead of the compiled step (contact/step_kernel.py). The
two implement the same method independently; test/simulator/test_step_kernel.py checks
that they agree. Not part of the package.
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.balance.zmp import ZmpReport, zmp_report
from humanoid_sim.contact.constrained_solve import SimulationError, factor_mass_matrix, mass_solve
from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.contact.detection import ContactPatch
from humanoid_sim.contact.environment import Material
from humanoid_sim.contact.kernels import all_finite
from humanoid_sim.contact.kernels import guard_acceleration_nb
from humanoid_sim.contact.step_kernel import CALM_PASSES, IMPULSE_PASSES, RELEASE_MARGIN, WATCH_PASSES, speculative_band_nb
from humanoid_sim.contact.virtual_link import ContactArea, ContactKind, classify_patch
from humanoid_sim.dynamics.integrator import (
    held_forces_nb,
    held_wrenches,
    hold_wrench_nb,
    lock_stops_nb,
    release_held_wrenches_nb,
    rk4_step_nb,
)
from humanoid_sim.simulator.link_wrenches import generalized_force
from humanoid_sim.simulator.simulator import ContactReport, Simulator, StepResult

from oracle.contact_solver import ActiveContact, ContactMemory, HardRows, solve_with_checks


class ReferenceSimulator(Simulator):
    """The simulator with the Python reference step (module docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        env = self.config.environment
        self._reference_materials = ([env.ground.material] if env.ground else []) + [b.material for b in env.boxes]
        self._reference_memory: dict[tuple[int, int, int], ContactMemory] = {}
        self._ground_element = 0 if env.ground is not None else -1
        self._zero_nv = np.zeros(self.model.nv)
        z = np.zeros(0)
        self._no_hard_rows = HardRows(np.zeros((0, self.model.nv)), z, z, z, z)

    def set_state(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> None:
        super().set_state(q, v, t)
        self._reference_memory = {}

    def step(self, tau=None, external_force=None, link_wrenches=None) -> StepResult:
        model = self.model
        nj = model.nj
        tau_j = np.zeros(nj) if tau is None else np.asarray(tau, dtype=float)
        tau_j = np.minimum(np.maximum(tau_j, self._actuation.lower), self._actuation.upper)
        ext = None if external_force is None else np.asarray(external_force, dtype=float)
        if link_wrenches:
            pushed = generalized_force(model, self._q, link_wrenches)
            ext = pushed if ext is None else ext + pushed
        self._update_dynamics(self._q, self._v)
        factor_mass_matrix(self.ws.M, self._tree.dof_parent, self._solve_scratch.L)  # the velocity-limit rule's factor
        if self._actuation.ruled[0]:
            tau_j = self._limit_velocity(tau_j, ext)
        rows = [p.rows(self._q, self._v) for p in self.providers]
        return self._step_general(tau_j, ext, rows)

    def _step_general(self, tau_j: np.ndarray, ext: np.ndarray | None, rows: list[OneSidedRows]) -> StepResult:
        """Any step (impulses, slipping, spinning, area reductions, provider rows); ws is
        already updated at (q, v) and rows are the providers' rows at (q, v)."""
        model, ws, cfg = self.model, self.ws, self.config
        dt, thr, tol = cfg.dt, cfg.thresholds, cfg.contact_tolerance
        q, v = self._q, self._v
        nj = model.nj
        M_factor = factor_mass_matrix(ws.M, self._tree.dof_parent)
        band = max(cfg.speculative_distance, speculative_band_nb(ws.V, ws.p, self._reach, dt))
        self.detector.tolerance = cfg.contact_tolerance + band
        patches = self.detector.detect(ws.R, ws.p)
        # the deepest point in the band, in a contact or not
        max_pen = max([0.0] + [-float(p.gap.min()) for p in patches])
        contacts = self._contacts(patches)
        hard, hard_map, soft_force = self._reference_provider_rows(rows, v)

        # 3. impulses (Eq. 18-19), in passes: the contacts built again at v+ after each one,
        # another pass while something approaches faster than it may (step_kernel._virtual_link_nb)
        impulses: dict[tuple[int, int, int], np.ndarray] = {}
        hard_impulse = np.zeros(len(hard.drift))
        v_plus = v
        hv = hard.jacobian @ v
        approaching = any(self._approaching(c) for c in contacts if not c.guard) or self._hard_approaching(hard, hv)
        impulse_ran = False
        bounded = False
        for p in range(IMPULSE_PASSES if approaching else 0):
            impulse_ran = True

            def rhs_impulse(c, comps, hv=hv):
                if c is None:  # rows as contacts: bounce, stop, or arrive at the limit (speculative)
                    out = np.where(hv[comps] < -thr.bounce, -hard.restitution[comps] * hv[comps], 0.0)
                    ahead = (hard.violation[comps] < -tol) & (out <= 0.0)
                    return np.where(ahead, hard.violation[comps] / dt, out)
                out = np.zeros(len(comps))
                vz = c.vel[2]
                gap = float(c.area.gap.min())
                if vz < -thr.bounce:  # Eq. 15: only the normal direction bounces
                    out[0] = -c.material.restitution * vz
                if gap > tol and out[0] <= 0.0:  # speculative and not bouncing: it arrives at
                    out[0] = -gap / dt  # the surface at the end of the step
                return out

            solving = [c for c in contacts if not c.released]  # not those that bounced off
            rep = solve_with_checks(
                solving, hard, self._hard_active(hard, hv), M_factor, v_plus, rhs_impulse,
                lambda c, x: c.G[:2] @ x, ws, self.gains, cfg.max_rounds, thr.impact, impulse=True,
            )  # fmt: skip
            v_plus = rep.x
            hard_impulse = hard_impulse + rep.hard_lambda
            bounded |= rep.bounded
            for c in solving:
                if not c.released:
                    key = c.area.patch.key
                    impulses[key] = impulses[key] + c.lam if key in impulses else c.lam.copy()
            self._update_dynamics(q, v_plus)
            last = p == IMPULSE_PASSES - 1
            hv = hard.jacobian @ v_plus
            before = contacts
            contacts = self._contacts(patches)
            if p >= CALM_PASSES - 1:  # later passes only for what the step would take through the band
                approaching = not last and (
                    any(self._plunging(c) for c in contacts if not c.guard) or self._hard_plunging(hard, hv)
                )
            else:
                approaching = not last and (
                    any(self._approaching(c) for c in contacts if not c.guard) or self._hard_approaching(hard, hv)
                )
            kept = {c.area.patch.key for c in contacts if not c.guard}
            for c in before:  # bounced off: reported with its impulse only
                if not c.guard and c.area.patch.key in impulses and c.area.patch.key not in kept:
                    c.released = True
                    contacts.append(c)
            if not approaching:
                break

        # speculative contacts that took no impulse take part in the acceleration phase as
        # the guards of their nearest points only
        for c in contacts:
            if not (c.released or c.area.patch.key in impulses or c.area.gap.min() <= tol):
                self._to_guard(c)

        # 4. accelerations and wrenches (Eq. 20a, 20b)
        tau_full = np.zeros(model.nv)
        tau_full[model.nv - nj :] = tau_j
        tau_full += soft_force
        if ext is not None:
            tau_full += ext
        a0 = mass_solve(M_factor, tau_full - self._damping * v_plus - ws.b)
        # not those that bounced off in the impulse; the guards, released, checked by the solve
        solving = [c for c in contacts if not c.released or c.guard]
        for c in solving:
            c.set_desired(self.gains)
        kp, kd = self.gains
        cap = kd * thr.max_correction

        def hard_targets(violation):
            """Eq. 20b's critically damped correction of ``violation``, the stiff term capped;
            a row at or past its limit moving out faster than that correction drives it: the
            acceleration that ends the step no deeper than it starts (-2 hv / dt)."""
            eq20b = hard.desired_acceleration + np.clip(kp * violation, -cap, cap) - kd * hv - hard.drift
            drive = np.minimum(2.0 * kd * np.maximum(violation, 0.0), thr.max_correction)
            out = (hard.violation >= -tol) & (hv > thr.separating + drive)
            return np.where(out, hard.desired_acceleration - 2.0 * hv / dt - hard.drift, eq20b)

        hard_rhs = hard_targets(hard.violation) if len(hv) else hv
        # the bounded solve corrects the violations beyond the contact band only (step_kernel._bounded)
        shrunk = np.sign(hard.violation) * np.maximum(np.abs(hard.violation) - tol, 0.0) if len(hv) else hv
        bounded_hard_rhs = hard_targets(shrunk) if len(hv) else hv
        # a row short of its limit: the acceleration that ends the step at it (step_kernel._watch_hard)
        ahead = hard.violation < -tol
        hard_guard = hard.desired_acceleration - hard.drift
        hard_guard += [guard_acceleration_nb(-g, r, dt) for g, r in zip(hard.violation, hv)]
        bounded_hard_rhs = np.where(ahead, np.maximum(bounded_hard_rhs, hard_guard), bounded_hard_rhs)

        def rhs_accel(c, comps):
            if c is None:
                return hard_rhs[comps]
            idx = list(comps)
            return c.desired[idx] - c.drift[idx]

        def next_vt(c, a):
            return c.vel[:2] + dt * (c.G[:2] @ a + c.drift[:2])

        # rows still short of their limit (speculative) take part in impulses only; every row at
        # or past it takes part here (one moving out with the target of hard_targets)
        active = hard.violation >= -tol
        warm = self._last_hard_force
        hard_warm = np.array([warm.get(r.names[i], 0.0) for r, (_, idx) in zip(rows, hard_map) for i in idx])
        rep = solve_with_checks(
            solving, hard, active, M_factor, a0, rhs_accel, next_vt, ws, self.gains, cfg.max_rounds, RELEASE_MARGIN, hard_warm,
            tol, bounded_hard_rhs,
        )
        a = rep.x
        # the watched points that a would drive in, taken into the solve as guards, and the
        # solve again (step_kernel._watch_points)
        watched = 0
        for _ in range(WATCH_PASSES):
            driven = [g for g in self._watch if self._driven_in(g, a)]
            # and the rows short of their limit that a would carry past it (step_kernel._watch_hard)
            carried = ~active & (hard.jacobian @ a < hard_guard - RELEASE_MARGIN) if len(hv) else active
            active = active | carried
            hard_rhs[carried] = hard_guard[carried]
            if not driven and not carried.any():
                break
            watched += len(driven)
            self._watch = [g for g in self._watch if not any(g is h for h in driven)]
            for g in driven:
                g.released = False
                g.set_desired(self.gains)
            contacts += driven
            solving += driven
            rep = solve_with_checks(
                solving, hard, active, M_factor, a0, rhs_accel, next_vt, ws, self.gains, cfg.max_rounds, RELEASE_MARGIN,
                hard_warm, tol, bounded_hard_rhs,
            )
            a = rep.x
        # 5. integration (dynamics/integrator.py) with the constraint force Hᵀλ = M (a - a0)
        # held over the step beside the joint torques, the contacts' wrenches on their points
        q_next = np.empty(model.nq)
        v_next = np.empty(model.nv)
        tau_c = np.empty(model.nv)
        held_forces_nb(ws.M, a, a0, tau_full, tau_c)
        held = held_wrenches(len(contacts))
        for c in contacts:
            if not c.released:
                lift = float(np.max(c.area.roll[:, 0])) if c.rolling else 0.0
                hold_wrench_nb(held, ws.R, ws.p, c.body, c.area.origin, lift, c.area.R_world_vl, c.lam, 1.0)
        if len(hv):  # joints held on their stops locked at their accelerations (integrator.lock_stops_nb)
            lock_stops_nb(self._tree, self._stage, np.ascontiguousarray(hard.jacobian, dtype=float),
                          np.ascontiguousarray(rep.hard_lambda, dtype=float), len(hv), a, tau_c)
        release_held_wrenches_nb(self._tree, self._stage, held, ws.R, ws.p, ws.S, tau_c)
        stages = rk4_step_nb(self._tree, self._stage, held, q, v_plus, a, tau_c, self._damping, dt, q_next, v_next)
        self._stage.locked[:] = 0
        if not (all_finite(q_next) and all_finite(v_next)):
            raise SimulationError(f"step at t = {self._t:.6f} s produced a non-finite state")

        # reports, memory, commit
        reports, memory = self._reports(contacts, impulses, dt)
        zmp = self._zmp(reports)
        forces = self._reference_provider_forces(rows, hard_map, rep.hard_lambda + hard_impulse / dt, soft_force, v_next)
        self._reference_memory = memory
        self._last_hard_force = {
            r.names[i]: float(rep.hard_lambda[start + t]) for r, (start, idx) in zip(rows, hard_map) for t, i in enumerate(idx)
        }  # fmt: skip
        self._q, self._v, self._t = q_next, v_next, self._t + dt
        for p, f in zip(self.providers, forces):
            p.accept_forces(f)
        return StepResult(
            self._t, q_next.copy(), v_next.copy(), tau_j, tuple(reports), zmp, rep.rounds, rep.validated and not bounded,
            impulse_ran, max_pen, tuple(forces), a.copy(), "bounded" if bounded or rep.bounded else "checked", 0, watched,
            stages,
        )  # fmt: skip

    # ------------------------------------------------------------- helpers
    def _approaching(self, c: ActiveContact) -> bool:
        """Faster than the impact threshold, or, speculative (gap g above the tolerance), faster
        than arriving at the surface within the step by more than that."""
        cfg = self.config
        g = float(c.area.gap.min())
        allowed = g / cfg.dt if g > cfg.contact_tolerance else 0.0
        return bool(c.vel[2] < -allowed - cfg.thresholds.impact)

    def _plunging(self, c: ActiveContact) -> bool:
        """Approaching, and so fast that the step would take its nearest point deeper than the
        contact tolerance: g + v_z dt < -tolerance."""
        cfg = self.config
        return self._approaching(c) and float(c.area.gap.min()) + c.vel[2] * cfg.dt < -cfg.contact_tolerance

    def _hard_approaching(self, hard: HardRows, hv: np.ndarray) -> bool:
        """A hard row approaching faster than the impact threshold, or, short of its limit,
        faster than arriving at it within the step by more than that."""
        if not len(hv):
            return False
        cfg = self.config
        ahead = hard.violation < -cfg.contact_tolerance
        allowed = np.where(ahead, hard.violation / cfg.dt, 0.0)
        return bool(np.any(hv < allowed - cfg.thresholds.impact))

    def _hard_plunging(self, hard: HardRows, hv: np.ndarray) -> bool:
        """A hard row approaching faster than it may (_hard_approaching), so fast that the step
        would take it past its limit by more than the tolerance: -violation + ġ dt < -tolerance."""
        if not len(hv):
            return False
        cfg = self.config
        gap = -hard.violation
        allowed = np.where(gap > cfg.contact_tolerance, gap / cfg.dt, 0.0)
        fast = hv < -allowed - cfg.thresholds.impact
        return bool(np.any(fast & (gap + hv * cfg.dt < -cfg.contact_tolerance)))

    def _hard_active(self, hard: HardRows, hv: np.ndarray) -> np.ndarray:
        """Hard rows in the solve: not separating faster than the correction of Eq. 20b drives them."""
        if not len(hv):
            return np.zeros(0, dtype=bool)
        return hv < self.config.thresholds.separating + self._correction_rate * np.maximum(0.0, hard.violation)

    def _driven_in(self, g: ActiveContact, a: np.ndarray) -> bool:
        """Whether accelerations a would end watched point g deeper than the surface or than it
        starts, by more than RELEASE_MARGIN of normal acceleration."""
        an = float(g.G[2] @ a + g.drift[2])
        return an < guard_acceleration_nb(float(g.area.gap[0]), float(g.vel[2]), self.config.dt) - RELEASE_MARGIN

    def _point_guard(self, patch: ContactPatch, i: int) -> ActiveContact:
        """A guard (step_kernel._build_contacts) of point i of patch: frictionless, no memory,
        released."""
        one = slice(i, i + 1)
        point = patch._replace(points=patch.points[one], local=patch.local[one], gap=patch.gap[one], roll=patch.roll[one])
        material = Material(0.0, 0.0, self._reference_materials[patch.element].restitution)
        guard = ActiveContact(classify_patch(point), material, self.ws, None, self.config.contact_tolerance, self.config.dt)
        guard.guard, guard.sticking, guard.released = True, False, True
        return guard

    def _contacts(self, patches: list[ContactPatch]) -> list[ActiveContact]:
        """Active contacts at the workspace state: separating points dropped, areas classified.
        Points farther than contact_tolerance are speculative: kept only
        when they would come within it during the step at their normal velocity. Of the points
        a patch dropped, the two that would end the step deepest at their velocities are
        guards after the patch's contact: frictionless point contacts, released
        (step_kernel._build_contacts); its other dropped points are watched (self._watch)."""
        ws, sep = self.ws, self.config.thresholds.separating
        tol, dt = self.config.contact_tolerance, self.config.dt
        out = []
        self._watch = []
        for patch in patches:
            V = ws.V[patch.body]
            # normal velocity of each point: (v_O + w x p) . n = v_O . n + p . (n x w)
            n = patch.normal
            w = V[3:]
            nxw = np.array([n[1] * w[2] - n[2] * w[1], n[2] * w[0] - n[0] * w[2], n[0] * w[1] - n[1] * w[0]])
            vn = V[:3] @ n + patch.points @ nxw
            # a penetrating point moving out no faster than the correction of Eq. 20b
            # drives it (about 2 w |gap|) is being corrected, not separating
            near = patch.gap <= tol
            keep = near & (vn <= sep + self._correction_rate * np.maximum(0.0, -patch.gap))
            keep |= ~near & (patch.gap + vn * dt < tol)
            nkeep = int(np.count_nonzero(keep))
            if nkeep:
                kept = patch
                if nkeep < len(keep):
                    kept = patch._replace(points=patch.points[keep], local=patch.local[keep], gap=patch.gap[keep], roll=patch.roll[keep])
                area = classify_patch(kept)
                out.append(ActiveContact(area, self._reference_materials[patch.element], ws, self._reference_memory.get(patch.key),
                                         tol, dt))  # fmt: skip
            dropped = np.flatnonzero(~keep)  # the two that would end the step deepest
            guarded = dropped[np.argsort(patch.gap[dropped] + vn[dropped] * dt, kind="stable")[:2]]
            out += [self._point_guard(patch, i) for i in guarded]
            self._watch += [self._point_guard(patch, i) for i in dropped if i not in guarded]
        return out

    def _to_guard(self, c: ActiveContact) -> None:
        """c becomes the guard of the point that would end the step nearest the surface at its
        velocity: frictionless, no memory, released (step_kernel._to_guard)."""
        a, vel = c.area, c.vel
        i = int(np.argmin(a.gap + (vel[2] + vel[3] * a.xy[:, 1] - vel[4] * a.xy[:, 0]) * self.config.dt))
        for j in range(len(a.gap)):  # its other points watched
            if j != i:
                g = ActiveContact(a, Material(0.0, 0.0, c.material.restitution), self.ws, None, c.tolerance, c.dt)
                g.area = ContactArea(a.patch, ContactKind.POINT, a.R_world_vl, a.origin + a.R_world_vl[:, :2] @ a.xy[j],
                                     np.zeros((1, 2)), a.gap[j : j + 1], np.array([0]), a.roll[j : j + 1])  # fmt: skip
                g.guard, g.sticking, g.released, g.spin = True, False, True, 0.0
                g.refresh(self.ws)
                self._watch.append(g)
        c.area = ContactArea(a.patch, ContactKind.POINT, a.R_world_vl, a.origin + a.R_world_vl[:, :2] @ a.xy[i],
                             np.zeros((1, 2)), a.gap[i : i + 1], np.array([0]), a.roll[i : i + 1])  # fmt: skip
        c.material = Material(0.0, 0.0, c.material.restitution)
        c.memory = None
        c.guard, c.sticking, c.released, c.spin = True, False, True, 0.0
        c.refresh(self.ws)

    def _reference_provider_rows(self, rows: list[OneSidedRows], v: np.ndarray):
        nv = self.model.nv
        if not rows:
            return self._no_hard_rows, [], self._zero_nv
        soft_force = np.zeros(nv)
        hard_map = []
        J, d, viol, des, e = [], [], [], [], []
        count = 0
        for r in rows:
            idx = np.nonzero(r.hard)[0]
            hard_map.append((count, idx))
            count += len(idx)
            J.append(r.jacobian[idx])
            d.append(r.drift[idx])
            viol.append(r.violation[idx])
            des.append(r.desired_acceleration[idx])
            e.append(r.restitution[idx])
            soft = ~r.hard
            if np.any(soft):
                lam = np.maximum(0.0, r.stiffness[soft] * r.violation[soft] - r.damping[soft] * (r.jacobian[soft] @ v))
                soft_force += r.jacobian[soft].T @ lam  # seed 003 Eq. 3.36-3.38 as a known force
        if count == 0:
            z = np.zeros(0)
            return HardRows(np.zeros((0, nv)), z, z, z, z), hard_map, soft_force
        hard = HardRows(np.concatenate(J), np.concatenate(d), np.concatenate(viol), np.concatenate(des), np.concatenate(e))
        return hard, hard_map, soft_force

    def _reference_provider_forces(self, rows, hard_map, hard_lambda, soft_force, v_next) -> list[np.ndarray]:
        out = []
        for r, (start, idx) in zip(rows, hard_map):
            f = np.zeros(r.count)
            f[idx] = hard_lambda[start : start + len(idx)]
            soft = ~r.hard
            if np.any(soft):
                f[soft] = np.maximum(0.0, r.stiffness[soft] * r.violation[soft] - r.damping[soft] * (r.jacobian[soft] @ self._v))
            out.append(f)
        return out

    def _reports(self, contacts: list[ActiveContact], impulses, dt: float):
        reports = []
        memory: dict[tuple[int, int, int], ContactMemory] = {}
        names = self.model.body_names
        for c in contacts:
            key = c.area.patch.key
            imp = None if c.guard else impulses.get(key)
            if imp is None:
                if c.released:
                    continue
                imp = np.zeros(6)
                w = c.lam.copy()
            else:
                w = (c.lam if not c.released else np.zeros(6)) + imp / dt
            R = c.area.R_world_vl
            ww = np.empty(6)
            # summed in the compiled step's order (bit-identical reports on both paths)
            ww[:3] = R[:, 0] * w[0] + R[:, 1] * w[1] + R[:, 2] * w[2]
            ww[3:] = R[:, 0] * w[3] + R[:, 1] * w[4] + R[:, 2] * w[5]
            if w[2] > 0:
                pv = c.area.origin + R[:, 0] * (-w[4] / w[2]) + R[:, 1] * (w[3] / w[2])
            else:
                pv = np.full(3, np.nan)
            reports.append(
                ContactReport(
                    names[c.body], c.body, self._element_names[c.area.patch.element], c.area.kind,
                    bool(c.sticking), c.spin != 0.0, c.area.points_world, c.area.origin.copy(), R.copy(),
                    w, ww, imp, pv,
                )  # fmt: skip
            )
            if c.released or c.guard:  # a guard is not remembered
                continue
            if c.sticking:
                keep = c.memory is not None and c.memory.sticking and c.spin == 0.0 and not c.rolling
                if keep:
                    memory[key] = c.memory
                else:
                    memory[key] = ContactMemory(True, c.R_body, c.p_body, np.zeros(3))
            else:
                s = R[:, :2] @ c.slip_dir
                memory[key] = ContactMemory(False, c.R_body, c.p_body, s)
            memory[key] = memory[key].with_wrench(c.lam, R, c.area.origin)
        return reports, memory

    def _zmp(self, reports: list[ContactReport]) -> ZmpReport:
        g = self._ground_element
        height = self.config.environment.ground.height if g >= 0 else 0.0
        ground = [r for r in reports if g >= 0 and r.element == self._element_names[g]]
        if not ground:
            return zmp_report(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2)), height)
        F = np.array([r.wrench_world[:3] for r in ground])
        N = np.array([r.wrench_world[3:] for r in ground])
        O = np.array([r.origin for r in ground])
        pts = np.concatenate([r.points[:, :2] for r in ground])
        return zmp_report(F, O, N, pts, height)

