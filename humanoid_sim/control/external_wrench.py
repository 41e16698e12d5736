"""Feed-forward of measured external wrenches (a hand pushing a box) into the walking controller.

A robot that pushes an object feels the object's reaction on its hands: a force at a height
above the ground that tips it backwards unless its centre of mass leans into the push. Given
the measured wrenches on the robot's links (wrist force/torque sensors; in simulation the
contact reports), the moment they exert about the ground moves the ZMP, first order in the
wrenches, with the robot's weight m g, a force f at the point r (height h = r_z above the
ground) and a moment n about r, by

    s = ((h f_x - (r_x - c_x) f_z + n_y) / (m g), (h f_y - (r_y - c_y) f_z - n_x) / (m g)) [m].

The CoM leaning by -s (forward, into a push from the front) puts the centre of pressure back
where the footstep plan has it. The lean follows -s through a first-order low-pass (contact
forces jump from step to step) and then a critically damped second-order filter, both of
time constant ``time_constant`` (a fast lean needs the centre of pressure to swing the other
way first, the non-minimum-phase cart-table): ``lean`` (2,) [m], its velocity [m/s] and
acceleration [m/s^2] join the planned CoM's. ``vertical_force`` [N] is the vertical
force the wrenches carry (first-order filtered with the same time constant; the feet carry
m g less it).

``base_force`` (6,) is the floating base's part of the wrenches' generalised force Σ Jᵢᵀ wᵢ
(first-order filtered): the whole-body solve adds it to the base rows of the dynamics, so
the contact wrenches it plans carry the push (the feet's friction and centre of pressure
balance it). Its joint part is left out: against a rigid contact (a crate held by static
friction) the arms' torques compensating a measured force push harder, measure more and
run away.

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
    """The CoM lean into measured ExternalWrenches for one model (see the module docstring).

    time_constant [s] (> 0). ``update`` once per control tick after the TaskKinematics of
    the measured state is updated; then read ``lean``, ``lean_velocity``,
    ``lean_acceleration`` (2,), ``vertical_force`` and ``base_force`` (6,)."""

    def __init__(self, kin: TaskKinematics, time_constant: float, ground_height: float) -> None:
        if not (math.isfinite(time_constant) and time_constant > 0.0):
            raise ValueError(f"time_constant must be finite and > 0 [s], got {time_constant!r}")
        self.kin = kin
        self.time_constant = float(time_constant)
        self.ground_height = float(ground_height)
        self.zmp_shift = np.zeros(2)  # first-order filtered [m]
        self.lean = np.zeros(2)
        self.lean_velocity = np.zeros(2)
        self.lean_acceleration = np.zeros(2)
        self.vertical_force = 0.0
        self.base_force = np.zeros(6)
        self._base_rows = np.zeros(6)
        self._J = np.zeros((6, kin.model.nv))
        self._point = np.zeros(3)
        self._weight = kin.total_mass * float(-kin.model.gravity[2])

    def reset(self) -> None:
        """Forget the filtered state (no external wrench, no lean)."""
        self.zmp_shift[:] = 0.0
        self.lean[:] = 0.0
        self.lean_velocity[:] = 0.0
        self.lean_acceleration[:] = 0.0
        self.vertical_force = 0.0
        self.base_force[:] = 0.0

    def update(self, wrenches: Sequence[ExternalWrench] | None, dt: float) -> None:
        """Fold the wrenches measured now into the lean; dt [s]: time since the last update
        (None or empty wrenches: no external wrench now). Raises ValueError for a wrench or
        point that is not finite, KeyError (listing the frames) for an unknown link."""
        com = self.kin.com
        sx = sy = fz_total = 0.0
        raw = self._base_rows
        raw[:] = 0.0
        ws = self.kin.ws
        for w in wrenches or ():
            wrench = np.asarray(w.wrench, dtype=float)
            self._point[:] = w.point
            if wrench.shape != (6,) or not (np.all(np.isfinite(wrench)) and np.all(np.isfinite(self._point))):
                raise ValueError(f"external wrench on {w.link!r} must be 6 finite numbers at a finite point, "
                                 f"got {wrench.tolist()} at {self._point.tolist()}")
            body = self.kin.model.frame(w.link).body
            kernels.point_jacobian_into(ws.parent, ws.ndof, ws.v_index, ws.S, body, self._point, self._J)
            raw += self._J[:, :6].T @ wrench
            fx, fy, fz, nx, ny = wrench[0], wrench[1], wrench[2], wrench[3], wrench[4]
            h = self._point[2] - self.ground_height
            sx += h * fx - (self._point[0] - com[0]) * fz + ny
            sy += h * fy - (self._point[1] - com[1]) * fz - nx
            fz_total += fz
        dt = max(float(dt), 0.0)
        a = dt / (self.time_constant + dt)
        self.zmp_shift[0] += a * (sx / self._weight - self.zmp_shift[0])
        self.zmp_shift[1] += a * (sy / self._weight - self.zmp_shift[1])
        w = 1.0 / self.time_constant
        # Critically damped: lean'' = w^2 (-shift - lean) - 2 w lean' (semi-implicit Euler).
        np.multiply(-w * w, self.zmp_shift + self.lean, out=self.lean_acceleration)
        self.lean_acceleration -= 2.0 * w * self.lean_velocity
        self.lean_velocity += dt * self.lean_acceleration
        self.lean += dt * self.lean_velocity
        self.vertical_force += a * (fz_total - self.vertical_force)
        self.base_force += a * (raw - self.base_force)
