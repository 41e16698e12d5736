"""Robot model layer: URDF in, immutable RobotModel out."""

from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.errors import UrdfError
from humanoid_sim.model.robot_model import (
    CollisionShape,
    Frame,
    JointLimits,
    JointType,
    RobotModel,
    ShapeKind,
)
from humanoid_sim.model.urdf_loader import load_urdf

__all__ = [
    "CollisionShape",
    "Frame",
    "JointLimits",
    "JointType",
    "RobotModel",
    "ShapeKind",
    "UrdfError",
    "load_urdf",
    "neutral_configuration",
]
