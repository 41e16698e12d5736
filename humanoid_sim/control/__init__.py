"""Walking library: footsteps, ZMP preview control, swing trajectories, Jacobian IK,
whole-body torques (seed 000 Eq. 11/23) and the WalkingController tying them together."""

from humanoid_sim.control.external_wrench import ExternalWrench, ExternalWrenchFeedforward
from humanoid_sim.control.footsteps import Footstep, FootstepParams, FootstepPlan, SupportPhase, plan_footsteps
from humanoid_sim.control.inverse_kinematics import ComTask, FrameTask, IKParams, IKResult, OrientationTask, solve_ik
from humanoid_sim.control.preview_control import PreviewController, PreviewParams, preview_gains
from humanoid_sim.control.swing_trajectory import SwingSample, swing_foot_sample
from humanoid_sim.control.walking_controller import (
    TaskGains,
    WalkingConfig,
    WalkingController,
    WalkingReadout,
    load_walking_config,
    walking_config_from_dict,
)
from humanoid_sim.control.whole_body_torque import (
    AccelerationTask,
    WholeBodySolution,
    WholeBodyWeights,
    solve_whole_body,
)

__all__ = [
    "AccelerationTask", "ComTask", "Footstep", "FootstepParams", "FootstepPlan", "FrameTask",
    "ExternalWrench", "ExternalWrenchFeedforward", "IKParams", "IKResult", "OrientationTask", "PreviewController", "PreviewParams", "SupportPhase",
    "SwingSample", "TaskGains", "WalkingConfig", "WalkingController", "WalkingReadout",
    "WholeBodySolution", "WholeBodyWeights", "load_walking_config", "plan_footsteps",
    "preview_gains", "solve_ik", "solve_whole_body", "swing_foot_sample", "walking_config_from_dict",
]
