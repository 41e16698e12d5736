"""Model variations of a campaign run: scaled masses and inertias, and a tilted gravity for a
slope (RobotModel is a frozen dataclass: a varied model is a new one, the original stays)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from humanoid_sim.model.robot_model import RobotModel

__all__ = ["scaled_model", "slope_gravity"]


def scaled_model(model: RobotModel, mass_scale: float = 1.0, inertia_scale: float = 1.0) -> RobotModel:
    """`model` with every body's mass x mass_scale and rotational inertia about its CoM
    x mass_scale x inertia_scale (a uniformly denser robot, then an inertia error on top).
    Returns the model itself when both scales are 1."""
    if mass_scale == 1.0 and inertia_scale == 1.0:
        return model
    return dataclasses.replace(
        model,
        mass=np.array(model.mass) * mass_scale,
        inertia_com=np.array(model.inertia_com) * (mass_scale * inertia_scale),
    )


def slope_gravity(model: RobotModel, slope_deg: float, direction_deg: float = 0.0) -> np.ndarray | None:
    """Gravity (3,) [m/s^2] in the frame of a ground tilted by slope_deg, uphill towards
    direction_deg in the ground plane (0 = +x): it pulls downhill by |g| sin(slope).
    None for a flat ground (the model's own gravity)."""
    if slope_deg == 0.0:
        return None
    g = float(np.linalg.norm(model.gravity))
    s, d = math.radians(slope_deg), math.radians(direction_deg)
    return np.array([-g * math.sin(s) * math.cos(d), -g * math.sin(s) * math.sin(d), -g * math.cos(s)])
