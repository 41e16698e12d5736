"""The simulation node's parameters: names, defaults, descriptions, ranges, validation.

Plain data and functions (no node), so every rule is unit-tested without spinning. The node
declares each ``ParameterSpec`` with a ``ParameterDescriptor`` built from it, validates the
whole set at start (``validate_parameters``) and every change
(``validate_parameter`` from its on-set-parameters callback).

Parameters marked ``read_only`` shape the simulation itself (robot, dt, initial state, loop
mode, files); changing them needs a restart. The others (rates, real-time factor, command
timeout) take effect at the next tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from humanoid_sim.contact.methods import CONTACT_METHODS

LOOP_MODES = ("realtime", "fast", "lockstep")
TIMEOUT_BEHAVIOURS = ("zero_torque", "damping")


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: name, default (its type is the parameter's type), description.

    low, high: inclusive range for numbers (and for every element of a number array).
    choices: allowed values of a string.
    read_only: fixed after start.
    """

    name: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False
    unit: str = ""


PARAMETER_SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot_description", "", "URDF XML of the robot; empty: read urdf_path", read_only=True),
    ParameterSpec(
        "urdf_path", "", "URDF file used when robot_description is empty; empty: the bundled humanoid",
        read_only=True,
    ),
    ParameterSpec(
        "mimic_joints", "error",
        "URDF <mimic> joints: error (refuse, naming them), independent (each its own joint, as Pinocchio"
        " reads them; talos and romeo need this), fixed (welded at zero)",
        choices=("error", "independent", "fixed"), read_only=True,
    ),
    ParameterSpec(
        "initial_pose", "",
        "named initial pose of config/initial_poses.yaml (e.g. 'stand'; refused, listing the robot's poses,"
        " when the robot has no such pose); empty: the robot's 'stand' pose if it has one, else the"
        " neutral pose at initial_base_position / initial_base_rpy", read_only=True,
    ),
    ParameterSpec(
        "initial_base_position", [0.0, 0.0],
        "base position in odom [m] for the neutral pose: x y (the robot rests on the ground: lowest"
        " collision point at ground height) or x y z (the base at height z)", low=-1e3, high=1e3, read_only=True,
        unit="m",
    ),
    ParameterSpec(
        "initial_base_rpy", [0.0, 0.0, 0.0],
        "base orientation roll pitch yaw [rad] for the neutral pose", low=-math.pi, high=math.pi,
        read_only=True, unit="rad",
    ),
    ParameterSpec(
        "initial_joint_names", [""], "joints whose initial position is set by initial_joint_positions",
        read_only=True,
    ),
    ParameterSpec(
        "initial_joint_positions", [0.0], "initial positions of initial_joint_names [rad or m]",
        low=-1e3, high=1e3, read_only=True, unit="rad",
    ),
    ParameterSpec("physics_dt", 0.001, "physics time step [s]", low=1e-5, high=0.02, read_only=True, unit="s"),
    ParameterSpec(
        "loop_mode", "realtime",
        "realtime: hold real_time_factor; fast: as fast as possible; lockstep: one physics tick per"
        " received command, joint_states and ground_truth/odom after every tick (deterministic CI)", choices=LOOP_MODES, read_only=True,
    ),
    ParameterSpec(
        "start_paused", False, "start paused (resume with the pause service, data=false), e.g. until a controller is up",
        read_only=True,
    ),
    ParameterSpec("real_time_factor", 1.0, "target sim seconds per wall second in realtime mode", low=0.01, high=100.0),
    ParameterSpec(
        "thread_priority", 50,
        "SCHED_FIFO priority of the physics thread in realtime mode, as ros2_control's controller manager"
        " gives its loop (other threads then cannot preempt a tick); 0: normal scheduling. Needs root,"
        " CAP_SYS_NICE or an rtprio limit; without it the node says so once and runs at normal priority",
        low=0, high=99, read_only=True,
    ),
    ParameterSpec("joint_states_rate", 200.0, "/joint_states rate [Hz of sim time] (lockstep: every tick); 0: off", low=0.0, high=10000.0, unit="Hz"),
    ParameterSpec("tf_rate", 200.0, "/tf rate [Hz of sim time]; 0: off", low=0.0, high=10000.0, unit="Hz"),
    ParameterSpec("clock_rate", 1000.0, "/clock rate [Hz of sim time]; 0: off", low=0.0, high=10000.0, unit="Hz"),
    ParameterSpec(
        "contact_rate", 100.0, "contact wrenches, p_v, ZMP, support polygon rate [Hz of sim time]; 0: off",
        low=0.0, high=10000.0, unit="Hz",
    ),
    ParameterSpec("markers_rate", 20.0, "RViz markers rate [Hz of sim time]; 0: off", low=0.0, high=1000.0, unit="Hz"),
    ParameterSpec(
        "odometry_rate", 100.0, "ground-truth odometry and base IMU rate [Hz of sim time] (lockstep: odometry every tick); 0: off",
        low=0.0, high=10000.0, unit="Hz",
    ),
    ParameterSpec("diagnostics_rate", 1.0, "/diagnostics rate [Hz of wall time]; 0: off", low=0.0, high=100.0, unit="Hz"),
    ParameterSpec(
        "environment_config", "", "environment YAML (ground, boxes); empty: the bundled config/environment.yaml",
        read_only=True,
    ),
    ParameterSpec(
        "world", "",
        "world YAML (docs/world.md: ground, static shapes, free objects, a robot; a path or a path inside the"
        " package, e.g. config/worlds/box_push.yaml); replaces environment_config; its robot entry, if any,"
        " is the robot (urdf_path and robot_description must then be empty); empty: no world",
        read_only=True,
    ),
    ParameterSpec(
        "self_collision", False, "links of the robot collide with each other (not adjacent links, nor srdf's pairs)",
        read_only=True,
    ),
    ParameterSpec("srdf", "", "SRDF file whose <disable_collisions> pairs never collide; empty: none", read_only=True),
    ParameterSpec(
        "contact_method", "",
        "how contacts are solved: virtual_link (seed 000: rigid virtual-link constraints with validity checks),"
        " relaxed_qp (seed 002: per-vertex regularised QP at the velocity level), penalty_volume (seed 004:"
        " penetration-volume spring-dampers); empty: the world file's contact_method, else virtual_link",
        choices=("", *CONTACT_METHODS), read_only=True,
    ),
    ParameterSpec(
        "range_of_motion_config", "",
        "range-of-motion YAML; empty: the bundled config/range_of_motion.yaml if present; 'none': URDF limits only",
        read_only=True,
    ),
    ParameterSpec(
        "command_timeout", 0.5,
        "wall seconds without a valid command before timeout_behaviour applies; 0: never (ignored in lockstep)",
        low=0.0, high=3600.0, unit="s",
    ),
    ParameterSpec(
        "timeout_behaviour", "damping", "torque after a command timeout: zero_torque or damping",
        choices=TIMEOUT_BEHAVIOURS,
    ),
    ParameterSpec(
        "timeout_damping", 5.0, "joint damping after a command timeout [N m s/rad]", low=0.0, high=1e4, unit="N m s/rad",
    ),
    ParameterSpec(
        "joint_order", [""], "joint order of the Float64MultiArray command; empty: the model's joint order",
        read_only=True,
    ),
    ParameterSpec("odom_frame", "odom", "tf name of the simulation's world frame (REP 105)", read_only=True),
    ParameterSpec("push_link", "", "link (or frame) the push service pushes; refused, listing the links, if unknown"),
    ParameterSpec(
        "push_wrench", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "wrench of the push service: force fx fy fz [N] and moment nx ny nz [N m], odom axes",
        low=-1e5, high=1e5, unit="N, N m",
    ),
    ParameterSpec(
        "push_point", [0.0, 0.0, 0.0], "where the push's force acts, in push_link's frame [m]", low=-10.0, high=10.0,
        unit="m",
    ),
    ParameterSpec("push_duration", 0.1, "how long the push service's wrench acts [s of sim time]", low=1e-6, high=60.0, unit="s"),
    ParameterSpec(
        "rejection_log_period", 2.0, "at most one log line per this many seconds about rejected commands [s]",
        low=0.0, high=3600.0, unit="s",
    ),
    # the browser view (humanoid_sim.viewer; humanoid_sim/ros/viewer_bridge.py)
    ParameterSpec("viewer", False, "serve a live 3D view of the simulation to a web browser (viser)", read_only=True),
    ParameterSpec("viewer_host", "127.0.0.1", "address the view listens on (0.0.0.0: every interface)", read_only=True),
    ParameterSpec("viewer_port", 8080, "port of the view (taken: the next free one; 0: any free port)", low=0, high=65535, read_only=True),
    ParameterSpec(
        "viewer_record", "",
        "file to write the run to when the node stops: a self-contained HTML replay, with an animated GIF"
        " beside it (same name, .gif); empty: no recording. Works with viewer false too", read_only=True,
    ),
)

