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
  contacts                     humanoid_sim_interfaces/Contacts  every contact's state (contact_states)
  zmp                          geometry_msgs/PointStamped  ZMP of the ground reaction, in odom
  support_polygon              geometry_msgs/PolygonStamped in odom
  contact_markers              visualization_msgs/MarkerArray
  objects                      visualization_msgs/MarkerArray  the world's free objects (world_objects);
                               each is also a tf frame odom -> <object> and has contact/<object>/...
  clock                        rosgraph_msgs/Clock         simulation time (while paused: the same
                               time again every 0.5 s of wall time, so a client whose last
                               sample DDS lost still learns where time stands)
  ground_truth/odom            nav_msgs/Odometry           pose in odom, twist in the base frame
  imu                          sensor_msgs/Imu             ideal IMU at the base link origin
  diagnostics                  diagnostic_msgs/DiagnosticArray
Services (std_srvs)
  reset (Trigger), pause (SetBool: true pauses, false resumes), step (Trigger: one tick while paused)
  push (Trigger)               the push_* parameters' wrench on push_link for push_duration
Services of the simulation_interfaces standard (relative to the node, as Gazebo names them)
  ~/get_simulator_features, ~/reset_simulation, ~/get_simulation_state, ~/set_simulation_state,
  ~/step_simulation, ~/get_entities, ~/get_entity_state, ~/set_entity_state, ~/spawn_entity,
  ~/delete_entity (free objects); action ~/simulate_steps

Loop modes: ``realtime`` (a physics thread holds real_time_factor; late ticks counted),
``fast`` (the thread steps as fast as it can), ``lockstep`` (no thread: every valid command
runs exactly one tick and is answered by joint_states, ground_truth/odom and clock, so a run is
deterministic). A joint_commands message naming every joint in the model's order with only
effort set is read from its raw bytes; one naming more joints than the robot has is refused
from its bytes; any other is deserialized and checked by name. An effort_controller/commands
message is read from its bytes (its length first). In realtime mode only the newest commands
are kept (best effort; in fast mode too); lock-step mode queues commands, reliably
(command_intake). Stamps are simulation time
from the tick count; /clock never runs backwards (reset restores the initial state, not the time).

This file is the node's wiring (parameters, subscriptions, services, the tick); the rest is
in ``sim_setup`` (robot, simulator, initial state), ``sim_publishers`` (what goes out),
``sim_diagnostics`` and ``physics_loop`` (the thread and its pacing).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_srvs.srv import SetBool, Trigger

from humanoid_sim.numba_cache import compile_notice
from humanoid_sim.ros.command_validation import RejectionCounter, joint_order_indices
from humanoid_sim.ros.link_tree import later_link_trees, link_tree
from humanoid_sim.ros.memory_watch import MemoryWatch
from humanoid_sim.ros.middleware_profile import use_packaged_profile
from humanoid_sim.ros.parameters import PARAMETER_SPECS, SPECS_BY_NAME, NodeParameters, validate_parameter, validate_parameters
from humanoid_sim.ros.command_intake import CommandIntake
from humanoid_sim.ros.physics_loop import PhysicsLoop
from humanoid_sim.ros.process_tuning import freeze_startup_objects, resident_mb, run_node_main, spin
from humanoid_sim.ros.sim_diagnostics import COMMAND_AGE_WINDOW, TICK_COST_WINDOW, NodeDiagnostics
from humanoid_sim.ros.sim_publishers import StatePublishing, topic_token  # noqa: F401 - part of this module's API
from humanoid_sim.ros.sim_services import SimServices
from humanoid_sim.ros.simulation_interfaces_services import SimulationInterfaces
from humanoid_sim.ros.sim_setup import (
    StartupError,
    initial_configuration,
    later_robot_urdfs,
    load_robot,
    load_world_file,
    make_simulator,
)
from humanoid_sim.ros.world_objects import WorldObjects
from humanoid_sim.ros.tf_serialization import SerializedEffortCommand
from humanoid_sim.simulator.pushes import PushSchedule
from humanoid_sim.simulator.simulator import SimulationError, StepResult
from humanoid_sim.ros.viewer_bridge import close_viewer, start_viewer
from humanoid_sim.simulator.warm_up import warm_up

__all__ = ["NODE_NAME", "SimNode", "StartupError", "main", "topic_token"]

