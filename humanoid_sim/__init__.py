"""humanoid_sim: rigid-contact humanoid simulation (seed 000 virtual links) with a ROS 2 node.

The library without ROS::

    from humanoid_sim import Simulator
    sim = Simulator.from_urdf(package_file("urdf/humanoid.urdf"), pose="stand")
    result = sim.step(tau, link_wrenches={"pelvis": (200.0, 0, 0, 0, 0, 0)})

Names are imported on first use (``import humanoid_sim`` alone loads neither numpy nor numba).
"""

from __future__ import annotations

import importlib
from typing import Any

from humanoid_sim.numba_cache import configure_numba_cache_dir

configure_numba_cache_dir()

# public name -> module that defines it
_EXPORTS = {
    "Simulator": "humanoid_sim.simulator.simulator",
    "SimulatorConfig": "humanoid_sim.simulator.simulator",
    "StepResult": "humanoid_sim.simulator.simulator",
    "ContactReport": "humanoid_sim.simulator.simulator",
    "SimulationError": "humanoid_sim.simulator.simulator",
    "LinkWrench": "humanoid_sim.simulator.link_wrenches",
    "Push": "humanoid_sim.simulator.pushes",
    "PushSchedule": "humanoid_sim.simulator.pushes",
    "InitialPose": "humanoid_sim.simulator.initial_pose",
    "load_initial_poses": "humanoid_sim.simulator.initial_pose",
    "Environment": "humanoid_sim.contact.environment",
    "load_environment": "humanoid_sim.contact.environment",
    "RobotModel": "humanoid_sim.model.robot_model",
    "UrdfError": "humanoid_sim.model.errors",
    "load_urdf": "humanoid_sim.model.urdf_loader",
    "load_robot": "humanoid_sim.robots",
    "package_file": "humanoid_sim.package_data",
    "HumanoidSimError": "humanoid_sim.errors",
    "UnknownNameError": "humanoid_sim.errors",
    "InvalidValueError": "humanoid_sim.errors",
    "DataFileNotFoundError": "humanoid_sim.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'humanoid_sim' has no attribute {name!r}; public names: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
