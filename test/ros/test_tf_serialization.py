"""The pre-serialized TFMessage equals rclpy's own serialization, value for value."""

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from humanoid_sim.ros import conversions as cv  # noqa: E402
from humanoid_sim.ros.tf_serialization import SerializedTf  # noqa: E402


def test_round_trip_and_bytes_match_rclpy(rng):
    # Names of different lengths exercise the CDR string padding.
    pairs = [("odom", "pelvis"), ("pelvis", "l_hip_yaw_link"), ("a", "b"), ("chest", "neck_pitch_link_x")]
    serializer = SerializedTf(pairs)
    for _ in range(3):
        translations = rng.normal(size=(4, 3))
        quats = rng.normal(size=(4, 4))
        quats /= np.linalg.norm(quats, axis=1, keepdims=True)
        sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
        data = serializer.fill(sec, nanosec, translations, quats)
        msg = deserialize_message(data, TFMessage)
        for (parent, child), t, tr, q in zip(pairs, msg.transforms, translations, quats):
            assert (t.header.frame_id, t.child_frame_id) == (parent, child)
            assert (t.header.stamp.sec, t.header.stamp.nanosec) == (sec, nanosec)
            v = t.transform
            assert [v.translation.x, v.translation.y, v.translation.z] == tr.tolist()
            assert [v.rotation.x, v.rotation.y, v.rotation.z, v.rotation.w] == q.tolist()
        # and what rclpy builds for the same message (compared as messages: CDR padding bytes
        # are left uninitialised by rclpy's serializer, so they may differ byte for byte)
        reference = TFMessage(transforms=[cv.transform_message(0, p, c, np.eye(4)) for p, c in pairs])
        for t, tr, q in zip(reference.transforms, translations, quats):
            t.header.stamp.sec, t.header.stamp.nanosec = sec, nanosec
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = tr.tolist()
            r = t.transform.rotation
            r.x, r.y, r.z, r.w = q.tolist()
        assert deserialize_message(bytes(serialize_message(reference)), TFMessage) == msg == reference


def test_joint_state_clock_wrench_point_match_rclpy(rng):
    """Each pre-serialized message deserializes to exactly the message the conversions build.

    (Compared as messages: rclpy leaves CDR padding bytes uninitialised, so bytes may differ there.)
    """
    from geometry_msgs.msg import PointStamped, WrenchStamped
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    from humanoid_sim.ros.tf_serialization import SerializedClock, SerializedJointState, SerializedPoint, SerializedWrench

    names = ["l_hip", "knee_x", "a", "ankle_roll_joint"]
    joints, clock, wrench, point = SerializedJointState(names), SerializedClock(), SerializedWrench("l_foot_x"), SerializedPoint("odom")
    for _ in range(3):
        sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
        position, velocity, effort = rng.normal(size=(3, 4))
        six, three = rng.normal(size=6), rng.normal(size=3)
        expected = cv.joint_state_message(sec * 10**9 + nanosec, names, position, velocity, effort)
        data = joints.fill(sec, nanosec, position, velocity, effort)
        assert deserialize_message(data, JointState) == expected
        msg = deserialize_message(data, JointState)
        assert list(msg.name) == names and list(msg.effort) == effort.tolist()
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (sec, nanosec)
        # and read back from rclpy's own bytes of the same message (a raw subscription)
        for got, want in zip(joints.read(bytes(serialize_message(expected))), (position, velocity, effort)):
            np.testing.assert_array_equal(got, want)
        with pytest.raises(ValueError, match="bytes"):
            joints.read(bytes(serialize_message(cv.joint_state_message(0, names[:3], position[:3], velocity[:3], effort[:3]))))
        assert deserialize_message(clock.fill(sec, nanosec), Clock) == cv.clock_message(sec * 10**9 + nanosec)
        assert deserialize_message(clock.fill(sec, nanosec), Clock).clock.nanosec == nanosec
        expected_wrench = cv.wrench_message(sec * 10**9 + nanosec, "l_foot_x", six)
        assert deserialize_message(wrench.fill(sec, nanosec, six), WrenchStamped) == expected_wrench
        assert deserialize_message(wrench.fill(sec, nanosec, six), WrenchStamped).wrench.torque.z == six[5]
        expected_point = cv.point_message(sec * 10**9 + nanosec, "odom", three)
        assert deserialize_message(point.fill(sec, nanosec, three), PointStamped) == expected_point
        assert deserialize_message(point.fill(sec, nanosec, three), PointStamped).point.y == three[1]


def test_odometry_layout_round_trip_and_foreign_messages_refused(rng):
    from nav_msgs.msg import Odometry

    from humanoid_sim.ros.tf_serialization import SerializedOdometry

    odometry = SerializedOdometry("odom", "pelvis")
    for _ in range(3):
        q_base, v_base = rng.normal(size=7), rng.normal(size=6)
        ns = int(rng.integers(0, 2**31)) * 10**9 + int(rng.integers(0, 10**9))
        expected = cv.odometry_message(ns, "odom", "pelvis", q_base[:3], q_base[3:], v_base[:3], v_base[3:])
        sec, nanosec = divmod(ns, 10**9)
        assert deserialize_message(odometry.fill(sec, nanosec, q_base, v_base), Odometry) == expected
        stamp, q_read, v_read = odometry.read(bytes(serialize_message(expected)))
        assert stamp == ns and q_read.tolist() == q_base.tolist() and v_read.tolist() == v_base.tolist()
    # same length, other child frame; a covariance set: not this layout
    other = cv.odometry_message(0, "odom", "pelviz", q_base[:3], q_base[3:], v_base[:3], v_base[3:])
    assert odometry.read(bytes(serialize_message(other))) is None
    with_covariance = cv.odometry_message(0, "odom", "pelvis", q_base[:3], q_base[3:], v_base[:3], v_base[3:])
    with_covariance.pose.covariance[0] = 1.0
    assert odometry.read(bytes(serialize_message(with_covariance))) is None  # the caller deserializes it
    assert odometry.read(b"\x00\x01\x00\x00") is None


def test_effort_command_layout_reads_only_its_own_names_and_fields(rng):
    from humanoid_sim.ros.tf_serialization import SerializedEffortCommand

    names = ["l_hip", "knee_x", "a", "ankle_roll_joint"]
    command = SerializedEffortCommand(names)
    effort = rng.normal(size=4)
    got = command.read(bytes(serialize_message(cv.joint_state_message(-1_500_000_000, names, [], [], effort))))
    assert got is not None and got[0] == -1_500_000_000 and got[1].tolist() == effort.tolist()
    stamp, read_back = command.read(command.fill(7, 9, effort))
    assert stamp == 7 * 10**9 + 9 and read_back.tolist() == effort.tolist()
    refused = [
        cv.joint_state_message(0, names[::-1], [], [], effort),                # other order
        cv.joint_state_message(0, ["l_hip", "knee_y", "a", "ankle_roll_joint"], [], [], effort),  # other name
        cv.joint_state_message(0, names, effort, [], []),                      # position, not effort
        cv.joint_state_message(0, names, [], [], effort[:3]),                  # short
        cv.joint_state_message(0, names, [], [], np.append(effort, 1.0)),      # long
    ]
    framed = cv.joint_state_message(0, names, [], [], effort)
    framed.header.frame_id = "x"
    for msg in refused + [framed]:
        assert command.read(bytes(serialize_message(msg))) is None
