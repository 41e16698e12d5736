"""The walking controller node and the simulation node, each in its own process, over DDS.

The simulator runs in lock-step mode (one physics tick per torque command), so what the
test sees does not depend on how busy the machine is. The controller answers every state
the simulator publishes; the test listens like any other node.
"""

import os
import subprocess
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from humanoid_sim.model import load_urdf  # noqa: E402
from package_under_test import REPO, python_command, subprocess_env  # noqa: E402

URDF = REPO / "urdf" / "humanoid.urdf"
GRAVITY = 9.81


def _start(module: str, *ros_args: str) -> subprocess.Popen:
    return subprocess.Popen(python_command("-m", module, "--ros-args", *ros_args), env=subprocess_env())


def _stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def test_controller_node_holds_the_humanoid_standing_over_topics():
    """Stand mode: the controller's torques keep the simulated humanoid up; the ground
    carries its weight (Σ f_z = m g) and the base does not sink."""
    model = load_urdf(str(URDF))
    weight = model.total_mass * GRAVITY
    ns = f"walk_nodes_{os.getpid()}"
    controller = _start(
        "humanoid_sim.ros.walking_controller_node", "-r", f"__ns:=/{ns}", "-p", "mode:=stand",
        "-p", f"urdf_path:={URDF}",
    )
    rclpy.init()
    node = rclpy.create_node("walk_nodes_listener", namespace=ns)
    commands: list[JointState] = []
    odometry: list[Odometry] = []
    force_z: dict[str, float] = {}
    node.create_subscription(JointState, "joint_commands", commands.append, 100)
    node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 100)
    for link in ("l_foot", "r_foot"):
        node.create_subscription(
            WrenchStamped, f"contact/{link}/wrench", lambda m, link=link: force_z.__setitem__(link, m.wrench.force.z), 10
        )
    simulator = None
    try:
        # The controller first (it warms up before subscribing), then the lock-step simulator.
        deadline = time.monotonic() + 120.0
        while node.count_subscribers("joint_states") < 1:
            rclpy.spin_once(node, timeout_sec=0.1)
            assert controller.poll() is None, "the controller process died at start"
            assert time.monotonic() < deadline, "the controller did not subscribe to joint_states"
        simulator = _start(
            "humanoid_sim.ros.sim_node", "-r", f"__ns:=/{ns}", "-p", "loop_mode:=lockstep",
            "-p", "odometry_rate:=1000.0", "-p", "contact_rate:=100.0", "-p", f"urdf_path:={URDF}",
        )
        deadline = time.monotonic() + 240.0
        while not odometry or _seconds(odometry[-1].header.stamp) < 0.5:
            rclpy.spin_once(node, timeout_sec=0.05)
            assert controller.poll() is None, "the controller process died"
            assert simulator.poll() is None, "the simulator process died"
            assert time.monotonic() < deadline, f"sim time reached only {_seconds(odometry[-1].header.stamp) if odometry else 0} s"
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        _stop(*(p for p in (controller, simulator) if p is not None))

    # The controller commands every joint by name, with finite torques.
    assert len(commands) > 100
    assert sorted(commands[-1].name) == sorted(model.joint_names)
    assert np.all(np.isfinite(commands[-1].effort))
    # Lock-step: the command stamps follow the simulated time.
    stamps = np.array([_seconds(c.header.stamp) for c in commands])
    assert np.all(np.diff(stamps) >= 0.0) and stamps[-1] >= 0.45
    # The ground carries the weight, shared by the feet, and the robot stands still.
    assert set(force_z) == {"l_foot", "r_foot"}
    assert sum(force_z.values()) == pytest.approx(weight, rel=0.01)
    assert min(force_z.values()) > 0.3 * weight
    heights = np.array([o.pose.pose.position.z for o in odometry])
    assert np.ptp(heights) < 2e-3
    speed = np.linalg.norm([odometry[-1].twist.twist.linear.x, odometry[-1].twist.twist.linear.y])
    assert speed < 0.01


