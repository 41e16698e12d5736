"""The one model the simulator steps: the robots' trees and one free body per world object.

``assemble_world_model(world, robot)`` joins the world's robots and its free rigid objects
into one model of several trees (humanoid_sim.model.model_union):

- the robots first, in world-file order: ``robot`` (the first entry's, or the only robot
  when the world has no entry) keeps its link, joint and frame names; every later entry's
  robot (its ``urdf``, loaded by ``load_world_robots`` unless given) has them prefixed
  ``<entry name>/`` (``r2/base_link``, ``r2/l_knee``), so every name stays unique;
- then every free object as a one-body tree: parent -1, a FREE joint (7 q: position [m]
  and quaternion x, y, z, w of the body frame in the world; 6 v: linear velocity of the
  body frame origin [m/s] and angular velocity [rad/s], both in the body frame, as a
  floating base), its mass, centre of mass and inertia from the world file
  (world/inertia.py), its shape as a ``CollisionShape`` of the body (shape frame = body
  frame) and a frame named after the object.

Body and coordinate order: the first robot's bodies 0 .. robot_nb - 1 with its coordinates
q[:robot_nq], v[:robot_nv] (exactly the robot model's), then each later robot's, then the
objects in world-file order, 7 q and 6 v each. ``WorldModel.robots`` says where each robot
lives (``RobotTree``), ``WorldModel.objects`` each object (``ObjectBody``). A world without
a robot (a block stack) is the objects alone. ``RobotModel.tree_root`` tells the trees apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from humanoid_sim.contact.environment import Material
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.model_union import joined_models, prefixed_model
from humanoid_sim.model.robot_model import (
    CollisionShape,
    Frame,
    JointLimits,
    JointType,
    RobotModel,
    ShapeKind,
    coordinate_indices,
)
from humanoid_sim.world.description import FreeObject, RobotEntry, World

__all__ = ["ObjectBody", "RobotTree", "WorldModel", "assemble_world_model", "load_world_robot", "load_world_robots"]

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


class RobotTree(NamedTuple):
    """Where a robot lives in the combined model.

    name: its world entry's name (the robot model's name when the world has no entry).
    model: the robot's own model, with its own (unprefixed) names: its poses, its
    controllers and its dynamics alone. prefix: "" for the first robot, ``<name>/`` for a
    later one (its names in the combined model are ``prefix + `` its own). bodies: its body
    indices (a slice of the combined model's bodies; ``bodies.start`` is its base). q, v: its
    coordinates (q[tree.q] is ``model``'s q). joints: its joints in the combined model's
    ``joint_names`` (and in ``Simulator.step``'s tau). entry: its RobotEntry, or None.
    """

    name: str
    model: RobotModel
    prefix: str
    bodies: slice
    q: slice
    v: slice
    joints: slice
    entry: RobotEntry | None


@dataclass(frozen=True, eq=False)
class WorldModel:
    """The world's robots and free objects as one RobotModel (module docstring).

    world: the World it was assembled from. model: the combined model (the simulator's).
    robot: the first robot's own model (its bodies and coordinates are the first of
    ``model``), or None. robot_name: the first robot's entry name in the world (None without
    a robot entry). objects: one ObjectBody per free object, in world-file order.
    robot_nb, robot_nq, robot_nv: how many bodies and coordinates the first robot takes (0
    without). robots: one RobotTree per robot, the first robot first, in world-file order.
    """

    world: World
    model: RobotModel
    robot: RobotModel | None
    robot_name: str | None
    objects: tuple[ObjectBody, ...]
    robot_nb: int
    robot_nq: int
    robot_nv: int
    robots: tuple[RobotTree, ...] = ()

    @property
    def object_of_body(self) -> np.ndarray:
        """Per body of ``model`` (nb,): the index of its object in ``objects``, -1 for the
        robots' bodies."""
        return self._index_of_body([obj.body for obj in self.objects])

    @property
    def robot_of_body(self) -> np.ndarray:
        """Per body of ``model`` (nb,): the index of its robot in ``robots``, -1 for the
        objects' bodies."""
        return self._index_of_body([tree.bodies for tree in self.robots])

    def _index_of_body(self, bodies: list) -> np.ndarray:
        out = np.full(self.model.nb, -1, dtype=np.int64)
        for k, where in enumerate(bodies):
            out[where] = k
        return out

    def object(self, name: str) -> ObjectBody:
        """The named object; UnknownNameError (a KeyError) lists the objects."""
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise UnknownNameError("object", name, [o.name for o in self.objects])

    def robot_tree(self, name: str) -> RobotTree:
        """The named robot; UnknownNameError (a KeyError) lists the robots."""
        for tree in self.robots:
            if tree.name == name:
                return tree
        raise UnknownNameError("robot", name, [t.name for t in self.robots])

    def initial_state(
        self, robot_q: np.ndarray | None = None, robot_qs: Mapping[str, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(q (nq,), v (nv,)) of the combined model at the start: the first robot at
        ``robot_q`` (robot.nq,) (None: its neutral configuration), every later robot at
        ``robot_qs[name]`` (its model's nq; missing: its neutral configuration), all at rest;
        every object at its world-file pose and twist (the world-frame twist turned into body
        axes). ``Simulator.from_world`` gives each robot its entry's pose."""
        q = np.zeros(self.model.nq)
        v = np.zeros(self.model.nv)
        if self.robot is None and robot_q is not None:
            raise ValueError("robot_q given for a world without a robot")
        given = dict(robot_qs or {})
        unknown = sorted(set(given) - {t.name for t in self.robots[1:]})
        if unknown:
            raise UnknownNameError("robot", unknown[0], [t.name for t in self.robots[1:]], "(a later robot)")
        for k, tree in enumerate(self.robots):
            rq = robot_q if k == 0 else given.get(tree.name)
            rq = neutral_configuration(tree.model) if rq is None else np.asarray(rq, dtype=float)
            if rq.shape != (tree.model.nq,):
                given_as = "robot_q" if k == 0 else f"robot_qs[{tree.name!r}]"
                raise ValueError(f"{given_as} has shape {rq.shape}, expected ({tree.model.nq},)")
            q[tree.q] = rq
        for obj in self.objects:
            d = obj.description
            R = d.rotation
            q[obj.q] = np.concatenate([d.position, rotation_to_quaternion(R)])
            v[obj.v] = np.concatenate([R.T @ d.linear_velocity, R.T @ d.angular_velocity])
        return q, v

    def robot_state(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first robot's (q (robot_nq,), v (robot_nv,)) out of the combined state (copies)."""
        return np.array(q[: self.robot_nq]), np.array(v[: self.robot_nv])


def _object_shape(obj: FreeObject) -> CollisionShape:
    shape = obj.shape
    mesh = shape.kind == ShapeKind.MESH
    return CollisionShape(
        body=0,
        kind=ShapeKind(shape.kind),
        X_body_shape=np.eye(4),
        # a mesh's hull is already scaled: unit scale, as the URDF loader's size of a mesh
        size=np.ones(3) if mesh else np.array(shape.size, dtype=float),
        vertices=np.array(shape.vertices, dtype=float) if mesh else np.zeros((0, 3)),
        link_name=obj.name,
    )


def _object_model(obj: FreeObject, gravity: np.ndarray) -> RobotModel:
    """A free object as a one-body model (module docstring)."""
    joint_type = np.array([int(JointType.FREE)], dtype=np.int64)
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    empty = np.zeros(0)
    return RobotModel(
        name=obj.name, body_names=(obj.name,), parent=np.array([-1], dtype=np.int64), joint_type=joint_type,
        joint_axis=np.zeros((1, 3)), X_parent_joint=np.eye(4)[None], mass=np.array([obj.mass]),
        com=np.reshape(obj.com, (1, 3)), inertia_com=np.reshape(obj.inertia, (1, 3, 3)), q_index=q_index,
        v_index=v_index, nq=nq, nv=nv, joint_names=(), limits=JointLimits(empty, empty, empty, empty),
        frames={obj.name: Frame(obj.name, 0, np.eye(4))}, collision_shapes=(_object_shape(obj),), gravity=gravity,
    )  # fmt: skip


def _load_entry_robot(entry: RobotEntry, mimic: str) -> RobotModel:
    from humanoid_sim.model.urdf_loader import load_urdf
    from humanoid_sim.package_data import package_file

    path = Path(entry.urdf)
    return load_urdf(path if path.is_file() else package_file(entry.urdf), mimic=mimic)


def load_world_robots(world: World, mimic: str = "error") -> tuple[RobotModel, ...]:
    """The RobotModel of every robot entry of the world, in file order (each with its own
    names; ``assemble_world_model`` prefixes the later ones). An entry's ``urdf`` is a file
    path, else a path inside the package's share directory. Raises DataFileNotFoundError
    naming the places searched, UrdfError for a URDF that does not load."""
    return tuple(_load_entry_robot(entry, mimic) for entry in world.robots)


def load_world_robot(world: World, mimic: str = "error") -> RobotModel | None:
    """The RobotModel of the world's first robot entry (``load_world_robots``), None for a
    world without robots."""
    return _load_entry_robot(world.robots[0], mimic) if world.robots else None


def assemble_world_model(
    world: World, robot: RobotModel | None = None, later_robots: Sequence[RobotModel] | None = None
) -> WorldModel:
    """The combined model of the world's robots and free objects (module docstring).

    robot: the first robot (the first entry's, or the only robot of a world without robot
    entries; ``load_world_robot(world)`` gives the first entry's), None: no robot at all (the
    objects alone). later_robots: the models of ``world.robots[1:]`` in order (their own
    names); None loads them from their entries' ``urdf`` (``load_world_robots``).
    Gravity is the first robot's, else (0, 0, -9.81) m/s^2. Raises InvalidValueError (a
    ValueError) when an object's name is a link or frame name of a robot, when a later
    robot's prefixed names clash with another's, when ``later_robots`` does not match the
    entries, or when there is neither a robot nor an object.
    """
    objects = world.objects
    if robot is None and not objects:
        raise InvalidValueError("world: nothing to simulate (no robot and no free objects)")
    entries = world.robots
    if robot is None:
        if later_robots:
            raise InvalidValueError("world: later_robots given without a first robot")
        robots: list[RobotModel] = []
    else:
        later = tuple(_load_entry_robot(e, "error") for e in entries[1:]) if later_robots is None else tuple(later_robots)
        if len(later) != max(len(entries) - 1, 0):
            raise InvalidValueError(
                f"world: {len(later)} later robots given for the entries {[e.name for e in entries[1:]]}"
            )
        robots = [robot] + [prefixed_model(m, f"{e.name}/") for m, e in zip(later, entries[1:])]
    taken: dict[str, str] = {}
    for k, m in enumerate(robots):
        label = entries[k].name if k < len(entries) else m.name
        for n in (*m.body_names, *m.frames):
            taken.setdefault(n, label)
    clash = sorted(o.name for o in objects if o.name in taken)
    if clash:
        raise InvalidValueError(
            f"world: objects {clash} have the name of a link or frame of robot {taken[clash[0]]!r}; rename them"
            " (object names must differ from the robots' link and joint names)"
        )
    gravity = np.array(robots[0].gravity if robots else DEFAULT_GRAVITY, dtype=float)
    parts = robots + [_object_model(o, gravity) for o in objects]
    name = robot.name if robot is not None else WORLD_MODEL_NAME
    try:
        model = joined_models(name, parts, gravity)
    except ValueError as exc:
        raise InvalidValueError(f"world: {exc}") from None
    trees, body, joint = [], 0, 0
    for k, m in enumerate(robots):
        entry = entries[k] if k < len(entries) else None
        q0, v0 = int(model.q_index[body]), int(model.v_index[body])
        trees.append(RobotTree(entry.name if entry else m.name, robot if k == 0 else later[k - 1],
                               "" if k == 0 else f"{entry.name}/", slice(body, body + m.nb), slice(q0, q0 + m.nq),
                               slice(v0, v0 + m.nv), slice(joint, joint + m.nj), entry))  # fmt: skip
        body, joint = body + m.nb, joint + m.nj
    placed = []
    for o in objects:
        q0, v0 = int(model.q_index[body]), int(model.v_index[body])
        placed.append(ObjectBody(o.name, body, slice(q0, q0 + 7), slice(v0, v0 + 6), o.material, o))
        body += 1
    robot_name = entries[0].name if (robot is not None and entries) else None
    rb, rq, rv = (robot.nb, robot.nq, robot.nv) if robot is not None else (0, 0, 0)
    return WorldModel(world, model, robot, robot_name, tuple(placed), rb, rq, rv, tuple(trees))

