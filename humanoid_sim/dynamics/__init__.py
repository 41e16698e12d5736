"""Rigid-body dynamics of a RobotModel: kinematics, Jacobians, CRBA, RNEA, ABA.

Pure numpy + numba (no ROS). Conventions: docs/conventions.md; symbols:
``humanoid_sim.dynamics.spatial``.
"""

from humanoid_sim.dynamics.configuration import (
    difference,
    integrate,
    normalize_configuration,
)
from humanoid_sim.dynamics.kinematic_tree import KinematicTree, kinematic_tree
from humanoid_sim.dynamics.kinematics import (
    body_index,
    body_jacobian,
    center_of_mass,
    com_jacobian,
    forward_kinematics,
    frame_jacobian,
    frame_placement,
    point_drift_acceleration,
    point_jacobian,
)
from humanoid_sim.dynamics.rigid_body_dynamics import (
    bias_forces,
    contact_space_matrix,
    forward_dynamics,
    gravity_forces,
    inverse_dynamics,
    mass_matrix,
)
from humanoid_sim.dynamics.workspace import DynamicsWorkspace

__all__ = [
    "DynamicsWorkspace",
    "KinematicTree",
    "bias_forces",
    "body_index",
    "body_jacobian",
    "center_of_mass",
    "com_jacobian",
    "contact_space_matrix",
    "difference",
    "forward_dynamics",
    "forward_kinematics",
    "frame_jacobian",
    "frame_placement",
    "gravity_forces",
    "integrate",
    "inverse_dynamics",
    "kinematic_tree",
    "mass_matrix",
    "normalize_configuration",
    "point_drift_acceleration",
    "point_jacobian",
]
