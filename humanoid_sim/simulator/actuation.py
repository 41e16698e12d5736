"""The actuator side of a step, compiled with it: commanded efforts to the step's forces.

``advance_nb(data, tau_cmd, external, soft, n_hard)`` is one ``Simulator.step`` from the
commanded joint efforts on: the efforts checked finite and clamped to their limits, the
rows of a range of motion evaluated in the step (limits/step_limits.py), step 1
(the dynamics workspace at (q, v) and M's factor), the velocity-limit rule on the efforts
(limits/velocity_limits.py: evaluated at the end of the step for all joints at once), the
generalized forces assembled, and steps 2-5 (contact/step_kernel.py). One compiled call: a
step's Python side only validates its arguments and reads the results.

Shapes: nj actuated joints, nv velocity coordinates; efforts [N m or N], generalized forces
[N, N m] (docs/conventions.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.bundle_records import borrow, unowned
from humanoid_sim.contact.methods import OK
from humanoid_sim.contact.step_kernel import free_acceleration_into, step_nb, update_dynamics_nb
from humanoid_sim.dynamics.mass_factor import solve_columns_nb
from humanoid_sim.limits.step_limits import limit_forces_nb, table_limit_rows_nb
from humanoid_sim.limits.velocity_limits import (
    CoupledWork,
    VelocityRule,
    coupled_effort_limits_into,
    coupled_work,
    free_joint_velocities_nb,
)

__all__ = ["NONFINITE_EFFORT", "NONFINITE_LIMIT_ROW", "SINGULAR_MASS", "Actuation", "actuation", "advance_nb",
           "limit_velocity_nb"]

# advance_nb's own statuses beside step_nb's (contact/methods.py): the commanded efforts are
# not finite (nothing was done); M is not positive definite at (q, v) (nothing was done); a
# row of the range of motion evaluated in the step is not finite (a ball joint at its swing's
# singularity; nothing was done)
NONFINITE_EFFORT, SINGULAR_MASS, NONFINITE_LIMIT_ROW = 10, 11, 12


class Actuation(NamedTuple):
    """The actuated joints of one model and the arrays of their step (allocated once).

    lower, upper (nj,): effort limits [N m or N]; joints (nj,) int64: their velocity
    coordinates; rule: the velocity-limit rule's arrays (VelocityRule); ruled (1,) int64: 1 when
    some joint has a velocity limit and a gain (else the rule is skipped); ramp (nj,): where a
    joint's admissible effort starts to shrink, |qdot| > v_max - e / k_v (inf: no rule)
    [rad/s or m/s]; work: the coupled rule's scratch (CoupledWork).
    Per step: applied (nj,): the applied efforts (out); tau (nv,): the generalized forces of the
    step (out); scratch: qdot_end, qdot_free, zero (nj,), force, rhs, acc (nv,), inverse (nv, nj),
    inverse_joints (nj, nj), commanded (nj,).
    """

    lower: np.ndarray
    upper: np.ndarray
    joints: np.ndarray
    rule: VelocityRule
    ruled: np.ndarray
    ramp: np.ndarray
    work: CoupledWork
    applied: np.ndarray
    tau: np.ndarray
    qdot_end: np.ndarray
    qdot_free: np.ndarray
    zero: np.ndarray
    force: np.ndarray
    rhs: np.ndarray
    acc: np.ndarray
    inverse: np.ndarray
    inverse_joints: np.ndarray
    commanded: np.ndarray


def actuation(effort: np.ndarray, joints: np.ndarray, rule: VelocityRule, nv: int) -> Actuation:
    """The Actuation of nj joints: effort (nj,) their effort limits [N m or N], joints (nj,)
    their velocity coordinates, rule their velocity-limit rule; nv velocity coordinates."""
    effort = np.ascontiguousarray(effort, dtype=float)
    nj = len(effort)
    on = np.isfinite(rule.velocity) & (rule.k_velocity > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = rule.velocity - np.where(rule.k_velocity > 0, rule.effort / rule.k_velocity, np.inf)
    return Actuation(
        -effort, effort.copy(), np.ascontiguousarray(joints, dtype=np.int64), rule,
        np.array([1 if np.any(on) else 0], dtype=np.int64), np.where(on, ramp, np.inf), coupled_work(nj),
        np.zeros(nj), np.zeros(nv), np.zeros(nj), np.zeros(nj), np.zeros(nj), np.zeros(nv), np.zeros(nv),
        np.zeros(nv), np.zeros((nv, nj)), np.zeros((nj, nj)), np.zeros(nj),
    )  # fmt: skip


@njit(cache=True)
def limit_velocity_nb(act, L, parent, b, v, damping, external, dt) -> None:
    """act.applied limited by the velocity-limit rule at the end of the step, all joints at once
    (limits/velocity_limits.py), with the joint block of M^-1 (L (nv, nv), parent (nv,): M's
    tree factor M = Lᵀ L and its coordinates' parents, dynamics/mass_factor.py)
    and the joint velocities the step would reach without actuator effort (contacts not
    counted): v (nv,), b (nv,) the bias forces, damping (nv,) [N m s/rad or N s/m], external
    (nv,) the other generalized forces [N, N m], dt [s]. The rule's solution is unique: when the
    applied efforts themselves end the step with every ruled joint short of its ramp, they are
    that solution and no joint block of M^-1 is needed."""
    nv = v.shape[0]
    force = act.force
    for i in range(nv):
        force[i] = external[i] - b[i]
    if free_joint_velocities_nb(L, parent, force, v, damping, act.joints, act.applied, dt, act.rhs, act.acc,
                                act.qdot_end, act.ramp):  # fmt: skip
        return
    free_joint_velocities_nb(L, parent, force, v, damping, act.joints, act.zero, dt, act.rhs, act.acc, act.qdot_free,
                             act.ramp)  # fmt: skip
    inverse = act.inverse
    nj = act.joints.shape[0]
    inverse[:, :] = 0.0
    for j in range(nj):
        inverse[act.joints[j], j] = 1.0
    solve_columns_nb(L, parent, inverse)
    for a in range(nj):
        for j in range(nj):
            act.inverse_joints[a, j] = inverse[act.joints[a], j]
        act.commanded[a] = act.applied[a]
    coupled_effort_limits_into(act.commanded, act.qdot_free, act.inverse_joints, dt, act.rule, False, act.work,
                               act.applied, act.qdot_end)  # fmt: skip


@njit(cache=True)
def advance_nb(data, tau_cmd, external, soft, n_hard) -> int:
    """One step of the StepData ``data`` (d below) from its state d.state (q (nq,), v (nv,)) with
    the commanded efforts tau_cmd (nj,), the external generalized forces ``external`` (nv,)
    (pushes; the velocity-limit rule counts them) and the providers' soft-row forces ``soft``
    (nv,), the first n_hard rows of d.hard (module docstring) and, after them, the hard rows of
    the range of motion d.limits (limits/step_limits.py). Returns NONFINITE_EFFORT,
    NONFINITE_LIMIT_ROW or SINGULAR_MASS (nothing done), else step_nb's status; on OK d.state
    holds the new state, d.actuation.applied the applied efforts, d.out the new state and the
    reports, d.limits the range of motion's forces (else d.state is the state it started from)."""
    # the record borrowed, the caller's arrays as unowned views (contact/bundle_records.py):
    # handed on from helper to helper without an atomic reference count each time; the caller
    # keeps them alive
    d = borrow(data)
    q, v = d.state.q, d.state.v
    tau_cmd, external, soft = unowned(tau_cmd), unowned(external), unowned(soft)
    act = d.actuation
    applied, lower, upper = act.applied, act.lower, act.upper
    nj = tau_cmd.shape[0]
    for j in range(nj):
        t = tau_cmd[j]
        if not math.isfinite(t):
            return NONFINITE_EFFORT
        applied[j] = min(max(t, lower[j]), upper[j])
    lim = d.limits
    n_rows = table_limit_rows_nb(lim, d.limit_work, q, v, soft, d.hard, n_hard)
    out = d.out
    out.counts[0].limit_rows = lim.count[0] if lim.on[0] else 0
    if n_rows < 0:
        return NONFINITE_LIMIT_ROW
    if not update_dynamics_nb(d, q, v):
        return SINGULAR_MASS
    dyn = d.dyn
    tau = act.tau
    soft_all = lim.total  # the providers' soft-row forces and the range of motion's
    _generalized_forces(act, external, soft_all, tau)
    free = False  # d.out.a0 holds the step's free acceleration at (q, v, tau)
    if act.ruled[0]:
        free = _short_of_ramps(d, act, v, tau, soft_all)
        if not free:
            limit_velocity_nb(act, d.solve.L, d.tree.dof_parent, dyn.b, v, dyn.damping, external, d.params.dt)
            _generalized_forces(act, external, soft_all, tau)
    status = step_nb(d, q, v, tau, n_rows, True, free)
    if status == OK:
        out.applied[:] = applied  # beside the state in the result block (StepOutput.result)
        q[:] = out.q_next
        v[:] = out.v_next
        limit_forces_nb(lim, d.limit_work, d.hard, d.params.dt)
    return status


@njit(cache=True)
def _generalized_forces(act, external, soft, tau) -> None:
    """tau (nv,): the applied efforts act.applied at their joints' coordinates, plus the
    external generalized forces and the soft rows' forces (nv,) [N, N m]."""
    tau[:] = 0.0
    joints, applied = act.joints, act.applied
    for j in range(joints.shape[0]):
        tau[joints[j]] = applied[j]
    for i in range(tau.shape[0]):
        tau[i] = tau[i] + external[i] + soft[i]


@njit(cache=True)
def _short_of_ramps(d, act, v, tau, soft) -> bool:
    """Whether the applied efforts are the velocity-limit rule's solution as they are: with no
    soft-row forces (the rule does not count them), every ruled joint ends the step without
    constraint forces short of its ramp (limit_velocity_nb). The step's free acceleration
    A^-1 (tau - D v - b) is then in d.out.a0, which the step reuses (step_kernel.step_nb):
    the rule costs no solve of its own."""
    for i in range(soft.shape[0]):
        if soft[i] != 0.0:
            return False
    out = d.out
    free_acceleration_into(d, v, tau, out.tau_c, out.a0)
    dt = d.params.dt
    joints, ramp = act.joints, act.ramp
    for j in range(joints.shape[0]):
        if not abs(v[joints[j]] + dt * out.a0[joints[j]]) <= ramp[j]:
            return False
    return True
