"""Seed 004's contact method: a spring-damper force per area element of the penetration
volume, distributed Coulomb friction, the articulated-body algorithm with those forces.

SCAFFOLD: the kernel below applies no contact force; it is to be written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.kernels import cho_solve_vec
from humanoid_sim.contact.methods import OK

__all__ = ["PenaltyVolumeData", "PenaltyVolumeParams", "allocate_penalty_volume", "penalty_volume_nb"]


@dataclass(frozen=True)
class PenaltyVolumeParams:
    """The method's constants (validated here)."""


class PenaltyVolumeData(NamedTuple):
    """The method's parameters and scratch, allocated once per simulator."""

    scratch: np.ndarray


def allocate_penalty_volume(params: PenaltyVolumeParams, C: int, P: int, nv: int) -> PenaltyVolumeData:
    """PenaltyVolumeData for C contacts, P contact points and nv velocity coordinates."""
    return PenaltyVolumeData(np.zeros(1))


@njit(cache=True)
def penalty_volume_nb(d, tab, nc, k, v, tau, n_hard) -> tuple:
    """Steps 3-4 of the step by seed 004 (contract: step_kernel._virtual_link_nb).
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

