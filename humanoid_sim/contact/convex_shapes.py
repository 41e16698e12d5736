"""Convex collision shapes packed into flat arrays for the compiled narrow phase.

A ``ShapeSet`` holds any number of shapes, each in its own *shape frame* (the frame its
pose ``R (3, 3), p (3,)`` places in the world): boxes and convex hulls as polytopes
(vertices, polygon faces with outward unit normals, unique edge directions), spheres,
capsules and cylinders by their radius and half length along the shape's z axis (the
``ShapeKind`` conventions of ``humanoid_sim.model.robot_model``). Shape ``s`` owns the rows
``vert_start[s]:vert_start[s + 1]`` of ``vertices`` (and likewise faces and edge
directions), so a kernel reads one shape through slices, without allocating.

Units: m. Frames: every array is in the shape frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model.robot_model import ShapeKind

__all__ = ["BOX", "CAPSULE", "CYLINDER", "MESH", "SPHERE", "ShapeSet", "ShapeSpec", "pack_shapes", "polytope_faces"]

BOX, SPHERE, CYLINDER, CAPSULE, MESH = (int(k) for k in (ShapeKind.BOX, ShapeKind.SPHERE, ShapeKind.CYLINDER, ShapeKind.CAPSULE, ShapeKind.MESH))


class ShapeSpec(NamedTuple):
    """One convex shape as the user gives it.

    kind: a ``ShapeKind`` (BOX, SPHERE, CYLINDER, CAPSULE, MESH).
    size: BOX (3,) full edge lengths; SPHERE (radius,); CYLINDER and CAPSULE (radius, length)
        with the axis along the shape's z (a capsule's length is that of its segment) [m].
    vertices: MESH only: points whose convex hull is the shape, shape (n, 3) [m].
    """

    kind: int
    size: np.ndarray
    vertices: np.ndarray | None = None


class ShapeSet(NamedTuple):
    """Shapes packed for the narrow phase (all arrays C-contiguous; n shapes).

    kind: ShapeKind per shape, (n,) int64.
    radius: sphere, capsule, cylinder radius, 0 for polytopes [m], (n,).
    half_length: half length of a capsule's segment or a cylinder along z, else 0 [m], (n,).
    bound: radius of a sphere about the shape-frame origin holding the shape [m], (n,).
    vert_start: (n + 1,) int64; vertices: polytope vertices (V, 3) [m].
    face_start: (n + 1,) int64; face_normal: outward unit normals (F, 3).
    face_vert_start: (F + 1,) int64; face_vert: indices into ``vertices`` (global), each
        face's vertices counter-clockwise about its normal.
    edge_start: (n + 1,) int64; edge_dir: unit edge directions, one per parallel class (E, 3).
    """

    kind: np.ndarray
    radius: np.ndarray
    half_length: np.ndarray
    bound: np.ndarray
    vert_start: np.ndarray
    vertices: np.ndarray
    face_start: np.ndarray
    face_normal: np.ndarray
    face_vert_start: np.ndarray
    face_vert: np.ndarray
    edge_start: np.ndarray
    edge_dir: np.ndarray


def _box_polytope(size: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Vertices, faces (+x, -x, +y, -y, +z, -z; ccw) and normals of a box of full size (3,)."""
    h = 0.5 * size
    v = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float) * h
    # vertex index = 4 ix + 2 iy + iz with i = 0 for -, 1 for +
    faces = [
        np.array([4, 6, 7, 5]), np.array([0, 1, 3, 2]),  # +x, -x
        np.array([2, 3, 7, 6]), np.array([0, 4, 5, 1]),  # +y, -y
        np.array([1, 5, 7, 3]), np.array([0, 2, 6, 4]),  # +z, -z
    ]  # fmt: skip
    normals = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    return v, faces, normals


