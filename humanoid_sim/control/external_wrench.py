"""Feed-forward of measured external wrenches (a hand pushing a box) into the walking controller.

A robot that pushes an object feels the object's reaction on its hands: a force at a height
above the ground that tips it backwards unless its centre of mass leans into the push. Given
the measured wrenches on the robot's links (wrist force/torque sensors; in simulation the
contact reports), this keeps, low-pass filtered over ``time_constant``:

- the generalised force Σ Jᵢᵀ wᵢ (nv,) [N, N m] the wrenches exert, which the whole-body
  dynamics add to the joint torques and contact wrenches (M θ̈ + b = Sᵀ τ + J_cᵀ f + Σ Jᵢᵀ wᵢ);
- the shift of the ZMP they cause (2,) [m], first order in the wrenches: with the robot's
  weight m g, a force f at the point r (height h = r_z above the ground) and a moment n about
  r move the ZMP of the cart-table model (p = c - c_z c̈ / g) by
  ((h f_x - (r_x - c_x) f_z + n_y) / (m g), (h f_y - (r_y - c_y) f_z - n_x) / (m g));
  the ZMP preview servo tracks the planned ZMP less this shift, so the CoM leans forward by
  h f / (m g) while the centre of pressure stays where the footstep plan puts it;
- the vertical force Σ f_z [N] they carry (the feet carry m g less it).

Frames: world axes, z up; points in the world [m]; wrenches act on the robot (the object's
reaction, not the robot's push).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.dynamics import kernels

__all__ = ["ExternalWrench", "ExternalWrenchFeedforward"]


class ExternalWrench(NamedTuple):
    """A measured wrench on one link of the robot.

    link: the link's name (a frame of the model); point: where the force acts, world [m] (3,);
    wrench: force [N] then moment about ``point`` [N m], world axes (6,), acting on the robot."""

    link: str
    point: np.ndarray
    wrench: np.ndarray


class ExternalWrenchFeedforward:
    """Low-pass filtered feed-forward of ExternalWrenches for one model (buffers allocated once).

    time_constant [s] (>= 0; 0: no filtering). ``update`` once per control tick after the
    TaskKinematics of the measured state is updated; then read ``generalized_force`` (nv,),
    ``zmp_shift`` (2,) [m] and ``vertical_force`` [N]."""

    def __init__(self, kin: TaskKinematics, time_constant: float, ground_height: float) -> None:
        if not (math.isfinite(time_constant) and time_constant >= 0.0):
            raise ValueError(f"time_constant must be finite and >= 0 [s], got {time_constant!r}")
        self.kin = kin
        self.time_constant = float(time_constant)
        self.ground_height = float(ground_height)
        nv = kin.model.nv
        self.generalized_force = np.zeros(nv)
        self.zmp_shift = np.zeros(2)
        self.vertical_force = 0.0
        self._raw = np.zeros(nv)
        self._J = np.zeros((6, nv))
        self._point = np.zeros(3)
        self._weight = kin.total_mass * float(-kin.model.gravity[2])
        self._bodies: dict[str, int] = {}

    def reset(self) -> None:
        """Forget the filtered state (no external wrench)."""
        self.generalized_force[:] = 0.0
        self.zmp_shift[:] = 0.0
        self.vertical_force = 0.0

    def _body(self, link: str) -> int:
        body = self._bodies.get(link)
        if body is None:
            body = self.kin.model.frame(link).body  # raises KeyError listing the valid frames
            self._bodies[link] = body
        return body

    def update(self, wrenches: Sequence[ExternalWrench] | None, dt: float) -> None:
        """Fold the wrenches measured now into the filtered feed-forward; dt [s]: time since the
        last update (None or empty wrenches: no external wrench now). Raises ValueError for a
        wrench or point that is not finite, KeyError for an unknown link."""
        ws, com = self.kin.ws, self.kin.com
        raw = self._raw
        raw[:] = 0.0
        sx = sy = fz_total = 0.0
        for w in wrenches or ():
            body = self._body(w.link)
            wrench = np.asarray(w.wrench, dtype=float)
            self._point[:] = w.point
            if wrench.shape != (6,) or not (np.all(np.isfinite(wrench)) and np.all(np.isfinite(self._point))):
                raise ValueError(f"external wrench on {w.link!r} must be 6 finite numbers at a finite point, "
                                 f"got {wrench.tolist()} at {self._point.tolist()}")
            kernels.point_jacobian_into(ws.parent, ws.ndof, ws.v_index, ws.S, body, self._point, self._J)
            raw += self._J.T @ wrench
            fx, fy, fz, nx, ny = wrench[0], wrench[1], wrench[2], wrench[3], wrench[4]
            h = self._point[2] - self.ground_height
            sx += h * fx - (self._point[0] - com[0]) * fz + ny
            sy += h * fy - (self._point[1] - com[1]) * fz - nx
            fz_total += fz
        a = 1.0 if self.time_constant == 0.0 else min(max(dt, 0.0) / (self.time_constant + max(dt, 0.0)), 1.0)
        self.generalized_force += a * (raw - self.generalized_force)
        self.zmp_shift[0] += a * (sx / self._weight - self.zmp_shift[0])
        self.zmp_shift[1] += a * (sy / self._weight - self.zmp_shift[1])
        self.vertical_force += a * (fz_total - self.vertical_force)
