"""The simulation node in its own process, over real DDS: topics, tf, services, bad input.

Each test starts ``python -m humanoid_sim.ros.sim_node`` in a namespace of its own (and
scripts/test.sh gives every run its own ROS_DOMAIN_ID), talks to it with rclpy, and stops
it with SIGINT as ``ros2 launch`` would.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from ros_node_process import LATCHED, REPO, Listener, start_node, stop_node, wait_exit  # noqa: E402

from humanoid_sim.contact.bounded_solve import BOUNDED_SWEEPS  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.ros.conversions import diagnostic_values, nanoseconds_from_stamp  # noqa: E402
from humanoid_sim.ros.link_tree import urdf_link_joint_names  # noqa: E402

URDF_TEXT = (REPO / "urdf" / "humanoid.urdf").read_text()
MODEL = load_urdf(URDF_TEXT)
STARTUP_S = 90.0  # numba loads (or compiles, after a code change) its kernels at start


def namespace(tag: str) -> str:
    return f"/hs_{tag}_{os.getpid()}"


def stamp_ns(msg) -> int:
    return nanoseconds_from_stamp(msg.header.stamp)


def test_unloadable_urdf_stops_with_one_clear_message():
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.urdf"
        bad.write_text('<robot name="bad"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
                       '<child link="ghost"/><axis xyz="0 0 1"/></joint></robot>')
        process = start_node(namespace("badurdf"), {"urdf_path": str(bad)})
        code, _, err = wait_exit(process, timeout=STARTUP_S)
    assert code == 1
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "cannot start" in lines[0] and "'ghost'" in lines[0]


@pytest.mark.parametrize(
    ("content", "fault"),
    [
        (bytes(range(256)) * 4, "not valid XML"),
        (b"", "empty file"),
        (b"just some text\n", "not valid XML"),
        (b'<robot name="r"><link name="a">', "not valid XML"),
    ],
    ids=["binary", "empty", "not_xml", "malformed"],
)
def test_broken_robot_file_stops_with_one_line(content, fault):
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "robot.urdf"
        bad.write_bytes(content)
        process = start_node(namespace("brokenfile"), {"urdf_path": str(bad)})
        code, _, err = wait_exit(process, timeout=STARTUP_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1
    assert len(lines) == 1, err
    assert "cannot start" in lines[0] and f"URDF file {str(bad)!r}: {fault}" in lines[0]


def test_out_of_range_parameter_stops_with_reason():
    process = start_node(namespace("badparam"), {"physics_dt": 5.0})
    code, _, err = wait_exit(process, timeout=STARTUP_S)
    assert code == 1
    assert "Traceback" not in err
    assert "physics_dt" in err


def test_ctrl_c_while_starting_ends_quietly():
    # SIGINT during the kernels' warm-up (what Ctrl-C on ros2 launch sends to a starting node).
    process = start_node(namespace("sigint_start"), {"loop_mode": "lockstep"})
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and process.poll() is None:
        process.err_file.seek(0)
        if "physics kernels" in process.err_file.read():
            break
        time.sleep(0.05)
    code, _, err = stop_node(process)
    assert "physics kernels" in err
    assert code == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_topics_tf_clock_and_rates(ros):
    ns = namespace("topics")
    process = start_node(ns, {"loop_mode": "fast", "joint_states_rate": 200.0, "tf_rate": 100.0,
                              "clock_rate": 1000.0, "odometry_rate": 100.0, "diagnostics_rate": 5.0,
                              "initial_pose": "stand"})
    listener = Listener("topics_listener", ns)
    try:
        for relative, msg_type in (("joint_states", JointState), ("tf", TFMessage), ("clock", Clock),
                                   ("ground_truth/odom", Odometry), ("imu", Imu), ("diagnostics", DiagnosticArray),
                                   ("contact/l_foot/cop", PointStamped)):
            listener.subscribe(msg_type, relative)
        listener.subscribe(TFMessage, "tf_static", LATCHED)
        listener.subscribe(String, "robot_description", LATCHED)
        m = listener.messages
        assert listener.spin_until(
            lambda: len(m["joint_states"]) >= 12 and len(m["tf"]) >= 4 and m["tf_static"] and m["robot_description"]
            and m["diagnostics"] and len(m["clock"]) >= 20 and m["imu"] and m["ground_truth/odom"]
            and m["contact/l_foot/cop"],
            STARTUP_S, process,
        ), {k: len(v) for k, v in m.items()}
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err

    # joint_states: every joint, finite, every 5 ms of simulation time (200 Hz)
    states = m["joint_states"]
    for msg in states:
        assert tuple(msg.name) == MODEL.joint_names
        assert len(msg.position) == len(msg.velocity) == len(msg.effort) == MODEL.nj
        assert np.all(np.isfinite(msg.position)) and np.all(np.isfinite(msg.velocity)) and np.all(np.isfinite(msg.effort))
    stamps = np.array([stamp_ns(msg) for msg in states])
    gaps = np.diff(stamps)
    assert np.all(gaps % 5_000_000 == 0) and np.all(gaps > 0), gaps  # rate in sim time; none reordered
    assert np.median(gaps) == 5_000_000, gaps  # none or few dropped
    # tf: every link, odom -> base moving, fixed frames static
    links, _ = urdf_link_joint_names(URDF_TEXT)
    moving = {(t.header.frame_id, t.child_frame_id) for t in m["tf"][-1].transforms}
    static = {(t.header.frame_id, t.child_frame_id) for t in m["tf_static"][-1].transforms}
    assert ("odom", MODEL.body_names[0]) in moving
    assert {child for _, child in moving | static} == set(links)
    assert not {child for _, child in moving} & {child for _, child in static}
    tf_gaps = np.diff([stamp_ns(msg.transforms[0]) for msg in m["tf"]])
    assert np.all(tf_gaps % 10_000_000 == 0) and np.all(tf_gaps > 0)
    # clock advances in 1 ms steps
    clock = np.array([nanoseconds_from_stamp(c.clock) for c in m["clock"]])
    assert np.all(np.diff(clock) > 0) and np.all(np.diff(clock) % 1_000_000 == 0)
    assert m["robot_description"][-1].data == URDF_TEXT
    odom = m["ground_truth/odom"][-1]
    assert (odom.header.frame_id, odom.child_frame_id) == ("odom", MODEL.body_names[0])
    assert m["imu"][-1].header.frame_id == MODEL.body_names[0]
    cop = m["contact/l_foot/cop"][-1]  # published while someone listens: standing, on the ground
    assert cop.header.frame_id == "odom" and abs(cop.point.z) < 1e-3 and cop.point.y > 0.0
    values = diagnostic_values(m["diagnostics"][-1])
    for key in ("real_time_factor", "late_ticks", "solver_rounds", "active_limits", "limit_torques",
                "zmp_margin_m", "rejected_commands"):
        assert key in values
    # the solve integrated and its Gauss-Seidel sweeps, on every report: seed 000's checked solve
    # has none, the bounded one 1 to its cap. (In fast mode with no controller the robot
    # collapses within the run, and the listener may join late: a report may come from the fall.)
    for msg in m["diagnostics"]:
        report = diagnostic_values(msg)
        sweeps = int(report["solver_sweeps"])
        assert (report["solver"] == "checked" and sweeps == 0) or (report["solver"] == "bounded" and 1 <= sweeps <= BOUNDED_SWEEPS)


def test_pause_step_reset(ros):
    ns = namespace("services")
    process = start_node(ns, {"loop_mode": "fast", "clock_rate": 1000.0, "joint_states_rate": 1000.0,
                              "initial_pose": "stand", "timeout_behaviour": "zero_torque"})
    listener = Listener("services_listener", ns)
    listener.subscribe(Clock, "clock", keep=False)
    listener.subscribe(JointState, "joint_states", keep=False)
    m = listener.messages
    try:
        assert listener.spin_until(lambda: m["clock"] and m["joint_states"], STARTUP_S, process)
        assert listener.call(SetBool, "pause", SetBool.Request(data=True)).success
        listener.spin_for(0.5)
        frozen = nanoseconds_from_stamp(m["clock"][-1].clock)
        listener.spin_for(1.0)
        assert nanoseconds_from_stamp(m["clock"][-1].clock) == frozen, "time moved while paused"

        answer = listener.call(Trigger, "step", Trigger.Request())
        assert answer.success, answer.message
        assert listener.spin_until(lambda: nanoseconds_from_stamp(m["clock"][-1].clock) > frozen, 60.0)
        assert nanoseconds_from_stamp(m["clock"][-1].clock) - frozen == 1_000_000  # exactly one dt

        # zero torque for a while: the robot sags; reset brings back the initial joint positions
        assert listener.call(SetBool, "pause", SetBool.Request(data=False)).success
        listener.spin_until(lambda: nanoseconds_from_stamp(m["clock"][-1].clock) > frozen + 50_000_000, 60.0, process)
        assert listener.call(SetBool, "pause", SetBool.Request(data=True)).success
        listener.spin_for(0.3)
        sagged = np.array(m["joint_states"][-1].position)
        answer = listener.call(Trigger, "reset", Trigger.Request())
        assert answer.success, answer.message
        assert listener.spin_until(lambda: not np.allclose(m["joint_states"][-1].position, sagged), 60.0)
        initial_positions = np.array(m["joint_states"][-1].position)
        assert listener.call(SetBool, "pause", SetBool.Request(data=False)).success
        not_paused = listener.call(Trigger, "step", Trigger.Request())
        assert not not_paused.success and "not paused" in not_paused.message
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    from humanoid_sim.contact.environment import load_environment
    from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

    sim = Simulator(MODEL, SimulatorConfig(environment=load_environment(REPO / "config" / "environment.yaml")))
    expected = sim.reset("stand")[7:]
    assert np.abs(sagged - expected).max() > 1e-3, "zero torque should have let the robot move"
    np.testing.assert_allclose(initial_positions, expected, atol=1e-12)


def malformed_commands(rng: np.random.Generator):
    """(topic, message, rejection kind) of every kind, in a shuffled stream."""
    names = list(MODEL.joint_names)
    nj = MODEL.nj
    kinds = []
    for _ in range(100):
        effort = rng.normal(size=nj)
        kinds.append(("joint_commands", JointState(name=names, effort=effort[:-1].tolist()), "wrong_length"))
        bad = effort.copy()
        bad[rng.integers(nj)] = rng.choice([np.nan, np.inf, -np.inf])
        kinds.append(("joint_commands", JointState(name=names, effort=bad.tolist()), "non_finite"))
        kinds.append(("joint_commands", JointState(name=["no_such_joint"], effort=[1.0]), "unknown_joint"))
        kinds.append(("joint_commands", JointState(name=names, position=effort.tolist()), "effort_missing"))
        kinds.append(("joint_commands", JointState(name=[names[0], names[0]], effort=[1.0, 2.0]), "duplicate_joint"))
        kinds.append(("effort_controller/commands", Float64MultiArray(data=effort[: rng.integers(nj)].tolist()), "wrong_length"))
        kinds.append(("effort_controller/commands", Float64MultiArray(data=bad.tolist()), "non_finite"))
    order = rng.permutation(len(kinds))
    return [kinds[k] for k in order]


def test_malformed_commands_rejected_counted_and_harmless(ros, rng):
    ns = namespace("malformed")
    process = start_node(ns, {"loop_mode": "fast", "joint_states_rate": 200.0, "diagnostics_rate": 50.0,
                              "initial_pose": "stand", "rejection_log_period": 1.0})
    listener = Listener("malformed_listener", ns)
    listener.subscribe(JointState, "joint_states")
    listener.subscribe(DiagnosticArray, "diagnostics", keep=False)
    m = listener.messages
    commands = malformed_commands(rng)
    expected = {kind: sum(1 for _, _, k in commands if k == kind) for kind in
                ("wrong_length", "non_finite", "unknown_joint", "effort_missing", "duplicate_joint")}
    try:
        assert listener.spin_until(lambda: len(m["joint_states"]) >= 5 and m["diagnostics"], STARTUP_S, process)
        publishers = {topic: listener.publisher(JointState if topic == "joint_commands" else Float64MultiArray, topic)
                      for topic in ("joint_commands", "effort_controller/commands")}
        listener.spin_for(1.0)  # let the node match the publishers before the stream
        before = len(m["joint_states"])

        def rejected() -> int:
            return int(diagnostic_values(m["diagnostics"][-1])["rejected_commands"])

        # Paced in batches (DDS keeps the last N samples of a slow reader, it does not
        # queue without bound); each batch must be counted before the next is sent.
        batch = 5  # within the newest commands the node keeps (command_intake.NEWEST_COMMANDS)
        for start in range(0, len(commands), batch):
            for topic, msg, _ in commands[start : start + batch]:
                publishers[topic].publish(msg)
            done = min(start + batch, len(commands))
            assert listener.spin_until(lambda: rejected() >= done, 60.0, process), (
                done, diagnostic_values(m["diagnostics"][-1]))
        during = len(m["joint_states"]) - before
        n_after = len(m["joint_states"])
        listener.spin_for(1.0)
        still = len(m["joint_states"]) - n_after
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    values = diagnostic_values(m["diagnostics"][-1])
    assert int(values["rejected_commands"]) == len(commands)
    for kind, count in expected.items():
        assert int(values[f"rejected_{kind}"]) == count, kind
    assert int(values["commands_accepted"]) == 0
    assert during > 0 and still > 0, "the node stopped publishing joint_states"
    stamps = np.array([stamp_ns(msg) for msg in m["joint_states"]])
    assert np.all(np.diff(stamps) % 5_000_000 == 0) and np.all(np.diff(stamps) > 0)
    for msg in m["joint_states"]:
        assert np.all(np.isfinite(msg.position)) and np.all(np.isfinite(msg.velocity)) and np.all(np.isfinite(msg.effort))
    # one throttled warning per second at most, not one per message
    warnings = [line for line in err.splitlines() if "rejected command" in line]
    assert 1 <= len(warnings) < 100, len(warnings)
    assert not math.isnan(float(values["real_time_factor"]))
