"""Constraint rows of one swing-twist range of motion (seed 003, 3.2-3.6).

A group of three revolute joints (bodies b1 → b2 → b3 under a parent body P)
acts as one ball joint. Its relative rotation, in P's frame and relative to the
all-zero posture, is ``R_rel = R_P_b3(q) R_P_b3(0)ᵀ``, and the relative angular
velocity is linear in the three joint rates, ``ω_rel = J_group q̇_group`` with
column k = the axis of joint k expressed in P.

Each violated limit gives exactly one row (Eq. 3.34-3.35): the swing limit
along the outward normal of the boundary at the nearest boundary posture, the
twist limit along the twist rate (minus the motion of the interpolated twist
limit itself). Rows follow ``humanoid_sim.contact.constraint_rows``: gap >= 0
admissible, ``row @ q̇_group = d gap/dt``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.limits.kernels import group_rotation_nb, group_rows_of_nb
from humanoid_sim.limits.range_config import BallJointRange, joint_body
from humanoid_sim.limits.range_tables import limit_rows, limit_work, range_tables
from humanoid_sim.limits.swing_twist import SwingTwist, swing_twist_angles
from humanoid_sim.model.robot_model import RobotModel


class GroupRow(NamedTuple):
    """One active limit of a group.

    kind: "swing", "twist upper" or "twist lower".
    gap: distance inside the range [rad] (negative = violated).
    row: d gap/dt per group joint rate, shape (3,).
    drift: d/dt(row) · q̇_group [rad/s^2].
    """

    kind: str
    gap: float
    row: np.ndarray
    drift: float


class GroupState(NamedTuple):
    """Swing-twist posture of a group and its relative-rotation Jacobian.

    angles: (φ, θ, ψ, s). R_rel: (3, 3). J_group: ω_rel = J_group q̇_group, (3, 3).
    """

    angles: SwingTwist
    R_rel: np.ndarray
    J_group: np.ndarray


class BallJointKinematics:
    """Posture, Jacobian and limit rows of one 3-revolute group.

    Everything constant is precomputed here; the kernel outputs are reused
    buffers, so one instance serves one evaluation at a time (not thread-safe).
    """

    def __init__(self, model: RobotModel, group: BallJointRange) -> None:
        self.group = group
        self.bodies = np.array([joint_body(model, j) for j in group.joints])
        self.q_index = np.asarray(model.q_index)[self.bodies].copy()
        self.v_index = np.asarray(model.v_index)[self.bodies].copy()
        self.R_zero = np.asarray(model.X_parent_joint)[self.bodies, :3, :3].copy()  # (3, 3, 3)
        self.axes = np.asarray(model.joint_axis)[self.bodies].copy()  # (3, 3), in each joint frame
        R = np.eye(3)
        for k in range(3):
            R = R @ self.R_zero[k]
        self.R_reference = R  # R_P_b3 at the all-zero posture
        # the group alone as the compiled tables (no stops), and its evaluation's scratch (no
        # rows of a whole robot): allocated once, one evaluation at a time
        no_stops = np.zeros(0, np.int64)
        rows = limit_rows(0, 0)
        self._scratch = rows.group
        self._work = limit_work(range_tables(no_stops, no_stops, np.zeros(0), np.zeros(0), [self]), rows)

    def state(self, q_group: np.ndarray) -> GroupState:
        """Posture of the group at joint angles ``q_group`` [rad], shape (3,)."""
        R_rel, J = group_rotation_nb(self.R_zero, self.axes, self.R_reference, np.asarray(q_group, dtype=np.float64))
        g = self.group
        return GroupState(swing_twist_angles(R_rel, g.twist_axis, g.zero_azimuth_axis, g.azimuth_axis_2), R_rel, J)

    def rows(self, q_group: np.ndarray, band: float) -> list[GroupRow]:
        """Active limit rows (gap < band) at ``q_group``, drift left 0 (see ``rows_with_drift``)."""
        return self.rows_with_drift(q_group, np.zeros(3), band)

    def rows_with_drift(
        self, q_group: np.ndarray, qd_group: np.ndarray, band: float, lookahead: float = 0.0
    ) -> list[GroupRow]:
        """Active rows with drift = d/dt(row) · q̇ (central difference of the row along q̇).

        q_group [rad], qd_group [rad/s], shape (3,). A row is active when
        gap + lookahead * min(0, d gap/dt) < band (band [rad], lookahead [s]).
        """
        sc = self._scratch
        group_rows_of_nb(
            self._work, 0, np.asarray(q_group, dtype=np.float64), np.asarray(qd_group, dtype=np.float64),
            float(band), float(lookahead),
        )
        gap, row, drift, active = sc.gap, sc.row, sc.drift, sc.active
        return [GroupRow(ROW_KINDS[k], float(gap[k]), row[k].copy(), float(drift[k])) for k in range(3) if active[k]]


ROW_KINDS = ("swing", "twist upper", "twist lower")
