"""A real-time node under a (short) flood of malformed commands, over real DDS, the bundled
humanoid standing under a holding controller that answers every joint_states message: every
kind of bad command (wrong lengths, NaN, +-inf, +-1e308, unknown and duplicate names, an empty
effort field, thousands of values or names) is refused and counted by kind in /diagnostics,
joint_states keep coming with finite values, the controller's commands keep being accepted,
the robot keeps standing, and the node's memory does not keep the huge commands.

The full flood (10,000 commands as fast as a publisher sends them) and its rates and memory
figures are printed by bench/command_flood.py.
"""

from __future__ import annotations

import math
import os
from collections import Counter

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from ros_holding_controller import HoldingController  # noqa: E402
from ros_node_process import Listener, start_node, stop_node  # noqa: E402

from humanoid_sim import Simulator, load_robot  # noqa: E402
from humanoid_sim.ros.command_validation import REJECTION_KINDS  # noqa: E402
from humanoid_sim.ros.conversions import diagnostic_values  # noqa: E402

STARTUP_S = 300.0  # a start that compiles the kernels (after a change to them) takes ~2 min on 2 cores
# Elements of the large commands of the real-time flood: unfragmented datagrams (a command of
# megabytes may not reach a best-effort reader whole on a loaded machine: one fragment lost, the
# sample is lost). Commands of a million elements go to a lock-step (reliable) node below.
LARGE = 5_000
MILLION = 1_000_000
NAMED, ARRAY = "joint_commands", "effort_controller/commands"


def flood() -> tuple[list[tuple[str, object, str]], list[tuple[str, object, str]]]:
    """(topic, message, the kind the node must count) of 10 rounds of every small malformed
    command; and of a command of LARGE values and one of LARGE names."""
    names = list(load_robot().joint_names)
    nj = len(names)

    def last(value: float) -> list[float]:
        return [0.0] * (nj - 1) + [value]

    small = [
        (NAMED, JointState(name=names, effort=[0.0] * (nj - 1)), "wrong_length"),
        (NAMED, JointState(name=names, effort=last(math.nan)), "non_finite"),
        (NAMED, JointState(name=names, effort=last(math.inf)), "non_finite"),
        (NAMED, JointState(name=names, effort=last(1e308)), "out_of_range"),
        (NAMED, JointState(name=names, effort=last(-1e308)), "out_of_range"),
        (NAMED, JointState(name=["no_such_joint", *names[1:]], effort=[0.0] * nj), "unknown_joint"),
        (NAMED, JointState(name=[names[0], *names[:-1]], effort=[0.0] * nj), "duplicate_joint"),
        (NAMED, JointState(name=names, position=[0.0] * nj), "effort_missing"),
        (ARRAY, Float64MultiArray(data=[0.0] * (nj + 1)), "wrong_length"),
        (ARRAY, Float64MultiArray(data=last(-math.inf)), "non_finite"),
        (ARRAY, Float64MultiArray(data=last(-1e308)), "out_of_range"),
    ]
    huge = [
        (ARRAY, Float64MultiArray(data=[0.0] * LARGE), "wrong_length"),
        (NAMED, JointState(name=[f"j{k}" for k in range(LARGE)], effort=[0.0] * LARGE), "wrong_length"),
    ]
    return small * 10, huge


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) / 1024.0 for line in status if line.startswith("VmRSS:"))


