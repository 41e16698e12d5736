"""launch_testing test of launch/walk.launch.py with ``world:=config/worlds/box_push.yaml``:
the walking controller holds the humanoid up beside the world's 10 kg crate, which rests on
the ground (its weight on its own contact topic) and has its own tf frame under odom.

Runs where ROS 2's launch tooling is installed (``launch_test test/ros/test_walk_world_launch.py``,
or pytest with the launch_testing plugin and the package installed). Skipped where
launch_testing cannot be imported (the project venv has rclpy and messages but not the launch
tooling).
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
from tf2_msgs.msg import TFMessage  # noqa: E402

from humanoid_sim.model import load_urdf  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WALK_LAUNCH = REPO / "launch" / "walk.launch.py"
SIM_SECONDS = 0.3
CRATE_KG = 10.0


@pytest.mark.launch_test
def generate_test_description():
    walk = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(WALK_LAUNCH)),
        launch_arguments={
            "mode": "stand",
            "loop_mode": "lockstep",
            "state_rate": "1000.0",
            "rviz": "false",
            "use_sim_time": "false",
            "urdf": str(REPO / "urdf" / "humanoid.urdf"),
            "world": "config/worlds/box_push.yaml",
        }.items(),
    )
    return launch.LaunchDescription([walk, launch_testing.actions.ReadyToTest()])


class TestWalkWorldLaunch(unittest.TestCase):
    def test_the_humanoid_stands_beside_the_resting_crate(self):
        model = load_urdf(str(REPO / "urdf" / "humanoid.urdf"))
        rclpy.init()
        node = rclpy.create_node("walk_world_launch_test")
        odometry, force_z, crate = [], {}, []
        node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 100)
        node.create_subscription(
            TFMessage, "tf", lambda m: crate.extend(t for t in m.transforms if t.child_frame_id == "crate"), 100
        )
        for link in ("l_foot", "r_foot", "crate"):
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
        self.assertEqual(set(force_z), {"l_foot", "r_foot", "crate"})
        self.assertAlmostEqual((force_z["l_foot"] + force_z["r_foot"]) / (model.total_mass * 9.81), 1.0, delta=0.01)
        self.assertAlmostEqual(force_z["crate"] / (CRATE_KG * 9.81), 1.0, delta=0.01)
        self.assertTrue(crate, "no tf frame of the crate")
        self.assertEqual(crate[-1].header.frame_id, "odom")
        self.assertAlmostEqual(crate[-1].transform.translation.x, 0.6, delta=0.01)
        self.assertGreater(odometry[-1].pose.pose.position.z, 0.9 * odometry[0].pose.pose.position.z)


@launch_testing.post_shutdown_test()
class TestWalkWorldLaunchShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
