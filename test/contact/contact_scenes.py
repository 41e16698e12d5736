"""Small scenes for the contact tests: a uniform free box in a chosen environment."""

from __future__ import annotations

import numpy as np

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import free_box_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

BOX_MASS = 2.0  # [kg]
BOX_SIZE = (0.2, 0.1, 0.05)  # [m]
G = 9.81


def box_model(mass: float = BOX_MASS, size=BOX_SIZE):
    return load_urdf(free_box_urdf(mass, size))


def ground_sim(material: Material, dt: float = 1e-3, mass: float = BOX_MASS, size=BOX_SIZE) -> Simulator:
    env = Environment(ground=GroundPlane(0.0, material))
    return Simulator(box_model(mass, size), SimulatorConfig(dt=dt, environment=env))


def slope_sim(alpha: float, material: Material, dt: float = 1e-3) -> tuple[Simulator, np.ndarray]:
    """A box resting on the top face of a static box tilted by alpha [rad] about y.

    Returns the simulator (box at rest on the face) and the downhill unit vector (world).
    """
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, alpha, 0.0]), np.array([4.0, 2.0, 0.2]), material)
    env = Environment(ground=None, boxes=(slope,))
    R = rpy_to_rotation([0.0, alpha, 0.0])
    p = R[:, 2] * (0.1 + BOX_SIZE[2] / 2)
    sim = Simulator(box_model(), SimulatorConfig(dt=dt, environment=env))
    sim.set_state(np.concatenate([p, rotation_to_quaternion(R)]), np.zeros(6))
    return sim, R[:, 0]


def box_q(position, R) -> np.ndarray:
    return np.concatenate([np.asarray(position, float), rotation_to_quaternion(np.asarray(R, float))])
