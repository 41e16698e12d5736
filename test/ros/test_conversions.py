"""Message conversions against closed-form truths (no spinning, no DDS)."""

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 messages are not installed (run scripts/setup.sh)")
from sensor_msgs.msg import JointState  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from humanoid_sim.ros import conversions as cv  # noqa: E402


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    return cv.rotation_from_quaternion(q / np.linalg.norm(q))


def test_stamp_round_trip_is_exact():
    for ns in (0, 1, 999_999_999, 1_000_000_000, 123_456_789_012_345):
        stamp = cv.stamp_from_nanoseconds(ns)
        assert 0 <= stamp.nanosec < 1_000_000_000
        assert cv.nanoseconds_from_stamp(stamp) == ns
    assert cv.clock_message(2_500_000_000).clock.sec == 2
    assert cv.clock_message(2_500_000_000).clock.nanosec == 500_000_000


def test_quaternion_known_rotations():
    # 90 deg about z: (0, 0, sin 45, cos 45)
    Rz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(cv.quaternion_from_rotation(Rz), [0, 0, math.sqrt(0.5), math.sqrt(0.5)], atol=1e-15)
    # 180 deg about x (trace = -1, the branch where naive formulas fail)
    Rx = np.diag([1.0, -1.0, -1.0])
    np.testing.assert_allclose(np.abs(cv.quaternion_from_rotation(Rx)), [1, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(cv.quaternion_from_rotation(np.eye(3)), [0, 0, 0, 1])


def test_quaternion_round_trip(rng):
    for _ in range(200):
        R = random_rotation(rng)
        quat = cv.quaternion_from_rotation(R)
        assert abs(np.linalg.norm(quat) - 1.0) < 1e-14 and quat[3] >= 0.0
        np.testing.assert_allclose(cv.rotation_from_quaternion(quat), R, atol=1e-13)


def test_joint_state_round_trip_by_name(rng):
    names = ("a", "b", "c", "d")
    pos, vel, eff = rng.normal(size=(3, 4))
    msg = cv.joint_state_message(1_234_000_000, names, pos, vel, eff)
    assert msg.header.stamp.sec == 1 and msg.header.stamp.nanosec == 234_000_000
    assert list(msg.name) == list(names)
    # A receiver with another joint order gets the values by name.
    order = ("c", "a", "d", "b")
    p, v, e = cv.joint_arrays_from_joint_state(msg, order)
    perm = [2, 0, 3, 1]
    np.testing.assert_array_equal(p, pos[perm])
    np.testing.assert_array_equal(v, vel[perm])
    np.testing.assert_array_equal(e, eff[perm])


def test_joint_state_missing_field_and_joint_read_nan():
    msg = JointState(name=["b"], effort=[2.0])
    p, v, e = cv.joint_arrays_from_joint_state(msg, ("a", "b"))
    assert np.isnan(p).all() and np.isnan(v).all()
    assert np.isnan(e[0]) and e[1] == 2.0
    with pytest.raises(KeyError, match="valid joints: a, b"):
        cv.joint_arrays_from_joint_state(JointState(name=["zz"], effort=[1.0]), ("a", "b"))


def test_effort_array_message():
    msg = cv.effort_array_message(np.array([1.0, -2.0, 3.5]))
    assert list(msg.data) == [1.0, -2.0, 3.5]
    assert msg.layout.dim[0].size == 3


def test_transform_round_trip(rng):
    X = np.eye(4)
    X[:3, :3] = random_rotation(rng)
    X[:3, 3] = rng.normal(size=3)
    msg = cv.transform_message(5, "odom", "pelvis", X)
    assert (msg.header.frame_id, msg.child_frame_id) == ("odom", "pelvis")
    assert msg.header.stamp.nanosec == 5
    np.testing.assert_allclose(cv.matrix_from_transform(msg), X, atol=1e-14)


def test_wrench_point_polygon():
    w = cv.wrench_message(0, "l_sole", np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert (w.wrench.force.x, w.wrench.force.z, w.wrench.torque.x, w.wrench.torque.z) == (1.0, 3.0, 4.0, 6.0)
    assert w.header.frame_id == "l_sole"
    p = cv.point_message(0, "odom", np.array([0.1, -0.2, 0.0]))
    assert (p.point.x, p.point.y, p.point.z) == (0.1, -0.2, 0.0)
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    poly = cv.polygon_message(0, "odom", square, height=0.05)
    assert [(pt.x, pt.y, pt.z) for pt in poly.polygon.points] == [
        (0.0, 0.0, 0.05), (1.0, 0.0, 0.05), (1.0, 1.0, 0.05), (0.0, 1.0, 0.05)
    ]
    assert cv.polygon_message(0, "odom", np.zeros((0, 2))).polygon.points == []
    with pytest.raises(ValueError, match="shape"):
        cv.polygon_message(0, "odom", np.zeros((3, 4)))


def test_odometry_pose_in_odom_twist_in_child():
    quat = np.array([0.0, 0.0, math.sin(0.25), math.cos(0.25)])
    msg = cv.odometry_message(0, "odom", "pelvis", np.array([1.0, 2.0, 0.9]), quat, np.array([0.3, 0, 0]), np.array([0, 0, 0.1]))
    assert (msg.header.frame_id, msg.child_frame_id) == ("odom", "pelvis")
    assert msg.pose.pose.position.z == 0.9 and msg.pose.pose.orientation.w == quat[3]
    assert msg.twist.twist.linear.x == 0.3 and msg.twist.twist.angular.z == 0.1


def test_imu_at_rest_measures_gravity_reaction():
    g = np.array([0.0, 0.0, -9.81])
    level = cv.imu_message(0, "pelvis", np.array([0, 0, 0, 1.0]), np.zeros(3), np.zeros(3), g)
    a = level.linear_acceleration
    np.testing.assert_allclose([a.x, a.y, a.z], [0, 0, 9.81])
    # Pitched 90 deg nose down (about +y): gravity reaction appears along the body's -x.
    pitched = np.array([0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    msg = cv.imu_message(0, "pelvis", pitched, np.zeros(3), np.zeros(3), g)
    a = msg.linear_acceleration
    np.testing.assert_allclose([a.x, a.y, a.z], [-9.81, 0, 0], atol=1e-12)
    # Free fall: an accelerometer reads zero.
    falling = cv.imu_message(0, "pelvis", pitched, np.zeros(3), g, g)
    a = falling.linear_acceleration
    np.testing.assert_allclose([a.x, a.y, a.z], 0.0, atol=1e-12)


def test_markers():
    pts = [np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]), np.array([[0.0, 0.2, 0.0]])]
    forces = [(np.zeros(3), np.array([0.0, 0.0, 500.0]))]
    polygon = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    msg = cv.contact_markers(0, "odom", pts, forces, np.array([0.1, 0.1, 0.0]), polygon)
    by_type = {m.type: m for m in msg.markers if m.action == Marker.ADD}
    assert msg.markers[0].action == Marker.DELETEALL
    assert len(by_type[Marker.SPHERE_LIST].points) == 3
    arrow = by_type[Marker.ARROW]
    assert arrow.points[1].z == pytest.approx(1.0)  # 500 N at 500 N/m
    assert by_type[Marker.SPHERE].pose.position.x == 0.1
    strip = by_type[Marker.LINE_STRIP]
    assert len(strip.points) == 4 and strip.points[0] == strip.points[-1]
    assert all(m.header.frame_id == "odom" for m in msg.markers[1:])
    empty = cv.contact_markers(0, "odom", [], [], None, np.zeros((0, 3)))
    assert [m.action for m in empty.markers] == [Marker.DELETEALL]


def test_a_push_is_an_arrow_ending_at_its_point():
    msg = cv.contact_markers(0, "odom", [], [], None, np.zeros((0, 3)),
                             pushes=[(np.array([0.0, 0.0, 0.9]), np.array([200.0, 0.0, 0.0]))])
    arrows = [m for m in msg.markers if m.type == Marker.ARROW and m.action == Marker.ADD]
    assert len(arrows) == 1 and arrows[0].id == 200
    tail, tip = arrows[0].points
    assert (tip.x, tip.y, tip.z) == (0.0, 0.0, 0.9)  # the force pushes into the point
    assert tail.x == pytest.approx(-0.4) and tail.z == pytest.approx(0.9)  # 200 N at 500 N/m
    assert arrows[0].color.r > 0.5 and arrows[0].color.b > 0.5  # magenta, unlike the red contact forces


def test_diagnostics_levels_and_values():
    msg = cv.diagnostic_message(0, "sim", "robot", {"rtf": 0.987654321, "late": 3})
    assert msg.status[0].level == msg.status[0].OK
    assert cv.diagnostic_values(msg) == {"rtf": "0.987654", "late": "3"}
    warn = cv.diagnostic_message(0, "sim", "robot", {}, warnings=["ZMP outside"])
    assert warn.status[0].level == warn.status[0].WARN and warn.status[0].message == "ZMP outside"
    err = cv.diagnostic_message(0, "sim", "robot", {}, warnings=["w"], errors=["e"])
    assert err.status[0].level == err.status[0].ERROR


def test_batch_quaternions_match_single(rng):
    R = np.array([random_rotation(rng) for _ in range(300)]
                 + [np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0]), np.eye(3)])
    batch = cv.quaternions_from_rotations(R)
    single = np.array([cv.quaternion_from_rotation(r) for r in R])
    for b, s_ in zip(batch, single):
        # equal up to the sign ambiguity at w = 0
        assert np.allclose(b, s_, atol=1e-13) or np.allclose(b, -s_, atol=1e-13)
    for quat, r in zip(batch, R):
        np.testing.assert_allclose(cv.rotation_from_quaternion(quat), r, atol=1e-13)


def test_header_stamp_of_raw_messages():
    from rclpy.serialization import serialize_message

    from humanoid_sim.ros.conversions import header_stamp_nanoseconds, joint_state_message, odometry_message, wrench_message

    for ns in (0, 1, 1_234_567_891, 2**31 * 10**9 - 1):
        raw = bytes(serialize_message(joint_state_message(ns, ["a"], [0.0], [0.0], [0.0])))
        assert header_stamp_nanoseconds(raw) == ns
    raw = bytes(serialize_message(odometry_message(5_000_000_007, "odom", "base", np.zeros(3), np.array([0, 0, 0, 1.0]),
                                                   np.zeros(3), np.zeros(3))))
    assert header_stamp_nanoseconds(raw) == 5_000_000_007
    assert header_stamp_nanoseconds(bytes(serialize_message(wrench_message(42, "foot", np.zeros(6))))) == 42
    with pytest.raises(ValueError, match="too short"):
        header_stamp_nanoseconds(b"\x00\x01\x00\x00")


@pytest.mark.parametrize("frame_id", ["", "a", "ab", "abc", "odom", "base_link"])  # every padding of the name sequence
def test_joint_state_name_count_read_from_the_bytes(frame_id):
    from rclpy.serialization import serialize_message

    for n in (0, 1, 7, 1000):
        msg = JointState(name=[f"joint_{k}" for k in range(n)], effort=[1.0] * n)
        msg.header.frame_id = frame_id
        assert cv.joint_state_name_count(serialize_message(msg)) == n
    with pytest.raises(ValueError, match="too short"):
        cv.joint_state_name_count(b"\x00\x01\x00\x00")


def test_a_controller_of_one_robot_reads_its_joints_from_the_joint_states_of_several():
    """joint_states of a world of two robots: the second robot's joints are "partner/<joint>"."""
    msg = cv.joint_state_message(0, ["a", "b", "partner/a", "partner/b"], np.array([1.0, 2.0, 3.0, 4.0]),
                                 np.array([5.0, 6.0, 7.0, 8.0]), np.zeros(4))  # fmt: skip
    p, v, _ = cv.joint_arrays_from_joint_state(msg, ("b", "a"), ignore_unknown=True)
    np.testing.assert_array_equal(p, [2.0, 1.0])
    np.testing.assert_array_equal(v, [6.0, 5.0])
    p, _, _ = cv.joint_arrays_from_joint_state(msg, ("partner/a",), ignore_unknown=True)
    np.testing.assert_array_equal(p, [3.0])
    with pytest.raises(KeyError, match="unknown joint 'partner/a'"):
        cv.joint_arrays_from_joint_state(msg, ("a", "b"))
