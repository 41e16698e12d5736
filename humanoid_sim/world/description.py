"""The world: ground, static shapes, free rigid objects and robots (frozen, validated).

Frames: world (z up, docs/conventions.md). An element's pose is its body frame's: origin
``position`` [m] (3,), orientation ``rpy`` [rad] (3,) (URDF roll-pitch-yaw, R = Rz Ry Rx).
A free object's velocity is the twist of its body frame origin in the world frame:
``linear_velocity`` [m/s] (3,), ``angular_velocity`` [rad/s] (3,). Material: see
humanoid_sim.contact.environment.Material.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation
from humanoid_sim.contact.methods import method_index
from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world.shape import Shape

__all__ = ["FreeObject", "RobotEntry", "StaticShape", "World"]


def _vector(owner: str, name: str, value: object, n: int = 3) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise InvalidValueError(f"{owner}: {name} must be {n} finite numbers, got {value!r}")
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class StaticShape:
    """A shape fixed in the world. name: its label in contact reports."""

    name: str
    shape: Shape
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rpy: np.ndarray = field(default_factory=lambda: np.zeros(3))
    material: Material = field(default_factory=Material)

    def __post_init__(self) -> None:
        where = f"static shape {self.name!r}"
        object.__setattr__(self, "position", _vector(where, "position", self.position))
        object.__setattr__(self, "rpy", _vector(where, "rpy", self.rpy))

    @property
    def rotation(self) -> np.ndarray:
        """R_world_shape, (3, 3)."""
        return rpy_to_rotation(self.rpy)


@dataclass(frozen=True, eq=False)
class FreeObject:
    """A free rigid body: its shape, mass [kg], centre of mass ``com`` in its frame [m] (3,),
    ``inertia`` about the centre of mass in its frame [kg m^2] (3, 3), initial pose and twist
    (module docstring) and material."""

    name: str
    shape: Shape
    mass: float
    inertia: np.ndarray
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rpy: np.ndarray = field(default_factory=lambda: np.zeros(3))
    linear_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    material: Material = field(default_factory=Material)

    def __post_init__(self) -> None:
        where = f"object {self.name!r}"
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise InvalidValueError(f"{where}: mass = {self.mass!r} must be finite and > 0 [kg]")
        object.__setattr__(self, "mass", float(self.mass))
        for name in ("com", "position", "rpy", "linear_velocity", "angular_velocity"):
            object.__setattr__(self, name, _vector(where, name, getattr(self, name)))
        inertia = np.asarray(self.inertia, dtype=float)
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise InvalidValueError(f"{where}: inertia must be a finite 3 x 3 matrix [kg m^2]")
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * max(1.0, np.abs(inertia).max())):
            raise InvalidValueError(f"{where}: inertia must be symmetric, got {inertia.tolist()}")
        principal = np.linalg.eigvalsh(inertia)
        tol = 1e-9 * principal.max()
        if principal.min() <= 0 or principal[0] + principal[1] < principal[2] - tol:
            raise InvalidValueError(
                f"{where}: inertia principal moments {principal.tolist()} must be > 0 and obey the triangle"
                " inequality (each at most the sum of the other two)"
            )
        inertia = 0.5 * (inertia + inertia.T)
        inertia.setflags(write=False)
        object.__setattr__(self, "inertia", inertia)

    @property
    def rotation(self) -> np.ndarray:
        """R_world_object at the start, (3, 3)."""
        return rpy_to_rotation(self.rpy)


@dataclass(frozen=True, eq=False)
class RobotEntry:
    """A robot of the world.

    name: the robot's name in the world (letters, digits, '_'); a later robot's links,
    joints and frames are named ``<name>/<own name>`` in the world's model. urdf: a URDF file path, or a
    path inside the package's share directory (e.g. ``urdf/humanoid.urdf``). initial_pose:
    a pose name of config/initial_poses.yaml (checked when the robot is built), or None.
    base_position [m]: (x, y) with the robot resting on the ground (its lowest collision point
    at the ground's height), or (x, y, z) with the base origin at height z; base_rpy [rad]
    (3,): the base orientation; both override the pose's.
    """

    name: str
    urdf: str
    initial_pose: str | None = None
    base_position: np.ndarray | None = None
    base_rpy: np.ndarray | None = None

    def __post_init__(self) -> None:
        where = f"robot {self.name!r}"
        if not self.urdf:
            raise InvalidValueError(f"{where}: urdf must name a URDF file")
        if self.base_position is not None:
            n = 2 if np.size(self.base_position) == 2 else 3
            object.__setattr__(self, "base_position", _vector(where, "base_position", self.base_position, n))
        if self.base_rpy is not None:
            object.__setattr__(self, "base_rpy", _vector(where, "base_rpy", self.base_rpy))


@dataclass(frozen=True, eq=False)
class World:
    """Everything simulated: ground (None for none), static shapes, free objects, robots.
    Names are unique across all of them. contact_method: how its contacts are solved
    (contact/methods.py; None: the simulator's configuration decides)."""

    ground: GroundPlane | None = field(default_factory=GroundPlane)
    static: tuple[StaticShape, ...] = ()
    objects: tuple[FreeObject, ...] = ()
    robots: tuple[RobotEntry, ...] = ()
    default_material: Material = field(default_factory=Material)
    contact_method: str | None = None

    def __post_init__(self) -> None:
        if self.contact_method is not None:
            method_index(self.contact_method)  # UnknownNameError lists the methods
        names = self.names()
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InvalidValueError(f"world: duplicate names {dup}; ground, static shapes, objects and robots need unique names")

    def names(self) -> list[str]:
        """The names of the ground, static shapes, objects and robots, in that order."""
        ground = [self.ground.name] if self.ground is not None else []
        return ground + [s.name for s in self.static] + [o.name for o in self.objects] + [r.name for r in self.robots]

    def environment(self) -> Environment:
        """The ground and the static boxes as the static ``Environment`` the contact
        detector takes (other static shapes need the narrow phase)."""
        boxes = tuple(
            StaticBox(s.name, s.position, s.rpy, s.shape.size, s.material) for s in self.static if s.shape.kind == ShapeKind.BOX
        )
        return Environment(ground=self.ground, boxes=boxes)
