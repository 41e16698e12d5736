"""The immutable robot model: a kinematic tree of rigid bodies.

Every array is read-only once the model is built; simulation state lives
elsewhere (`q`, `v`), so one model can serve many simulators.

Body ``i`` moves with joint ``i`` relative to its parent body ``parent[i]``
(``-1`` for a root). A model holds one or more trees: body 0 is the root link of
the first (the robot's, when there is a robot); every root's joint is ``FREE``
(6-DOF floating) or ``FIXED_TO_WORLD``, every other body's REVOLUTE or PRISMATIC.
Bodies are in depth-first order per tree, trees one after the other, so
``parent[i] < i``. The free rigid objects of a world are one-body trees appended
after the robot's bodies (humanoid_sim.world.assembly). Coordinates follow body
order: each tree's q and v are contiguous. See ``docs/conventions.md`` for the
q/v layout and frames.
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


# Width of the band below a velocity limit over which the default velocity-limit gain ramps the
# admissible actuator effort from full effort down to zero, as a fraction of the limit (see
# default_k_velocity and humanoid_sim.limits.velocity_limits).
VELOCITY_LIMIT_BAND = 0.1


def default_k_velocity(effort: np.ndarray, velocity: np.ndarray) -> np.ndarray:
    """Velocity-limit gain k_v used where the URDF gives no ``<safety_controller k_velocity>``.

    effort: |tau| limits e [N m or N], shape (nj,); velocity: |qdot| limits v_max [rad/s or m/s],
    shape (nj,). Returns k_v [N m s/rad or N s/m], shape (nj,):
    ``e / (VELOCITY_LIMIT_BAND * v_max)``, so the full effort stays available up to 90 % of the
    velocity limit, and a load as large as the whole effort pushes the joint at most 10 % past
    it; a joint with finite inertia approaches v_max with the time constant
    ``VELOCITY_LIMIT_BAND * (time to reach v_max from rest at full effort)``.
    0 (no velocity rule, the effort bound alone applies) where that is undefined: no effort
    limit (as ros2_control's soft limiter), no velocity limit, or a zero velocity limit (public
    URDFs write velocity="0" only as a placeholder beside effort="0").
    """
    e, v = np.asarray(effort, dtype=float), np.asarray(velocity, dtype=float)
    k = np.zeros(np.shape(e))
    defined = np.isfinite(e) & np.isfinite(v) & (v > 0.0)
    k[defined] = e[defined] / (VELOCITY_LIMIT_BAND * v[defined])
    return k


@dataclass(frozen=True)
class JointLimits:
    """Per joint (not counting the free base), in ``joint_names`` order, shapes (nj,).

    lower, upper: position limits [rad or m]; -inf/+inf when unbounded.
    velocity: |qdot| limit [rad/s or m/s]; +inf when not given.
    effort: |tau| limit [N m or N]; +inf when not given.
    k_velocity: velocity-limit gain k_v of the URDF ``<safety_controller>`` [N m s/rad or
        N s/m], finite, >= 0; 0 means no velocity rule. None (the default) takes
        :func:`default_k_velocity` of ``effort`` and ``velocity``. The admissible actuator
        effort is computed from it by :mod:`humanoid_sim.limits.velocity_limits`.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    k_velocity: np.ndarray = None  # type: ignore[assignment]  # None -> default_k_velocity

    def __post_init__(self) -> None:
        if self.k_velocity is None:
            object.__setattr__(self, "k_velocity", default_k_velocity(self.effort, self.velocity))


@dataclass(frozen=True)
class JointDynamics:
    """URDF ``<dynamics>`` of each joint, in ``joint_names`` order, shapes (nj,), finite, >= 0.

    damping: viscous coefficient d, joint torque -d qdot [N m s/rad or N s/m].
    friction: Coulomb (dry) friction bound [N m or N]: the friction torque opposes the motion
        with magnitude up to this value (stiction included).
    A joint without ``<dynamics>`` has 0 for both.
    """

    damping: np.ndarray
    friction: np.ndarray

    @classmethod
    def none(cls, nj: int) -> JointDynamics:
        """No damping and no friction on ``nj`` joints."""
        return cls(damping=np.zeros(nj), friction=np.zeros(nj))


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
    Per actuated joint (length nj: one per non-root body, in body order):
      joint_names[j], the URDF joint names, in v order.
      limits: JointLimits.
      joint_dynamics: JointDynamics (damping, Coulomb friction); None (the default) means
        none on any joint.
    Derived when the model is built (not constructor arguments):
      tree_root (nb,): the root body of each body's tree (tree_root[i] == i for a root);
      joint_body (nj,): the body each actuated joint moves;
      joint_q_index, joint_v_index (nj,): each actuated joint's q and v coordinate.
    With one tree (a robot alone) the joints are the last nj coordinates of q and v; with
    free objects appended they are followed by the objects' coordinates, so index joints by
    ``joint_q_index`` / ``joint_v_index`` (or ``joint_q_slice`` / ``joint_v_slice``), never
    by ``nv - nj``.
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
    joint_dynamics: JointDynamics = None  # type: ignore[assignment]  # None -> JointDynamics.none
    tree_root: np.ndarray = field(init=False, repr=False, compare=False)
    joint_body: np.ndarray = field(init=False, repr=False, compare=False)
    joint_q_index: np.ndarray = field(init=False, repr=False, compare=False)
    joint_v_index: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.joint_dynamics is None:
            object.__setattr__(self, "joint_dynamics", JointDynamics.none(len(self.joint_names)))
        _validate_tree(self)
        _validate_joint_parameters(self)
        parent = np.asarray(self.parent, dtype=np.int64)
        root = np.arange(len(parent), dtype=np.int64)
        for i in range(len(parent)):
            if parent[i] >= 0:
                root[i] = root[parent[i]]
        joint_body = np.flatnonzero(parent >= 0).astype(np.int64)
        object.__setattr__(self, "tree_root", root)
        object.__setattr__(self, "joint_body", joint_body)
        object.__setattr__(self, "joint_q_index", np.asarray(self.q_index, dtype=np.int64)[joint_body])
        object.__setattr__(self, "joint_v_index", np.asarray(self.v_index, dtype=np.int64)[joint_body])
        for value in self.__dict__.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        for container in (self.limits, self.joint_dynamics):
            for value in container.__dict__.values():
                value.setflags(write=False)
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
        """Body 0 (the first tree's root: the robot's base) has a FREE joint."""
        return int(self.joint_type[0]) == JointType.FREE

    @property
    def total_mass(self) -> float:
        """Mass of every body of every tree [kg] (``tree_mass`` for one tree)."""
        return float(np.sum(self.mass))

    @property
    def roots(self) -> np.ndarray:
        """The root body of every tree, in body order, shape (number of trees,)."""
        return np.flatnonzero(np.asarray(self.parent) < 0)

    @property
    def free_bodies(self) -> np.ndarray:
        """The bodies with a FREE joint (the floating roots), in body order."""
        return np.flatnonzero(np.asarray(self.joint_type) == JointType.FREE)

    def tree_mass(self, root: int = 0) -> float:
        """Mass of the tree whose root body is ``root`` [kg]."""
        return float(np.sum(np.asarray(self.mass)[self.tree_root == root]))

    @property
    def joint_q_slice(self) -> slice:
        """The actuated joints' q coordinates as one slice (length nj); ValueError when they
        are not contiguous (joints of two robots)."""
        return _contiguous(self.joint_q_index, "q", self.name)

    @property
    def joint_v_slice(self) -> slice:
        """The actuated joints' v coordinates as one slice (length nj); ValueError when they
        are not contiguous (joints of two robots)."""
        return _contiguous(self.joint_v_index, "v", self.name)

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


