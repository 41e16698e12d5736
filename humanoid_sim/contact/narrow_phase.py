"""Compiled narrow phase: the contact manifold of two convex shapes in world poses.

Shapes come packed in a ``ShapeSet`` (convex_shapes.py): boxes, spheres, cylinders,
capsules and convex hulls. Every shape is a *core* swept by a radius: a sphere is its
centre swept by r, a capsule its segment swept by r; boxes, hulls and cylinders are their
own core (radius 0; a cylinder's support is exact, not a polygon's).

``collide_nb`` (one pair, ``@njit(cache=True)``, allocation-free):
1. a bounding-sphere test, then GJK on the cores: separated cores give the exact distance,
   the normal from the closest points and, if the gap (distance less the radii) exceeds the
   detection band, no contact (boxes, hulls and cylinders: the separating-axis test
   first, GJK only when it finds them apart by less than the band);
2. overlapping cores: the separating-axis test over face normals and edge-pair cross
   products (a cylinder's curved side by ``CYLINDER_SIDES`` face normals, its vertex and
   rim axes against a polytope, then a local pattern search; exact axes for everything
   else) gives the normal of least penetration;
3. the *feature* of each shape that supports the normal: a face (its polygon; a cylinder's
   end disc lying flat: ``RIM_POINTS`` exact rim points), an edge or segment (a capsule
   lying, a cylinder on its side: its lowest line), or a point (a sphere, a vertex, a
   capsule's end, a tilted cylinder's exact lowest rim point). Faces within
   ``FEATURE_ANGLE`` of the normal count as faces, so a nearly flat face reports its
   corners within the band;
4. the features are intersected in the plane normal to the contact normal: face-face by
   Sutherland-Hodgman clipping (a surface: >= 3 points), edge-face by clipping the edge
   (a line: 2 points), edge-edge / vertex-face: 1 point; each point's gap is measured
   along the normal between the two features, and points with gap <= band are kept.

Conventions: world frame; ``normal`` is a unit vector from shape A into shape B (the
direction B must move to separate); per point ``point_a`` lies on A's surface, ``point_b``
on B's, ``point_b - point_a = gap * normal``; gap [m] < 0 is penetration. ``tangent`` is the
first axis of the contact frame: the axis of A's frame that follows the one most aligned
with the normal (B's frame when A is a sphere), projected normal to it, so it turns with A.
``roll_a``/``roll_b`` (m, 4): how each point moves over that body's surface as the body
turns, as ``ContactPatch.roll`` in detection.py with the surface normal seen by the body
(``normal`` for B, ``-normal`` for A): c = r, w = 0 for a sphere or capsule end; c = r/|s|,
w = a x u for a cylinder's lowest rim point; c = 0 for a point fixed to the body.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.convex_shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE, ShapeSet
from humanoid_sim.contact.kernels import RIM_POINTS, lu_solve_into

__all__ = [
    "CYLINDER_SIDES",
    "FEATURE_ANGLE",
    "RIM_POINTS",
    "Manifold",
    "NarrowScratch",
    "collide",
    "collide_nb",
    "manifold_buffers",
    "max_feature_points",
    "narrow_scratch",
]

CYLINDER_SIDES = 32  # face normals standing for a cylinder's curved side in the separating-axis test
FEATURE_ANGLE = math.radians(15.0)  # a face (edge) within this angle of the normal (its plane) is the feature
_COS_FEATURE = math.cos(FEATURE_ANGLE)
_SIN_FEATURE = math.sin(FEATURE_ANGLE)
_CORE_TOUCH = 1e-9  # cores closer than this [m] count as overlapping (the separating-axis test decides)
_EPS_2D = 1e-9  # [m] in the contact plane: inside tests, duplicate points
PATTERN_GAIN = 1e-12  # [m] the least overlap decrease a pattern-search move must make
PATTERN_MOVES = 200  # pattern-search moves at most (its steps shrink from 0.05 to 1e-9 rad besides)


class Manifold(NamedTuple):
    """The contact points of one pair, filled by ``collide_nb`` (capacity ``cap`` points).

    normal: unit, from A into B (world), shape (3,). tangent: unit, normal to it, shape (3,).
    point_a, point_b: the point on A's and on B's surface [m], shape (cap, 3).
    gap: signed distance along the normal [m], negative = penetration, shape (cap,).
    roll_a, roll_b: (c, w) per point as ContactPatch.roll, shape (cap, 4).
    """

    normal: np.ndarray
    tangent: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    gap: np.ndarray
    roll_a: np.ndarray
    roll_b: np.ndarray


class NarrowScratch(NamedTuple):
    """Work arrays of ``collide_nb`` (allocated once per ShapeSet by ``narrow_scratch``)."""

    world_a: np.ndarray  # (V, 3) world vertices of A's polytope
    world_b: np.ndarray
    feat_a: np.ndarray  # (K, 3) A's feature points (world)
    feat_b: np.ndarray
    flat_a: np.ndarray  # (K, 2) the feature in the contact plane
    flat_b: np.ndarray
    clip_in: np.ndarray  # (C, 2) clipping buffers
    clip_out: np.ndarray
    simplex: np.ndarray  # (12, 3): GJK points of A (0:4), of B (4:8), their differences (8:12)
    vec: np.ndarray  # (16, 3) small vectors
    small: np.ndarray  # (24,) weights, rolls, small solves
    gram: np.ndarray  # (3, 3)
    index: np.ndarray  # (4,) int64


def max_feature_points(shapes: ShapeSet) -> int:
    """The most points one feature of any shape of ``shapes`` has."""
    most = max(RIM_POINTS, 2)
    if len(shapes.face_vert_start) > 1:
        most = max(most, int(np.diff(shapes.face_vert_start).max()))
    return most


def manifold_buffers(shapes: ShapeSet, capacity: int | None = None) -> Manifold:
    """Output arrays for ``collide_nb`` with room for every manifold of ``shapes``."""
    cap = 2 * max_feature_points(shapes) + 4 if capacity is None else int(capacity)
    return Manifold(np.zeros(3), np.zeros(3), np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap), np.zeros((cap, 4)), np.zeros((cap, 4)))


def narrow_scratch(shapes: ShapeSet) -> NarrowScratch:
    """Work arrays for ``collide_nb`` on any pair of ``shapes``."""
    nv = max(1, int(np.diff(shapes.vert_start).max()) if len(shapes.vert_start) > 1 else 1)
    k = max_feature_points(shapes)
    c = 2 * k + 8
    return NarrowScratch(
        np.zeros((nv, 3)), np.zeros((nv, 3)), np.zeros((k, 3)), np.zeros((k, 3)), np.zeros((k, 2)), np.zeros((k, 2)),
        np.zeros((c, 2)), np.zeros((c, 2)), np.zeros((12, 3)), np.zeros((16, 3)), np.zeros(24), np.zeros((3, 3)),
        np.zeros(4, np.int64),
    )  # fmt: skip


# ---------------------------------------------------------------- small vector functions


@njit(cache=True, inline="always")
def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _is_polytope(kind) -> bool:
    return kind == BOX or kind == MESH


@njit(cache=True, inline="always")
def _sweep(shapes, s) -> float:
    """Radius sweeping the core: a sphere's or capsule's radius, else 0."""
    k = shapes.kind[s]
    return shapes.radius[s] if (k == SPHERE or k == CAPSULE) else 0.0


@njit(cache=True)
def _to_world(shapes, s, R, p, out) -> None:
    for i in range(shapes.vert_start[s], shapes.vert_start[s + 1]):
        j = i - shapes.vert_start[s]
        for a in range(3):
            out[j, a] = R[a, 0] * shapes.vertices[i, 0] + R[a, 1] * shapes.vertices[i, 1] + R[a, 2] * shapes.vertices[i, 2] + p[a]


@njit(cache=True, inline="always")
def _support(shapes, s, R, p, world, dx, dy, dz, out) -> None:
    """Support point of the core of shape s (pose R, p; polytope vertices in ``world``) in
    the world direction (dx, dy, dz) into out (3,)."""
    k = shapes.kind[s]
    if _is_polytope(k):
        best = -1e300
        bi = 0
        for j in range(shapes.vert_start[s + 1] - shapes.vert_start[s]):
            v = world[j, 0] * dx + world[j, 1] * dy + world[j, 2] * dz
            if v > best:
                best = v
                bi = j
        out[0], out[1], out[2] = world[bi, 0], world[bi, 1], world[bi, 2]
        return
    out[0], out[1], out[2] = p[0], p[1], p[2]
    if k == SPHERE:
        return
    ax, ay, az = R[0, 2], R[1, 2], R[2, 2]
    da = ax * dx + ay * dy + az * dz
    h = shapes.half_length[s] if da >= 0.0 else -shapes.half_length[s]
    out[0] += h * ax
    out[1] += h * ay
    out[2] += h * az
    if k == CYLINDER:
        sx, sy, sz = dx - da * ax, dy - da * ay, dz - da * az
        sl = math.sqrt(sx * sx + sy * sy + sz * sz)
        if sl > 1e-12:
            r = shapes.radius[s] / sl
            out[0] += r * sx
            out[1] += r * sy
            out[2] += r * sz


@njit(cache=True)
def _solve_small(G, r, m, mu) -> bool:
    """Solve G[:m, :m] mu = r[:m] (m <= 3) by Gaussian elimination; False if singular."""
    scale = 0.0
    for i in range(m):
        scale = max(scale, abs(G[i, i]))
    if scale <= 0.0:
        return False
    for i in range(m):
        mu[i] = r[i]
    return lu_solve_into(G, mu, m)[0] > 1e-13 * scale


@njit(cache=True)
def _simplex_closest(Y, k, lam, G, r, mu, idx) -> float:
    """Closest point to the origin of the hull of Y[:k] (k <= 4): barycentric weights into
    lam (4,) (0 for points not needed), returns the squared distance (0 if the origin lies
    inside a tetrahedron). G (3, 3), r (3,), mu (3,), idx (4,) int64: work arrays."""
    best = 1e300
    for mask in range(1, 1 << k):
        m = 0
        for i in range(k):
            if mask & (1 << i):
                idx[m] = i
                m += 1
        i0 = idx[0]
        if m == 1:
            d2 = Y[i0, 0] ** 2 + Y[i0, 1] ** 2 + Y[i0, 2] ** 2
            if d2 < best:
                best = d2
                for i in range(4):
                    lam[i] = 0.0
                lam[i0] = 1.0
            continue
        for a in range(m - 1):
            ia = idx[a + 1]
            r[a] = -((Y[ia, 0] - Y[i0, 0]) * Y[i0, 0] + (Y[ia, 1] - Y[i0, 1]) * Y[i0, 1] + (Y[ia, 2] - Y[i0, 2]) * Y[i0, 2])
            for b in range(m - 1):
                ib = idx[b + 1]
                G[a, b] = (
                    (Y[ia, 0] - Y[i0, 0]) * (Y[ib, 0] - Y[i0, 0])
                    + (Y[ia, 1] - Y[i0, 1]) * (Y[ib, 1] - Y[i0, 1])
                    + (Y[ia, 2] - Y[i0, 2]) * (Y[ib, 2] - Y[i0, 2])
                )
        if not _solve_small(G, r, m - 1, mu):
            continue
        l0 = 1.0
        ok = True
        for a in range(m - 1):
            l0 -= mu[a]
            if mu[a] < 0.0:
                ok = False
        if l0 < 0.0 or not ok:
            continue
        x0, x1, x2 = Y[i0, 0], Y[i0, 1], Y[i0, 2]
        for a in range(m - 1):
            ia = idx[a + 1]
            x0 += mu[a] * (Y[ia, 0] - Y[i0, 0])
            x1 += mu[a] * (Y[ia, 1] - Y[i0, 1])
            x2 += mu[a] * (Y[ia, 2] - Y[i0, 2])
        d2 = x0 * x0 + x1 * x1 + x2 * x2
        if m == 4:
            d2 = 0.0
        if d2 < best * (1.0 - 1e-12):
            best = d2
            for i in range(4):
                lam[i] = 0.0
            lam[i0] = l0
            for a in range(m - 1):
                lam[idx[a + 1]] = mu[a]
    return best


@njit(cache=True)
def _gjk(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, scratch):
    """Distance [m] between the cores of A and B (GJK); closest points into scratch.vec[0]
    (on A) and scratch.vec[1] (on B). Returns -1.0 when the cores overlap."""
    S, V, lam = scratch.simplex, scratch.vec, scratch.small[0:4]
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    if dx * dx + dy * dy + dz * dz < 1e-24:
        dx, dy, dz = 1.0, 0.0, 0.0
    _support(shapes, sa, Ra, pa, wa, dx, dy, dz, S[0])
    _support(shapes, sb, Rb, pb, wb, -dx, -dy, -dz, S[4])
    for c in range(3):
        S[8, c] = S[0, c] - S[4, c]
    k = 1
    dist2 = 1e300
    lower = 0.0  # the largest lower bound v . w / |v| of the distance seen
    converged = False
    for _ in range(64):
        d2 = _simplex_closest(S[8:12], k, lam, scratch.gram, scratch.small[12:15], scratch.small[15:18], scratch.index)
        # keep the points the closest point needs
        m = 0
        for i in range(k):
            if lam[i] > 0.0:
                for c in range(3):
                    S[m, c] = S[i, c]
                    S[4 + m, c] = S[4 + i, c]
                    S[8 + m, c] = S[8 + i, c]
                lam[m] = lam[i]
                m += 1
        k = m
        if d2 < 1e-24 or k == 4:
            return -1.0
        if d2 >= dist2 * (1.0 - 1e-14):  # no progress
            break
        dist2 = d2
        vx, vy, vz = 0.0, 0.0, 0.0
        for i in range(k):
            vx += lam[i] * S[8 + i, 0]
            vy += lam[i] * S[8 + i, 1]
            vz += lam[i] * S[8 + i, 2]
        _support(shapes, sa, Ra, pa, wa, -vx, -vy, -vz, S[k])
        _support(shapes, sb, Rb, pb, wb, vx, vy, vz, S[4 + k])
        for c in range(3):
            S[8 + k, c] = S[k, c] - S[4 + k, c]
        vw = vx * S[8 + k, 0] + vy * S[8 + k, 1] + vz * S[8 + k, 2]
        lower = max(lower, vw / math.sqrt(d2))
        if d2 - vw <= 1e-11 * d2 + 1e-22:
            converged = True
            break
        k += 1
    if not converged and lower <= _CORE_TOUCH:
        return -1.0  # not shown apart: the separating-axis test decides
    for c in range(3):
        V[0, c] = 0.0
        V[1, c] = 0.0
        for i in range(k):
            V[0, c] += lam[i] * S[i, c]
            V[1, c] += lam[i] * S[4 + i, c]
    return math.sqrt(dist2)


# ---------------------------------------------------------------- separating-axis test


@njit(cache=True, inline="always")
def _extent(shapes, s, R, p, world, ux, uy, uz):
    """(min, max) of u . x over shape s (its core swept by its radius)."""
    k = shapes.kind[s]
    if k == BOX:  # centre . u +- sum of the half edges times |axis . u|
        c = p[0] * ux + p[1] * uy + p[2] * uz
        corner = shapes.vertices[shapes.vert_start[s] + 7]  # the (+, +, +) corner: the half edges
        w = 0.0
        for a in range(3):
            w += corner[a] * abs(R[0, a] * ux + R[1, a] * uy + R[2, a] * uz)
        return c - w, c + w
    if k == MESH:
        lo, hi = 1e300, -1e300
        for j in range(shapes.vert_start[s + 1] - shapes.vert_start[s]):
            v = world[j, 0] * ux + world[j, 1] * uy + world[j, 2] * uz
            lo = min(lo, v)
            hi = max(hi, v)
        return lo, hi
    c = p[0] * ux + p[1] * uy + p[2] * uz
    r = shapes.radius[s]
    if k == SPHERE:
        return c - r, c + r
    au = R[0, 2] * ux + R[1, 2] * uy + R[2, 2] * uz
    h = shapes.half_length[s] * abs(au)
    if k == CAPSULE:
        return c - h - r, c + h + r
    w = h + r * math.sqrt(max(0.0, 1.0 - au * au))
    return c - w, c + w


@njit(cache=True, inline="always")
def _n_axes(shapes, s, edges) -> int:
    k = shapes.kind[s]
    if _is_polytope(k):
        if edges:
            return shapes.edge_start[s + 1] - shapes.edge_start[s]
        return shapes.face_start[s + 1] - shapes.face_start[s]
    if k == CYLINDER:
        return 1 + (CYLINDER_SIDES // 2 if edges else CYLINDER_SIDES)
    if k == CAPSULE:
        return 1 if edges else 0
    return 0


@njit(cache=True, inline="always")
def _axis(shapes, s, R, edges, j, out) -> None:
    """The j-th face normal (edges False) or edge direction (edges True) of shape s, world."""
    k = shapes.kind[s]
    if _is_polytope(k):
        if edges:
            row = shapes.edge_dir[shapes.edge_start[s] + j]
        else:
            row = shapes.face_normal[shapes.face_start[s] + j]
        for a in range(3):
            out[a] = R[a, 0] * row[0] + R[a, 1] * row[1] + R[a, 2] * row[2]
        return
    if j == 0:
        for a in range(3):
            out[a] = R[a, 2]
        return
    ang = 2.0 * math.pi * (j - 1) / CYLINDER_SIDES
    ca, sa = math.cos(ang), math.sin(ang)
    for a in range(3):
        out[a] = ca * R[a, 0] + sa * R[a, 1]


@njit(cache=True, inline="always")
def _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, ux, uy, uz, best, bias, n):
    """Overlap of A and B along the axis u; if it is below best - bias, the new best with its
    oriented normal in n. Returns the best overlap."""
    ul = math.sqrt(ux * ux + uy * uy + uz * uz)
    if ul < 1e-9:
        return best
    ux, uy, uz = ux / ul, uy / ul, uz / ul
    loa, hia = _extent(shapes, sa, Ra, pa, wa, ux, uy, uz)
    lob, hib = _extent(shapes, sb, Rb, pb, wb, ux, uy, uz)
    o1 = hia - lob  # B on the +u side
    o2 = hib - loa  # B on the -u side
    ov = min(o1, o2)
    if ov < best - bias:
        sgn = 1.0 if o1 <= o2 else -1.0
        n[0], n[1], n[2] = sgn * ux, sgn * uy, sgn * uz
        return ov
    return best


@njit(cache=True)
def _sat(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, ea, eb) -> float:
    """Least-overlap axis of A and B into n (from A into B); returns the overlap [m]
    (negative: separated by that much along n)."""
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    if dx * dx + dy * dy + dz * dz < 1e-24:
        dx, dy, dz = 0.0, 0.0, 1.0
    n[0], n[1], n[2] = 0.0, 0.0, 1.0
    best = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, dx, dy, dz, 1e300, 0.0, n)
    cyl_a, cyl_b = shapes.kind[sa] == CYLINDER, shapes.kind[sb] == CYLINDER
    approx = False  # the best axis stands for a cylinder's curved side or rim
    for j in range(_n_axes(shapes, sa, False)):
        _axis(shapes, sa, Ra, False, j, ea)
        ov = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, ea[0], ea[1], ea[2], best, 1e-12, n)
        if ov != best:
            best, approx = ov, cyl_a and j > 0
    for j in range(_n_axes(shapes, sb, False)):
        _axis(shapes, sb, Rb, False, j, eb)
        ov = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, eb[0], eb[1], eb[2], best, 1e-12, n)
        if ov != best:
            best, approx = ov, cyl_b and j > 0
    for i in range(_n_axes(shapes, sa, True)):
        _axis(shapes, sa, Ra, True, i, ea)
        for j in range(_n_axes(shapes, sb, True)):
            _axis(shapes, sb, Rb, True, j, eb)
            cx = ea[1] * eb[2] - ea[2] * eb[1]
            cy = ea[2] * eb[0] - ea[0] * eb[2]
            cz = ea[0] * eb[1] - ea[1] * eb[0]
            ov = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, cx, cy, cz, best, 1e-9, n)
            if ov != best:
                best, approx = ov, (cyl_a and i > 0) or (cyl_b and j > 0)
    if cyl_a and _is_polytope(shapes.kind[sb]):
        ov = _cylinder_vertex_axes(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, best, n, sa, Ra, pa, wb, sb)
        if ov != best:
            best, approx = ov, False
    if cyl_b and _is_polytope(shapes.kind[sa]):
        ov = _cylinder_vertex_axes(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, best, n, sb, Rb, pb, wa, sa)
        if ov != best:
            best, approx = ov, False
    if approx or (cyl_a and not _is_polytope(shapes.kind[sb])) or (cyl_b and not _is_polytope(shapes.kind[sa])):
        best = _refine_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, best, ea, eb)
    return best


@njit(cache=True)
def _cylinder_vertex_axes(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, best, n, sc, Rc, pc, wv, sv) -> float:
    """Axes of a polytope's vertices (wv) against a cylinder (shape sc): from its axis
    (vertex on the curved side) and from the nearest point of either rim (vertex on a rim)."""
    ax, ay, az = Rc[0, 2], Rc[1, 2], Rc[2, 2]
    h, r = shapes.half_length[sc], shapes.radius[sc]
    for j in range(shapes.vert_start[sv + 1] - shapes.vert_start[sv]):
        dx, dy, dz = wv[j, 0] - pc[0], wv[j, 1] - pc[1], wv[j, 2] - pc[2]
        da = dx * ax + dy * ay + dz * az
        rx, ry, rz = dx - da * ax, dy - da * ay, dz - da * az
        rl = math.sqrt(rx * rx + ry * ry + rz * rz)
        best = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, rx, ry, rz, best, 1e-12, n)
        if rl < 1e-12:
            continue
        for sg in (-1.0, 1.0):  # the rim point nearest the vertex
            qx = dx - (sg * h * ax + r * rx / rl)
            qy = dy - (sg * h * ay + r * ry / rl)
            qz = dz - (sg * h * az + r * rz / rl)
            best = _test_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, qx, qy, qz, best, 1e-12, n)
    return best


@njit(cache=True, inline="always")
def _overlap_along(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, ux, uy, uz) -> float:
    ul = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux, uy, uz = ux / ul, uy / ul, uz / ul
    loa, hia = _extent(shapes, sa, Ra, pa, wa, ux, uy, uz)
    lob, hib = _extent(shapes, sb, Rb, pb, wb, ux, uy, uz)
    return hia - lob


@njit(cache=True)
def _plane_basis(n, t1, t2) -> None:
    """Unit t1, t2 with (t1, t2, n) right-handed orthonormal."""
    if abs(n[0]) < 0.6:
        t1[0], t1[1], t1[2] = 0.0, n[2], -n[1]
    else:
        t1[0], t1[1], t1[2] = -n[2], 0.0, n[0]
    tl = math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
    for a in range(3):
        t1[a] /= tl
    t2[0] = n[1] * t1[2] - n[2] * t1[1]
    t2[1] = n[2] * t1[0] - n[0] * t1[2]
    t2[2] = n[0] * t1[1] - n[1] * t1[0]


@njit(cache=True)
def _pattern_search(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, best, t1, t2) -> float:
    """Least overlap over directions near n by a shrinking eight-direction pattern search;
    the direction found in n. A move must lower the overlap by more than rounding
    (PATTERN_GAIN) and the search makes at most PATTERN_MOVES moves: along a flat valley
    (two cylinders side by side) moves that gain 1e-15 m each went on for seconds."""
    step = 0.05
    moves = 0
    while step > 1e-9 and moves < PATTERN_MOVES:
        _plane_basis(n, t1, t2)
        found = -1
        for trial in range(8):  # eight directions about n
            ca, sn = math.cos(0.25 * math.pi * trial), math.sin(0.25 * math.pi * trial)
            ux = n[0] + step * (ca * t1[0] + sn * t2[0])
            uy = n[1] + step * (ca * t1[1] + sn * t2[1])
            uz = n[2] + step * (ca * t1[2] + sn * t2[2])
            ov = _overlap_along(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, ux, uy, uz)
            if ov < best - PATTERN_GAIN:
                best = ov
                found = trial
        if found < 0:
            step *= 0.5
            continue
        moves += 1
        ca, sn = math.cos(0.25 * math.pi * found), math.sin(0.25 * math.pi * found)
        for a in range(3):
            n[a] += step * (ca * t1[a] + sn * t2[a])
        nl = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
        for a in range(3):
            n[a] /= nl
    return best


@njit(cache=True)
def _refine_axis(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, best, t1, t2) -> float:
    """A cylinder's curved side has no finite set of axes: pattern searches of the overlap
    from n and from eight directions 0.2 rad about it; the least overlap found, its
    direction in n."""
    n0x, n0y, n0z = n[0], n[1], n[2]
    best = _pattern_search(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, best, t1, t2)
    bx, by, bz = n[0], n[1], n[2]
    for trial in range(8):
        n[0], n[1], n[2] = n0x, n0y, n0z
        _plane_basis(n, t1, t2)
        ca, sn = math.cos(0.25 * math.pi * trial), math.sin(0.25 * math.pi * trial)
        for a in range(3):
            n[a] += 0.2 * (ca * t1[a] + sn * t2[a])
        nl = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
        for a in range(3):
            n[a] /= nl
        start = _overlap_along(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n[0], n[1], n[2])
        ov = _pattern_search(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, start, t1, t2)
        if ov < best - 1e-12:
            best = ov
            bx, by, bz = n[0], n[1], n[2]
    n[0], n[1], n[2] = bx, by, bz
    return best


# ---------------------------------------------------------------- features


@njit(cache=True)
def _feature(shapes, s, R, p, world, dx, dy, dz, flat_tol, feat, plane, roll) -> int:
    """The feature of shape s supporting the world direction d (unit): its core points into
    feat (k, 3), for a face its plane normal into plane (3,), and the roll (c, w) of its
    points into roll (4,). Returns k (1 point, 2 segment, >= 3 polygon)."""
    k = shapes.kind[s]
    for a in range(4):
        roll[a] = 0.0
    if _is_polytope(k):
        v0 = shapes.vert_start[s]
        nv = shapes.vert_start[s + 1] - v0
        best = -1e300
        bi = 0
        for j in range(nv):
            v = world[j, 0] * dx + world[j, 1] * dy + world[j, 2] * dz
            if v > best:
                best = v
                bi = j
        # the faces around the support vertex: the most aligned one, else the most level edge
        best_cos = -2.0
        best_face = -1
        best_sin = 2.0
        best_other = -1
        for f in range(shapes.face_start[s], shapes.face_start[s + 1]):
            f0 = shapes.face_vert_start[f]
            m = shapes.face_vert_start[f + 1] - f0
            at = -1
            for t in range(m):
                if shapes.face_vert[f0 + t] - v0 == bi:
                    at = t
            if at < 0:
                continue
            nl = shapes.face_normal[f]
            c = (R[0, 0] * nl[0] + R[0, 1] * nl[1] + R[0, 2] * nl[2]) * dx
            c += (R[1, 0] * nl[0] + R[1, 1] * nl[1] + R[1, 2] * nl[2]) * dy
            c += (R[2, 0] * nl[0] + R[2, 1] * nl[1] + R[2, 2] * nl[2]) * dz
            if c > best_cos:
                best_cos = c
                best_face = f
            for step in (1, m - 1):
                o = shapes.face_vert[f0 + (at + step) % m] - v0
                ex, ey, ez = world[o, 0] - world[bi, 0], world[o, 1] - world[bi, 1], world[o, 2] - world[bi, 2]
                el = math.sqrt(ex * ex + ey * ey + ez * ez)
                sn = abs(ex * dx + ey * dy + ez * dz) / el
                if sn < best_sin:
                    best_sin = sn
                    best_other = o
        if best_face >= 0 and best_cos >= _COS_FEATURE:
            f0 = shapes.face_vert_start[best_face]
            m = shapes.face_vert_start[best_face + 1] - f0
            for t in range(m):
                o = shapes.face_vert[f0 + t] - v0
                for a in range(3):
                    feat[t, a] = world[o, a]
            nl = shapes.face_normal[best_face]
            for a in range(3):
                plane[a] = R[a, 0] * nl[0] + R[a, 1] * nl[1] + R[a, 2] * nl[2]
            return m
        for a in range(3):
            feat[0, a] = world[bi, a]
        if best_other >= 0 and best_sin <= _SIN_FEATURE:
            for a in range(3):
                feat[1, a] = world[best_other, a]
            return 2
        return 1
    for a in range(3):
        feat[0, a] = p[a]
    if k == SPHERE:
        roll[0] = shapes.radius[s]
        return 1
    ax, ay, az = R[0, 2], R[1, 2], R[2, 2]
    h = shapes.half_length[s]
    da = ax * dx + ay * dy + az * dz
    if k == CAPSULE:
        roll[0] = shapes.radius[s]
        if abs(da) <= _SIN_FEATURE:
            for a in range(3):
                feat[0, a] = p[a] - h * R[a, 2]
                feat[1, a] = p[a] + h * R[a, 2]
            return 2
        sg = h if da > 0.0 else -h
        for a in range(3):
            feat[0, a] = p[a] + sg * R[a, 2]
        return 1
    # cylinder: the disc facing d, flat (its rim), or the exact lowest rim line / point
    r = shapes.radius[s]
    sx, sy, sz = dx - da * ax, dy - da * ay, dz - da * az
    sl = math.sqrt(sx * sx + sy * sy + sz * sz)
    sg = h if da >= 0.0 else -h
    if 2.0 * r * sl <= flat_tol:
        for j in range(RIM_POINTS):
            ang = 2.0 * math.pi * j / RIM_POINTS
            ca, sa = r * math.cos(ang), r * math.sin(ang)
            for a in range(3):
                feat[j, a] = p[a] + sg * R[a, 2] + ca * R[a, 0] + sa * R[a, 1]
        plane[0], plane[1], plane[2] = ax, ay, az
        return RIM_POINTS
    ux, uy, uz = sx / sl, sy / sl, sz / sl  # the rim point's direction from the axis
    # roll as detection.py: surface normal seen by the body n_s = -d, s = n_s - (n_s . a) a = -u sl
    roll[0] = r / sl
    roll[1] = -(ay * uz - az * uy)
    roll[2] = -(az * ux - ax * uz)
    roll[3] = -(ax * uy - ay * ux)
    feat[0, 0] += r * ux
    feat[0, 1] += r * uy
    feat[0, 2] += r * uz
    if abs(da) <= _SIN_FEATURE:
        for a in range(3):
            feat[1, a] = feat[0, a] + h * R[a, 2]
            feat[0, a] -= h * R[a, 2]
        return 2
    for a in range(3):
        feat[0, a] += sg * R[a, 2]
    return 1


# ---------------------------------------------------------------- 2-D intersection


@njit(cache=True)
def _orient_ccw(P, k) -> None:
    area = 0.0
    for i in range(k):
        j = (i + 1) % k
        area += P[i, 0] * P[j, 1] - P[j, 0] * P[i, 1]
    if area < 0.0:
        for i in range(k // 2):
            for c in range(2):
                P[i, c], P[k - 1 - i, c] = P[k - 1 - i, c], P[i, c]


@njit(cache=True)
def _clip_polygon(subj, ks, clip, kc, buf_in, buf_out) -> int:
    """Sutherland-Hodgman: the ccw polygon subj[:ks] clipped by the ccw convex polygon
    clip[:kc]; the result in buf_out, its count returned."""
    for i in range(ks):
        buf_out[i, 0], buf_out[i, 1] = subj[i, 0], subj[i, 1]
    n = ks
    for e in range(kc):
        if n == 0:
            break
        for i in range(n):
            buf_in[i, 0], buf_in[i, 1] = buf_out[i, 0], buf_out[i, 1]
        ax, ay = clip[e, 0], clip[e, 1]
        bx, by = clip[(e + 1) % kc, 0], clip[(e + 1) % kc, 1]
        ex, ey = bx - ax, by - ay
        el = math.sqrt(ex * ex + ey * ey)
        if el < 1e-15:
            continue
        m = 0
        for i in range(n):
            j = (i + 1) % n
            si = (ex * (buf_in[i, 1] - ay) - ey * (buf_in[i, 0] - ax)) / el  # + inside (left)
            sj = (ex * (buf_in[j, 1] - ay) - ey * (buf_in[j, 0] - ax)) / el
            if si >= -_EPS_2D:
                buf_out[m, 0], buf_out[m, 1] = buf_in[i, 0], buf_in[i, 1]
                m += 1
            if (si >= -_EPS_2D) != (sj >= -_EPS_2D) and m < buf_out.shape[0]:
                # on the edge: an edge within _EPS_2D of the clip edge, one end on either side
                # of the inside test's line, crosses the clip edge far off its ends (two boxes
                # face to face with their sides in line got a point 0.3 m off, 17 mm deep)
                t = min(1.0, max(0.0, si / (si - sj)))
                buf_out[m, 0] = buf_in[i, 0] + t * (buf_in[j, 0] - buf_in[i, 0])
                buf_out[m, 1] = buf_in[i, 1] + t * (buf_in[j, 1] - buf_in[i, 1])
                m += 1
        n = m
    return n


@njit(cache=True)
def _clean_polygon(P, k) -> int:
    """Drop repeated points and points on a straight run of the polygon P[:k]; returns k."""
    m = 0
    for i in range(k):
        dup = False
        for j in range(m):
            if abs(P[i, 0] - P[j, 0]) <= _EPS_2D and abs(P[i, 1] - P[j, 1]) <= _EPS_2D:
                dup = True
        if not dup:
            P[m, 0], P[m, 1] = P[i, 0], P[i, 1]
            m += 1
    if m < 3:
        return m
    changed = True
    while changed and m > 3:
        changed = False
        for i in range(m):
            a = (i - 1) % m
            b = (i + 1) % m
            ex, ey = P[b, 0] - P[a, 0], P[b, 1] - P[a, 1]
            el = math.sqrt(ex * ex + ey * ey)
            d = abs(ex * (P[i, 1] - P[a, 1]) - ey * (P[i, 0] - P[a, 0])) / max(el, 1e-300)
            if d <= _EPS_2D:
                for j in range(i, m - 1):
                    P[j, 0], P[j, 1] = P[j + 1, 0], P[j + 1, 1]
                m -= 1
                changed = True
                break
    return m


@njit(cache=True)
def _clip_segment(P, poly, k, out) -> int:
    """The segment P[0]-P[1] clipped by the ccw convex polygon poly[:k] (Cyrus-Beck): 0 or 2
    points into out."""
    t0, t1 = 0.0, 1.0
    dx, dy = P[1, 0] - P[0, 0], P[1, 1] - P[0, 1]
    for e in range(k):
        ax, ay = poly[e, 0], poly[e, 1]
        ex, ey = poly[(e + 1) % k, 0] - ax, poly[(e + 1) % k, 1] - ay
        el = math.sqrt(ex * ex + ey * ey)
        if el < 1e-15:
            continue
        s0 = (ex * (P[0, 1] - ay) - ey * (P[0, 0] - ax)) / el + _EPS_2D  # + inside
        ds = (ex * dy - ey * dx) / el
        if abs(ds) < 1e-300:
            if s0 < 0.0:
                return 0
            continue
        t = -s0 / ds
        if ds > 0.0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return 0
    out[0, 0], out[0, 1] = P[0, 0] + t0 * dx, P[0, 1] + t0 * dy
    out[1, 0], out[1, 1] = P[0, 0] + t1 * dx, P[0, 1] + t1 * dy
    return 2


@njit(cache=True)
def _inside(x, y, poly, k) -> bool:
    for e in range(k):
        ax, ay = poly[e, 0], poly[e, 1]
        ex, ey = poly[(e + 1) % k, 0] - ax, poly[(e + 1) % k, 1] - ay
        el = math.sqrt(ex * ex + ey * ey)
        if el > 1e-15 and (ex * (y - ay) - ey * (x - ax)) / el < -_EPS_2D:
            return False
    return True


@njit(cache=True)
def _segment_point(P, x, y) -> float:
    """Distance of (x, y) from the segment P[0]-P[1] (2-D)."""
    dx, dy = P[1, 0] - P[0, 0], P[1, 1] - P[0, 1]
    l2 = dx * dx + dy * dy
    t = 0.0 if l2 < 1e-300 else min(1.0, max(0.0, ((x - P[0, 0]) * dx + (y - P[0, 1]) * dy) / l2))
    return math.hypot(P[0, 0] + t * dx - x, P[0, 1] + t * dy - y)


@njit(cache=True)
def _segments(A, B, out) -> int:
    """Intersection of the 2-D segments A[0]-A[1] and B[0]-B[1]: 0, 1 or 2 points into out."""
    ax, ay = A[1, 0] - A[0, 0], A[1, 1] - A[0, 1]
    bx, by = B[1, 0] - B[0, 0], B[1, 1] - B[0, 1]
    la, lb = math.hypot(ax, ay), math.hypot(bx, by)
    cr = ax * by - ay * bx
    if abs(cr) > 1e-9 * la * lb:
        wx, wy = B[0, 0] - A[0, 0], B[0, 1] - A[0, 1]
        s = (wx * by - wy * bx) / cr
        t = (wx * ay - wy * ax) / cr
        ea, eb = _EPS_2D / max(la, 1e-300), _EPS_2D / max(lb, 1e-300)
        if -ea <= s <= 1.0 + ea and -eb <= t <= 1.0 + eb:
            s = min(1.0, max(0.0, s))
            out[0, 0], out[0, 1] = A[0, 0] + s * ax, A[0, 1] + s * ay
            return 1
        return 0
    # parallel: overlap on a common line
    if _segment_point(A, B[0, 0], B[0, 1]) > _EPS_2D and abs((B[0, 0] - A[0, 0]) * ay - (B[0, 1] - A[0, 1]) * ax) / max(la, 1e-300) > _EPS_2D:
        return 0
    l2 = la * la
    t0 = ((B[0, 0] - A[0, 0]) * ax + (B[0, 1] - A[0, 1]) * ay) / l2
    t1 = ((B[1, 0] - A[0, 0]) * ax + (B[1, 1] - A[0, 1]) * ay) / l2
    lo, hi = max(0.0, min(t0, t1)), min(1.0, max(t0, t1))
    if lo > hi + _EPS_2D / la:
        return 0
    out[0, 0], out[0, 1] = A[0, 0] + lo * ax, A[0, 1] + lo * ay
    out[1, 0], out[1, 1] = A[0, 0] + hi * ax, A[0, 1] + hi * ay
    return 1 if hi - lo <= _EPS_2D / la else 2


@njit(cache=True)
def _intersect(fa, ka, fb, kb, buf_in, out) -> int:
    """Intersection of the 2-D features fa[:ka] and fb[:kb] (point, segment, ccw polygon)
    as points into out; returns the count (0: they do not meet)."""
    if ka >= 3 and kb >= 3:
        return _clean_polygon(out, _clip_polygon(fb, kb, fa, ka, buf_in, out))
    if ka >= 3 and kb == 2:
        return _clip_segment(fb, fa, ka, out)
    if kb >= 3 and ka == 2:
        return _clip_segment(fa, fb, kb, out)
    if ka == 2 and kb == 2:
        return _segments(fa, fb, out)
    # a point against anything
    if ka == 1:
        x, y = fa[0, 0], fa[0, 1]
        other, ko = fb, kb
    else:
        x, y = fb[0, 0], fb[0, 1]
        other, ko = fa, ka
    if ko >= 3:
        ok = _inside(x, y, other, ko)
    elif ko == 2:
        ok = _segment_point(other, x, y) <= _EPS_2D
    else:
        ok = math.hypot(other[0, 0] - x, other[0, 1] - y) <= _EPS_2D
    if not ok:
        return 0
    out[0, 0], out[0, 1] = x, y
    return 1


@njit(cache=True)
def _height(feat, k, flat, plane, n, t1, t2, x, y) -> float:
    """Height along n of the feature feat[:k] (3-D; flat its 2-D image) over the contact-plane
    point (x, y)."""
    if k == 1:
        return feat[0, 0] * n[0] + feat[0, 1] * n[1] + feat[0, 2] * n[2]
    if k == 2:
        dx, dy = flat[1, 0] - flat[0, 0], flat[1, 1] - flat[0, 1]
        l2 = dx * dx + dy * dy
        s = 0.0 if l2 < 1e-300 else min(1.0, max(0.0, ((x - flat[0, 0]) * dx + (y - flat[0, 1]) * dy) / l2))
        h0 = feat[0, 0] * n[0] + feat[0, 1] * n[1] + feat[0, 2] * n[2]
        h1 = feat[1, 0] * n[0] + feat[1, 1] * n[1] + feat[1, 2] * n[2]
        return h0 + s * (h1 - h0)
    num = 0.0
    for a in range(3):
        num += (feat[0, a] - x * t1[a] - y * t2[a]) * plane[a]
    return num / (n[0] * plane[0] + n[1] * plane[1] + n[2] * plane[2])


@njit(cache=True)
def _put(out, m, ra, rb, xa, xb, gap) -> int:
    if m >= out.gap.shape[0]:
        return m
    for a in range(3):
        out.point_a[m, a] = xa[a]
        out.point_b[m, a] = xb[a]
    for a in range(4):
        out.roll_a[m, a] = ra[a]
        out.roll_b[m, a] = rb[a]
    out.gap[m] = gap
    return m + 1


@njit(cache=True)
def _tangent(shapes, sa, Ra, Rb, n, t) -> None:
    R = Rb if shapes.kind[sa] == SPHERE else Ra
    best = -1.0
    kx = 0
    for c in range(3):
        v = abs(R[0, c] * n[0] + R[1, c] * n[1] + R[2, c] * n[2])
        if v > best:
            best = v
            kx = c
    for step in (1, 2):
        c = (kx + step) % 3
        d = R[0, c] * n[0] + R[1, c] * n[1] + R[2, c] * n[2]
        for a in range(3):
            t[a] = R[a, c] - d * n[a]
        tl = math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
        if tl > 1e-6:
            for a in range(3):
                t[a] /= tl
            return


# ---------------------------------------------------------------- the pair


@njit(cache=True)
def collide_nb(shapes, sa, Ra, pa, sb, Rb, pb, band, flat_tol, out, scratch) -> int:
    """Contact manifold of shapes sa (pose Ra (3, 3), pa (3,)) and sb (Rb, pb) of the
    ShapeSet ``shapes``, all in the world frame [m].

    band: detection band [m] (points with gap <= band are reported); flat_tol: a cylinder's
    end disc whose rim spans at most this along the normal lies flat (its RIM_POINTS rim
    points touch) [m]. Fills ``out`` (Manifold): normal, tangent and, for the returned
    count m, point_a[:m], point_b[:m], gap[:m], roll_a[:m], roll_b[:m]. Returns m
    (0: farther apart than the band; never more than the capacity of ``out``).
    """
    n = out.normal
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    reach = shapes.bound[sa] + shapes.bound[sb] + band
    if dx * dx + dy * dy + dz * dz > reach * reach:
        return 0
    ra_, rb_ = _sweep(shapes, sa), _sweep(shapes, sb)
    wa, wb = scratch.world_a, scratch.world_b
    _to_world(shapes, sa, Ra, pa, wa)
    _to_world(shapes, sb, Rb, pb, wb)
    V = scratch.vec
    separated = False
    gap0 = 0.0
    if ra_ == 0.0 and rb_ == 0.0:
        # no sphere or capsule: the separating-axis test first (a resting pair overlaps; its
        # separation is a lower bound of the distance), GJK for the exact closest points
        # only when it finds them apart by less than the band
        gap0 = -_sat(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, V[3], V[4])
        if gap0 > band:
            return 0
        if gap0 > 0.0:
            dist = _gjk(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, scratch)
            if dist > _CORE_TOUCH:
                separated = True
                gap0 = dist
    else:
        dist = _gjk(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, scratch)
        if dist > _CORE_TOUCH:
            separated = True
            gap0 = dist - ra_ - rb_
        else:
            gap0 = -_sat(shapes, sa, Ra, pa, wa, sb, Rb, pb, wb, n, V[3], V[4])
    if gap0 > band:
        return 0
    if separated:
        for a in range(3):
            n[a] = (V[1, a] - V[0, a]) / dist
    _tangent(shapes, sa, Ra, Rb, n, out.tangent)
    # the contact plane's basis
    t1, t2 = V[5], V[6]
    _plane_basis(n, t1, t2)
    plane_a, plane_b = V[7], V[8]
    roll4_a, roll4_b = scratch.small[4:8], scratch.small[8:12]
    fa, fb = scratch.feat_a, scratch.feat_b
    ka = _feature(shapes, sa, Ra, pa, wa, n[0], n[1], n[2], flat_tol, fa, plane_a, roll4_a)
    kb = _feature(shapes, sb, Rb, pb, wb, -n[0], -n[1], -n[2], flat_tol, fb, plane_b, roll4_b)
    qa, qb = scratch.flat_a, scratch.flat_b
    for i in range(ka):
        qa[i, 0], qa[i, 1] = _dot(fa[i], t1), _dot(fa[i], t2)
    for i in range(kb):
        qb[i, 0], qb[i, 1] = _dot(fb[i], t1), _dot(fb[i], t2)
    if ka >= 3:
        _orient_ccw(qa, ka)
    if kb >= 3:
        _orient_ccw(qb, kb)
    res = scratch.clip_out
    k = _intersect(qa, ka, qb, kb, scratch.clip_in, res)
    m = 0
    xa, xb = V[11], V[12]
    if k == 0:  # the features do not overlap in the plane: the closest points
        if separated:
            for a in range(3):
                xa[a] = V[0, a] + ra_ * n[a]
                xb[a] = V[1, a] - rb_ * n[a]
        else:
            for a in range(3):
                xb[a] = fb[0, a] - rb_ * n[a]
                xa[a] = xb[a] - gap0 * n[a]
        return _put(out, 0, roll4_a, roll4_b, xa, xb, gap0)
    for i in range(k):
        x, y = res[i, 0], res[i, 1]
        ha = _height(fa, ka, qa, plane_a, n, t1, t2, x, y)
        hb = _height(fb, kb, qb, plane_b, n, t1, t2, x, y)
        gap = hb - ha - ra_ - rb_
        if gap > band:
            continue
        for a in range(3):
            base = x * t1[a] + y * t2[a]
            xa[a] = base + (ha + ra_) * n[a]
            xb[a] = base + (hb - rb_) * n[a]
        m = _put(out, m, roll4_a, roll4_b, xa, xb, gap)
    return m


def collide(
    shapes: ShapeSet,
    sa: int,
    R_a: np.ndarray,
    p_a: np.ndarray,
    sb: int,
    R_b: np.ndarray,
    p_b: np.ndarray,
    band: float = 2e-4,
    flat_tol: float | None = None,
) -> Manifold:
    """``collide_nb`` for tools and tests (allocates its buffers; a step calls collide_nb).

    R_a, R_b: rotations (3, 3); p_a, p_b: positions (3,) [m], world; band and flat_tol [m]
    (flat_tol None: the band). Returns a Manifold of fresh arrays holding exactly the m
    points found (m = 0 when apart)."""
    out = manifold_buffers(shapes)
    scratch = narrow_scratch(shapes)
    as_f = lambda a: np.ascontiguousarray(a, dtype=float)  # noqa: E731
    m = collide_nb(shapes, int(sa), as_f(R_a), as_f(p_a), int(sb), as_f(R_b), as_f(p_b), float(band),
                   float(band if flat_tol is None else flat_tol), out, scratch)  # fmt: skip
    return Manifold(out.normal.copy(), out.tangent.copy(), *(a[:m].copy() for a in out[2:]))
