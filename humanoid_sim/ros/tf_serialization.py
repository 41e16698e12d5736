"""Pre-serialized ROS 2 messages of a fixed layout, refilled in place (the node's hot path).

Filling ~30 TransformStamped messages field by field costs about a millisecond in rclpy
(every attribute assignment is a checked property), more than the physics budget of a
1 kHz loop allows at 200 Hz; JointState, Clock, WrenchStamped and PointStamped are cheaper
but are published at up to 1 kHz. Their layout never changes between publishes (frame names,
joint names, sequence lengths are fixed), so the node serializes each message once (CDR, little
endian, as rmw publishes it) and, per publish, writes only the stamps and the numbers into
the byte buffer with two numpy fancy assignments; rclpy publishes the bytes as they are
(``Publisher.publish`` accepts serialized messages).

The buffer layout is taken from rclpy's own serialization of a template message holding
marker values, so it is exactly what rmw would send (test/ros/test_tf_serialization.py
checks the round trips through ``rclpy.serialization.deserialize_message`` and byte equality
with ``serialize_message``).
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from geometry_msgs.msg import PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from humanoid_sim.ros.conversions import header_stamp_nanoseconds, transform_message

_CDR_HEADER = 4  # encapsulation header; CDR aligns primitives relative to the byte after it


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 goes to /dev/null inside (C libraries write there directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def stamp_marker(k: int) -> tuple[int, int]:
    """(sec, nanosec) marker of the k-th stamp of a template (found back in its bytes)."""
    return 0x5EC00000 + k, 0x0A000000 + k


def value_marker(j: int) -> float:
    """The j-th float64 marker of a template: distinct, finite, not a value a message holds."""
    return 1e300 * (1.0 + j / 4096.0)


class FixedLayoutMessage:
    """A serialized message with ``n_stamps`` stamps and ``n_values`` float64 slots, refilled per publish.

    template: the message with stamp k set to ``stamp_marker(k)`` and float64 slot j set to
    ``value_marker(j)``; everything else (strings, sequence lengths) is kept as serialized.
    """

    def __init__(self, template: Any, n_stamps: int, n_values: int, signature: bool = False) -> None:
        """signature: find the template's padding bytes now (~0.1 s), for ``matches``."""
        data = bytes(serialize_message(template))
        self._buffer = bytearray(data + bytes(-len(data) % 8))  # padded: whole-word views
        self._size = len(data)
        self._doubles = np.frombuffer(self._buffer, dtype="<f8", offset=_CDR_HEADER, count=(len(self._buffer) - 8) // 8)
        self._words = np.frombuffer(self._buffer, dtype="<u4")
        value_index = np.empty(n_values, dtype=np.intp)
        for j in range(n_values):
            at = data.find(struct.pack("<d", value_marker(j)))
            if at < 0 or (at - _CDR_HEADER) % 8:
                raise ValueError(f"float64 slot {j} of {type(template).__name__} not found 8-aligned in its serialization")
            value_index[j] = (at - _CDR_HEADER) // 8
        stamp_index = np.empty((n_stamps, 2), dtype=np.intp)
        for k in range(n_stamps):
            at = data.find(struct.pack("<iI", *stamp_marker(k)))
            if at < 0 or at % 4:
                raise ValueError(f"stamp {k} of {type(template).__name__} not found in its serialization")
            stamp_index[k] = (at // 4, at // 4 + 1)
        self._value_index = value_index
        self._sec_index = stamp_index[:, 0].copy()
        self._nanosec_index = stamp_index[:, 1].copy()
        variable = np.zeros(len(data), dtype=bool)
        for j in value_index:
            variable[_CDR_HEADER + 8 * j : _CDR_HEADER + 8 * j + 8] = True
        for k in range(n_stamps):
            variable[4 * stamp_index[k, 0] : 4 * stamp_index[k, 0] + 8] = True
        self._template = template
        self._template_bytes = np.frombuffer(data, dtype=np.uint8)
        self._variable = variable
        self._signature_at = np.flatnonzero(self._meaningful() & ~variable) if signature else None

    def fill(self, sec: int, nanosec: int, values: np.ndarray | None = None) -> bytes:
        """The serialized message with every stamp (sec, nanosec) and the float64 slots ``values`` (n_values,)."""
        self._words[self._sec_index] = sec
        self._words[self._nanosec_index] = nanosec
        if values is not None:
            self._doubles[self._value_index] = values
        return bytes(self._buffer[: self._size])

    @property
    def size(self) -> int:
        """Length [bytes] of the serialized message."""
        return self._size

    def read(self, data: bytes) -> np.ndarray:
        """The float64 slots (n_values,) of serialized bytes of the same layout (e.g. received raw).

        Raises ValueError when ``data`` has another length (another layout: deserialize it instead).
        """
        if len(data) != self._size:
            raise ValueError(f"{len(data)} bytes, not the {self._size} of this layout")
        return np.frombuffer(data, dtype="<f8", offset=_CDR_HEADER, count=(self._size - _CDR_HEADER) // 8)[self._value_index]

    def matches(self, data: bytes) -> bool:
        """Whether ``data`` has this layout (same length; same frame ids, names, string and
        sequence lengths), so that ``read`` gives its values."""
        if self._signature_at is None:
            raise RuntimeError("layout built without signature=True")
        if len(data) != self._size:
            return False
        at = self._signature_at
        return bool(np.array_equal(np.frombuffer(data, dtype=np.uint8)[at], self._template_bytes[at]))

    def _meaningful(self) -> np.ndarray:
        """Bytes of the template that carry content, (size,) bool: everything but CDR
        alignment padding, whose value serializers do not fix (rclpy leaves it uninitialised).
        Found by experiment: a byte is padding when changing it deserializes to the same message."""
        template_type = type(self._template)
        meaningful = np.ones(self._size, dtype=bool)
        probe = bytearray(self._template_bytes.tobytes())
        with _stderr_silenced():  # the C deserializer prints each rejected probe
            for i in range(_CDR_HEADER, self._size):
                if self._variable[i]:
                    continue
                original = probe[i]
                probe[i] = original ^ 0xFF
                try:
                    meaningful[i] = deserialize_message(bytes(probe), template_type) != self._template
                except Exception:  # noqa: BLE001 - a string or sequence length no longer fits: content
                    meaningful[i] = True
                probe[i] = original
        return meaningful


class SerializedTf:
    """TFMessage bytes for transforms parent -> child (fixed pairs), refilled per publish.

    pairs: (parent frame, child frame) per transform, in the order of ``fill``'s arrays.
    """

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.pairs = tuple(pairs)
        template = TFMessage(transforms=[transform_message(0, parent, child, np.eye(4)) for parent, child in self.pairs])
        for k, msg in enumerate(template.transforms):
            msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_marker(k)
            t, r = msg.transform.translation, msg.transform.rotation
            t.x, t.y, t.z, r.x, r.y, r.z, r.w = (value_marker(7 * k + j) for j in range(7))
        n = len(self.pairs)
        self._message = FixedLayoutMessage(template, n, 7 * n)

    def fill(self, sec: int, nanosec: int, translations: np.ndarray, quaternions: np.ndarray) -> bytes:
        """Serialized TFMessage with every stamp (sec, nanosec) and the given transforms.

        translations: (n, 3) [m]; quaternions: (n, 4) (x, y, z, w), in ``pairs`` order.
        """
        return self._message.fill(sec, nanosec, np.hstack([translations, quaternions]).ravel())

    def fill_rows(self, sec: int, nanosec: int, pose_rows: np.ndarray) -> bytes:
        """As ``fill``, from rows (x, y, z, qx, qy, qz, qw) per transform, shape (n, 7)."""
        return self._message.fill(sec, nanosec, pose_rows.ravel())


class SerializedJointState:
    """sensor_msgs/JointState bytes for fixed joint names (position, velocity, effort all filled).

    readable: also read such messages received raw, checking names and lengths (``read``).
    """

    def __init__(self, names: Sequence[str], readable: bool = False) -> None:
        n = len(names)
        template = JointState(
            name=list(names),
            position=[value_marker(j) for j in range(n)],
            velocity=[value_marker(n + j) for j in range(n)],
            effort=[value_marker(2 * n + j) for j in range(n)],
        )
        template.header.stamp.sec, template.header.stamp.nanosec = stamp_marker(0)
        self.n = n
        self._values = np.empty(3 * n)
        self._message = FixedLayoutMessage(template, 1, 3 * n, signature=readable)
        self._readable = readable

    def fill(self, sec: int, nanosec: int, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> bytes:
        """position [rad or m], velocity [rad/s or m/s], effort [N m or N], each (n,)."""
        n, values = self.n, self._values
        values[:n], values[n : 2 * n], values[2 * n :] = position, velocity, effort
        return self._message.fill(sec, nanosec, values)

    def read(self, data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, effort), each (n,), of a JointState received raw with these names and
        an empty frame_id (what the simulation node publishes). ValueError for another layout
        (another length; when ``readable``, also other names or frame_id)."""
        if self._readable and not self._message.matches(data):
            raise ValueError("not a JointState of this layout (names, frame_id or sequence lengths differ)")
        values = self._message.read(data)
        n = self.n
        return values[:n], values[n : 2 * n], values[2 * n :]


class SerializedClock:
    """rosgraph_msgs/Clock bytes."""

    def __init__(self) -> None:
        template = Clock()
        template.clock.sec, template.clock.nanosec = stamp_marker(0)
        self._message = FixedLayoutMessage(template, 1, 0)

    def fill(self, sec: int, nanosec: int) -> bytes:
        return self._message.fill(sec, nanosec)


class SerializedWrench:
    """geometry_msgs/WrenchStamped bytes in a fixed frame; fill with (f [N], n [N m]), shape (6,)."""

    def __init__(self, frame: str) -> None:
        template = WrenchStamped()
        template.header.frame_id = frame
        template.header.stamp.sec, template.header.stamp.nanosec = stamp_marker(0)
        f, n = template.wrench.force, template.wrench.torque
        f.x, f.y, f.z, n.x, n.y, n.z = (value_marker(j) for j in range(6))
        self._message = FixedLayoutMessage(template, 1, 6)

    def fill(self, sec: int, nanosec: int, wrench: np.ndarray) -> bytes:
        return self._message.fill(sec, nanosec, wrench)


class SerializedPoint:
    """geometry_msgs/PointStamped bytes in a fixed frame; fill with a point [m], shape (3,)."""

    def __init__(self, frame: str) -> None:
        template = PointStamped()
        template.header.frame_id = frame
        template.header.stamp.sec, template.header.stamp.nanosec = stamp_marker(0)
        p = template.point
        p.x, p.y, p.z = (value_marker(j) for j in range(3))
        self._message = FixedLayoutMessage(template, 1, 3)

    def fill(self, sec: int, nanosec: int, point: np.ndarray) -> bytes:
        return self._message.fill(sec, nanosec, point)


class SerializedOdometry:
    """nav_msgs/Odometry bytes for a fixed (odom frame, base frame), zero covariances.

    fill with the base pose q[0:7] (position [m], quaternion x, y, z, w) and the base twist
    v[0:6] (linear [m/s], angular [rad/s], in the base frame), as ``conversions.odometry_message``.
    """

    def __init__(self, odom_frame: str, base_frame: str) -> None:
        template = Odometry(child_frame_id=base_frame)
        template.header.frame_id = odom_frame
        template.header.stamp.sec, template.header.stamp.nanosec = stamp_marker(0)
        pose, twist = template.pose.pose, template.twist.twist
        (pose.position.x, pose.position.y, pose.position.z, pose.orientation.x, pose.orientation.y,
         pose.orientation.z, pose.orientation.w) = (value_marker(j) for j in range(7))
        (twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x, twist.angular.y,
         twist.angular.z) = (value_marker(7 + j) for j in range(6))
        self._values = np.empty(13)
        self.layout = FixedLayoutMessage(template, 1, 13, signature=True)

    def fill(self, sec: int, nanosec: int, q_base: np.ndarray, v_base: np.ndarray) -> bytes:
        """q_base (7,), v_base (6,) as in the class docstring."""
        self._values[:7], self._values[7:] = q_base, v_base
        return self.layout.fill(sec, nanosec, self._values)

    def read(self, data: bytes) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(stamp [ns], q_base (7,), v_base (6,)) of Odometry bytes of this layout; None for
        another layout (other frames, a covariance set: deserialize those instead)."""
        if not self.layout.matches(data):
            return None
        values = self.layout.read(data)
        return header_stamp_nanoseconds(data), values[:7], values[7:]


class SerializedEffortCommand:
    """sensor_msgs/JointState bytes naming fixed joints with only ``effort`` filled (position
    and velocity empty, frame_id empty): a torque command as ``joint_commands`` carries it."""

    def __init__(self, names: Sequence[str]) -> None:
        template = JointState(name=list(names), effort=[value_marker(j) for j in range(len(names))])
        template.header.stamp.sec, template.header.stamp.nanosec = stamp_marker(0)
        self.layout = FixedLayoutMessage(template, 1, len(names), signature=True)

    def fill(self, sec: int, nanosec: int, effort: np.ndarray) -> bytes:
        """effort [N m or N], (n,) in the names' order."""
        return self.layout.fill(sec, nanosec, effort)

    def read(self, data: bytes) -> tuple[int, np.ndarray] | None:
        """(stamp [ns], effort (n,)) of bytes of this layout; None for any other JointState
        (other names or order, position or velocity filled: deserialize those instead)."""
        if not self.layout.matches(data):
            return None
        return header_stamp_nanoseconds(data), self.layout.read(data)
