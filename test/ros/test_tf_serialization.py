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
        # and byte for byte what rclpy serializes for the same message
        reference = TFMessage(transforms=[cv.transform_message(0, p, c, np.eye(4)) for p, c in pairs])
        for t, tr, q in zip(reference.transforms, translations, quats):
            t.header.stamp.sec, t.header.stamp.nanosec = sec, nanosec
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = tr.tolist()
            r = t.transform.rotation
            r.x, r.y, r.z, r.w = q.tolist()
        assert bytes(serialize_message(reference)) == data


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
