"""A minimal node that proves the ROS 2 plumbing: publishes JointState and TFMessage.

Used by the DDS smoke test (a separate process publishing, the test subscribing) and as a
first check of a fresh install: ``ros2 run humanoid_sim smoke_publisher``.
"""

from __future__ import annotations

import argparse
import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage


class SmokePublisher(Node):
    """Publishes one joint named ``smoke_joint`` and one transform ``world`` -> ``smoke``."""

    def __init__(self, rate_hz: float) -> None:
        super().__init__("smoke_publisher")
        self._joint_states = self.create_publisher(JointState, "joint_states", 10)
        self._tf = self.create_publisher(TFMessage, "tf", 10)
        self._count = 0
        self.create_timer(1.0 / rate_hz, self._publish)

    def _publish(self) -> None:
        stamp = self.get_clock().now().to_msg()
        self._count += 1
        joint_state = JointState(name=["smoke_joint"], position=[0.001 * self._count])
        joint_state.header.stamp = stamp
        transform = TransformStamped(child_frame_id="smoke")
        transform.header.stamp = stamp
        transform.header.frame_id = "world"
        transform.transform.translation.z = 1.0
        self._joint_states.publish(joint_state)
        self._tf.publish(TFMessage(transforms=[transform]))


def main(argv: list[str] | None = None) -> None:
    args = rclpy.utilities.remove_ros_args(sys.argv if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=float, default=20.0, help="publish rate [Hz]")
    options = parser.parse_args(args[1:])
    rclpy.init(args=argv)
    node = SmokePublisher(options.rate)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
