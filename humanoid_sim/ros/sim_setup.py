"""Building the simulation node's robot, simulator and initial state from its parameters.

Plain functions (no rclpy): each fault of a file, a parameter or the robot is a StartupError
of one line that names it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np

from humanoid_sim.contact.environment import Environment, load_environment
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.limits.range_config import load_range_of_motion, parse_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.model import UrdfError, load_urdf
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.package_data import package_file
from humanoid_sim.ros.parameters import NodeParameters
from humanoid_sim.simulator.initial_pose import pose_configuration, starting_pose
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.world import World, WorldConfigError, WorldModel, assemble_world_model, load_world

__all__ = [
    "StartupError",
    "initial_configuration",
    "later_robot_urdfs",
    "load_robot",
    "load_world_file",
    "make_simulator",
    "simulator_of_world",
    "world_simulator",
]


class StartupError(RuntimeError):
    """The node cannot start (bad URDF, parameter or config file); the message says why."""


def _data_path(name: str) -> Path:
    """A file path as given, else the same path inside the package's share directory."""
    path = Path(name)
    if path.is_file():
        return path
    try:
        return package_file(name)
    except FileNotFoundError as exc:
        raise StartupError(str(exc)) from None


def load_world_file(p: NodeParameters) -> World | None:
    """The world of the ``world`` parameter (a path, or a path inside the package), None when
    it is empty. A missing or bad file is a StartupError of one line naming the file and the
    fault (load_world's WorldConfigError names the entry and the valid keys)."""
    if not p.world:
        return None
    path = _data_path(p.world)
    try:
        return load_world(path)
    except WorldConfigError as exc:
        raise StartupError(f"world file {' '.join(str(exc).split())}") from None
    except (OSError, ValueError) as exc:
        raise StartupError(f"world file {str(path)!r}: {' '.join(str(exc).split())}") from None


def load_robot(p: NodeParameters, world: World | None = None) -> tuple[RobotModel, str]:
    """The model and the URDF text (for robot_description and tf) from the robot_description
    parameter, else urdf_path, else the urdf of ``world``'s robot entry, else the bundled
    humanoid. Any fault of the file or the text (unreadable, empty, binary, not XML, not a
    valid robot) is a StartupError of one line naming the file or the parameter."""
    if not p.robot_description.strip() and not p.urdf_path and world is not None and world.robots:
        p = dataclasses.replace(p, urdf_path=str(_data_path(world.robots[0].urdf)))
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


def make_simulator(
    p: NodeParameters, model: RobotModel, warn: Callable[[str], None], world: World | None = None
) -> Simulator:
    """The simulator of the node: without a ``world``, ``model`` against environment_config;
    with one, ``world_simulator`` (the robot and the world's free objects, the world's ground
    and static boxes). range_of_motion_config (empty: the bundled file; a bundled range of
    motion that does not fit the robot is replaced by the URDF joint stops, with a
    ``warn``ing) is its first provider; self_collision and srdf go to SimulatorConfig."""
    if world is not None:
        return world_simulator(p, world, model, warn)
    env_path = Path(p.environment_config) if p.environment_config else package_file("config/environment.yaml")
    try:
        environment = load_environment(env_path)
    except (OSError, ValueError) as exc:
        raise StartupError(f"environment config {str(env_path)!r}: {exc}") from None
    try:
        return Simulator(model, _config(p, environment), providers=_providers(p, model, warn))
    except (OSError, ValueError) as exc:
        raise StartupError(f"simulator: {exc}") from None


def world_simulator(p: NodeParameters, world: World, robot: RobotModel, warn: Callable[[str], None]) -> Simulator:
    """``Simulator.from_world`` of ``world`` with ``robot`` (the node's robot, first in the
    combined model; ``sim.world_model`` says where each object is): the robot starts in the
    ``initial_pose`` parameter, else the world's robot entry's pose and base placement, else
    its "stand" pose resting on the ground; each object at its world-file pose and twist."""
    try:
        world_model = assemble_world_model(world, robot)  # a later robot's URDF is loaded from its entry
    except (OSError, ValueError) as exc:
        raise StartupError(f"world {p.world!r}: {' '.join(str(exc).split())}") from None
    return simulator_of_world(p, world_model, warn)


def later_robot_urdfs(world_model: WorldModel | None) -> tuple[str, ...]:
    """The URDF text of every robot after the first of ``world_model`` (for tf: its links and
    joints), read from its entry's ``urdf`` (a path, else a path inside the package); empty
    without a world. A file that cannot be read is a StartupError naming it."""
    if world_model is None:
        return ()
    texts = []
    for tree in world_model.robots[1:]:
        path = _data_path(tree.entry.urdf)
        try:
            texts.append(path.read_bytes().decode("utf-8", errors="replace"))
        except OSError as exc:
            raise StartupError(f"robot {tree.name!r}: URDF file {str(path)!r} cannot be read ({exc.strerror or exc})") from None
    return tuple(texts)


def simulator_of_world(p: NodeParameters, world_model: WorldModel, warn: Callable[[str], None]) -> Simulator:
    """The node's simulator of an assembled world (``world_simulator``; also the rebuild after
    an object is spawned or deleted)."""
    providers = _providers(p, world_model.model, warn)
    try:
        return Simulator.from_world(world_model, p.initial_pose, _config(p, world_model.world.environment()), providers)
    except UnknownNameError as exc:
        raise StartupError(f"initial_pose: {exc}") from None
    except (OSError, ValueError) as exc:
        raise StartupError(f"world {p.world!r}: {exc}") from None


def _config(p: NodeParameters, environment: Environment) -> SimulatorConfig:
    srdf = str(_data_path(p.srdf)) if p.srdf else None
    return SimulatorConfig(dt=p.physics_dt, environment=environment, self_collision=p.self_collision, srdf=srdf,
                           contact_method=p.contact_method or None)  # fmt: skip


def _providers(p: NodeParameters, model: RobotModel, warn: Callable[[str], None]) -> list[RangeOfMotionProvider]:
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
    return providers


def initial_configuration(p: NodeParameters, sim: Simulator) -> np.ndarray:
    """q of the start: ``initial_pose`` (empty: "stand" if the robot has it, else the
    neutral pose resting on the ground unless initial_base_position gives a height). In a
    world (``sim.world_model`` set) the state ``Simulator.from_world`` started from."""
    if sim.world_model is not None:
        return sim.q
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
