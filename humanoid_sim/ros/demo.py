"""The demo: the simulator and the walking controller as two processes, a progress line once
a second, and the walk report at the end (what ``scripts/demo.sh`` runs).

It starts the same two nodes that ``launch/walk.launch.py`` starts, without ``ros2 launch``
(``python -P -m humanoid_sim.ros.sim_node`` and ``python -P -m
humanoid_sim.ros.walking_controller_node``: same interpreter, same copy of the package as the
demo's own, whatever the working directory), listens to their topics like any other node,
and stops them cleanly at the end, on Ctrl-C or on SIGTERM. After ``--duration`` seconds of
simulated time (or a fall, or a node crash) it writes the walk report picture (``--report``,
default reports/walk_report.png in the working directory, plus the figures as .json beside
it) and prints the figures: distance, steps, ZMP-inside share, real-time factor, fell or not.

Exit code: 0 when the run went through (also when the robot fell: that is a result, and
the report says so); 1 when a node crashed or no simulation data arrived; 130 when
interrupted before any data.

    python -m humanoid_sim.ros.demo --mode walk --duration 20
    python -m humanoid_sim.ros.demo --mode walk --cmd-vel 0.15 0 0.2     # turn left while walking
    python -m humanoid_sim.ros.demo --mode stand --duration 5 --loop-mode realtime
    python -m humanoid_sim.ros.demo --view --record reports/walk.html   # watch it live; keep a replay and a GIF

The default loop mode is lockstep: the simulator waits for each torque command, so every
physics tick is controlled whatever the machine's load (the real-time factor is whatever
the message round trip allows, and is printed). In realtime mode the simulator does not
wait: the progress line then shows the simulator's late ticks and how old the state was that
each torque command answered.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PolygonStamped, Twist, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from humanoid_sim.dynamics import center_of_mass, forward_kinematics
from humanoid_sim.model import load_urdf, neutral_configuration
from humanoid_sim.model.robot_model import RobotModel, ShapeKind
from humanoid_sim.reporting.walk_report import (
    STANDARD_GRAVITY,
    Footprint,
    WalkLog,
    count_steps,
    figures_text,
    write_walk_report,
)
from humanoid_sim.ros.conversions import (
    header_stamp_nanoseconds,
    joint_arrays_from_joint_state,
    nanoseconds_from_stamp,
)
from humanoid_sim.package_data import package_file
from humanoid_sim.ros.process_tuning import lower_priority, make_executor
from humanoid_sim.ros.walking_controller_node import (
    CMD_VEL_TOPIC,
    CONTACT_WRENCH_TOPIC,
    JOINT_STATES_TOPIC,
    ODOMETRY_TOPIC,
    TORQUE_COMMAND_TOPIC,
    base_state_from_odometry,
)

# The folder holding this copy of the package (the source tree, or site-packages when installed).
PACKAGE_PARENT = Path(__file__).resolve().parents[2]
FOOT_LINKS = ("l_foot", "r_foot")
CONTROLLER_NODE = "walking_controller"
# Topics the report is made of: the simulator is held until this process hears them (DDS
# discovery takes a moment; a lock-step run could otherwise be over before it).
RECORDED_TOPICS = (JOINT_STATES_TOPIC, ODOMETRY_TOPIC, "support_polygon", "zmp")
SAMPLE_RATE_HZ = 100.0  # [Hz of sim time] the simulator's contact rate: zmp, support_polygon, contact wrenches
SAMPLE_QUEUE = 100  # messages kept per recorded 100 Hz topic
DRAIN_TIMEOUT_S = 5.0  # [s of wall time] for the samples queued behind the states to be recorded at the end
STALL_TIMEOUT_S = 10.0  # [s of wall time] without simulated time advancing: the run is over
RECORDING_STOP_TIMEOUT_S = 120.0  # [s] for the simulator to write the recording when it stops
NON_FOOT_CONTACT_FORCE = 1.0  # [N]: a link other than the feet pushing harder than this touched the ground


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="demo", description="Run the simulator and the walking controller, print progress, write the walk report."
    )
    parser.add_argument("--mode", choices=("walk", "stand"), default="walk",
                        help="walk: the walking controller; stand: a holding controller (default: walk)")
    parser.add_argument("--duration", type=float, default=20.0, help="simulated time to run [s] (default: 20)")
    parser.add_argument("--report", type=Path, default=Path("reports") / "walk_report.png",
                        help="walk report picture (PNG; figures go beside it as .json)")
    parser.add_argument("--speed", type=float, default=0.15,
                        help="forward speed without cmd_vel [m/s] (controller parameter walk_speed)")
    parser.add_argument("--cmd-vel", type=float, nargs=3, metavar=("VX", "VY", "YAW_RATE"), default=None,
                        help="publish this cmd_vel [m/s, m/s, rad/s] instead of walking at --speed")
    parser.add_argument("--loop-mode", choices=("realtime", "lockstep", "fast"), default="lockstep",
                        help="simulator loop: lockstep (one tick per torque command: every tick is controlled,"
                             " as fast as the two processes can exchange messages), realtime (at"
                             " --real-time-factor; the torques arrive some ticks late), fast (default: lockstep)")
    parser.add_argument("--real-time-factor", type=float, default=1.0, help="target RTF in realtime mode")
    parser.add_argument("--physics-dt", type=float, default=0.001, help="physics step [s]")
    parser.add_argument("--state-rate", type=float, default=250.0,
                        help="joint_states / odometry rate of the simulator in realtime and fast modes [Hz of sim"
                             " time]; the controller computes torques at 250 Hz and answers each state (default:"
                             " 250; lockstep: every tick)")
    parser.add_argument("--min-base-height", type=float, default=None,
                        help="the robot fell when the base goes below this [m]; default 60%% of the start height")
    parser.add_argument("--startup-timeout", type=float, default=180.0,
                        help="wall seconds to wait for the first simulation data")
    parser.add_argument("--wall-timeout", type=float, default=0.0,
                        help="stop after this many wall seconds whatever the sim time (0: no limit)")
    parser.add_argument("--urdf", type=Path, default=None, help="URDF file (default: the bundled humanoid)")
    parser.add_argument("--view", action="store_true",
                        help="serve a live 3D view of the run to a web browser (the simulator's viewer parameter;"
                             " the address is printed: http://127.0.0.1:8080 unless that port is taken)")
    parser.add_argument("--record", type=Path, default=None, metavar="FILE",
                        help="write the run as a self-contained HTML replay to FILE (open it in a browser), and an"
                             " animated GIF beside it (FILE with .gif), when the run ends")
    options = parser.parse_args(argv)
    if not (options.duration > 0.0 and math.isfinite(options.duration)):
        parser.error("--duration must be > 0")
    return options


# ---------------------------------------------------------------- processes


def node_commands(options: argparse.Namespace, urdf: Path) -> dict[str, list[str]]:
    """Command lines of the two nodes (same interpreter, parameters as --ros-args; -P: the
    working directory stays off sys.path, so PYTHONPATH decides which copy they import)."""
    state_rate = options.state_rate  # lockstep publishes the state after every tick anyway
    sim = [
        sys.executable, "-P", "-m", "humanoid_sim.ros.sim_node", "--ros-args",
        "-p", f"urdf_path:={urdf}",
        "-p", f"loop_mode:={options.loop_mode}",
        # realtime / fast: held until the controller has answered a first state (release_simulator)
        "-p", "start_paused:=true",  # held until the controller answers and the demo listens (release_simulator)
        "-p", f"physics_dt:={options.physics_dt}",
        "-p", f"real_time_factor:={options.real_time_factor}",
        "-p", f"joint_states_rate:={state_rate}",
        "-p", f"odometry_rate:={state_rate}",
        "-p", "clock_rate:=100.0",  # nobody here runs on sim time; the nodes go by the states' stamps
        "-p", f"contact_rate:={SAMPLE_RATE_HZ}",
        "-p", "tf_rate:=50.0",
        "-p", "markers_rate:=10.0",
    ]
    if options.view:
        sim += ["-p", "viewer:=true"]
    if options.record is not None:
        sim += ["-p", f"viewer_record:={options.record.resolve()}"]
    controller = [
        sys.executable, "-P", "-m", "humanoid_sim.ros.walking_controller_node", "--ros-args",
        "-r", f"__node:={CONTROLLER_NODE}",
        "-p", f"urdf_path:={urdf}",
        "-p", f"mode:={options.mode}",
        "-p", f"walk_speed:={options.speed}",
    ]
    return {"controller": controller, "simulator": sim}


class NodeProcesses:
    """The node subprocesses, each in its own session (a terminal's Ctrl-C reaches only the
    demo, which then stops them in order: SIGINT, then SIGTERM, then SIGKILL)."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen] = {}
        self.stopping = False

    def start(self, name: str, command: list[str]) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")])))
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.processes[name] = subprocess.Popen(command, env=env, start_new_session=True)

    def crashed(self) -> list[str]:
        """Names and exit codes of nodes that ended by themselves."""
        return [f"{name} (exit code {p.returncode})" for name, p in self.processes.items() if p.poll() is not None]

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping = True
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            alive = [p for p in self.processes.values() if p.poll() is None]
            if not alive:
                return
            for process in alive:
                try:
                    process.send_signal(sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + timeout
            for process in alive:
                try:
                    process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass


# ---------------------------------------------------------------- recording


def sole_outline(model: RobotModel, X_world_body: np.ndarray, body: int) -> np.ndarray:
    """Counter-clockwise (4, 2) outline [m] in the world of the lowest face of the body's box
    collision shapes (their bounding rectangle); empty (0, 2) when the body has no box."""
    corners = []
    for shape in model.collision_shapes:
        if shape.body != body or shape.kind != ShapeKind.BOX:
            continue
        half = 0.5 * np.asarray(shape.size)
        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            corner = X_world_body[body] @ shape.X_body_shape @ np.array([sx * half[0], sy * half[1], -half[2], 1.0])
            corners.append(corner[:2])
    return np.array(corners).reshape(-1, 2)


class WalkRecorder:
    """Keeps the newest message of each topic and records one sample per support polygon
    message (the simulator's contact rate). Joint states and odometry come at up to the
    physics rate: they are kept as received bytes and deserialized only when a sample is
    recorded, so that listening costs the simulator and the controller little CPU."""

    def __init__(self, model: RobotModel, foot_links: Sequence[str]) -> None:
        self.model = model
        self.foot_links = tuple(foot_links)
        self.foot_bodies = {link: model.body_names.index(link) for link in self.foot_links}
        self.contact_links = tuple(dict.fromkeys(model.body_names[s.body] for s in model.collision_shapes))
        self.q: np.ndarray | None = None
        self.joints: tuple[np.ndarray, np.ndarray] | None = None
        self.base: np.ndarray | None = None
        self._joint_state_bytes: bytes | None = None
        self._odometry_bytes: bytes | None = None
        self.wrench_link = {link: np.zeros(6) for link in self.contact_links}
        self.zmp: tuple[int, np.ndarray] | None = None
        self.planned_zmp: np.ndarray | None = None
        # per sample: sim time, base, CoM, ZMP, planned ZMP, support polygon, and the wall time
        # it was recorded at (the real-time factor is sim time over wall time between samples)
        self.rows: dict[str, list] = {k: [] for k in ("t", "base", "com", "zmp", "planned", "polygon", "wall")}
        self.forces: dict[str, list[float]] = {link: [] for link in self.foot_links}
        self.footprints: list[Footprint] = []
        self._foot_down = {link: False for link in self.foot_links}
        self.non_foot_contacts: set[str] = set()
        self.simulator_diagnostics: dict[str, str] = {}
        self.sim_time = 0.0
        self._window: deque[tuple[float, float]] = deque()
        self.weight = model.total_mass * STANDARD_GRAVITY
        # Compile (or load) the kinematics kernels of ``on_polygon`` now: on a fresh install
        # that takes seconds, during which a lock-step run would go on unrecorded.
        center_of_mass(model, neutral_configuration(model))
        forward_kinematics(model, neutral_configuration(model))

    # --- message handlers
    def on_joint_state_bytes(self, data: bytes) -> None:
        """A JointState received raw: kept, read when the next sample is recorded."""
        self._joint_state_bytes = data
        self._clock_ns(header_stamp_nanoseconds(data))

    def on_odometry_bytes(self, data: bytes) -> None:
        """An Odometry received raw: kept, read when the next sample is recorded."""
        self._odometry_bytes = data
        self._clock_ns(header_stamp_nanoseconds(data))

    def _read_kept_state(self) -> None:
        if self._joint_state_bytes is not None:
            self.on_joint_state(deserialize_message(self._joint_state_bytes, JointState))
            self._joint_state_bytes = None
        if self._odometry_bytes is not None:
            self.on_odometry(deserialize_message(self._odometry_bytes, Odometry))
            self._odometry_bytes = None

    def on_joint_state(self, msg: JointState) -> None:
        position, velocity, _ = joint_arrays_from_joint_state(msg, self.model.joint_names, ignore_unknown=True)
        self.joints = (position, velocity)
        self._clock(msg.header.stamp)

    def on_odometry(self, msg: Odometry) -> None:
        self.base, _ = base_state_from_odometry(msg)
        self._clock(msg.header.stamp)

    def on_wrench(self, link: str, msg: WrenchStamped) -> None:
        f, n = msg.wrench.force, msg.wrench.torque
        self.wrench_link[link] = np.array([f.x, f.y, f.z, n.x, n.y, n.z])

    def on_zmp(self, msg: PointStamped) -> None:
        self.zmp = (nanoseconds_from_stamp(msg.header.stamp), np.array([msg.point.x, msg.point.y, msg.point.z]))

    def on_diagnostics(self, msg: DiagnosticArray) -> None:
        """Keep the simulator's loop figures (its /diagnostics key-values) for the progress line."""
        for status in msg.status:
            if status.name.endswith(": simulation"):
                self.simulator_diagnostics = {kv.key: kv.value for kv in status.values}

    def loop_summary(self) -> str:
        """The simulator's late-tick share, dropped backlogs (schedule resets), command age and
        timeout ticks ("" before any)."""
        d = self.simulator_diagnostics
        if not d:
            return ""
        try:
            late = 100.0 * float(d["late_tick_share"])
            return (f" | late ticks {late:4.1f} %, schedule resets {d['schedule_resets']} | command age"
                    f" {float(d['command_age_mean_ms']):4.1f} ms mean, {float(d['command_age_max_ms']):4.1f} max"
                    f" | timeout ticks {d['command_timeout_ticks']}")
        except (KeyError, ValueError):
            return ""

    def on_planned_zmp(self, msg: PointStamped) -> None:
        self.planned_zmp = np.array([msg.point.x, msg.point.y, msg.point.z])

    def _clock(self, stamp) -> None:
        self._clock_ns(nanoseconds_from_stamp(stamp))

    def _clock_ns(self, stamp_ns: int) -> None:
        self.sim_time = max(self.sim_time, stamp_ns * 1e-9)
        now = time.monotonic()
        self._window.append((now, self.sim_time))
        while len(self._window) > 2 and now - self._window[0][0] > 2.0:
            self._window.popleft()

    def on_polygon(self, msg: PolygonStamped) -> None:
        """Record one sample: the polygon's stamp, and the newest state, ZMP and forces."""
        self._read_kept_state()
        if self.joints is None or self.base is None or not np.all(np.isfinite(self.joints[0])):
            return
        ns = nanoseconds_from_stamp(msg.header.stamp)
        q = np.concatenate([self.base, self.joints[0]])
        X = forward_kinematics(self.model, q)
        rows = self.rows
        rows["t"].append(ns * 1e-9)
        rows["wall"].append(time.monotonic())
        rows["base"].append(q[:3].copy())
        rows["com"].append(center_of_mass(self.model, q))
        rows["zmp"].append(self.zmp[1] if self.zmp is not None and self.zmp[0] == ns else np.full(3, np.nan))
        rows["planned"].append(self.planned_zmp if self.planned_zmp is not None else np.full(3, np.nan))
        rows["polygon"].append(np.array([[p.x, p.y] for p in msg.polygon.points]).reshape(-1, 2))
        on, off = 0.05 * self.weight, 0.01 * self.weight
        for link in self.contact_links:
            body = self.model.body_names.index(link)
            force_world = X[body, :3, :3] @ self.wrench_link[link][:3]  # the wrench is in the link frame
            if link in self.forces:
                self.forces[link].append(float(force_world[2]))
                down = self._foot_down[link]
                if not down and force_world[2] > on:
                    self._foot_down[link] = True
                    self.footprints.append(Footprint(link, ns * 1e-9, sole_outline(self.model, X, body)))
                elif down and force_world[2] < off:
                    self._foot_down[link] = False
            elif np.linalg.norm(force_world) > NON_FOOT_CONTACT_FORCE:
                self.non_foot_contacts.add(link)

    # --- readouts
    @property
    def samples(self) -> int:
        return len(self.rows["t"])

    def start_real_time_factor(self) -> None:
        """The progress line's real-time factor counts from now: the simulator was held
        (paused, stepped once at a time until the controller answered) and runs freely from here."""
        self._window.clear()

    def recent_real_time_factor(self) -> float:
        """Real-time factor over the last two wall seconds (NaN before two samples)."""
        if len(self._window) < 2 or self._window[-1][0] <= self._window[0][0]:
            return math.nan
        (w0, s0), (w1, s1) = self._window[0], self._window[-1]
        return (s1 - s0) / (w1 - w0)

    def last_sample_time(self) -> float:
        """The newest sample's sim time [s] (-inf before any)."""
        return self.rows["t"][-1] if self.rows["t"] else -math.inf

    def sample_wall_time(self) -> float:
        """Wall seconds between the first and the last sample (NaN before two): over it the
        samples span t[-1] - t[0] of simulated time, so their ratio is the run's real-time
        factor, free of the wait before the release and of the shutdown after the run."""
        wall = self.rows["wall"]
        return wall[-1] - wall[0] if len(wall) >= 2 else math.nan

    def steps(self) -> int:
        on, off = 0.05 * self.weight, 0.01 * self.weight
        return sum(count_steps(np.array(f), on, off) for f in self.forces.values())

    def distance(self) -> float:
        base = self.rows["base"]
        return float(np.hypot(*(base[-1][:2] - base[0][:2]))) if base else 0.0

    def base_height(self) -> float:
        return float(self.rows["base"][-1][2]) if self.rows["base"] else math.nan

    def log(self, wall_time_s: float, mode: str, note: str) -> WalkLog:
        rows = self.rows
        planned = np.array(rows["planned"])
        return WalkLog(
            t=np.array(rows["t"]),
            base_position=np.array(rows["base"]),
            com=np.array(rows["com"]),
            zmp=np.array(rows["zmp"]),
            support_polygons=tuple(rows["polygon"]),
            foot_force_z={link: np.array(values) for link, values in self.forces.items()},
            robot_mass=self.model.total_mass,
            wall_time_s=wall_time_s,
            footprints=tuple(self.footprints),
            planned_zmp=planned if np.any(np.isfinite(planned)) else None,
            non_foot_contacts=tuple(self.non_foot_contacts),
            mode=mode,
            note=note,
        )


# ---------------------------------------------------------------- main



def print_progress(recorder: WalkRecorder) -> None:
    """One progress line: sim time, distance, steps, recent real-time factor, base height, loop figures."""
    print(f"  t_sim {recorder.sim_time:6.2f} s | distance {recorder.distance():5.2f} m | "
          f"steps {recorder.steps():3d} | RTF {recorder.recent_real_time_factor():4.2f} | "
          f"base height {recorder.base_height():.3f} m{recorder.loop_summary()}", flush=True)


def release_simulator(node, executor, deadline: float, interrupted: list[str]) -> str:
    """Wait until this process hears the simulator's topics, tick the paused simulator once at
    a time (``step`` service) until the controller has answered a state with torques, then
    resume it (``pause`` service, false): the first ticks in real time are already controlled,
    and no tick goes unrecorded.
    Returns "" when released, else what went wrong."""
    answers: list[JointState] = []

    def on_command(msg: JointState) -> None:
        # An answer to a stepped state carries its stamp (> 0); the controller's keep-alive
        # before any state is stamped 0 and says nothing about it being ready.
        if nanoseconds_from_stamp(msg.header.stamp) > 0:
            answers.append(msg)

    subscription = node.create_subscription(JointState, TORQUE_COMMAND_TOPIC, on_command, 10)
    step = node.create_client(Trigger, "step")
    pause = node.create_client(SetBool, "pause")
    try:
        while not (step.service_is_ready() and pause.service_is_ready()
                   and all(node.count_publishers(topic) for topic in RECORDED_TOPICS)):
            if interrupted or time.monotonic() > deadline:
                return "the simulator's step and pause services and its topics did not appear"
            executor.spin_once(timeout_sec=0.1)
        while not answers:
            if interrupted or time.monotonic() > deadline:
                return "the controller did not answer the simulator's first states"
            future = step.call_async(Trigger.Request())
            executor.spin_until_future_complete(future, timeout_sec=1.0)
            wait_until = time.monotonic() + 0.5
            while not answers and time.monotonic() < wait_until:
                executor.spin_once(timeout_sec=0.05)
        future = pause.call_async(SetBool.Request(data=False))
        executor.spin_until_future_complete(future, timeout_sec=5.0)
        if not (future.done() and future.result().success):
            return "the simulator did not resume"
        return ""
    finally:
        node.destroy_subscription(subscription)
        node.destroy_client(step)
        node.destroy_client(pause)


def drain_samples(executor, recorder: WalkRecorder, until: float, deadline: float, interrupted: list[str]) -> None:
    """Spin until the recorded samples reach sim time ``until`` [s] (to one sample period),
    the wall-clock ``deadline`` (time.monotonic()) passes or the run is interrupted. The
    sampled topics are recorded behind the state topics that advance ``recorder.sim_time``
    (their queues hold a second of backlog): on a loaded machine the states reached the end
    with most samples still queued, and the report of a 0.5 s run covered 0.41 s (beside the
    test suite's other processes) or 0.03-0.12 s (beside four busy ones)."""
    while not interrupted and recorder.last_sample_time() < until - 1.0 / SAMPLE_RATE_HZ:
        if time.monotonic() > deadline:
            return
        executor.spin_once(timeout_sec=0.05)


def run(options: argparse.Namespace) -> int:
    urdf = options.urdf or package_file("urdf/humanoid.urdf")
    model = load_urdf(str(urdf))
    recorder = WalkRecorder(model, FOOT_LINKS)
    processes = NodeProcesses()
    interrupted: list[str] = []

    def on_signal(signum: int, _frame) -> None:
        interrupted.append(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("humanoid_sim_demo")
    executor = make_executor()  # listening to ~3 kHz of messages: the cheap executor
    executor.add_node(node)
    node.create_subscription(JointState, JOINT_STATES_TOPIC, recorder.on_joint_state_bytes, 10, raw=True)
    node.create_subscription(Odometry, ODOMETRY_TOPIC, recorder.on_odometry_bytes, 10, raw=True)
    # The sampled topics (100 Hz) keep a second of backlog: a slow moment here loses no sample.
    node.create_subscription(PointStamped, "zmp", recorder.on_zmp, SAMPLE_QUEUE)
    node.create_subscription(PolygonStamped, "support_polygon", recorder.on_polygon, SAMPLE_QUEUE)
    node.create_subscription(PointStamped, f"{CONTROLLER_NODE}/planned_zmp", recorder.on_planned_zmp, 10)
    node.create_subscription(DiagnosticArray, "diagnostics", recorder.on_diagnostics, 10)
    for link in recorder.contact_links:
        node.create_subscription(WrenchStamped, CONTACT_WRENCH_TOPIC.format(link=link),
                                 lambda msg, link=link: recorder.on_wrench(link, msg), SAMPLE_QUEUE)
    cmd_vel = node.create_publisher(Twist, CMD_VEL_TOPIC, 10)

    commands = node_commands(options, Path(urdf))
    print(f"demo: mode {options.mode}, {options.duration:g} s of sim time, loop {options.loop_mode}; "
          f"starting the controller and the simulator (Ctrl-C stops)", flush=True)
    wall_start = time.monotonic()
    failure = ""
    note = ""
    min_height = options.min_base_height
    try:
        # The controller first, so that it listens before the first simulated tick (in
        # realtime mode the simulator does not wait; uncontrolled, the robot would sag).
        processes.start("controller", commands["controller"])
        while not interrupted and node.count_subscribers(JOINT_STATES_TOPIC) < 2:  # the demo's + the controller's
            executor.spin_once(timeout_sec=0.1)
            if processes.crashed() or time.monotonic() - wall_start > options.startup_timeout:
                break
        processes.start("simulator", commands["simulator"])
        # The nodes started at normal priority; from here the recorder yields the CPU to them
        # (on 2 cores the three processes compete, and only the nodes' timing matters).
        lower_priority(10)
        failure = release_simulator(node, executor, wall_start + options.startup_timeout, interrupted)
        if not failure:
            recorder.start_real_time_factor()
        last_print = last_cmd_vel = time.monotonic()
        progress = (last_print, recorder.sim_time)  # (wall time, sim time) when sim time last advanced
        while not interrupted and not failure:
            executor.spin_once(timeout_sec=0.05)
            now = time.monotonic()
            crashed = processes.crashed()
            if crashed:
                failure = f"node ended unexpectedly: {', '.join(crashed)}"
                break
            if recorder.samples == 0:
                if now - wall_start > options.startup_timeout:
                    failure = f"no simulation data within {options.startup_timeout:g} s"
                    break
                continue
            if recorder.sim_time > progress[1]:
                progress = (now, recorder.sim_time)
            elif now - progress[0] > STALL_TIMEOUT_S:
                note = (f"stopped: simulated time stayed at {recorder.sim_time:.2f} s for {STALL_TIMEOUT_S:g} s of wall"
                        " time (the simulator paused; its log says why)")
                break
            if min_height is None:
                min_height = 0.6 * float(recorder.rows["base"][0][2])
            if options.cmd_vel is not None and now - last_cmd_vel >= 0.1:
                last_cmd_vel = now
                vx, vy, wz = options.cmd_vel
                twist = Twist()
                twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
                cmd_vel.publish(twist)
            if now - last_print >= 1.0:
                last_print = now
                print_progress(recorder)
            if recorder.sim_time >= options.duration:
                drain_samples(executor, recorder, options.duration, time.monotonic() + DRAIN_TIMEOUT_S, interrupted)
                break
            if recorder.base_height() < min_height:
                note = f"stopped early: the base went below {min_height:.3f} m (fell) at t = {recorder.sim_time:.2f} s"
                break
            if options.wall_timeout > 0.0 and now - wall_start > options.wall_timeout:
                note = f"stopped by --wall-timeout after {options.wall_timeout:g} s of wall time"
                break
        if recorder.samples:
            print_progress(recorder)  # where the run ended (also a run shorter than a second)
    finally:
        wall_time = recorder.sample_wall_time()
        processes.stop(timeout=RECORDING_STOP_TIMEOUT_S if options.record is not None else 10.0)
        executor.remove_node(node)
        node.destroy_node()
        rclpy.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    if interrupted:
        note = f"interrupted by {interrupted[0]} at t = {recorder.sim_time:.2f} s"
    if failure:
        print(f"demo: FAILED: {failure}", file=sys.stderr, flush=True)
    if recorder.samples == 0:
        print("demo: no data recorded; no report written", file=sys.stderr, flush=True)
        return 130 if interrupted and not failure else 1
    if options.mode == "stand":
        note = "; ".join(filter(None, ["stand mode: holding controller (PD + gravity compensation), no walking", note]))
    if failure:
        note = "; ".join(filter(None, [failure, note]))
    log = recorder.log(wall_time, options.mode, note)
    figures = write_walk_report(log, options.report, min_height if min_height is not None else 0.0)
    print(f"demo: {figures_text(figures)}")
    if recorder.loop_summary():
        print(f"demo: simulator loop{recorder.loop_summary()}")
    if note:
        print(f"demo: {note}")
    print(f"demo: report written to {options.report} (+ {options.report.with_suffix('.json').name})", flush=True)
    if options.record is not None:
        print(f"demo: replay {options.record} (open it in a browser), animation {options.record.with_suffix('.gif')}",
              flush=True)
    return 1 if failure else 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse_arguments(argv))


if __name__ == "__main__":
    sys.exit(main())
