"""launch_testing test of launch/walk.launch.py: the launch file starts the walking controller
and (once the controller is ready) the simulator; the controller's torques hold the humanoid
up, so the ground carries its weight.

Runs where ROS 2's launch tooling is installed (``launch_test test/ros/test_walk_launch.py``,
or pytest with the launch_testing plugin, the package installed so that ``ros2 run
humanoid_sim walking_controller`` / ``sim_node`` work). Skipped where launch_testing cannot be
imported (the project venv has rclpy and messages but not the launch tooling).
"""

import time
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not importable here (no ROS 2 launch tooling in this environment)"
)
pytest.importorskip("launch_ros", reason="launch_ros is not importable here (no ROS 2 launch tooling in this environment)")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from humanoid_sim.model import load_urdf  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WALK_LAUNCH = REPO / "launch" / "walk.launch.py"
SIM_SECONDS = 0.3


@pytest.mark.launch_test
def generate_test_description():
    walk = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(WALK_LAUNCH)),
        launch_arguments={
            "mode": "stand",
            "loop_mode": "lockstep",  # deterministic, independent of the machine's load
            "state_rate": "1000.0",  # every tick (physics_dt = 1 ms)
            "rviz": "false",
            "use_sim_time": "false",
            "urdf": str(REPO / "urdf" / "humanoid.urdf"),
        }.items(),
    )
    return launch.LaunchDescription([walk, launch_testing.actions.ReadyToTest()])


class TestWalkLaunch(unittest.TestCase):
    def test_controller_holds_the_simulated_humanoid(self):
        model = load_urdf(str(REPO / "urdf" / "humanoid.urdf"))
        rclpy.init()
        node = rclpy.create_node("walk_launch_test")
        commands, odometry, force_z = [], [], {}
        node.create_subscription(JointState, "joint_commands", commands.append, 100)
        node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 100)
        for link in ("l_foot", "r_foot"):
            node.create_subscription(
                WrenchStamped, f"contact/{link}/wrench",
                lambda m, link=link: force_z.__setitem__(link, m.wrench.force.z), 10,
            )
        try:
            deadline = time.monotonic() + 300.0
            while time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
                if odometry and odometry[-1].header.stamp.sec + 1e-9 * odometry[-1].header.stamp.nanosec >= SIM_SECONDS:
                    break
            for _ in range(20):
                rclpy.spin_once(node, timeout_sec=0.05)
        finally:
            node.destroy_node()
            rclpy.shutdown()
        self.assertTrue(odometry, "no ground-truth odometry from the simulator")
        stamp = odometry[-1].header.stamp
        self.assertGreaterEqual(stamp.sec + 1e-9 * stamp.nanosec, SIM_SECONDS)
        self.assertEqual(sorted(commands[-1].name), sorted(model.joint_names))
        self.assertEqual(set(force_z), {"l_foot", "r_foot"})
        weight = model.total_mass * 9.81
        self.assertAlmostEqual(sum(force_z.values()) / weight, 1.0, delta=0.01)
        self.assertGreater(odometry[-1].pose.pose.position.z, 0.9 * odometry[0].pose.pose.position.z)


@launch_testing.post_shutdown_test()
class TestWalkLaunchShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        # SIGINT from launch's shutdown: rclpy nodes return 0; -2 / -15 if a signal ended them first.
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
