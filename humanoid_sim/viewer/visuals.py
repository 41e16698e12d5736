"""The visual geometry of a robot: every URDF ``<visual>``, placed on the model body it moves with.

A URDF link merged into its parent by a fixed joint keeps its named frame in the model, so
each visual is placed as X_body_visual = X_body_link (the model's frame of the link) @ the
visual's ``<origin>``. Mesh files are resolved as the loader resolves collision meshes
(``package://``, ``file://``, relative paths; humanoid_sim.model.resource_paths).

Frames and units: X_body_visual (4, 4) in the body frame [m]; colours RGBA in [0, 1].
Size per kind: box (3,) full edge lengths; cylinder and capsule (radius, length), axis z;
sphere (radius,); mesh (3,) the URDF scale of the file's coordinates.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from humanoid_sim.model.errors import UrdfError
from humanoid_sim.model.resource_paths import resolve_uri
from humanoid_sim.model.robot_model import RobotModel, ShapeKind
from humanoid_sim.model.urdf_loader import _floats, _origin, _read_xml

__all__ = ["DEFAULT_RGBA", "VISUAL_KINDS", "VisualShape", "collision_visuals", "load_visuals"]

VISUAL_KINDS = ("box", "cylinder", "sphere", "capsule", "mesh")
DEFAULT_RGBA = np.array([0.7, 0.7, 0.72, 1.0])  # URDF visuals without a material


@dataclass(frozen=True)
class VisualShape:
    """One visual: link name, body index, kind (one of VISUAL_KINDS), X_body_visual (4, 4),
    size (see the module docstring), mesh_path (kind "mesh" read from a file, else None),
    rgba (4,), hull: for a "mesh" without a file, its convex hull vertices in the visual
    frame [m], shape (k, 3) (else (0, 3))."""

    link: str
    body: int
    kind: str
    X_body_visual: np.ndarray
    size: np.ndarray
    mesh_path: Path | None
    rgba: np.ndarray
    hull: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))

    def __post_init__(self) -> None:
        if self.kind not in VISUAL_KINDS:
            raise ValueError(f"visual of link {self.link!r}: kind {self.kind!r}; valid kinds: {', '.join(VISUAL_KINDS)}")
        for name in ("X_body_visual", "size", "rgba", "hull"):
            array = np.array(getattr(self, name), dtype=float)
            array.setflags(write=False)
            object.__setattr__(self, name, array)


def _material_colors(root: ET.Element) -> dict[str, np.ndarray]:
    """RGBA of the robot-level ``<material name=...><color rgba=.../></material>`` elements."""
    colors: dict[str, np.ndarray] = {}
    for material in root.findall("material"):
        color = material.find("color")
        if material.get("name") and color is not None:
            colors[material.get("name")] = _floats(color.get("rgba"), 4, f"material {material.get('name')!r} <color rgba>")
    return colors


def _visual_rgba(visual: ET.Element, named: dict[str, np.ndarray], what: str) -> np.ndarray:
    material = visual.find("material")
    if material is None:
        return DEFAULT_RGBA
    color = material.find("color")
    if color is not None:
        return _floats(color.get("rgba"), 4, f"{what} <color rgba>")
    return named.get(material.get("name") or "", DEFAULT_RGBA)


def _geometry(visual: ET.Element, what: str, base_dir: Path, package_paths: Sequence[str | os.PathLike[str]]):
    """(kind, size, mesh_path) of a visual's ``<geometry>``."""
    geometry = visual.find("geometry")
    if geometry is None or len(geometry) == 0:
        raise UrdfError(f"{what}: <geometry> missing or empty")
    shape = geometry[0]
    if shape.tag == "box":
        return "box", _floats(shape.get("size"), 3, f"{what} <box size>"), None
    if shape.tag == "sphere":
        return "sphere", _floats(shape.get("radius"), 1, f"{what} <sphere radius>"), None
    if shape.tag in ("cylinder", "capsule"):
        radius = _floats(shape.get("radius"), 1, f"{what} <{shape.tag} radius>")
        length = _floats(shape.get("length"), 1, f"{what} <{shape.tag} length>")
        return shape.tag, np.concatenate([radius, length]), None
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise UrdfError(f"{what}: <mesh> without filename")
        scale = _floats(shape.get("scale"), 3, f"{what} <mesh scale>", (1.0, 1.0, 1.0))
        try:
            path = resolve_uri(filename, base_dir, package_paths)
        except UrdfError as exc:
            raise UrdfError(f"{what}: {exc}") from None
        return "mesh", scale, path
    raise UrdfError(f"{what}: unknown geometry <{shape.tag}>; valid: box, sphere, cylinder, capsule, mesh")


def load_visuals(
    model: RobotModel, urdf: str | os.PathLike[str], package_paths: Sequence[str | os.PathLike[str]] = ()
) -> tuple[VisualShape, ...]:
    """Every ``<visual>`` of the URDF (file path or XML string) of ``model``, in document order.

    Links the model does not know (not loaded, e.g. a ``world`` link) are skipped. Raises
    UrdfError naming the element for bad geometry or an unresolvable ``package://`` URI; a
    mesh file that is missing is reported when it is drawn, not here.
    """
    root, base_dir = _read_xml(urdf)
    named = _material_colors(root)
    visuals: list[VisualShape] = []
    for link in root.findall("link"):
        name = link.get("name") or ""
        frame = model.frames.get(name)
        if frame is None:
            continue
        for k, visual in enumerate(link.findall("visual")):
            what = f"link {name!r} visual {visual.get('name') or k}"
            kind, size, mesh_path = _geometry(visual, what, base_dir, package_paths)
            visuals.append(
                VisualShape(
                    name, frame.body, kind, frame.X_body_frame @ _origin(visual, what), size, mesh_path,
                    _visual_rgba(visual, named, what),
                )
            )
    return tuple(visuals)


_COLLISION_KINDS = {ShapeKind.BOX: "box", ShapeKind.SPHERE: "sphere", ShapeKind.CYLINDER: "cylinder", ShapeKind.CAPSULE: "capsule"}


def collision_visuals(model: RobotModel, rgba: Sequence[float] = DEFAULT_RGBA) -> tuple[VisualShape, ...]:
    """The model's collision shapes drawn as visuals (for a model without its URDF text).

    Mesh shapes are drawn as their convex hull (kind "mesh", mesh_path None, size (1, 1, 1))."""
    visuals = []
    for shape in model.collision_shapes:
        kind = _COLLISION_KINDS.get(ShapeKind(shape.kind), "mesh")
        size = shape.size if kind != "mesh" else np.ones(3)
        visuals.append(
            VisualShape(shape.link_name, shape.body, kind, shape.X_body_shape, size, None, np.asarray(rgba), shape.vertices)
        )
    return tuple(visuals)
