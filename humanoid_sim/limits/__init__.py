"""Joint limits as one-sided constraints: URDF stops and swing-twist ranges of motion (seed 003)."""

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

__all__ = [
    "BallJointKinematics",
    "BallJointRange",
    "BoundaryPoint",
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
    "default_range_of_motion_path",
    "load_range_of_motion",
    "parse_range_of_motion",
    "polar_to_plane",
    "reference_basis",
    "rotation_from_swing_twist",
    "swing_twist_angles",
    "swing_twist_rates",
]
