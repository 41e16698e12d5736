"""A holding controller for tests: PD about a pose + contact-consistent gravity compensation.

Static equilibrium in double support (seed 000 Eq. 9 with zero accelerations):
    g(q0) = S^T tau + J_c(q0)^T f,   f = (wrench of the left sole, wrench of the right sole)
The 6 base rows fix the feet wrenches up to the internal ones; we take the minimum-norm
f solving them, then tau_ff = g_joints - J_c,joints^T f. The command is
    tau = tau_ff - Kp (q_j - q0_j) - Kd qdot_j        (joint torques [N m], shape (nj,)).
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.dynamics import frame_jacobian, gravity_forces
from humanoid_sim.model.robot_model import RobotModel


class HoldingController:
    def __init__(self, model: RobotModel, q0: np.ndarray, feet=("l_sole", "r_sole"), kp: float = 600.0, kd: float = 30.0):
        g = gravity_forces(model, q0)
        J = np.vstack([frame_jacobian(model, q0, foot) for foot in feet])  # (12, nv)
        f = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
        self.tau_ff = g[6:] - J[:, 6:].T @ f
        self.q0_joints = np.asarray(q0[7:], dtype=float).copy()
        self.kp, self.kd = kp, kd
        self.feet_wrenches = f

    def torque(self, q_joints: np.ndarray, v_joints: np.ndarray) -> np.ndarray:
        return self.tau_ff - self.kp * (q_joints - self.q0_joints) - self.kd * v_joints
