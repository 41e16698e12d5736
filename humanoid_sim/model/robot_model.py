"""The immutable robot model: a kinematic tree of rigid bodies.

Every array is read-only once the model is built; simulation state lives
elsewhere (`q`, `v`), so one model can serve many simulators.

Body ``i`` moves with joint ``i`` relative to its parent body ``parent[i]``
(``-1`` for the root). Body 0 is the root link; its joint is ``FREE`` (6-DOF
floating base) or ``FIXED_TO_WORLD``. Bodies are in depth-first order, so
``parent[i] < i``. See ``docs/conventions.md`` for q/v layout and frames.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np


class JointType(enum.IntEnum):
    """Joint of a body to its parent; the integer values are used by kernels."""

    FREE = 0  # floating base: nq = 7 (position, quaternion xyzw), nv = 6
    REVOLUTE = 1  # revolute and continuous: nq = nv = 1
    PRISMATIC = 2  # nq = nv = 1
    FIXED_TO_WORLD = 3  # root welded to the world: nq = nv = 0


class ShapeKind(enum.IntEnum):
    BOX = 0  # size: (3,) full edge lengths [m]
    SPHERE = 1  # size: (radius,)
    CYLINDER = 2  # size: (radius, length), axis along the shape's z
    CAPSULE = 3  # size: (radius, length of the segment), axis along z
    MESH = 4  # convex hull vertices in ``vertices``


def coordinate_indices(joint_type: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """First q and v coordinate of each body's joint, and nq, nv (docs/conventions.md).

    joint_type: JointType per body in body order, shape (nb,).
    Returns (q_index (nb,), v_index (nb,), nq, nv): FREE takes 7 q / 6 v, REVOLUTE and
    PRISMATIC 1 / 1, FIXED_TO_WORLD none.
    """
    nb = len(joint_type)
    q_index, v_index = np.zeros(nb, dtype=np.int64), np.zeros(nb, dtype=np.int64)
    nq = nv = 0
    for i in range(nb):
        q_index[i], v_index[i] = nq, nv
        if joint_type[i] == JointType.FREE:
            nq, nv = nq + 7, nv + 6
        elif joint_type[i] != JointType.FIXED_TO_WORLD:
            nq, nv = nq + 1, nv + 1
    return q_index, v_index, nq, nv


@dataclass(frozen=True)
class CollisionShape:
    """One collision shape rigidly attached to a body.

    body: index of the body it moves with.
    X_body_shape: pose of the shape frame in the body frame, shape (4, 4).
    size: parameters by kind (see ShapeKind) [m].
    vertices: for MESH, convex hull vertices in the shape frame [m], shape (k, 3);
        for other kinds an empty (0, 3) array.
    link_name: the URDF link the shape was declared on.
    """

    body: int
    kind: ShapeKind
    X_body_shape: np.ndarray
    size: np.ndarray
    vertices: np.ndarray
    link_name: str


@dataclass(frozen=True)
class Frame:
    """A named frame fixed to a body: every URDF link and every URDF joint.

    body: index of the body the frame moves with.
    X_body_frame: pose of the frame in the body frame, shape (4, 4).
    """

    name: str
    body: int
    X_body_frame: np.ndarray


@dataclass(frozen=True)
class JointLimits:
    """Per joint (not counting the free base), in ``joint_names`` order.

    lower, upper: position limits [rad or m]; -inf/+inf when unbounded.
    velocity: |qdot| limit [rad/s or m/s]; +inf when not given.
    effort: |tau| limit [N m or N]; +inf when not given.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


