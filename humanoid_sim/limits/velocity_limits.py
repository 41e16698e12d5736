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
limit (``v_max = inf``) or with ``k_v = 0`` gets ``[-e, e]``. The applied effort is the
commanded one clamped into the interval.

Where the rule is evaluated decides whether it holds:

- :func:`effort_bounds_into`, at the velocity at the start of the step, is an explicit
  feedback of gain ``k_v``: a joint of effective inertia ``m`` [kg m^2 or kg] stepped with
  ``dt`` chatters past its limit (by up to ``e dt / m``) unless ``k_v dt <= m``; the light
  distal joints of the public humanoids gain 3--16 ``v_max`` in one 1 ms step at full effort.
- :func:`implicit_effort_bounds_into` evaluates it at the end of the step for each joint
  alone: ``qdot_end = qdot_free + dt * (M^-1)_jj * tau`` (``qdot_free``: the joint velocity at
  the end of the step without actuator effort), which amounts to the rule at ``qdot_free``
  with the gain ``k_v / (1 + k_v dt (M^-1)_jj)``. Exact for one joint: if
  ``qdot_free <= v_max`` then ``qdot_end <= v_max``, for any ``k_v`` and ``dt``. But each
  actuator also accelerates the other joints (off-diagonal M^-1): a humanoid with every joint
  at full effort runs away (``bench/joint_limits.py``).
- :func:`coupled_effort_limits_into` solves the rule at the end of the step for all joints
  at once with the joint block of M^-1 (semi-smooth Newton on the pieces of the rule,
  safeguarded by Gauss-Seidel sweeps). This is the one for the step. A joint then exceeds
  its limit only while its actuator brakes with its whole effort (gravity, contacts, the
  other actuators, Coriolis forces push it).

Kernels take the rule's arrays as a :class:`VelocityRule` and write into caller-owned arrays
(allocation-free, for the compiled step); the Python wrappers take a RobotModel or its
JointLimits and allocate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.dynamics.mass_factor import solve_vec_nb
from humanoid_sim.model.robot_model import JointLimits, RobotModel

__all__ = [
    "CoupledWork",
    "EffortBounds",
    "VelocityRule",
    "clamp_effort_into",
    "coupled_effort_limits",
    "coupled_effort_limits_into",
    "coupled_work",
    "effort_bounds",
    "effort_bounds_into",
    "free_joint_velocities_nb",
    "implicit_effort_bounds",
    "implicit_effort_bounds_into",
    "velocity_rule",
]


class VelocityRule(NamedTuple):
    """The arrays the rule reads, shapes (nj,), from a model's JointLimits.

    effort: e [N m or N] (inf: none); velocity: v_max [rad/s or m/s] (inf: none);
    k_velocity: k_v [N m s/rad or N s/m] (0: no velocity rule).
    """

    effort: np.ndarray
    velocity: np.ndarray
    k_velocity: np.ndarray


class EffortBounds(NamedTuple):
    """Admissible actuator effort per joint [N m or N], shapes (nj,); lower <= upper."""

    lower: np.ndarray
    upper: np.ndarray


class CoupledWork(NamedTuple):
    """Scratch arrays of :func:`coupled_effort_limits_into` for nj joints (see coupled_work)."""

    matrix: np.ndarray  # (nj, nj) float
    rhs: np.ndarray  # (nj,) float
    constant: np.ndarray  # (nj,) float
    index: np.ndarray  # (nj,) int64
    piece: np.ndarray  # (nj,) int64
    saved: np.ndarray  # (nj,) float


def velocity_rule(model: RobotModel | JointLimits) -> VelocityRule:
    """The rule's arrays of a model (or of its JointLimits); no copy."""
    limits = model.limits if isinstance(model, RobotModel) else model
    return VelocityRule(limits.effort, limits.velocity, limits.k_velocity)


