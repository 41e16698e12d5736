"""The free objects drawn as markers: one shape per object at its pose."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("visualization_msgs")

from visualization_msgs.msg import Marker  # noqa: E402

from humanoid_sim.dynamics.spatial import quaternion_to_rotation, rotation_to_quaternion  # noqa: E402
from humanoid_sim.contact.environment import rpy_to_rotation  # noqa: E402
from humanoid_sim.model.robot_model import ShapeKind  # noqa: E402
from humanoid_sim.ros.object_markers import MARKERS_PER_OBJECT, object_markers  # noqa: E402
from humanoid_sim.world import Shape  # noqa: E402


def test_each_shape_is_drawn_at_its_pose_in_the_world_frame():
    rng = np.random.default_rng(5)
    shapes = [
        Shape(ShapeKind.BOX, [0.4, 0.6, 0.5]),
        Shape(ShapeKind.SPHERE, [0.11]),
        Shape(ShapeKind.CYLINDER, [0.1, 0.3]),
        Shape(ShapeKind.CAPSULE, [0.05, 0.2]),
        Shape(ShapeKind.MESH, [], vertices=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])),
    ]
    poses = np.zeros((5, 7))
    poses[:, :3] = rng.normal(size=(5, 3))
    for k in range(5):
        poses[k, 3:] = rotation_to_quaternion(rpy_to_rotation(rng.uniform(-1, 1, 3)))
    names = ["box", "ball", "can", "pill", "tet"]
    msg = object_markers(2_500_000_000, "odom", names, shapes, poses)
    assert msg.markers[0].action == Marker.DELETEALL
    by_id = {m.id: m for m in msg.markers[1:]}
    kinds = {k: by_id[MARKERS_PER_OBJECT * k].type for k in range(5)}
    assert kinds == {0: Marker.CUBE, 1: Marker.SPHERE, 2: Marker.CYLINDER, 3: Marker.CYLINDER, 4: Marker.TRIANGLE_LIST}
    box = by_id[0]
    assert box.header.frame_id == "odom" and box.header.stamp.sec == 2 and box.header.stamp.nanosec == 500_000_000
    assert (box.scale.x, box.scale.y, box.scale.z) == (0.4, 0.6, 0.5) and box.text == "box"
    np.testing.assert_allclose([box.pose.position.x, box.pose.position.y, box.pose.position.z], poses[0, :3])
    o = box.pose.orientation
    np.testing.assert_allclose([o.x, o.y, o.z, o.w], poses[0, 3:])
    assert by_id[MARKERS_PER_OBJECT].scale.x == pytest.approx(0.22)
    can = by_id[2 * MARKERS_PER_OBJECT]
    assert (can.scale.x, can.scale.z) == (pytest.approx(0.2), pytest.approx(0.3))
    # the capsule's end spheres sit at its segment's ends, along its z axis
    axis = quaternion_to_rotation(poses[3, 3:])[:, 2]
    ends = sorted(
        (np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z]) for m in (by_id[10], by_id[11])),
        key=lambda p: float(p @ axis),
    )
    np.testing.assert_allclose(ends[1] - ends[0], 0.2 * axis, atol=1e-12)
    assert len(by_id[4 * MARKERS_PER_OBJECT].points) == 3 * 4  # a tetrahedron: four triangles
    assert len(msg.markers) == 1 + 5 + 2
