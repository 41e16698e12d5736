"""Per-tick kinematics and dynamics a controller needs, from one DynamicsWorkspace update.

After ``update(q, v)``: the mass matrix M (nv, nv) and bias forces b (nv,); the centre of
mass c (3,), its Jacobian J_c (3, nv), velocity J_c v and drift J̇_c v (3,); and, per named
frame, its pose X_world_frame (4, 4), Jacobian (6, nv) and drift J̇ v (6,) (linear rows
first; linear velocity/acceleration of the frame origin, world axes — Pinocchio's
LOCAL_WORLD_ALIGNED; classical accelerations).

The CoM drift is Σ_i m_i (J̇_i v)_lin / m over the bodies' centres of mass, the classical
acceleration of each body COM with q̈ = 0 (d/dt of c = Σ m_i c_i / m).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from humanoid_sim.dynamics import DynamicsWorkspace, kernels
from humanoid_sim.model.robot_model import RobotModel


@njit(cache=True)
def _com_drift_nb(V, A, body_com, mass, total_mass, scratch6, out) -> None:
    """Σ_i m_i (J̇_i v)_lin / m over the body COMs (classical accelerations, q̈ = 0)."""
    out[:] = 0.0
    for i in range(mass.shape[0]):
        if mass[i] > 0.0:
            kernels.point_drift_into(V, A, i, body_com[i], scratch6)
            for r in range(3):
                out[r] += mass[i] * scratch6[r]
    for r in range(3):
        out[r] /= total_mass


class TaskKinematics:
    """Buffers for one model; ``update`` once per tick, then read (views, overwritten)."""

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self.ws = DynamicsWorkspace(model)
        self.tree = self.ws.tree
        self.total_mass = float(np.sum(self.tree.mass))
        self.com = np.zeros(3)
        self.com_jacobian = np.zeros((3, model.nv))
        self.com_velocity = np.zeros(3)
        self.com_drift = np.zeros(3)
        self._body_com = np.zeros((model.nb, 3))
        self._drift6 = np.zeros(6)
        self._v = np.zeros(model.nv)

    @property
    def M(self) -> np.ndarray:
        """Mass matrix (nv, nv) at the last update."""
        return self.ws.M

    @property
    def b(self) -> np.ndarray:
        """Bias forces C(q, v) v + g(q) (nv,) [N, N m] at the last update."""
        return self.ws.b

    def update(self, q: np.ndarray, v: np.ndarray) -> None:
        """Recompute everything for configuration q (nq,) and velocity v (nv,)."""
        ws, t = self.ws, self.tree
        q = np.ascontiguousarray(q, dtype=float)
        self._v[:] = v
        ws.update(q, self._v)
        kernels.center_of_mass_nb(t.mass, t.com, ws.R, ws.p, self.com)
        kernels.com_jacobian_nb(t.dof_body, ws.S, ws.Ic, self.total_mass, self.com_jacobian)
        self.com_velocity[:] = self.com_jacobian @ self._v
        # Body COMs in the world, then Σ m_i a_i / m with q̈ = 0.
        np.einsum("bij,bj->bi", ws.R, t.com, out=self._body_com)
        self._body_com += ws.p
        _com_drift_nb(ws.V, ws.A, self._body_com, t.mass, self.total_mass, self._drift6, self.com_drift)

    def update_kinematics(self, q: np.ndarray) -> None:
        """Poses, Jacobians and the CoM (not velocities, drifts, M, b) for q (nq,); the cheap
        update for inverse kinematics. frame_drift / M / b are stale after it."""
        ws, t = self.ws, self.tree
        q = np.ascontiguousarray(q, dtype=float)
        kernels.forward_kinematics_nb(t.parent, t.joint_type, t.joint_axis, t.R_parent_joint,
                                      t.p_parent_joint, t.q_index, q, ws.R, ws.p)
        kernels.motion_subspace_nb(t.joint_type, t.joint_axis, t.v_index, ws.R, ws.p, ws.S)
        kernels.world_inertias_nb(t.mass, t.com, t.inertia_com, ws.R, ws.p, ws.Iw)
        kernels.composite_inertias_nb(t.parent, ws.Iw, ws.Ic)
        kernels.center_of_mass_nb(t.mass, t.com, ws.R, ws.p, self.com)
        kernels.com_jacobian_nb(t.dof_body, ws.S, ws.Ic, self.total_mass, self.com_jacobian)
        self._v[:] = 0.0
        self.com_velocity[:] = 0.0
        self.com_drift[:] = 0.0

    def frame_pose(self, name: str) -> np.ndarray:
        """X_world_frame (4, 4) [m] of a model frame."""
        frame = self.model.frame(name)
        X = np.eye(4)
        X[:3, :3] = self.ws.R[frame.body]
        X[:3, 3] = self.ws.p[frame.body]
        return X @ frame.X_body_frame

    def frame_jacobian(self, name: str, X_world_frame: np.ndarray | None = None) -> np.ndarray:
        """Jacobian (6, nv) of the frame origin (linear, then angular; world axes)."""
        frame = self.model.frame(name)
        X = self.frame_pose(name) if X_world_frame is None else X_world_frame
        return self.ws.point_jacobian(frame.body, np.ascontiguousarray(X[:3, 3]))

    def frame_drift(self, name: str, X_world_frame: np.ndarray | None = None) -> np.ndarray:
        """J̇ v (6,) of the frame origin: classical linear acceleration, angular acceleration
        (world axes) with q̈ = 0."""
        frame = self.model.frame(name)
        X = self.frame_pose(name) if X_world_frame is None else X_world_frame
        return self.ws.point_drift(frame.body, np.ascontiguousarray(X[:3, 3]))

    def frame_velocity(self, name: str, X_world_frame: np.ndarray | None = None) -> np.ndarray:
        """Velocity (6,) of the frame origin: linear [m/s], angular [rad/s], world axes."""
        return self.frame_jacobian(name, X_world_frame) @ self._v
