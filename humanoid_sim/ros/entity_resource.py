"""Free objects added to or removed from a world, and the state carried across (no rclpy).

The simulation node's SpawnEntity takes one free object written as one entry of a world file's
``objects:`` list (docs/world.md), as YAML text (the request's resource_string) or in a YAML
file (its uri, a path or ``file://`` URI), for example::

    {name: crate, shape: box, size_m: [0.3, 0.3, 0.3], mass_kg: 2.0, position_m: [1.0, 0.0, 0.5]}

``spawned_object`` turns it into a ``FreeObject``; ``world_with_object`` /
``world_without_object`` give the world the simulator is rebuilt from; ``carried_state`` moves
the robot's and every other object's q and v into the rebuilt model's layout.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from humanoid_sim.contact.environment import Environment
from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world import FreeObject, Shape, StaticShape, World, WorldModel, world_from_dict

__all__ = [
    "ResourceError",
    "carried_state",
    "rpy_of_rotation",
    "spawned_object",
    "unique_name",
    "world_of_environment",
    "world_with_object",
    "world_without_object",
]

# A ROS-style entity name: a letter or '_' first, then letters, digits and '_'.
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ResourceError(ValueError):
    """A spawn request that cannot be served. ``kind``: "no_resource", "parse" (the text or
    file is not one valid object entry), "name_invalid" or "name_not_unique"."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def rpy_of_rotation(R: np.ndarray) -> np.ndarray:
    """URDF roll, pitch, yaw [rad] (3,) of a rotation matrix (3, 3) (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    pitch = math.asin(max(-1.0, min(1.0, -float(R[2, 0]))))
    if abs(math.cos(pitch)) > 1e-9:
        roll = math.atan2(float(R[2, 1]), float(R[2, 2]))
        yaw = math.atan2(float(R[1, 0]), float(R[0, 0]))
    else:  # gimbal lock: the roll is folded into the yaw
        roll, yaw = 0.0, math.atan2(-float(R[0, 1]), float(R[1, 1]))
    return np.array([roll, pitch, yaw])


def _entry(uri: str, text: str) -> dict[str, Any]:
    if text.strip():
        source, raw = "resource_string", text
    elif uri.strip():
        path = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
        source = f"uri {uri!r}"
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ResourceError("no_resource", f"{source}: cannot be read ({exc.strerror or exc})") from None
    else:
        raise ResourceError("no_resource", "give the object as resource_string (YAML of one world-file object) or uri")
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ResourceError("parse", f"{source}: not valid YAML: {' '.join(str(exc).split())}") from None
    if isinstance(data, dict) and set(data) == {"objects"} and isinstance(data["objects"], list) and len(data["objects"]) == 1:
        data = data["objects"][0]  # a world file holding one object
    if not isinstance(data, dict):
        raise ResourceError("parse", f"{source}: expected a mapping of one world-file object (shape, size, mass, ...)")
    return dict(data)


def spawned_object(
    uri: str, text: str, name: str, taken: set[str] | frozenset[str], allow_renaming: bool,
    pose: tuple[np.ndarray, np.ndarray] | None = None,
) -> FreeObject:
    """The FreeObject of a spawn request (module docstring).

    name: the request's name (empty: the entry's ``name``); a name in ``taken`` is refused
    unless ``allow_renaming`` (then ``unique_name``). pose: (position [m] (3,), R (3, 3)) in
    the world frame replacing the entry's position_m / rpy, or None to keep them. Raises
    ResourceError naming the fault (invalid entries with the world loader's message, which
    lists the valid keys)."""
    data = _entry(uri, text)
    chosen = name or str(data.get("name", "") or "")
    if not chosen:
        if not allow_renaming:
            raise ResourceError("name_invalid", "no name: set the request's name or the object's name")
        chosen = unique_name("object", taken)
    if not NAME_PATTERN.match(chosen):
        raise ResourceError("name_invalid", f"name {chosen!r}: letters, digits and '_' only, not starting with a digit")
    if chosen in taken:
        if not allow_renaming:
            raise ResourceError("name_not_unique", f"name {chosen!r} is taken; taken names: {', '.join(sorted(taken))}")
        chosen = unique_name(chosen, taken)
    data["name"] = chosen
    if pose is not None:
        for key in ("position_m", "rpy_deg", "rpy_rad"):
            data.pop(key, None)
        data["position_m"] = [float(x) for x in pose[0]]
        data["rpy_rad"] = [float(a) for a in rpy_of_rotation(pose[1])]
    try:
        world = world_from_dict({"objects": [data]})
    except (InvalidValueError, ValueError) as exc:
        raise ResourceError("parse", " ".join(str(exc).split())) from None
    return world.objects[0]


def unique_name(base: str, taken: set[str] | frozenset[str]) -> str:
    """``base`` if free, else ``base_2``, ``base_3``, ... the first not in ``taken``."""
    if base not in taken:
        return base
    k = 2
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def world_of_environment(environment: Environment) -> World:
    """A World of a static Environment (its ground and static boxes), without objects or robots."""
    static = tuple(
        StaticShape(b.name, Shape(ShapeKind.BOX, np.asarray(b.size, dtype=float)), b.position, b.rpy, b.material)
        for b in environment.boxes
    )
    return World(ground=environment.ground, static=static)


def world_with_object(world: World, obj: FreeObject) -> World:
    """``world`` with ``obj`` appended to its free objects (InvalidValueError for a name taken)."""
    return dataclasses.replace(world, objects=(*world.objects, obj))


def world_without_object(world: World, name: str) -> World:
    """``world`` without the free object ``name`` (KeyError listing the objects if it has none)."""
    kept = tuple(o for o in world.objects if o.name != name)
    if len(kept) == len(world.objects):
        raise KeyError(f"no object {name!r}; objects: {', '.join(o.name for o in world.objects) or '(none)'}")
    return dataclasses.replace(world, objects=kept)


def carried_state(
    old: WorldModel | None, q: np.ndarray, v: np.ndarray, new: WorldModel, q_new: np.ndarray, v_new: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(q, v) of ``new``'s model: ``q_new`` / ``v_new`` (its start: objects at their world-file
    pose and twist) with every robot's coordinates and those of every object of ``old`` that
    is still in ``new`` taken from ``q`` / ``v`` (the state of ``old``'s model; ``old`` None: a
    model of the robot alone). The robots are matched by position (the first robot first)."""
    q_out, v_out = np.array(q_new, dtype=float), np.array(v_new, dtype=float)
    if old is None:
        before = [(slice(0, len(q)), slice(0, len(v)))]
    else:
        before = [(t.q, t.v) for t in old.robots]
    after = [(t.q, t.v) for t in new.robots]
    sizes = [(a.stop - a.start, b.stop - b.start) for a, b in before]
    if sizes != [(a.stop - a.start, b.stop - b.start) for a, b in after]:
        raise ValueError(f"robot coordinates differ: {sizes} -> {[(a.stop - a.start, b.stop - b.start) for a, b in after]}")
    for (qa, va), (qb, vb) in zip(before, after):
        q_out[qb], v_out[vb] = q[qa], v[va]
    if old is not None:
        objects = {o.name: o for o in old.objects}
        for obj in new.objects:
            if obj.name in objects:
                q_out[obj.q], v_out[obj.v] = q[objects[obj.name].q], v[objects[obj.name].v]
    return q_out, v_out
