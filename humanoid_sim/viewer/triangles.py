"""Triangle meshes of the visuals, grouped in batches that share one mesh.

A batch is one mesh drawn at several poses (the browser draws it as one instanced mesh, so
a frame of the view moves the whole robot with two messages per batch): boxes share a unit
cube, cylinders a unit cylinder and spheres a unit sphere, each instance scaled per axis;
a mesh file is one batch of all visuals that use it. Capsules are one batch each (their
caps do not scale per axis). Mesh files: STL, OBJ, PLY read by trimesh; COLLADA (.dae) and
files trimesh cannot read are drawn as the convex hull of their vertices (what the
simulator collides with).

Vertices are in the instance's visual frame before its scale [m], float32 (V, 3); faces
counter-clockwise seen from outside, uint32 (F, 3).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from humanoid_sim.model.collada_points import collada_vertex_positions
from humanoid_sim.model.errors import UrdfError
from humanoid_sim.viewer.visuals import VisualShape

__all__ = ["VisualBatch", "unit_box", "unit_cylinder", "unit_sphere", "visual_batches"]

CYLINDER_SECTIONS = 24


class VisualBatch(NamedTuple):
    """vertices (V, 3) float32, faces (F, 3) uint32: the shared mesh;
    members: index of each instance in the visuals tuple, (n,) int;
    scales: per-axis scale of each instance, (n, 3) float32;
    colors: RGB of each instance, (n, 3) uint8; opacity: of the whole batch in [0, 1]."""

    vertices: np.ndarray
    faces: np.ndarray
    members: np.ndarray
    scales: np.ndarray
    colors: np.ndarray
    opacity: float


def unit_box() -> tuple[np.ndarray, np.ndarray]:
    """Cube of edge 1 centred at the origin, four vertices per face (sharp edges when lit)."""
    vertices, faces = [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            u, v = (axis + 1) % 3, (axis + 2) % 3
            base = len(vertices)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u], p[v] = 0.5 * sign, 0.5 * a, 0.5 * b
                vertices.append(p)
            quad = [(0, 1, 2), (0, 2, 3)] if sign > 0 else [(0, 2, 1), (0, 3, 2)]
            faces.extend([(base + i, base + j, base + k) for i, j, k in quad])
    return np.array(vertices, dtype=np.float32), np.array(faces, dtype=np.uint32)


def unit_cylinder(sections: int = CYLINDER_SECTIONS) -> tuple[np.ndarray, np.ndarray]:
    """Cylinder of radius 1 and length 1 about z, centred; caps with vertices of their own."""
    angle = np.linspace(0.0, 2.0 * np.pi, sections, endpoint=False)
    ring = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    n = sections
    side = np.concatenate([np.column_stack([ring, np.full(n, -0.5)]), np.column_stack([ring, np.full(n, 0.5)])])
    caps = np.concatenate([side, [[0.0, 0.0, -0.5], [0.0, 0.0, 0.5]]])
    vertices = np.concatenate([side, caps]).astype(np.float32)
    faces = []
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, n + j), (i, n + j, n + i)]
        c = 2 * n  # cap vertices start here
        faces += [(c + 2 * n, c + j, c + i), (c + 2 * n + 1, c + n + i, c + n + j)]
    return vertices, np.array(faces, dtype=np.uint32)


def unit_sphere(subdivisions: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Icosphere of radius 1."""
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.asarray(sphere.vertices, dtype=np.float32), np.asarray(sphere.faces, dtype=np.uint32)


def _capsule(radius: float, length: float) -> tuple[np.ndarray, np.ndarray]:
    import trimesh

    capsule = trimesh.creation.capsule(height=length, radius=radius, count=[CYLINDER_SECTIONS, CYLINDER_SECTIONS])
    return np.asarray(capsule.vertices, dtype=np.float32), np.asarray(capsule.faces, dtype=np.uint32)


def _hull(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of the convex hull of points (k, 3), outward."""
    from scipy.spatial import ConvexHull

    points = np.asarray(points, dtype=float)
    if len(points) < 4:
        raise UrdfError(f"a convex hull needs 4 points, got {len(points)}")
    hull = ConvexHull(points)
    faces = hull.simplices.copy()
    centre = points[hull.vertices].mean(axis=0)
    a, b, c = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - centre) < 0.0
    faces[inward] = faces[inward][:, ::-1]
    return points.astype(np.float32), faces.astype(np.uint32)


@functools.lru_cache(maxsize=64)
def _mesh_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    if not Path(path).is_file():
        raise UrdfError(f"mesh {path!r}: file not found")
    if not path.lower().endswith(".dae"):
        import trimesh

        trimesh_log = logging.getLogger("trimesh")
        previous = trimesh_log.level
        trimesh_log.setLevel(logging.ERROR)
        try:
            mesh = trimesh.load(path, force="mesh", process=False)
            if len(getattr(mesh, "faces", ())):
                return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.uint32)
        except Exception:  # noqa: BLE001 - trimesh raises many kinds; the hull below is the fallback
            pass
        finally:
            trimesh_log.setLevel(previous)
        raise UrdfError(f"mesh {path!r}: cannot be read")
    return _hull(collada_vertex_positions(Path(path)))


def _mesh_and_scale(visual: VisualShape) -> tuple[object, tuple[np.ndarray, np.ndarray] | None, np.ndarray]:
    """(batch key, mesh or None for a shared unit mesh, per-axis scale) of one visual."""
    size = visual.size
    if visual.kind == "box":
        return "box", None, size
    if visual.kind == "cylinder":
        return "cylinder", None, np.array([size[0], size[0], size[1]])
    if visual.kind == "sphere":
        return "sphere", None, np.full(3, size[0])
    if visual.kind == "capsule":
        return ("capsule", float(size[0]), float(size[1])), _capsule(float(size[0]), float(size[1])), np.ones(3)
    if visual.mesh_path is not None:
        return ("mesh", str(visual.mesh_path)), _mesh_file(str(visual.mesh_path)), size
    return ("hull", visual.hull.tobytes()), _hull(visual.hull), size


_UNIT = {"box": unit_box, "cylinder": unit_cylinder, "sphere": unit_sphere}


def visual_batches(visuals: Sequence[VisualShape]) -> tuple[VisualBatch, ...]:
    """The visuals grouped into batches (first appearance order). A mesh file that cannot be
    read is drawn as a box of its scale's size, with one warning naming it."""
    groups: dict[object, tuple[tuple[np.ndarray, np.ndarray], list[int], list[np.ndarray], list[np.ndarray]]] = {}
    for index, visual in enumerate(visuals):
        try:
            key, mesh, scale = _mesh_and_scale(visual)
        except (UrdfError, ValueError) as exc:
            logging.getLogger(__name__).warning("link %r: %s; drawn as a box", visual.link, exc)
            key, mesh, scale = "box", None, np.full(3, 0.05)
        if key not in groups:
            groups[key] = (mesh if mesh is not None else _UNIT[key](), [], [], [])
        _, members, scales, rgba = groups[key]
        members.append(index)
        scales.append(np.asarray(scale, dtype=float))
        rgba.append(visual.rgba)
    batches = []
    for (vertices, faces), members, scales, rgba in groups.values():
        rgba_array = np.array(rgba)
        batches.append(
            VisualBatch(
                vertices, faces, np.array(members), np.array(scales, dtype=np.float32),
                np.clip(np.round(rgba_array[:, :3] * 255.0), 0, 255).astype(np.uint8), float(rgba_array[:, 3].min()),
            )
        )
    return tuple(batches)
