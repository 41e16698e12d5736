"""The fixed-step simulator (state, step, reset, named initial poses)."""

from humanoid_sim.simulator.initial_pose import InitialPose, load_initial_poses, pose_configuration
from humanoid_sim.simulator.simulator import ContactReport, SimulationError, Simulator, SimulatorConfig, StepResult

__all__ = [
    "ContactReport",
    "InitialPose",
    "SimulationError",
    "Simulator",
    "SimulatorConfig",
    "StepResult",
    "load_initial_poses",
    "pose_configuration",
]
