"""Kinematics: body and frame placements, Jacobians, J̇ v, centre of mass.

Numpy in, numpy out; each function is a thin wrapper over the numba kernels in
``kernels.py`` using a per-model scratch workspace (results are fresh copies).
For the per-step hot path use ``DynamicsWorkspace`` directly.

Jacobians have rows (linear velocity of the point, angular velocity of the
body), both in world axes: Pinocchio's LOCAL_WORLD_ALIGNED for a frame at the
point. Base columns act on the base twist expressed in the base frame.
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.workspace import DynamicsWorkspace, scratch_workspace
from humanoid_sim.model.robot_model import RobotModel

def _check_q(model: RobotModel, q: np.ndarray) -> np.ndarray:
    q = np.ascontiguousarray(q, dtype=float)
    if q.shape != (model.nq,):
        raise ValueError(f"q must have shape ({model.nq},) for {model.name!r}, got {q.shape}")
    return q


def _check_v(model: RobotModel, v: np.ndarray, name: str = "v") -> np.ndarray:
    v = np.ascontiguousarray(v, dtype=float)
    if v.shape != (model.nv,):
        raise ValueError(f"{name} must have shape ({model.nv},) for {model.name!r}, got {v.shape}")
    return v


def body_index(model: RobotModel, body: int | str) -> int:
    """Index of a body given by index or by name; raises naming the valid bodies."""
    if isinstance(body, (int, np.integer)):
        if not 0 <= int(body) < model.nb:
            raise IndexError(f"body index {body} out of range [0, {model.nb}) for {model.name!r}")
        return int(body)
    try:
        return model.body_names.index(body)
    except ValueError:
        raise KeyError(
            f"unknown body {body!r}; valid bodies: {', '.join(model.body_names)}"
        ) from None


def _placements(ws: DynamicsWorkspace, q: np.ndarray) -> None:
    t = ws.tree
    kernels.forward_kinematics_nb(
        t.parent, t.joint_type, t.joint_axis, t.R_parent_joint, t.p_parent_joint, t.q_index, q, ws.R, ws.p
    )


def _placements_and_subspace(ws: DynamicsWorkspace, q: np.ndarray) -> None:
    _placements(ws, q)
    kernels.motion_subspace_nb(ws.tree.joint_type, ws.tree.joint_axis, ws.v_index, ws.R, ws.p, ws.S)


def forward_kinematics(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """X_world_body of every body, shape (nb, 4, 4) [m]; q: configuration (nq,)."""
    ws = scratch_workspace(model)
    _placements(ws, _check_q(model, q))
    X = np.zeros((model.nb, 4, 4))
    X[:, :3, :3] = ws.R
    X[:, :3, 3] = ws.p
    X[:, 3, 3] = 1.0
    return X


def frame_placement(model: RobotModel, q: np.ndarray, frame_name: str) -> np.ndarray:
    """X_world_frame (4, 4) of a named frame (any URDF link or joint) [m]."""
    frame = model.frame(frame_name)
    X_world_body = forward_kinematics(model, q)[frame.body]
    return X_world_body @ frame.X_body_frame


def point_jacobian(
    model: RobotModel, q: np.ndarray, body: int | str, point_world: np.ndarray
) -> np.ndarray:
    """Jacobian (6, nv) of the point fixed to ``body`` currently at ``point_world`` (3,) [m].

    Rows 0-2: linear velocity of the point [m/s], rows 3-5: angular velocity
    [rad/s], world axes (Pinocchio LOCAL_WORLD_ALIGNED).
    """
    ws = scratch_workspace(model)
    i = body_index(model, body)
    _placements_and_subspace(ws, _check_q(model, q))
    out = np.empty((6, model.nv))
    kernels.point_jacobian_into(
        ws.parent, ws.ndof, ws.v_index, ws.S, i, np.ascontiguousarray(point_world, dtype=float), out
    )
    return out


def body_jacobian(model: RobotModel, q: np.ndarray, body: int | str) -> np.ndarray:
    """Jacobian (6, nv) of the body frame origin, world axes (LOCAL_WORLD_ALIGNED)."""
    i = body_index(model, body)
    point = forward_kinematics(model, q)[i, :3, 3]
    return point_jacobian(model, q, i, point)


def frame_jacobian(model: RobotModel, q: np.ndarray, frame_name: str) -> np.ndarray:
    """Jacobian (6, nv) of a named frame's origin, world axes (LOCAL_WORLD_ALIGNED)."""
    frame = model.frame(frame_name)
    point = frame_placement(model, q, frame_name)[:3, 3]
    return point_jacobian(model, q, frame.body, point)


def point_drift_acceleration(
    model: RobotModel, q: np.ndarray, v: np.ndarray, body: int | str, point_world: np.ndarray
) -> np.ndarray:
    """J̇ v (6,) of the point fixed to ``body`` at ``point_world`` (3,) [m].

    Classical linear acceleration of the point [m/s^2] and angular acceleration
    [rad/s^2], world axes, with q̈ = 0 and no gravity; this is the -Ḣ_C θ̇ term
    of seed 000 Eq. 7/20 (sign aside) and Pinocchio's
    getFrameClassicalAcceleration(LOCAL_WORLD_ALIGNED) with a = 0.
    """
    ws = scratch_workspace(model)
    i = body_index(model, body)
    _placements_and_subspace(ws, _check_q(model, q))
    kernels.velocities_nb(ws.parent, ws.ndof, ws.v_index, ws.S, _check_v(model, v), ws.V, ws.A)
    out = np.empty(6)
    kernels.point_drift_into(ws.V, ws.A, i, np.ascontiguousarray(point_world, dtype=float), out)
    return out


def center_of_mass(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """Whole-body centre of mass in the world frame, shape (3,) [m]."""
    ws = scratch_workspace(model)
    _placements(ws, _check_q(model, q))
    t = ws.tree
    out = np.empty(3)
    kernels.center_of_mass_nb(t.mass, t.com, ws.R, ws.p, out)
    return out


def com_jacobian(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """Jacobian (3, nv) of the whole-body centre of mass (world axes) [m/s per unit rate]."""
    ws = scratch_workspace(model)
    _placements_and_subspace(ws, _check_q(model, q))
    t = ws.tree
    kernels.world_inertias_nb(t.mass, t.com, t.inertia_com, ws.R, ws.p, ws.Iw)
    kernels.composite_inertias_nb(ws.parent, ws.Iw, ws.Ic)
    out = np.empty((3, model.nv))
    kernels.com_jacobian_nb(t.dof_body, ws.S, ws.Ic, float(np.sum(t.mass)), out)
    return out
