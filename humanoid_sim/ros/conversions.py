"""Plain conversions between library arrays and ROS 2 messages (no node, no spinning).

Every function takes numpy arrays in the library's conventions (docs/conventions.md:
SI units, quaternions (x, y, z, w), spatial vectors linear first, ``X_a_b`` the 4x4 pose
of frame ``b`` in frame ``a``) and returns a filled message, or the reverse. Frames follow
REP 103 (x forward, y left, z up) and REP 105 (``odom`` is the world frame of the
simulation; the floating base is published as ``odom`` -> base link).

Time stamps come from integer nanoseconds of simulation time, so stamps are exact and
never drift from the tick count.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import (
    Point,
    Point32,
    PointStamped,
    PolygonStamped,
    TransformStamped,
    Vector3,
    WrenchStamped,
)
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import ColorRGBA, Float64MultiArray, MultiArrayDimension
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_sim.dynamics.spatial import rotation_to_quaternion as quaternion_from_rotation  # noqa: F401 (public here)

NANOSECONDS_PER_SECOND = 1_000_000_000


# ---------------------------------------------------------------- time


def stamp_from_nanoseconds(nanoseconds: int) -> Time:
    """builtin_interfaces/Time for a non-negative time in integer nanoseconds."""
    sec, nanosec = divmod(int(nanoseconds), NANOSECONDS_PER_SECOND)
    return Time(sec=sec, nanosec=nanosec)


def nanoseconds_from_stamp(stamp: Time) -> int:
    """Integer nanoseconds of a builtin_interfaces/Time."""
    return int(stamp.sec) * NANOSECONDS_PER_SECOND + int(stamp.nanosec)


def header_stamp_nanoseconds(data: bytes) -> int:
    """Header stamp [ns] of a serialized (CDR, received raw) message whose first field is a
    std_msgs/Header (JointState, Odometry, any *Stamped): sec (int32) and nanosec (uint32)
    right after the 4-byte encapsulation header. ValueError for fewer than 12 bytes."""
    if len(data) < 12:
        raise ValueError(f"{len(data)} bytes: too short for a message with a header")
    little = data[1] == 1  # encapsulation kind: 0x0001 CDR little endian, 0x0000 big endian
    sec, nanosec = struct.unpack("<iI" if little else ">iI", data[4:12])
    return sec * NANOSECONDS_PER_SECOND + nanosec


def joint_state_name_count(data: bytes) -> int:
    """Length of the ``name`` sequence of a serialized (CDR) sensor_msgs/JointState, read
    without deserializing the message (a command naming a million joints is refused from
    this number alone). ValueError when the bytes end before it."""
    if len(data) < 16:
        raise ValueError(f"{len(data)} bytes: too short for a JointState")
    order = "<" if data[1] == 1 else ">"
    (frame_id_length,) = struct.unpack_from(order + "I", data, 12)
    offset = 16 + frame_id_length
    offset += -(offset - 4) % 4  # CDR aligns the sequence length to 4 bytes from the payload start
    if offset + 4 > len(data):
        raise ValueError(f"{len(data)} bytes: the JointState ends inside its header")
    return struct.unpack_from(order + "I", data, offset)[0]


def clock_message(nanoseconds: int) -> Clock:
    """rosgraph_msgs/Clock for /clock (consumed by nodes with use_sim_time:=true)."""
    return Clock(clock=stamp_from_nanoseconds(nanoseconds))


# ---------------------------------------------------------------- rotations


def quaternions_from_rotations(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (x, y, z, w), w >= 0, of rotation matrices R, shape (n, 3, 3) -> (n, 4).

    The batch form of ``quaternion_from_rotation`` (same branches, chosen per matrix), for
    publishing a whole tf tree without a Python loop over links.
    """
    R = np.asarray(R, dtype=float).reshape(-1, 3, 3)
    m00, m11, m22 = R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]
    # 4 candidates, |4 q_i|^2 each: w from the trace, x / y / z from the diagonal.
    candidates = np.stack([1.0 + m00 - m11 - m22, 1.0 - m00 + m11 - m22, 1.0 - m00 - m11 + m22, 1.0 + m00 + m11 + m22], axis=1)
    best = np.argmax(candidates, axis=1)
    s = 2.0 * np.sqrt(np.maximum(candidates[np.arange(len(R)), best], 1e-300))
    d21, d02, d10 = R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]
    s01, s02, s12 = R[:, 0, 1] + R[:, 1, 0], R[:, 0, 2] + R[:, 2, 0], R[:, 1, 2] + R[:, 2, 1]
    quat = np.empty((len(R), 4))
    rows = [
        np.stack([0.25 * s, s01 / s, s02 / s, d21 / s], axis=1),  # x largest
        np.stack([s01 / s, 0.25 * s, s12 / s, d02 / s], axis=1),  # y largest
        np.stack([s02 / s, s12 / s, 0.25 * s, d10 / s], axis=1),  # z largest
        np.stack([d21 / s, d02 / s, d10 / s, 0.25 * s], axis=1),  # w largest
    ]
    for branch in range(4):
        mask = best == branch
        quat[mask] = rows[branch][mask]
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[quat[:, 3] < 0.0] *= -1.0
    return quat


