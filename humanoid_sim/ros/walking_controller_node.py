"""The walking controller node: measured state in, joint torques out, over topics only.

A thin translation layer around ``humanoid_sim.control.WalkingController`` (mode ``walk``)
or a ``HoldingController`` (mode ``stand``):

    joint_states          sensor_msgs/JointState      ─┐
    ground_truth/odom     nav_msgs/Odometry           ─┼─> q (nq,), v (nv,) ─┐
    contact/<foot>/wrench geometry_msgs/WrenchStamped ─┘   (feet in contact) ─┼─> controller ─> tau (nj,)
    cmd_vel               geometry_msgs/Twist         ───> (vx, vy, yaw rate) ┘        │
    joint_commands        sensor_msgs/JointState (effort by joint name)  <─────────────┘

The topic names are the simulation node's (``humanoid_sim.ros.sim_node``), relative, so a
namespace or remapping moves them together.

Timing is the simulation's: the state messages carry sim-time stamps. When a joint state
and an odometry message with matching stamps (within ``state_sync_tolerance``) are both in,
the node answers with a torque command stamped like them; a new torque is computed when at
least one control period (``control_rate``) of sim time has passed since the last one,
otherwise the last torque is sent again (zero-order hold). So the node answers every state
the simulator publishes, which also drives the simulator's lock-step mode (one physics tick
per command).

Contact: a foot's wrench says whether it is in contact (``contact_force_threshold``) only
when it is at most ``contact_max_age`` older than the state; by default (0) the wrenches are
not used and the walking plan decides which feet are stance feet (the simulator publishes a
tick's wrenches after its state, and stale contact data mixed with the plan is worse than
the plan alone).

Velocity command: ``cmd_vel`` linear.x, linear.y [m/s] and angular.z [rad/s] in the robot's
walking frame. Without it (never received, or older than ``cmd_vel_timeout`` when that is
> 0) the robot walks straight ahead at ``walk_speed`` (0 = stand still).

Readouts (for RViz and the demo's report): ``~/planned_zmp`` (PointStamped, odom),
``~/com_reference`` (PointStamped, odom), ``~/footsteps`` (PoseArray of planned
touch-downs, odom), ``~/phase`` (std_msgs/String: support phase, e.g. ``double``, ``left``).

Run: ``ros2 run humanoid_sim walking_controller`` or
``python -m humanoid_sim.ros.walking_controller_node --ros-args -p mode:=stand``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import rclpy
from geometry_msgs.msg import PointStamped, Pose, PoseArray, Twist, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String

from humanoid_sim.contact.environment import Environment
from humanoid_sim.control.holding_controller import HoldingController
from humanoid_sim.control.walking_controller import WalkingController, load_walking_config
from humanoid_sim.model import UrdfError, load_urdf, neutral_configuration
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.ros.conversions import (
    NANOSECONDS_PER_SECOND,
    header_stamp_nanoseconds,
    joint_arrays_from_joint_state,
    nanoseconds_from_stamp,
    point_message,
    stamp_from_nanoseconds,
)
from humanoid_sim.numba_cache import compile_notice
from humanoid_sim.package_data import package_file
from humanoid_sim.ros.guarded_publisher import guarded_publisher
from humanoid_sim.ros.process_tuning import freeze_startup_objects, run_node_main, spin
from humanoid_sim.ros.tf_serialization import SerializedEffortCommand, SerializedJointState, SerializedOdometry
from humanoid_sim.simulator.initial_pose import load_initial_poses, pose_configuration
from humanoid_sim.ros.parameters import ParameterSpec

CONTROLLER_MODES = ("walk", "stand")

# Topic names (relative: a namespace or remapping moves them all). They are the simulation
# node's names (humanoid_sim.ros.sim_node); the contact wrench topic of a link is
# CONTACT_WRENCH_TOPIC.format(link=...) (the wrench on the link, in the link frame).
JOINT_STATES_TOPIC = "joint_states"
ODOMETRY_TOPIC = "ground_truth/odom"
CONTACT_WRENCH_TOPIC = "contact/{link}/wrench"
TORQUE_COMMAND_TOPIC = "joint_commands"
CMD_VEL_TOPIC = "cmd_vel"
# Wall seconds without any state before the held torque is sent again (see _keep_alive).
KEEP_ALIVE_AFTER_S = 2.0


# ---------------------------------------------------------------- parameters


CONTROLLER_PARAMETER_SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot_description", "", "URDF XML of the robot; empty: read urdf_path", read_only=True),
    ParameterSpec(
        "urdf_path", "", "URDF file used when robot_description is empty; empty: the bundled humanoid", read_only=True
    ),
    ParameterSpec(
        "mode", "walk", "walk: the walking controller; stand: hold the initial posture (PD + gravity compensation)",
        choices=CONTROLLER_MODES, read_only=True,
    ),
    ParameterSpec(
        "walking_config", "", "walking controller YAML; empty: the bundled config/walking.yaml", read_only=True
    ),
    ParameterSpec(
        "control_rate", 0.0,
        "torque update rate [Hz of sim time]; 0: 1 / control_dt of the walking config", low=0.0, high=10000.0,
        read_only=True, unit="Hz",
    ),
    ParameterSpec(
        "walk_speed", 0.15, "forward speed without cmd_vel [m/s]; 0: stand still", low=-1.0, high=1.0, unit="m/s"
    ),
    ParameterSpec(
        "cmd_vel_timeout", 0.0,
        "sim seconds after the last cmd_vel before walk_speed applies again; 0: the last cmd_vel holds",
        low=0.0, high=3600.0, unit="s",
    ),
    ParameterSpec(
        "contact_force_threshold", 20.0, "a foot is in contact when its vertical ground force exceeds this [N]",
        low=0.0, high=1e5, unit="N",
    ),
    ParameterSpec(
        "contact_max_age", 0.0,
        "foot wrenches older than this [s of sim time] relative to the state are not used (the walking plan"
        " decides that foot's contact); 0: wrenches are not used (they come after the state of their tick)",
        low=0.0, high=1.0, unit="s",
    ),
    ParameterSpec(
        "foot_links", ["l_foot", "r_foot"],
        "contact links of the left and right foot (their wrench topics are contact/<link>/wrench)", read_only=True,
    ),
    ParameterSpec(
        "sole_frames", ["l_sole", "r_sole"], "sole frames of the left and right foot (z up, at the sole centre)",
        read_only=True,
    ),
    ParameterSpec(
        "odom_frame", "odom", "the simulator's odometry frame (its odom_frame): frame of ground_truth/odom and of"
        " the readouts", read_only=True,
    ),
    ParameterSpec(
        "state_sync_tolerance", 0.0005,
        "joint state and odometry stamps closer than this [s] are one state", low=0.0, high=1.0, unit="s",
    ),
    ParameterSpec("hold_kp", 1000.0, "stand mode: largest joint stiffness [N m/rad]", low=1e-3, high=1e5, unit="N m/rad"),
    ParameterSpec("hold_kd", 20.0, "stand mode: largest joint damping [N m s/rad]", low=0.0, high=1e4, unit="N m s/rad"),
    ParameterSpec(
        "hold_bandwidth", 40.0,
        "stand mode: joint PD bandwidth [rad/s] (gains = apparent inertia x bandwidth^2, x 2 bandwidth, capped by"
        " hold_kp, hold_kd)", low=0.1, high=1e4, unit="rad/s",
    ),
)

_SPECS = {spec.name: spec for spec in CONTROLLER_PARAMETER_SPECS}


@dataclass(frozen=True)
class ControllerParameters:
    """Validated parameter values (see CONTROLLER_PARAMETER_SPECS for meaning and units)."""

    robot_description: str
    urdf_path: str
    mode: str
    walking_config: str
    control_rate: float
    walk_speed: float
    cmd_vel_timeout: float
    contact_force_threshold: float
    contact_max_age: float
    foot_links: tuple[str, ...]
    sole_frames: tuple[str, ...]
    odom_frame: str
    state_sync_tolerance: float
    hold_kp: float
    hold_kd: float
    hold_bandwidth: float


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_controller_parameter(name: str, value: Any) -> tuple[bool, str]:
    """(ok, reason) for one parameter value; the reason names the parameter and the rule."""
    spec = _SPECS.get(name)
    if spec is None:
        return False, f"unknown parameter {name!r}; valid: {', '.join(_SPECS)}"
    if isinstance(spec.default, str):
        if not isinstance(value, str):
            return False, f"{name}: expected a string, got {type(value).__name__}"
        if spec.choices and value not in spec.choices:
            return False, f"{name}: {value!r} is not one of {', '.join(spec.choices)}"
        return True, ""
    if isinstance(spec.default, list):
        if isinstance(value, (str, bytes)) or not all(isinstance(v, str) and v for v in value):
            return False, f"{name}: expected a list of non-empty strings"
        if len(value) != 2:
            return False, f"{name}: expected 2 names (left, right), got {len(value)}"
        return True, ""
    if not _is_number(value):
        return False, f"{name}: expected a number, got {type(value).__name__}"
    v = float(value)
    if not math.isfinite(v):
        return False, f"{name}: {v} is not finite"
    if (spec.low is not None and v < spec.low) or (spec.high is not None and v > spec.high):
        return False, f"{name}: {v} is outside [{spec.low}, {spec.high}] {spec.unit}".rstrip()
    return True, ""


def validate_controller_parameters(values: dict[str, Any]) -> ControllerParameters:
    """All parameters, defaults filled in, validated; raises ValueError listing every problem."""
    merged = {spec.name: values.get(spec.name, spec.default) for spec in CONTROLLER_PARAMETER_SPECS}
    problems = [reason for name, value in merged.items() for ok, reason in [validate_controller_parameter(name, value)] if not ok]
    problems += [f"unknown parameter {name!r}; valid: {', '.join(_SPECS)}" for name in sorted(set(values) - set(_SPECS))]
    if problems:
        raise ValueError("\n".join(problems))
    kwargs = {}
    for f in fields(ControllerParameters):
        value = merged[f.name]
        if isinstance(value, list):
            value = tuple(value)
        elif isinstance(_SPECS[f.name].default, float):
            value = float(value)
        kwargs[f.name] = value
    return ControllerParameters(**kwargs)


# ---------------------------------------------------------------- pure helpers


def _normalize_quaternion(q_base: np.ndarray) -> None:
    """Scale the quaternion q_base[3:7] (x, y, z, w) of a base pose to unit length, in place
    (a zero quaternion is left as it is: the finiteness checks reject the state)."""
    norm = float(np.linalg.norm(q_base[3:7]))
    if norm > 0.0:
        q_base[3:7] /= norm


def base_state_from_odometry(msg: Any) -> tuple[np.ndarray, np.ndarray]:
    """(q_base (7,), v_base (6,)) of a nav_msgs/Odometry (the reverse of ``odometry_message``).

    q_base = (position [m], quaternion (x, y, z, w)) of the base in odom; v_base = (linear
    [m/s], angular [rad/s]) velocity of the base, in the base frame (the child frame, as
    REP 105 and the library's v layout both have it).
    """
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    q_base = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w], dtype=float)
    _normalize_quaternion(q_base)
    return q_base, np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z], dtype=float)


class WalkCommand:
    """The walking velocity command: the latest cmd_vel, or the default when there is none.

    default_speed: forward speed [m/s] without cmd_vel; timeout: sim seconds after which a
    cmd_vel expires (0: never).
    """

    def __init__(self, default_speed: float, timeout: float) -> None:
        self.default_speed = float(default_speed)
        self.timeout = float(timeout)
        self._last: tuple[float, float, float] | None = None
        self._last_t = -math.inf

    def receive(self, t: float, vx: float, vy: float, yaw_rate: float) -> bool:
        """Record a cmd_vel at sim time t [s]; False (and ignored) if any value is not finite."""
        command = (float(vx), float(vy), float(yaw_rate))
        if not all(math.isfinite(c) for c in command):
            return False
        self._last, self._last_t = command, float(t)
        return True

    def at(self, t: float) -> tuple[float, float, float]:
        """(vx [m/s], vy [m/s], yaw_rate [rad/s]) in effect at sim time t [s]."""
        if self._last is not None and (self.timeout <= 0.0 or t - self._last_t <= self.timeout):
            return self._last
        return (self.default_speed, 0.0, 0.0)


# ---------------------------------------------------------------- the node


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    unit = f" [{spec.unit}]" if spec.unit and f"[{spec.unit}" not in spec.description else ""
    descriptor = ParameterDescriptor(description=spec.description + unit, read_only=spec.read_only)
    if spec.choices:
        descriptor.additional_constraints = f"one of: {', '.join(spec.choices)}"
    if isinstance(spec.default, float) and spec.low is not None and spec.high is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)]
    return descriptor


class WalkingControllerNode(Node):
    """See the module docstring. Raises ValueError / KeyError / FileNotFoundError at start for
    invalid parameters, a URDF that does not load or a missing walking config."""

    def __init__(self, node_name: str = "walking_controller", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        for spec in CONTROLLER_PARAMETER_SPECS:
            self.declare_parameter(spec.name, spec.default, _descriptor(spec))
        self.params = validate_controller_parameters(
            {spec.name: self.get_parameter(spec.name).value for spec in CONTROLLER_PARAMETER_SPECS}
        )
        p = self.params
        self.model = self._load_model(p)
        config = load_walking_config(p.walking_config or package_file("config/walking.yaml"))
        if p.control_rate > 0.0:
            config = dataclasses.replace(config, control_dt=1.0 / p.control_rate)
        config = dataclasses.replace(config, left_sole=p.sole_frames[0], right_sole=p.sole_frames[1])
        self.control_period_ns = int(round(config.control_dt * 1e9))
        if p.mode == "walk":
            self.controller: WalkingController | HoldingController = WalkingController(self.model, config)
        else:
            self.controller = HoldingController(
                self.model, (p.sole_frames[0], p.sole_frames[1]), p.hold_kp, p.hold_kd, p.hold_bandwidth
            )
        self.command = WalkCommand(p.walk_speed, p.cmd_vel_timeout)
        self._warm_up()
        nj = self.model.nj
        self._tau = np.zeros(nj)
        self._joint_state: tuple[int, np.ndarray, np.ndarray] | None = None
        self._odometry: tuple[int, np.ndarray, np.ndarray] | None = None
        self._foot_force_z: dict[str, tuple[int, float]] = {}  # link -> (stamp [ns], vertical force [N])
        self._last_control_ns: int | None = None
        self._last_answered_ns = -1
        self._last_readout_ns: int | None = None
        self._last_q: np.ndarray | None = None
        self.updates = 0
        self.failures = 0
        self.add_on_set_parameters_callback(self._on_set_parameters)

        state_qos = QoSProfile(depth=1)  # only the newest state matters
        # The state comes raw: the simulator's JointState and Odometry layouts are read straight
        # from their bytes (about 20 us instead of 150 us of message objects per state); any other
        # layout is deserialized.
        self._joint_state_layout = SerializedJointState(self.model.joint_names, readable=True)
        self._odometry_layout = SerializedOdometry(p.odom_frame, self.model.body_names[0])
        self._command_bytes = SerializedEffortCommand(self.model.joint_names)
        self.create_subscription(JointState, JOINT_STATES_TOPIC, self._on_joint_state_bytes, state_qos, raw=True)
        self.create_subscription(Odometry, ODOMETRY_TOPIC, self._on_odometry_bytes, state_qos, raw=True)
        self.create_subscription(Twist, CMD_VEL_TOPIC, self._on_cmd_vel, 10)
        for link in p.foot_links:
            self.create_subscription(
                WrenchStamped, CONTACT_WRENCH_TOPIC.format(link=link),
                lambda msg, link=link: self._on_wrench(link, msg), 10,
            )
        self._torque_pub = guarded_publisher(self, JointState, TORQUE_COMMAND_TOPIC, 10)
        self._zmp_pub = guarded_publisher(self, PointStamped, "~/planned_zmp", 10)
        self._com_pub = guarded_publisher(self, PointStamped, "~/com_reference", 10)
        self._footsteps_pub = guarded_publisher(self, PoseArray, "~/footsteps", 10)
        self._phase_pub = guarded_publisher(self, String, "~/phase", 10)
        self._readout_period_ns = int(1e9 / 50.0)
        # A simulator in lock-step mode waits for a command before each tick; its initial
        # state may have been published before this node was discovered (lost), or without
        # odometry. So when a simulator listens but no state came for a while, the held
        # torque (zero at first) is sent again, which runs one tick and gets things going.
        self._last_state_wall = time.monotonic()
        self.keep_alive_commands = 0
        self.create_timer(0.5, self._keep_alive, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(
            f"ready: mode {p.mode} for {self.model.name!r} ({nj} joints), control every "
            f"{self.control_period_ns / 1e6:.3f} ms of sim time, default speed {p.walk_speed} m/s"
        )

    # ------------------------------------------------------------ setup
    @staticmethod
    def _load_model(p: ControllerParameters) -> RobotModel:
        if p.robot_description:
            return load_urdf(p.robot_description)
        return load_urdf(p.urdf_path or str(package_file("urdf/humanoid.urdf")))

    def _warm_up(self) -> None:
        """One reset and update on the model's neutral configuration, before subscribing:
        the numba kernels compile now, not while a running simulator waits for torques."""
        self.get_logger().info(compile_notice().replace("physics kernels", "controller kernels"))
        start = time.monotonic()
        q = self._standing_configuration()
        v = np.zeros(self.model.nv)
        try:
            self.controller.reset(q, v, 0.0)
            self.controller.update(0.0, q, v, None)
        except Exception as error:  # noqa: BLE001 - only a warm-up; the real state decides
            self.get_logger().warning(f"controller warm-up on the neutral configuration failed: {error}")
        self.get_logger().info(f"controller warmed up in {time.monotonic() - start:.1f} s")

    def _standing_configuration(self) -> np.ndarray:
        """The simulator's "stand" pose for this robot if it has one, else the neutral
        configuration with the base 1 m up (only for warming up)."""
        try:
            poses = load_initial_poses(None, self.model.name)
            return pose_configuration(self.model, poses["stand"], Environment())
        except Exception:  # noqa: BLE001 - no stand pose for this robot: any valid configuration will do
            q = neutral_configuration(self.model)
            if self.model.floating_base:
                q[2] = 1.0
            return q

    def _on_set_parameters(self, parameters: list) -> SetParametersResult:
        updates = {}
        for parameter in parameters:
            ok, reason = validate_controller_parameter(parameter.name, parameter.value)
            if not ok:
                return SetParametersResult(successful=False, reason=reason)
            if _SPECS[parameter.name].read_only:
                return SetParametersResult(successful=False, reason=f"{parameter.name} is read-only (restart the node)")
            value = parameter.value
            updates[parameter.name] = float(value) if isinstance(_SPECS[parameter.name].default, float) else value
        self.params = dataclasses.replace(self.params, **updates)
        self.command.default_speed = self.params.walk_speed
        self.command.timeout = self.params.cmd_vel_timeout
        if isinstance(self.controller, HoldingController):
            self.controller.kp, self.controller.kd = self.params.hold_kp, self.params.hold_kd
            self.controller.bandwidth = self.params.hold_bandwidth
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------ inputs
    def _on_joint_state_bytes(self, data: bytes) -> None:
        layout = self._joint_state_layout
        try:
            position, velocity, _ = layout.read(data)
        except ValueError:
            self._on_joint_state(deserialize_message(data, JointState))
            return
        self._take_joint_state(header_stamp_nanoseconds(data), position, velocity)

    def _on_joint_state(self, msg: JointState) -> None:
        try:
            position, velocity, _ = joint_arrays_from_joint_state(msg, self.model.joint_names, ignore_unknown=True)
        except (KeyError, ValueError) as error:
            self.get_logger().warning(f"ignoring joint state: {error}", throttle_duration_sec=2.0)
            return
        self._take_joint_state(nanoseconds_from_stamp(msg.header.stamp), position, velocity)

    def _take_joint_state(self, stamp_ns: int, position: np.ndarray, velocity: np.ndarray) -> None:
        if not (np.all(np.isfinite(position)) and np.all(np.isfinite(velocity))):
            missing = [n for n, x, y in zip(self.model.joint_names, position, velocity) if not (math.isfinite(x) and math.isfinite(y))]
            self.get_logger().warning(f"ignoring joint state without position/velocity of {missing}", throttle_duration_sec=2.0)
            return
        self._joint_state = (stamp_ns, position, velocity)
        self._last_state_wall = time.monotonic()
        self._control_while_running()

    def _on_odometry_bytes(self, data: bytes) -> None:
        known = self._odometry_layout.read(data)
        if known is None:
            self._on_odometry(deserialize_message(data, Odometry))
            return
        stamp_ns, q_base, v_base = known
        _normalize_quaternion(q_base)
        self._take_odometry(stamp_ns, q_base, v_base)

    def _on_odometry(self, msg: Odometry) -> None:
        q_base, v_base = base_state_from_odometry(msg)
        self._take_odometry(nanoseconds_from_stamp(msg.header.stamp), q_base, v_base)

    def _take_odometry(self, stamp_ns: int, q_base: np.ndarray, v_base: np.ndarray) -> None:
        if not (np.all(np.isfinite(q_base)) and np.all(np.isfinite(v_base))):
            self.get_logger().warning("ignoring non-finite odometry", throttle_duration_sec=2.0)
            return
        self._odometry = (stamp_ns, q_base, v_base)
        self._last_state_wall = time.monotonic()
        self._control_while_running()

    def _control_while_running(self) -> None:
        """``_control``, except that publishing refused because rclpy is shutting down (SIGINT
        while a state is being answered) ends the callback quietly, not with a traceback."""
        try:
            self._control()
        except Exception:
            if self.context.ok():
                raise

    def _keep_alive(self) -> None:
        if time.monotonic() - self._last_state_wall < KEEP_ALIVE_AFTER_S:
            return
        if self._torque_pub.get_subscription_count() == 0:
            return  # no simulator yet
        self._last_state_wall = time.monotonic()
        self.keep_alive_commands += 1
        if self._joint_state is None:
            # Not a stall: a simulator that has matched our topics may still be compiling its
            # kernels (a minute on a first start) or may have published its first state before
            # it discovered us. Said once; the kick below stays silent.
            if self.keep_alive_commands == 1:
                self.get_logger().info("waiting for the simulator's first state (a first start compiles its kernels)")
            self._publish_torque(0)
            return
        self.get_logger().info(
            f"no state for {KEEP_ALIVE_AFTER_S:g} s: sending the held torque again (a lock-step simulator needs a"
            " command to tick)", throttle_duration_sec=10.0,
        )
        self._publish_torque(self._joint_state[0])

    def _publish_torque(self, t_ns: int) -> None:
        """The held torque as a JointState (names, effort) stamped t_ns [ns of sim time]."""
        sec, nanosec = divmod(t_ns, NANOSECONDS_PER_SECOND)
        self._torque_pub.publish(self._command_bytes.fill(sec, nanosec, self._tau))

    def _on_wrench(self, link: str, msg: WrenchStamped) -> None:
        self._foot_force_z[link] = (nanoseconds_from_stamp(msg.header.stamp), float(msg.wrench.force.z))

    def _on_cmd_vel(self, msg: Twist) -> None:
        t = self._joint_state[0] * 1e-9 if self._joint_state else 0.0
        if not self.command.receive(t, msg.linear.x, msg.linear.y, msg.angular.z):
            self.get_logger().warning("ignoring non-finite cmd_vel", throttle_duration_sec=2.0)

    # ------------------------------------------------------------ control
    def _contact_info(self, t_ns: int) -> dict[str, bool] | None:
        """{sole frame: in contact} for the feet whose wrench is at most ``contact_max_age``
        older than the state at t_ns [ns]; feet without fresh data are left out (the walking
        plan decides for them), None when no foot has fresh data."""
        p = self.params
        max_age = int(p.contact_max_age * 1e9)
        if max_age <= 0:
            return None
        info = {}
        for link, sole in zip(p.foot_links, p.sole_frames):
            stamp, force_z = self._foot_force_z.get(link, (None, 0.0))
            if stamp is not None and 0 <= t_ns - stamp <= max_age:
                info[sole] = force_z > p.contact_force_threshold
        return info or None

    def _control(self) -> None:
        if self._joint_state is None or self._odometry is None:
            return
        t_joints, position, velocity = self._joint_state
        t_odom, q_base, v_base = self._odometry
        if abs(t_joints - t_odom) > int(self.params.state_sync_tolerance * 1e9):
            return
        t_ns = max(t_joints, t_odom)
        if t_ns == self._last_answered_ns:
            return
        q = np.concatenate([q_base, position])
        v = np.concatenate([v_base, velocity])
        reason = self._restart_reason(t_ns, q)
        if reason:
            self.get_logger().info(f"{reason}: controller reset at t = {t_ns * 1e-9:.3f} s")
        if self._last_control_ns is None or reason:
            try:
                self.controller.reset(q, v, t_ns * 1e-9)
            except Exception as error:  # noqa: BLE001 - a state it cannot start from (e.g. a diverged
                # simulation): keep commanding the last torque, try again on the next state
                self.failures += 1
                self.get_logger().error(f"controller reset failed at t = {t_ns * 1e-9:.3f} s: {error}",
                                        throttle_duration_sec=2.0)
                self._publish_torque(t_ns)
                self._last_answered_ns = t_ns
                return
            self._last_control_ns = None
        self._last_q = q
        if self._last_control_ns is None or t_ns - self._last_control_ns >= self.control_period_ns - 1000:
            t = t_ns * 1e-9
            try:
                self.controller.set_command(*self.command.at(t))
                tau = self.controller.update(t, q, v, self._contact_info(t_ns))
                if not np.all(np.isfinite(tau)):
                    raise FloatingPointError("controller returned non-finite torques")
                self._tau = tau
            except Exception as error:  # noqa: BLE001 - keep commanding the last torque, say why
                self.failures += 1
                self.get_logger().error(f"controller update failed at t = {t:.3f} s: {error}", throttle_duration_sec=2.0)
            self._last_control_ns = t_ns
            self.updates += 1
            self._publish_readouts(t_ns)
        self._publish_torque(t_ns)
        self._last_answered_ns = t_ns

    def _restart_reason(self, t_ns: int, q: np.ndarray) -> str:
        """Why the simulation seems to have restarted since the last state ("" if not): time
        went back, or the state jumped (the simulator's reset service restores the initial
        state without rewinding time) by more than 0.1 m or 0.5 rad within 20 ms."""
        if self._last_q is None or self._last_control_ns is None:
            return ""
        if t_ns < self._last_answered_ns:
            return "sim time went back"
        if t_ns - self._last_answered_ns <= 20_000_000:
            nq, nj = self.model.nq, self.model.nj
            if np.linalg.norm(q[:3] - self._last_q[:3]) > 0.1 or np.max(np.abs(q[nq - nj :] - self._last_q[nq - nj :]), initial=0.0) > 0.5:
                return "the state jumped (simulator reset?)"
        return ""

    def _publish_readouts(self, t_ns: int) -> None:
        if not isinstance(self.controller, WalkingController):
            return
        if self._last_readout_ns is not None and t_ns - self._last_readout_ns < self._readout_period_ns:
            return
        try:
            readout = self.controller.readout
            footsteps = self.controller.footsteps
        except RuntimeError:
            return
        self._last_readout_ns = t_ns
        # Each readout is built only while someone listens (RViz, a plot, the demo): the
        # controller shares the CPU with the simulator.
        frame = self.params.odom_frame
        if self._zmp_pub.get_subscription_count():
            zmp = np.array([readout.zmp_reference[0], readout.zmp_reference[1], self.controller.config.ground_height])
            self._zmp_pub.publish(point_message(t_ns, frame, zmp))
        if self._com_pub.get_subscription_count():
            self._com_pub.publish(point_message(t_ns, frame, readout.com_reference))
        if self._footsteps_pub.get_subscription_count():
            poses = PoseArray()
            poses.header = Header(stamp=stamp_from_nanoseconds(t_ns), frame_id=frame)
            for step in footsteps:
                pose = Pose()
                pose.position.x, pose.position.y = float(step.x), float(step.y)
                pose.position.z = float(self.controller.config.ground_height)
                pose.orientation.z, pose.orientation.w = math.sin(0.5 * step.yaw), math.cos(0.5 * step.yaw)
                poses.poses.append(pose)
            self._footsteps_pub.publish(poses)
        if self._phase_pub.get_subscription_count():
            self._phase_pub.publish(String(data=str(readout.phase.support)))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``walking_controller`` executable; returns the exit code (0 after
    Ctrl-C / SIGINT / SIGTERM, whenever it comes, without a traceback)."""
    return run_node_main(_run, argv)


def _run(argv: list[str] | None) -> int:
    rclpy.init(args=sys.argv if argv is None else argv)
    try:
        node = WalkingControllerNode()
    except (UrdfError, ValueError, KeyError, OSError) as error:
        print(f"walking_controller: cannot start: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    freeze_startup_objects()
    try:
        spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():
            raise
        # a shutdown (SIGINT / SIGTERM) arrived while a callback was publishing: done
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
