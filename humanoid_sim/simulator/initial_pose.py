"""Named initial poses (config/initial_poses.yaml) turned into configurations q.

The base height of a pose is computed by forward kinematics so the lowest
collision point touches the ground plane exactly (soles at ground height).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, rpy_to_rotation
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.robot_model import RobotModel

DEFAULT_POSES_FILE = Path(__file__).resolve().parents[2] / "config" / "initial_poses.yaml"


@dataclass(frozen=True)
class InitialPose:
    """joints: joint name -> position [rad or m]; base_xy [m]; base_rpy [rad];
    base_z: height of the base [m], None = lowest collision point on the ground."""

    name: str
    joints: Mapping[str, float] = field(default_factory=dict)
    base_xy: tuple[float, float] = (0.0, 0.0)
    base_rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_z: float | None = None


def load_initial_poses(path: str | os.PathLike = DEFAULT_POSES_FILE, robot: str | None = None) -> dict[str, InitialPose]:
    """Poses of ``robot`` from a YAML file (format in config/initial_poses.yaml); {} if absent."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    section = data.get(robot, {}) if robot is not None else data
    poses = {}
    for name, raw in (section or {}).items():
        poses[name] = initial_pose_from_dict(name, raw or {})
    return poses


def initial_pose_from_dict(name: str, raw: Mapping[str, Any]) -> InitialPose:
    valid = {"joints_rad", "base_xy_m", "base_rpy_rad", "base_z_m"}
    bad = set(raw) - valid
    if bad:
        raise ValueError(f"initial pose {name!r}: unknown keys {sorted(bad)}; valid keys: {sorted(valid)}")
    z = raw.get("base_z_m", "auto")
    return InitialPose(
        name=name,
        joints={str(k): float(v) for k, v in (raw.get("joints_rad") or {}).items()},
        base_xy=tuple(float(x) for x in raw.get("base_xy_m", (0.0, 0.0))),
        base_rpy=tuple(float(x) for x in raw.get("base_rpy_rad", (0.0, 0.0, 0.0))),
        base_z=None if z in (None, "auto") else float(z),
    )


def pose_configuration(model: RobotModel, pose: InitialPose, environment: Environment) -> np.ndarray:
    """Configuration q (nq,) of a pose; raises KeyError naming an unknown joint."""
    q = neutral_configuration(model).astype(float)
    off = 7 if model.floating_base else 0
    for joint, value in pose.joints.items():
        j = model.joint_index(joint)
        q[off + j] = np.clip(value, model.limits.lower[j], model.limits.upper[j])
    if not model.floating_base:
        return q
    q[0:2] = pose.base_xy
    q[3:7] = rotation_to_quaternion(rpy_to_rotation(np.asarray(pose.base_rpy)))
    if pose.base_z is not None:
        q[2] = pose.base_z
        return q
    q[2] = 0.0
    ws = DynamicsWorkspace(model)
    ws.update(q, np.zeros(model.nv))
    det = ContactDetector(model, Environment(ground=environment.ground, boxes=()))
    lowest = det.lowest_height(ws.R, ws.p)
    if not np.isfinite(lowest):
        return q
    ground = environment.ground.height if environment.ground is not None else 0.0
    q[2] = ground - lowest
    return q
