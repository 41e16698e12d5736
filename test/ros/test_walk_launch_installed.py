"""launch_testing test of the INSTALLED walk.launch.py, as a user runs it after ``colcon build``:
the launch file, URDF and configs come from the package's share directory (ament index), not
from this source tree; the robot starts on its stand pose and walks (distance, steps, no fall).

Runs where ROS 2's launch tooling is installed and humanoid_sim is installed in the ament
index (``colcon test``); skipped where launch_testing cannot be imported. The same check
without launch runs everywhere: test/foundation/test_installed_package.py.
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
import rclpy  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from std_msgs.msg import String  # noqa: E402

SHARE = Path(get_package_share_directory("humanoid_sim"))
SIM_SECONDS = 7.5  # walk command at once; start delay, first double support, then 0.9 s per step


@pytest.mark.launch_test
def generate_test_description():
    walk = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(SHARE / "launch" / "walk.launch.py")),
        launch_arguments={"mode": "walk", "loop_mode": "lockstep", "use_sim_time": "false"}.items(),
    )
    return launch.LaunchDescription([walk, launch_testing.actions.ReadyToTest()])


class TestInstalledWalkLaunch(unittest.TestCase):
    def test_the_installed_robot_stands_then_walks(self):
        rclpy.init()
        node = rclpy.create_node("installed_walk_launch_test")
        odometry, phases = [], []
        node.create_subscription(Odometry, "ground_truth/odom", odometry.append, 100)
        node.create_subscription(String, "walking_controller/phase", lambda m: phases.append(m.data), 100)
        try:
            deadline = time.monotonic() + 600.0  # a first start compiles the kernels
            while time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
                if odometry and odometry[-1].header.stamp.sec + 1e-9 * odometry[-1].header.stamp.nanosec >= SIM_SECONDS:
                    break
        finally:
            node.destroy_node()
            rclpy.shutdown()
        self.assertTrue(odometry, "no ground-truth odometry from the simulator")
        start, end = odometry[0].pose.pose.position, odometry[-1].pose.pose.position
        self.assertTrue(0.6 < start.z < 1.0, f"did not start on the stand pose: base z = {start.z:.3f} m")
        self.assertGreater(min(o.pose.pose.position.z for o in odometry), 0.6, "fell")
        self.assertGreater(end.x - start.x, 0.3, "did not walk 0.3 m")
        steps = sum(1 for a, b in zip(phases, phases[1:]) if a != "double" and b == "double")
        self.assertGreaterEqual(steps, 3, f"phases seen: {sorted(set(phases))}")
