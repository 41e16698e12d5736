"""Velocity limits applied by limiting the actuator effort (the URDF / ros_control safety-controller rule).

A joint's actuator may not drive it past its velocity limit; gravity, contacts and the other
joints still can. With effort limit ``e`` [N m or N], velocity limit ``v_max`` [rad/s or m/s]
and gain ``k_v`` [N m s/rad or N s/m] (``JointLimits.k_velocity``: the URDF's
``<safety_controller k_velocity>``, or :func:`humanoid_sim.model.robot_model.default_k_velocity`),
the admissible actuator effort at joint velocity ``qdot`` is ``[lower, upper]`` with

    lower = clamp(-k_v (qdot + v_max), -e, e)
    upper = clamp(-k_v (qdot - v_max), -e, e)

exactly ros_control's ``EffortJointSoftLimitsHandle`` without soft position limits (the
position limits are constraint rows of the step). Far from the limits the interval is
``[-e, e]``; within ``e / k_v`` of ``v_max`` the upper bound falls linearly to 0 at ``v_max``;
beyond, it becomes a braking effort, down to ``-e`` (then ``lower = upper = -e``: the
actuator brakes with all it has). ``lower <= upper`` always. A joint without a velocity
limit (``v_max = inf``) or with ``k_v = 0`` gets ``[-e, e]``.

Evaluated at the velocity at the start of a step (:func:`effort_bounds_into`), the rule is an
explicit feedback of gain ``k_v``: a joint of effective inertia ``m`` [kg m^2 or kg] stepped
with ``dt`` overshoots and chatters (by up to ``e dt / m``) unless ``k_v dt <= m``, and the
light distal joints of a humanoid have ``e dt / m`` of 2--16 ``v_max`` at 1 ms. The step should
therefore use :func:`implicit_effort_bounds_into`: the same rule evaluated at the velocity the
joint reaches at the end of the step, linearised with the joint's own effective inertia:

    qdot_end = qdot_free + dt * inverse_inertia * tau
    lower/upper from the rule with qdot -> qdot_free and k_v -> k_v / (1 + k_v dt inverse_inertia)

where ``qdot_free`` is the joint velocity at the end of the step without the actuator effort
and ``inverse_inertia`` is ``(M^-1)_jj``, the diagonal of the inverse joint-space inertia (the
acceleration of joint j per unit effort at joint j, everything else free). For one joint this
is exact and never overshoots: if ``qdot_free <= v_max`` then ``qdot_end <= v_max``, for any
``k_v`` and ``dt``.

Kernels write into caller-owned output arrays (allocation-free, for the compiled step); the
Python wrappers take a RobotModel or its JointLimits and allocate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.model.robot_model import JointLimits, RobotModel

__all__ = [
    "EffortBounds",
    "clamp_effort_into",
    "effort_bounds",
    "effort_bounds_into",
    "implicit_effort_bounds",
    "implicit_effort_bounds_into",
]


class EffortBounds(NamedTuple):
    """Admissible actuator effort per joint [N m or N], shapes (nj,); lower <= upper."""

    lower: np.ndarray
    upper: np.ndarray


@njit(cache=True, inline="always")
def _rule(qdot: float, effort: float, v_max: float, k: float) -> tuple[float, float]:
    """(lower, upper) of one joint; [-e, e] without a velocity rule or a non-finite velocity."""
    if not (k > 0.0) or not (v_max < math.inf) or not math.isfinite(qdot):
        return -effort, effort
    lower = min(max(-k * (qdot + v_max), -effort), effort)
    upper = min(max(-k * (qdot - v_max), -effort), effort)
    return lower, upper


@njit(cache=True)
def effort_bounds_into(
    qdot: np.ndarray,
    effort: np.ndarray,
    velocity: np.ndarray,
    k_velocity: np.ndarray,
    lower_out: np.ndarray,
    upper_out: np.ndarray,
) -> None:
    """Explicit rule: admissible effort at the current joint velocities, into the out arrays.

    qdot: joint velocities [rad/s or m/s], (nj,); effort, velocity, k_velocity: the model's
    JointLimits arrays, (nj,); lower_out, upper_out: (nj,) [N m or N], overwritten.
    Stable without chatter only where ``k_v dt <= m`` (module docstring).
    """
    for j in range(qdot.shape[0]):
        lower_out[j], upper_out[j] = _rule(qdot[j], effort[j], velocity[j], k_velocity[j])


@njit(cache=True)
def implicit_effort_bounds_into(
    qdot_free: np.ndarray,
    inverse_inertia: np.ndarray,
    dt: float,
    effort: np.ndarray,
    velocity: np.ndarray,
    k_velocity: np.ndarray,
    lower_out: np.ndarray,
    upper_out: np.ndarray,
) -> None:
    """Rule evaluated at the end of the step (module docstring), into the out arrays.

    qdot_free: joint velocities [rad/s or m/s] at the end of the step without actuator
    effort, (nj,); inverse_inertia: (M^-1)_jj >= 0 [1/(kg m^2) or 1/kg], (nj,); dt: step [s];
    effort, velocity, k_velocity: the model's JointLimits arrays, (nj,); lower_out, upper_out:
    (nj,) [N m or N], overwritten.
    """
    for j in range(qdot_free.shape[0]):
        k = k_velocity[j] / (1.0 + k_velocity[j] * dt * inverse_inertia[j])
        lower_out[j], upper_out[j] = _rule(qdot_free[j], effort[j], velocity[j], k)


@njit(cache=True)
def clamp_effort_into(tau: np.ndarray, lower: np.ndarray, upper: np.ndarray, tau_out: np.ndarray) -> None:
    """Applied actuator effort: tau (nj,) [N m or N] clamped into [lower, upper], into tau_out (nj,).

    tau_out may be tau itself.
    """
    for j in range(tau.shape[0]):
        tau_out[j] = min(max(tau[j], lower[j]), upper[j])


def _limits(model: RobotModel | JointLimits) -> JointLimits:
    return model.limits if isinstance(model, RobotModel) else model


def _joint_vector(values: np.ndarray, nj: int, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=float)
    if array.shape != (nj,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({nj},)")
    return array


def effort_bounds(model: RobotModel | JointLimits, qdot: np.ndarray) -> EffortBounds:
    """Admissible actuator effort at joint velocities qdot (nj,) [rad/s or m/s] (explicit rule)."""
    limits = _limits(model)
    nj = len(limits.effort)
    bounds = EffortBounds(np.empty(nj), np.empty(nj))
    effort_bounds_into(
        _joint_vector(qdot, nj, "qdot"), limits.effort, limits.velocity, limits.k_velocity, *bounds
    )
    return bounds


def implicit_effort_bounds(
    model: RobotModel | JointLimits, qdot_free: np.ndarray, inverse_inertia: np.ndarray, dt: float
) -> EffortBounds:
    """Admissible actuator effort for a step of dt [s], evaluated at its end (module docstring).

    qdot_free: joint velocities at the end of the step without actuator effort (nj,)
    [rad/s or m/s]; inverse_inertia: (M^-1)_jj (nj,) [1/(kg m^2) or 1/kg].
    """
    limits = _limits(model)
    nj = len(limits.effort)
    bounds = EffortBounds(np.empty(nj), np.empty(nj))
    implicit_effort_bounds_into(
        _joint_vector(qdot_free, nj, "qdot_free"),
        _joint_vector(inverse_inertia, nj, "inverse_inertia"),
        float(dt),
        limits.effort,
        limits.velocity,
        limits.k_velocity,
        *bounds,
    )
    return bounds