def rotation_from_quaternion(quat: np.ndarray) -> np.ndarray:
    """Rotation matrix, shape (3, 3), of a quaternion (x, y, z, w) (normalised first)."""
    x, y, z, w = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


# ---------------------------------------------------------------- joint states


def joint_state_message(
    nanoseconds: int,
    names: Sequence[str],
    position: np.ndarray,
    velocity: np.ndarray,
    effort: np.ndarray,
) -> JointState:
    """sensor_msgs/JointState for /joint_states.

    names: joint names, length nj; position [rad or m], velocity [rad/s or m/s],
    effort: torque actually applied after clamping [N m or N], each shape (nj,).
    """
    msg = JointState(
        name=list(names),
        position=np.asarray(position, dtype=float).tolist(),
        velocity=np.asarray(velocity, dtype=float).tolist(),
        effort=np.asarray(effort, dtype=float).tolist(),
    )
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    return msg


def joint_arrays_from_joint_state(
    msg: JointState, joint_names: Sequence[str], ignore_unknown: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position, velocity, effort), each shape (len(joint_names),), reordered by name.

    Fields the message leaves empty, and joints it does not name, read as NaN.
    Raises KeyError for a name not in ``joint_names`` (listing the valid ones), unless
    ``ignore_unknown``: then such names are skipped (the joint states of a world of several
    robots name every robot's joints; a controller of one robot reads its own).
    """
    index = {name: k for k, name in enumerate(joint_names)}
    out = np.full((3, len(joint_names)), np.nan)
    for row, values in enumerate((msg.position, msg.velocity, msg.effort)):
        if len(values) == 0:
            continue
        if len(values) != len(msg.name):
            raise ValueError(f"JointState has {len(msg.name)} names but {len(values)} values in a field")
        for name, value in zip(msg.name, values):
            if name not in index:
                if ignore_unknown:
                    continue
                raise KeyError(f"unknown joint {name!r}; valid joints: {', '.join(joint_names)}")
            out[row, index[name]] = value
    return out[0], out[1], out[2]


def effort_array_message(effort: np.ndarray) -> Float64MultiArray:
    """std_msgs/Float64MultiArray as ros2_control's JointGroupEffortController takes it.

    effort: torques [N m or N] in ``joint_order``, shape (n,). The layout names one
    dimension labelled ``joints`` (informational; the controller reads ``data`` only).
    """
    data = np.asarray(effort, dtype=float)
    msg = Float64MultiArray(data=data.tolist())
    msg.layout.dim = [MultiArrayDimension(label="joints", size=len(data), stride=len(data))]
    return msg


# ---------------------------------------------------------------- transforms


def transform_message(nanoseconds: int, parent: str, child: str, X_parent_child: np.ndarray) -> TransformStamped:
    """geometry_msgs/TransformStamped of frame ``child`` in frame ``parent`` (shape (4, 4))."""
    msg = TransformStamped(child_frame_id=child)
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = parent
    t = msg.transform.translation
    t.x, t.y, t.z = (float(c) for c in X_parent_child[:3, 3])
    r = msg.transform.rotation
    r.x, r.y, r.z, r.w = (float(c) for c in quaternion_from_rotation(X_parent_child[:3, :3]))
    return msg


def matrix_from_transform(msg: TransformStamped) -> np.ndarray:
    """X_parent_child (4, 4) of a TransformStamped (the reverse of ``transform_message``)."""
    X = np.eye(4)
    r = msg.transform.rotation
    X[:3, :3] = rotation_from_quaternion(np.array([r.x, r.y, r.z, r.w]))
    t = msg.transform.translation
    X[:3, 3] = (t.x, t.y, t.z)
    return X


# ---------------------------------------------------------------- contact and balance


def wrench_message(nanoseconds: int, frame: str, wrench: np.ndarray) -> WrenchStamped:
    """geometry_msgs/WrenchStamped; wrench = (f [N], n [N m]) in ``frame``, shape (6,)."""
    msg = WrenchStamped()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    f, n = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, n.x, n.y, n.z = (float(c) for c in wrench)
    return msg


def point_message(nanoseconds: int, frame: str, point: np.ndarray) -> PointStamped:
    """geometry_msgs/PointStamped of a point [m], shape (3,), in ``frame``."""
    msg = PointStamped()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    msg.point.x, msg.point.y, msg.point.z = (float(c) for c in point)
    return msg


def polygon_message(nanoseconds: int, frame: str, vertices: np.ndarray, height: float = 0.0) -> PolygonStamped:
    """geometry_msgs/PolygonStamped of a polygon in ``frame``.

    vertices: shape (k, 2) (then z = ``height`` [m]) or (k, 3) [m], in order
    (counter-clockwise for the support polygon). k = 0 gives an empty polygon.
    """
    vertices = np.asarray(vertices, dtype=float)
    if vertices.ndim != 2 or vertices.shape[1] not in (2, 3):
        vertices = vertices.reshape(-1, 2) if vertices.size == 0 else vertices
        if vertices.ndim != 2 or vertices.shape[1] not in (2, 3):
            raise ValueError(f"polygon vertices must have shape (k, 2) or (k, 3), got {vertices.shape}")
    msg = PolygonStamped()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    z = np.full(len(vertices), float(height)) if vertices.shape[1] == 2 else vertices[:, 2]
    msg.polygon.points = [Point32(x=float(v[0]), y=float(v[1]), z=float(h)) for v, h in zip(vertices, z)]
    return msg


# ---------------------------------------------------------------- base state


def odometry_message(
    nanoseconds: int,
    odom_frame: str,
    base_frame: str,
    p_odom_base: np.ndarray,
    quat_odom_base: np.ndarray,
    v_base: np.ndarray,
    omega_base: np.ndarray,
) -> Odometry:
    """nav_msgs/Odometry (ground truth): pose in ``odom_frame``, twist in ``base_frame``.

    p_odom_base [m] (3,), quat_odom_base (x, y, z, w) (4,): the base pose (q[0:7]).
    v_base [m/s], omega_base [rad/s], each (3,): the base twist in the base frame (v[0:6]),
    which is what REP 105 / nav_msgs asks for the child frame. Covariances are zero
    (ground truth).
    """
    msg = Odometry(child_frame_id=base_frame)
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = odom_frame
    pose = msg.pose.pose
    pose.position.x, pose.position.y, pose.position.z = (float(c) for c in p_odom_base)
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = (
        float(c) for c in quat_odom_base
    )
    twist = msg.twist.twist
    twist.linear.x, twist.linear.y, twist.linear.z = (float(c) for c in v_base)
    twist.angular.x, twist.angular.y, twist.angular.z = (float(c) for c in omega_base)
    return msg


def imu_message(
    nanoseconds: int,
    frame: str,
    quat_world_imu: np.ndarray,
    omega_imu: np.ndarray,
    acceleration_world: np.ndarray,
    gravity_world: np.ndarray,
) -> Imu:
    """sensor_msgs/Imu of an ideal IMU at the origin of ``frame``.

    quat_world_imu: orientation (x, y, z, w) of the IMU frame in the world, (4,).
    omega_imu: angular velocity in the IMU frame [rad/s], (3,).
    acceleration_world: acceleration of the IMU origin in world axes [m/s^2], (3,).
    gravity_world: gravity [m/s^2], (3,), e.g. (0, 0, -9.81).
    The reported linear acceleration is the specific force R^T (a - g) in the IMU frame,
    as an accelerometer measures it: (0, 0, +9.81) for an IMU at rest, level.
    Covariances are zero (ideal sensor).
    """
    R_world_imu = rotation_from_quaternion(quat_world_imu)
    specific_force = R_world_imu.T @ (np.asarray(acceleration_world, float) - np.asarray(gravity_world, float))
    msg = Imu()
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    msg.header.frame_id = frame
    o = msg.orientation
    o.x, o.y, o.z, o.w = (float(c) for c in quat_world_imu)
    msg.angular_velocity = Vector3(x=float(omega_imu[0]), y=float(omega_imu[1]), z=float(omega_imu[2]))
    msg.linear_acceleration = Vector3(
        x=float(specific_force[0]), y=float(specific_force[1]), z=float(specific_force[2])
    )
    return msg


# ---------------------------------------------------------------- markers


_GREEN = ColorRGBA(r=0.1, g=0.8, b=0.2, a=1.0)
_RED = ColorRGBA(r=0.9, g=0.1, b=0.1, a=1.0)
_BLUE = ColorRGBA(r=0.1, g=0.3, b=0.9, a=0.8)
_MAGENTA = ColorRGBA(r=0.9, g=0.1, b=0.9, a=1.0)
_YELLOW = ColorRGBA(r=0.95, g=0.8, b=0.1, a=1.0)


def contact_markers(
    nanoseconds: int,
    frame: str,
    contact_points: Sequence[np.ndarray],
    forces: Sequence[tuple[np.ndarray, np.ndarray]],
    zmp: np.ndarray | None,
    polygon: np.ndarray,
    newton_per_metre: float = 500.0,
    namespace: str = "humanoid_sim",
    pushes: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> MarkerArray:
    """visualization_msgs/MarkerArray for RViz, all in ``frame`` (the world / odom).

    contact_points: per contact, its points [m], shape (m, 3) each (one SPHERE_LIST).
    forces: per contact, (application point (3,) [m], force (3,) [N]); one ARROW each,
        length = |f| / newton_per_metre [m].
    zmp: ZMP [m], shape (3,), or None when there is no ground reaction.
    polygon: support polygon vertices [m], shape (k, 3), counter-clockwise (LINE_STRIP, closed).
    pushes: per push acting, (point of application (3,) [m], force (3,) [N]); one magenta ARROW
        each, ending at the point (the force pushes into it), same scale as the contact forces.
    Markers have fixed ids per role, and a leading DELETEALL so vanished contacts vanish.
    """
    stamp = stamp_from_nanoseconds(nanoseconds)
    markers: list[Marker] = [Marker(action=Marker.DELETEALL, ns=namespace)]

    def new(marker_id: int, kind: int, color: ColorRGBA) -> Marker:
        marker = Marker(ns=namespace, id=marker_id, type=kind, action=Marker.ADD, color=color)
        marker.header.stamp = stamp
        marker.header.frame_id = frame
        marker.pose.orientation.w = 1.0
        return marker

    points = [np.asarray(p, float).reshape(-1, 3) for p in contact_points]
    if points and sum(len(p) for p in points):
        marker = new(0, Marker.SPHERE_LIST, _GREEN)
        marker.scale = Vector3(x=0.02, y=0.02, z=0.02)
        marker.points = [Point(x=float(x), y=float(y), z=float(z)) for p in points for x, y, z in p]
        markers.append(marker)
    for k, (origin, force) in enumerate(forces):
        origin, force = np.asarray(origin, float), np.asarray(force, float)
        marker = new(100 + k, Marker.ARROW, _RED)
        marker.scale = Vector3(x=0.01, y=0.02, z=0.03)  # shaft diameter, head diameter, head length
        tip = origin + force / newton_per_metre
        marker.points = [Point(x=float(a), y=float(b), z=float(c)) for a, b, c in (origin, tip)]
        markers.append(marker)
    for k, (point, force) in enumerate(pushes):
        point, force = np.asarray(point, float), np.asarray(force, float)
        marker = new(200 + k, Marker.ARROW, _MAGENTA)
        marker.scale = Vector3(x=0.015, y=0.03, z=0.04)
        tail = point - force / newton_per_metre
        marker.points = [Point(x=float(a), y=float(b), z=float(c)) for a, b, c in (tail, point)]
        markers.append(marker)
    if zmp is not None:
        marker = new(1, Marker.SPHERE, _YELLOW)
        marker.scale = Vector3(x=0.04, y=0.04, z=0.04)
        marker.pose.position = Point(x=float(zmp[0]), y=float(zmp[1]), z=float(zmp[2]))
        markers.append(marker)
    polygon = np.asarray(polygon, float).reshape(-1, 3)
    if len(polygon) >= 2:
        marker = new(2, Marker.LINE_STRIP, _BLUE)
        marker.scale.x = 0.005
        closed = np.vstack([polygon, polygon[:1]])
        marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in closed]
        markers.append(marker)
    return MarkerArray(markers=markers)


# ---------------------------------------------------------------- diagnostics


def diagnostic_message(
    nanoseconds: int,
    name: str,
    hardware_id: str,
    values: dict[str, object],
    warnings: Sequence[str] = (),
    errors: Sequence[str] = (),
) -> DiagnosticArray:
    """diagnostic_msgs/DiagnosticArray with one status.

    values: key -> value, each written with ``str`` (floats with 6 significant digits).
    Level: ERROR when ``errors`` is non-empty, else WARN when ``warnings`` is, else OK;
    the message joins them ("OK" when none).
    """

    def text(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.6g}"
        return str(value)

    level = DiagnosticStatus.ERROR if errors else DiagnosticStatus.WARN if warnings else DiagnosticStatus.OK
    status = DiagnosticStatus(
        level=level,
        name=name,
        hardware_id=hardware_id,
        message="; ".join([*errors, *warnings]) or "OK",
        values=[KeyValue(key=key, value=text(value)) for key, value in values.items()],
    )
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp_from_nanoseconds(nanoseconds)
    return msg


def diagnostic_values(msg: DiagnosticArray) -> dict[str, str]:
    """key -> value of the first status of a DiagnosticArray (for tests and tools)."""
    return {kv.key: kv.value for kv in msg.status[0].values} if msg.status else {}