def test_controller_node_rejects_bad_parameters_with_one_clear_message():
    process = subprocess.run(
        python_command("-m", "humanoid_sim.ros.walking_controller_node", "--ros-args", "-p", "mode:=run"),
        env=subprocess_env(), capture_output=True, text=True, timeout=120,
    )
    assert process.returncode == 2
    assert "cannot start" in process.stderr and "mode: 'run' is not one of walk, stand" in process.stderr
    assert "Traceback" not in process.stderr


def test_controller_node_walks_six_steps_over_topics():
    """Walk mode, no cmd_vel: the controller walks the simulated humanoid forward at its
    default speed. Judged by the physics: touch-downs counted from the feet's ground forces,
    the base's forward progress and height, and no link but the feet touching the ground."""
    from humanoid_sim.reporting import count_steps

    model = load_urdf(str(URDF))
    weight = model.total_mass * GRAVITY
    contact_links = tuple(dict.fromkeys(model.body_names[s.body] for s in model.collision_shapes))
    ns = f"walk_six_{os.getpid()}"
    controller = _start(
        "humanoid_sim.ros.walking_controller_node", "-r", f"__ns:=/{ns}", "-p", "mode:=walk",
        "-p", "walk_speed:=0.2", "-p", f"urdf_path:={URDF}",
    )
    rclpy.init()
    node = rclpy.create_node("walk_six_listener", namespace=ns)
    odometry: list[Odometry] = []
    forces: dict[str, list[float]] = {link: [] for link in contact_links}
    node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 100)
    for link in contact_links:
        node.create_subscription(
            WrenchStamped, f"contact/{link}/wrench", lambda m, link=link: forces[link].append(m.wrench.force.z), 100
        )
    simulator = None
    steps = 0
    try:
        deadline = time.monotonic() + 120.0
        while node.count_subscribers("joint_states") < 1:
            rclpy.spin_once(node, timeout_sec=0.1)
            assert controller.poll() is None, "the controller process died at start"
            assert time.monotonic() < deadline, "the controller did not subscribe to joint_states"
        simulator = _start(
            "humanoid_sim.ros.sim_node", "-r", f"__ns:=/{ns}", "-p", "loop_mode:=lockstep",
            "-p", "odometry_rate:=1000.0", "-p", "contact_rate:=100.0", "-p", "tf_rate:=0.0",
            "-p", f"urdf_path:={URDF}",
        )
        deadline = time.monotonic() + 900.0
        while steps < 6:
            rclpy.spin_once(node, timeout_sec=0.05)
            assert controller.poll() is None, "the controller process died"
            assert simulator.poll() is None, "the simulator process died"
            assert time.monotonic() < deadline, f"only {steps} steps before the time limit"
            if odometry and len(odometry) % 200 == 0:
                steps = sum(count_steps(np.array(forces[f]), 0.05 * weight, 0.01 * weight) for f in ("l_foot", "r_foot"))
                assert odometry[-1].pose.pose.position.z > 0.7, "the robot fell"
                assert _seconds(odometry[-1].header.stamp) < 15.0, f"only {steps} steps in 15 s of simulated time"
    finally:
        node.destroy_node()
        rclpy.shutdown()
        _stop(*(p for p in (controller, simulator) if p is not None))

    start, end = odometry[0].pose.pose.position, odometry[-1].pose.pose.position
    assert end.x - start.x > 0.3  # six steps forward at 0.2 m/s
    assert abs(end.y - start.y) < 0.15
    heights = np.array([o.pose.pose.position.z for o in odometry])
    assert heights.min() > 0.8 * heights[0]
    touched = [link for link in contact_links if link not in ("l_foot", "r_foot") and np.max(np.abs(forces[link]), initial=0.0) > 1.0]
    assert touched == [], f"links other than the feet touched the ground: {touched}"
