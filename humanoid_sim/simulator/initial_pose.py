"""Named initial poses (config/initial_poses.yaml) turned into configurations q.

The base height of a pose is computed by forward kinematics so the robot's lowest
collision point touches the ground plane exactly (soles at ground height).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, rpy_to_rotation
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.package_data import package_file

__all__ = [
    "POSES_FILE",
    "InitialPose",
    "default_poses_file",
    "entry_pose",
    "initial_pose_from_dict",
    "load_initial_poses",
    "pose_configuration",
    "starting_pose",
]

POSES_FILE = "config/initial_poses.yaml"  # the bundled poses, inside the package's share directory


def default_poses_file() -> Path:
    """The bundled config/initial_poses.yaml, wherever the package is installed
    (humanoid_sim.package_data); raises DataFileNotFoundError saying where it looked."""
    return package_file(POSES_FILE)


@dataclass(frozen=True)
class InitialPose:
    """joints: joint name -> position [rad or m]; base_xy [m]; base_rpy [rad];
    base_z: height of the base [m], None = lowest collision point on the ground."""

    name: str
    joints: Mapping[str, float] = field(default_factory=dict)
    base_xy: tuple[float, float] = (0.0, 0.0)
    base_rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    base_z: float | None = None


def load_initial_poses(path: str | os.PathLike | None = None, robot: str | None = None) -> dict[str, InitialPose]:
    """Poses of ``robot`` from a YAML file (format in config/initial_poses.yaml; None: the
    bundled file); {} when the file has no section for the robot. A missing file raises
    FileNotFoundError (DataFileNotFoundError listing the places searched for the bundled one)."""
    import yaml

    with open(default_poses_file() if path is None else path, encoding="utf-8") as fh:
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
    """Configuration q (nq,) of a pose (joint positions clamped to the URDF limits; base_z None:
    the lowest collision point of the robot at the ground's height); raises KeyError naming an
    unknown joint. The robot is the tree of body 0; the other trees of a world's model (free
    objects) keep their neutral configuration and do not count for the height
    (WorldModel.initial_state places them)."""
    q = neutral_configuration(model).astype(float)
    for joint, value in pose.joints.items():
        j = model.joint_index(joint)
        q[model.joint_q_index[j]] = np.clip(value, model.limits.lower[j], model.limits.upper[j])
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
    p = ws.p.copy()
    p[model.tree_root != 0, 2] = np.inf  # only the robot's own shapes rest on the ground
    lowest = det.lowest_height(ws.R, p)
    if not np.isfinite(lowest):
        return q
    ground = environment.ground.height if environment.ground is not None else 0.0
    q[2] = ground - lowest
    return q


def starting_pose(
    poses: Mapping[str, InitialPose],
    name: str = "",
    base_position: Sequence[float] = (0.0, 0.0),
    base_rpy: Sequence[float] = (0.0, 0.0, 0.0),
    joints: Mapping[str, float] | None = None,
    robot: str = "",
) -> InitialPose:
    """The pose a simulation starts from.

    name: a pose of ``poses``, or "" for the robot's "stand" pose when it has one, else the
    neutral pose ("neutral": every joint at 0 or the nearest limit) with the base at
    ``base_position`` = (x, y) resting on the ground (lowest collision point at ground
    height), or (x, y, z) at height z [m], and orientation ``base_rpy`` [rad].
    joints: joint name -> position [rad or m] set on top of the pose.
    robot: the robot's name, for the message of an unknown pose.
    Raises UnknownNameError listing the robot's poses when ``name`` is not one of them.
    """
    if name:
        if name not in poses:
            raise UnknownNameError("initial pose", name, poses, f"for robot {robot!r}" if robot else "")
        pose = poses[name]
    elif "stand" in poses:
        pose = poses["stand"]
    else:
        if len(base_position) not in (2, 3):
            raise ValueError(f"base_position must be (x, y) or (x, y, z) [m], got {tuple(base_position)}")
        pose = InitialPose(
            name="neutral",
            base_xy=(float(base_position[0]), float(base_position[1])),
            base_rpy=tuple(float(a) for a in base_rpy),
            base_z=float(base_position[2]) if len(base_position) == 3 else None,
        )
    if joints:
        pose = replace(pose, joints={**pose.joints, **joints})
    return pose


def entry_pose(
    poses: Mapping[str, InitialPose],
    pose: str = "",
    base_position: Sequence[float] | None = None,
    base_rpy: Sequence[float] | None = None,
    robot: str = "",
) -> InitialPose:
    """The pose a world's robot entry starts in: ``pose`` (a name of ``poses``; "" as
    ``starting_pose``), its base moved to ``base_position`` [m] ((x, y): resting on the
    ground; (x, y, z): base origin at height z) and turned to ``base_rpy`` [rad] when given.
    Raises UnknownNameError listing the robot's poses."""
    start = starting_pose(poses, pose, robot=robot)
    if base_position is not None:
        xyz = [float(c) for c in base_position]
        start = replace(start, base_xy=(xyz[0], xyz[1]), base_z=xyz[2] if len(xyz) == 3 else None)
    if base_rpy is not None:
        start = replace(start, base_rpy=tuple(float(a) for a in base_rpy))
    return start
