"""The world's free objects drawn for RViz: one marker (or three for a capsule) per object.

Plain function (no node): ``object_markers`` gives a visualization_msgs/MarkerArray of every
object's shape at its pose, in the world (odom) frame, for the node's ``objects`` topic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from geometry_msgs.msg import Point, Vector3
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.ros.conversions import stamp_from_nanoseconds
from humanoid_sim.world import Shape

__all__ = ["MARKERS_PER_OBJECT", "object_markers"]

MARKERS_PER_OBJECT = 3  # ids: 3 k (the shape), 3 k + 1 and 3 k + 2 (a capsule's end spheres)
_COLOUR = ColorRGBA(r=0.80, g=0.55, b=0.25, a=0.9)


def object_markers(
    nanoseconds: int, frame: str, names: Sequence[str], shapes: Sequence[Shape], poses: np.ndarray,
    namespace: str = "objects",
) -> MarkerArray:
    """Markers of the objects ``names`` with ``shapes`` at ``poses`` (n, 7): position [m] and
    quaternion (x, y, z, w) of each body frame in ``frame``. Box: CUBE of its edge lengths;
    sphere: SPHERE of its diameter; cylinder: CYLINDER (axis z); capsule: CYLINDER and two
    SPHEREs at its segment's ends; mesh: TRIANGLE_LIST of its hull. A leading DELETEALL drops
    the markers of deleted objects. Marker ids: ``MARKERS_PER_OBJECT`` per object, in order."""
    stamp = stamp_from_nanoseconds(nanoseconds)
    markers: list[Marker] = [Marker(action=Marker.DELETEALL, ns=namespace)]
    poses = np.asarray(poses, dtype=float).reshape(-1, 7)
    for k, (name, shape, pose) in enumerate(zip(names, shapes, poses)):

        def new(offset: int, kind: int, centre: np.ndarray = pose[0:3]) -> Marker:
            marker = Marker(ns=namespace, id=MARKERS_PER_OBJECT * k + offset, type=kind, action=Marker.ADD, color=_COLOUR)
            marker.header.stamp = stamp
            marker.header.frame_id = frame
            marker.text = name
            marker.pose.position = Point(x=float(centre[0]), y=float(centre[1]), z=float(centre[2]))
            o = marker.pose.orientation
            o.x, o.y, o.z, o.w = (float(c) for c in pose[3:7])
            return marker

        size = np.asarray(shape.size, dtype=float)
        kind = ShapeKind(shape.kind)
        if kind == ShapeKind.BOX:
            marker = new(0, Marker.CUBE)
            marker.scale = Vector3(x=float(size[0]), y=float(size[1]), z=float(size[2]))
            markers.append(marker)
        elif kind == ShapeKind.SPHERE:
            marker = new(0, Marker.SPHERE)
            marker.scale = Vector3(x=2 * float(size[0]), y=2 * float(size[0]), z=2 * float(size[0]))
            markers.append(marker)
        elif kind in (ShapeKind.CYLINDER, ShapeKind.CAPSULE):
            r, length = float(size[0]), float(size[1])
            marker = new(0, Marker.CYLINDER)
            marker.scale = Vector3(x=2 * r, y=2 * r, z=length)
            markers.append(marker)
            if kind == ShapeKind.CAPSULE:
                axis = quaternion_to_rotation(pose[3:7])[:, 2]
                for offset, sign in ((1, 1.0), (2, -1.0)):
                    end = new(offset, Marker.SPHERE, pose[0:3] + sign * 0.5 * length * axis)
                    end.scale = Vector3(x=2 * r, y=2 * r, z=2 * r)
                    markers.append(end)
        else:  # MESH: its convex hull's triangles in the body frame
            marker = new(0, Marker.TRIANGLE_LIST)
            marker.scale = Vector3(x=1.0, y=1.0, z=1.0)
            vertices = np.asarray(shape.vertices, dtype=float)
            marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in vertices[np.asarray(shape.triangles).reshape(-1)]]
            markers.append(marker)
    return MarkerArray(markers=markers)
