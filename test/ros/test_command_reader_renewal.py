"""Renewing the node's command readers (after a flood left partly received samples in them):
commands keep coming through the old readers until the new ones are matched, then through the
new ones only; every command is taken once. One process, real DDS, an executor spun here."""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from humanoid_sim.ros.sim_node import SimNode  # noqa: E402


def spin_until(executor, done, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.02)
    return done()


def test_renewed_readers_take_over_once_matched_and_each_command_is_taken_once(ros):
    stamp = time.monotonic_ns()
    node = SimNode(f"renewal_{stamp}", namespace=f"/renewal_{stamp}",
                   parameter_overrides=[Parameter("loop_mode", value="fast"), Parameter("diagnostics_rate", value=0.0)])
    client = rclpy.create_node(f"renewal_client_{stamp}")
    publisher = client.create_publisher(Float64MultiArray, f"/renewal_{stamp}/effort_controller/commands", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(client)
    bad = Float64MultiArray(data=[0.0] * (node.model.nj + 1))  # wrong length: counted, changes nothing
    try:
        old = node._command_subscriptions
        assert spin_until(executor, lambda: old[1].get_publisher_count() == 1)

        def send_and_count(expected: int) -> None:
            publisher.publish(bad)
            assert spin_until(executor, lambda: node.rejections.total >= expected), "the command was not taken"
            spin_until(executor, lambda: node.rejections.total > expected, timeout=0.5)  # no second copy
            assert node.rejections.total == expected

        send_and_count(1)
        node._make_command_subscriptions()
        new = node._command_subscriptions
        assert node._retiring_subscriptions == old and new != old
        send_and_count(2)  # through the old reader (the new one may be matched already: not yet taken)
        assert spin_until(executor, lambda: new[1].get_publisher_count() == 1)
        assert node._retire_command_readers()
        assert node._retiring_subscriptions == [] and node._command_subscriptions == new
        assert old[1] not in node.subscriptions
        send_and_count(3)  # through the new reader only
        send_and_count(4)
    finally:
        executor.shutdown()
        client.destroy_node()
        node.destroy_node()


def test_new_readers_with_no_publisher_to_wait_for_take_over_at_once(ros):
    stamp = time.monotonic_ns()
    node = SimNode(f"renewal_lone_{stamp}", parameter_overrides=[Parameter("loop_mode", value="fast"),
                                                                Parameter("diagnostics_rate", value=0.0)])
    try:
        old = node._command_subscriptions
        node._make_command_subscriptions()
        # nobody publishes: both old and new are matched to 0 publishers, so they take over at once
        assert node._retire_command_readers()
        assert node._command_subscriptions != old and node._retiring_subscriptions == []
    finally:
        node.destroy_node()
