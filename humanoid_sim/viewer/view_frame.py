"""One displayed instant of a run: where every visual is and what the contacts do.

``ViewFrameBuilder.build`` turns a configuration and what a step reported (ContactReport,
ZmpReport) into a ``ViewFrame``; it runs on the view's sender thread, never on the physics
thread, with a kinematics workspace of its own. Everything is in the world frame (z up) [m];
forces [N].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from humanoid_sim.balance.zmp import ZmpReport
from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.spatial import rot_to_quat_nb
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.simulator.simulator import ContactReport
from humanoid_sim.viewer.visuals import VisualShape

__all__ = ["ViewFrame", "ViewFrameBuilder"]


class ViewFrame(NamedTuple):
    """t: simulated time [s].
    positions (n, 3), wxyz (n, 4): pose of each visual (order of the visuals tuple), float32;
        wxyz is the unit quaternion (w, x, y, z).
    com: whole-body centre of mass (3,).
    contact_points: every contact point of every contact (k, 3).
    force_points (m, 3), forces (m, 3): each contact's force and where it acts (its p_v, or
        its virtual-link origin when p_v is undefined).
    p_v: centre of pressure of each contact with a positive normal force (j, 3).
    zmp: ZMP (3,), NaN when no vertical force.
    support_polygon: convex hull of the ground contact points, counter-clockwise (h, 2).
    """

    t: float
    positions: np.ndarray
    wxyz: np.ndarray
    com: np.ndarray
    contact_points: np.ndarray
    force_points: np.ndarray
    forces: np.ndarray
    p_v: np.ndarray
    zmp: np.ndarray
    support_polygon: np.ndarray


_NO_POINTS = np.zeros((0, 3))


class ViewFrameBuilder:
    """Builds ViewFrames of one model and its visuals; not thread-safe (one per thread)."""

    def __init__(self, model: RobotModel, visuals: Sequence[VisualShape]) -> None:
        self.model = model
        self.ws = DynamicsWorkspace(model)
        self._body = np.array([v.body for v in visuals], dtype=np.int64)
        X = np.array([v.X_body_visual for v in visuals]).reshape(-1, 4, 4)
        self._R_body_visual = X[:, :3, :3]
        self._p_body_visual = X[:, :3, 3]
        self._quat_xyzw = np.zeros(4)
        self._com = np.zeros(3)

    def build(self, t: float, q: np.ndarray, contacts: Sequence[ContactReport] = (), zmp: ZmpReport | None = None) -> ViewFrame:
        """The frame of configuration q (nq,) at time t [s] with the step's contacts and ZMP."""
        tree, ws = self.ws.tree, self.ws
        q = np.ascontiguousarray(q, dtype=float)
        kernels.forward_kinematics_nb(
            tree.parent, tree.joint_type, tree.joint_axis, tree.R_parent_joint, tree.p_parent_joint, tree.q_index, q, ws.R, ws.p
        )
        kernels.center_of_mass_nb(tree.mass, tree.com, ws.R, ws.p, self._com)
        R_body = ws.R[self._body]
        R = R_body @ self._R_body_visual
        positions = np.einsum("nij,nj->ni", R_body, self._p_body_visual) + ws.p[self._body]
        wxyz = np.empty((len(self._body), 4), dtype=np.float32)
        quat = self._quat_xyzw
        for i in range(len(R)):
            rot_to_quat_nb(R[i], quat)
            wxyz[i] = quat[3], quat[0], quat[1], quat[2]
        if contacts:
            points = np.concatenate([c.points for c in contacts]).reshape(-1, 3)
            p_v = np.array([c.p_v for c in contacts]).reshape(-1, 3)
            origins = np.array([c.origin for c in contacts]).reshape(-1, 3)
            forces = np.array([c.wrench_world[:3] for c in contacts]).reshape(-1, 3)
            finite = np.all(np.isfinite(p_v), axis=1)
            force_points = np.where(finite[:, None], p_v, origins)
            p_v = p_v[finite]
        else:
            points = p_v = force_points = forces = _NO_POINTS
        if zmp is not None:
            zmp_point, polygon = np.asarray(zmp.zmp, dtype=float), np.asarray(zmp.support_polygon, dtype=float).reshape(-1, 2)
        else:
            zmp_point, polygon = np.full(3, math.nan), np.zeros((0, 2))
        return ViewFrame(
            float(t), positions.astype(np.float32), wxyz, self._com.copy(), points, force_points, forces, p_v,
            zmp_point, polygon,
        )
