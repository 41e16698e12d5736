"""Configuration space: q ⊕ v (integrate), q1 ⊖ q0 (difference).

Every free body (a floating robot base, a free object) moves on SE(3): ``X_world_base(t + dt) = X_world_base(t) exp(v_base dt)``
with the base twist ``v_base = (v, ω)`` in the base frame, as
``pinocchio.integrate`` (quaternion xyzw kept unit). Joints add linearly
(continuous joints are a single angle here).
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.kinematic_tree import FREE, KinematicTree, kinematic_tree
from humanoid_sim.dynamics.kinematics import _check_q, _check_v
from humanoid_sim.dynamics.spatial import quaternion_to_rotation, se3_log
from humanoid_sim.model.robot_model import RobotModel


def integrate(model: RobotModel, q: np.ndarray, v: np.ndarray, dt: float = 1.0) -> np.ndarray:
    """Configuration (nq,) reached from q (nq,) by the constant velocity v (nv,) over dt [s]."""
    t = kinematic_tree(model)
    out = np.empty(model.nq)
    kernels.integrate_nb(t.joint_type, t.q_index, t.v_index, _check_q(model, q), _check_v(model, v), float(dt), out)
    return out


def difference(model: RobotModel, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Velocity v (nv,) with ``integrate(model, q0, v, 1.0) == q1`` (Pinocchio's difference)."""
    q0 = _check_q(model, q0)
    q1 = _check_q(model, q1)
    t = kinematic_tree(model)
    v = np.zeros(model.nv)
    for i in range(t.nb):
        qi, vi, n = t.q_index[i], t.v_index[i], t.ndof[i]
        if t.joint_type[i] == FREE:
            X0 = np.eye(4)
            X1 = np.eye(4)
            X0[:3, :3] = quaternion_to_rotation(q0[qi + 3 : qi + 7])
            X0[:3, 3] = q0[qi : qi + 3]
            X1[:3, :3] = quaternion_to_rotation(q1[qi + 3 : qi + 7])
            X1[:3, 3] = q1[qi : qi + 3]
            v[vi : vi + 6] = se3_log(np.linalg.solve(X0, X1))
        elif n == 1:
            v[vi] = q1[qi] - q0[qi]
    return v


def normalize_configuration(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """Copy of q with the quaternion of every free body made unit (w >= 0 not enforced)."""
    q = np.array(_check_q(model, q))
    normalize_quaternions_into(kinematic_tree(model), q)
    return q


def normalize_quaternions_into(tree: KinematicTree, q: np.ndarray) -> None:
    """Make the quaternion of every FREE body of ``tree`` unit, in place in q (nq,)."""
    for i in range(tree.nb):
        if tree.joint_type[i] == FREE:
            s = slice(tree.q_index[i] + 3, tree.q_index[i] + 7)
            q[s] /= np.linalg.norm(q[s])


__all__ = [
    "integrate",
    "difference",
    "normalize_configuration",
    "normalize_quaternions_into",
]
