"""Over real DDS: a node in its own process publishes JointState and TFMessage; we hear both."""

import subprocess
import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from package_under_test import python_command, subprocess_env  # noqa: E402


def test_joint_state_and_tf_cross_process_boundary():
    publisher = subprocess.Popen(
        python_command("-m", "humanoid_sim.ros.smoke_publisher_node", "--rate", "50"),
        env=subprocess_env(),
    )
    rclpy.init()
    node = rclpy.create_node("smoke_listener")
    received: dict[str, object] = {}
    node.create_subscription(JointState, "joint_states", lambda m: received.setdefault("js", m), 10)
    node.create_subscription(TFMessage, "tf", lambda m: received.setdefault("tf", m), 10)
    try:
        deadline = time.monotonic() + 30.0
        while len(received) < 2 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
            assert publisher.poll() is None, "the publisher process died"
    finally:
        node.destroy_node()
        rclpy.shutdown()
        publisher.terminate()
        publisher.wait(timeout=10)
    assert set(received) == {"js", "tf"}, f"received only {sorted(received)}"
    assert received["js"].name == ["smoke_joint"]
    (transform,) = received["tf"].transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("world", "smoke")
    assert transform.transform.translation.z == 1.0
