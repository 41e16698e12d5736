"""Read a world from YAML (format: docs/world.md; config/environment.yaml is a world too).

Top-level sections: ``default_material``, ``ground``, ``boxes`` (static boxes, the
environment file's format), ``static`` (static shapes of any kind), ``objects`` (free rigid
bodies) and ``robots``. Units are in the key names (``_m``, ``_rad``, ``_deg``, ``_kg``,
``_kg_m3``, ``_m_s``, ``_rad_s``, ``_kg_m2``). A bad entry is refused with one
``WorldConfigError`` naming the entry and listing the valid keys or names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_sim.contact.environment import EnvironmentConfigError, GroundPlane, Material
from humanoid_sim.contact.methods import CONTACT_METHODS
from humanoid_sim.errors import HumanoidSimError, InvalidValueError
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world.description import FreeObject, RobotEntry, StaticShape, World
from humanoid_sim.world.shape import Shape

__all__ = ["SHAPE_KEYS", "WorldConfigError", "load_world", "world_from_dict"]


class WorldConfigError(InvalidValueError):
    """A bad world description; the message names the entry and lists the valid keys."""


SECTIONS = ("boxes", "contact_method", "default_material", "ground", "objects", "robots", "static")
SHAPE_KEYS = {  # the size keys of each shape
    "box": ("size_m",),
    "sphere": ("radius_m",),
    "cylinder": ("radius_m", "length_m"),
    "capsule": ("radius_m", "length_m"),
    "mesh": ("file", "scale"),
}
MATERIAL_KEYS = ("mu_d", "mu_s", "restitution")
POSE_KEYS = ("position_m", "rpy_deg", "rpy_rad")
STATIC_KEYS = ("material", "name", "shape", *POSE_KEYS)
OBJECT_KEYS = (*STATIC_KEYS, "angular_velocity_rad_s", "com_m", "density_kg_m3", "inertia_kg_m2", "linear_velocity_m_s", "mass_kg")
ROBOT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a robot entry's name: a prefix of names
ROBOT_KEYS = ("base_position_m", "base_rpy_deg", "base_rpy_rad", "initial_pose", "name", "urdf")
BOX_KEYS = ("material", "name", "size_m", *POSE_KEYS)
GROUND_KEYS = ("height_m", "material", "name")


def _listing(names) -> str:
    return ", ".join(sorted(names))


def _check_keys(raw: Mapping[str, Any], valid, where: str) -> None:
    unknown = sorted(set(raw) - set(valid))
    if unknown:
        raise WorldConfigError(f"unknown key {unknown[0]!r} in {where}; valid keys: {_listing(valid)}")


def _mapping(raw: object, where: str, valid) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise WorldConfigError(f"{where} must be a mapping with keys: {_listing(valid)}")
    _check_keys(raw, valid, where)
    return raw


def _numbers(raw: object, where: str, key: str, n: int) -> np.ndarray:
    try:
        arr = np.asarray(raw, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        arr = np.zeros(0)
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise WorldConfigError(f"{where}: {key} must be {n} finite number{'s' if n > 1 else ''}, got {raw!r}")
    return arr


def _number(raw: object, where: str, key: str) -> float:
    return float(_numbers(raw, where, key, 1)[0])


def _material(raw: object, where: str, default: Material) -> Material:
    if raw is None:
        return default
    raw = _mapping(raw, f"{where} material", MATERIAL_KEYS)
    values = {k: _number(raw[k], f"{where} material", k) if k in raw else getattr(default, k) for k in MATERIAL_KEYS}
    try:
        return Material(**values)
    except EnvironmentConfigError as exc:
        raise WorldConfigError(f"{where}: {exc}") from None


def _rpy(raw: Mapping[str, Any], where: str, rad: str = "rpy_rad", deg: str = "rpy_deg") -> np.ndarray:
    if rad in raw and deg in raw:
        raise WorldConfigError(f"{where}: give {rad} or {deg}, not both")
    if deg in raw:
        return np.radians(_numbers(raw[deg], where, deg, 3))
    return _numbers(raw.get(rad, [0.0, 0.0, 0.0]), where, rad, 3)


def _name(raw: object, section: str, index: int) -> str:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise WorldConfigError(f"{section}[{index}]: must be a mapping with a 'name'")
    return raw["name"]


def _shape(raw: Mapping[str, Any], where: str, valid_entry, base_dir: Path | None) -> Shape:
    kind = raw.get("shape")
    if kind not in SHAPE_KEYS:
        raise WorldConfigError(f"unknown shape {kind!r} in {where}; valid shapes: {_listing(SHAPE_KEYS)}")
    where = f"{where} ({kind})"
    _check_keys(raw, (*valid_entry, *SHAPE_KEYS[kind]), where)
    required = [k for k in SHAPE_KEYS[kind] if k != "scale"]
    missing = [k for k in required if k not in raw]
    if missing:
        raise WorldConfigError(f"{where}: missing {_listing(missing)}; a {kind} needs {_listing(required)}")
    try:
        if kind == "box":
            return Shape(ShapeKind.BOX, _numbers(raw["size_m"], where, "size_m", 3))
        if kind == "sphere":
            return Shape(ShapeKind.SPHERE, [_number(raw["radius_m"], where, "radius_m")])
        if kind in ("cylinder", "capsule"):
            size = [_number(raw["radius_m"], where, "radius_m"), _number(raw["length_m"], where, "length_m")]
            return Shape(ShapeKind.CYLINDER if kind == "cylinder" else ShapeKind.CAPSULE, size)
        scale = raw.get("scale", 1.0)
        scale = np.full(3, _number(scale, where, "scale")) if np.ndim(scale) == 0 else _numbers(scale, where, "scale", 3)
        path = _mesh_path(str(raw["file"]), base_dir, where)
        from humanoid_sim.model.mesh_hull import convex_hull_vertices

        return Shape(ShapeKind.MESH, np.zeros(0), convex_hull_vertices(path, scale), source=str(path))
    except WorldConfigError:
        raise
    except (HumanoidSimError, ValueError) as exc:
        raise WorldConfigError(f"{where}: {exc}") from None


def _mesh_path(name: str, base_dir: Path | None, where: str) -> Path:
    """A mesh file: absolute, next to the world file, or in the package's share directory."""
    from humanoid_sim.package_data import package_file

    path = Path(name)
    if path.is_absolute():
        return path
    if base_dir is not None and (base_dir / path).is_file():
        return base_dir / path
    try:
        return package_file(name)
    except HumanoidSimError as exc:
        raise WorldConfigError(f"{where}: mesh file {name!r} not found ({exc})") from None


