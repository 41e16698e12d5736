"""The geometry of a body of the world: box, sphere, cylinder, capsule or convex mesh.

Sizes follow ``ShapeKind`` (humanoid_sim.model.robot_model): BOX (3,) full edge lengths;
SPHERE (radius,); CYLINDER and CAPSULE (radius, length) with the axis along the shape's z
(a capsule's length is its segment's); MESH: the convex hull of ``vertices`` (n, 3). Units:
m. The shape frame is the body frame; a mesh's centre of mass may lie off its origin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_sim.contact.convex_shapes import ShapeSpec, polytope_faces
from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world.inertia import (
    MassProperties,
    box_inertia,
    capsule_inertia,
    capsule_volume,
    cylinder_inertia,
    mesh_mass_properties,
    sphere_inertia,
)

__all__ = ["SIZE_COUNT", "Shape"]

SIZE_COUNT = {ShapeKind.BOX: 3, ShapeKind.SPHERE: 1, ShapeKind.CYLINDER: 2, ShapeKind.CAPSULE: 2, ShapeKind.MESH: 0}


@dataclass(frozen=True, eq=False)
class Shape:
    """kind: ShapeKind; size: see the module docstring [m]; vertices: MESH only, the hull's
    points (n, 3) [m]; source: where a mesh came from (file name), for messages."""

    kind: ShapeKind
    size: np.ndarray
    vertices: np.ndarray | None = None
    source: str = ""

    def __post_init__(self) -> None:
        kind = ShapeKind(self.kind)
        object.__setattr__(self, "kind", kind)
        size = np.asarray(self.size, dtype=float).reshape(-1)
        need = SIZE_COUNT[kind]
        if size.shape != (need,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
            raise InvalidValueError(f"{kind.name.lower()} size must be {need} finite numbers > 0 [m], got {size.tolist()}")
        size.setflags(write=False)
        object.__setattr__(self, "size", size)
        if kind == ShapeKind.MESH:
            if self.vertices is None:
                raise InvalidValueError(f"mesh {self.source!r}: vertices are required")
            verts, faces, _ = polytope_faces(self.vertices)
            verts.setflags(write=False)
            object.__setattr__(self, "vertices", verts)
            tri = np.array([[f[0], f[i], f[i + 1]] for f in faces for i in range(1, len(f) - 1)], dtype=np.int64)
            tri.setflags(write=False)
            object.__setattr__(self, "_triangles", tri)
        elif self.vertices is not None:
            raise InvalidValueError(f"{kind.name.lower()}: vertices are for a mesh only")

    @property
    def triangles(self) -> np.ndarray:
        """A mesh's hull as triangles (t, 3) into ``vertices``, counter-clockwise from outside."""
        return getattr(self, "_triangles", np.zeros((0, 3), dtype=np.int64))

    def volume(self) -> float:
        """Volume [m^3]."""
        k, s = self.kind, self.size
        if k == ShapeKind.BOX:
            return float(np.prod(s))
        if k == ShapeKind.SPHERE:
            return 4.0 / 3.0 * math.pi * s[0] ** 3
        if k == ShapeKind.CYLINDER:
            return math.pi * s[0] ** 2 * s[1]
        if k == ShapeKind.CAPSULE:
            return capsule_volume(s[0], s[1])
        return mesh_mass_properties(self.vertices, self.triangles, density=1.0).volume

    def mass_properties(self, mass: float | None = None, density: float | None = None) -> MassProperties:
        """Mass, centre of mass and inertia about it (shape frame) of the solid shape of
        uniform density; give mass [kg] or density [kg/m^3]."""
        if (mass is None) == (density is None):
            raise InvalidValueError("give exactly one of mass [kg] and density [kg/m^3]")
        if self.kind == ShapeKind.MESH:
            return mesh_mass_properties(self.vertices, self.triangles, mass=mass, density=density)
        volume = self.volume()
        m = float(mass) if mass is not None else float(density) * volume
        k, s = self.kind, self.size
        if k == ShapeKind.BOX:
            inertia = box_inertia(m, s)
        elif k == ShapeKind.SPHERE:
            inertia = sphere_inertia(m, s[0])
        elif k == ShapeKind.CYLINDER:
            inertia = cylinder_inertia(m, s[0], s[1])
        else:
            inertia = capsule_inertia(m, s[0], s[1])
        return MassProperties(m, np.zeros(3), inertia, volume)

    def spec(self) -> ShapeSpec:
        """The shape for ``convex_shapes.pack_shapes``."""
        return ShapeSpec(int(self.kind), np.asarray(self.size), None if self.vertices is None else np.asarray(self.vertices))
