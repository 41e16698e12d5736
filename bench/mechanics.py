"""Energies and momenta of a robot state, for the benchmarks (bench/falls.py, bench/free_flight.py).

Computed from the public dynamics API with a workspace of its own (the simulator's is
left alone): after ``DynamicsWorkspace.update(q, v)``

- kinetic energy T = 1/2 v^T M(q) v [J];
- potential energy U = -m g . c [J] (g: the model's gravity [m/s^2], c: whole-body CoM
  [m], world frame; zero at c = 0);
- spatial momentum h = sum_i Iw_i V_i (world frame, about the world origin, linear first:
  docs/conventions.md, dynamics/spatial.py): linear momentum P = h[:3] [kg m/s] and the
  angular momentum about the CoM L_c = h[3:] - c x P [kg m^2/s].
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from humanoid_sim.dynamics.kernels import center_of_mass_nb  # noqa: E402
from humanoid_sim.dynamics.workspace import DynamicsWorkspace  # noqa: E402
from humanoid_sim.model.robot_model import RobotModel  # noqa: E402

__all__ = ["MechanicalState", "MechanicsMeter", "machine_load"]


class MechanicalState(NamedTuple):
    """kinetic, potential [J]; com (3,) [m]; linear_momentum (3,) [kg m/s];
    angular_momentum_com (3,) [kg m^2/s] about the CoM; all world frame."""

    kinetic: float
    potential: float
    com: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum_com: np.ndarray

    @property
    def total(self) -> float:
        """T + U [J]."""
        return self.kinetic + self.potential


class MechanicsMeter:
    """Energies and momenta of ``model`` (its gravity) at any (q, v); buffers allocated once."""

    def __init__(self, model: RobotModel) -> None:
        self.ws = DynamicsWorkspace(model)
        self.mass = np.ascontiguousarray(model.mass, dtype=float)
        self.com_local = np.ascontiguousarray(model.com, dtype=float)
        self.gravity = np.asarray(model.gravity, dtype=float).copy()
        self._com = np.zeros(3)
        self._h = np.zeros(6)

    def kinetic(self, q: np.ndarray, v: np.ndarray) -> float:
        """T = 1/2 v^T M(q) v [J]."""
        ws = self.ws
        ws.update(q, v)
        return 0.5 * float(v @ ws.M @ v)

    def __call__(self, q: np.ndarray, v: np.ndarray) -> MechanicalState:
        ws = self.ws
        ws.update(q, v)
        T = 0.5 * float(v @ ws.M @ v)
        m = center_of_mass_nb(self.mass, self.com_local, ws.R, ws.p, self._com)
        c = self._com.copy()
        U = -m * float(self.gravity @ c)
        h = np.einsum("bij,bj->i", ws.Iw, ws.V)
        P = h[:3].copy()
        L = h[3:] - np.cross(c, P)
        return MechanicalState(T, U, c, P, L)


def machine_load() -> str:
    """The 1/5/15-minute load averages and the core count, for printing beside timings."""
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"