def polytope_faces(points: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The convex hull of ``points`` (n, 3) as polygons: (vertices (m, 3), faces (each an index
    array into vertices, counter-clockwise about its normal), unit outward normals (F, 3)).
    Coplanar hull triangles are merged into one face (planes equal within ``tol`` [m])."""
    from scipy.spatial import ConvexHull, QhullError

    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(pts) < 4 or not np.all(np.isfinite(pts)):
        raise InvalidValueError(f"a convex mesh needs at least 4 finite vertices, got {len(pts)}")
    try:
        hull = ConvexHull(pts)
    except QhullError as exc:
        raise InvalidValueError(f"the mesh vertices span no volume (flat or degenerate): {str(exc).splitlines()[0]}") from None
    used = np.unique(hull.simplices)
    remap = -np.ones(len(pts), dtype=np.int64)
    remap[used] = np.arange(len(used))
    verts = pts[used]
    scale = max(1.0, float(np.abs(verts).max()))
    planes: list[tuple[np.ndarray, float, set[int]]] = []
    for simplex, eq in zip(hull.simplices, hull.equations):
        n, off = eq[:3], -eq[3]
        for pn, poff, idx in planes:
            if np.dot(pn, n) > 1.0 - 1e-9 and abs(poff - off) <= tol * scale:
                idx.update(int(remap[i]) for i in simplex)
                break
        else:
            planes.append((n / np.linalg.norm(n), off, {int(remap[i]) for i in simplex}))
    faces, normals = [], []
    for n, _, idx in planes:
        ids = np.array(sorted(idx), dtype=np.int64)
        c = verts[ids].mean(axis=0)
        e1 = verts[ids[0]] - c
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
        ang = np.arctan2((verts[ids] - c) @ e2, (verts[ids] - c) @ e1)
        faces.append(ids[np.argsort(ang)])
        normals.append(n)
    return verts, faces, np.array(normals)


def _edge_directions(verts: np.ndarray, faces: list[np.ndarray]) -> np.ndarray:
    dirs: list[np.ndarray] = []
    for f in faces:
        for a, b in zip(f, np.roll(f, -1)):
            e = verts[b] - verts[a]
            e = e / np.linalg.norm(e)
            if all(abs(float(np.dot(e, d))) < 1.0 - 1e-9 for d in dirs):
                dirs.append(e)
    return np.array(dirs).reshape(-1, 3)


def pack_shapes(specs: Sequence[ShapeSpec]) -> ShapeSet:
    """Pack shapes (each a ``ShapeSpec``) into one ``ShapeSet``; raises InvalidValueError /
    UnknownNameError naming the shape index for a bad kind or size."""
    kinds, radius, half, bound = [], [], [], []
    verts_all, normals_all, face_vert_all, edges_all = [], [], [], []
    vstart, fstart, fvstart, estart = [0], [0], [0], [0]
    nverts = 0
    for i, spec in enumerate(specs):
        try:
            kind = int(ShapeKind(int(spec.kind)))
        except ValueError:
            raise UnknownNameError("shape kind", str(spec.kind), [k.name for k in ShapeKind], f"(shape {i})") from None
        size = np.asarray(spec.size, dtype=float).reshape(-1)
        need = {BOX: 3, SPHERE: 1, CYLINDER: 2, CAPSULE: 2, MESH: 0}[kind]
        if size.shape[0] < need or not np.all(np.isfinite(size[:need])) or np.any(size[:need] <= 0):
            raise InvalidValueError(f"shape {i} ({ShapeKind(kind).name}): size must hold {need} finite numbers > 0, got {size.tolist()}")
        r = hl = 0.0
        v = np.zeros((0, 3))
        faces: list[np.ndarray] = []
        normals = np.zeros((0, 3))
        if kind == BOX:
            v, faces, normals = _box_polytope(size[:3])
            b = float(np.linalg.norm(0.5 * size[:3]))
        elif kind == MESH:
            if spec.vertices is None:
                raise InvalidValueError(f"shape {i} (MESH): vertices are required")
            v, faces, normals = polytope_faces(spec.vertices)
            b = float(np.linalg.norm(v, axis=1).max())
        elif kind == SPHERE:
            r = float(size[0])
            b = r
        else:
            r, hl = float(size[0]), 0.5 * float(size[1])
            b = float(np.hypot(r, hl)) if kind == CYLINDER else r + hl
        kinds.append(kind)
        radius.append(r)
        half.append(hl)
        bound.append(b)
        verts_all.append(v)
        normals_all.append(normals)
        for f in faces:
            face_vert_all.append(np.asarray(f, dtype=np.int64) + nverts)
            fvstart.append(fvstart[-1] + len(f))
        edges_all.append(_edge_directions(v, faces) if faces else np.zeros((0, 3)))
        nverts += len(v)
        vstart.append(nverts)
        fstart.append(fstart[-1] + len(faces))
        estart.append(estart[-1] + len(edges_all[-1]))

    def cat(parts: list[np.ndarray], width: int) -> np.ndarray:
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros((0, width)), dtype=float)

    return ShapeSet(
        kind=np.array(kinds, dtype=np.int64),
        radius=np.array(radius, dtype=float),
        half_length=np.array(half, dtype=float),
        bound=np.array(bound, dtype=float),
        vert_start=np.array(vstart, dtype=np.int64),
        vertices=cat(verts_all, 3).reshape(-1, 3),
        face_start=np.array(fstart, dtype=np.int64),
        face_normal=cat(normals_all, 3).reshape(-1, 3),
        face_vert_start=np.array(fvstart, dtype=np.int64),
        face_vert=np.concatenate(face_vert_all).astype(np.int64) if face_vert_all else np.zeros(0, np.int64),
        edge_start=np.array(estart, dtype=np.int64),
        edge_dir=cat(edges_all, 3).reshape(-1, 3),
    )
