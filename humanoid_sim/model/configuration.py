"""Reference configurations of a RobotModel."""

from __future__ import annotations

import numpy as np

from humanoid_sim.model.robot_model import RobotModel


def neutral_configuration(model: RobotModel) -> np.ndarray:
    """The neutral configuration q, shape (nq,).

    Every free body (floating base, free object) at the world origin with the identity
    quaternion (x, y, z, w) = (0, 0, 0, 1); every joint at 0, clipped into its position
    limits [rad or m].
    """
    q = np.zeros(model.nq)
    for body in model.free_bodies:
        first = int(model.q_index[body])
        q[first + 3 : first + 7] = (0.0, 0.0, 0.0, 1.0)
    q[model.joint_q_index] = np.clip(np.zeros(model.nj), model.limits.lower, model.limits.upper)
    return q
