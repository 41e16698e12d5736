"""Robot model layer: URDF in, immutable RobotModel out."""

from humanoid_sim.model.collision_coverage import CollisionCoverageWarning, collision_coverage_warning
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.errors import UrdfError
from humanoid_sim.model.robot_model import (
    CollisionShape,
    Frame,
    JointDynamics,
    JointLimits,
    JointType,
    RobotModel,
    ShapeKind,
)
from humanoid_sim.model.urdf_loader import load_urdf

__all__ = [
    "CollisionCoverageWarning",
    "CollisionShape",
    "Frame",
    "JointDynamics",
    "JointLimits",
    "JointType",
    "RobotModel",
    "ShapeKind",
    "UrdfError",
    "collision_coverage_warning",
    "load_urdf",
    "neutral_configuration",
]