@dataclass(frozen=True)
class RobotModel:
    """A kinematic tree of ``nb`` rigid bodies.

    Per body ``i`` (arrays of length nb):
      body_names[i]: URDF name of the link that owns the body frame.
      parent[i]: parent body index, -1 for the root.
      joint_type[i]: JointType value.
      joint_axis[i]: unit axis in the body (= joint) frame, shape (3,); zeros
        for FREE / FIXED_TO_WORLD.
      X_parent_joint[i]: pose of joint i's frame in the parent body frame at
        zero joint position, shape (4, 4); for the root, its pose in the world
        when FIXED_TO_WORLD, identity when FREE.
      mass[i] [kg], com[i] (3,) in the body frame [m], inertia_com[i] (3, 3)
        rotational inertia about the COM in body axes [kg m^2] (merged fixed
        children included).
      q_index[i], v_index[i]: first coordinate of joint i in q and v.
    Per actuated joint (length nj = nv - 6 or nv):
      joint_names[j], the URDF joint names, in v order after the base.
      limits: JointLimits.
    """

    name: str
    body_names: tuple[str, ...]
    parent: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray
    X_parent_joint: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia_com: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray
    nq: int
    nv: int
    joint_names: tuple[str, ...]
    limits: JointLimits
    frames: dict[str, Frame] = field(default_factory=dict)
    collision_shapes: tuple[CollisionShape, ...] = ()
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))

    def __post_init__(self) -> None:
        _validate_tree(self)
        for value in self.__dict__.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        for array in (self.limits.lower, self.limits.upper, self.limits.velocity, self.limits.effort):
            array.setflags(write=False)
        for frame in self.frames.values():
            frame.X_body_frame.setflags(write=False)
        for shape in self.collision_shapes:
            for array in (shape.X_body_shape, shape.size, shape.vertices):
                array.setflags(write=False)

    @property
    def nb(self) -> int:
        """Number of bodies."""
        return len(self.body_names)

    @property
    def nj(self) -> int:
        """Number of joint coordinates (velocity DOF) excluding the free base."""
        return len(self.joint_names)

    @property
    def floating_base(self) -> bool:
        return int(self.joint_type[0]) == JointType.FREE

    @property
    def total_mass(self) -> float:
        return float(np.sum(self.mass))

    def joint_index(self, name: str) -> int:
        """Index of a joint in ``joint_names`` (and in the joint part of v).

        Raises KeyError listing the valid names.
        """
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"unknown joint {name!r}; valid joints: {', '.join(self.joint_names)}") from None

    def frame(self, name: str) -> Frame:
        """The named frame; raises KeyError listing the valid names."""
        try:
            return self.frames[name]
        except KeyError:
            raise KeyError(
                f"unknown frame {name!r}; valid frames: {', '.join(sorted(self.frames))}"
            ) from None


def _validate_tree(model: RobotModel) -> None:
    """Check the structure of a model as it is built; ValueError names the bad field."""
    nb = len(model.body_names)
    if nb == 0:
        raise ValueError(f"RobotModel {model.name!r}: no bodies")
    expected_shapes = {
        "parent": (nb,),
        "joint_type": (nb,),
        "joint_axis": (nb, 3),
        "X_parent_joint": (nb, 4, 4),
        "mass": (nb,),
        "com": (nb, 3),
        "inertia_com": (nb, 3, 3),
        "q_index": (nb,),
        "v_index": (nb,),
    }
    for name, shape in expected_shapes.items():
        actual = np.shape(getattr(model, name))
        if actual != shape:
            raise ValueError(f"RobotModel {model.name!r}: {name} has shape {actual}, expected {shape}")
    parent = np.asarray(model.parent)
    if parent[0] != -1 or np.any(parent[1:] < 0) or np.any(parent[1:] >= np.arange(1, nb)):
        raise ValueError(
            f"RobotModel {model.name!r}: parent must be -1 for body 0 and < i for body i (depth-first)"
        )
    if int(model.joint_type[0]) not in (JointType.FREE, JointType.FIXED_TO_WORLD):
        raise ValueError(
            f"RobotModel {model.name!r}: body 0 {model.body_names[0]!r} must be FREE or FIXED_TO_WORLD"
        )
    moving = [
        i for i in range(1, nb) if int(model.joint_type[i]) in (JointType.REVOLUTE, JointType.PRISMATIC)
    ]
    if len(moving) != nb - 1:
        bad = [model.body_names[i] for i in range(1, nb) if i not in moving]
        raise ValueError(f"RobotModel {model.name!r}: bodies {bad} need a REVOLUTE or PRISMATIC joint")
    if len(model.joint_names) != nb - 1:
        raise ValueError(
            f"RobotModel {model.name!r}: {len(model.joint_names)} joint_names for {nb - 1} moving joints"
        )
    root_nq, root_nv = (7, 6) if int(model.joint_type[0]) == JointType.FREE else (0, 0)
    if (model.nq, model.nv) != (root_nq + nb - 1, root_nv + nb - 1):
        raise ValueError(
            f"RobotModel {model.name!r}: nq, nv = {model.nq}, {model.nv}; expected"
            f" {root_nq + nb - 1}, {root_nv + nb - 1}"
        )
    if not np.all(np.isfinite(model.mass)) or np.any(np.asarray(model.mass) < 0.0):
        raise ValueError(f"RobotModel {model.name!r}: masses must be finite and >= 0")
    for name in ("lower", "upper", "velocity", "effort"):
        if np.shape(getattr(model.limits, name)) != (nb - 1,):
            raise ValueError(f"RobotModel {model.name!r}: limits.{name} must have shape ({nb - 1},)")
    for frame in model.frames.values():
        if not 0 <= frame.body < nb:
            raise ValueError(f"RobotModel {model.name!r}: frame {frame.name!r} on unknown body {frame.body}")
