"""launch_testing test of launch/sim.launch.py: the node comes up, publishes, exits cleanly.

Runs on a ROS 2 install (``launch_test test/ros/test_sim_launch.py`` or pytest with the
launch_testing plugin). Skipped, with its reason, where launch_testing cannot be imported
(these machines: launch, launch_ros and launch_testing are not on any registry they reach).
"""

import time
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not installed (no ROS 2 distribution on this machine)"
)
pytest.importorskip("launch_ros", reason="launch_ros is not installed (no ROS 2 distribution on this machine)")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[2] / "launch" / "sim.launch.py"


@pytest.mark.launch_test
def generate_test_description():
    sim = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
        launch_arguments={"rviz": "false", "use_sim_time": "false"}.items(),
    )
    return launch.LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


class TestSimulationRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node("sim_launch_test")

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_joint_states_and_tf_arrive(self):
        received = {}
        self.node.create_subscription(JointState, "/joint_states", lambda m: received.setdefault("js", m), 10)
        self.node.create_subscription(TFMessage, "/tf", lambda m: received.setdefault("tf", m), 10)
        deadline = time.monotonic() + 120.0
        while len(received) < 2 and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.1)
        self.assertEqual(set(received), {"js", "tf"})
        self.assertGreater(len(received["js"].name), 20)
        self.assertIn(("odom", "pelvis"), {(t.header.frame_id, t.child_frame_id) for t in received["tf"].transforms})

    def test_no_startup_error(self, proc_output):
        with self.assertRaises(AssertionError):
            proc_output.assertWaitFor("cannot start", timeout=5)


@launch_testing.post_shutdown_test()
class TestSimulationExit(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
