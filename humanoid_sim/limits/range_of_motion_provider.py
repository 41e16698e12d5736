"""The joint-limit constraint provider: URDF stops and swing-twist ranges as one-sided rows.

Implements ``humanoid_sim.contact.constraint_rows.ConstraintProvider``: each
step the simulator asks ``rows(q, v)`` for the active limits and hands the
solved row forces back through ``accept_forces``; ``report()`` then gives the
stop torque per joint and the active limits per group.

URDF stop of joint j (revolute or prismatic with finite limits):
    upper: gap = upper - q_j, row = -e_j;  lower: gap = q_j - lower, row = +e_j
(a unit vector on the joint's v column; violation = q - upper or lower - q).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.limits.ball_joint_rows import BallJointKinematics
from humanoid_sim.limits.kernels import rows_screen_nb
from humanoid_sim.limits.range_config import RangeOfMotionConfig, joint_body
from humanoid_sim.model.robot_model import JointType, RobotModel


class LimitReport(NamedTuple):
    """Active limits after the last solve.

    names: label per active row ("knee upper", "l_shoulder swing", ...).
    violation: -gap per row [rad or m], shape (k,).
    force: row force λ >= 0 per row [N m or N], shape (k,).
    joint_torque: generalized limit force on each joint, sum of row_iᵀ λ_i,
        in ``model.joint_names`` order [N m or N], shape (nj,).
    """

    names: tuple[str, ...]
    violation: np.ndarray
    force: np.ndarray
    joint_torque: np.ndarray


class RangeOfMotionProvider:
    """Joint stops and ball-joint ranges of ``model`` as constraint rows.

    model: the robot. config: which limits and how hard (``load_range_of_motion``).
    activation_band: rows are returned when gap < band [rad or m]; a small
        positive band lets the solve hold a joint that rests on its limit
        without a penetrate-then-impact cycle.
    lookahead: [s] also return a row when, at its current rate, the gap would
        fall below the band within this time (gap + lookahead * min(0, ġ) <
        band). The simulator treats such rows speculatively (an impulse lets the
        joint arrive at its limit at the end of the step, not beyond it), so the
        lookahead must cover a step: the default, 2 ms, covers twice the default
        1 ms step; 0 returns only touching or violated rows.
    Raises ValueError (from ``config.check_model``) naming a bad group.
    """

    name = "range_of_motion"

    def __init__(
        self, model: RobotModel, config: RangeOfMotionConfig, activation_band: float = 1e-4, lookahead: float = 2e-3
    ) -> None:
        config.check_model(model)
        self.model = model
        self.config = config
        self.activation_band = float(activation_band)
        if lookahead < 0.0:
            raise ValueError(f"lookahead must be >= 0 [s], got {lookahead}")
        self.lookahead = float(lookahead)
        self.groups = [BallJointKinematics(model, g) for g in config.ball_joints]
        members = {j for g in config.ball_joints for j in g.joints}
        stops = config.joint_stops
        self._stop_joint: list[int] = []  # index into joint_names
        if stops.enabled:
            for j, name in enumerate(model.joint_names):
                if stops.skip_ball_joint_members and name in members:
                    continue
                body = joint_body(model, name)
                if int(model.joint_type[body]) not in (JointType.REVOLUTE, JointType.PRISMATIC):
                    continue
                if np.isfinite(model.limits.lower[j]) or np.isfinite(model.limits.upper[j]):
                    self._stop_joint.append(j)
        stop_bodies = [joint_body(model, model.joint_names[j]) for j in self._stop_joint]
        self._stop_q = np.asarray(model.q_index)[stop_bodies].astype(np.int64) if stop_bodies else np.zeros(0, np.int64)
        self._stop_v = np.asarray(model.v_index)[stop_bodies].astype(np.int64) if stop_bodies else np.zeros(0, np.int64)
        self._stop_lower = np.asarray(model.limits.lower)[self._stop_joint] if stop_bodies else np.zeros(0)
        self._stop_upper = np.asarray(model.limits.upper)[self._stop_joint] if stop_bodies else np.zeros(0)
        self._joint_v = model.joint_v_index
        self._empty = OneSidedRows.empty(model.nv)
        self._last = self._empty
        self._forces = np.zeros(0)
        self._screen_groups = tuple(self.groups)
        self._screen = self._screen_tables()

    def _screen_tables(self) -> tuple | None:
        """Constant arrays of ``rows_screen_nb``: stops and the groups padded to one shape
        (None, i.e. no screen, when the groups' boundaries differ in their sample counts)."""
        G = len(self.groups)
        nmax = max([len(k.group.boundary.coefficients) for k in self.groups], default=1)
        smax = max([k.group.boundary.samples.shape[1] for k in self.groups], default=1)
        g_q = np.zeros((G, 3), np.int64)
        g_v = np.zeros((G, 3), np.int64)
        R_zero, axes, R_ref = np.zeros((G, 3, 3, 3)), np.zeros((G, 3, 3)), np.zeros((G, 3, 3))
        a, e1, e2 = np.zeros((G, 3)), np.zeros((G, 3)), np.zeros((G, 3))
        g_n = np.zeros(G, np.int64)
        samples = np.zeros((G, nmax, smax, 2))
        reach, lo_max, hi_min = np.zeros(G), np.zeros(G), np.zeros(G)
        for i, kin in enumerate(self.groups):
            grp, bnd = kin.group, kin.group.boundary
            n, s = bnd.coefficients.shape[0], bnd.samples.shape[1]
            g_q[i] = kin.q_index
            g_v[i] = kin.v_index
            R_zero[i], axes[i], R_ref[i] = kin.R_zero, kin.axes, kin.R_reference
            a[i], e1[i], e2[i] = grp.twist_axis, grp.zero_azimuth_axis, grp.azimuth_axis_2
            g_n[i] = n
            if s != smax:  # one padded table needs one sample count
                return None
            samples[i, :n] = bnd.samples
            # any curve point lies within half the arc between its two neighbouring samples
            # of one of them: bound the arcs by fine chord sums (+1 % for their shortfall)
            sub = 16
            t = np.linspace(0.0, 1.0, (s - 1) * sub + 1)
            P = np.einsum("tk,nkd->ntd", np.stack([t**3, t**2, t, np.ones_like(t)], axis=-1), bnd.coefficients)
            chords = np.linalg.norm(np.diff(P, axis=1), axis=2).reshape(n, s - 1, sub).sum(axis=2)
            reach[i] = 0.505 * float(chords.max()) + 1e-12
            lo_max[i] = max(float(np.max(bnd.twist_lower)), float(bnd.centre_twist[0]))
            hi_min[i] = min(float(np.min(bnd.twist_upper)), float(bnd.centre_twist[1]))
        return (
            self._stop_q, self._stop_v, np.ascontiguousarray(self._stop_lower, dtype=float),
            np.ascontiguousarray(self._stop_upper, dtype=float), g_q, g_v, R_zero, axes, R_ref, a, e1, e2, g_n,
            samples, reach, lo_max, hi_min,
        )  # fmt: skip

    @property
    def stop_joints(self) -> tuple[str, ...]:
        """Joints whose URDF position limits are enforced as stops."""
        return tuple(self.model.joint_names[j] for j in self._stop_joint)

    def rows(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows:
        """Active limit rows at state (q (nq,), v (nv,)), see ``constraint_rows``.

        Remembered for ``accept_forces`` / ``report``. A compiled screen first proves
        the common case "no row active" cheaply (``rows_screen_nb``); only otherwise are
        the rows evaluated exactly.
        """
        if self._screen_groups != tuple(self.groups):  # groups replaced after construction
            self._screen_groups = tuple(self.groups)
            self._screen = self._screen_tables()
        sc = self._screen
        qa = np.ascontiguousarray(q, dtype=np.float64)
        va = np.ascontiguousarray(v, dtype=np.float64)
        if sc is not None and rows_screen_nb(qa, va, sc[0], sc[1], sc[2], sc[3], self.activation_band, self.lookahead, *sc[4:]):
            self._last = self._empty
            self._forces = np.zeros(0)
            return self._empty
        self._last = self.evaluate(q, v)
        self._forces = np.zeros(self._last.count)
        return self._last

    def evaluate(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows:
        """The active rows at (q, v) without touching the reported state (e.g. for re-projection)."""
        nv = self.model.nv
        band = self.activation_band
        jac, drift, viol, hard, stiff, damp, rest, names = [], [], [], [], [], [], [], []
        stops = self.config.joint_stops.law
        if self._stop_q.size:
            qs = q[self._stop_q]
            rate = v[self._stop_v] * self.lookahead
            up = self._stop_upper - qs  # gap of the upper stop; d/dt = -q̇
            lo = qs - self._stop_lower
            up_pred = up - np.maximum(rate, 0.0)
            lo_pred = lo + np.minimum(rate, 0.0)
            for i in np.flatnonzero((up_pred < band) | (lo_pred < band)):
                jname = self.model.joint_names[self._stop_joint[i]]
                for gap, pred, sign, label in ((up[i], up_pred[i], -1.0, "upper"), (lo[i], lo_pred[i], 1.0, "lower")):
                    if pred < band:
                        row = np.zeros(nv)
                        row[self._stop_v[i]] = sign
                        jac.append(row)
                        drift.append(0.0)
                        viol.append(-gap)
                        names.append(f"{jname} {label}")
                        hard.append(stops.hard)
                        stiff.append(stops.stiffness)
                        damp.append(stops.damping)
                        rest.append(stops.restitution)
        for kin in self.groups:
            law = kin.group.law
            for r in kin.rows_with_drift(q[kin.q_index], v[kin.v_index], band, self.lookahead):
                row = np.zeros(nv)
                row[kin.v_index] = r.row
                jac.append(row)
                drift.append(r.drift)
                viol.append(-r.gap)
                names.append(f"{kin.group.name} {r.kind}")
                hard.append(law.hard)
                stiff.append(law.stiffness)
                damp.append(law.damping)
                rest.append(law.restitution)
        if not jac:
            return OneSidedRows.empty(nv)
        return OneSidedRows(
            np.array(jac),
            np.array(drift),
            np.array(viol),
            np.zeros(len(jac)),
            np.array(hard, dtype=bool),
            np.array(stiff),
            np.array(damp),
            np.array(rest),
            tuple(names),
        )

    def accept_forces(self, forces: np.ndarray) -> None:
        """Row forces λ [N m or N] of the rows from the last ``rows`` call, shape (k,)."""
        forces = np.asarray(forces, dtype=float).reshape(-1)
        if forces.size != self._last.count:
            raise ValueError(f"{self.name}: got {forces.size} forces for {self._last.count} rows")
        self._forces = forces.copy()

    def report(self) -> LimitReport:
        """Active limits and their torques after the last ``accept_forces``."""
        rows = self._last
        torque = rows.jacobian.T @ self._forces if rows.count else np.zeros(self.model.nv)
        return LimitReport(rows.names, rows.violation.copy(), self._forces.copy(), torque[self._joint_v])
