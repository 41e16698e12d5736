"""Sweep-and-prune against the brute-force AABB overlap test, and the shapes' AABBs."""

import numpy as np
from scipy.spatial.transform import Rotation

from humanoid_sim.contact.broad_phase import shape_aabbs_nb, sweep_and_prune_nb
from humanoid_sim.contact.convex_shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE, ShapeSpec, pack_shapes


def random_shapes(rng, n):
    kinds = rng.integers(0, 5, size=n)
    specs = []
    for k in kinds:
        if k == BOX:
            specs.append(ShapeSpec(BOX, rng.uniform(0.1, 1.0, size=3)))
        elif k == SPHERE:
            specs.append(ShapeSpec(SPHERE, rng.uniform(0.05, 0.5, size=1)))
        elif k in (CAPSULE, CYLINDER):
            specs.append(ShapeSpec(int(k), rng.uniform(0.05, 0.5, size=2)))
        else:
            specs.append(ShapeSpec(MESH, np.zeros(0), rng.normal(size=(10, 3)) * 0.3))
    return pack_shapes(specs)


def surface_points(shapes, s, R, p):
    """Dense points on shape s (world), to check its AABB holds it."""
    k = shapes.kind[s]
    if k in (BOX, MESH):
        local = shapes.vertices[shapes.vert_start[s] : shapes.vert_start[s + 1]]
    else:
        ang = np.linspace(0, 2 * np.pi, 64, endpoint=False)
        r, h = shapes.radius[s], shapes.half_length[s]
        ring = np.stack([np.cos(ang), np.sin(ang), np.zeros(64)], axis=1) * r
        if k == CYLINDER:
            local = np.vstack([ring + [0, 0, h], ring - [0, 0, h]])
        else:  # sphere and capsule: spheres about the segment's ends
            ball = Rotation.random(200, random_state=1).apply([r, 0, 0])
            local = np.vstack([ball + [0, 0, h], ball - [0, 0, h]])
    return local @ R.T + p


def test_aabbs_hold_their_shapes_and_sweep_and_prune_matches_brute_force(rng):
    n = 60
    shapes = random_shapes(rng, n)
    R = Rotation.random(n, random_state=int(rng.integers(1 << 31))).as_matrix()
    p = rng.uniform(-2.0, 2.0, size=(n, 3))
    lo, hi = np.zeros((n, 3)), np.zeros((n, 3))
    shape_aabbs_nb(shapes, R, p, 0.01, lo, hi)
    for s in range(n):
        pts = surface_points(shapes, s, R[s], p[s])
        assert np.all(pts >= lo[s] - 1e-12) and np.all(pts <= hi[s] + 1e-12)
    allow = np.ones((n, n), dtype=np.uint8)
    allow[3, 7] = allow[7, 3] = 0  # a filtered pair
    order = np.arange(n, dtype=np.int64)
    pairs = np.zeros((n * n, 2), dtype=np.int64)
    for step in range(3):  # the order is kept and re-sorted as the scene moves
        m = sweep_and_prune_nb(lo, hi, allow, order, pairs)
        overlap = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
        expected = [(i, j) for i in range(n) for j in range(i + 1, n) if overlap[i, j] and allow[i, j]]
        assert [tuple(x) for x in pairs[:m]] == expected
        assert len(expected) > 10
        shift = rng.normal(scale=0.2, size=(n, 3))
        lo += shift
        hi += shift
