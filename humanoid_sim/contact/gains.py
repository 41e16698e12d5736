"""The contact step's correction gains and velocity thresholds (seed 000 Eq. 20b, 4.6)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Gains", "Thresholds"]


class Gains(NamedTuple):
    """Penetration / drift correction of Eq. 20b: θ̈_C = -kp err - kd θ̇_C [1/s^2, 1/s]."""

    kp: float
    kd: float

    @staticmethod
    def critically_damped(dt: float, steps: float = 4.0) -> "Gains":
        """Errors decay critically damped with time constant ``steps`` * dt."""
        w = 1.0 / (steps * dt)
        return Gains(w * w, 2.0 * w)


class Thresholds(NamedTuple):
    """Velocity thresholds [m/s] (and rad/s for rows of joint limits)."""

    separating: float = 1e-3  # a point moving away faster than this is not in contact
    impact: float = 1e-3  # approaching faster than this triggers the impulse phase
    bounce: float = 1e-2  # restitution applies above this approach speed (below: plastic)
