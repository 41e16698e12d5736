"""Swing-foot trajectory between two footsteps.

With the phase s = (t - t_lift) / T in [0, 1]:
- horizontal position and yaw follow the quintic blend σ(s) = 10 s^3 - 15 s^4 + 6 s^5
  (zero velocity and acceleration at lift-off and touch-down);
- height follows z(s) = z_ground + h · 64 s^3 (1 - s)^3, the apex h at s = 1/2 with zero
  velocity and acceleration at both ends.
Positions are of the sole centre in the world frame [m]; yaw about world z [rad].
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from humanoid_sim.control.footsteps import Footstep


class SwingSample(NamedTuple):
    """position [m], velocity [m/s], acceleration [m/s^2]: shape (3,) each, world frame;
    yaw [rad], yaw_rate [rad/s], yaw_acc [rad/s^2] about world z."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    yaw: float
    yaw_rate: float
    yaw_acc: float


def _blend(s: float) -> tuple[float, float, float]:
    """σ(s), dσ/ds, d²σ/ds² of the quintic 10 s^3 - 15 s^4 + 6 s^5."""
    s2 = s * s
    return (
        s2 * s * (10.0 - 15.0 * s + 6.0 * s2),
        30.0 * s2 * (1.0 - s) ** 2,
        60.0 * s * (1.0 - s) * (1.0 - 2.0 * s),
    )


def _bump(s: float) -> tuple[float, float, float]:
    """b(s) = 64 s^3 (1-s)^3 and its first two derivatives in s (b(1/2) = 1)."""
    u = s * (1.0 - s)
    du = 1.0 - 2.0 * s
    return 64.0 * u**3, 192.0 * u * u * du, 192.0 * (2.0 * u * du * du - 2.0 * u * u)


def swing_foot_sample(
    start: Footstep,
    end: Footstep,
    t: float,
    t_lift: float,
    duration: float,
    apex_height: float,
    ground_height: float = 0.0,
) -> SwingSample:
    """Sole pose and its derivatives at time t [s] of a swing from ``start`` to ``end``.

    t_lift: lift-off time [s]; duration: swing time T > 0 [s]; apex_height: h [m] above
    ground_height [m]. Outside [t_lift, t_lift + T] the ends are held with zero velocity.
    """
    if duration <= 0.0:
        raise ValueError(f"swing duration must be > 0, got {duration!r}")
    s = min(max((t - t_lift) / duration, 0.0), 1.0)
    sig, dsig, ddsig = _blend(s)
    b, db, ddb = _bump(s)
    inv_t = 1.0 / duration
    p0 = np.array([start.x, start.y])
    p1 = np.array([end.x, end.y])
    dp = p1 - p0
    position = np.empty(3)
    velocity = np.empty(3)
    acceleration = np.empty(3)
    position[:2] = p0 + sig * dp
    velocity[:2] = dsig * inv_t * dp
    acceleration[:2] = ddsig * inv_t * inv_t * dp
    position[2] = ground_height + apex_height * b
    velocity[2] = apex_height * db * inv_t
    acceleration[2] = apex_height * ddb * inv_t * inv_t
    dyaw = (end.yaw - start.yaw + math.pi) % (2.0 * math.pi) - math.pi
    return SwingSample(
        position,
        velocity,
        acceleration,
        start.yaw + sig * dyaw,
        dsig * inv_t * dyaw,
        ddsig * inv_t * inv_t * dyaw,
    )
