"""A push on a link: a horizontal force at the origin of the link's frame for a while, as the
generalized force J^T F that Simulator.step takes as ``external_force``.

Frames: the force is in world axes [N]; the point is the link frame's origin, moving with
the link; J is the (3, nv) linear part of its point Jacobian (dynamics.point_jacobian).
"""

from __future__ import annotations

import math

import numpy as np

from humanoid_sim.dynamics import frame_placement, point_jacobian
from humanoid_sim.model.robot_model import RobotModel

__all__ = ["LinkPush"]


class LinkPush:
    """force_n [N] towards direction_deg in the world xy plane (0 = +x, 90 = +y) on the origin
    of `link` from start_s for duration_s [s] of simulated time."""

    def __init__(self, model: RobotModel, link: str, force_n: float, direction_deg: float, start_s: float,
                 duration_s: float) -> None:
        self.model = model
        self.link = link
        self.body = model.frame(link).body  # KeyError lists the valid frames
        angle = math.radians(direction_deg)
        self.force = np.array([force_n * math.cos(angle), force_n * math.sin(angle), 0.0])
        self.start_s = float(start_s)
        self.end_s = float(start_s) + float(duration_s)
        self.active_any = force_n > 0.0 and duration_s > 0.0

    def active(self, t: float) -> bool:
        """Whether the push acts over the step that starts at t [s]."""
        return self.active_any and self.start_s <= t + 1e-12 < self.end_s

    def generalized_force(self, q: np.ndarray, t: float) -> np.ndarray | None:
        """J^T F (nv,) [N, N m] for the step that starts at t with configuration q (nq,);
        None when the push does not act then."""
        if not self.active(t):
            return None
        point = frame_placement(self.model, q, self.link)[:3, 3]
        J = point_jacobian(self.model, q, self.body, point)
        return J[:3].T @ self.force