def _contiguous(index: np.ndarray, what: str, name: str) -> slice:
    if len(index) == 0:
        return slice(0, 0)
    start = int(index[0])
    if not np.array_equal(index, np.arange(start, start + len(index))):
        raise ValueError(f"RobotModel {name!r}: the actuated joints' {what} coordinates are not contiguous")
    return slice(start, start + len(index))


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
    if parent[0] != -1 or np.any(parent >= np.arange(nb)) or np.any(parent < -1):
        raise ValueError(
            f"RobotModel {model.name!r}: parent must be -1 for body 0 and -1 or < i for body i"
            " (depth-first, trees one after the other)"
        )
    roots = parent < 0
    joint_type = np.asarray(model.joint_type)
    bad_roots = [
        model.body_names[i] for i in np.flatnonzero(roots)
        if int(joint_type[i]) not in (JointType.FREE, JointType.FIXED_TO_WORLD)
    ]  # fmt: skip
    if bad_roots:
        raise ValueError(f"RobotModel {model.name!r}: root bodies {bad_roots} must be FREE or FIXED_TO_WORLD")
    bad = [
        model.body_names[i] for i in np.flatnonzero(~roots)
        if int(joint_type[i]) not in (JointType.REVOLUTE, JointType.PRISMATIC)
    ]  # fmt: skip
    if bad:
        raise ValueError(f"RobotModel {model.name!r}: bodies {bad} need a REVOLUTE or PRISMATIC joint")
    nj = int(np.count_nonzero(~roots))
    if len(model.joint_names) != nj:
        raise ValueError(
            f"RobotModel {model.name!r}: {len(model.joint_names)} joint_names for {nj} moving joints"
        )
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    if (model.nq, model.nv) != (nq, nv):
        raise ValueError(f"RobotModel {model.name!r}: nq, nv = {model.nq}, {model.nv}; expected {nq}, {nv}")
    if not (np.array_equal(model.q_index, q_index) and np.array_equal(model.v_index, v_index)):
        raise ValueError(f"RobotModel {model.name!r}: q_index, v_index must follow body order (coordinate_indices)")
    if not np.all(np.isfinite(model.mass)) or np.any(np.asarray(model.mass) < 0.0):
        raise ValueError(f"RobotModel {model.name!r}: masses must be finite and >= 0")
    for name in ("lower", "upper", "velocity", "effort", "k_velocity"):
        if np.shape(getattr(model.limits, name)) != (nj,):
            raise ValueError(f"RobotModel {model.name!r}: limits.{name} must have shape ({nj},)")
    for name in ("damping", "friction"):
        if np.shape(getattr(model.joint_dynamics, name)) != (nj,):
            raise ValueError(f"RobotModel {model.name!r}: joint_dynamics.{name} must have shape ({nj},)")
    for frame in model.frames.values():
        if not 0 <= frame.body < nb:
            raise ValueError(f"RobotModel {model.name!r}: frame {frame.name!r} on unknown body {frame.body}")


def _validate_joint_parameters(model: RobotModel) -> None:
    """Velocity-limit gains, damping and friction must be finite and >= 0; ValueError names the joint."""
    for label, values in (
        ("limits.k_velocity", model.limits.k_velocity),
        ("joint_dynamics.damping", model.joint_dynamics.damping),
        ("joint_dynamics.friction", model.joint_dynamics.friction),
    ):
        values = np.asarray(values, dtype=float)
        bad = [j for j in range(len(values)) if not (np.isfinite(values[j]) and values[j] >= 0.0)]
        if bad:
            listed = ", ".join(f"{model.joint_names[j]} ({float(values[j])!r})" for j in bad)
            raise ValueError(f"RobotModel {model.name!r}: {label} must be finite and >= 0; joints: {listed}")
