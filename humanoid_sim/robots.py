"""Robots by file or by the bundled name: ``load_robot()`` is the 69 kg bundled humanoid."""

from __future__ import annotations

import os

from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.package_data import package_file

__all__ = ["BUNDLED_URDF", "load_robot"]

BUNDLED_URDF = "urdf/humanoid.urdf"  # inside the package's share directory


def load_robot(urdf: str | os.PathLike[str] | None = None, mimic: str = "error") -> RobotModel:
    """The RobotModel of a URDF file or URDF XML; None: the bundled humanoid (found wherever
    the package is installed). mimic: "error", "independent" or "fixed" (see load_urdf).
    Raises UrdfError naming the file and the fault."""
    return load_urdf(package_file(BUNDLED_URDF) if urdf is None else urdf, mimic=mimic)
