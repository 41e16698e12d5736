"""Joint limits: URDF stops and swing-twist ranges of motion as one-sided constraints (seed 003),
velocity limits as bounds on the actuator effort."""

from humanoid_sim.limits.ball_joint_rows import BallJointKinematics, GroupRow, GroupState
from humanoid_sim.limits.range_config import (
    BallJointRange,
    JointStopConfig,
    LimitLaw,
    RangeOfMotionConfig,
    default_range_of_motion_path,
    load_range_of_motion,
    parse_range_of_motion,
)
from humanoid_sim.limits.range_of_motion_provider import LimitReport, RangeOfMotionProvider
from humanoid_sim.limits.swing_boundary import BoundaryPoint, SwingBoundary, TwistRange, polar_to_plane
from humanoid_sim.limits.swing_twist import (
    SwingTwist,
    reference_basis,
    rotation_from_swing_twist,
    swing_twist_angles,
    swing_twist_rates,
)
from humanoid_sim.limits.velocity_limits import (
    CoupledWork,
    EffortBounds,
    VelocityRule,
    clamp_effort_into,
    coupled_effort_limits,
    coupled_effort_limits_into,
    coupled_work,
    effort_bounds,
    effort_bounds_into,
    implicit_effort_bounds,
    implicit_effort_bounds_into,
    velocity_rule,
)

__all__ = [
    "BallJointKinematics",
    "BallJointRange",
    "BoundaryPoint",
    "CoupledWork",
    "EffortBounds",
    "GroupRow",
    "GroupState",
    "JointStopConfig",
    "LimitLaw",
    "LimitReport",
    "RangeOfMotionConfig",
    "RangeOfMotionProvider",
    "SwingBoundary",
    "SwingTwist",
    "TwistRange",
    "VelocityRule",
    "clamp_effort_into",
    "coupled_effort_limits",
    "coupled_effort_limits_into",
    "coupled_work",
    "default_range_of_motion_path",
    "effort_bounds",
    "effort_bounds_into",
    "implicit_effort_bounds",
    "implicit_effort_bounds_into",
    "load_range_of_motion",
    "parse_range_of_motion",
    "polar_to_plane",
    "reference_basis",
    "rotation_from_swing_twist",
    "swing_twist_angles",
    "swing_twist_rates",
    "velocity_rule",
]
