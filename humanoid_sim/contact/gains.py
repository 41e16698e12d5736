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
    # A hard provider row past its limit (a joint past its stop) is driven back by the
    # correction of Eq. 20b at most this fast [rad/s or m/s]: its stiff term kp err is capped
    # at kd x this. The correction does work that no force pays for: with the cap about
    # 1/2 I (this / 2)^2 per limb in the first step, instead of kp err x err (a stop holding
    # 300 N m at 5e-4 rad of correction: 0.15 J per step of a flailing robot).
    max_correction: float = 5e-2