def hold_standing(listener: Listener) -> tuple[float, list[float]]:
    """A holding controller on ``listener``'s node: every joint_states message is answered with a
    command on effort_controller/commands (model order). Returns the stand pose's base height [m]
    and the list the base heights of ground_truth/odom are appended to."""
    model = load_robot()
    q0 = Simulator(model).reset("stand")
    # legs stiffer than m g h, light joints soft: stable with the zero-order hold of commands at 500 Hz
    leg = np.array([any(part in name for part in ("hip", "knee", "ankle")) for name in model.joint_names])
    controller = HoldingController(model, q0, kp=np.where(leg, 1000.0, 100.0), kd=np.where(leg, 10.0, 1.0))
    command = listener.publisher(Float64MultiArray, ARRAY, depth=10)
    heights: list[float] = []

    def on_state(msg: JointState) -> None:
        tau = controller.torque(np.asarray(msg.position), np.asarray(msg.velocity))
        command.publish(Float64MultiArray(data=tau.tolist()))

    listener.node.create_subscription(JointState, listener.topic("joint_states"), on_state, 10)
    listener.node.create_subscription(Odometry, listener.topic("ground_truth/odom"),
                                      lambda msg: heights.append(msg.pose.pose.position.z), 10)
    return float(q0[2]), heights


def test_flood_of_malformed_commands_is_counted_by_kind_and_harmless(ros):
    ns = f"/hs_flood_{os.getpid()}"
    # half real time: on a loaded machine the controller's answers come late, and a PD loop
    # with a delay of several ticks (in simulated time) is no longer stable
    process = start_node(ns, {"loop_mode": "realtime", "real_time_factor": 0.5, "initial_pose": "stand",
                              "start_paused": True, "joint_states_rate": 500.0, "odometry_rate": 50.0, "diagnostics_rate": 50.0,
                              "tf_rate": 0.0, "markers_rate": 0.0})
    listener = Listener("flood_listener", ns)
    listener.subscribe(JointState, "joint_states", keep=False)
    listener.subscribe(DiagnosticArray, "diagnostics", keep=False)
    m, arrivals = listener.messages, listener.arrival
    stand_height, heights = hold_standing(listener)
    commands, huge = flood()
    sent = Counter(kind for _, _, kind in commands + huge)
    try:
        assert listener.spin_until(lambda: m["diagnostics"], STARTUP_S, process)  # started, paused
        publishers = {NAMED: listener.publisher(JointState, NAMED, depth=10),
                      ARRAY: listener.publisher(Float64MultiArray, ARRAY, depth=10)}
        assert listener.spin_until(lambda: all(p.get_subscription_count() for p in publishers.values()), 30.0, process)
        listener.spin_for(1.0)  # let the node's best-effort readers match these publishers
        assert listener.call(SetBool, "pause", SetBool.Request(data=False)).success
        assert listener.spin_until(lambda: m["joint_states"], 30.0, process)
        listener.spin_for(2.0)  # the controller holds the robot
        rss_before = rss_mb(process.pid)
        accepted_before = int(diagnostic_values(m["diagnostics"][-1])["commands_accepted"])
        states_before = len(arrivals["joint_states"])

        def counted() -> int:
            return int(diagnostic_values(m["diagnostics"][-1])["rejected_commands"])

        # In batches no larger than the newest commands the node keeps, each counted before the
        # next. The controller's commands share a reader with them: on a loaded machine one may
        # be pushed out before the node takes it (best effort); the kinds missing are sent again.
        def by_kind() -> Counter[str]:
            values = diagnostic_values(m["diagnostics"][-1])
            return Counter({kind: int(values[f"rejected_{kind}"]) for kind in REJECTION_KINDS})

        batch, expected = 5, Counter()
        for start in range(0, len(commands), batch):
            pending = commands[start : start + batch]
            expected.update(kind for _, _, kind in pending)
            done = sum(expected.values())
            for _attempt in range(5):
                for topic, msg, _ in pending:
                    publishers[topic].publish(msg)
                if listener.spin_until(lambda: counted() >= done, 10.0, process):
                    break
                missing, pending = expected - by_kind(), []
                for command in commands[start : start + batch]:
                    if missing[command[2]] > 0:
                        missing[command[2]] -= 1
                        pending.append(command)
            assert counted() == done, (done, diagnostic_values(m["diagnostics"][-1]))
        # The huge ones one by one: a best-effort reader may lose a sample of megabytes (a fragment
        # dropped is the whole sample dropped), which costs the node nothing; sent again then.
        for topic, msg, _ in huge:
            done += 1
            for _attempt in range(5):
                publishers[topic].publish(msg)
                if listener.spin_until(lambda: counted() >= done, 10.0, process):
                    break
            assert counted() == done, f"the huge command on {topic} was never counted"
        states_during = len(arrivals["joint_states"]) - states_before
        accepted_during = int(diagnostic_values(m["diagnostics"][-1])["commands_accepted"]) - accepted_before
        listener.spin_for(1.0)  # diagnostics after the last rejection: the node returns freed memory
        rss_after = rss_mb(process.pid)
        states_after = len(arrivals["joint_states"]) - states_before - states_during
        values = diagnostic_values(m["diagnostics"][-1])
        last_state = m["joint_states"][-1]
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    assert int(values["rejected_commands"]) == len(commands) + len(huge)
    for kind in REJECTION_KINDS:
        assert int(values[f"rejected_{kind}"]) == sent.get(kind, 0), kind
    assert states_during > 0 and states_after > 0, "the node stopped publishing joint_states"
    assert accepted_during > 0, "no command of the controller was accepted during the flood"
    assert heights and min(heights) > stand_height - 0.05, (stand_height, min(heights))  # stood throughout
    assert np.all(np.isfinite(last_state.position)) and np.all(np.isfinite(last_state.velocity))
    assert rss_after - rss_before < 50.0, (rss_before, rss_after)
    # the log says so in a few throttled lines, never echoing thousands of names
    rejection_lines = [line for line in err.splitlines() if "rejected command" in line]
    assert 1 <= len(rejection_lines) < 50 and max(len(line) for line in rejection_lines) < 2000