def coupled_work(nj: int) -> CoupledWork:
    """Scratch arrays for :func:`coupled_effort_limits_into`, allocated once per model."""
    return CoupledWork(
        matrix=np.zeros((nj, nj)),
        rhs=np.zeros(nj),
        constant=np.zeros(nj),
        index=np.zeros(nj, np.int64),
        piece=np.zeros(nj, np.int64),
        saved=np.zeros(nj),
    )


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
    qdot: np.ndarray, rule: VelocityRule, lower_out: np.ndarray, upper_out: np.ndarray
) -> None:
    """The rule at the current joint velocities qdot (nj,) [rad/s or m/s], into lower_out,
    upper_out (nj,) [N m or N]. Chatters unless ``k_v dt <= m`` (module docstring)."""
    for j in range(qdot.shape[0]):
        lower_out[j], upper_out[j] = _rule(qdot[j], rule.effort[j], rule.velocity[j], rule.k_velocity[j])


@njit(cache=True)
def implicit_effort_bounds_into(
    qdot_free: np.ndarray,
    inverse_inertia: np.ndarray,
    dt: float,
    rule: VelocityRule,
    lower_out: np.ndarray,
    upper_out: np.ndarray,
) -> None:
    """The rule at the end of a step of dt [s], joint by joint (module docstring).

    qdot_free: joint velocities at the end of the step without actuator effort (nj,)
    [rad/s or m/s]; inverse_inertia: (M^-1)_jj >= 0 (nj,) [1/(kg m^2) or 1/kg];
    lower_out, upper_out: (nj,) [N m or N], overwritten.
    """
    for j in range(qdot_free.shape[0]):
        k = rule.k_velocity[j] / (1.0 + rule.k_velocity[j] * dt * inverse_inertia[j])
        lower_out[j], upper_out[j] = _rule(qdot_free[j], rule.effort[j], rule.velocity[j], k)


# Pieces of the applied effort as a function of the joint's end velocity w.
_CONSTANT, _RAMP_UP, _RAMP_DOWN = 0, 1, 2  # value, -k (w - v_max), -k (w + v_max)
_MAX_ITERATIONS = 200


@njit(cache=True, inline="always")
def _piece(tau_cmd: float, qdot: float, effort: float, v_max: float, k: float) -> tuple[int, float]:
    """Which piece the applied effort clamp(tau_cmd, lower(qdot), upper(qdot)) is on, and its
    value (the constant, or the ramp's value at qdot)."""
    if not (k > 0.0) or not (v_max < math.inf) or not math.isfinite(qdot):
        return _CONSTANT, min(max(tau_cmd, -effort), effort)
    up, down = -k * (qdot - v_max), -k * (qdot + v_max)
    upper, lower = min(max(up, -effort), effort), min(max(down, -effort), effort)
    if tau_cmd > upper:
        return (_RAMP_UP if -effort < up < effort else _CONSTANT), upper
    if tau_cmd < lower:
        return (_RAMP_DOWN if -effort < down < effort else _CONSTANT), lower
    return _CONSTANT, tau_cmd


@njit(cache=True)
def _end_velocities(
    qdot_free: np.ndarray, inverse_inertia: np.ndarray, dt: float, tau: np.ndarray, qdot_end_out: np.ndarray
) -> None:
    """qdot_end_out = qdot_free + dt * inverse_inertia @ tau, all (nj,)."""
    n = tau.shape[0]
    for i in range(n):
        total = qdot_free[i]
        for j in range(n):
            total += dt * inverse_inertia[i, j] * tau[j]
        qdot_end_out[i] = total


@njit(cache=True)
def _objective(
    tau: np.ndarray, tau_cmd: np.ndarray, qdot_free: np.ndarray, inverse_inertia: np.ndarray, dt: float,
    rule: VelocityRule,
) -> float:
    """The strongly convex function the coupled rule minimises over -e <= tau <= e:
    dt/2 tau.A.tau + tau.qdot_free + sum over ruled joints of tau_j^2 / (2 k_j) + v_j |tau_j - tau_cmd_j|
    (its optimality conditions are the rule at qdot_end = qdot_free + dt A tau)."""
    n = tau.shape[0]
    total = 0.0
    for i in range(n):
        row = 0.0
        for j in range(n):
            row += inverse_inertia[i, j] * tau[j]
        total += tau[i] * (0.5 * dt * row + qdot_free[i])
        k, v = rule.k_velocity[i], rule.velocity[i]
        if k > 0.0 and v < math.inf:
            total += 0.5 * tau[i] * tau[i] / k + v * abs(tau[i] - tau_cmd[i])
    return total


