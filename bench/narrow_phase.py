#!/usr/bin/env python3
"""Per-pair cost of the narrow phase: humanoid_sim's compiled kernel against coal.

For the same pairs (face-face boxes, an edge on a face, edge-edge, sphere, capsule and
cylinder on a box, a convex hull on a box) in contact, prints microseconds per pair for:
  hs loop    collide_nb called from a compiled loop (what the compiled step pays),
  hs python  collide_nb called from Python (dispatch included),
  coal       coal.ComputeCollision + ComputeContactPatch (the manifold) from Python,
  coal dist  coal.ComputeDistance alone,
with the number of manifold points each returns and the machine's load (figures are noisy
on a shared machine). coal is optional: without it only humanoid_sim's figures print.

Usage: python bench/narrow_phase.py [--calls N]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit
from scipy.spatial.transform import Rotation

from humanoid_sim.contact.convex_shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE, ShapeSpec, pack_shapes
from humanoid_sim.contact.narrow_phase import collide_nb, manifold_buffers, narrow_scratch

HULL = np.random.default_rng(7).normal(size=(16, 3)) * 0.3
SPECS = [
    ShapeSpec(BOX, np.array([4.0, 4.0, 1.0])),  # 0: the floor box
    ShapeSpec(BOX, np.ones(3)),  # 1
    ShapeSpec(SPHERE, np.array([0.25])),  # 2
    ShapeSpec(CAPSULE, np.array([0.1, 0.6])),  # 3
    ShapeSpec(CYLINDER, np.array([0.2, 0.5])),  # 4
    ShapeSpec(MESH, np.zeros(0), HULL),  # 5
]


def rot(axis: str, deg: float) -> np.ndarray:
    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()


def pairs(shapes) -> list[tuple[str, int, np.ndarray, int, np.ndarray, np.ndarray]]:
    """(name, shape a, R_b, shape b, p_b, R_a) in contact (A at the origin)."""
    hull_low = float((shapes.vertices[shapes.vert_start[5] : shapes.vert_start[6]] @ rot("x", 10).T)[:, 2].min())
    d = 0.5 * np.sqrt(2.0)
    I = np.eye(3)
    return [
        ("box on box (face)", 0, I, 1, np.array([0.3, 0.2, 1.0 - 1e-4]), I),
        ("box on box (edge)", 0, rot("x", 45), 1, np.array([0.0, 0.0, 0.5 + d - 1e-4]), I),
        ("box x box (edge-edge)", 1, rot("y", 45), 1, np.array([0.1, -0.2, 2 * d - 1e-4]), rot("x", 45)),
        ("sphere on box", 0, I, 2, np.array([0.1, 0.1, 0.75 - 1e-4]), I),
        ("capsule lying on box", 0, rot("y", 90), 3, np.array([0.1, 0.1, 0.6 - 1e-4]), I),
        ("cylinder flat on box", 0, I, 4, np.array([0.1, 0.1, 0.75 - 1e-4]), I),
        ("cylinder tilted on box", 0, rot("x", 20), 4, np.array([0.0, 0.0, 0.5 + 0.25 * np.cos(0.349) + 0.2 * np.sin(0.349) - 1e-4]), I),
        ("hull on box", 0, rot("x", 10), 5, np.array([0.0, 0.0, 0.5 - hull_low - 1e-4]), I),
    ]


@njit  # not cached: a cached caller would keep an edited kernel's old inlined code
def _loop(shapes, sa, Ra, pa, sb, Rb, pb, band, calls, out, scratch) -> int:
    m = 0
    for _ in range(calls):
        m = collide_nb(shapes, sa, Ra, pa, sb, Rb, pb, band, band, out, scratch)
    return m


def coal_geometry(coal, spec: ShapeSpec):
    if spec.kind == BOX:
        return coal.Box(*spec.size)
    if spec.kind == SPHERE:
        return coal.Sphere(spec.size[0])
    if spec.kind == CAPSULE:
        return coal.Capsule(spec.size[0], spec.size[1])
    if spec.kind == CYLINDER:
        return coal.Cylinder(spec.size[0], spec.size[1])
    points = coal.StdVec_Vec3s()
    for v in spec.vertices:
        points.append(np.asarray(v, dtype=float))
    return coal.Convex.convexHull(points, False, "")


def per_call_us(fn, calls: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return 1e6 * (time.perf_counter() - t0) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    shapes = pack_shapes(SPECS)
    out, scratch = manifold_buffers(shapes), narrow_scratch(shapes)
    band = 2e-4
    try:
        import coal
    except ImportError:
        coal = None
        print("coal is not installed (pip install coal): humanoid_sim figures only")
    print(f"load: {os.getloadavg()} ({os.cpu_count()} cores); calls per figure: {args.calls}")
    print(f"{'pair':26s} {'hs loop':>9s} {'hs python':>10s} {'coal':>9s} {'coal dist':>10s}   points hs/coal  [µs per pair]")
    for name, sa, Rb, sb, pb, Ra in pairs(shapes):
        pa = np.zeros(3)
        Ra, Rb = np.ascontiguousarray(Ra), np.ascontiguousarray(Rb)
        m = _loop(shapes, sa, Ra, pa, sb, Rb, pb, band, 1, out, scratch)
        t0 = time.perf_counter()
        _loop(shapes, sa, Ra, pa, sb, Rb, pb, band, args.calls, out, scratch)
        loop_us = 1e6 * (time.perf_counter() - t0) / args.calls
        py_us = per_call_us(lambda: collide_nb(shapes, sa, Ra, pa, sb, Rb, pb, band, band, out, scratch), args.calls // 4)
        coal_txt = dist_txt = "-"
        coal_points = "-"
        if coal is not None:
            ga, gb = coal_geometry(coal, SPECS[sa]), coal_geometry(coal, SPECS[sb])
            Ta, Tb = coal.Transform3s(Ra, pa), coal.Transform3s(Rb, pb)
            req = coal.CollisionRequest()
            req.security_margin = band
            res = coal.CollisionResult()
            preq = coal.ContactPatchRequest()
            pres = coal.ContactPatchResult(preq)
            collide, patch = coal.ComputeCollision(ga, gb), coal.ComputeContactPatch(ga, gb)
            dreq, dres = coal.DistanceRequest(), coal.DistanceResult()
            distance = coal.ComputeDistance(ga, gb)

            def manifold() -> None:
                res.clear()
                if collide(Ta, Tb, req, res):
                    pres.clear()
                    patch(Ta, Tb, res, preq, pres)

            manifold()
            coal_points = str(pres.getContactPatch(0).size()) if res.isCollision() and pres.numContactPatches() else "0"
            coal_txt = f"{per_call_us(manifold, args.calls // 4):9.2f}"
            dist_txt = f"{per_call_us(lambda: distance(Ta, Tb, dreq, dres), args.calls // 4):10.2f}"
        print(f"{name:26s} {loop_us:9.2f} {py_us:10.2f} {coal_txt:>9s} {dist_txt:>10s}   {m:6d}/{coal_points}")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
