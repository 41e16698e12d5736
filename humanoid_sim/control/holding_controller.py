"""A posture-holding torque controller for a humanoid standing on both soles.

Feed-forward torques put the robot in static equilibrium with its weight shared by the two
soles (seed 000 Eq. 9 with zero accelerations); a joint PD around the reset posture corrects
deviations. Used by the walking controller node in ``stand`` mode and by tests and benches
that need a robot that stands still.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from humanoid_sim.dynamics import frame_jacobian, gravity_forces, mass_matrix
from humanoid_sim.model.robot_model import RobotModel


class HoldingController:
    """Holds the posture it was reset in, standing on both soles (mode ``stand``).

    Feed-forward: static equilibrium in double support (seed 000 Eq. 9 with zero
    accelerations),
        g(q0) = S^T tau + J_C(q0)^T f,      f = (left sole wrench, right sole wrench) (12,).
    The 6 base rows fix the sole wrenches up to internal ones; the minimum-norm f solving
    them is taken (an even split for a symmetric pose), then tau_ff = g_J - J_C,J^T f.

    Feedback: joint PD, tau = tau_ff + kp_j (q0_j - q_j) - kd_j qdot_j, clamped to the effort
    limits. The leg joints (base to soles) get kp, kd: they hold the weight, and a softer
    leg lets the robot sink into a crouch (gravity's negative stiffness wins). The other
    joints' gains follow their apparent inertia with the soles held (I_j =
    1 / [M^-1 - M^-1 J_C^T (J_C M^-1 J_C^T)^-1 J_C M^-1]_jj, the inertia its torque moves
    with the feet fixed): kp_j = min(kp, I_j w^2), kd_j = min(kd, 2 I_j w), so that light
    joints (neck, arms) get a bandwidth w that a few milliseconds of command delay over
    topics cannot destabilise.

    kp [N m/rad], kd [N m s/rad]: the largest gains (> 0, >= 0); bandwidth w [rad/s] (> 0).
    Same call interface as WalkingController (reset, set_command, update).
    """

    def __init__(
        self,
        model: RobotModel,
        sole_frames: tuple[str, str] = ("l_sole", "r_sole"),
        kp: float = 1000.0,
        kd: float = 20.0,
        bandwidth: float = 40.0,
    ) -> None:
        if not model.floating_base:
            raise ValueError(f"model {model.name!r} has a fixed base; the holding controller stands on two soles")
        for name in sole_frames:
            model.frame(name)  # raises KeyError listing the valid frames
        if not all(math.isfinite(x) for x in (kp, kd, bandwidth)) or kp <= 0.0 or kd < 0.0 or bandwidth <= 0.0:
            raise ValueError(
                f"holding gains must be finite with kp > 0, kd >= 0, bandwidth > 0; got kp={kp!r}, kd={kd!r}, "
                f"bandwidth={bandwidth!r}"
            )
        self.model = model
        self.sole_frames = tuple(sole_frames)
        self.kp, self.kd, self.bandwidth = float(kp), float(kd), float(bandwidth)
        self.q0_joints = np.zeros(model.nj)
        self.tau_ff = np.zeros(model.nj)
        self.sole_wrenches = np.zeros(6 * len(sole_frames))
        self.apparent_inertia = np.zeros(model.nj)
        self._ready = False

    def reset(self, q: np.ndarray, v: np.ndarray | None = None, t: float = 0.0) -> None:
        """Hold configuration q (nq,) from now on; v and t are unused (interface)."""
        model = self.model
        q = np.asarray(q, dtype=float)
        g = gravity_forces(model, q)
        J = np.vstack([frame_jacobian(model, q, name) for name in self.sole_frames])  # (12, nv)
        f = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]  # base rows of Eq. 9
        self.sole_wrenches = f
        self.tau_ff = g[6:] - J[:, 6:].T @ f
        self.q0_joints = q[model.nq - model.nj :].copy()
        M_inv_JT = np.linalg.solve(mass_matrix(model, q), np.column_stack([J.T, np.eye(model.nv)[:, 6:]]))
        M_inv_J_T, M_inv_S = M_inv_JT[:, : len(J)], M_inv_JT[:, len(J) :]
        B = J @ M_inv_J_T  # J_C M^-1 J_C^T
        mobility = M_inv_S[6:, :] - (M_inv_J_T[6:, :] @ np.linalg.lstsq(B, M_inv_J_T.T[:, 6:], rcond=None)[0])
        self.apparent_inertia = 1.0 / np.maximum(np.diag(mobility), 1e-12)
        self._ready = True

    @property
    def leg_joints(self) -> np.ndarray:
        """Mask (nj,) of the joints between the base and a sole: they carry the weight and
        keep the full gains (the standing posture's stiffness against gravity)."""
        model = self.model
        mask = np.zeros(model.nj, dtype=bool)
        first_joint_body = 1 if model.floating_base else 0
        for name in self.sole_frames:
            body = model.frame(name).body
            while body >= first_joint_body:
                mask[int(model.v_index[body]) - (model.nv - model.nj)] = True
                body = int(model.parent[body])
        return mask

    @property
    def gains(self) -> tuple[np.ndarray, np.ndarray]:
        """(kp_j [N m/rad], kd_j [N m s/rad]) per joint, shape (nj,) each."""
        w = self.bandwidth
        legs = self.leg_joints
        kp = np.where(legs, self.kp, np.minimum(self.kp, self.apparent_inertia * w * w))
        kd = np.where(legs, self.kd, np.minimum(self.kd, 2.0 * self.apparent_inertia * w))
        return kp, kd

    def set_command(self, vx: float, vy: float, yaw_rate: float) -> None:
        """Ignored: holding does not walk."""

    def update(self, t: float, q: np.ndarray, v: np.ndarray, contact_info: Any = None) -> np.ndarray:
        """Joint torques (nj,) [N m] for the measured q (nq,), v (nv,)."""
        if not self._ready:
            raise RuntimeError("HoldingController.reset(q) must be called first")
        model = self.model
        q_j = np.asarray(q, dtype=float)[model.nq - model.nj :]
        v_j = np.asarray(v, dtype=float)[model.nv - model.nj :]
        kp, kd = self.gains
        tau = self.tau_ff + kp * (self.q0_joints - q_j) - kd * v_j
        return np.clip(tau, -model.limits.effort, model.limits.effort)
