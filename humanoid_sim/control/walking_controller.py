"""Walking controller: footsteps -> ZMP preview -> IK reference -> whole-body torques.

Every ``update`` (one control tick, nominally every ``control_dt``):
1. Pattern: the footstep plan (``footsteps``) gives the ZMP reference; the preview servo
   (``preview_control``) advances the CoM (x, y) to the update's time, one sample per
   ``control_dt`` elapsed (usually one); the CoM height is constant; the
   swing foot follows ``swing_trajectory``; the torso heading is the mean of the feet yaws.
   While walking the plan is rolled forward at every touch-down with the current command
   (``set_command`` takes effect with the first step that starts after the preview horizon
   — the steps the preview servo already sees are committed); a zero command ends the walk
   with a stopping step and a closing step.
2. IK (``inverse_kinematics``, seed 001): one damped weighted pseudo-inverse iteration moves
   a kinematic reference configuration q_ref towards the planned CoM, feet and torso, with
   the reset posture in the null space; it is the posture target of step 3.
3. Torques (``whole_body_torque``, seed 000 Eq. 11/23): the stance soles are constrained
   virtual links (6 rows each); task accelerations with PD feedback on the measured state:
   CoM, swing sole pose, torso orientation, joint posture towards q_ref; solved together for
   θ̈, contact wrenches and joint torques; torques clamped to the effort limits.

Cost: one tick is a handful of compiled kernels (``tick_kernels``: the ZMP preview window,
frame poses/Jacobians/drifts from one DynamicsWorkspace update, the IK step, the whole-body
rows and the KKT solve), each tested against the readable reference of its step
(FootstepPlan.zmp_reference, ik_step, solve_whole_body); buffers are allocated once in
``__init__``/``reset``. ``bench/controller.py`` prints the median tick cost.

Frames: world z up; the ground is the plane z = ``ground_height``. Times are the caller's
clock [s]; call ``update`` every ``control_dt``. Late or skipped calls are tolerated (a
state lost or delayed over DDS): the pattern follows the time passed in, not the call count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import yaml

from humanoid_sim.control.external_wrench import ExternalWrench, ExternalWrenchFeedforward
from humanoid_sim.control.footsteps import (
    Footstep,
    FootstepParams,
    FootstepPlan,
    SupportPhase,
    other_side,
    plan_footsteps,
)
from humanoid_sim.control.inverse_kinematics import IKParams, _limits_with_margin
from humanoid_sim.control.preview_control import PreviewController, PreviewParams
from humanoid_sim.control.swing_trajectory import swing_foot_sample
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.control.tick_kernels import (
    COM_TASK,
    ORIENTATION_TASK,
    POSE_TASK,
    TASK_ROWS,
    GAIN_COM,
    GAIN_POSTURE,
    GAIN_SWING,
    GAIN_TORSO,
    frames_nb,
    ik_step_nb,
    ik_task_rows_nb,
    whole_body_nb,
    whole_body_rows_nb,
    zmp_samples_nb,
)
from humanoid_sim.control.whole_body_torque import WholeBodyWeights
from humanoid_sim.dynamics.kernels import integrate_nb
from humanoid_sim.model.robot_model import RobotModel


@dataclass(frozen=True)
class TaskGains:
    """PD gains of one task (a_des = a_ref + kp e + kd ė) [1/s^2], [1/s]; weight (> 0)."""

    kp: float
    kd: float
    weight: float

    def __post_init__(self) -> None:
        for name in ("kp", "kd", "weight"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"TaskGains.{name} must be finite and >= 0, got {value!r}")


@dataclass(frozen=True)
class WalkingConfig:
    """Walking parameters (config/walking.yaml documents each with units).

    control_dt: tick [s]; walk_speed: default forward speed [m/s] for callers without a
    velocity command (the controller itself walks only on set_command); com_height: CoM height above the ground [m] (None: the height at
    reset); ground_height [m]; left_sole, right_sole, torso_frame: frame names;
    swing_height: swing apex [m]; start_delay: from a command to the first ZMP shift [s]
    (gives the preview servo its look-ahead); preview_time [s], zmp_weight [1/m^2],
    jerk_weight [s^6/m^2]: preview servo; footsteps: FootstepParams; com, swing_foot, torso,
    posture: TaskGains; whole_body: WholeBodyWeights; ik: IKParams.
    joint_posture: {joint name: angle [rad]} replacing the reset posture's angle in the IK
    null-space posture (e.g. arms reaching forward to push; empty: the reset posture);
    external_wrench_lean_time: time constant [s] of the CoM's lean into the measured external
    wrenches passed to ``update`` (external_wrench.ExternalWrenchFeedforward).
    """

    control_dt: float = 0.002
    walk_speed: float = 0.15
    com_height: float | None = None
    ground_height: float = 0.0
    left_sole: str = "l_sole"
    right_sole: str = "r_sole"
    torso_frame: str = "pelvis"
    swing_height: float = 0.05
    start_delay: float = 1.6
    preview_time: float = 1.6
    zmp_weight: float = 1.0
    jerk_weight: float = 1e-6
    footsteps: FootstepParams = field(default_factory=FootstepParams)
    com: TaskGains = TaskGains(100.0, 20.0, 10.0)
    swing_foot: TaskGains = TaskGains(400.0, 40.0, 10.0)
    torso: TaskGains = TaskGains(200.0, 30.0, 1.0)
    posture: TaskGains = TaskGains(100.0, 20.0, 0.01)
    whole_body: WholeBodyWeights = field(default_factory=WholeBodyWeights)
    ik: IKParams = field(default_factory=lambda: IKParams(max_step=0.05, posture_gain=0.02))
    joint_posture: Mapping[str, float] = field(default_factory=dict)
    external_wrench_lean_time: float = 0.3

    def __post_init__(self) -> None:
        for name, angle in self.joint_posture.items():
            if not (isinstance(name, str) and isinstance(angle, (int, float)) and math.isfinite(angle)):
                raise ValueError(f"WalkingConfig.joint_posture maps joint names to finite angles [rad], "
                                 f"got {name!r}: {angle!r}")
        if not (math.isfinite(self.external_wrench_lean_time) and self.external_wrench_lean_time > 0.0):
            raise ValueError(f"WalkingConfig.external_wrench_lean_time must be finite and > 0, "
                             f"got {self.external_wrench_lean_time!r}")
        for name in ("control_dt", "swing_height", "preview_time", "zmp_weight", "jerk_weight"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"WalkingConfig.{name} must be finite and > 0, got {value!r}")
        if self.start_delay < 0.0:
            raise ValueError(f"WalkingConfig.start_delay must be >= 0, got {self.start_delay!r}")
        if self.com_height is not None and not self.com_height > 0.0:
            raise ValueError(f"WalkingConfig.com_height must be > 0 or null, got {self.com_height!r}")


_NESTED = {"footsteps": FootstepParams, "com": TaskGains, "swing_foot": TaskGains, "torso": TaskGains,
           "posture": TaskGains, "whole_body": WholeBodyWeights, "ik": IKParams}


def walking_config_from_dict(data: Mapping[str, Any]) -> WalkingConfig:
    """Build a WalkingConfig from a mapping (unknown keys raise ValueError listing valid keys)."""
    valid = {f.name for f in fields(WalkingConfig)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in valid:
            raise ValueError(f"unknown walking parameter {key!r}; valid: {', '.join(sorted(valid))}")
        if key in _NESTED:
            cls = _NESTED[key]
            sub_valid = {f.name for f in fields(cls)}
            bad = set(value) - sub_valid
            if bad:
                raise ValueError(f"unknown {key} parameter(s) {sorted(bad)}; valid: {', '.join(sorted(sub_valid))}")
            kwargs[key] = cls(**value)
        else:
            kwargs[key] = value
    return WalkingConfig(**kwargs)


def load_walking_config(path: str | Path) -> WalkingConfig:
    """Read a WalkingConfig from a YAML file (top-level mapping ``walking:`` or bare)."""
    with open(path, encoding="utf-8") as stream:
        data = yaml.safe_load(stream) or {}
    if "walking" in data:
        data = data["walking"]
    return walking_config_from_dict(data)


class WalkingReadout(NamedTuple):
    """The controller's view after the last update.

    zmp_reference: planned ZMP (2,) [m]; com_reference: planned CoM (3,) [m];
    com_velocity_reference (3,) [m/s]; com: measured CoM (3,) [m]; phase: the SupportPhase;
    walking: whether a walk is in progress; wrenches: contact wrench per stance sole frame
    (force [N], moment about the sole origin [N m], world axes) (6,).
    """

    zmp_reference: np.ndarray
    com_reference: np.ndarray
    com_velocity_reference: np.ndarray
    com: np.ndarray
    phase: SupportPhase
    walking: bool
    wrenches: dict[str, np.ndarray]


EARLY_TOUCHDOWN = 0.8  # swing phase fraction after which a reported contact ends the swing
# The preview servo's sample k is taken at t_reset + k control_dt when an update at t comes
# with t_reset + k control_dt <= t + PATTERN_TIME_TOLERANCE [s] (stamps rounded to ns).
PATTERN_TIME_TOLERANCE = 1e-6
# Samples one update may take to catch up (1 s at the default 4 ms); beyond, the servo holds.
MAX_PATTERN_SAMPLES_PER_UPDATE = 250


def _rot_z(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _yaw_of(R: np.ndarray) -> float:
    return math.atan2(R[1, 0], R[0, 0])


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _mid_yaw(yaw_left: float, yaw_right: float) -> float:
    """Heading half-way between two yaws [rad] (along the shorter arc)."""
    return _wrap(yaw_left) + 0.5 * _wrap(yaw_right - yaw_left)


def _set_planar_pose(X: np.ndarray, x: float, y: float, yaw: float, z: float) -> None:
    """X (4, 4) <- the pose at (x, y, z) [m] turned by yaw [rad] about world z (in place)."""
    c, s = math.cos(yaw), math.sin(yaw)
    X[:] = ((c, -s, 0.0, x), (s, c, 0.0, y), (0.0, 0.0, 1.0, z), (0.0, 0.0, 0.0, 1.0))


_SIDE_INDEX = {"left": 0, "right": 1}


class WalkingController:
    """See the module docstring. ``reset`` before the first ``update``."""

    def __init__(self, model: RobotModel, config: WalkingConfig = WalkingConfig()) -> None:
        if not model.floating_base:
            raise ValueError(f"model {model.name!r} has a fixed base; walking needs a floating base")
        for name in (config.left_sole, config.right_sole, config.torso_frame):
            model.frame(name)  # raises KeyError listing the valid frames
        self._joint_posture = {model.joint_index(name): float(angle)  # raises KeyError listing the joints
                               for name, angle in config.joint_posture.items()}
        self.model = model
        self.config = config
        self.kin = TaskKinematics(model)
        self._external = ExternalWrenchFeedforward(self.kin, config.external_wrench_lean_time, config.ground_height)
        self._b = np.zeros(model.nv)  # bias forces less the external wrenches' part on the base
        self._ik_kin = TaskKinematics(model)  # kinematics of the IK reference configuration
        self._sole = {"left": config.left_sole, "right": config.right_sole}
        self._command = (0.0, 0.0, 0.0)
        self._planned_command = (0.0, 0.0, 0.0)
        self._preview: PreviewController | None = None
        self._plan: FootstepPlan | None = None
        self._readout: WalkingReadout | None = None
        # Buffers of the compiled tick (tick_kernels), allocated once.
        nv, nj = model.nv, model.nj
        frames = [model.frame(name) for name in (config.left_sole, config.right_sole, config.torso_frame)]
        self._frame_bodies = np.array([f.body for f in frames], dtype=np.int64)
        self._frame_X_body_frame = np.ascontiguousarray(np.stack([f.X_body_frame for f in frames]), dtype=float)
        self._X = np.zeros((3, 4, 4))  # X_world_frame of left sole, right sole, torso
        self._J = np.zeros((3, 6, nv))
        self._drift = np.zeros((3, 6))
        # IK tasks (seed 001): left sole pose, right sole pose, CoM, torso orientation.
        self._ik_kinds = np.array([POSE_TASK, POSE_TASK, COM_TASK, ORIENTATION_TASK], dtype=np.int64)
        self._ik_bodies = np.array([frames[0].body, frames[1].body, 0, frames[2].body], dtype=np.int64)
        self._ik_X_body_frame = np.ascontiguousarray(
            np.stack([frames[0].X_body_frame, frames[1].X_body_frame, np.eye(4), frames[2].X_body_frame]),
            dtype=float)
        self._ik_weights = np.array([10.0, 10.0, 1.0, 1.0])
        self._ik_targets = np.tile(np.eye(4), (4, 1, 1))
        m_ik = sum(TASK_ROWS[k] for k in self._ik_kinds)
        self._ik_J = np.zeros((m_ik, nv))
        self._ik_e = np.zeros(m_ik)
        self._ik_delta = np.zeros(nv)
        self._lower, self._upper = _limits_with_margin(model, config.ik.limit_margin)
        self._posture_joints = np.zeros(nj)
        # Whole-body task rows: posture (nj), CoM (3), torso (3), swing sole (6).
        self._task_J = np.zeros((nj + 12, nv))
        self._task_J[:nj, nv - nj:] = np.eye(nj)
        self._task_target = np.zeros(nj + 12)
        self._task_weight = np.zeros(nj + 12)
        self._H_C = np.zeros((12, nv))
        self._drift_C = np.zeros(12)
        self._wrench_weight = np.zeros(12)
        self._wrench_ref = np.zeros(12)
        self._qdd = np.zeros(nv)
        self._effort = np.asarray(model.limits.effort, dtype=float)
        self._zmp_samples = np.zeros((1, 2))
        self._gains = np.zeros((4, 3))  # rows GAIN_COM, GAIN_SWING, GAIN_TORSO, GAIN_POSTURE
        for row, g in ((GAIN_COM, config.com), (GAIN_SWING, config.swing_foot), (GAIN_TORSO, config.torso),
                       (GAIN_POSTURE, config.posture)):
            self._gains[row] = (g.kp, g.kd, g.weight)
        self._stance_index = {(a,) + rest: np.array([_SIDE_INDEX[a]] + [_SIDE_INDEX[r] for r in rest], dtype=np.int64)
                              for a in ("left", "right") for rest in ((), ("left",), ("right",))}
        self._weight_total = model.total_mass * float(-model.gravity[2])
        period = config.footsteps.step_period
        self._rolling_steps = int(math.ceil((config.preview_time + config.start_delay) / period)) + 2

    # ------------------------------------------------------------------ setup
    def reset(self, q: np.ndarray, v: np.ndarray | None = None, t: float = 0.0) -> None:
        """Start standing at the measured state: feet where they are, the ZMP reference under
        the current CoM, the CoM height blended over 1 s to ``com_height`` (if configured);
        the reset posture becomes the IK null-space posture. q (nq,), v (nv,) [m, rad, m/s,
        rad/s]; t: the caller's clock [s]."""
        cfg, model = self.config, self.model
        q = np.asarray(q, dtype=float)
        v = np.zeros(model.nv) if v is None else np.asarray(v, dtype=float)
        self.kin.update(q, v)
        feet = {}
        for side, frame in self._sole.items():
            X = self.kin.frame_pose(frame)
            feet[side] = Footstep(side, float(X[0, 3]), float(X[1, 3]), _yaw_of(X[:3, :3]))
        com = self.kin.com.copy()
        height = cfg.com_height if cfg.com_height is not None else com[2] - cfg.ground_height
        self._com_z0 = float(com[2])
        self._com_z = cfg.ground_height + height
        self._t_reset = float(t)
        self._preview = PreviewController(PreviewParams(
            dt=cfg.control_dt, com_height=height, gravity=float(-model.gravity[2]),
            preview_time=cfg.preview_time, q_error=cfg.zmp_weight, r_jerk=cfg.jerk_weight))
        self._preview.reset(com[:2])
        self._zmp_samples = np.zeros((self._preview.n_preview + 1, 2))
        # Stand: the ZMP reference at the current CoM projection until a command comes.
        self._plan = plan_footsteps(feet["left"], feet["right"], (0.0, 0.0, 0.0), 0, cfg.footsteps,
                                    t_start=t, initial_double_support=cfg.start_delay,
                                    zmp_start=com[:2].copy())
        self._plan = FootstepPlan(
            (self._plan.phases[0]._replace(zmp_end=com[:2].copy()),), ())
        self._walking = False
        self._phase_index = 0
        self._command = (0.0, 0.0, 0.0)
        self._planned_command = (0.0, 0.0, 0.0)
        self._q_nominal = q.copy()
        j0 = model.nq - model.nj
        posture = q[j0:].copy()
        for j, angle in self._joint_posture.items():
            posture[j] = angle
        self._posture_joints = np.clip(posture, self._lower, self._upper)  # as ik_step clips it
        self._external.reset()
        self._q_ref = q.copy()
        self._t = float(t)
        self._pattern_samples = 0  # preview servo samples taken since reset (grid t_reset + k dt)
        self._readout = None

    def set_command(self, vx: float, vy: float, yaw_rate: float) -> None:
        """Walking velocity command in the walking frame: vx, vy [m/s], yaw_rate [rad/s].
        Read at every touch-down; applies to the first step beyond the preview horizon
        (about two steps later), or starts a walk after ``start_delay`` when standing."""
        cmd = (float(vx), float(vy), float(yaw_rate))
        if not all(math.isfinite(c) for c in cmd):
            raise ValueError(f"command must be finite, got {cmd!r}")
        self._command = cmd

    # --------------------------------------------------------------- readouts
    @property
    def plan(self) -> FootstepPlan:
        self._require_reset()
        assert self._plan is not None
        return self._plan

    @property
    def footsteps(self) -> tuple[Footstep, ...]:
        """Planned touch-downs of the current plan."""
        return self.plan.footsteps

    @property
    def readout(self) -> WalkingReadout:
        if self._readout is None:
            raise RuntimeError("no update yet: call reset() then update()")
        return self._readout

    @property
    def walking(self) -> bool:
        return self._walking

    def _require_reset(self) -> None:
        if self._plan is None:
            raise RuntimeError("WalkingController.reset(q, v) must be called first")

    # ----------------------------------------------------------------- pattern
    def _maybe_replan(self, t: float) -> None:
        cfg = self.config
        plan = self._plan
        assert plan is not None
        moving = any(c != 0.0 for c in self._command)
        if not self._walking:
            if moving:
                phase = plan.phase_at(t)
                start_zmp = plan.zmp_reference(t)
                self._plan = plan_footsteps(phase.left, phase.right, self._command, self._rolling_steps,
                                            cfg.footsteps, t_start=t + cfg.start_delay,
                                            zmp_start=start_zmp)
                # Hold the current ZMP until the plan starts (look-ahead for the preview).
                hold = phase._replace(t_start=t, t_end=t + cfg.start_delay, zmp_start=start_zmp,
                                      zmp_end=start_zmp)
                self._plan = FootstepPlan((hold,) + self._plan.phases, self._plan.footsteps)
                self._planned_command = self._command
                self._walking = True
                self._phase_index = self._plan.phase_index(t)
            return
        index = plan.phase_index(t)
        if index == self._phase_index:
            return
        self._phase_index = index
        phase = plan.phases[index]
        if phase.support != "double":
            return
        # A touch-down: roll the plan with the current command. Steps whose swing starts
        # within the preview horizon are committed (changing them would change the ZMP
        # reference the preview servo already acts on and kick the CoM); the command applies
        # from the first step after them.
        if not moving and self._planned_command == (0.0, 0.0, 0.0):
            return  # already stopping
        previous = plan.phases[index - 1] if index > 0 else None
        if previous is None or previous.swing_side is None:
            return
        horizon_end = phase.t_start + cfg.preview_time
        last = index - 1
        for j in range(index, len(plan.phases)):
            if plan.phases[j].swing_side is not None and plan.phases[j].t_start < horizon_end:
                last = j
        base = plan.phases[last]
        assert base.swing_side is not None and base.swing_to is not None
        feet = {"left": base.left, "right": base.right}
        feet[base.swing_side] = base.swing_to
        n_steps = self._rolling_steps if moving else 1
        new = plan_footsteps(feet["left"], feet["right"], self._command, n_steps, cfg.footsteps,
                             t_start=base.t_end, first_swing=other_side(base.swing_side),
                             initial_double_support=cfg.footsteps.double_support,
                             zmp_start=base.zmp_end)
        self._plan = FootstepPlan(plan.phases[: last + 1] + new.phases,
                                  plan.footsteps[: self._footsteps_done(plan, last + 1)] + new.footsteps)
        self._planned_command = self._command

    @staticmethod
    def _footsteps_done(plan: FootstepPlan, index: int) -> int:
        return sum(1 for p in plan.phases[:index] if p.swing_side is not None)

    # ------------------------------------------------------------------ update
    def update(self, t: float, q: np.ndarray, v: np.ndarray,
               contact_info: Mapping[str, bool] | None = None,
               external_wrenches: Sequence[ExternalWrench] | None = None) -> np.ndarray:
        """Joint torques (nj,) [N m] for the measured state at time t [s].

        q (nq,), v (nv,): measured configuration and velocity (base twist in the base frame).
        contact_info: optional {sole frame name: in contact}. The plan decides the stance
        feet; contact_info only turns a swing sole that touches the ground in the last
        (1 - EARLY_TOUCHDOWN) of its swing into a constraint. (Dropping planned stance feet
        that report no contact was tried: a landing foot carries no load yet, so it was
        never "in contact" and the robot fell.)
        external_wrenches: optional measured wrenches on the robot's links (an object's
        reaction to a push; ExternalWrench: link, world point, world wrench on the robot),
        fed forward: the CoM leans into them (filtered over ``external_wrench_lean_time``)
        so the centre of pressure stays on the footstep plan, and their part on the floating
        base joins the whole-body dynamics (external_wrench.py). None: no wrench.
        """
        self._require_reset()
        assert self._preview is not None and self._plan is not None
        cfg, model, kin = self.config, self.model, self.kin
        dt = cfg.control_dt
        q = np.ascontiguousarray(q, dtype=float)
        v = np.ascontiguousarray(v, dtype=float)
        kin.update(q, v)
        self._external.update(external_wrenches, float(t) - self._t)
        external = self._external
        self._t = float(t)
        self._maybe_replan(t)
        if self._walking and not any(c != 0.0 for c in self._command) and t > self._plan.t_end:
            self._walking = False
        plan = self._plan
        phase = plan.phase_at(t)

        # 1. Pattern: advance the preview servo to t on its own grid of control_dt samples
        # (k dt after reset), so the CoM reference keeps pace with the plan when a caller
        # skips ticks (a state lost or late over DDS) or calls at uneven times; the state
        # after the last sample is the reference for (t, t + dt].
        zmp_ref = self._zmp_samples
        starts, ends, z0, z1 = plan._arrays
        samples = 0
        while self._t_reset + self._pattern_samples * dt <= t + PATTERN_TIME_TOLERANCE:
            if samples == MAX_PATTERN_SAMPLES_PER_UPDATE:
                # A long gap (a paused caller): hold the servo state, move the grid to t.
                self._pattern_samples = int(math.floor((t - self._t_reset) / dt)) + 1
                break
            zmp_samples_nb(starts, ends, z0, z1, self._t_reset + self._pattern_samples * dt, dt, zmp_ref)
            self._preview.step(zmp_ref[0], zmp_ref[1:])
            self._pattern_samples += 1
            samples += 1
        cart = self._preview.state
        s = min(max((t - self._t_reset) / 1.0, 0.0), 1.0)  # CoM height: blend over 1 s from reset
        sig = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)
        dsig = 30.0 * s * s * (1.0 - s) ** 2 if s < 1.0 else 0.0  # per second (blend over 1 s)
        ddsig = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s) if s < 1.0 else 0.0
        dz = self._com_z - self._com_z0
        # The CoM leans into measured external wrenches (external_wrench.py; zero without).
        com_ref = np.array([cart.com[0] + external.lean[0], cart.com[1] + external.lean[1],
                            self._com_z0 + sig * dz])
        com_vel_ref = np.array([cart.com_vel[0] + external.lean_velocity[0],
                                cart.com_vel[1] + external.lean_velocity[1], dsig * dz])
        com_acc_ref = np.array([cart.com_acc[0] + external.lean_acceleration[0],
                                cart.com_acc[1] + external.lean_acceleration[1], ddsig * dz])

        # Reference sole poses (IK targets 0, 1) with their velocities and accelerations.
        X_feet = self._ik_targets
        vel_ref = np.zeros(6)
        acc_ref = np.zeros(6)
        stance = ["left", "right"]
        swing_side = None
        for k, foot in enumerate((phase.left, phase.right)):
            _set_planar_pose(X_feet[k], foot.x, foot.y, foot.yaw, cfg.ground_height)
        torso_yaw = _mid_yaw(phase.left.yaw, phase.right.yaw)
        torso_rate = torso_acc = 0.0
        if phase.support != "double" and phase.swing_side is not None:
            swing_side = phase.swing_side
            stance = [phase.support]
            sample = swing_foot_sample(phase.swing_from, phase.swing_to, t, phase.t_start,
                                       phase.t_end - phase.t_start, cfg.swing_height, cfg.ground_height)
            k_sw = _SIDE_INDEX[swing_side]
            _set_planar_pose(X_feet[k_sw], 0.0, 0.0, sample.yaw, 0.0)
            X_feet[k_sw, :3, 3] = sample.position
            vel_ref[:3] = sample.velocity
            vel_ref[5] = sample.yaw_rate
            acc_ref[:3] = sample.acceleration
            acc_ref[5] = sample.yaw_acc
            yaw_l = sample.yaw if swing_side == "left" else phase.left.yaw
            yaw_r = sample.yaw if swing_side == "right" else phase.right.yaw
            torso_yaw = _mid_yaw(yaw_l, yaw_r)
            torso_rate = 0.5 * sample.yaw_rate
            torso_acc = 0.5 * sample.yaw_acc
        if (contact_info is not None and swing_side is not None
                and contact_info.get(self._sole[swing_side], False)
                and t - phase.t_start > EARLY_TOUCHDOWN * (phase.t_end - phase.t_start)):
            # Early touch-down at the end of the swing: hold the foot where it landed (a
            # constraint, no load asked of it) instead of pushing it along its trajectory.
            stance = [phase.support, swing_side]
        R_torso = self._ik_targets[3, :3, :3]
        R_torso[:] = _rot_z(torso_yaw)

        # 2. IK reference: one iteration from the previous reference (seed 001; compiled
        # twin of inverse_kinematics.ik_step with the tasks left sole, right sole, CoM, torso).
        ik, ik_kin = cfg.ik, self._ik_kin
        ik_kin.update_kinematics(self._q_ref)
        ws = ik_kin.ws
        m = ik_task_rows_nb(ws.parent, ws.ndof, ws.v_index, ws.S, ws.R, ws.p, ik_kin.com,
                            ik_kin.com_jacobian, self._ik_bodies, self._ik_X_body_frame, self._ik_kinds,
                            self._ik_weights, self._ik_targets, com_ref, self._ik_J, self._ik_e)
        j0 = model.nq - model.nj
        ik_step_nb(self._ik_J[:m], self._ik_e[:m], model.nv - model.nj, self._q_ref[j0:],
                   self._posture_joints, ik.posture_gain, self._lower, self._upper, ik.base_weight,
                   ik.joint_weight, ik.damping_floor, ik.damping_max, ik.singular_threshold,
                   ik.max_step, self._ik_delta)
        tree = ik_kin.tree
        q_ref_new = np.empty(model.nq)
        integrate_nb(tree.joint_type, tree.q_index, tree.v_index, self._q_ref, self._ik_delta, 1.0, q_ref_new)
        np.clip(q_ref_new[j0:], self._lower, self._upper, out=q_ref_new[j0:])
        self._q_ref = q_ref_new

        # 3. Whole-body torques (seed 000 Eq. 23) at the measured state (kin updated above).
        ws = kin.ws
        X, J, drift = self._X, self._J, self._drift
        frames_nb(ws.parent, ws.ndof, ws.v_index, ws.S, ws.V, ws.A, ws.R, ws.p, self._frame_bodies,
                  self._frame_X_body_frame, X, J, drift, True)
        # Task rows (posture, CoM, torso, swing sole; seed 000 Eq. 22) and contact rows with
        # the reference load distribution (tick_kernels.whole_body_rows_nb documents them):
        # load shares from the cart-table ZMP of the planned CoM motion (where the total
        # centre of pressure must be), so lateral CoM accelerations in double support come from
        # vertical force differences between the feet rather than ankle moments.
        nj, nv = model.nj, model.nv
        task_J, target, weight = self._task_J, self._task_target, self._task_weight
        H_C, drift_C, w_f, w_ref = self._H_C, self._drift_C, self._wrench_weight, self._wrench_ref
        swing_row = _SIDE_INDEX[swing_side] if swing_side is not None and swing_side not in stance else -1
        stance_idx = self._stance_index[tuple(stance)]
        wb = cfg.whole_body
        m, nc = whole_body_rows_nb(
            nv - nj, kin.com_jacobian, kin.com, kin.com_velocity, kin.com_drift, com_ref, com_vel_ref,
            com_acc_ref, self._gains, self._q_ref, q, v, X, J, drift, R_torso, torso_rate, torso_acc,
            swing_row, X_feet, vel_ref, acc_ref, stance_idx, cart.zmp,
            self._weight_total - self._external.vertical_force, wb.wrench,
            task_J, target, weight, H_C, drift_C, w_f, w_ref)
        wrenches = np.empty(nc)
        tau = np.empty(nj)
        n_base = nv - nj
        self._b[:] = kin.b
        self._b[:n_base] -= self._external.base_force[:n_base]  # the push on the floating base
        whole_body_nb(kin.M, self._b, H_C[:nc], drift_C[:nc], task_J[:m], target[:m], weight[:m],
                      wb.acceleration, wb.torque, w_f[:nc], w_ref[:nc], nv - nj, self._qdd, wrenches, tau)
        if not np.all(np.isfinite(tau)):
            raise ValueError(f"whole-body system produced non-finite torques at t = {t:.4f} s")
        np.clip(tau, -self._effort, self._effort, out=tau)
        self._readout = WalkingReadout(
            zmp_reference=zmp_ref[0].copy(),
            com_reference=com_ref,
            com_velocity_reference=com_vel_ref,
            com=kin.com.copy(),
            phase=phase,
            walking=self._walking,
            wrenches={self._sole[sd]: wrenches[6 * k: 6 * k + 6] for k, sd in enumerate(stance)},
        )
        return tau
