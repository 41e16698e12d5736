"""Broad phase and narrow phase together on a stack of cubes: one surface contact per
touching pair, in one table."""

import numpy as np

from humanoid_sim.contact.broad_phase import shape_aabbs_nb, sweep_and_prune_nb
from humanoid_sim.contact.convex_shapes import BOX, ShapeSpec, pack_shapes
from humanoid_sim.contact.pair_contacts import buffers_for, collide_pairs_nb


def test_a_stack_of_five_cubes_gives_four_surface_contacts():
    n = 5
    shapes = pack_shapes([ShapeSpec(BOX, np.ones(3))] * n)
    R = np.tile(np.eye(3), (n, 1, 1))
    sink = 1e-5 * np.arange(n)  # each cube sunk 1e-5 m into the one below
    p = np.column_stack([np.zeros(n), np.zeros(n), 0.5 + np.arange(n) - sink])
    lo, hi = np.zeros((n, 3)), np.zeros((n, 3))
    shape_aabbs_nb(shapes, R, p, 1e-3, lo, hi)
    pairs = np.zeros((32, 2), np.int64)
    m = sweep_and_prune_nb(lo, hi, np.ones((n, n), np.uint8), np.arange(n, dtype=np.int64), pairs)
    assert [tuple(x) for x in pairs[:m]] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    table, manifold, scratch = buffers_for(shapes, 64)
    k = collide_pairs_nb(shapes, R, p, pairs, m, 2e-4, 2e-4, table, manifold, scratch)
    assert k == 16
    np.testing.assert_array_equal(table.pair[:k], np.repeat(np.arange(4), 4))
    np.testing.assert_allclose(table.normal[:k], np.tile([0.0, 0.0, 1.0], (k, 1)), atol=1e-15)
    np.testing.assert_allclose(table.gap[:k], -1e-5, atol=1e-12)
    for q in range(4):  # the four corners of the face between cube q and q + 1
        pts = table.point_a[:k][table.pair[:k] == q]
        np.testing.assert_allclose(np.sort(np.abs(pts[:, :2]).ravel()), 0.5)
        np.testing.assert_allclose(pts[:, 2], p[q, 2] + 0.5, atol=1e-12)
    small = buffers_for(shapes, 10)
    assert collide_pairs_nb(shapes, R, p, pairs, m, 2e-4, 2e-4, *small) == -1  # full: grow and call again
