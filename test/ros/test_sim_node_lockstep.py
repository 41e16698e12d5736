"""Lock-step mode over real DDS: the test is the controller, one tick per command.

A PD + contact-consistent gravity-compensation controller (ros_holding_controller) holds the
bundled humanoid in its stand pose: the published foot wrenches must sum to m g and the
published ZMP must lie in the published support polygon. Two runs with the same (seeded)
command perturbations must publish bit-identical joint states.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from geometry_msgs.msg import PointStamped, PolygonStamped, WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from ros_holding_controller import HoldingController  # noqa: E402
from ros_node_process import REPO, Listener, start_node, stop_node  # noqa: E402

from humanoid_sim.contact.environment import load_environment  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.ros.conversions import nanoseconds_from_stamp  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

MODEL = load_urdf((REPO / "urdf" / "humanoid.urdf").read_text())
STARTUP_S = 90.0
TICKS = 250
DT_NS = 1_000_000
FEET = ("l_foot", "r_foot")


def stand_configuration() -> np.ndarray:
    sim = Simulator(MODEL, SimulatorConfig(environment=load_environment(REPO / "config" / "environment.yaml")))
    return sim.reset("stand")


def run_lockstep(tag: str, noise_scale: float, seed: int = 7, ticks: int = TICKS) -> dict[str, list]:
    """Drive ``ticks`` lock-step ticks with the holding controller plus seeded torque noise [N m]."""
    ns = f"/hs_lockstep_{tag}_{os.getpid()}"
    process = start_node(ns, {"loop_mode": "lockstep", "initial_pose": "stand", "contact_rate": 1000.0,
                              "tf_rate": 0.0, "markers_rate": 0.0, "odometry_rate": 0.0})
    listener = Listener(f"lockstep_{tag}", ns)
    listener.subscribe(JointState, "joint_states", qos=1000)
    for foot in FEET:
        listener.subscribe(WrenchStamped, f"contact/{foot}/wrench", qos=1000)
    listener.subscribe(PointStamped, "zmp", qos=1000)
    listener.subscribe(PolygonStamped, "support_polygon", qos=1000)
    command = listener.publisher(JointState, "joint_commands", depth=10)
    m = listener.messages
    q0 = stand_configuration()
    controller = HoldingController(MODEL, q0)
    noise = np.random.default_rng(seed).normal(scale=noise_scale, size=(ticks, MODEL.nj))
    try:
        # Wait until both directions are matched, so the first command is not lost.
        assert listener.spin_until(
            lambda: command.get_subscription_count() > 0
            and listener.node.count_publishers(listener.topic("joint_states")) > 0
            and listener.node.count_publishers(listener.topic("support_polygon")) > 0,
            STARTUP_S, process,
        )
        # A lock-step node re-publishes its state until the first command: wait for it, as a
        # controller that subscribed late would, then answer it.
        assert listener.spin_until(lambda: m["joint_states"], 5.0, process), "the initial state was not re-published"
        assert nanoseconds_from_stamp(m["joint_states"][-1].header.stamp) == 0
        q_j, v_j = q0[7:].copy(), np.zeros(MODEL.nj)
        for k in range(ticks):
            tau = controller.torque(q_j, v_j) + noise[k]
            command.publish(JointState(name=list(MODEL.joint_names), effort=tau.tolist()))
            stamp = (k + 1) * DT_NS
            assert listener.spin_until(
                lambda: nanoseconds_from_stamp(m["joint_states"][-1].header.stamp) >= stamp, 60.0, process
            ), f"no reply to command {k}"
            state = m["joint_states"][-1]
            q_j, v_j = np.array(state.position), np.array(state.velocity)
        listener.spin_until(lambda: len(m["zmp"]) >= ticks and len(m["support_polygon"]) >= ticks, 10.0)
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    # the states that answered commands (the re-published initial state, stamp 0, left out)
    m["joint_states"] = [s for s in m["joint_states"] if nanoseconds_from_stamp(s.header.stamp) > 0]
    return dict(m)


def test_lockstep_standing(ros):
    run = run_lockstep("stand", noise_scale=0.0)
    states = run["joint_states"]
    assert len(states) == TICKS
    # One tick per command: stamps 1 ms apart, nothing skipped, nothing extra.
    stamps = [nanoseconds_from_stamp(s.header.stamp) for s in states]
    assert np.all(np.diff(stamps) == DT_NS)

    # Standing: at every tick the foot wrenches carry the weight and the ZMP is inside.
    weight = MODEL.total_mass * 9.81
    by_stamp = {foot: {nanoseconds_from_stamp(w.header.stamp): w.wrench for w in run[f"contact/{foot}/wrench"]} for foot in FEET}
    zmp = {nanoseconds_from_stamp(p.header.stamp): p.point for p in run["zmp"]}
    polygons = {nanoseconds_from_stamp(p.header.stamp): p.polygon.points for p in run["support_polygon"]}
    for stamp in stamps:
        fz = [by_stamp[foot][stamp].force.z for foot in FEET]
        assert min(fz) > 0.4 * weight, f"a foot is unloaded: {fz}"
        assert sum(fz) == pytest.approx(weight, rel=1e-3)
        polygon = np.array([(p.x, p.y) for p in polygons[stamp]])
        point = np.array([zmp[stamp].x, zmp[stamp].y])
        assert len(polygon) >= 3
        edges = np.roll(polygon, -1, axis=0) - polygon
        cross = edges[:, 0] * (point[1] - polygon[:, 1]) - edges[:, 1] * (point[0] - polygon[:, 0])
        assert np.all(cross > 0.0), "ZMP outside the support polygon"  # counter-clockwise polygon
    final = np.array(states[-1].position)
    assert np.abs(final - stand_configuration()[7:]).max() < 1e-3  # still in the stand pose


def test_lockstep_republishes_its_state_until_the_first_command(ros):
    # A client that subscribes after the node published its initial state still gets a state.
    ns = f"/hs_lockstep_late_{os.getpid()}"
    process = start_node(ns, {"loop_mode": "lockstep"})
    listener = Listener("lockstep_late", ns)
    m = listener.messages
    try:
        probe = listener.node.create_client(Trigger, listener.topic("reset"))
        assert probe.wait_for_service(timeout_sec=STARTUP_S)  # the node is up: its initial state went out
        listener.spin_for(1.0)
        listener.subscribe(JointState, "joint_states", qos=100)
        assert listener.spin_until(lambda: len(m["joint_states"]) >= 2, 5.0, process), "no state for a late subscriber"
        assert {nanoseconds_from_stamp(s.header.stamp) for s in m["joint_states"]} == {0}
        command = listener.publisher(JointState, "joint_commands", depth=10)
        assert listener.spin_until(lambda: command.get_subscription_count() > 0, 10.0)
        command.publish(JointState(name=list(MODEL.joint_names), effort=[0.0] * MODEL.nj))
        assert listener.spin_until(lambda: nanoseconds_from_stamp(m["joint_states"][-1].header.stamp) == DT_NS, 10.0)
        count = len(m["joint_states"])
        listener.spin_for(1.5)  # three re-publish periods: nothing more once commanded
        assert len(m["joint_states"]) == count
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err


def test_lockstep_is_deterministic(ros):
    # Torque noise makes the runs move; bits must still match, whatever DDS timing did.
    first = run_lockstep("det_a", noise_scale=3.0, ticks=150)
    second = run_lockstep("det_b", noise_scale=3.0, ticks=150)
    a = np.array([s.position for s in first["joint_states"]])
    b = np.array([s.position for s in second["joint_states"]])
    assert a.shape == (150, MODEL.nj)
    assert np.abs(a[-1] - a[0]).max() > 1e-4, "the noise should have moved the robot"
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        np.array([s.velocity for s in first["joint_states"]]), np.array([s.velocity for s in second["joint_states"]])
    )
    np.testing.assert_array_equal(
        np.array([s.effort for s in first["joint_states"]]), np.array([s.effort for s in second["joint_states"]])
    )
