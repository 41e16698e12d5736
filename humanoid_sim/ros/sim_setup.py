"""Building the simulation node's robot, simulator and initial state from its parameters.

Plain functions (no rclpy): each fault of a file, a parameter or the robot is a StartupError
of one line that names it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from humanoid_sim.contact.environment import load_environment
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.limits.range_config import load_range_of_motion, parse_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.model import UrdfError, load_urdf
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.package_data import package_file
from humanoid_sim.ros.parameters import NodeParameters
from humanoid_sim.simulator.initial_pose import pose_configuration, starting_pose
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

__all__ = ["StartupError", "initial_configuration", "load_robot", "make_simulator"]


class StartupError(RuntimeError):
    """The node cannot start (bad URDF, parameter or config file); the message says why."""


def load_robot(p: NodeParameters) -> tuple[RobotModel, str]:
    """The model and the URDF text (for robot_description and tf) from the robot_description
    parameter, else urdf_path (empty: the bundled humanoid). Any fault of the file or the
    text (unreadable, empty, binary, not XML, not a valid robot) is a StartupError of one
    line naming the file or the parameter."""
    if p.robot_description.strip():
        text = p.robot_description
        if not text.lstrip().startswith("<"):
            raise StartupError("robot_description parameter: not URDF XML (it does not start with '<')")
        source: str | Path = text
        label = "robot_description parameter"
    else:
        try:
            source = Path(p.urdf_path) if p.urdf_path else package_file("urdf/humanoid.urdf")
        except FileNotFoundError as exc:
            raise StartupError(str(exc)) from None
        label = f"URDF file {str(source)!r}"
    try:
        model = load_urdf(source, mimic=p.mimic_joints)  # file faults are named by load_urdf
    except (UrdfError, ValueError) as exc:
        raise StartupError(f"the robot description does not load: {exc}") from None
    if isinstance(source, Path):
        try:
            text = source.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:  # removed since it loaded
            raise StartupError(f"{label}: cannot be read ({exc.strerror or exc})") from None
    return model, text


def make_simulator(p: NodeParameters, model: RobotModel, warn: Callable[[str], None]) -> Simulator:
    """The simulator of the node: environment_config and range_of_motion_config (empty: the
    bundled files; a bundled range of motion that does not fit the robot is replaced by the
    URDF joint stops, with a ``warn``ing). Its first provider is the range of motion."""
    env_path = Path(p.environment_config) if p.environment_config else package_file("config/environment.yaml")
    try:
        environment = load_environment(env_path)
    except (OSError, ValueError) as exc:
        raise StartupError(f"environment config {str(env_path)!r}: {exc}") from None
    providers = []
    rom = p.range_of_motion_config
    try:
        if rom == "none":
            config = parse_range_of_motion({})
        elif rom:
            config = load_range_of_motion(rom)
        else:
            config = load_range_of_motion(package_file("config/range_of_motion.yaml"))
        try:
            providers.append(RangeOfMotionProvider(model, config))
        except ValueError as exc:
            if rom:
                raise
            warn(f"bundled range of motion does not fit robot {model.name!r} ({exc}); using URDF joint stops only")
            providers.append(RangeOfMotionProvider(model, parse_range_of_motion({})))
    except (OSError, ValueError) as exc:
        raise StartupError(f"range-of-motion config {rom or 'config/range_of_motion.yaml'!r}: {exc}") from None
    return Simulator(model, SimulatorConfig(dt=p.physics_dt, environment=environment), providers=providers)


def initial_configuration(p: NodeParameters, sim: Simulator) -> np.ndarray:
    """q of the start: ``initial_pose`` (empty: "stand" if the robot has it, else the
    neutral pose resting on the ground unless initial_base_position gives a height)."""
    model = sim.model
    joints = dict(zip(p.initial_joint_names, p.initial_joint_positions))
    try:
        pose = starting_pose(
            sim.poses, p.initial_pose, p.initial_base_position, p.initial_base_rpy, joints, model.name
        )
    except UnknownNameError as exc:
        raise StartupError(f"initial_pose: {exc}") from None
    try:
        return pose_configuration(model, pose, sim.config.environment)
    except KeyError as exc:
        raise StartupError(f"initial_joint_names: {exc.args[0]}") from None
