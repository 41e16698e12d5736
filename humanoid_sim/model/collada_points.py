"""Vertex positions of a COLLADA (.dae) file, placed by its visual scene.

A convex hull needs only the points of a mesh, so this reads just what places
them: each ``<instance_geometry>`` of the scene's node tree (recursing into
``<instance_node>``), the node transforms (``matrix``, ``translate``,
``rotate``, ``scale``, applied in document order), the positions that the
geometry's face primitives index, and ``<asset><unit meter>``. Like assimp (Pinocchio/coal) and trimesh,
``<up_axis>`` is not applied. No dependency beyond the standard library and
numpy (trimesh would need pycollada for .dae).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from humanoid_sim.model.errors import UrdfError

_FACE_PRIMITIVES = ("triangles", "polylist", "polygons", "tristrips", "trifans")


def _local(tag: str) -> str:
    """Tag without its XML namespace (COLLADA 1.4 and 1.5 use different ones)."""
    return tag.rsplit("}", 1)[-1]


def _numbers(element: ET.Element, n: int | None, what: str) -> np.ndarray:
    try:
        values = np.array((element.text or "").split(), dtype=float)
    except ValueError:
        raise UrdfError(f"{what}: malformed number") from None
    if n is not None and values.size != n:
        raise UrdfError(f"{what}: expected {n} numbers, got {values.size}")
    return values


def _node_transform(node: ET.Element, what: str) -> np.ndarray:
    """Product of a node's transform elements, in document order, shape (4, 4)."""
    X = np.eye(4)
    for child in node:
        tag = _local(child.tag)
        T = np.eye(4)
        if tag == "matrix":
            T = _numbers(child, 16, f"{what} <matrix>").reshape(4, 4)  # row-major
        elif tag == "translate":
            T[:3, 3] = _numbers(child, 3, f"{what} <translate>")
        elif tag == "scale":
            T[:3, :3] = np.diag(_numbers(child, 3, f"{what} <scale>"))
        elif tag == "rotate":
            x, y, z, degrees = _numbers(child, 4, f"{what} <rotate>")
            axis = np.array([x, y, z])
            norm = float(np.linalg.norm(axis))
            if norm > 0.0:
                k = axis / norm
                K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
                angle = math.radians(degrees)
                T[:3, :3] = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
        else:
            continue
        X = X @ T
    return X


def collada_vertex_positions(path: Path) -> np.ndarray:
    """All vertex positions of the COLLADA file at ``path`` in its root frame [m], shape (k, 3).

    Raises UrdfError naming the file when it is not COLLADA or holds no geometry.
    """
    what = f"mesh {str(path)!r}"
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise UrdfError(f"{what}: cannot be read ({exc})") from None
    if _local(root.tag) != "COLLADA":
        raise UrdfError(f"{what}: root element is <{_local(root.tag)}>, expected <COLLADA>")
    by_id = {el.get("id"): el for el in root.iter() if el.get("id")}

    unit = 1.0
    for el in root.iter():
        if _local(el.tag) == "unit" and el.get("meter"):
            unit = float(el.get("meter"))
            break

    def position_array(vertices: ET.Element) -> np.ndarray:
        """The POSITION source of a <vertices> element, shape (n, 3)."""
        for inp in vertices:
            if _local(inp.tag) != "input" or inp.get("semantic") != "POSITION":
                continue
            source = by_id.get((inp.get("source") or "").lstrip("#"))
            arrays = (
                [el for el in source.iter() if _local(el.tag) == "float_array"] if source is not None else []
            )
            if not arrays:
                raise UrdfError(f"{what}: POSITION source {inp.get('source')!r} has no float_array")
            stride = 3
            for el in source.iter():
                if _local(el.tag) == "accessor" and el.get("stride"):
                    stride = int(el.get("stride"))
            return _numbers(arrays[0], None, f"{what} <float_array>").reshape(-1, stride)[:, :3]
        raise UrdfError(f"{what}: <vertices> without a POSITION input")

    def geometry_points(geometry: ET.Element) -> np.ndarray:
        """Positions referenced by the geometry's face primitives, shape (k, 3).

        Several geometries may share one position array and use parts of it, so
        only the indexed positions count (as for trimesh and assimp).
        """
        points = []
        for mesh in (el for el in geometry if _local(el.tag) == "mesh"):
            for primitive in mesh:
                if _local(primitive.tag) not in _FACE_PRIMITIVES:
                    continue
                inputs = [el for el in primitive if _local(el.tag) == "input"]
                if not inputs:
                    continue
                stride = 1 + max(int(el.get("offset", "0")) for el in inputs)
                vertex_inputs = [el for el in inputs if el.get("semantic") == "VERTEX"]
                if not vertex_inputs:
                    continue
                offset = int(vertex_inputs[0].get("offset", "0"))
                vertices = by_id.get((vertex_inputs[0].get("source") or "").lstrip("#"))
                if vertices is None:
                    raise UrdfError(
                        f"{what}: VERTEX input refers to missing {vertex_inputs[0].get('source')!r}"
                    )
                positions = position_array(vertices)
                index_lists = [
                    _numbers(el, None, f"{what} <p>").astype(np.int64)
                    for el in primitive.iter()
                    if _local(el.tag) == "p"
                ]
                if not index_lists:
                    continue
                indices = np.concatenate(index_lists)[offset::stride]
                if indices.size and (indices.min() < 0 or indices.max() >= len(positions)):
                    raise UrdfError(f"{what}: vertex index out of range")
                points.append(positions[np.unique(indices)])
        return np.concatenate(points) if points else np.zeros((0, 3))

    collected: list[np.ndarray] = []

    def visit(node: ET.Element, X_parent: np.ndarray, depth: int) -> None:
        if depth > 64:
            raise UrdfError(f"{what}: node hierarchy too deep (a cycle of <instance_node>?)")
        X = X_parent @ _node_transform(node, what)
        for child in node:
            tag = _local(child.tag)
            if tag == "node":
                visit(child, X, depth + 1)
            elif tag == "instance_node":
                target = by_id.get((child.get("url") or "").lstrip("#"))
                if target is not None:
                    visit(target, X, depth + 1)
            elif tag == "instance_geometry":
                geometry = by_id.get((child.get("url") or "").lstrip("#"))
                if geometry is None:
                    raise UrdfError(f"{what}: <instance_geometry> refers to missing {child.get('url')!r}")
                p = geometry_points(geometry)
                collected.append(p @ X[:3, :3].T + X[:3, 3])

    scene = None
    for el in root:
        if _local(el.tag) == "scene":
            for inst in el:
                if _local(inst.tag) == "instance_visual_scene":
                    scene = by_id.get((inst.get("url") or "").lstrip("#"))
    if scene is None:  # no scene: every geometry where it is defined
        for el in root.iter():
            if _local(el.tag) == "geometry":
                collected.append(geometry_points(el))
    else:
        for node in scene:
            if _local(node.tag) == "node":
                visit(node, np.eye(4), 0)
    points = np.concatenate(collected) if collected else np.zeros((0, 3))
    if points.shape[0] == 0:
        raise UrdfError(f"{what}: no vertex positions")
    return points * unit