SPECS_BY_NAME: dict[str, ParameterSpec] = {spec.name: spec for spec in PARAMETER_SPECS}


@dataclass(frozen=True)
class NodeParameters:
    """The validated parameter values (see PARAMETER_SPECS for meaning and units)."""

    robot_description: str
    urdf_path: str
    mimic_joints: str
    initial_pose: str
    initial_base_position: tuple[float, ...]
    initial_base_rpy: tuple[float, ...]
    initial_joint_names: tuple[str, ...]
    initial_joint_positions: tuple[float, ...]
    physics_dt: float
    loop_mode: str
    start_paused: bool
    real_time_factor: float
    thread_priority: int
    joint_states_rate: float
    tf_rate: float
    clock_rate: float
    contact_rate: float
    markers_rate: float
    odometry_rate: float
    diagnostics_rate: float
    environment_config: str
    world: str
    self_collision: bool
    srdf: str
    contact_method: str
    range_of_motion_config: str
    command_timeout: float
    timeout_behaviour: str
    timeout_damping: float
    joint_order: tuple[str, ...]
    odom_frame: str
    push_link: str
    push_wrench: tuple[float, ...]
    push_point: tuple[float, ...]
    push_duration: float
    rejection_log_period: float
    viewer: bool
    viewer_host: str
    viewer_port: int
    viewer_record: str


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_parameter(name: str, value: Any) -> tuple[bool, str]:
    """(ok, reason) for one parameter value; the reason names the parameter and the rule."""
    spec = SPECS_BY_NAME.get(name)
    if spec is None:
        return False, f"unknown parameter {name!r}; valid: {', '.join(SPECS_BY_NAME)}"
    default = spec.default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            return False, f"{name}: expected true or false, got {type(value).__name__}"
        return True, ""
    if isinstance(default, str):
        if not isinstance(value, str):
            return False, f"{name}: expected a string, got {type(value).__name__}"
        if spec.choices and value not in spec.choices:
            return False, f"{name}: {value!r} is not one of {', '.join(spec.choices)}"
        if name == "odom_frame" and not value:
            return False, "odom_frame: must not be empty"
        return True, ""
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            return False, f"{name}: expected an integer, got {type(value).__name__}"
        values = [float(value)]
    elif isinstance(default, float):
        if not _is_number(value):
            return False, f"{name}: expected a number, got {type(value).__name__}"
        values = [float(value)]
    elif isinstance(default, list) and default and isinstance(default[0], str):
        if not all(isinstance(v, str) for v in value):
            return False, f"{name}: expected a list of strings"
        return True, ""
    else:  # list of floats
        if isinstance(value, (str, bytes)) or not all(_is_number(v) for v in value):
            return False, f"{name}: expected a list of numbers"
        values = [float(v) for v in value]
        sizes = {"initial_base_rpy": 3, "push_wrench": 6, "push_point": 3}
        if name in sizes and len(values) != sizes[name]:
            return False, f"{name}: expected {sizes[name]} numbers, got {len(values)}"
        if name == "initial_base_position" and len(values) not in (2, 3):
            return False, f"{name}: expected x y (resting on the ground) or x y z, got {len(values)} numbers"
    for v in values:
        if not math.isfinite(v):
            return False, f"{name}: {v} is not finite"
        if spec.low is not None and v < spec.low or spec.high is not None and v > spec.high:
            return False, f"{name}: {v} is outside [{spec.low}, {spec.high}] {spec.unit}".rstrip()
    return True, ""


