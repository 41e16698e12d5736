"""Test helper: the simulator the node builds for its default parameters, in this process (the
bundled robot, the environment and range-of-motion files the package ships, dt = 1 ms), so that a
lock-step node's output can be compared with the library's for the same torques."""

from __future__ import annotations

from humanoid_sim import Simulator, SimulatorConfig, load_environment, load_robot, package_file
from humanoid_sim.limits.range_config import load_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider


def node_twin_simulator(pose: str = "stand") -> Simulator:
    """A Simulator built as the node builds its own, reset to ``pose``."""
    model = load_robot()
    environment = load_environment(package_file("config/environment.yaml"))
    rom = RangeOfMotionProvider(model, load_range_of_motion(package_file("config/range_of_motion.yaml")))
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=environment), providers=[rom])
    sim.reset(pose)
    return sim