def _static(raw: object, index: int, default: Material, base_dir: Path | None) -> StaticShape:
    name = _name(raw, "static", index)
    where = f"static shape {name!r}"
    shape = _shape(raw, where, STATIC_KEYS, base_dir)
    return StaticShape(
        name, shape, _numbers(raw.get("position_m", [0, 0, 0]), where, "position_m", 3), _rpy(raw, where),
        _material(raw.get("material"), where, default),
    )  # fmt: skip


def _box(raw: object, index: int, default: Material) -> StaticShape:
    name = _name(raw, "boxes", index)
    where = f"box {name!r}"
    _check_keys(raw, BOX_KEYS, where)
    if "size_m" not in raw:
        raise WorldConfigError(f"{where}: missing size_m")
    try:
        shape = Shape(ShapeKind.BOX, _numbers(raw["size_m"], where, "size_m", 3))
    except InvalidValueError as exc:
        raise WorldConfigError(f"{where}: {exc}") from None
    return StaticShape(
        name, shape, _numbers(raw.get("position_m", [0, 0, 0]), where, "position_m", 3), _rpy(raw, where),
        _material(raw.get("material"), where, default),
    )  # fmt: skip


def _inertia(raw: object, where: str) -> np.ndarray:
    """[ixx, iyy, izz], a 3 x 3 matrix, or {ixx, iyy, izz, ixy, ixz, iyz} [kg m^2]."""
    if isinstance(raw, Mapping):
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        _check_keys(raw, keys, f"{where} inertia_kg_m2")
        v = {k: _number(raw.get(k, 0.0), where, f"inertia_kg_m2.{k}") for k in keys}
        return np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    arr = np.asarray(raw, dtype=float) if isinstance(raw, (list, tuple)) else np.zeros(0)
    if arr.shape == (3,):
        return np.diag(arr)
    if arr.shape == (3, 3):
        return arr
    raise WorldConfigError(f"{where}: inertia_kg_m2 must be [ixx, iyy, izz], a 3 x 3 matrix or a mapping of ixx, ixy, ixz, iyy, iyz, izz")


def _object(raw: object, index: int, default: Material, base_dir: Path | None) -> FreeObject:
    name = _name(raw, "objects", index)
    where = f"object {name!r}"
    shape = _shape(raw, where, OBJECT_KEYS, base_dir)
    if ("mass_kg" in raw) == ("density_kg_m3" in raw):
        raise WorldConfigError(f"{where}: give mass_kg or density_kg_m3 (exactly one)")
    try:
        if "mass_kg" in raw:
            props = shape.mass_properties(mass=_number(raw["mass_kg"], where, "mass_kg"))
        else:
            props = shape.mass_properties(density=_number(raw["density_kg_m3"], where, "density_kg_m3"))
        inertia = _inertia(raw["inertia_kg_m2"], where) if "inertia_kg_m2" in raw else props.inertia
        com = _numbers(raw["com_m"], where, "com_m", 3) if "com_m" in raw else props.com
        return FreeObject(
            name, shape, props.mass, inertia, com, _numbers(raw.get("position_m", [0, 0, 0]), where, "position_m", 3),
            _rpy(raw, where), _numbers(raw.get("linear_velocity_m_s", [0, 0, 0]), where, "linear_velocity_m_s", 3),
            _numbers(raw.get("angular_velocity_rad_s", [0, 0, 0]), where, "angular_velocity_rad_s", 3),
            _material(raw.get("material"), where, default),
        )  # fmt: skip
    except WorldConfigError:
        raise
    except InvalidValueError as exc:
        raise WorldConfigError(f"{where}: {exc}") from None


