"""The joint-limit constraint provider: URDF stops and swing-twist ranges as one-sided rows.

Implements ``humanoid_sim.contact.constraint_rows.ConstraintProvider`` with its compiled
rows: a simulator evaluates, solves and keeps its rows inside its compiled step
(``compiled_rows``, limits/step_limits.py), with no Python on a step; through the general
protocol (``rows(q, v)`` for the active limits, the solved row forces handed back through
``accept_forces``) it makes the same rows. ``report()`` then gives the stop torque per joint
and the active limits per group, of whichever came last.

URDF stop of joint j (revolute or prismatic with finite limits):
    upper: gap = upper - q_j, row = -e_j;  lower: gap = q_j - lower, row = +e_j
(a unit vector on the joint's v column; violation = q - upper or lower - q).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.contact.kernels import all_finite
from humanoid_sim.limits.ball_joint_rows import ROW_KINDS, BallJointKinematics
from humanoid_sim.limits.kernels import limit_rows_nb
from humanoid_sim.limits.range_config import RangeOfMotionConfig, joint_body
from humanoid_sim.limits.range_tables import LimitRows, LimitWork, limit_rows, limit_work, range_tables
from humanoid_sim.limits.step_limits import NONFINITE_ROW, CompiledRows, step_limits
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
    # its rows come from its compiled tables: their shapes by construction, restitutions in
    # [0, 1] checked on load, the Jacobian and drift checked finite as they are made (_rows)
    # (ConstraintProvider.rows_checked)
    rows_checked = True

    def __init__(
        self, model: RobotModel, config: RangeOfMotionConfig, activation_band: float = 1e-4, lookahead: float = 2e-3
    ) -> None:
        config.check_model(model)
        self.model = model
        self.config = config
        self._band = float(activation_band)
        if lookahead < 0.0:
            raise ValueError(f"lookahead must be >= 0 [s], got {lookahead}")
        self._lookahead = float(lookahead)
        self._groups = tuple(BallJointKinematics(model, g) for g in config.ball_joints)
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
        self._no_forces = np.zeros(0)
        self._no_forces.setflags(write=False)
        self._forces = self._no_forces
        self._refresh_tables()

    @property
    def activation_band(self) -> float:
        """Rows are returned when gap < band [rad or m] (set at construction)."""
        return self._band

    @property
    def lookahead(self) -> float:
        """[s]: rows are returned when the gap would fall below the band within it (set at construction)."""
        return self._lookahead

    @property
    def groups(self) -> tuple[BallJointKinematics, ...]:
        """The ball-joint groups' kinematics; assigning a sequence of them rebuilds the tables."""
        return self._groups

    @groups.setter
    def groups(self, groups) -> None:
        self._groups = tuple(groups)
        self._refresh_tables()

    def _refresh_tables(self) -> None:
        """The compiled tables, the rows' room, each row code's name and law and the compiled
        step's rows (``compiled_rows``), for the current stops and ``groups``."""
        tables = range_tables(self._stop_q, self._stop_v, self._stop_lower, self._stop_upper, self.groups)
        capacity = 2 * len(self._stop_joint) + 3 * len(self.groups)
        self._out = limit_rows(capacity, self.model.nv)
        self._work = limit_work(tables, self._out)
        names: list[str] = []
        laws = []
        stops = self.config.joint_stops.law
        for j in self._stop_joint:
            names += [f"{self.model.joint_names[j]} upper", f"{self.model.joint_names[j]} lower"]
            laws += [stops, stops]
        for kin in self.groups:
            names += [f"{kin.group.name} {kind}" for kind in ROW_KINDS]
            laws += [kin.group.law] * 3
        self._names_of = tuple(names)  # by row code
        self._first_group_code = 2 * len(self._stop_joint)
        self._code_key: bytes | None = None  # the codes of the last rows made (_rows) and their names, laws
        self._code_rows: tuple = ()
        self._code_hard = np.array([law.hard for law in laws], dtype=bool)
        law_rows = [(law.stiffness, law.damping, law.restitution) for law in laws]
        self._code_law = np.array(law_rows, dtype=float).reshape(-1, 3)
        # the compiled step's: the same tables, rows of its own; count -1 until a step evaluates them
        self._step_out = limit_rows(capacity, self.model.nv)
        self.compiled_rows: CompiledRows = step_limits(
            limit_work(tables, self._step_out), capacity, self._names_of, self._code_hard, self._code_law,
            self._first_group_code, self._band, self._lookahead, self.model.nv,
        )  # fmt: skip
        self.compiled_rows.limits.count[0] = -1

    @property
    def work(self) -> LimitWork:
        """The stops and groups as the compiled evaluation's record (limits.kernels)."""
        return self._work

    @property
    def stop_joints(self) -> tuple[str, ...]:
        """Joints whose URDF position limits are enforced as stops."""
        return tuple(self.model.joint_names[j] for j in self._stop_joint)

    def rows(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows:
        """Active limit rows at state (q (nq,), v (nv,)), see ``constraint_rows``.

        Remembered for ``accept_forces`` / ``report`` (until a compiled step evaluates its
        rows). One compiled call (``limits.kernels.limit_rows_nb``); a cheap screen first
        proves most groups inactive (``group_clear_nb``), and only the others are evaluated
        exactly.
        """
        count = self._count(q, v, True)
        last = self._last = self._empty if count == 0 else self._made_rows(self._out, count)
        self._forces = self._no_forces if count == 0 else np.zeros(count)
        self.compiled_rows.limits.count[0] = -1  # the report is of these rows
        return last

    def evaluate(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows:
        """The active rows at (q, v), every group evaluated exactly (no screen), without
        touching the reported state (e.g. for re-projection)."""
        count = self._count(q, v, False)
        return self._empty if count == 0 else self._made_rows(self._out, count)

    def _count(self, q: np.ndarray, v: np.ndarray, screen: bool) -> int:
        """The number of active rows at (q, v), their codes and values left in self._out."""
        qa = np.ascontiguousarray(q, dtype=np.float64)
        va = np.ascontiguousarray(v, dtype=np.float64)
        return limit_rows_nb(self._work, qa, va, self._band, self._lookahead, screen)

    def _made_rows(self, out: LimitRows, count: int) -> OneSidedRows:
        """The OneSidedRows of the ``count`` rows an evaluation left in ``out``."""
        code = out.code[:count]
        key = code.tobytes()
        if key != self._code_key:  # the rows' names and laws, made again when another set is active
            law = self._code_law[code]
            self._code_rows = (tuple(map(self._names_of.__getitem__, code.tolist())), self._code_hard[code],
                               law[:, 0], law[:, 1], law[:, 2])  # fmt: skip
            for shared in self._code_rows[1:]:  # handed out again while the same rows are active
                shared.setflags(write=False)
            self._code_key = key
        names, hard, stiffness, damping, restitution = self._code_rows
        jacobian, drift = out.jacobian[:count].copy(), out.drift[:count].copy()
        # rows_checked: the one check not by construction, of the groups' rows (after the stops' in
        # code order: a stop's row is ∓1 on one coordinate, its drift 0)
        if code[-1] >= self._first_group_code and not (all_finite(jacobian) and all_finite(drift)):
            raise ValueError(f"{self.name}: {NONFINITE_ROW}")
        return OneSidedRows(jacobian, drift, -out.gap[:count], np.zeros(count), hard, stiffness, damping, restitution,
                            names)

    def accept_forces(self, forces: np.ndarray) -> None:
        """Row forces λ [N m or N] of the rows from the last ``rows`` call, shape (k,)."""
        if self._last is self._empty and isinstance(forces, np.ndarray) and forces.size == 0:
            self._forces = self._no_forces  # no rows, no forces (most steps)
            return
        forces = np.asarray(forces, dtype=float).reshape(-1)
        if forces.size != self._last.count:
            raise ValueError(f"{self.name}: got {forces.size} forces for {self._last.count} rows")
        self._forces = forces.copy() if forces.size else self._no_forces

    def report(self) -> LimitReport:
        """Active limits and their torques: of the last simulator step that evaluated these
        limits in its compiled step (a step that failed: the rows at its state, forces 0; none
        for a step refused for a non-finite row), or of the last ``rows`` call with the forces
        handed back by ``accept_forces``, whichever came last."""
        step = self.compiled_rows.limits
        count = int(step.count[0])
        if count >= 0:  # the last step's rows, made in the compiled step
            rows = self._empty if count == 0 else self._made_rows(self._step_out, count)
            forces = step.force[:count]
        else:
            rows, forces = self._last, self._forces
        torque = rows.jacobian.T @ forces if rows.count else np.zeros(self.model.nv)
        return LimitReport(rows.names, rows.violation.copy(), forces.copy(), torque[self._joint_v])
