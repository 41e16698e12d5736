"""Reference configurations of a RobotModel."""

from __future__ import annotations

import numpy as np

from humanoid_sim.model.robot_model import JointType, RobotModel


def neutral_configuration(model: RobotModel) -> np.ndarray:
    """The neutral configuration q, shape (nq,).

    Floating base at the world origin with the identity quaternion (x, y, z, w) =
    (0, 0, 0, 1); every joint at 0, clipped into its position limits [rad or m].
    """
    q = np.zeros(model.nq)
    if model.floating_base:
        q[3:7] = (0.0, 0.0, 0.0, 1.0)
    joint_q = np.clip(np.zeros(model.nj), model.limits.lower, model.limits.upper)
    first = 7 if int(model.joint_type[0]) == JointType.FREE else 0
    q[first:] = joint_q
    return q