@njit(cache=True)
def _solve_ramps(
    qdot_free: np.ndarray, inverse_inertia: np.ndarray, dt: float, rule: VelocityRule, work: CoupledWork,
    tau_out: np.ndarray,
) -> bool:
    """Efforts with every joint on the piece in work.piece: constants fixed, ramps solved together.

    A ramp joint j: tau_j = -k_j (qdot_end_j -+ v_max_j), qdot_end = qdot_free + dt A tau, i.e.
    (diag(1/k) + dt A_RR) tau_R = -(qdot_free_R -+ v_max_R) - dt A_RC tau_C (symmetric positive
    definite; Cholesky in work.matrix). False when the factorisation fails.
    """
    n = tau_out.shape[0]
    m = 0
    for j in range(n):
        if work.piece[j] == _CONSTANT:
            tau_out[j] = work.constant[j]
        else:
            work.index[m] = j
            m += 1
    for a in range(m):
        i = work.index[a]
        sign = 1.0 if work.piece[i] == _RAMP_UP else -1.0
        r = -(qdot_free[i] - sign * rule.velocity[i])
        for j in range(n):
            if work.piece[j] == _CONSTANT:
                r -= dt * inverse_inertia[i, j] * tau_out[j]
        work.rhs[a] = r
        for b in range(m):
            work.matrix[a, b] = dt * inverse_inertia[i, work.index[b]]
        work.matrix[a, a] += 1.0 / rule.k_velocity[i]
    for a in range(m):  # in-place Cholesky, lower triangle
        for b in range(a + 1):
            total = work.matrix[a, b]
            for c in range(b):
                total -= work.matrix[a, c] * work.matrix[b, c]
            if a == b:
                if not (total > 0.0):
                    return False
                work.matrix[a, a] = math.sqrt(total)
            else:
                work.matrix[a, b] = total / work.matrix[b, b]
    for a in range(m):  # forward substitution
        total = work.rhs[a]
        for c in range(a):
            total -= work.matrix[a, c] * work.rhs[c]
        work.rhs[a] = total / work.matrix[a, a]
    for a in range(m - 1, -1, -1):  # back substitution
        total = work.rhs[a]
        for c in range(a + 1, m):
            total -= work.matrix[c, a] * work.rhs[c]
        work.rhs[a] = total / work.matrix[a, a]
        i = work.index[a]
        tau_out[i] = min(max(work.rhs[a], -rule.effort[i]), rule.effort[i])
    return True


@njit(cache=True)
def _gauss_seidel_sweep(
    tau_cmd: np.ndarray, inverse_inertia: np.ndarray, dt: float, rule: VelocityRule, tau: np.ndarray,
    qdot_end: np.ndarray,
) -> None:
    """One sweep of exact one-joint updates given the others (never increases the objective)."""
    n = tau.shape[0]
    for j in range(n):
        a = inverse_inertia[j, j]
        without_j = qdot_end[j] - dt * a * tau[j]
        k = rule.k_velocity[j] / (1.0 + rule.k_velocity[j] * dt * a)
        lower, upper = _rule(without_j, rule.effort[j], rule.velocity[j], k)
        change = min(max(tau_cmd[j], lower), upper) - tau[j]
        if change != 0.0:
            tau[j] += change
            for i in range(n):
                qdot_end[i] += dt * inverse_inertia[i, j] * change


