"""The narrow phase over a list of shape pairs, into one flat table of contact points.

``collide_pairs_nb`` (compiled, allocation-free) runs ``narrow_phase.collide_nb`` on each
pair (i, j) of ``pairs`` with the shapes' world poses ``R[i], p[i]`` and writes every
contact point as one row of a ``PairContacts`` table: the pair's row in ``pairs``, its
normal (from shape i into shape j) and tangent, the points on both surfaces, the gap and
the roll of both sides (conventions: narrow_phase.py). Rows of one pair are consecutive
and pairs come in the order given.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.convex_shapes import ShapeSet
from humanoid_sim.contact.narrow_phase import Manifold, NarrowScratch, collide_nb, manifold_buffers, narrow_scratch

__all__ = ["PairContacts", "buffers_for", "collide_pairs_nb", "pair_contacts_buffers"]


class PairContacts(NamedTuple):
    """Contact points of many pairs (capacity cap rows), filled by ``collide_pairs_nb``.

    pair: row of the pair in ``pairs``, (cap,) int64.
    normal, tangent: the pair's contact frame axes (world), (cap, 3).
    point_a, point_b: the point on the first and on the second shape [m], (cap, 3).
    gap: signed distance along the normal [m], negative = penetration, (cap,).
    roll_a, roll_b: (c, w) per point (narrow_phase.Manifold), (cap, 4).
    """

    pair: np.ndarray
    normal: np.ndarray
    tangent: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    gap: np.ndarray
    roll_a: np.ndarray
    roll_b: np.ndarray


def pair_contacts_buffers(capacity: int) -> PairContacts:
    """An empty table with room for ``capacity`` contact points."""
    c = int(capacity)
    return PairContacts(
        np.zeros(c, np.int64), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros(c),
        np.zeros((c, 4)), np.zeros((c, 4)),
    )  # fmt: skip


@njit(cache=True)
def collide_pairs_nb(shapes, R, p, pairs, npairs, band, flat_tol, table, manifold, scratch) -> int:
    """Contact points of the first npairs rows of pairs (k, 2) int64 (indices into the
    ShapeSet ``shapes``; poses R (n, 3, 3), p (n, 3), world) into ``table`` (PairContacts).
    band, flat_tol [m]: as collide_nb; manifold, scratch: collide_nb's buffers
    (narrow_phase.manifold_buffers, narrow_scratch). Returns the number of rows written;
    -1 when the table is full (grow it and call again)."""
    cap = table.gap.shape[0]
    k = 0
    for q in range(npairs):
        i, j = pairs[q, 0], pairs[q, 1]
        m = collide_nb(shapes, i, R[i], p[i], j, R[j], p[j], band, flat_tol, manifold, scratch)
        if k + m > cap:
            return -1
        for r in range(m):
            table.pair[k] = q
            for a in range(3):
                table.normal[k, a] = manifold.normal[a]
                table.tangent[k, a] = manifold.tangent[a]
                table.point_a[k, a] = manifold.point_a[r, a]
                table.point_b[k, a] = manifold.point_b[r, a]
            for a in range(4):
                table.roll_a[k, a] = manifold.roll_a[r, a]
                table.roll_b[k, a] = manifold.roll_b[r, a]
            table.gap[k] = manifold.gap[r]
            k += 1
    return k


def buffers_for(shapes: ShapeSet, capacity: int) -> tuple[PairContacts, Manifold, NarrowScratch]:
    """The table (``capacity`` rows) and collide_nb's buffers for pairs of ``shapes``."""
    return pair_contacts_buffers(capacity), manifold_buffers(shapes), narrow_scratch(shapes)