NODE_NAME = "humanoid_sim"
# A lock-step node re-publishes its state this often [s of wall time] until the first command.
LOCKSTEP_REPUBLISH_S = 0.5
# A paused node re-publishes its clock this often [s of wall time] (the time does not move).
PAUSED_CLOCK_REPUBLISH_S = 0.5
# The physics thread shares the GIL with the executor thread; Python's default 5 ms switch
# interval would let a callback hold it for 5 physics periods. 0.2 ms bounds that wait.
GIL_SWITCH_INTERVAL_S = 0.0002


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


class SimNode(
    CommandIntake, SimServices, SimulationInterfaces, WorldObjects, StatePublishing, NodeDiagnostics, PhysicsLoop, Node
):
    """The simulation node. Construct, then ``start()``; ``stop()`` before destroying.

    Raises StartupError (one clear message) when the robot, a parameter or a config file
    is not usable.
    """

    def __init__(self, node_name: str = NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self.params = self._declare_and_validate()
        p = self.params
        world = load_world_file(p)  # None without the world parameter
        self.model, self.urdf_xml = load_robot(p, world)
        self.declare_parameter("robot_description", self.urdf_xml, _descriptor("robot_description"))
        self.simulator = make_simulator(p, self.model, self.get_logger().warning, world)
        model = self.model = self.simulator.model  # in a world: the robot first, then one body per object
        self.limits = self.simulator.providers[0]
        self.q_initial = initial_configuration(p, self.simulator)
        self.v_initial = self.simulator.v if world is not None else np.zeros(model.nv)  # objects' initial twists
        # Warm-up: throw-away steps through every path of the step (resting, landing, sliding,
        # a joint stop) compile or load the numba kernels now, so that no tick of the run
        # waits for them; the state is then set back exactly.
        self.simulator.set_state(self.q_initial, self.v_initial)
        self.get_logger().info(compile_notice())
        warm_start = time.monotonic()
        try:
            warm = warm_up(self.simulator, self.q_initial)
        except SimulationError as exc:
            raise StartupError(f"the first simulation step fails from the initial state: {exc}") from None
        for scenario, reason in warm.failed.items():
            self.get_logger().warning(f"warm-up scenario {scenario!r} failed ({reason}); its kernels load on first use")
        self.get_logger().info(f"physics kernels ready in {time.monotonic() - warm_start:.1f} s")
        self.pushes = PushSchedule(model)
        self.pushes_refused = 0
        world_model = self.simulator.world_model
        # tf: the robot's links (its own model: in a world the first robot's), then each later
        # robot's, its links prefixed "<name>/" (world/assembly.py)
        robot = world_model.robot if world_model is not None and world_model.robot is not None else model
        self.tree = link_tree(robot, self.urdf_xml, p.odom_frame)
        later = world_model.robots[1:] if world_model is not None else ()
        # each later robot's name and URDF text (latched on <name>/robot_description)
        self.later_urdfs = tuple(zip((t.name for t in later), later_robot_urdfs(world_model)))
        try:
            self.later_trees = later_link_trees(later, [xml for _, xml in self.later_urdfs], p.odom_frame)
        except ValueError as exc:
            raise StartupError(f"world {p.world!r}: {exc}") from None
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
        self.memory_watch = MemoryWatch(resident_mb(), renew_allowed=p.loop_mode != "lockstep")
        self.accepted_commands = 0
        self.timeout_ticks = 0
        # loop statistics (read by diagnostics)
        self.late_ticks = 0
        self.paced_ticks = 0  # ticks run on the realtime schedule
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

        self._command_layout = SerializedEffortCommand(model.joint_names)
        self._all_joints = np.arange(model.nj, dtype=np.int64)
        self._command_subscriptions: list[Any] = []
        self._retiring_subscriptions: list[Any] = []  # replaced, until the new ones are matched
        self._command_generation = 0  # of the subscriptions whose commands are taken
        self._renewal_periods = 0  # diagnostics periods the new subscriptions have waited
        self._make_interfaces()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self.viewer = start_viewer(self)  # parameters viewer, viewer_record (humanoid_sim/ros/viewer_bridge.py)

    def stop(self) -> None:
        """Stop the physics thread, then the browser view (its recording is written here)."""
        super().stop()
        close_viewer(self, self.viewer)
        self.viewer = None

    # ------------------------------------------------------------------ setup
    def _declare_and_validate(self) -> NodeParameters:
        values: dict[str, Any] = {}
        for spec in PARAMETER_SPECS:
            if spec.name == "robot_description":
                # declared once the robot is loaded, with its URDF as the value (filled from
                # urdf_path too, for RViz's RobotModel): here only the value given, if any
                given = self._parameter_overrides.get(spec.name)
                values[spec.name] = given.value if given is not None else spec.default
                continue
            try:
                self.declare_parameter(spec.name, spec.default, _descriptor(spec.name))
            except Exception as exc:  # noqa: BLE001 - rclpy raises several types for bad overrides
                raise StartupError(f"parameter {spec.name}: {exc}") from None
            values[spec.name] = self.get_parameter(spec.name).value
        try:
            return validate_parameters(values)
        except ValueError as exc:
            raise StartupError(f"invalid parameters: {exc}") from None

    def _make_interfaces(self) -> None:
        p = self.params
        self._make_publishers()
        self._make_object_interfaces()  # objects markers, per-object tf (world_objects)
        self._make_command_subscriptions()
        self.create_service(Trigger, "reset", self._on_reset)
        self.create_service(SetBool, "pause", self._on_pause)
        self.create_service(Trigger, "step", self._on_step)
        self.create_service(Trigger, "push", self._on_push)
        self._make_simulation_interfaces()  # ~/reset_simulation, ~/step_simulation, ... (the standard's)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if p.loop_mode == "lockstep":
            # A client that subscribed after the initial state went out waits for a state before
            # it commands: the state again every LOCKSTEP_REPUBLISH_S until the first command.
            self.create_timer(LOCKSTEP_REPUBLISH_S, self._republish_until_commanded, clock=steady)
        if p.clock_rate > 0.0:
            self.create_timer(PAUSED_CLOCK_REPUBLISH_S, self._republish_clock_while_paused, clock=steady)
        self._diagnostics_timer = None
        if p.diagnostics_rate > 0.0:
            self._diagnostics_timer = self.create_timer(1.0 / p.diagnostics_rate, self._publish_diagnostics, clock=steady)

    def _republish_until_commanded(self) -> None:
        """Lock-step only: the current state once more while no command has come since the start
        or the last reset (and the simulation runs)."""
        with self._lock:
            if self._command_received or self._paused or self._failed:
                return
            try:
                self._publish_state_now()
            except Exception:  # noqa: BLE001 - the timer fired while a signal shut rclpy down
                if rclpy.ok(context=self.context):
                    raise

    def _republish_clock_while_paused(self) -> None:
        """The current time once more while paused. A harness that steps a paused simulation
        waits for /clock to reach the time it asked for; a burst of ticks (step_simulation with
        many steps) can lose its last sample on a loaded machine (a reliable writer's history
        full, or a datagram dropped), and nothing else would follow it."""
        with self._lock:
            if not self._paused:
                return
            try:
                self._publish_clock_now()
            except Exception:  # noqa: BLE001 - the timer fired while a signal shut rclpy down
                if rclpy.ok(context=self.context):
                    raise

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

    # ------------------------------------------------------------------ the tick
    def _do_tick(self, every_state: bool = False) -> StepResult | None:
        """One physics step and the publishing due at it (every_state: clock, joint_states,
        odometry and tf whatever their rates, as after every lock-step tick). Caller holds the lock."""
        sim = self.simulator
        start = time.perf_counter()
        try:
            wrenches = self.pushes.at(sim.t) if self.pushes.pending else None
            result = sim.step(self._torque(), link_wrenches=wrenches)
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
        self._publish(result, every_state)
        if self.viewer is not None:
            self.viewer.update(result)
        self._tick_costs[self._tick_costs_seen % TICK_COST_WINDOW] = time.perf_counter() - start
        self._tick_costs_seen += 1
        return result


def main(argv: list[str] | None = None) -> int:
    """Run the node until shutdown. Returns the exit code (1 when it cannot start; 0 after
    Ctrl-C / SIGINT / SIGTERM, whenever it comes, without a traceback)."""
    return run_node_main(_run, argv)


def _run(argv: list[str] | None) -> int:
    profile = use_packaged_profile(os.environ, Path.cwd())  # before rclpy creates a DDS participant
    rclpy.init(args=argv)
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
    try:
        node = SimNode()
    except StartupError as exc:
        print(f"[{NODE_NAME}] cannot start: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    node.get_logger().info(profile.reason)
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