def _clean_names(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    # ROS 2 cannot declare an empty string array without a type, so [""] stands for "none".
    return tuple(n for n in names if n)


def validate_parameters(values: dict[str, Any]) -> NodeParameters:
    """All parameters, defaults filled in, validated one by one and together.

    Raises ValueError with every problem found (one per line).
    """
    merged = {spec.name: values.get(spec.name, spec.default) for spec in PARAMETER_SPECS}
    problems = [reason for name, value in merged.items() for ok, reason in [validate_parameter(name, value)] if not ok]
    unknown = sorted(set(values) - set(SPECS_BY_NAME))
    problems += [f"unknown parameter {name!r}" for name in unknown]
    if not problems:
        names = _clean_names(merged["initial_joint_names"])
        positions = tuple(float(v) for v in merged["initial_joint_positions"])
        if names and len(names) != len(positions):
            problems.append(
                f"initial_joint_names has {len(names)} names but initial_joint_positions {len(positions)} values"
            )
        if merged["loop_mode"] == "realtime" and merged["physics_dt"] / merged["real_time_factor"] < 1e-5:
            problems.append("physics_dt / real_time_factor below 10 us of wall time per tick cannot be held")
    if problems:
        raise ValueError("\n".join(problems))
    kwargs: dict[str, Any] = {}
    for f in fields(NodeParameters):
        value = merged[f.name]
        if f.name in ("initial_joint_names", "joint_order"):
            value = _clean_names(value)
        elif f.name == "initial_joint_positions":
            value = tuple(float(v) for v in value) if _clean_names(merged["initial_joint_names"]) else ()
        elif isinstance(value, list):
            value = tuple(float(v) for v in value)
        elif isinstance(SPECS_BY_NAME[f.name].default, float):
            value = float(value)
        kwargs[f.name] = value
    return NodeParameters(**kwargs)
