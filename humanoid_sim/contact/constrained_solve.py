"""The linear algebra of seed 000 Eq. 18-21 on plain arrays.

Acceleration level (Eq. 20, 20a, 20b): with A = M (nv, nv) and rows H_C (k, nv),
the modified rows Ĥ_C (Eq. 36; Ĥ_C = H_C when nothing slips),

    A a - Ĥ_C^T λ = τ - b,       H_C a = θ̈_C - Ḣ_C v,

is solved through the Schur complement of Eq. 21: with a0 = A^-1 (τ - b),
Y = A^-1 Ĥ_C^T and B = H_C Y (symmetric positive definite when Ĥ_C = H_C
has full row rank),  B λ = θ̈_C - Ḣ_C v - H_C a0,  a = a0 + Y λ.
A^-1 is never formed: A is factored once per step (A = Lᵀ L, its kinematic tree's
sparsity kept: dynamics/mass_factor.py) and only solved.

Velocity level (Eq. 18-19): the same system with a0 -> v (the pre-impact
velocity) and θ̈_C - Ḣ_C v -> the post-impact constrained velocity θ̇_Cnew;
then λ is the impulse F and a0 + Y λ the post-impact velocity.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg

from humanoid_sim.contact import kernels
from humanoid_sim.dynamics import mass_factor

LU_PIVOT_RATIO = 1e-10  # see step_kernel.LU_PIVOT_RATIO


class SimulationError(RuntimeError):
    """A step could not be computed (singular system, non-finite numbers)."""


class ConstrainedSolution(NamedTuple):
    """x: accelerations [m/s^2, rad/s^2] (or post-impact velocities), shape (nv,).
    lam: row forces [N, N m] (or impulses [N s, N m s]), shape (k,).
    rank_deficient: True when B was singular and a least-squares λ was used."""

    x: np.ndarray
    lam: np.ndarray
    rank_deficient: bool


class MassFactor(NamedTuple):
    """The joint-space inertia's factor M = Lᵀ L (dynamics/mass_factor.py).

    L: (nv, nv) lower triangular, non-zero only where a coordinate meets its ancestors;
    parent: (nv,) int64 each coordinate's parent coordinate, -1 at a root."""

    L: np.ndarray
    parent: np.ndarray


def factor_mass_matrix(M: np.ndarray, parent: np.ndarray | None = None, out: np.ndarray | None = None) -> MassFactor:
    """The factor M = Lᵀ L of the joint-space inertia M (nv, nv).

    parent: (nv,) each velocity coordinate's parent coordinate (KinematicTree.dof_parent),
    which M's zeros follow; None treats M as dense (a chain). out: (nv, nv) zeros to write L
    into (entries off the tree's pattern are left as they are).
    Raises SimulationError when M is not symmetric positive definite or not finite.
    """
    n = M.shape[0]
    parent = mass_factor.chain_parents(n) if parent is None else np.ascontiguousarray(parent, dtype=np.int64)
    L = np.zeros_like(M, dtype=float) if out is None else out
    if not mass_factor.factor_nb(np.ascontiguousarray(M, dtype=float), parent, L):
        raise SimulationError("mass matrix is not positive definite or not finite (massless subtree?)")
    return MassFactor(L, parent)


def mass_solve(factor: MassFactor, rhs: np.ndarray) -> np.ndarray:
    """M^-1 rhs for rhs (nv,) or (nv, k), with factor = factor_mass_matrix(M)."""
    if rhs.ndim == 1:
        out = np.empty_like(rhs, dtype=float)
        mass_factor.solve_vec_nb(factor.L, factor.parent, np.ascontiguousarray(rhs, dtype=float), out)
        return out
    out = np.array(rhs, dtype=float, order="C")
    mass_factor.solve_columns_nb(factor.L, factor.parent, out)
    return out


def solve_constrained(
    M_factor: MassFactor,
    H: np.ndarray,
    H_hat: np.ndarray,
    rhs: np.ndarray,
    base: np.ndarray,
) -> ConstrainedSolution:
    """Solve A x - Ĥ^T λ = A base, H x = rhs for (x, λ) (see the module docstring).

    M_factor: factor_mass_matrix(A).  rhs: (k,).  base: (nv,).
    H, H_hat: (k, nv); pass the same array object as H_hat when Ĥ = H (then B is
    symmetric positive definite and solved by Cholesky), otherwise B is solved by LU.
    """
    k = H.shape[0]
    if k == 0:
        return ConstrainedSolution(base.copy(), np.zeros(0), False)
    if H_hat is H:  # the common case, fully compiled
        x = np.empty(H.shape[1])
        lam = np.empty(k)
        status = kernels.schur_solve_nb(M_factor.L, M_factor.parent, H, rhs, base, x, lam)
        if status == 0:
            return ConstrainedSolution(x, lam, False)
        if status == 2:
            raise SimulationError("constrained solve produced non-finite accelerations or forces")
    Y = mass_solve(M_factor, H_hat.T)  # A^-1 Ĥ^T, (nv, k)
    B = H @ Y  # Eq. 21: B = H_C A^-1 H_C^T (Ĥ on the right for slipping contacts)
    r = rhs - H @ base
    rank_deficient = False
    lam = None
    symmetric = H_hat is H
    if symmetric:
        LB = np.empty_like(B)
        if kernels.cholesky_into(B, LB):
            # a pivot far below the largest one means dependent rows: use least squares
            d = np.abs(np.diag(LB))
            if d.min() > 1e-7 * d.max():
                lam = np.empty(k)
                kernels.cho_solve_vec(LB, r, lam)
    else:
        # unsymmetric (slipping rows): LU; dependent rows when a pivot is at most
        # LU_PIVOT_RATIO of the largest, as in the compiled step (step_kernel._lu_solve)
        lu, piv = scipy.linalg.lu_factor(B, check_finite=False)
        pivots = np.abs(np.diag(lu))
        if pivots.min() > LU_PIVOT_RATIO * pivots.max():
            cand = scipy.linalg.lu_solve((lu, piv), r, check_finite=False)
            if kernels.all_finite(cand) and np.linalg.norm(B @ cand - r) <= 1e-9 * (1.0 + np.linalg.norm(r)):
                lam = cand
    if lam is None:
        rank_deficient = True
        lam = np.linalg.lstsq(B, r, rcond=1e-10)[0]
    x = base + Y @ lam
    if not (kernels.all_finite(x) and kernels.all_finite(lam)):
        raise SimulationError("constrained solve produced non-finite accelerations or forces")
    return ConstrainedSolution(x, lam, rank_deficient)
