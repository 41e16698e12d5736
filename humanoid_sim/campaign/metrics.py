"""The metrics of a campaign run, accumulated step by step from the simulator's StepResults.

Columns (RunMetrics; units in the names; world frame, which on a slope is the slope's):
  outcome: "ok" | "fell" | "simulation_error" | "controller_error" | "worker_error" (the
           process running it died: no metrics)
  fell: the robot fell: the base below the fall height, a link other than the allowed ones
        touching the ground or the terrain, or a joint faster than LOST_CONTROL_FACTOR times
        its velocity limit (the controller lost the robot); fall_time_s: when (NaN if not)
  failure_reason: "" for ok, else what happened: the fall, the exception's message, or
        "diverged" when a speed exceeds DIVERGED_SPEED (outcome simulation_error)
  t_end_s: simulated time reached (a run stops at a fall or an error)
  distance_m: horizontal displacement of the base origin from start to end; distance_x_m: along x
  min_zmp_margin_m: least signed distance of the ZMP to the support polygon over the steps
        with ground contact (+ inside, - outside; NaN when never in contact)
  peak_torque_nm: largest |actuator torque| of any joint (after the effort clamp) and
        peak_torque_joint: that joint's name
  foot_slip_m: horizontal path of the allowed contact links' origins over the steps where
        they slip on the ground (a contact that is not sticking), summed over links
  energy_j: actuator work, the integral of sum_j |tau_j qdot_j| dt
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from humanoid_sim.dynamics import forward_kinematics
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.simulator.simulator import StepResult

__all__ = ["DIVERGED_SPEED", "LOST_CONTROL_FACTOR", "OUTCOMES", "MetricsRecorder", "RunMetrics"]

# [m/s or rad/s]: nothing of a humanoid moves this fast; a state past it is numerical
# divergence, not physics, and ends the run as simulation_error.
DIVERGED_SPEED = 1000.0
# A joint faster than this many times its URDF velocity limit: the controller has lost the
# robot (typically a stance foot that rolled off the ground and is flung by full-effort
# torques); the run ends as a fall.
LOST_CONTROL_FACTOR = 5.0

OUTCOMES = ("ok", "fell", "simulation_error", "controller_error", "worker_error")


class RunMetrics(NamedTuple):
    """One run's metrics (module docstring)."""

    outcome: str
    fell: bool
    fall_time_s: float
    failure_reason: str
    t_end_s: float
    distance_m: float
    distance_x_m: float
    min_zmp_margin_m: float
    peak_torque_nm: float
    peak_torque_joint: str
    foot_slip_m: float
    energy_j: float


class MetricsRecorder:
    """Feed it every step (``record``); it says when the robot fell; ``result()`` at the end.

    q0: the initial configuration (nq,); min_base_height: fall height of the base origin [m];
    allowed_links: link names allowed to touch the ground and the terrain."""

    def __init__(self, model: RobotModel, q0: np.ndarray, min_base_height: float, allowed_links: Sequence[str],
                 dt: float) -> None:
        self.model = model
        self.dt = float(dt)
        self.start_xy = np.array(q0[:2], dtype=float)
        self.min_base_height = float(min_base_height)
        self.allowed = frozenset(allowed_links)
        self.peak = np.zeros(model.nj)
        self._abs_tau = np.zeros(model.nj)
        self._speed = np.zeros(model.nv)
        self._joint_speed_limit = LOST_CONTROL_FACTOR * np.asarray(model.limits.velocity, dtype=float)
        self._alarm_speed = min(DIVERGED_SPEED, float(self._joint_speed_limit.min(initial=np.inf)))
        self.energy = 0.0
        self.slip = 0.0
        self.min_margin = math.inf
        self.t = 0.0
        self.fall_time = math.nan
        self.failure = ""
        self.outcome = "ok"
        self._q_prev = np.array(q0, dtype=float)

    def record(self, result: StepResult, tau_actuator: np.ndarray) -> bool:
        """Account for one step; tau_actuator: the clamped actuator torques (nj,) [N m] it ran
        with. Returns True when the robot has fallen (the run should stop)."""
        self.t = result.t
        abs_tau = np.abs(tau_actuator, out=self._abs_tau)
        np.maximum(self.peak, abs_tau, out=self.peak)
        abs_v = np.abs(result.v, out=self._speed)
        joint_speeds = abs_v[self.model.nv - self.model.nj:]
        self.energy += float(np.dot(abs_tau, joint_speeds)) * self.dt  # sum_j |tau_j qdot_j| dt
        margin = result.zmp.margin
        if margin == margin and margin < self.min_margin:  # NaN (no contact) is skipped
            self.min_margin = margin
        slipping = set()
        intruder = ""
        for contact in result.contacts:
            if contact.link not in self.allowed:
                intruder = contact.link
            elif not contact.sticking:
                slipping.add(contact.body)
        if slipping:
            before = forward_kinematics(self.model, self._q_prev)
            after = forward_kinematics(self.model, result.q)
            for body in slipping:
                self.slip += float(np.hypot(*(after[body, :2, 3] - before[body, :2, 3])))
        top = float(abs_v.max())
        if top > self._alarm_speed:  # rare: then the detailed checks
            if top > DIVERGED_SPEED:
                return self.fail("simulation_error", f"diverged: a speed of {top:.3g} (m/s or rad/s) exceeds "
                                 f"{DIVERGED_SPEED:g} at t = {result.t:.3f} s")
            if np.any(joint_speeds > self._joint_speed_limit):
                j = int(np.argmax(joint_speeds / self._joint_speed_limit))
                return self.fail("fell", f"fell: lost control: joint {self.model.joint_names[j]} at "
                                 f"{joint_speeds[j]:.0f} rad/s, over {LOST_CONTROL_FACTOR:g} x its velocity limit, "
                                 f"at t = {result.t:.3f} s")
        self._q_prev = result.q  # the last state that was physics (the distance's end)
        if self.model.floating_base and result.q[2] < self.min_base_height:
            return self.fail("fell", f"fell: the base went below {self.min_base_height:.3f} m at t = {result.t:.3f} s")
        if intruder:
            return self.fail("fell", f"fell: link {intruder} touched the ground at t = {result.t:.3f} s")
        return False

    def fail(self, outcome: str, reason: str) -> bool:
        """Mark the run as ended by `outcome` (OUTCOMES) with `reason`; returns True."""
        self.outcome = outcome
        self.failure = reason
        if outcome == "fell":
            self.fall_time = self.t
        return True

    def result(self) -> RunMetrics:
        """The metrics so far."""
        distance = self._q_prev[:2] - self.start_xy
        peak_joint = int(np.argmax(self.peak)) if self.model.nj else 0
        return RunMetrics(
            outcome=self.outcome,
            fell=self.outcome == "fell",
            fall_time_s=self.fall_time,
            failure_reason=self.failure,
            t_end_s=self.t,
            distance_m=float(np.hypot(*distance)),
            distance_x_m=float(distance[0]),
            min_zmp_margin_m=self.min_margin if math.isfinite(self.min_margin) else math.nan,
            peak_torque_nm=float(self.peak[peak_joint]) if self.model.nj else 0.0,
            peak_torque_joint=self.model.joint_names[peak_joint] if self.model.nj else "",
            foot_slip_m=self.slip,
            energy_j=self.energy,
        )
