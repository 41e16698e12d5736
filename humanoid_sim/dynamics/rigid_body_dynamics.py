"""Joint-space dynamics: M(q), b(q, v), g(q), inverse and forward dynamics.

Equation of motion (joint space, nv coordinates; base twist in the base frame):
``M(q) qdd + b(q, v) = tau + J^T f``, ``b = C(q, v) v + g(q)``.

- ``mass_matrix``: composite rigid body algorithm (CRBA).
- ``bias_forces`` / ``gravity_forces`` / ``inverse_dynamics``: recursive
  Newton-Euler (RNEA), gravity as an upward root acceleration ``(-g, 0)``.
- ``forward_dynamics``: articulated-body method (ABA), as in seed 004.
- ``contact_space_matrix``: ``J_c M^-1 J_c^T`` built column by column with unit
  test forces through the articulated-body factorisation (Kokkevis; seed 002,
  Eq. 3-4), O(n) per column instead of factorising M.

All take numpy arrays and return fresh arrays; see ``DynamicsWorkspace`` for
the allocation-free per-step path.
"""

from __future__ import annotations

import numpy as np

from humanoid_sim.dynamics import kernels
from humanoid_sim.dynamics.kinematics import _check_q, _check_v
from humanoid_sim.dynamics.workspace import DynamicsWorkspace, scratch_workspace
from humanoid_sim.model.robot_model import RobotModel


def _updated(model: RobotModel, q: np.ndarray, v: np.ndarray | None) -> DynamicsWorkspace:
    """The scratch workspace updated at (q, v) (v = 0 when None): one numba call
    fills kinematics, M and b, cheaper than dispatching the kernels one by one."""
    ws = scratch_workspace(model)
    ws.update(_check_q(model, q), ws.zero_nv if v is None else _check_v(model, v))
    return ws


def mass_matrix(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """Joint-space inertia matrix M(q), shape (nv, nv), symmetric positive definite."""
    return _updated(model, q, None).M.copy()


def inverse_dynamics(model: RobotModel, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Joint forces tau (nv,) [N, N m] that produce accelerations a (nv,) at (q, v),
    with gravity ``model.gravity`` and no external forces (RNEA)."""
    ws = _updated(model, q, v)
    tau = np.empty(model.nv)
    kernels.rnea_nb(
        ws.parent, ws.ndof, ws.v_index, ws.S, ws.Iw, ws.V, ws.A, _check_v(model, a, "a"),
        ws.a_gravity, tau, ws._acc, ws._f,
    )  # fmt: skip
    return tau


def bias_forces(model: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """b(q, v) = C(q, v) v + g(q), shape (nv,) [N, N m]: RNEA with zero acceleration."""
    return _updated(model, q, v).b.copy()


def gravity_forces(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """g(q), shape (nv,) [N, N m]: joint forces that hold the robot still against gravity."""
    return _updated(model, q, None).b.copy()


def forward_dynamics(
    model: RobotModel, q: np.ndarray, v: np.ndarray, tau: np.ndarray, f_ext: np.ndarray | None = None
) -> np.ndarray:
    """Accelerations a (nv,) for joint forces tau (nv,) [N, N m] at (q, v), gravity
    included, by the articulated-body method (seed 004): a = M^-1 (tau - b + Σ J_i^T f_i).

    f_ext: optional external wrenches on the bodies, shape (nb, 6), world frame,
    linear-first, moment about the world origin (force f at point c: ``(f, c x f)``).
    """
    ws = _updated(model, q, v)
    return ws.forward_dynamics(_check_v(model, tau, "tau"), f_ext).copy()


def contact_space_matrix(model: RobotModel, q: np.ndarray, J_c: np.ndarray) -> np.ndarray:
    """Inverse inertia seen by the contacts, ``J_c M^-1 J_c^T``, shape (m, m).

    J_c: contact Jacobian (m, nv). Column j is the contact-space acceleration
    caused by the unit test force e_j (generalised force J_c^T e_j) with zero
    velocity and no gravity, so that a0 = 0 in Eq. 3 and (A)_j = alpha_j
    (Eq. 4, seed 002; Kokkevis). Each test force costs one O(n) ABA pass on the
    articulated inertias factorised once for q.
    """
    J_c = np.ascontiguousarray(J_c, dtype=float)
    if J_c.ndim != 2 or J_c.shape[1] != model.nv:
        raise ValueError(f"J_c must have shape (m, {model.nv}) for {model.name!r}, got {J_c.shape}")
    return _updated(model, q, None).contact_space_matrix(J_c)
