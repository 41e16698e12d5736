"""Compiled broad phase: world AABBs of packed shapes and sweep-and-prune over them.

``shape_aabbs_nb`` bounds every shape of a ``ShapeSet`` (convex_shapes.py) at its world
pose, grown by a margin; ``sweep_and_prune_nb`` sorts the boxes along x (insertion sort
from the previous order, so a scene that moves a little sorts in about linear time) and
reports each pair whose boxes overlap on all three axes and that ``allow`` permits, as
(i, j) with i < j, sorted. Frames: world; units: m. Both are ``@njit(cache=True)`` and
allocate nothing.
"""

from __future__ import annotations

import math

from numba import njit

from humanoid_sim.contact.convex_shapes import CAPSULE, CYLINDER, SPHERE

__all__ = ["shape_aabbs_nb", "sweep_and_prune_nb"]


@njit(cache=True)
def shape_aabbs_nb(shapes, R, p, margin, lo, hi) -> None:
    """World AABB of each shape s at pose R[s] (3, 3), p[s] (3,), grown by margin [m], into
    lo, hi (n, 3)."""
    for s in range(shapes.kind.shape[0]):
        k = shapes.kind[s]
        if k == SPHERE or k == CAPSULE or k == CYLINDER:
            r = shapes.radius[s]
            h = shapes.half_length[s]
            for a in range(3):
                az = R[s, a, 2]
                if k == CYLINDER:
                    ext = h * abs(az) + r * math.sqrt(max(0.0, 1.0 - az * az))
                else:
                    ext = h * abs(az) + r
                lo[s, a] = p[s, a] - ext - margin
                hi[s, a] = p[s, a] + ext + margin
            continue
        for a in range(3):
            lo[s, a] = 1e300
            hi[s, a] = -1e300
        for i in range(shapes.vert_start[s], shapes.vert_start[s + 1]):
            for a in range(3):
                w = R[s, a, 0] * shapes.vertices[i, 0] + R[s, a, 1] * shapes.vertices[i, 1] + R[s, a, 2] * shapes.vertices[i, 2]
                lo[s, a] = min(lo[s, a], w)
                hi[s, a] = max(hi[s, a], w)
        for a in range(3):
            lo[s, a] += p[s, a] - margin
            hi[s, a] += p[s, a] + margin


@njit(cache=True)
def sweep_and_prune_nb(lo, hi, allow, order, pairs) -> int:
    """Pairs (i < j) whose boxes lo, hi (n, 3) overlap and with allow[i, j] != 0 (allow
    (n, n), symmetric), into pairs (cap, 2) sorted by (i, j); returns their count (at most
    cap: a full buffer means there may be more). order (n,) int64: a permutation of 0..n-1
    kept between calls (start with arange(n))."""
    n = lo.shape[0]
    for a in range(1, n):  # insertion sort of order by lo[:, 0]
        b = a
        while b > 0 and lo[order[b - 1], 0] > lo[order[b], 0]:
            order[b - 1], order[b] = order[b], order[b - 1]
            b -= 1
    cap = pairs.shape[0]
    m = 0
    for a in range(n):
        i = order[a]
        for b in range(a + 1, n):
            j = order[b]
            if lo[j, 0] > hi[i, 0]:
                break
            if lo[j, 1] > hi[i, 1] or lo[i, 1] > hi[j, 1] or lo[j, 2] > hi[i, 2] or lo[i, 2] > hi[j, 2]:
                continue
            if allow[i, j] == 0:
                continue
            if m < cap:
                pairs[m, 0] = min(i, j)
                pairs[m, 1] = max(i, j)
                m += 1
    for a in range(1, m):  # sort the pairs (insertion sort: few pairs)
        b = a
        while b > 0 and (pairs[b - 1, 0] > pairs[b, 0] or (pairs[b - 1, 0] == pairs[b, 0] and pairs[b - 1, 1] > pairs[b, 1])):
            for c in range(2):
                pairs[b - 1, c], pairs[b, c] = pairs[b, c], pairs[b - 1, c]
            b -= 1
    return m