def test_commands_of_a_million_elements_are_refused_by_their_length(ros):
    """Lock-step (reliable, so every command arrives): a million values, then a million names,
    each counted as wrong_length without being converted; a valid command then still runs a tick."""
    ns = f"/hs_million_{os.getpid()}"
    process = start_node(ns, {"loop_mode": "lockstep", "diagnostics_rate": 50.0, "tf_rate": 0.0, "markers_rate": 0.0,
                              "rejection_log_period": 0.0})
    listener = Listener("million_listener", ns)
    listener.subscribe(JointState, "joint_states", keep=False)
    listener.subscribe(DiagnosticArray, "diagnostics", keep=False)
    m = listener.messages
    nj = load_robot().nj
    huge = [(ARRAY, Float64MultiArray(data=[0.0] * MILLION)),
            (NAMED, JointState(name=[f"j{k}" for k in range(MILLION)], effort=[0.0] * MILLION))]
    try:
        publishers = {NAMED: listener.publisher(JointState, NAMED, depth=10),
                      ARRAY: listener.publisher(Float64MultiArray, ARRAY, depth=10)}
        assert listener.spin_until(lambda: m["diagnostics"] and all(p.get_subscription_count() for p in publishers.values()),
                                   STARTUP_S, process)
        for count, (topic, msg) in enumerate(huge, start=1):
            publishers[topic].publish(msg)
            assert listener.spin_until(
                lambda: int(diagnostic_values(m["diagnostics"][-1])["rejected_wrong_length"]) == count, 60.0, process
            ), f"the command of a million elements on {topic} was not counted"
        publishers[ARRAY].publish(Float64MultiArray(data=[0.0] * nj))
        assert listener.spin_until(lambda: m["joint_states"] and m["joint_states"][-1].header.stamp.nanosec == 1_000_000,
                                   30.0, process), "a valid command after them did not run a tick"
        values = diagnostic_values(m["diagnostics"][-1])
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    assert values["rejected_commands"] == "2" and values["commands_accepted"] in ("0", "1")
    assert "1000000 values, expected" in err and "1000000 names: the robot has" in err
