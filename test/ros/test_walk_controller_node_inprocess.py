"""The walking controller node in this process (stand mode; no simulator): cmd_vel reaches
the controller's command, parameters are validated on change, a state pair is answered with
a torque command stamped like it."""

import os
import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from humanoid_sim.contact.environment import Environment  # noqa: E402
from humanoid_sim.ros.conversions import joint_state_message, odometry_message  # noqa: E402
from humanoid_sim.ros.walking_controller_node import WalkingControllerNode  # noqa: E402
from humanoid_sim.simulator.initial_pose import load_initial_poses, pose_configuration  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _controller_with_peer(name: str, overrides: list):
    """(controller node, a peer node in its namespace, an executor spinning both); torn down after."""
    rclpy.init()
    ns = f"/{name}_{os.getpid()}"
    node = WalkingControllerNode(
        namespace=ns,
        parameter_overrides=[Parameter("urdf_path", value=str(REPO / "urdf" / "humanoid.urdf"))] + overrides,
    )
    peer = rclpy.create_node(f"{name}_peer", namespace=ns)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(peer)
    yield node, peer, executor
    executor.shutdown()
    node.destroy_node()
    peer.destroy_node()
    rclpy.shutdown()


@pytest.fixture
def node_and_peer():
    yield from _controller_with_peer("walk_inproc", [
        Parameter("mode", value="stand"),
        Parameter("walk_speed", value=0.1),
        Parameter("contact_max_age", value=0.0025),
    ])


