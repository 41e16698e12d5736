"""The node's publishers drop a message the middleware refuses, count it and say so; a message
of the wrong type still raises (humanoid_sim/ros/guarded_publisher.py)."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")

from rclpy._rclpy_pybind11 import RCLError  # noqa: E402
from std_msgs.msg import Int32, String  # noqa: E402

from humanoid_sim.ros.guarded_publisher import GuardedPublisher, guarded_publisher  # noqa: E402


class RefusingMiddleware:
    """Stands in for rclpy's publisher handle: every send fails as Fast DDS's does under load."""

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):  # everything but sending: the real handle's
        return getattr(self.real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def publish(self, msg):
        raise RCLError("Failed to publish: cannot publish data, at /project/src/rmw_publish.cpp:120")

    publish_raw = publish


class Recorder:
    def __init__(self):
        self.warnings: list[str] = []

    def warning(self, message, **kwargs):
        self.warnings.append(message)


def test_a_refused_message_is_dropped_counted_and_reported(ros):
    node = rclpy.create_node("guarded_publisher_test")
    try:
        publisher = guarded_publisher(node, String, "guarded", 10)
        assert isinstance(publisher, GuardedPublisher) and publisher.logger is not None  # the node's logger
        publisher.publish(String(data="goes out"))  # the real middleware takes it
        assert publisher.failures == 0
        publisher.logger = Recorder()
        publisher._Publisher__publisher = RefusingMiddleware(publisher._Publisher__publisher)
        publisher.publish(String(data="refused"))
        publisher.publish(b"\x00\x01\x00\x00")  # pre-serialized bytes too
        assert publisher.failures == 2
        assert "cannot publish data" in publisher.last_error
        assert all("/guarded" in w and "dropped" in w for w in publisher.logger.warnings)
        assert publisher.logger.warnings[-1].endswith("2 on this topic so far")
        with pytest.raises(TypeError):  # a bug, not the middleware: raised
            publisher.publish(Int32(data=1))
        publisher._Publisher__publisher = publisher._Publisher__publisher.real
    finally:
        node.destroy_node()
