"""Does a floating robot have collision geometry under its mass, or would it fall through the ground?

A URDF whose legs carry no ``<collision>`` (or that has none at all) loads fine and then sinks
through the ground: only links with collision shapes touch the environment. This module finds
those links once, when the model is loaded, for one clear warning.

The test is made in the neutral pose (base at the world origin, upright; every joint at 0
clipped into its limits, as :func:`humanoid_sim.model.configuration.neutral_configuration`):
a body with mass whose centre of mass lies below the lowest point of every collision shape
would sink through a ground that the collision shapes rest on. A robot welded to the world
cannot fall and is never reported.
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.model.robot_model import CollisionShape, JointType, RobotModel, ShapeKind

__all__ = ["CollisionCoverageWarning", "collision_coverage_warning", "links_below_collision_geometry"]

# A centre of mass this far [m] below the lowest collision point or more counts as below it.
_BELOW_TOLERANCE = 1e-6


class CollisionCoverageWarning(UserWarning):
    """A floating robot has mass below all its collision geometry: it sinks through the ground."""


def _neutral_body_poses(model: RobotModel) -> np.ndarray:
    """X_world_body of every body in the neutral pose, shape (nb, 4, 4)."""
    joint_q = np.clip(np.zeros(model.nj), model.limits.lower, model.limits.upper)
    X = np.zeros((model.nb, 4, 4))
    X[0] = np.eye(4)
    for i in range(1, model.nb):
        motion = np.eye(4)
        axis, angle = model.joint_axis[i], float(joint_q[i - 1])
        if int(model.joint_type[i]) == JointType.PRISMATIC:
            motion[:3, 3] = axis * angle
        else:  # Rodrigues
            K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
            motion[:3, :3] = np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)
        X[i] = X[model.parent[i]] @ model.X_parent_joint[i] @ motion
    return X


def _lowest_z(shape: CollisionShape, X_world_shape: np.ndarray) -> float:
    """World height [m] of the lowest point of a collision shape placed at X_world_shape (4, 4)."""
    R, centre_z = X_world_shape[:3, :3], float(X_world_shape[2, 3])
    if shape.kind == ShapeKind.MESH:
        return float(np.min(shape.vertices @ R[2]) + centre_z) if len(shape.vertices) else centre_z
    if shape.kind == ShapeKind.BOX:
        return centre_z - 0.5 * float(np.abs(R[2]) @ shape.size)
    if shape.kind == ShapeKind.SPHERE:
        return centre_z - float(shape.size[0])
    radius, length = float(shape.size[0]), float(shape.size[1])
    axis_z = abs(float(R[2, 2]))  # world-z component of the shape's axis
    if shape.kind == ShapeKind.CYLINDER:
        return centre_z - 0.5 * length * axis_z - radius * float(np.sqrt(max(0.0, 1.0 - axis_z * axis_z)))
    return centre_z - 0.5 * length * axis_z - radius  # CAPSULE


def links_below_collision_geometry(model: RobotModel) -> tuple[str, ...]:
    """Bodies (named by their URDF link) with mass whose centre of mass lies below every collision
    shape in the neutral pose, in body order; every body with mass when there is no shape at all.

    Empty for a robot welded to the world.
    """
    if int(model.joint_type[0]) != JointType.FREE:
        return ()
    X = _neutral_body_poses(model)
    com_z = np.einsum("bj,bj->b", X[:, 2, :3], model.com) + X[:, 2, 3]
    lowest = min(
        (_lowest_z(s, X[s.body] @ s.X_body_shape) for s in model.collision_shapes), default=np.inf
    )
    return tuple(
        model.body_names[i]
        for i in range(model.nb)
        if model.mass[i] > 0.0 and com_z[i] < lowest - _BELOW_TOLERANCE
    )


def collision_coverage_warning(model: RobotModel) -> str | None:
    """One line naming the links a floating robot would sink through the ground with, or None.

    None when every body with mass has collision geometry at or below its centre of mass in
    the neutral pose (see the module docstring), when the robot has no mass, or when it is
    welded to the world.
    """
    sinking = links_below_collision_geometry(model)
    if not sinking:
        return None
    if not model.collision_shapes:
        return (
            f"robot {model.name!r}: no collision shapes on any link, below base"
            f" {model.body_names[0]!r} or elsewhere: it falls through the ground"
        )
    return (
        f"robot {model.name!r}: no collision geometry under links {', '.join(sinking)} (their centres"
        f" of mass lie below every collision shape with base {model.body_names[0]!r} upright in the"
        " neutral pose): they sink through the ground"
    )