def _robot(raw: object, index: int) -> RobotEntry:
    name = _name(raw, "robots", index)
    where = f"robot {name!r}"
    _check_keys(raw, ROBOT_KEYS, where)
    if not isinstance(raw.get("urdf"), str) or not raw["urdf"]:
        raise WorldConfigError(f"{where}: urdf must name a URDF file (a path, or a path inside the package such as urdf/humanoid.urdf)")
    pose = raw.get("initial_pose")
    if pose is not None and not isinstance(pose, str):
        raise WorldConfigError(f"{where}: initial_pose must be a pose name of config/initial_poses.yaml, got {pose!r}")
    if not ROBOT_NAME.fullmatch(name):
        raise WorldConfigError(
            f"{where}: a robot's name is letters, digits and '_' (a later robot's links are named '<name>/<link>')"
        )
    position = None
    if "base_position_m" in raw:
        xy = np.size(raw["base_position_m"]) == 2
        position = _numbers(raw["base_position_m"], where, "base_position_m (x, y or x, y, z)", 2 if xy else 3)
    rpy = _rpy(raw, where, "base_rpy_rad", "base_rpy_deg") if ("base_rpy_rad" in raw or "base_rpy_deg" in raw) else None
    return RobotEntry(name, raw["urdf"], pose, position, rpy)


def _entries(data: Mapping[str, Any], key: str) -> list:
    raw = data.get(key) or []
    if not isinstance(raw, list):
        raise WorldConfigError(f"{key} must be a list of entries")
    return raw


def world_from_dict(data: Mapping[str, Any], base_dir: str | os.PathLike | None = None) -> World:
    """Build a World from the mapping of a world YAML file (docs/world.md). base_dir: where
    relative mesh files are looked for first (the world file's directory)."""
    if data is None:
        data = {}
    data = _mapping(data, "the world file (top level)", SECTIONS)
    base = Path(base_dir) if base_dir is not None else None
    default = _material(data.get("default_material"), "default_material", Material())
    ground = None
    raw_ground = data.get("ground", {})
    if raw_ground is not None:
        raw_ground = _mapping(raw_ground, "ground", GROUND_KEYS)
        try:
            ground = GroundPlane(
                height=_number(raw_ground.get("height_m", 0.0), "ground", "height_m"),
                material=_material(raw_ground.get("material"), "ground", default),
                name=str(raw_ground.get("name", "ground")),
            )
        except EnvironmentConfigError as exc:
            raise WorldConfigError(f"ground: {exc}") from None
    static = [_box(raw, i, default) for i, raw in enumerate(_entries(data, "boxes"))]
    static += [_static(raw, i, default, base) for i, raw in enumerate(_entries(data, "static"))]
    objects = [_object(raw, i, default, base) for i, raw in enumerate(_entries(data, "objects"))]
    robots = [_robot(raw, i) for i, raw in enumerate(_entries(data, "robots"))]
    for i, entry in enumerate(robots):
        if any(r.name == entry.name for r in robots[:i]):
            raise WorldConfigError(
                f"robot {entry.name!r} (robots[{i}]): another robot entry has this name; each robot needs its own"
                " (a later robot's links, joints and frames are named '<name>/...')"
            )
    method = data.get("contact_method")
    if method is not None and str(method) not in CONTACT_METHODS:
        raise WorldConfigError(f"contact_method {method!r}: valid contact methods: {_listing(CONTACT_METHODS)}")
    try:
        return World(ground, tuple(static), tuple(objects), tuple(robots), default,
                     None if method is None else str(method))  # fmt: skip
    except InvalidValueError as exc:
        raise WorldConfigError(str(exc)) from None


def load_world(path: str | os.PathLike) -> World:
    """Read a world YAML file (docs/world.md); errors name the file and the entry."""
    import yaml

    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise WorldConfigError(f"{path}: not valid YAML: {exc}") from None
    try:
        return world_from_dict(data, base_dir=path.parent)
    except WorldConfigError as exc:
        raise WorldConfigError(f"{path}: {exc}") from None