@njit(cache=True)
def coupled_effort_limits_into(
    tau_cmd: np.ndarray,
    qdot_free: np.ndarray,
    inverse_inertia: np.ndarray,
    dt: float,
    rule: VelocityRule,
    warm_start: bool,
    work: CoupledWork,
    tau_out: np.ndarray,
    qdot_end_out: np.ndarray,
) -> int:
    """Applied efforts of all joints at once, each within its rule at the end of the step.

    Solves tau_j = clamp(tau_cmd_j, lower_j(qdot_end_j), upper_j(qdot_end_j)) for every joint j,
    with qdot_end = qdot_free + dt * inverse_inertia @ tau. These are the optimality conditions
    of a strongly convex minimisation over the effort box (see _objective), so the solution is
    unique. Each iteration guesses every joint's piece (constant or ramp) from the current end
    velocities and solves the ramps together (one Cholesky of at most nj x nj, a semi-smooth
    Newton step), kept, or halved up to 3 times, if it lowers the objective, then one
    Gauss-Seidel sweep (each
    joint's exact update given the others, which never raises it). Stops when every joint
    obeys its rule to 1e-9 relative (or, on a ramp, to its slope times 1e-12 of the terms
    of its end velocity: rounding).

    tau_cmd: commanded efforts [N m or N], (nj,), finite; qdot_free: joint velocities at the end
    of the step without actuator effort [rad/s or m/s], (nj,); inverse_inertia: the joint block
    of M^-1, symmetric positive definite [1/(kg m^2) or 1/kg], (nj, nj); dt: step [s];
    warm_start: start from the efforts in tau_out (the previous step's) rather than tau_cmd;
    work: coupled_work(nj). tau_out: applied efforts (nj,), overwritten, always within the
    effort limits; qdot_end_out: end velocities with them (nj,), overwritten.
    Returns the iterations made, 200 when it did not converge (the rule then holds only
    approximately; the efforts are still within the effort limits).
    """
    n = tau_cmd.shape[0]
    for j in range(n):
        start = tau_out[j] if warm_start and math.isfinite(tau_out[j]) else tau_cmd[j]
        tau_out[j] = min(max(start, -rule.effort[j]), rule.effort[j])
    _end_velocities(qdot_free, inverse_inertia, dt, tau_out, qdot_end_out)
    for iteration in range(1, _MAX_ITERATIONS + 1):
        converged = True
        for j in range(n):
            piece, value = _piece(
                tau_cmd[j], qdot_end_out[j], rule.effort[j], rule.velocity[j], rule.k_velocity[j]
            )
            work.piece[j] = piece
            work.constant[j] = value
            if converged and abs(value - tau_out[j]) > 1e-9 * (1.0 + abs(value)):
                # the end velocity is known to rounding only: allow the ramp's slope times that
                scale = abs(qdot_free[j])
                for i in range(n):
                    scale += dt * abs(inverse_inertia[j, i] * tau_out[i])
                if piece == _CONSTANT or abs(value - tau_out[j]) > 1e-12 * rule.k_velocity[j] * scale:
                    converged = False
        if converged or iteration == _MAX_ITERATIONS:
            return iteration
        before = _objective(tau_out, tau_cmd, qdot_free, inverse_inertia, dt, rule)
        for j in range(n):
            work.saved[j] = tau_out[j]
        fraction = 0.0
        if _solve_ramps(qdot_free, inverse_inertia, dt, rule, work, tau_out):
            # backtrack along the segment from the saved efforts (both ends lie in the effort box)
            for j in range(n):
                work.rhs[j] = tau_out[j] - work.saved[j]
            trial = 1.0
            for _ in range(4):
                for j in range(n):
                    tau_out[j] = work.saved[j] + trial * work.rhs[j]
                if _objective(tau_out, tau_cmd, qdot_free, inverse_inertia, dt, rule) < before:
                    fraction = trial
                    break
                trial *= 0.5
        if fraction == 0.0:
            for j in range(n):
                tau_out[j] = work.saved[j]
        _end_velocities(qdot_free, inverse_inertia, dt, tau_out, qdot_end_out)
        _gauss_seidel_sweep(tau_cmd, inverse_inertia, dt, rule, tau_out, qdot_end_out)
    return _MAX_ITERATIONS


