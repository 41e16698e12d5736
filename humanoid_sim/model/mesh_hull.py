"""Convex hulls of collision meshes (STL, OBJ, PLY via trimesh; DAE via collada_points).

Contacts only need the convex hull of a collision mesh, so a mesh enters the
model as the vertices of its hull, already scaled. Loading is cached per file.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import numpy as np

from humanoid_sim.model.collada_points import collada_vertex_positions
from humanoid_sim.model.errors import UrdfError

SUPPORTED_MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply")


def _trimesh_points(path: str) -> np.ndarray:
    """Vertices of an STL, OBJ or PLY file read by trimesh [mesh units], shape (k, 3)."""
    import trimesh

    # trimesh logs warnings for odd files; keep the console quiet, errors still raise.
    trimesh_log = logging.getLogger("trimesh")
    previous_level = trimesh_log.level
    trimesh_log.setLevel(logging.ERROR)
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many kinds; report them as one
        raise UrdfError(f"mesh {path!r}: cannot be read ({exc})") from exc
    finally:
        trimesh_log.setLevel(previous_level)
    return np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)


@functools.lru_cache(maxsize=256)
def _unit_hull_vertices(path: str, mtime_ns: int) -> np.ndarray:
    """Hull vertices of the unscaled mesh at ``path`` [mesh units], shape (k, 3)."""
    if path.lower().endswith(".dae"):
        points = collada_vertex_positions(Path(path))  # no pycollada needed
    else:
        points = _trimesh_points(path)
    if points.ndim != 2 or points.shape[0] == 0:
        raise UrdfError(f"mesh {path!r}: has no vertices")
    if points.shape[0] < 4:
        return points.copy()
    try:
        from scipy.spatial import ConvexHull

        hull = ConvexHull(points)
        vertices = points[hull.vertices]
    except Exception:  # flat or degenerate point set: keep the unique points
        vertices = np.unique(points, axis=0)
    vertices = np.ascontiguousarray(vertices)
    vertices.setflags(write=False)
    return vertices


def convex_hull_vertices(path: Path, scale: np.ndarray) -> np.ndarray:
    """Scaled convex hull vertices of the mesh file ``path`` [m], shape (k, 3).

    scale: per-axis ``<mesh scale>``, shape (3,).
    Raises UrdfError for a missing file or an unsupported format.
    """
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_MESH_SUFFIXES:
        raise UrdfError(
            f"mesh {str(path)!r}: unsupported format {suffix or '(none)'!r};"
            f" supported: {', '.join(SUPPORTED_MESH_SUFFIXES)}"
        )
    if not path.is_file():
        raise UrdfError(f"mesh {str(path)!r}: file not found")
    unit = _unit_hull_vertices(str(path.resolve()), path.stat().st_mtime_ns)
    return unit * np.asarray(scale, dtype=float)[None, :]
