"""The static environment: a ground plane and static boxes (steps, platforms, slopes).

Frames: everything in the world frame (z up, docs/conventions.md). A box's pose
is ``X_world_box``: its centre at ``position`` and its axes rotated by
``rpy`` (URDF convention, R = Rz(yaw) Ry(pitch) Rx(roll)). Units: m, rad.

Material (per element; the robot side has none in URDF):
  mu_s: static friction coefficient (seed 000 Eq. 31), mu_d: dynamic (Eq. 27-28,
  34-35), restitution: Newton's coefficient e (Eq. 15), 0 = perfectly plastic.

Each element exposes *surfaces*: the ground plane has one (index 0), a box six
(faces 0..5 = +x, -x, +y, -y, +z, -z in the box frame). Contact points of one
link against one surface form one contact (seed 000, 4.9 (1)).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np


class EnvironmentConfigError(ValueError):
    """A bad environment description; the message names the element and field."""


@dataclass(frozen=True)
class Material:
    """Friction and restitution of a surface (dimensionless)."""

    mu_s: float = 1.0
    mu_d: float = 0.8
    restitution: float = 0.0

    def __post_init__(self) -> None:
        for name in ("mu_s", "mu_d", "restitution"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise EnvironmentConfigError(f"material.{name} = {value!r}: must be finite and >= 0")
        if self.mu_d > self.mu_s:
            raise EnvironmentConfigError(
                f"material: mu_d = {self.mu_d} exceeds mu_s = {self.mu_s}; dynamic friction "
                "must not exceed static friction"
            )
        if self.restitution > 1.0:
            raise EnvironmentConfigError(f"material.restitution = {self.restitution}: must lie in [0, 1]")


@dataclass(frozen=True)
class GroundPlane:
    """The plane z = height [m] (normal +z) with its material."""

    height: float = 0.0
    material: Material = field(default_factory=Material)
    name: str = "ground"

    def __post_init__(self) -> None:
        if not np.isfinite(self.height):
            raise EnvironmentConfigError(f"ground.height = {self.height!r}: must be finite")


def rpy_to_rotation(rpy: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw [rad] -> rotation matrix R = Rz(y) Ry(p) Rx(r), shape (3, 3)."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


@dataclass(frozen=True)
class StaticBox:
    """A box fixed in the world.

    name: label used in contact reports.
    position: centre in the world [m], shape (3,).
    rpy: orientation (roll, pitch, yaw) [rad], shape (3,).
    size: full edge lengths along the box axes [m], shape (3,), all > 0.
    """

    name: str
    position: np.ndarray
    rpy: np.ndarray
    size: np.ndarray
    material: Material = field(default_factory=Material)

    def __post_init__(self) -> None:
        for attr in ("position", "rpy", "size"):
            arr = np.asarray(getattr(self, attr), dtype=float).reshape(-1)
            if arr.shape != (3,) or not np.all(np.isfinite(arr)):
                raise EnvironmentConfigError(
                    f"box {self.name!r}: {attr} must be 3 finite numbers, got {getattr(self, attr)!r}"
                )
            arr.setflags(write=False)
            object.__setattr__(self, attr, arr)
        if np.any(self.size <= 0):
            raise EnvironmentConfigError(f"box {self.name!r}: size {self.size.tolist()} must be > 0 on every axis")

    @property
    def rotation(self) -> np.ndarray:
        """R_world_box, shape (3, 3)."""
        return rpy_to_rotation(self.rpy)


@dataclass(frozen=True)
class Environment:
    """Ground plane (optional) plus static boxes. Element 0 is the ground when present."""

    ground: GroundPlane | None = field(default_factory=GroundPlane)
    boxes: tuple[StaticBox, ...] = ()

    def __post_init__(self) -> None:
        names = [b.name for b in self.boxes] + ([self.ground.name] if self.ground else [])
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise EnvironmentConfigError(f"environment: duplicate element names {dup}")

    def element_names(self) -> tuple[str, ...]:
        return ((self.ground.name,) if self.ground else ()) + tuple(b.name for b in self.boxes)


_MATERIAL_KEYS = {"mu_s", "mu_d", "restitution"}


def _material(raw: Mapping[str, Any] | None, where: str, default: Material) -> Material:
    if raw is None:
        return default
    if not isinstance(raw, Mapping):
        raise EnvironmentConfigError(f"{where}.material must be a mapping with keys {sorted(_MATERIAL_KEYS)}")
    unknown = set(raw) - _MATERIAL_KEYS
    if unknown:
        raise EnvironmentConfigError(
            f"{where}.material: unknown keys {sorted(unknown)}; valid keys: {sorted(_MATERIAL_KEYS)}"
        )
    try:
        return Material(**{k: float(raw.get(k, getattr(default, k))) for k in _MATERIAL_KEYS})
    except EnvironmentConfigError as exc:
        raise EnvironmentConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise EnvironmentConfigError(f"{where}.material: {exc}") from None


def environment_from_dict(data: Mapping[str, Any]) -> Environment:
    """Build an Environment from the mapping of config/environment.yaml (see that file)."""
    if not isinstance(data, Mapping):
        raise EnvironmentConfigError("environment: top level must be a mapping with keys ground, boxes")
    unknown = set(data) - {"ground", "boxes", "default_material"}
    if unknown:
        raise EnvironmentConfigError(
            f"environment: unknown keys {sorted(unknown)}; valid keys: ['boxes', 'default_material', 'ground']"
        )
    default = _material(data.get("default_material"), "default_material", Material())
    ground = None
    raw_ground = data.get("ground", {})
    if raw_ground is not None:
        if not isinstance(raw_ground, Mapping):
            raise EnvironmentConfigError("ground must be a mapping (height_m, material) or null for none")
        bad = set(raw_ground) - {"height_m", "material", "name"}
        if bad:
            raise EnvironmentConfigError(f"ground: unknown keys {sorted(bad)}; valid keys: ['height_m', 'material', 'name']")
        try:
            height = float(raw_ground.get("height_m", 0.0))
        except (TypeError, ValueError):
            raise EnvironmentConfigError(f"ground.height_m = {raw_ground.get('height_m')!r}: must be a number [m]") from None
        ground = GroundPlane(
            height=height,
            material=_material(raw_ground.get("material"), "ground", default),
            name=str(raw_ground.get("name", "ground")),
        )
    boxes = []
    for i, raw in enumerate(data.get("boxes") or ()):
        if not isinstance(raw, Mapping) or "name" not in raw:
            raise EnvironmentConfigError(f"boxes[{i}]: must be a mapping with a 'name'")
        where = f"box {raw['name']!r}"
        valid = {"name", "position_m", "rpy_rad", "rpy_deg", "size_m", "material"}
        bad = set(raw) - valid
        if bad:
            raise EnvironmentConfigError(f"{where}: unknown keys {sorted(bad)}; valid keys: {sorted(valid)}")
        if "size_m" not in raw:
            raise EnvironmentConfigError(f"{where}: missing size_m")
        if "rpy_rad" in raw and "rpy_deg" in raw:
            raise EnvironmentConfigError(f"{where}: give rpy_rad or rpy_deg, not both")
        rpy = np.asarray(raw.get("rpy_rad", [0.0, 0.0, 0.0]), dtype=float)
        if "rpy_deg" in raw:
            rpy = np.radians(np.asarray(raw["rpy_deg"], dtype=float))
        try:
            position = np.asarray(raw.get("position_m", [0.0, 0.0, 0.0]), dtype=float)
            size = np.asarray(raw["size_m"], dtype=float)
            rpy = np.asarray(rpy, dtype=float)
        except (TypeError, ValueError):
            raise EnvironmentConfigError(f"{where}: position_m, rpy and size_m must be lists of 3 numbers") from None
        boxes.append(
            StaticBox(
                name=str(raw["name"]),
                position=position,
                rpy=rpy,
                size=size,
                material=_material(raw.get("material"), where, default),
            )
        )
    return Environment(ground=ground, boxes=tuple(boxes))


def load_environment(path: str | os.PathLike) -> Environment:
    """Read a YAML environment file (format: config/environment.yaml)."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        try:
            data = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise EnvironmentConfigError(f"{path}: not valid YAML: {exc}") from None
    try:
        return environment_from_dict(data or {})
    except EnvironmentConfigError as exc:
        raise EnvironmentConfigError(f"{path}: {exc}") from None
