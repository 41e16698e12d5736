"""Rigid contact by virtual links (seed 000): environment, detection, contact states,
the constrained solve with validity checks, impulses, and the constraint-row interface."""

from humanoid_sim.contact.constrained_solve import SimulationError, factor_mass_matrix, solve_constrained
from humanoid_sim.contact.constraint_rows import ConstraintProvider, OneSidedRows
from humanoid_sim.contact.environment import (
    Environment,
    EnvironmentConfigError,
    GroundPlane,
    Material,
    StaticBox,
    environment_from_dict,
    load_environment,
)
from humanoid_sim.contact.virtual_link import ContactKind

__all__ = [
    "ConstraintProvider",
    "ContactKind",
    "Environment",
    "EnvironmentConfigError",
    "GroundPlane",
    "Material",
    "OneSidedRows",
    "SimulationError",
    "StaticBox",
    "environment_from_dict",
    "factor_mass_matrix",
    "load_environment",
    "solve_constrained",
]
