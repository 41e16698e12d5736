"""The one model the simulator steps: the robot's tree and one free body per world object.

``assemble_world_model(world, robot)`` appends every free rigid object of ``world`` to the
robot's model as a one-body tree: parent -1, a FREE joint (7 q: position [m] and
quaternion x, y, z, w of the body frame in the world; 6 v: linear velocity of the body
frame origin [m/s] and angular velocity [rad/s], both in the body frame, as a floating
base), its mass, centre of mass and inertia from the world file (world/inertia.py), its
shape as a ``CollisionShape`` of the body (shape frame = body frame) and a frame named
after the object. Body and coordinate order: the robot's bodies 0 .. robot_nb - 1 with its
coordinates q[:robot_nq], v[:robot_nv] (exactly the robot model's), then the objects in
world-file order, 7 q and 6 v each. A world without a robot (a block stack) is the objects
alone. ``RobotModel.tree_root`` tells the trees apart (an object body is its own root).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from humanoid_sim.contact.environment import Material
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.robot_model import (
    CollisionShape,
    Frame,
    JointDynamics,
    JointLimits,
    JointType,
    RobotModel,
    ShapeKind,
    coordinate_indices,
)
from humanoid_sim.world.description import FreeObject, RobotEntry, World

__all__ = ["ObjectBody", "WorldModel", "assemble_world_model", "load_world_robot"]

WORLD_MODEL_NAME = "world"  # the combined model's name when the world has no robot
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)  # [m/s^2], world frame, when there is no robot model to take it from


class ObjectBody(NamedTuple):
    """Where a free object lives in the combined model.

    name: the object's name (its body, frame and collision shape's link name); body: its body
    index; q: its 7 coordinates (position [m], quaternion x, y, z, w); v: its 6 coordinates
    (linear [m/s], angular [rad/s] velocity in the body frame); material: its surface
    material; description: the world file's FreeObject (shape, initial pose and twist).
    """

    name: str
    body: int
    q: slice
    v: slice
    material: Material
    description: FreeObject


@dataclass(frozen=True, eq=False)
class WorldModel:
    """The world's robot and free objects as one RobotModel (module docstring).

    world: the World it was assembled from. model: the combined model (the simulator's).
    robot: the robot's own model (its bodies and coordinates are the first of ``model``), or
    None. robot_name: the robot's entry name in the world (None without a robot entry).
    objects: one ObjectBody per free object, in world-file order.
    robot_nb, robot_nq, robot_nv: how many bodies and coordinates the robot takes (0 without).
    """

    world: World
    model: RobotModel
    robot: RobotModel | None
    robot_name: str | None
    objects: tuple[ObjectBody, ...]
    robot_nb: int
    robot_nq: int
    robot_nv: int

    @property
    def object_of_body(self) -> np.ndarray:
        """Per body of ``model`` (nb,): the index of its object in ``objects``, -1 for the
        robot's bodies."""
        out = np.full(self.model.nb, -1, dtype=np.int64)
        for k, obj in enumerate(self.objects):
            out[obj.body] = k
        return out

    def object(self, name: str) -> ObjectBody:
        """The named object; UnknownNameError (a KeyError) lists the objects."""
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise UnknownNameError("object", name, [o.name for o in self.objects])

    def initial_state(self, robot_q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(q (nq,), v (nv,)) of the combined model at the start: the robot at ``robot_q``
        (robot.nq,) (None: its neutral configuration) and at rest; every object at its
        world-file pose and twist (the world-frame twist turned into body axes)."""
        q = np.zeros(self.model.nq)
        v = np.zeros(self.model.nv)
        if self.robot is not None:
            rq = neutral_configuration(self.robot) if robot_q is None else np.asarray(robot_q, dtype=float)
            if rq.shape != (self.robot_nq,):
                raise ValueError(f"robot_q has shape {rq.shape}, expected ({self.robot_nq},)")
            q[: self.robot_nq] = rq
        elif robot_q is not None:
            raise ValueError("robot_q given for a world without a robot")
        for obj in self.objects:
            d = obj.description
            R = d.rotation
            q[obj.q] = np.concatenate([d.position, rotation_to_quaternion(R)])
            v[obj.v] = np.concatenate([R.T @ d.linear_velocity, R.T @ d.angular_velocity])
        return q, v

    def robot_state(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The robot's (q (robot_nq,), v (robot_nv,)) out of the combined state (copies)."""
        return np.array(q[: self.robot_nq]), np.array(v[: self.robot_nv])


def _object_shape(obj: FreeObject, body: int) -> CollisionShape:
    shape = obj.shape
    mesh = shape.kind == ShapeKind.MESH
    return CollisionShape(
        body=body,
        kind=ShapeKind(shape.kind),
        X_body_shape=np.eye(4),
        # a mesh's hull is already scaled: unit scale, as the URDF loader's size of a mesh
        size=np.ones(3) if mesh else np.array(shape.size, dtype=float),
        vertices=np.array(shape.vertices, dtype=float) if mesh else np.zeros((0, 3)),
        link_name=obj.name,
    )


def load_world_robot(world: World, mimic: str = "error") -> RobotModel | None:
    """The RobotModel of the world's robot entry (its ``urdf``: a file path, else a path
    inside the package's share directory), None for a world without robots. Raises
    DataFileNotFoundError naming the places searched, UrdfError for a URDF that does not
    load, InvalidValueError for a world of several robots (one robot per simulated world)."""
    _one_robot(world)
    if not world.robots:
        return None
    from humanoid_sim.model.urdf_loader import load_urdf
    from humanoid_sim.package_data import package_file

    entry: RobotEntry = world.robots[0]
    path = Path(entry.urdf)
    return load_urdf(path if path.is_file() else package_file(entry.urdf), mimic=mimic)


def _one_robot(world: World) -> None:
    if len(world.robots) > 1:
        raise InvalidValueError(
            f"world: {len(world.robots)} robots ({', '.join(r.name for r in world.robots)}); a simulated world"
            " holds one robot for now"
        )


def assemble_world_model(world: World, robot: RobotModel | None = None) -> WorldModel:
    """The combined model of ``robot`` (None: no robot) and the free objects of ``world``
    (module docstring); ``load_world_robot(world)`` gives the robot of the world's entry.
    Gravity is the robot model's, else (0, 0, -9.81) m/s^2. Raises InvalidValueError (a
    ValueError) when an object's name is already a body or frame name of the robot, when
    there is neither a robot nor an object, or when the world has several robots."""
    _one_robot(world)
    objects = world.objects
    if robot is None and not objects:
        raise InvalidValueError("world: nothing to simulate (no robot and no free objects)")
    if robot is not None:
        taken = set(robot.body_names) | set(robot.frames)
        clash = sorted(o.name for o in objects if o.name in taken)
        if clash:
            raise InvalidValueError(
                f"world: objects {clash} have the name of a link or frame of robot {robot.name!r};"
                " rename them (object names must differ from the robot's link and joint names)"
            )
    n = len(objects)
    if robot is not None:
        rb, rq, rv = robot.nb, robot.nq, robot.nv
        names, frames, shapes = robot.body_names, dict(robot.frames), tuple(robot.collision_shapes)
        parent, joint_type = np.asarray(robot.parent), np.asarray(robot.joint_type)
        axis, X = np.asarray(robot.joint_axis), np.asarray(robot.X_parent_joint)
        mass, com, inertia = np.asarray(robot.mass), np.asarray(robot.com), np.asarray(robot.inertia_com)
        joint_names, limits, dynamics = robot.joint_names, robot.limits, robot.joint_dynamics
        gravity, name = np.array(robot.gravity, dtype=float), robot.name
    else:
        rb = rq = rv = 0
        names, frames, shapes = (), {}, ()
        parent, joint_type = np.zeros(0, np.int64), np.zeros(0, np.int64)
        axis, X = np.zeros((0, 3)), np.zeros((0, 4, 4))
        mass, com, inertia = np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3, 3))
        empty = np.zeros(0)
        joint_names, limits, dynamics = (), JointLimits(empty, empty, empty, empty), JointDynamics.none(0)
        gravity, name = np.array(DEFAULT_GRAVITY), WORLD_MODEL_NAME
    bodies = range(rb, rb + n)
    frames.update({o.name: Frame(o.name, b, np.eye(4)) for o, b in zip(objects, bodies)})
    joint_type = np.concatenate([joint_type, np.full(n, int(JointType.FREE))]).astype(np.int64)
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    model = RobotModel(
        name=name,
        body_names=tuple(names) + tuple(o.name for o in objects),
        parent=np.concatenate([parent, np.full(n, -1)]).astype(np.int64),
        joint_type=joint_type,
        joint_axis=np.concatenate([axis, np.zeros((n, 3))]),
        X_parent_joint=np.concatenate([X, np.tile(np.eye(4), (n, 1, 1))]),
        mass=np.concatenate([mass, [o.mass for o in objects]]),
        com=np.concatenate([com, np.reshape([o.com for o in objects], (n, 3))]),
        inertia_com=np.concatenate([inertia, np.reshape([o.inertia for o in objects], (n, 3, 3))]),
        q_index=q_index,
        v_index=v_index,
        nq=nq,
        nv=nv,
        joint_names=tuple(joint_names),
        limits=limits,
        frames=frames,
        collision_shapes=shapes + tuple(_object_shape(o, b) for o, b in zip(objects, bodies)),
        gravity=gravity,
        joint_dynamics=dynamics,
    )
    placed = tuple(
        ObjectBody(o.name, b, slice(int(q_index[b]), int(q_index[b]) + 7), slice(int(v_index[b]), int(v_index[b]) + 6),
                   o.material, o)
        for o, b in zip(objects, bodies)
    )  # fmt: skip
    robot_name = world.robots[0].name if (robot is not None and world.robots) else None
    return WorldModel(world, model, robot, robot_name, placed, rb, rq, rv)