def _spin_until(executor, condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    return condition()


def _stand_configuration(model):
    """q (nq,) of the bundled humanoid's stand pose on the default ground."""
    return pose_configuration(model, load_initial_poses(None, model.name)["stand"], Environment())


def _state_publishers(peer):
    """(joint_states publisher, ground_truth/odom publisher) on the peer node."""
    joints = peer.create_publisher(JointState, "joint_states", 10)
    odometry = peer.create_publisher(Odometry, "ground_truth/odom", 10)
    return joints, odometry


def test_cmd_vel_sets_the_walking_command(node_and_peer):
    node, peer, executor = node_and_peer
    assert node.command.at(0.0) == (0.1, 0.0, 0.0)  # walk_speed without cmd_vel
    publisher = peer.create_publisher(Twist, "cmd_vel", 10)
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.angular.z = 0.15, 0.02, 0.3

    def received():
        publisher.publish(twist)
        return node.command.at(0.0) == (0.15, 0.02, 0.3)

    assert _spin_until(executor, received)


def test_parameters_are_validated_on_change(node_and_peer):
    node, _, _ = node_and_peer
    (result,) = node.set_parameters([Parameter("walk_speed", value=0.3)])
    assert result.successful and node.params.walk_speed == 0.3 and node.command.default_speed == 0.3
    (result,) = node.set_parameters([Parameter("walk_speed", value=5.0)])
    assert not result.successful and "walk_speed" in result.reason  # the descriptor range (or our check) names it
    (result,) = node.set_parameters([Parameter("mode", value="walk")])
    assert not result.successful and "read-only" in result.reason
    assert node.params.mode == "stand"


def test_a_state_is_answered_with_torques_stamped_like_it(node_and_peer):
    node, peer, executor = node_and_peer
    model = node.model
    q = _stand_configuration(model)
    commands: list[JointState] = []
    peer.create_subscription(JointState, "joint_commands", commands.append, 10)
    joints, odometry = _state_publishers(peer)
    stamp_ns = 1_234_000_000
    nj = model.nj

    def answered():
        joints.publish(joint_state_message(stamp_ns, model.joint_names, q[7:], np.zeros(nj), np.zeros(nj)))
        odometry.publish(odometry_message(stamp_ns, "odom", "pelvis", q[:3], q[3:7], np.zeros(3), np.zeros(3)))
        return bool(commands)

    assert _spin_until(executor, answered)
    command = commands[0]
    assert command.header.stamp.sec == 1 and command.header.stamp.nanosec == 234_000_000
    assert list(command.name) == list(model.joint_names)
    # At the held posture and at rest the torque is the static feed-forward (gravity on the legs).
    np.testing.assert_allclose(command.effort, np.clip(node.controller.tau_ff, -model.limits.effort,
                                                       model.limits.effort), atol=1e-9)
    assert np.max(np.abs(command.effort)) > 1.0


def test_contact_info_uses_only_fresh_foot_wrenches(node_and_peer):
    node, peer, executor = node_and_peer
    from geometry_msgs.msg import WrenchStamped

    from humanoid_sim.ros.conversions import wrench_message

    publishers = {link: peer.create_publisher(WrenchStamped, f"contact/{link}/wrench", 10) for link in ("l_foot", "r_foot")}
    ms = 1_000_000

    def heard():
        publishers["l_foot"].publish(wrench_message(100 * ms, "l_foot", np.array([0, 0, 300.0, 0, 0, 0])))
        publishers["r_foot"].publish(wrench_message(90 * ms, "r_foot", np.array([0, 0, 5.0, 0, 0, 0])))
        return len(node._foot_force_z) == 2

    assert _spin_until(executor, heard)
    # contact_max_age 2.5 ms: at t = 101 ms only the left wrench (1 ms old) counts.
    assert node._contact_info(101 * ms) == {"l_sole": True}
    assert node._contact_info(91 * ms) == {"r_sole": False}  # 5 N < 20 N threshold; the left one is from the future
    assert node._contact_info(200 * ms) is None


def test_states_in_another_joint_order_are_read_by_name(node_and_peer):
    """The raw fast path reads only the simulator's layout; any other JointState is deserialized."""
    node, peer, executor = node_and_peer
    model = node.model
    q = _stand_configuration(model)
    commands: list[JointState] = []
    peer.create_subscription(JointState, "joint_commands", commands.append, 10)
    joints, odometry = _state_publishers(peer)
    order = list(reversed(range(model.nj)))
    names = [model.joint_names[j] for j in order]
    stamp_ns = 2_000_000_000

    def answered():
        joints.publish(joint_state_message(stamp_ns, names, q[7:][order], np.zeros(model.nj), np.zeros(model.nj)))
        odometry.publish(odometry_message(stamp_ns, "odom", "pelvis", q[:3], q[3:7], np.zeros(3), np.zeros(3)))
        return bool(commands)

    assert _spin_until(executor, answered)
    np.testing.assert_allclose(node._joint_state[1], q[7:], atol=0.0)


@pytest.fixture
def walking_node_and_peer():
    yield from _controller_with_peer("walk_inproc_walk", [Parameter("mode", value="walk")])


def test_a_state_the_controller_cannot_start_from_is_answered_and_the_node_goes_on(walking_node_and_peer):
    node, peer, executor = walking_node_and_peer
    model = node.model
    q = _stand_configuration(model)
    buried = q.copy()
    buried[2] = -5.0  # the centre of mass 5 m under the ground: no walking pattern starts from there
    commands: list[JointState] = []
    peer.create_subscription(JointState, "joint_commands", commands.append, 10)
    joints, odometry = _state_publishers(peer)

    def answer_to(state, stamp_ns):
        def answered():
            joints.publish(joint_state_message(stamp_ns, model.joint_names, state[7:], np.zeros(model.nj), np.zeros(model.nj)))
            odometry.publish(odometry_message(stamp_ns, "odom", "pelvis", state[:3], state[3:7], np.zeros(3), np.zeros(3)))
            return any(c.header.stamp.sec * 10**9 + c.header.stamp.nanosec == stamp_ns for c in commands)
        return answered

    assert _spin_until(executor, answer_to(buried, 1_000_000_000))
    assert node.failures >= 1
    assert np.all(np.array(commands[-1].effort) == 0.0)  # nothing computed yet: the held torque is zero
    assert _spin_until(executor, answer_to(q, 1_100_000_000))  # a valid state later: control starts
    assert np.max(np.abs(commands[-1].effort)) > 1.0


def test_a_state_answered_while_rclpy_shuts_down_ends_quietly(node_and_peer, monkeypatch):
    """SIGINT while a state is being answered: the publish fails because the context is gone;
    the callback ends without a traceback. The same failure with rclpy running is raised."""
    node, _, _ = node_and_peer
    model = node.model
    q = _stand_configuration(model)

    def refused(_data):
        raise RuntimeError("Failed to publish: publisher's context is invalid")

    monkeypatch.setattr(node._torque_pub, "publish", refused)
    node._take_joint_state(1_000_000, q[7:].copy(), np.zeros(model.nj))
    with pytest.raises(RuntimeError, match="context is invalid"):
        node._take_odometry(1_000_000, q[:7].copy(), np.zeros(6))
    monkeypatch.setattr(node.context, "ok", lambda: False)
    node._take_odometry(2_000_000, q[:7].copy(), np.zeros(6))  # no exception
