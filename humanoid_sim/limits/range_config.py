"""Range-of-motion configuration: ball-joint ranges (seed 003) and URDF stops.

Read from YAML (``config/range_of_motion.yaml`` documents the format) into
frozen dataclasses; every value is checked where it enters, and each mistake
raises one ValueError naming the group (and, for joints, listing the valid
names). Angles in the YAML are in degrees (``*_deg`` keys); the dataclasses
hold radians.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from humanoid_sim.limits.swing_boundary import SwingBoundary
from humanoid_sim.limits.swing_twist import reference_basis
from humanoid_sim.model.robot_model import JointType, RobotModel


@dataclass(frozen=True)
class LimitLaw:
    """How a limit acts once reached (seed 003, 3.6).

    hard: True = rigid one-sided constraint (Eq. 3.34-3.35, impacts as contacts);
        False = spring-damper wall (Eq. 3.36-3.38) that lets the joint out in
        proportion to the load.
    stiffness [N m/rad], damping [N m s/rad]: soft walls only (> 0 and >= 0).
    restitution: hard walls, post-impact rebound ratio in [0, 1].
    """

    hard: bool = True
    stiffness: float = 0.0
    damping: float = 0.0
    restitution: float = 0.0

    def __post_init__(self) -> None:
        if not self.hard and not self.stiffness > 0.0:
            raise ValueError(f"soft limit needs stiffness > 0 [N m/rad], got {self.stiffness}")
        if self.damping < 0.0:
            raise ValueError(f"limit damping must be >= 0 [N m s/rad], got {self.damping}")
        if not 0.0 <= self.restitution <= 1.0:
            raise ValueError(f"limit restitution must lie in [0, 1], got {self.restitution}")


@dataclass(frozen=True)
class BallJointRange:
    """Three revolute joints acting as one ball joint, with a swing-twist range.

    joints: the three URDF joint names, parent to child along the chain.
    twist_axis: unit limb axis in the frame of the first joint's parent body,
        at the reference (all-zero) posture, shape (3,).
    zero_azimuth_axis: unit direction of φ = 0 in the same frame, ⊥ twist_axis.
    azimuth_axis_2: a × e1, the direction of φ = 90° (derived), shape (3,).
    boundary: the swing range with its twist limits.
    law: hard or soft wall.
    """

    name: str
    joints: tuple[str, str, str]
    twist_axis: np.ndarray
    zero_azimuth_axis: np.ndarray
    azimuth_axis_2: np.ndarray
    boundary: SwingBoundary
    law: LimitLaw


@dataclass(frozen=True)
class JointStopConfig:
    """URDF position limits as one-sided rows.

    enabled: use the URDF <limit lower/upper> of revolute and prismatic joints.
    skip_ball_joint_members: leave out the stops of joints that belong to a
        ball-joint group (the swing-twist range replaces their per-axis box).
    law: hard or soft stops.
    """

    enabled: bool = True
    skip_ball_joint_members: bool = True
    law: LimitLaw = LimitLaw()


@dataclass(frozen=True)
class RangeOfMotionConfig:
    """All joint-range settings of one robot."""

    ball_joints: tuple[BallJointRange, ...] = ()
    joint_stops: JointStopConfig = JointStopConfig()

    def check_model(self, model: RobotModel) -> None:
        """Raise ValueError unless every group names 3 revolute joints of ``model`` in one chain.

        The messages name the group and list the model's valid joint names.
        """
        for group in self.ball_joints:
            bodies = []
            for joint in group.joints:
                if joint not in model.joint_names:
                    raise ValueError(
                        f"range of motion {group.name!r}: unknown joint {joint!r}; "
                        f"valid joints: {', '.join(model.joint_names)}"
                    )
                body = joint_body(model, joint)
                if int(model.joint_type[body]) != JointType.REVOLUTE:
                    raise ValueError(f"range of motion {group.name!r}: joint {joint!r} is not revolute")
                bodies.append(body)
            for k in (1, 2):
                if int(model.parent[bodies[k]]) != bodies[k - 1]:
                    raise ValueError(
                        f"range of motion {group.name!r}: joint {group.joints[k]!r} is not the child of "
                        f"{group.joints[k - 1]!r}; list the three joints parent to child along one chain"
                    )


def joint_body(model: RobotModel, joint: str) -> int:
    """Index of the body moved by the named joint (KeyError lists valid names)."""
    return int(model.joint_body[model.joint_index(joint)])


# ----------------------------------------------------------------------------- YAML


def _get(mapping: dict[str, Any], key: str, where: str, default: Any = ...) -> Any:
    if not isinstance(mapping, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(mapping).__name__}")
    if key in mapping:
        return mapping[key]
    if default is ...:
        raise ValueError(f"{where}: missing key {key!r} (present: {', '.join(map(str, mapping)) or 'none'})")
    return default


def _vector(value: Any, n: int, where: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.size != n or not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: expected {n} finite numbers, got {value!r}")
    return arr


def _law(data: dict[str, Any] | None, where: str) -> LimitLaw:
    if data is None:
        return LimitLaw()
    kind = _get(data, "type", where, "hard")
    if kind not in ("hard", "soft"):
        raise ValueError(f"{where}: type must be 'hard' or 'soft', got {kind!r}")
    try:
        return LimitLaw(
            hard=kind == "hard",
            stiffness=float(_get(data, "stiffness", where, 0.0)),
            damping=float(_get(data, "damping", where, 0.0)),
            restitution=float(_get(data, "restitution", where, 0.0)),
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _ball_joint(data: dict[str, Any], index: int) -> BallJointRange:
    name = str(_get(data, "name", f"ball_joints[{index}]"))
    where = f"range of motion {name!r}"
    joints = _get(data, "joints", where)
    if not isinstance(joints, list) or len(joints) != 3 or not all(isinstance(j, str) for j in joints):
        raise ValueError(f"{where}: 'joints' must list exactly 3 joint names, got {joints!r}")
    a, e1, e2 = reference_basis(
        _vector(_get(data, "twist_axis", where), 3, f"{where}: twist_axis"),
        _vector(_get(data, "zero_azimuth_axis", where), 3, f"{where}: zero_azimuth_axis"),
    )
    points = _get(data, "control_points", where)
    if not isinstance(points, list):
        raise ValueError(f"{where}: control_points must be a list")
    n = len(points)
    phi, theta = np.zeros(n), np.zeros(n)
    rates = np.full((n, 2), np.nan)
    twist = np.zeros((n, 2))
    for i, p in enumerate(points):
        pw = f"{where}: control point {i}"
        phi[i] = float(_get(p, "phi_deg", pw))
        theta[i] = float(_get(p, "theta_deg", pw))
        twist[i] = _vector(_get(p, "twist_deg", pw), 2, f"{pw}: twist_deg [min, max]")
        if "tangent_deg" in p:
            rates[i] = _vector(p["tangent_deg"], 2, f"{pw}: tangent_deg [dphi, dtheta]")
    centre = _vector(_get(data, "centre_twist_deg", where), 2, f"{where}: centre_twist_deg [min, max]")
    boundary = SwingBoundary(
        name=name,
        phi=np.radians(phi),
        theta=np.radians(theta),
        phi_rate=np.radians(rates[:, 0]),
        theta_rate=np.radians(rates[:, 1]),
        twist_lower=np.radians(twist[:, 0]),
        twist_upper=np.radians(twist[:, 1]),
        centre_twist=(float(np.radians(centre[0])), float(np.radians(centre[1]))),
    )
    for arr in (a, e1, e2):
        arr.setflags(write=False)
    return BallJointRange(name, tuple(joints), a, e1, e2, boundary, _law(data.get("limit"), f"{where}: limit"))


def parse_range_of_motion(data: dict[str, Any] | None) -> RangeOfMotionConfig:
    """Build the config from the parsed YAML mapping (see config/range_of_motion.yaml)."""
    data = data or {}
    groups = tuple(_ball_joint(g, i) for i, g in enumerate(data.get("ball_joints") or []))
    names = [g.name for g in groups]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        raise ValueError(f"range of motion: group names used twice: {', '.join(sorted(dup))}")
    members = [j for g in groups for j in g.joints]
    twice = {j for j in members if members.count(j) > 1}
    if twice:
        raise ValueError(f"range of motion: joints in more than one group: {', '.join(sorted(twice))}")
    stops = data.get("joint_stops") or {}
    stop_cfg = JointStopConfig(
        enabled=bool(_get(stops, "enabled", "joint_stops", True)),
        skip_ball_joint_members=bool(_get(stops, "skip_ball_joint_members", "joint_stops", True)),
        law=_law(stops.get("limit"), "joint_stops: limit"),
    )
    return RangeOfMotionConfig(groups, stop_cfg)


def load_range_of_motion(source: str | os.PathLike[str]) -> RangeOfMotionConfig:
    """Load a range-of-motion YAML file (path) or YAML text (a string with a newline)."""
    if isinstance(source, str) and "\n" in source:
        text, label = source, "range-of-motion YAML text"
    else:
        text, label = Path(source).read_text(encoding="utf-8"), f"range-of-motion file {str(source)!r}"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{label}: not valid YAML ({exc})") from None
    return parse_range_of_motion(data)


def default_range_of_motion_path() -> Path:
    """The bundled ``config/range_of_motion.yaml``, wherever the package is installed (looked
    up as every data file is: humanoid_sim.package_data.package_file). Raises
    DataFileNotFoundError (a FileNotFoundError) listing every place searched."""
    from humanoid_sim.package_data import package_file

    return package_file("config/range_of_motion.yaml")