@njit(cache=True)
def free_joint_velocities_nb(L, parent, force, v, damping, joints, tau_j, dt, rhs, acc, qdot_end, ramp) -> bool:
    """The joint velocities qdot_end (nj,) at the end of a step dt from velocities v (nv,)
    with joint efforts tau_j (nj,) at the velocity coordinates ``joints`` and the
    generalized force ``force`` (nv,) (external forces less the bias b) [N, N m], no
    contacts: v + dt A^-1 (force - damping v + tau), A = Lᵀ L the step's inertia (its tree
    factor, dynamics/mass_factor.py; parent (nv,): its coordinates' parents).
    rhs, acc (nv,): scratch. Returns whether every |qdot_end[j]| <= ramp[j] (nj,)."""
    nv = v.shape[0]
    for i in range(nv):
        rhs[i] = force[i] - damping[i] * v[i]
    for j in range(joints.shape[0]):
        rhs[joints[j]] += tau_j[j]
    solve_vec_nb(L, parent, rhs, acc)
    within = True
    for j in range(joints.shape[0]):
        k = joints[j]
        qdot_end[j] = v[k] + dt * acc[k]
        within = within and abs(qdot_end[j]) <= ramp[j]
    return within


@njit(cache=True)
def clamp_effort_into(tau: np.ndarray, lower: np.ndarray, upper: np.ndarray, tau_out: np.ndarray) -> None:
    """Applied actuator effort: tau (nj,) [N m or N] clamped into [lower, upper], into tau_out (nj,).

    tau_out may be tau itself.
    """
    for j in range(tau.shape[0]):
        tau_out[j] = min(max(tau[j], lower[j]), upper[j])


def _joint_vector(values: np.ndarray, nj: int, name: str) -> np.ndarray:
    array = np.ascontiguousarray(values, dtype=float)
    if array.shape != (nj,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({nj},)")
    return array


def effort_bounds(model: RobotModel | JointLimits, qdot: np.ndarray) -> EffortBounds:
    """The rule at joint velocities qdot (nj,) [rad/s or m/s] (start of the step)."""
    rule = velocity_rule(model)
    nj = len(rule.effort)
    bounds = EffortBounds(np.empty(nj), np.empty(nj))
    effort_bounds_into(_joint_vector(qdot, nj, "qdot"), rule, *bounds)
    return bounds


def implicit_effort_bounds(
    model: RobotModel | JointLimits, qdot_free: np.ndarray, inverse_inertia: np.ndarray, dt: float
) -> EffortBounds:
    """The rule at the end of a step of dt [s], joint by joint (module docstring).

    qdot_free: joint velocities at the end of the step without actuator effort (nj,)
    [rad/s or m/s]; inverse_inertia: (M^-1)_jj (nj,) [1/(kg m^2) or 1/kg].
    """
    rule = velocity_rule(model)
    nj = len(rule.effort)
    bounds = EffortBounds(np.empty(nj), np.empty(nj))
    implicit_effort_bounds_into(
        _joint_vector(qdot_free, nj, "qdot_free"),
        _joint_vector(inverse_inertia, nj, "inverse_inertia"),
        float(dt),
        rule,
        *bounds,
    )
    return bounds


def coupled_effort_limits(
    model: RobotModel | JointLimits,
    tau_cmd: np.ndarray,
    qdot_free: np.ndarray,
    inverse_inertia: np.ndarray,
    dt: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Applied efforts (nj,) [N m or N] and end velocities (nj,) [rad/s or m/s] of
    :func:`coupled_effort_limits_into`; inverse_inertia: joint block of M^-1, (nj, nj)."""
    rule = velocity_rule(model)
    nj = len(rule.effort)
    A = np.ascontiguousarray(inverse_inertia, dtype=float)
    if A.shape != (nj, nj):
        raise ValueError(f"inverse_inertia has shape {A.shape}, expected ({nj}, {nj})")
    tau, qdot_end = np.empty(nj), np.empty(nj)
    coupled_effort_limits_into(
        _joint_vector(tau_cmd, nj, "tau_cmd"), _joint_vector(qdot_free, nj, "qdot_free"), A, float(dt), rule,
        False, coupled_work(nj), tau, qdot_end,
    )
    return tau, qdot_end
