"""Seed 002's contact method: per-vertex contact rows solved at the velocity level as a
regularised bounded QP with error compensation and continuous friction.

SCAFFOLD: the kernel below applies no contact force; it is to be written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.kernels import cho_solve_vec
from humanoid_sim.contact.methods import OK

__all__ = ["RelaxedQpData", "RelaxedQpParams", "allocate_relaxed_qp", "relaxed_qp_nb"]


@dataclass(frozen=True)
class RelaxedQpParams:
    """The method's constants (validated here)."""


class RelaxedQpData(NamedTuple):
    """The method's parameters and scratch, allocated once per simulator."""

    scratch: np.ndarray


def allocate_relaxed_qp(params: RelaxedQpParams, C: int, P: int, nv: int) -> RelaxedQpData:
    """RelaxedQpData for C contacts, P contact points and nv velocity coordinates."""
    return RelaxedQpData(np.zeros(1))


@njit(cache=True)
def relaxed_qp_nb(d, tab, nc, k, v, tau, n_hard) -> tuple:
    """Steps 3-4 of the step by seed 002 (contract: step_kernel._virtual_link_nb).
    Returns (status, t_index, nc)."""
    out, dyn = d.out, d.dyn
    nv = v.shape[0]
    for i in range(nv):
        out.v_plus[i] = v[i]
        out.tau_c[i] = tau[i] - dyn.damping[i] * v[i] - dyn.b[i]
    # a0 = a = A^-1 (tau - D v - b): no contact force yet
    cho_solve_vec(d.solve.L, out.tau_c, out.a0)
    for i in range(nv):
        out.a[i] = out.a0[i]
    return OK, 0, 0

