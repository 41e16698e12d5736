"""The humanoid_sim ROS 2 node: torque commands in; joint states, tf, contact wrenches, ZMP out.

The node only translates: parameters -> a ``humanoid_sim.simulator.Simulator``; command
messages -> validated torques (``command_validation``); step results -> messages
(``conversions``, ``link_tree``). Interfaces (topic names are relative, so a namespace or a
remap moves them; at the root namespace they are /joint_states, /tf, ...):

Subscribes
  joint_commands               sensor_msgs/JointState      torques by name (effort field)
  effort_controller/commands   std_msgs/Float64MultiArray  torques in ``joint_order``
Publishes
  joint_states                 sensor_msgs/JointState      position, velocity, applied effort
  tf, tf_static                tf2_msgs/TFMessage          odom -> base, every link (REP 105)
  robot_description            std_msgs/String             URDF, transient local (latched)
  contact/<link>/wrench        geometry_msgs/WrenchStamped contact wrench on <link>, in <link>
                               (while in contact, and one zero wrench when the contact ends)
  contact/<link>/cop           geometry_msgs/PointStamped  its centre of pressure p_v, in odom
                               (one pair per link with collision shapes; characters not valid
                               in a topic name become '_')
  zmp                          geometry_msgs/PointStamped  ZMP of the ground reaction, in odom
  support_polygon              geometry_msgs/PolygonStamped in odom
  contact_markers              visualization_msgs/MarkerArray
  clock                        rosgraph_msgs/Clock         simulation time
  ground_truth/odom            nav_msgs/Odometry           pose in odom, twist in the base frame
  imu                          sensor_msgs/Imu             ideal IMU at the base link origin
  diagnostics                  diagnostic_msgs/DiagnosticArray
Services (std_srvs)
  reset (Trigger), pause (SetBool: true pauses, false resumes), step (Trigger: one tick while paused)

Loop modes: ``realtime`` (a physics thread holds real_time_factor; late ticks counted),
``fast`` (the thread steps as fast as it can), ``lockstep`` (no thread: every valid command
runs exactly one tick and is answered by joint_states, ground_truth/odom and clock, so a run is
deterministic).
Publish rates are in simulation time (decimation of the tick count), diagnostics in wall time.
In realtime mode a tick that ends after its wall-time slot is counted late and the next ticks
run without sleeping until the schedule is met again (a backlog over MAX_BACKLOG_S is dropped
and counted as a schedule reset); publishing follows the tick count, so catching up never
publishes more than the rates ask. Hot topics (clock, joint_states, ground_truth/odom, tf,
contact wrench/cop, zmp) go out as pre-serialized bytes (tf_serialization); odometry, imu,
contact cop, support_polygon and contact_markers are published only while some subscriber is
matched. A joint_commands message naming every joint in the model's order with only effort
set is read from its raw bytes; any other is deserialized and checked by name. In realtime mode only the
newest command is kept (queue depth 1), and /diagnostics reports how old the state was that
each command answered (command_age_mean_ms / command_age_max_ms, in sim time).
Stamps are simulation time from the tick count; /clock never runs backwards (reset restores
the initial state but not the time).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from rclpy.serialization import deserialize_message
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PolygonStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from humanoid_sim.contact.environment import load_environment
from humanoid_sim.limits.range_config import load_range_of_motion, parse_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.model import UrdfError, load_urdf
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.model.urdf_loader import rotation_from_rpy
from humanoid_sim.ros import conversions as cv
from humanoid_sim.ros.command_validation import (
    CommandCheck,
    RejectionCounter,
    check_array_command,
    check_named_command,
    joint_order_indices,
)
from humanoid_sim.ros.link_tree import link_tree
from humanoid_sim.ros.package_data import package_file
from humanoid_sim.ros.process_tuning import freeze_startup_objects, spin
from humanoid_sim.ros.tf_serialization import (
    SerializedClock,
    SerializedEffortCommand,
    SerializedJointState,
    SerializedOdometry,
    SerializedPoint,
    SerializedTf,
    SerializedWrench,
)
from humanoid_sim.ros.parameters import PARAMETER_SPECS, SPECS_BY_NAME, NodeParameters, validate_parameter, validate_parameters
from humanoid_sim.ros.viewer_bridge import close_viewer, start_viewer
from humanoid_sim.simulator.simulator import SimulationError, Simulator, SimulatorConfig, StepResult
from humanoid_sim.simulator.warm_up import warm_up

NODE_NAME = "humanoid_sim"
# A backlog longer than this [s of wall time] is dropped in realtime mode: the loop restarts
# its schedule instead of running a burst of catch-up ticks (counted as a schedule reset).
# Long enough to absorb the moments when another process holds the CPU for a few ms (on 2
# cores with the controller and a recorder: stalls of 5-15 ms several times a second); short,
# because during a burst simulated time outruns the controller, whose torques then apply to
# states up to this much newer than the ones they answer (the walking controller tolerates
# 20 ms; 100 ms of held torque drops it). Dropped backlog is simulated time lost: RTF < 1.
MAX_BACKLOG_S = 0.02
# A SCHED_FIFO physics thread that has not slept for this long [s of wall time] cannot hold
# real_time_factor; it goes back to normal scheduling rather than keep a CPU from every other
# thread of the machine (the controller's among them).
FIFO_SATURATED_S = 0.5
# Commands queued in lockstep and fast modes; realtime mode keeps only the newest.
COMMAND_QUEUE = 1000
# Stamped commands kept for the command-age statistics of /diagnostics.
COMMAND_AGE_WINDOW = 1024
# Ticks kept for the tick-cost statistics of /diagnostics (mean and 99th percentile).
TICK_COST_WINDOW = 4096
# The physics thread shares the GIL with the executor thread; Python's default 5 ms switch
# interval would let a callback hold it for 5 physics periods. 0.2 ms bounds that wait.
GIL_SWITCH_INTERVAL_S = 0.0002


class StartupError(RuntimeError):
    """The node cannot start (bad URDF, parameter or config file); the message says why."""


def _descriptor(name: str) -> ParameterDescriptor:
    spec = SPECS_BY_NAME[name]
    text = spec.description
    if spec.choices:
        text += f" (one of: {', '.join(spec.choices)})"
    descriptor = ParameterDescriptor(description=text, read_only=spec.read_only)
    if isinstance(spec.default, float) and spec.low is not None and spec.high is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=float(spec.low), to_value=float(spec.high), step=0.0)]
    elif isinstance(spec.default, int) and not isinstance(spec.default, bool) and spec.low is not None:
        descriptor.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    return descriptor


def topic_token(name: str) -> str:
    """A link name made valid as one token of a ROS topic name ([A-Za-z0-9_], not starting with a digit)."""
    token = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"_{token}" if not token or token[0].isdigit() else token


def _every(rate_hz: float, dt: float) -> int:
    """Publish every this many ticks for a rate in simulation time; 0 = off."""
    return 0 if rate_hz <= 0.0 else max(1, int(round(1.0 / (rate_hz * dt))))


class SimNode(Node):
    """The simulation node. Construct, then ``start()``; ``stop()`` before destroying.

    Raises StartupError (one clear message) when the robot, a parameter or a config file
    is not usable.
    """

    def __init__(self, node_name: str = NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self.params = self._declare_and_validate()
        p = self.params
        self.urdf_xml = self._robot_description(p)
        try:
            self.model: RobotModel = load_urdf(self.urdf_xml, mimic=p.mimic_joints)
        except (UrdfError, ValueError) as exc:
            raise StartupError(f"the robot description does not load: {exc}") from None
        model = self.model
        self.simulator = self._make_simulator(p, model)
        self.q_initial = self._initial_configuration(p, model)
        # Warm-up: throw-away steps through every path of the step (resting, landing, sliding,
        # a joint stop) compile or load the numba kernels now, so that no tick of the run
        # waits for them; the state is then set back exactly.
        self.simulator.set_state(self.q_initial, np.zeros(model.nv))
        try:
            warm = warm_up(self.simulator, self.q_initial)
        except SimulationError as exc:
            raise StartupError(f"the first simulation step fails from the initial state: {exc}") from None
        for scenario, reason in warm.failed.items():
            self.get_logger().warning(f"warm-up scenario {scenario!r} failed ({reason}); its kernels load on first use")
        self.tree = link_tree(model, self.urdf_xml, p.odom_frame)
        try:
            self.joint_order = joint_order_indices(p.joint_order, model.joint_names)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
        self.joint_order_names = tuple(model.joint_names[j] for j in self.joint_order)

        # ---- mutable state, shared between the executor thread and the physics thread
        # _lock guards the simulator and the tick (held for a whole step); _command_lock only
        # the command buffer, so commands are taken in while a step runs.
        self._lock = threading.RLock()
        self._command_lock = threading.Lock()
        self._command = np.zeros(model.nj)
        self._tick_command = np.zeros(model.nj)
        self._command_received = False
        self._last_command_wall = -math.inf
        self._paused = p.start_paused
        self._failed = ""
        self._tick = 0
        self._ns_per_tick = int(round(p.physics_dt * 1e9))
        self._last_result: StepResult | None = None
        self._previous_result: StepResult | None = None
        self.rejections = RejectionCounter(p.rejection_log_period)
        self.accepted_commands = 0
        self.timeout_ticks = 0
        # loop statistics (read by diagnostics)
        self.late_ticks = 0
        self.schedule_resets = 0
        self.thread_scheduling = "none (no physics thread)" if self.params.loop_mode == "lockstep" else "normal"
        self.step_seconds_sum = 0.0
        self.step_seconds_max = 0.0
        self.max_rounds_seen = 0
        self._tick_costs = np.zeros(TICK_COST_WINDOW)  # [s] step + publishing, ring buffer
        self._tick_costs_seen = 0
        self._command_ages = np.zeros(COMMAND_AGE_WINDOW)  # [ms of sim time] tick time - command stamp
        self._command_ages_seen = 0
        self._stats_window = (time.monotonic(), 0)  # (wall time, tick) at the last diagnostics
        self._rtf_window = math.nan
        self._reschedule = True
        self._first_tick_wall: float | None = None
        self._first_tick = 0
        self._update_decimation()

        self._make_interfaces()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self.viewer = start_viewer(self)  # parameters viewer, viewer_record (humanoid_sim/ros/viewer_bridge.py)

    # ------------------------------------------------------------------ setup
    def _declare_and_validate(self) -> NodeParameters:
        values: dict[str, Any] = {}
        for spec in PARAMETER_SPECS:
            try:
                self.declare_parameter(spec.name, spec.default, _descriptor(spec.name))
            except Exception as exc:  # noqa: BLE001 - rclpy raises several types for bad overrides
                raise StartupError(f"parameter {spec.name}: {exc}") from None
            values[spec.name] = self.get_parameter(spec.name).value
        try:
            return validate_parameters(values)
        except ValueError as exc:
            raise StartupError(f"invalid parameters: {exc}") from None

    def _robot_description(self, p: NodeParameters) -> str:
        if p.robot_description.strip():
            return p.robot_description
        try:
            path = Path(p.urdf_path) if p.urdf_path else package_file("urdf/humanoid.urdf")
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise StartupError(f"URDF file {p.urdf_path or 'urdf/humanoid.urdf'!r} cannot be read: {exc.strerror or exc}") from None

    def _make_simulator(self, p: NodeParameters, model: RobotModel) -> Simulator:
        env_path = Path(p.environment_config) if p.environment_config else package_file("config/environment.yaml")
        try:
            environment = load_environment(env_path)
        except (OSError, ValueError) as exc:
            raise StartupError(f"environment config {str(env_path)!r}: {exc}") from None
        providers = []
        rom = p.range_of_motion_config
        try:
            if rom == "none":
                config = parse_range_of_motion({})
            elif rom:
                config = load_range_of_motion(rom)
            else:
                config = load_range_of_motion(package_file("config/range_of_motion.yaml"))
            try:
                providers.append(RangeOfMotionProvider(model, config))
            except ValueError as exc:
                if rom:
                    raise
                self.get_logger().warning(
                    f"bundled range of motion does not fit robot {model.name!r} ({exc}); using URDF joint stops only"
                )
                providers.append(RangeOfMotionProvider(model, parse_range_of_motion({})))
        except (OSError, ValueError) as exc:
            raise StartupError(f"range-of-motion config {rom or 'config/range_of_motion.yaml'!r}: {exc}") from None
        self.limits = providers[0]
        return Simulator(model, SimulatorConfig(dt=p.physics_dt, environment=environment), providers=providers)

    def _initial_configuration(self, p: NodeParameters, model: RobotModel) -> np.ndarray:
        sim = self.simulator
        pose = p.initial_pose
        if pose and pose not in sim.poses and pose == SPECS_BY_NAME["initial_pose"].default:
            self.get_logger().warning(
                f"robot {model.name!r} has no {pose!r} pose; starting from the neutral pose at initial_base_position"
            )
            pose = ""
        if pose:
            try:
                q = sim.reset(pose)
            except KeyError as exc:
                raise StartupError(str(exc.args[0])) from None
        else:
            q = sim.q
            if model.floating_base:
                q[0:3] = p.initial_base_position
                q[3:7] = cv.quaternion_from_rotation(rotation_from_rpy(np.asarray(p.initial_base_rpy)))
        offset = 7 if model.floating_base else 0
        for name, value in zip(p.initial_joint_names, p.initial_joint_positions):
            try:
                q[offset + model.joint_index(name)] = value
            except KeyError as exc:
                raise StartupError(f"initial_joint_names: {exc.args[0]}") from None
        return q

    def _publisher(self, msg_type: Any, topic: str, qos: QoSProfile | int) -> Any:
        """A publisher without rclpy's default event handlers (incompatible-QoS / -type warnings).

        Each default handler is a waitable the executor rebuilds into its wait set at every
        wake-up: with ~40 publishers that made every command message cost the executor thread
        ~0.8 ms of GIL-holding Python instead of ~0.2 ms, stolen from the physics thread.
        """
        return self.create_publisher(msg_type, topic, qos, event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))

    def _make_interfaces(self) -> None:
        model, p = self.model, self.params
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        self.pub_joint_states = self._publisher(JointState, "joint_states", 10)
        self.pub_tf = self._publisher(TFMessage, "tf", 10)
        self.pub_tf_static = self._publisher(TFMessage, "tf_static", latched)
        self.pub_description = self._publisher(String, "robot_description", latched)
        self.pub_clock = self._publisher(ClockMsg, "clock", 10)
        self.pub_zmp = self._publisher(PointStamped, "zmp", 10)
        self.pub_polygon = self._publisher(PolygonStamped, "support_polygon", 10)
        self.pub_markers = self._publisher(MarkerArray, "contact_markers", 10)
        self.pub_odom = self._publisher(Odometry, "ground_truth/odom", 10)
        self.pub_imu = self._publisher(Imu, "imu", 10)
        self.pub_diagnostics = self._publisher(DiagnosticArray, "diagnostics", 10)
        # One wrench and one centre-of-pressure topic per body that can touch anything.
        self.contact_links = tuple(dict.fromkeys(model.body_names[s.body] for s in model.collision_shapes))
        self.pub_wrench = {
            link: self._publisher(WrenchStamped, f"contact/{topic_token(link)}/wrench", 10)
            for link in self.contact_links
        }
        self.pub_cop = {
            link: self._publisher(PointStamped, f"contact/{topic_token(link)}/cop", 10) for link in self.contact_links
        }

        # Raw: a command naming every joint in the model's order with only effort filled (what
        # a controller usually sends, the bundled one included) is read straight from its bytes.
        # In realtime mode each tick applies the newest command, so only the newest is kept: a
        # queue would hand the executor old commands first whenever it falls behind, and the
        # robot would run on commands hundreds of ms stale. Lockstep runs one tick per command
        # and fast mode has no wall-clock schedule: every command is queued and counted.
        depth = 1 if p.loop_mode == "realtime" else COMMAND_QUEUE
        self.create_subscription(JointState, "joint_commands", self._on_named_command_bytes, depth, raw=True)
        self.create_subscription(Float64MultiArray, "effort_controller/commands", self._on_array_command, depth)
        self.create_service(Trigger, "reset", self._on_reset)
        self.create_service(SetBool, "pause", self._on_pause)
        self.create_service(Trigger, "step", self._on_step)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._diagnostics_timer = None
        if p.diagnostics_rate > 0.0:
            self._diagnostics_timer = self.create_timer(1.0 / p.diagnostics_rate, self._publish_diagnostics, clock=steady)

        # Pre-serialized messages, refilled in place every publish (tf_serialization): no
        # per-tick message objects on the hot topics.
        moving = [(self.tree.odom_frame, self.tree.root_link)] if self.tree.floating else []
        moving += list(zip(self.tree.moving_parent, self.tree.moving_child))
        self._tf_serialized = SerializedTf(moving)
        self._tf_rows = np.zeros((len(moving), 7))
        self._clock_serialized = SerializedClock()
        self._joint_states_serialized = SerializedJointState(model.joint_names)
        self._odometry_serialized = SerializedOdometry(p.odom_frame, self.tree.root_link) if self.tree.floating else None
        self._command_layout = SerializedEffortCommand(model.joint_names)
        self._all_joints = np.arange(model.nj, dtype=np.int64)
        self._wrench_serialized = {link: SerializedWrench(link) for link in self.contact_links}
        self._cop_serialized = SerializedPoint(p.odom_frame)
        self._zmp_serialized = SerializedPoint(p.odom_frame)
        self._zero_wrench = np.zeros(6)
        self._links_in_contact: set[str] = set()
        self.pub_description.publish(String(data=self.urdf_xml))
        self.pub_tf_static.publish(
            TFMessage(transforms=[cv.transform_message(0, a, b, X) for a, b, X in self.tree.static])
        )

    def _update_decimation(self) -> None:
        p, dt = self.params, self.params.physics_dt
        self._every = {
            "joint_states": _every(p.joint_states_rate, dt),
            "tf": _every(p.tf_rate, dt),
            "clock": _every(p.clock_rate, dt),
            "contact": _every(p.contact_rate, dt),
            "markers": _every(p.markers_rate, dt),
            "odometry": _every(p.odometry_rate, dt),
        }
        self._wall_period = p.physics_dt / p.real_time_factor

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        changes = {}
        for parameter in parameters:
            if parameter.name not in SPECS_BY_NAME:
                continue  # rclpy's own parameters (use_sim_time, qos overrides...)
            ok, reason = validate_parameter(parameter.name, parameter.value)
            if not ok:
                return SetParametersResult(successful=False, reason=reason)
            if SPECS_BY_NAME[parameter.name].read_only:
                return SetParametersResult(successful=False, reason=f"{parameter.name} is read-only; restart the node")
            value = parameter.value
            changes[parameter.name] = float(value) if isinstance(SPECS_BY_NAME[parameter.name].default, float) else value
        with self._lock:
            self.params = dataclasses.replace(self.params, **changes)
            self.rejections.log_period_s = self.params.rejection_log_period
            self._update_decimation()
            self._reschedule = True
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ commands
    def _on_named_command_bytes(self, data: bytes) -> None:
        known = self._command_layout.read(data)
        if known is None:
            self._on_named_command(deserialize_message(data, JointState))
            return
        stamp_ns, effort = known
        if np.all(np.isfinite(effort)):
            check = CommandCheck(True, "", "", self._all_joints, effort.copy())
        else:
            check = check_named_command(self.model.joint_names, effort, self.model.joint_names)
        self._apply_command(check, "joint_commands", stamp_ns)

    def _on_named_command(self, msg: JointState) -> None:
        self._apply_command(check_named_command(msg.name, msg.effort, self.model.joint_names), "joint_commands",
                            cv.nanoseconds_from_stamp(msg.header.stamp))

    def _on_array_command(self, msg: Float64MultiArray) -> None:
        self._apply_command(check_array_command(msg.data, self.joint_order, self.joint_order_names), "effort_controller/commands")

    def _apply_command(self, check: CommandCheck, topic: str, stamp_ns: int | None = None) -> None:
        """stamp_ns: the command's header stamp [ns of sim time] (None: no header); its age
        against the current tick goes to the command-age statistics of /diagnostics."""
        if check.ok and stamp_ns:
            age = self._tick * self._ns_per_tick - stamp_ns
            self._command_ages[self._command_ages_seen % COMMAND_AGE_WINDOW] = age * 1e-6
            self._command_ages_seen += 1
        with self._command_lock:
            if not check.ok:
                if self.rejections.record(check.kind, time.monotonic()):
                    more = f" ({self.rejections.total} rejected so far)" if self.rejections.total > 1 else ""
                    self.get_logger().warning(f"rejected command on {topic}: {check.reason}; keeping the last valid command{more}")
                return
            self._command[check.joint_index] = check.effort
            self._command_received = True
            self._last_command_wall = time.monotonic()
            self.accepted_commands += 1
        if self.params.loop_mode == "lockstep":
            with self._lock:
                if not self._paused and not self._failed:
                    self._do_tick()

    def _torque(self) -> np.ndarray:
        """The torque for this tick: the last valid command, or the timeout behaviour."""
        p = self.params
        with self._command_lock:
            received = self._command_received
            silent = time.monotonic() - self._last_command_wall
            self._tick_command[:] = self._command
        if p.loop_mode == "lockstep" and received:
            return self._tick_command
        if received and not (p.command_timeout > 0.0 and silent > p.command_timeout):
            return self._tick_command
        self.timeout_ticks += 1
        if p.timeout_behaviour == "damping":
            return -p.timeout_damping * self.simulator.v[self.model.nv - self.model.nj :]
        return np.zeros(self.model.nj)

    # ------------------------------------------------------------------ the tick
    def _do_tick(self) -> StepResult | None:
        """One physics step and the publishing due at it. Caller holds the lock."""
        sim = self.simulator
        start = time.perf_counter()
        try:
            result = sim.step(self._torque())
        except SimulationError as exc:
            self._failed = str(exc)
            self._paused = True
            self.get_logger().error(f"simulation step failed, pausing: {exc} (call the reset service to continue)")
            return None
        elapsed = time.perf_counter() - start
        self.step_seconds_sum += elapsed
        self.step_seconds_max = max(self.step_seconds_max, elapsed)
        self.max_rounds_seen = max(self.max_rounds_seen, result.rounds)
        if self._first_tick_wall is None:
            self._first_tick_wall, self._first_tick = time.monotonic(), self._tick
        self._tick += 1
        self._previous_result, self._last_result = self._last_result, result
        self._publish(result)
        if self.viewer is not None:
            self.viewer.update(result)
        self._tick_costs[self._tick_costs_seen % TICK_COST_WINDOW] = time.perf_counter() - start
        self._tick_costs_seen += 1
        return result

    def _base_acceleration(self, result: StepResult) -> np.ndarray:
        """Acceleration of the base origin in world axes [m/s^2], (3,), by the finite difference
        of its world velocity over the last tick (exact for the semi-implicit Euler step)."""
        previous = self._previous_result
        if previous is None or not self.model.floating_base:
            return np.zeros(3)
        velocity = cv.rotation_from_quaternion(result.q[3:7]) @ result.v[0:3]
        velocity_before = cv.rotation_from_quaternion(previous.q[3:7]) @ previous.v[0:3]
        return (velocity - velocity_before) / self.params.physics_dt

    def _due(self, topic: str) -> bool:
        every = self._every[topic]
        return every > 0 and self._tick % every == 0

    def _publish(self, result: StepResult) -> None:
        ns = self._tick * self._ns_per_tick
        lockstep = self.params.loop_mode == "lockstep"
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        if lockstep or self._due("clock"):
            self.pub_clock.publish(self._clock_serialized.fill(sec, nanosec))
        if lockstep or self._due("joint_states"):
            self._publish_joint_states(sec, nanosec, result.q, result.v, result.tau_applied)
        if self._due("tf"):
            self._publish_tf(sec, nanosec, result.q)
        # The topics below cost most to build; nobody listening, nothing is built.
        if (lockstep or self._due("odometry")) and self.model.floating_base:
            q, v = result.q, result.v
            root = self.tree.root_link
            self._publish_odometry(sec, nanosec, q, v)
            if self.pub_imu.get_subscription_count():
                acceleration = self._base_acceleration(result)
                self.pub_imu.publish(cv.imu_message(ns, root, q[3:7], v[3:6], acceleration, self.model.gravity))
        if self._due("contact"):
            self._publish_contacts(ns, result)
        if self._due("markers") and self.pub_markers.get_subscription_count():
            self._publish_markers(ns, result)

    def _publish_joint_states(self, sec: int, nanosec: int, q: np.ndarray, v: np.ndarray, applied: np.ndarray) -> None:
        nj = self.model.nj
        data = self._joint_states_serialized.fill(sec, nanosec, q[self.model.nq - nj :], v[self.model.nv - nj :], applied)
        self.pub_joint_states.publish(data)

    def _publish_odometry(self, sec: int, nanosec: int, q: np.ndarray, v: np.ndarray) -> None:
        """ground_truth/odom of the base (floating base only), when someone listens."""
        if self._odometry_serialized is not None and self.pub_odom.get_subscription_count():
            self.pub_odom.publish(self._odometry_serialized.fill(sec, nanosec, q[0:7], v[0:6]))

    def _publish_tf(self, sec: int, nanosec: int, q: np.ndarray) -> None:
        rows = self.tree.pose_rows(q, self._tf_rows)  # one compiled call: odom -> base, every joint
        self.pub_tf.publish(self._tf_serialized.fill_rows(sec, nanosec, rows))

    def _publish_contacts(self, ns: int, result: StepResult) -> None:
        ws = self.simulator.ws  # body placements at the start of the step, where the wrenches act
        per_link: dict[str, list] = {}  # link -> [wrench in the link frame (6,), p_v, its f_z]
        for c in result.contacts:
            R, p = ws.R[c.body], ws.p[c.body]
            f_w, n_w = c.wrench_world[:3], c.wrench_world[3:]
            # The wrench on the link, expressed in the link frame with moment about its origin.
            r = c.origin - p
            moment = n_w + (r[1] * f_w[2] - r[2] * f_w[1], r[2] * f_w[0] - r[0] * f_w[2], r[0] * f_w[1] - r[1] * f_w[0])
            wrench = np.concatenate([R.T @ f_w, R.T @ moment])
            entry = per_link.setdefault(c.link, [np.zeros(6), None, -math.inf])
            entry[0] += wrench
            if f_w[2] > entry[2]:  # a link touching two surfaces: the p_v of the larger load
                entry[1], entry[2] = c.p_v, f_w[2]
        odom = self.params.odom_frame
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        # Links in contact, and once more with a zero wrench the first time after they leave it
        # (so plots and RViz drop to zero), rather than every link at every publish.
        for link in (per_link.keys() | self._links_in_contact) if self._links_in_contact else per_link:
            wrench, cop, _ = per_link.get(link, (self._zero_wrench, None, 0.0))
            self.pub_wrench[link].publish(self._wrench_serialized[link].fill(sec, nanosec, wrench))
            if cop is not None and np.isfinite(cop).all() and self.pub_cop[link].get_subscription_count():
                self.pub_cop[link].publish(self._cop_serialized.fill(sec, nanosec, cop))
        self._links_in_contact = set(per_link)
        zmp = result.zmp
        if np.isfinite(zmp.zmp).all():
            self.pub_zmp.publish(self._zmp_serialized.fill(sec, nanosec, zmp.zmp))
        if self.pub_polygon.get_subscription_count():
            height = zmp.zmp[2] if np.isfinite(zmp.zmp[2]) else 0.0
            self.pub_polygon.publish(cv.polygon_message(ns, odom, zmp.support_polygon, height))

    def _publish_markers(self, ns: int, result: StepResult) -> None:
        zmp = result.zmp
        points = [c.points for c in result.contacts]
        forces = [(c.p_v if np.all(np.isfinite(c.p_v)) else c.origin, c.wrench_world[:3]) for c in result.contacts]
        height = zmp.zmp[2] if np.isfinite(zmp.zmp[2]) else 0.0
        polygon = np.column_stack([zmp.support_polygon, np.full(len(zmp.support_polygon), height)])
        zmp_point = zmp.zmp if np.all(np.isfinite(zmp.zmp)) else None
        self.pub_markers.publish(cv.contact_markers(ns, self.params.odom_frame, points, forces, zmp_point, polygon))

    # ------------------------------------------------------------------ diagnostics
    def diagnostics_values(self) -> tuple[dict[str, object], list[str], list[str]]:
        """(values, warnings, errors) for /diagnostics; also used by the bench script."""
        with self._lock:
            now = time.monotonic()
            wall0, tick0 = self._stats_window
            if now > wall0:
                self._rtf_window = (self._tick - tick0) * self.params.physics_dt / (now - wall0)
            self._stats_window = (now, self._tick)
            result = self._last_result
            report = self.limits.report()
            ticks = self._tick
            values: dict[str, object] = {
                "loop_mode": self.params.loop_mode,
                "paused": self._paused,
                "sim_time_s": ticks * self._ns_per_tick / 1e9,
                "ticks": ticks,
                "real_time_factor": self._rtf_window,
                "real_time_factor_total": (
                    (ticks - self._first_tick) * self.params.physics_dt / (now - self._first_tick_wall)
                    if self._first_tick_wall is not None and now > self._first_tick_wall else math.nan
                ),
                "real_time_factor_target": self.params.real_time_factor,
                "physics_thread_scheduling": self.thread_scheduling,
                "late_ticks": self.late_ticks,
                "late_tick_share": self.late_ticks / ticks if ticks else 0.0,
                "schedule_resets": self.schedule_resets,
                "step_time_mean_ms": 1e3 * self.step_seconds_sum / ticks if ticks else 0.0,
                "step_time_max_ms": 1e3 * self.step_seconds_max,
                **self._tick_cost_values(),
                "solver_rounds": result.rounds if result else 0,
                "solver_rounds_max": self.max_rounds_seen,
                "solve_validated": result.validated if result else True,
                "contacts": len(result.contacts) if result else 0,
                "zmp_margin_m": float(result.zmp.margin) if result else math.nan,
                "active_limits": ", ".join(report.names) or "none",
                "limit_torques": ", ".join(
                    f"{name}={force:.3g}" for name, force in zip(report.names, report.force)
                ) or "none",
                "commands_accepted": self.accepted_commands,
                "rejected_commands": self.rejections.total,
                **{f"rejected_{kind}": count for kind, count in self.rejections.counts.items()},
                "command_timeout_ticks": self.timeout_ticks,
                **self._command_age_values(),
            }
            warnings, errors = [], []
            if ticks and self.params.loop_mode == "realtime" and self.late_ticks / ticks > 0.05:
                warnings.append(f"{100.0 * self.late_ticks / ticks:.1f}% late ticks")
            if result is not None and result.zmp.margin < 0.0:
                warnings.append("ZMP outside the support polygon")
            if self.rejections.total:
                warnings.append(f"{self.rejections.total} commands rejected")
            if self._failed:
                errors.append(f"simulation failed: {self._failed}")
            return values, warnings, errors

    def _tick_cost_values(self) -> dict[str, float]:
        """Mean and 99th percentile [ms] of the cost of a tick (step + publishing) over the last ticks."""
        costs = self._tick_costs[: min(self._tick_costs_seen, TICK_COST_WINDOW)]
        if not len(costs):
            return {"tick_time_mean_ms": 0.0, "tick_time_p99_ms": 0.0}
        return {"tick_time_mean_ms": 1e3 * float(costs.mean()), "tick_time_p99_ms": 1e3 * float(np.percentile(costs, 99.0))}

    def _command_age_values(self) -> dict[str, float]:
        """Mean and largest age [ms of sim time] of the last stamped commands when they came in
        (tick time minus header stamp: how stale the state was that the command answers)."""
        ages = self._command_ages[: min(self._command_ages_seen, COMMAND_AGE_WINDOW)]
        if not len(ages):
            return {"command_age_mean_ms": math.nan, "command_age_max_ms": math.nan}
        return {"command_age_mean_ms": float(ages.mean()), "command_age_max_ms": float(ages.max())}

    def _publish_diagnostics(self) -> None:
        values, warnings, errors = self.diagnostics_values()
        ns = self._tick * self._ns_per_tick
        if rclpy.ok(context=self.context):  # a timer can still fire while rclpy shuts down
            self.pub_diagnostics.publish(
                cv.diagnostic_message(ns, f"{self.get_name()}: simulation", self.model.name, values, warnings, errors)
            )

    # ------------------------------------------------------------------ services
    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self.simulator.set_state(self.q_initial, np.zeros(self.model.nv))
            with self._command_lock:
                self._command[:] = 0.0
                self._command_received = False
            self._failed = ""
            self._previous_result = self._last_result = None
            self._reschedule = True
            self._publish_state_now()
        response.success, response.message = True, "reset to the initial state"
        return response

    def _on_pause(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        with self._lock:
            if not request.data and self._failed:
                response.success, response.message = False, f"simulation failed ({self._failed}); call reset first"
                return response
            if self._paused and not request.data:
                self._first_tick_wall = None  # real_time_factor_total counts from this resume
            self._paused = bool(request.data)
            self._reschedule = True
            if not self._paused and self.params.loop_mode == "lockstep":
                # A lock-step simulator ticks on commands; commands that came while it was paused
                # answered states it no longer waits for. The state again: its answer is the next tick.
                self._publish_state_now()
        response.success, response.message = True, "paused" if request.data else "running"
        return response

    def _on_step(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            if not self._paused:
                response.success, response.message = False, "not paused: call pause with data=true first"
                return response
            if self._failed:
                response.success, response.message = False, f"simulation failed ({self._failed}); call reset first"
                return response
            result = self._do_tick()
            if result is None:
                response.success, response.message = False, self._failed
                return response
            self._publish_state_now()
        response.success, response.message = True, f"stepped to t = {self._tick * self._ns_per_tick / 1e9:.6f} s"
        return response

    def _publish_state_now(self) -> None:
        """joint_states, ground_truth/odom, tf and clock of the current state, whatever the decimation."""
        sim = self.simulator
        ns = self._tick * self._ns_per_tick
        q, v = sim.q, sim.v
        nj = self.model.nj
        applied = self._last_result.tau_applied if self._last_result is not None else np.zeros(nj)
        sec, nanosec = divmod(ns, cv.NANOSECONDS_PER_SECOND)
        self.pub_clock.publish(self._clock_serialized.fill(sec, nanosec))
        self._publish_joint_states(sec, nanosec, q, v, applied)
        self._publish_odometry(sec, nanosec, q, v)
        self._publish_tf(sec, nanosec, q)

    # ------------------------------------------------------------------ loop
    def start(self) -> None:
        """Publish the initial state; start the physics thread (not in lockstep mode)."""
        with self._lock:
            self._publish_state_now()
        if self.params.loop_mode == "lockstep":
            return
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="humanoid_sim_physics", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        close_viewer(self, self.viewer)
        self.viewer = None

    def _loop(self) -> None:
        fifo = False
        if self.params.loop_mode == "realtime":
            self.thread_scheduling = self._raise_thread_priority(self.params.thread_priority)
            fifo = self.thread_scheduling.startswith("SCHED_FIFO")
        self._reschedule = True
        deadline = 0.0
        last_sleep = time.perf_counter()
        while self._running.is_set():
            if self._paused:
                time.sleep(0.005)
                self._reschedule = True
                last_sleep = time.perf_counter()
                continue
            realtime = self.params.loop_mode == "realtime"
            if realtime:
                now = time.perf_counter()
                if self._reschedule:
                    self._reschedule = False
                    deadline = now
                period = self._wall_period
                if deadline - now > 0.0:
                    time.sleep(deadline - now)
                    last_sleep = now
                elif fifo and now - last_sleep > FIFO_SATURATED_S:
                    fifo = False
                    self.thread_scheduling = self._lower_thread_priority(now - last_sleep)
            with self._lock:
                if self._paused:
                    continue
                try:
                    self._do_tick()
                except Exception:  # noqa: BLE001 - publishing after rclpy shut down (SIGINT/SIGTERM)
                    if not rclpy.ok(context=self.context):
                        return
                    raise
            if realtime:
                deadline += period
                finished = time.perf_counter()
                if finished > deadline:
                    self.late_ticks += 1  # the tick ended after the end of its wall-time slot
                    if finished - deadline > MAX_BACKLOG_S:
                        self.schedule_resets += 1
                        deadline = finished
            else:
                time.sleep(0)  # let the executor thread take the GIL for commands and services

    def _lower_thread_priority(self, busy_s: float) -> str:
        """Back to normal scheduling for the calling (physics) thread, which has run for
        ``busy_s`` [s] without sleeping. Returns how it is scheduled, for /diagnostics."""
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        self.get_logger().warning(
            f"the physics thread ran {busy_s:.2f} s without sleeping: it cannot hold real_time_factor"
            f" {self.params.real_time_factor:g} here, and under SCHED_FIFO it would keep a CPU from every other"
            " thread; it runs at normal priority from now on"
        )
        return "normal (SCHED_FIFO left: real time not held)"

    def _raise_thread_priority(self, priority: int) -> str:
        """Put the calling (physics) thread under SCHED_FIFO at ``priority`` (0: leave it).
        Returns how it is scheduled, for /diagnostics.

        Under normal scheduling every DDS, executor and controller thread that wakes up may
        preempt a tick (measured here on 2 cores: two preemptions per tick, ticks stretched by
        up to 10 ms); a FIFO thread runs until it sleeps. It sleeps between ticks, so the rest
        of the machine keeps the CPU time it needs."""
        if priority <= 0:
            return "normal"
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except (OSError, AttributeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.get_logger().warning(
                f"could not give the physics thread SCHED_FIFO priority {priority} ({reason}): it runs at normal"
                " priority, where other threads may preempt its ticks (late ticks, real-time factor below target)."
                " Allow it with an rtprio limit (e.g. '@realtime - rtprio 98' in /etc/security/limits.conf, as"
                " for ros2_control) or set thread_priority to 0 to silence this"
            )
            return "normal (SCHED_FIFO refused)"
        return f"SCHED_FIFO {priority}"


def main(argv: list[str] | None = None) -> int:
    """Run the node until shutdown. Returns the exit code (1 when it cannot start)."""
    rclpy.init(args=argv)
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
    try:
        node = SimNode()
    except StartupError as exc:
        print(f"[{NODE_NAME}] cannot start: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    freeze_startup_objects()
    node.start()
    try:
        spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok(context=node.context):
            raise  # a real error; after a shutdown signal, late publishes may fail harmlessly
    finally:
        node.stop()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
