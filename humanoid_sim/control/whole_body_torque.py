"""Joint torques, contact wrenches and accelerations from one system (seed 000, 3.2).

Unknowns z = (θ̈_G (nv), τ_C (nc), τ_J (nj)). Hard rows — the equation of motion with the
stance feet as constrained virtual links (Eq. 11):

    [ A    -H_C^T  -H_J^T ] z = [ -b          ]          A = M (nv, nv), b = C v + g (nv,)
    [ H_C   0       0     ]     [ -Ḣ_C θ̇_G    ]          H_J = [0 | I_nj] (floating base)

Soft rows — desired task accelerations (Eq. 22 stacked under Eq. 11 gives Eq. 23):

    J_P θ̈_G = r̈_P^d - J̇_P θ̇_G        weighted by w_P

plus small regularisation of τ_C towards a reference distribution, of τ_J, and of θ̈_G
(so the weighted least-squares problem has one solution, like the weighted pseudo-inverse
3.2 suggests). Solved exactly as an equality-constrained least-squares problem through its
KKT system. The actuated rows of Eq. 11 give τ_J explicitly, so τ_J is substituted and the
KKT system is over (θ̈_G, τ_C) only, with the unactuated (base) rows of Eq. 11 and the
contact rows as equalities: (nv + nc) + (6 + nc) unknowns instead of (nv + nc + nj) + (nv + nc).

Units: θ̈_G [m/s^2, rad/s^2] (base part in the base frame, as v), τ_C contact wrenches
(force [N] then moment [N m], in whatever frame H_C's rows use — world axes at the sole
origin for ``frame_jacobian``), τ_J joint torques [N m].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np


class AccelerationTask(NamedTuple):
    """A desired acceleration of some coordinates r_P (Eq. 22).

    jacobian: J_P (m, nv); drift: J̇_P θ̇_G (m,); acceleration: r̈_P^d (m,);
    weight: scalar or per-row (m,) weight w_P (> 0).
    """

    jacobian: np.ndarray
    drift: np.ndarray
    acceleration: np.ndarray
    weight: float | np.ndarray = 1.0


@dataclass(frozen=True)
class WholeBodyWeights:
    """Regularisation weights of the least-squares problem (relative to the task weights):
    wrench: |τ_C - τ_C^ref|^2 [1/N^2]; torque: |τ_J|^2 [1/(N m)^2]; acceleration: |θ̈_G|^2.
    Like any weighted least squares, a consistent task is met only up to a bias of the order
    (regularisation weight / task weight); keep the ratio small."""

    wrench: float = 1e-6
    torque: float = 0.0
    acceleration: float = 1e-6

    def __post_init__(self) -> None:
        # wrench and acceleration > 0 keep the problem strictly convex; torque may be 0.
        for name in ("wrench", "torque", "acceleration"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0) or (name != "torque" and value == 0.0):
                raise ValueError(f"WholeBodyWeights.{name} must be finite and > 0 (torque: >= 0), got {value!r}")


class WholeBodySolution(NamedTuple):
    """qdd: θ̈_G (nv,); wrenches: τ_C (nc,); tau: τ_J (nj,); task_residual: per task
    |J_P θ̈_G + J̇_P θ̇_G - r̈_P^d| (len(tasks),)."""

    qdd: np.ndarray
    wrenches: np.ndarray
    tau: np.ndarray
    task_residual: np.ndarray


def solve_whole_body(
    M: np.ndarray,
    b: np.ndarray,
    H_C: np.ndarray,
    contact_drift: np.ndarray,
    tasks: Sequence[AccelerationTask],
    weights: WholeBodyWeights = WholeBodyWeights(),
    wrench_reference: np.ndarray | None = None,
    n_actuated: int | None = None,
    wrench_weight: float | np.ndarray | None = None,
) -> WholeBodySolution:
    """Solve Eq. 23 (Eq. 11 plus the weighted task rows) for θ̈_G, τ_C, τ_J.

    M: mass matrix A (nv, nv); b: bias forces C v + g (nv,); H_C: constraint Jacobian (nc, nv)
    (nc may be 0); contact_drift: Ḣ_C θ̇_G (nc,); tasks: desired accelerations;
    wrench_reference: τ_C^ref (nc,) (default 0); n_actuated: nj, the last nj coordinates are
    actuated (default nv - 6: floating base); wrench_weight: per-row weight of
    |τ_C - τ_C^ref|^2 (nc,) or scalar, default ``weights.wrench`` (a larger weight on a foot
    that is being unloaded keeps its moments, hence its centre of pressure, small).
    Raises ValueError on inconsistent shapes or a singular system.
    """
    nv = M.shape[0]
    nj = nv - 6 if n_actuated is None else int(n_actuated)
    nc = H_C.shape[0]
    if M.shape != (nv, nv) or b.shape != (nv,) or H_C.shape[1:] != (nv,) or contact_drift.shape != (nc,):
        raise ValueError(
            f"inconsistent shapes: M {M.shape}, b {b.shape}, H_C {H_C.shape}, drift {contact_drift.shape}"
        )
    nu = nv - nj  # unactuated (base) coordinates
    # τ_J is eliminated with the actuated rows of Eq. 11, τ_J = (A θ̈ + b - H_Cᵀ τ_C)_act,
    # leaving x = (θ̈, τ_C): the same least-squares problem, a smaller KKT system.
    n = nv + nc
    T = np.hstack([M[nu:], -H_C[:, nu:].T])  # τ_J = T x + b_act
    b_act = b[nu:]
    # Objective ½ xᵀ H x - gᵀ x.
    H = weights.torque * (T.T @ T)
    g = -weights.torque * (T.T @ b_act)
    H[:nv, :nv] += weights.acceleration * np.eye(nv)
    for k, task in enumerate(tasks):
        J = np.asarray(task.jacobian, dtype=float)
        if J.ndim != 2 or J.shape[1] != nv:
            raise ValueError(f"task {k}: jacobian must be (m, {nv}), got {J.shape}")
        w = np.broadcast_to(np.asarray(task.weight, dtype=float), (J.shape[0],))
        target = np.asarray(task.acceleration, dtype=float) - np.asarray(task.drift, dtype=float)
        Jw = J * w[:, None]
        H[:nv, :nv] += J.T @ Jw  # Σ J_Pᵀ W_P J_P
        g[:nv] += Jw.T @ target
    if nc:
        w_f = weights.wrench if wrench_weight is None else np.broadcast_to(
            np.asarray(wrench_weight, dtype=float), (nc,))
        H[nv:, nv:] += np.diag(np.broadcast_to(w_f, (nc,)))
        if wrench_reference is not None:
            g[nv:] += w_f * np.asarray(wrench_reference, dtype=float)
    # Equality rows: the unactuated rows of Eq. 11, (A θ̈ - H_Cᵀ τ_C)_base = -b_base, and
    # H_C θ̈ = -Ḣ_C θ̇ (Eq. 7, 8).
    m_eq = nu + nc
    K = np.zeros((n + m_eq, n + m_eq))
    K[:n, :n] = H
    E = K[n:, :n]
    E[:nu, :nv] = M[:nu]
    E[:nu, nv:] = -H_C[:, :nu].T
    E[nu:, :nv] = H_C
    K[:n, n:] = E.T
    rhs = np.concatenate([g, -b[:nu], -contact_drift])
    try:
        sol = np.linalg.solve(K, rhs)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"whole-body system is singular (nc={nc}): {err}") from None
    if not np.all(np.isfinite(sol)):
        raise ValueError("whole-body system produced non-finite values")
    qdd = sol[:nv]
    wrenches = sol[nv:n]
    tau = T @ sol[:n] + b_act
    residual = np.array([
        float(np.linalg.norm(np.asarray(t.jacobian) @ qdd + t.drift - t.acceleration)) for t in tasks
    ])
    return WholeBodySolution(qdd, wrenches, tau, residual)
