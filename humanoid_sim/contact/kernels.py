"""Compiled (numba) helpers of the contact step: small dense linear algebra and 2-D geometry.

All functions are ``@njit(cache=True)`` and allocation-light; their Python
callers keep the public API in constrained_solve.py, virtual_link.py and
balance/zmp.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from humanoid_sim.dynamics.kernels import point_jacobian_into, point_motion_nb
from humanoid_sim.dynamics.mass_factor import add_rows_times_nb, back_project_nb, rows_gram_nb

# ---------------------------------------------------------------- linear algebra


@njit(cache=True)
def cholesky_into(A, L) -> bool:
    """Lower Cholesky factor of the SPD matrix A (n, n) into L; False if A is not SPD.
    Column j's entries below the diagonal are formed four rows at a time: four independent
    sums, each in the order of one, so that the result is that of one row at a time to the
    last bit and the processor is not left waiting on one sum's additions."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not (s > 0.0) or not math.isfinite(s):
            return False
        d = math.sqrt(s)
        L[j, j] = d
        i = j + 1
        while i + 3 < n:
            t0, t1, t2, t3 = A[i, j], A[i + 1, j], A[i + 2, j], A[i + 3, j]
            for k in range(j):
                ljk = L[j, k]
                t0 -= L[i, k] * ljk
                t1 -= L[i + 1, k] * ljk
                t2 -= L[i + 2, k] * ljk
                t3 -= L[i + 3, k] * ljk
            L[i, j], L[i + 1, j], L[i + 2, j], L[i + 3, j] = t0 / d, t1 / d, t2 / d, t3 / d
            i += 4
        for i in range(i, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True)
def cho_solve_vec(L, b, out) -> None:
    """Solve (L L^T) x = b into out; b, out shape (n,)."""
    n = b.shape[0]
    for i in range(n):
        t = b[i]
        for j in range(i):
            t -= L[i, j] * out[j]
        out[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = out[i]
        for j in range(i + 1, n):
            t -= L[j, i] * out[j]
        out[i] = t / L[i, i]


@njit(cache=True)
def lu_solve_into(A, x, m):
    """Solve A[:m, :m] y = x[:m] by LU with partial pivoting, y into x[:m] (A overwritten by
    its factors). Returns the smallest and the largest |pivot|, for the caller's rank test;
    a pivot of exactly 0 returns (0, largest) with x left eliminated, not solved."""
    pmin, pmax = 1e300, 0.0
    for c in range(m):
        p = c
        for a in range(c + 1, m):
            if abs(A[a, c]) > abs(A[p, c]):
                p = a
        pmin = min(pmin, abs(A[p, c]))
        pmax = max(pmax, abs(A[p, c]))
        if A[p, c] == 0.0:
            return 0.0, pmax
        if p != c:
            for b in range(m):
                A[c, b], A[p, b] = A[p, b], A[c, b]
            x[c], x[p] = x[p], x[c]
        for a in range(c + 1, m):
            f = A[a, c] / A[c, c]
            if f != 0.0:
                for b in range(c, m):
                    A[a, b] -= f * A[c, b]
                x[a] -= f * x[c]
    for c in range(m - 1, -1, -1):
        t = x[c]
        for b in range(c + 1, m):
            t -= A[c, b] * x[b]
        x[c] = t / A[c, c]
    return pmin, pmax


# ---------------------------------------------------------------- 2-D geometry


@njit(cache=True)
def _cross2(ox, oy, ax, ay, bx, by):
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)


@njit(cache=True, inline="always")
def _before(primary, secondary, b, a) -> bool:
    """Entry b sorts strictly before entry a: by primary, then secondary."""
    return primary[b] < primary[a] or (primary[b] == primary[a] and secondary[b] < secondary[a])


@njit(cache=True)
def _merge_sort_into(primary, secondary, n, order, tmp) -> None:
    """order (n,) int64: the indices of the first n entries sorted by primary, then secondary,
    ties in index order (a bottom-up merge sort; tmp (n,) int64 scratch; nothing allocated).
    Entries already in order cost one pass."""
    for a in range(n):
        order[a] = a
    for a in range(1, n):
        if _before(primary, secondary, a, a - 1):
            break
    else:
        return
    width = 1
    in_order = True  # where the sorted runs are: order, else tmp
    while width < n:
        src, dst = (order, tmp) if in_order else (tmp, order)
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                a, b = src[i], src[j]
                if _before(primary, secondary, b, a):  # strictly: stable
                    dst[k] = b
                    j += 1
                else:
                    dst[k] = a
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        in_order = not in_order
        width *= 2
    if not in_order:
        for a in range(n):
            order[a] = tmp[a]


@njit(cache=True)
def _sort_lexicographic(P, n, order, tmp) -> None:
    """order (n,) int64: the indices of the first n points of P (n, 2) sorted by x, then y,
    stably (_merge_sort_into; tmp (n,) int64 scratch)."""
    _merge_sort_into(P[:, 0], P[:, 1], n, order, tmp)


@njit(cache=True)
def argsort_stable_into(keys, n, order, tmp) -> None:
    """order (n,) int64: the indices of the first n keys sorted, ties in index order: numpy's
    stable argsort (_merge_sort_into; tmp (n,) int64 scratch; nothing allocated). Keys already
    in order (the step's hits come body by body) cost one pass."""
    _merge_sort_into(keys, keys, n, order, tmp)


@njit(cache=True)
def convex_hull_into(P, n, order, hull) -> int:
    """Counter-clockwise convex hull of the first n 2-D points of P (monotone chain): its
    indices into P in hull[:k]; returns k. order (n,), hull (2 n,) int64: scratch and
    result, nothing allocated (a contact's hull is found on every step)."""
    if n < 3:
        for t in range(n):
            hull[t] = t
        return n
    _sort_lexicographic(P, n, order, hull)
    k = 0
    for t in range(n):
        i = order[t]
        while k >= 2 and _cross2(P[hull[k - 2], 0], P[hull[k - 2], 1], P[hull[k - 1], 0], P[hull[k - 1], 1], P[i, 0], P[i, 1]) <= 1e-15:
            k -= 1
        hull[k] = i
        k += 1
    lower = k + 1
    for t in range(n - 2, -1, -1):
        i = order[t]
        while k >= lower and _cross2(P[hull[k - 2], 0], P[hull[k - 2], 1], P[hull[k - 1], 0], P[hull[k - 1], 1], P[i, 0], P[i, 1]) <= 1e-15:
            k -= 1
        hull[k] = i
        k += 1
    return k - 1


@njit(cache=True)
def convex_hull_nb(P):
    """Counter-clockwise convex hull indices of 2-D points P (n, 2) (convex_hull_into, its
    arrays allocated here)."""
    n = P.shape[0]
    order = np.empty(n, np.int64)
    hull = np.empty(max(2 * n, 1), np.int64)
    k = convex_hull_into(P, n, order, hull)
    return hull[:k].copy()


@njit(cache=True)
def hull_centroid(P, hull, k):
    """Area centroid (x, y) of the counter-clockwise polygon P[hull[:k]] (P (n, 2)), the mean
    of its vertices for a degenerate one; nothing allocated."""
    a = 0.0
    cx = 0.0
    cy = 0.0
    for t in range(k):
        i, j = hull[t], hull[(t + 1) % k]
        c = P[i, 0] * P[j, 1] - P[j, 0] * P[i, 1]
        a += c
        cx += (P[i, 0] + P[j, 0]) * c
        cy += (P[i, 1] + P[j, 1]) * c
    if abs(a) < 1e-18:
        sx = 0.0
        sy = 0.0
        for t in range(k):
            sx += P[hull[t], 0]
            sy += P[hull[t], 1]
        return sx / k, sy / k
    return cx / (3.0 * a), cy / (3.0 * a)


@njit(cache=True)
def polygon_centroid_nb(poly):
    """Area centroid (2,) of a counter-clockwise polygon (k, 2); the mean for a degenerate one."""
    k = poly.shape[0]
    out = np.empty(2)
    out[0], out[1] = hull_centroid(poly, np.arange(k), k)
    return out


@njit(cache=True)
def principal_line_nb(P, n):
    """(cx, cy, dx, dy, spread) of the first n points of P (n, 2): their centre, the unit
    direction of their principal line and the largest distance of a point from that line."""
    mx = 0.0
    my = 0.0
    for i in range(n):
        mx += P[i, 0]
        my += P[i, 1]
    mx /= n
    my /= n
    sxx = 0.0
    syy = 0.0
    sxy = 0.0
    for i in range(n):
        dx = P[i, 0] - mx
        dy = P[i, 1] - my
        sxx += dx * dx
        syy += dy * dy
        sxy += dx * dy
    ang = 0.5 * math.atan2(2.0 * sxy, sxx - syy)
    d0, d1 = math.cos(ang), math.sin(ang)
    spread = 0.0
    for i in range(n):
        e = abs(-(P[i, 0] - mx) * d1 + (P[i, 1] - my) * d0)
        if e > spread:
            spread = e
    return mx, my, d0, d1, spread


@njit(cache=True)
def gap_plane_nb(xy, gap, kind):
    """Least-squares (g0, gx, gy) of g = g0 + gx x + gy y over the points xy (n, 2) [m] and
    their gaps (n,) [m] (kind 1: the mean, 2: no y term), by the normal equations A s = r
    (A = Σ φ φᵀ, r = Σ φ g, φ = (1, x, y)) solved by their Cholesky factor in scalars:
    nothing allocated. Points on a line (A singular: a zero pivot) give no tilt across it:
    the fit of kind 2, or the mean."""
    n = gap.shape[0]
    if kind == 1 or n == 1:
        return gap.mean(), 0.0, 0.0
    a00 = a01 = a02 = a11 = a12 = a22 = r0 = r1 = r2 = 0.0
    for i in range(n):
        x, y, g = xy[i, 0], xy[i, 1], gap[i]
        a00 += 1.0
        a01 += x
        a02 += y
        a11 += x * x
        a12 += x * y
        a22 += y * y
        r0 += g
        r1 += x * g
        r2 += y * g
    # A = L Lᵀ, L lower triangular: column 0, then 1, then 2
    l00 = math.sqrt(a00)
    l10, l20 = a01 / l00, a02 / l00
    d1 = a11 - l10 * l10
    if not d1 > 0.0:
        return gap.mean(), 0.0, 0.0
    l11 = math.sqrt(d1)
    y0 = r0 / l00
    y1 = (r1 - l10 * y0) / l11
    if kind == 3:
        l21 = (a12 - l20 * l10) / l11
        d2 = a22 - l20 * l20 - l21 * l21
        if d2 > 0.0:
            l22 = math.sqrt(d2)
            y2 = (r2 - l20 * y0 - l21 * y1) / l22
            s2 = y2 / l22
            s1 = (y1 - l21 * s2) / l11
            return (y0 - l10 * s1 - l20 * s2) / l00, s1, s2
    s1 = y1 / l11
    return (y0 - l10 * s1) / l00, s1, 0.0


@njit(cache=True)
def signed_distance_nb(px, py, poly) -> float:
    """Distance of (px, py) to the boundary of a convex ccw polygon (k, 2): + inside, - outside.
    k = 1 or 2: minus the distance to the point or segment."""
    k = poly.shape[0]
    best = 1e300
    inside = k >= 3
    m = k if k >= 3 else 1
    for i in range(m):
        ax, ay = poly[i, 0], poly[i, 1]
        if k == 1:
            bx, by = ax, ay
        else:
            bx, by = poly[(i + 1) % k, 0], poly[(i + 1) % k, 1]
        ex, ey = bx - ax, by - ay
        ee = ex * ex + ey * ey
        t = 0.0 if ee == 0.0 else ((px - ax) * ex + (py - ay) * ey) / ee
        t = min(1.0, max(0.0, t))
        dx, dy = ax + t * ex - px, ay + t * ey - py
        d = math.sqrt(dx * dx + dy * dy)
        if d < best:
            best = d
        if ex * (py - ay) - ey * (px - ax) < 0.0:
            inside = False
    return best if inside else -best


@njit(cache=True)
def nearest_feature_nb(px, py, poly):
    """For a point outside a ccw polygon (k >= 3, 2): (i, j) of the nearest edge, or (i, -1)
    when the nearest point is vertex i."""
    k = poly.shape[0]
    best = 1e300
    bi, bj = 0, -1
    for i in range(k):
        j = (i + 1) % k
        ax, ay = poly[i, 0], poly[i, 1]
        ex, ey = poly[j, 0] - ax, poly[j, 1] - ay
        t = ((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey)
        t = min(1.0, max(0.0, t))
        dx, dy = ax + t * ex - px, ay + t * ey - py
        d = math.sqrt(dx * dx + dy * dy)
        if d < best - 1e-15:
            best = d
            if t <= 1e-9:
                bi, bj = i, -1
            elif t >= 1.0 - 1e-9:
                bi, bj = j, -1
            else:
                bi, bj = i, j
    return bi, bj


# Dunavant's 7-point rule (degree 5) on the reference triangle: barycentric (a, b, c), weight
_TRI_RULE = np.array(
    [
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.225],
        [0.059715871789770, 0.470142064105115, 0.470142064105115, 0.132394152788506],
        [0.470142064105115, 0.059715871789770, 0.470142064105115, 0.132394152788506],
        [0.470142064105115, 0.470142064105115, 0.059715871789770, 0.132394152788506],
        [0.797426985353087, 0.101286507323456, 0.101286507323456, 0.125939180544827],
        [0.101286507323456, 0.797426985353087, 0.101286507323456, 0.125939180544827],
        [0.101286507323456, 0.101286507323456, 0.797426985353087, 0.125939180544827],
    ]
)


@njit(cache=True)
def mean_distance_nb(poly, rule) -> float:
    """Mean distance from the origin over a polygon (k, 2) (k = 2: over the segment):
    ∫ |r| dA / A, by a fan of triangles from the origin, each split in 4 and integrated with
    ``rule`` (Dunavant 7 points). The friction moment of a uniformly pressed area turning
    about the origin is μ f_z times this (seed 000 Eq. 30, 33)."""
    k = poly.shape[0]
    if k == 1:
        return math.sqrt(poly[0, 0] ** 2 + poly[0, 1] ** 2)
    if k == 2:
        s = 0.0
        n = 64
        for i in range(n):
            t = (i + 0.5) / n
            x = poly[0, 0] + t * (poly[1, 0] - poly[0, 0])
            y = poly[0, 1] + t * (poly[1, 1] - poly[0, 1])
            s += math.sqrt(x * x + y * y)
        return s / n
    total = 0.0
    area = 0.0
    for i in range(k):
        j = (i + 1) % k
        # triangle (0, P_i, P_j) split into 4 by its edge midpoints
        ax, ay, bx, by, cx, cy = 0.0, 0.0, poly[i, 0], poly[i, 1], poly[j, 0], poly[j, 1]
        mab_x, mab_y = 0.5 * (ax + bx), 0.5 * (ay + by)
        mbc_x, mbc_y = 0.5 * (bx + cx), 0.5 * (by + cy)
        mca_x, mca_y = 0.5 * (cx + ax), 0.5 * (cy + ay)
        tris = (
            (ax, ay, mab_x, mab_y, mca_x, mca_y),
            (mab_x, mab_y, bx, by, mbc_x, mbc_y),
            (mca_x, mca_y, mbc_x, mbc_y, cx, cy),
            (mab_x, mab_y, mbc_x, mbc_y, mca_x, mca_y),
        )
        for t in tris:
            x0, y0, x1, y1, x2, y2 = t
            a = 0.5 * abs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0))
            if a == 0.0:
                continue
            s = 0.0
            for q in range(rule.shape[0]):
                x = rule[q, 0] * x0 + rule[q, 1] * x1 + rule[q, 2] * x2
                y = rule[q, 0] * y0 + rule[q, 1] * y1 + rule[q, 2] * y2
                s += rule[q, 3] * math.sqrt(x * x + y * y)
            total += a * s
            area += a
    return total / area if area > 0.0 else 0.0


# ---------------------------------------------------------------- detection

# kinds of candidate (ContactGeometry.kind): a vertex fixed to the body, a sphere centre
# (radius > 0), the centre of a cylinder's end disc (axis and radius)
VERTEX, SPHERE_CENTRE, DISC_CENTRE = 0, 1, 2
RIM_POINTS = 16  # body-fixed rim points of an end disc lying flat on a surface


@njit(cache=True)
def _box_test(qx, qy, qz, r, e, box_R, box_p, box_half):
    """Largest signed excess of the point q (less r) over box e along its axes:
    (excess [m], axis 0..2, sign +1/-1 of q on that axis)."""
    worst = -1e300
    axis = 0
    sign = 1.0
    for a in range(3):
        rel = (qx - box_p[e, 0]) * box_R[e, 0, a] + (qy - box_p[e, 1]) * box_R[e, 1, a] + (qz - box_p[e, 2]) * box_R[e, 2, a]
        ex = abs(rel) - box_half[e, a] - r
        if ex > worst:
            worst = ex
            axis = a
            sign = 1.0 if rel >= 0.0 else -1.0
    return worst, axis, sign


@njit(cache=True)
def _put_hit(k, i, elem, face, gap, qx, qy, qz, n, t, roll_c, wx, wy, wz,
             out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll) -> None:  # fmt: skip
    out_idx[k] = i
    out_elem[k] = elem
    out_face[k] = face
    out_gap[k] = gap
    out_point[k, 0] = qx
    out_point[k, 1] = qy
    out_point[k, 2] = qz
    for c in range(3):
        out_normal[k, c] = n[c]
        out_tangent[k, c] = t[c]
    out_roll[k, 0] = roll_c
    out_roll[k, 1] = wx
    out_roll[k, 2] = wy
    out_roll[k, 3] = wz


@njit(cache=True)
def _disc_hits(k, i, c, a, e1, e2, r, n, t, elem, face, e, ground_h, box_R, box_p, box_half, tol, flat_tol,
               out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll) -> int:  # fmt: skip
    """Support of the disc (centre c, unit axis a, rim basis e1, e2, radius r; world) in the
    direction -n against surface ``face`` of element e (-1: the ground plane z = ground_h):
    the lowest rim point, or RIM_POINTS body-fixed rim points when the disc lies flat
    (its rim spans at most flat_tol along n). Hits within tol are written from k on; returns
    the new count."""
    cap = out_idx.shape[0]
    na = n[0] * a[0] + n[1] * a[1] + n[2] * a[2]
    sx, sy, sz = n[0] - na * a[0], n[1] - na * a[1], n[2] - na * a[2]
    sl = math.sqrt(sx * sx + sy * sy + sz * sz)
    flat = 2.0 * r * sl <= flat_tol
    m = RIM_POINTS if flat else 1
    for j in range(m):
        if flat:
            ang = 2.0 * math.pi * j / RIM_POINTS
            ca, sa = r * math.cos(ang), r * math.sin(ang)
            qx = c[0] + ca * e1[0] + sa * e2[0]
            qy = c[1] + ca * e1[1] + sa * e2[1]
            qz = c[2] + ca * e1[2] + sa * e2[2]
        else:
            qx, qy, qz = c[0] - r * sx / sl, c[1] - r * sy / sl, c[2] - r * sz / sl
        if e < 0:
            gap = qz - ground_h
        else:
            gap, axis, sign = _box_test(qx, qy, qz, 0.0, e, box_R, box_p, box_half)
            if 2 * axis + (0 if sign > 0 else 1) != face:
                continue
        if gap < tol and k < cap:
            if flat:  # rim points are fixed to the body
                _put_hit(k, i, elem, face, gap, qx, qy, qz, n, t, 0.0, 0.0, 0.0, 0.0,
                         out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll)  # fmt: skip
            else:  # the lowest rim point moves along the rim: w = a x u, |d u| = |w . (n x omega)| / |s|
                ux, uy, uz = sx / sl, sy / sl, sz / sl
                _put_hit(k, i, elem, face, gap, qx, qy, qz, n, t, r / sl,
                         a[1] * uz - a[2] * uy, a[2] * ux - a[0] * uz, a[0] * uy - a[1] * ux,
                         out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll)  # fmt: skip
            k += 1
    return k


@njit(cache=True)
def detect_points_nb(body, kind, local, axis, radius, R, p, has_ground, ground_h, box_R, box_p, box_half, tol,
                     flat_tol, out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll,
                     scratch) -> int:  # fmt: skip
    """Candidates (body, kind, local, axis, radius; ContactGeometry) against the ground plane
    z = ground_h and static boxes; fills the hit arrays and returns the number of hits.

    A vertex is tested as it is, a sphere by its point nearest the surface; an end disc of
    a cylinder by its support in the direction of the surface (the lowest rim point, or
    RIM_POINTS rim points when it lies flat, its rim spanning at most flat_tol [m] along
    the normal): a cylinder on its side touches along its
    lowest line, standing on an end with its disc. Per hit: candidate index, element (0 =
    ground when has_ground, then boxes), surface (ground 0; box face 0..5 = +x, -x, +y, -y,
    +z, -z), gap [m] (negative = penetration), the contact point in the world, the surface
    normal and tangent, and how the point moves over the body's surface as the body turns
    (out_roll (cap, 4): c, w): the point's velocity less the velocity of the body's
    material point there is delta = -c P (n x omega), P = w w^T (a disc's rim), or the
    identity when w = 0 (a sphere); c = 0 for a point fixed to the body.
    scratch (6, 3): the point, disc axis, rim basis, normal and tangent of a candidate.
    """
    n = body.shape[0]
    nbox = box_p.shape[0]
    off = 1 if has_ground else 0
    k = 0
    cap = out_idx.shape[0]
    w, aw, e1, e2, nrm, tng = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5]
    for i in range(n):
        b = body[i]
        for a in range(3):
            w[a] = R[b, a, 0] * local[i, 0] + R[b, a, 1] * local[i, 1] + R[b, a, 2] * local[i, 2] + p[b, a]
        r = radius[i]
        disc = kind[i] == DISC_CENTRE
        if disc:
            # axis and a body-fixed rim basis (e1 = axis x (x or y of the body), e2 = axis x e1)
            ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
            if abs(ax) < 0.9:
                bx, by, bz = 0.0, az, -ay
            else:
                bx, by, bz = -az, 0.0, ax
            nb_ = math.sqrt(bx * bx + by * by + bz * bz)
            bx, by, bz = bx / nb_, by / nb_, bz / nb_
            cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
            for a in range(3):
                aw[a] = R[b, a, 0] * ax + R[b, a, 1] * ay + R[b, a, 2] * az
                e1[a] = R[b, a, 0] * bx + R[b, a, 1] * by + R[b, a, 2] * bz
                e2[a] = R[b, a, 0] * cx + R[b, a, 1] * cy + R[b, a, 2] * cz
        roll = r if kind[i] == SPHERE_CENTRE else 0.0
        if has_ground:
            nrm[0], nrm[1], nrm[2] = 0.0, 0.0, 1.0
            tng[0], tng[1], tng[2] = 1.0, 0.0, 0.0
            if disc:
                k = _disc_hits(k, i, w, aw, e1, e2, r, nrm, tng, 0, 0, -1, ground_h, box_R, box_p, box_half, tol,
                               flat_tol, out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll)  # fmt: skip
            else:
                gap = w[2] - r - ground_h
                if gap < tol and k < cap:
                    _put_hit(k, i, 0, 0, gap, w[0], w[1], w[2] - r, nrm, tng, roll, 0.0, 0.0, 0.0,
                             out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll)  # fmt: skip
                    k += 1
        for e in range(nbox):
            if disc:
                for face in range(6):
                    fa = face // 2
                    s = 1.0 if face % 2 == 0 else -1.0
                    for c in range(3):
                        nrm[c] = s * box_R[e, c, fa]
                        tng[c] = box_R[e, c, (fa + 1) % 3]
                    k = _disc_hits(k, i, w, aw, e1, e2, r, nrm, tng, e + off, face, e, ground_h, box_R, box_p, box_half,
                                   tol, flat_tol, out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent,
                                   out_roll)  # fmt: skip
                continue
            worst, ba, s = _box_test(w[0], w[1], w[2], r, e, box_R, box_p, box_half)
            if worst < tol and k < cap:
                for c in range(3):
                    nrm[c] = s * box_R[e, c, ba]
                    tng[c] = box_R[e, c, (ba + 1) % 3]
                _put_hit(k, i, e + off, 2 * ba + (0 if s > 0 else 1), worst, w[0] - r * nrm[0], w[1] - r * nrm[1],
                         w[2] - r * nrm[2], nrm, tng, roll, 0.0, 0.0, 0.0,
                         out_idx, out_elem, out_face, out_gap, out_point, out_normal, out_tangent, out_roll)  # fmt: skip
                k += 1
    return k


@njit(cache=True)
def rolling_drift_nb(V, body, R, roll, sel, m, drift) -> bool:
    """Correct the drift (6,) of a contact whose points move over the body's surface.

    contact_kinematics_nb gives the acceleration of the body's *material* point at the
    virtual-link origin; a contact point that moves over the surface as the body turns (a
    rolling sphere, cylinder or capsule) has the acceleration of that rate plus
    omega x delta, delta = the contact point's velocity less the material point's
    (detect_points_nb's out_roll, the mean over the contact's points roll[sel[:m]]).
    Without it a rolling body's normal row is off by its centripetal acceleration
    omega^2 r: the solve asks for a normal force m omega^2 r too large, the body sinks, and
    a fast one is thrown off (the old "sphere rolls 20 % too fast"). With it the force is
    the continuous one (m g cos(alpha) on a slope), which the step's fourth-order
    integration (dynamics/integrator.py) follows with the contact point staying on the
    surface. R: the virtual-link axes (3, 3), z = normal.
    Returns True when the contact has such a point (it then keeps no fixed anchor)."""
    wx, wy, wz = V[body, 3], V[body, 4], V[body, 5]
    nx, ny, nz = R[0, 2], R[1, 2], R[2, 2]
    vx, vy, vz = ny * wz - nz * wy, nz * wx - nx * wz, nx * wy - ny * wx  # n x omega
    dx, dy, dz = 0.0, 0.0, 0.0
    rolling = False
    for t in range(m):
        h = sel[t]
        c = roll[h, 0]
        if c == 0.0:
            continue
        rolling = True
        px, py, pz = roll[h, 1], roll[h, 2], roll[h, 3]
        if px == 0.0 and py == 0.0 and pz == 0.0:
            dx -= c * vx
            dy -= c * vy
            dz -= c * vz
        else:
            f = c * (px * vx + py * vy + pz * vz)
            dx -= f * px
            dy -= f * py
            dz -= f * pz
    if not rolling:
        return False
    dx, dy, dz = dx / m, dy / m, dz / m
    ox, oy, oz = wy * dz - wz * dy, wz * dx - wx * dz, wx * dy - wy * dx  # omega x delta
    for r in range(3):
        drift[r] += R[0, r] * ox + R[1, r] * oy + R[2, r] * oz
    return True


# ---------------------------------------------------------------- per-contact kernels


LINE_ASPECT = 0.02  # width / length below which contact points are a line (classify_nb)


@njit(cache=True)
def classify_into(points, m, normal, tangent, merge_tol, line_tol, uv, order, hull, R, origin, xy):
    """Table 1 classification of the first m contact points of ``points`` (m, 3) on a
    surface (normal, tangent (3,)), into the arrays given (nothing allocated: it runs for
    every contact of every step): R (3, 3) R_world_vl, origin (3,), xy (m, 2) the points in
    the virtual link's axes (a point: one row, zeros), hull (2 m,) int64: its first entries
    the hull's indices into xy; uv (m, 2), order (m,) int64: scratch. Returns (kind 1/2/3,
    the hull's size)."""
    # surface frame: z = normal, x = tangent projected
    dot = tangent[0] * normal[0] + tangent[1] * normal[1] + tangent[2] * normal[2]
    x0, x1, x2 = tangent[0] - normal[0] * dot, tangent[1] - normal[1] * dot, tangent[2] - normal[2] * dot
    nx = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    x0, x1, x2 = x0 / nx, x1 / nx, x2 / nx
    y0 = normal[1] * x2 - normal[2] * x1
    y1 = normal[2] * x0 - normal[0] * x2
    y2 = normal[0] * x1 - normal[1] * x0
    h = 0.0
    for i in range(m):
        uv[i, 0] = points[i, 0] * x0 + points[i, 1] * x1 + points[i, 2] * x2
        uv[i, 1] = points[i, 0] * y0 + points[i, 1] * y1 + points[i, 2] * y2
        h += points[i, 0] * normal[0] + points[i, 1] * normal[1] + points[i, 2] * normal[2]
    h /= m
    cx, cy, d0, d1, spread = principal_line_nb(uv, m)
    lo = 1e300
    hi = -1e300
    i0 = 0
    i1 = 0
    for i in range(m):
        t = (uv[i, 0] - cx) * d0 + (uv[i, 1] - cy) * d1
        if t < lo:
            lo = t
            i0 = i
        if t > hi:
            hi = t
            i1 = i
    extent = max(abs(lo), abs(hi))
    if m == 1 or extent <= merge_tol:
        R[0, 0], R[1, 0], R[2, 0] = x0, x1, x2
        R[0, 1], R[1, 1], R[2, 1] = y0, y1, y2
        for a in range(3):
            R[a, 2] = normal[a]
            origin[a] = points[0, a]
        xy[0, 0] = 0.0
        xy[0, 1] = 0.0
        hull[0] = 0
        return 1, 1
    # collinear within line_tol, or a sliver: an area whose width is a small fraction of its
    # length (LINE_ASPECT) is a line -- its tilt across the width, fitted from gaps over a
    # millimetre, would be noise that Eq. 20b turns into huge corrective rotations
    if spread <= line_tol or spread <= LINE_ASPECT * (hi - lo):
        # x along the line (seed 000 4.2)
        l0, l1, l2 = d0 * x0 + d1 * y0, d0 * x1 + d1 * y1, d0 * x2 + d1 * y2
        mu = 0.5 * (uv[i0, 0] + uv[i1, 0])
        mv = 0.5 * (uv[i0, 1] + uv[i1, 1])
        R[0, 0], R[1, 0], R[2, 0] = l0, l1, l2
        R[0, 1] = normal[1] * l2 - normal[2] * l1
        R[1, 1] = normal[2] * l0 - normal[0] * l2
        R[2, 1] = normal[0] * l1 - normal[1] * l0
        R[0, 2], R[1, 2], R[2, 2] = normal[0], normal[1], normal[2]
        origin[0] = mu * x0 + mv * y0 + h * normal[0]
        origin[1] = mu * x1 + mv * y1 + h * normal[1]
        origin[2] = mu * x2 + mv * y2 + h * normal[2]
        for i in range(m):
            du = uv[i, 0] - mu
            dv = uv[i, 1] - mv
            xy[i, 0] = du * d0 + dv * d1
            xy[i, 1] = -du * d1 + dv * d0
        hull[0] = i0
        hull[1] = i1
        return 2, 2
    k = convex_hull_into(uv, m, order, hull)
    ex, ey = hull_centroid(uv, hull, k)
    R[0, 0], R[1, 0], R[2, 0] = x0, x1, x2
    R[0, 1], R[1, 1], R[2, 1] = y0, y1, y2
    R[0, 2], R[1, 2], R[2, 2] = normal[0], normal[1], normal[2]
    origin[0] = ex * x0 + ey * y0 + h * normal[0]
    origin[1] = ex * x1 + ey * y1 + h * normal[1]
    origin[2] = ex * x2 + ey * y2 + h * normal[2]
    for i in range(m):
        xy[i, 0] = uv[i, 0] - ex
        xy[i, 1] = uv[i, 1] - ey
    return 3, k


@njit(cache=True)
def classify_nb(points, normal, tangent, merge_tol, line_tol):
    """Table 1 classification of contact points (m, 3) on a surface (normal, tangent)
    (classify_into, its arrays allocated here).

    Returns (kind 1/2/3, R_world_vl (3, 3), origin (3,), xy (m', 2), gap index (m',) of the
    kept points, hull (h,) indices into xy)."""
    m = points.shape[0]
    R = np.empty((3, 3))
    origin = np.empty(3)
    xy = np.empty((m, 2))
    hull = np.empty(2 * m, np.int64)
    kind, k = classify_into(points, m, normal, tangent, merge_tol, line_tol, np.empty((m, 2)), np.empty(m, np.int64),
                            hull, R, origin, xy)  # fmt: skip
    if kind == 1:
        return kind, R, origin, xy[:1].copy(), np.zeros(1, np.int64), hull[:1].copy()
    return kind, R, origin, xy, np.arange(m), hull[:k].copy()


@njit(cache=True)
def contact_kinematics_nb(parent, ndof, v_index, S, V, A, body, origin, R, J, G, drift, vel) -> None:
    """Virtual-link Jacobian G (6, nv) = blockdiag(R^T, R^T) J_point, drift (6,) = the same
    rotation of J̇v, velocity (6,) of the body point at ``origin`` in virtual-link axes.
    J (6, nv) is scratch."""
    point_jacobian_into(parent, ndof, v_index, S, body, origin, J)
    nv = J.shape[1]
    for r in range(3):
        for k in range(nv):
            G[r, k] = R[0, r] * J[0, k] + R[1, r] * J[1, k] + R[2, r] * J[2, k]
            G[3 + r, k] = R[0, r] * J[3, k] + R[1, r] * J[4, k] + R[2, r] * J[5, k]
    # J̇v of the point (point_drift_into) and its velocity, as scalars: nothing allocated
    _, (a0, a1, a2) = point_motion_nb(V, A, body, origin)
    wx, wy, wz = V[body, 3], V[body, 4], V[body, 5]
    v0 = V[body, 0] + wy * origin[2] - wz * origin[1]
    v1 = V[body, 1] + wz * origin[0] - wx * origin[2]
    v2 = V[body, 2] + wx * origin[1] - wy * origin[0]
    for r in range(3):
        drift[r] = R[0, r] * a0 + R[1, r] * a1 + R[2, r] * a2
        drift[3 + r] = R[0, r] * A[body, 3] + R[1, r] * A[body, 4] + R[2, r] * A[body, 5]
        vel[r] = R[0, r] * v0 + R[1, r] * v1 + R[2, r] * v2
        vel[3 + r] = R[0, r] * wx + R[1, r] * wy + R[2, r] * wz


@njit(cache=True, inline="always")
def _row_dot(A, a, B, b) -> float:
    """Row a of A (3, 3) dotted with row b of B: (A Bᵀ)[a, b]."""
    return A[a, 0] * B[b, 0] + A[a, 1] * B[b, 1] + A[a, 2] * B[b, 2]


@njit(cache=True)
def desired_acceleration_nb(kind, xy, gap, R, origin, R_body, p_body, use_anchor, R_anchor, p_anchor, vel, kp, kd, out,
                            slop=0.0) -> None:
    """Desired virtual-link accelerations of seed 000 Eq. 20b into out (6,):
    -kp err - kd vel with err = (anchor drift x, y; gap g0; tilts gy, -gx; yaw drift).

    slop [m]: how far a position error may stay uncorrected. 0 (the checked solve): every
    error is corrected to 0, the gap g0 of the plane fitted through the points. slop > 0
    (the bounded solve of redundant rows, with the contact band): each error is corrected
    only beyond the slop, continuously (kernels.shrink): the gap of the deepest point, the
    anchor drift, a yaw by the slop over the contact's extent (so that the slop is how far
    its farthest point may be off), and the tilt by as much as it puts a point of the area
    more than the slop off the gap at the origin (max |gx x + gy y| over the points: the
    nearest points of a rounded link, a few millimetres apart and within 0.05 mm of the
    ground, fit a plane tilted by some 0.03 rad, which the extent's rule corrected at
    300 rad/s^2, lifting a lying g1's shoulder at 2 mm/s every other step). With redundant contacts the errors measured
    contact by contact (a curved link's fitted plane and the points that enter and leave the
    band as it rocks, anchors remembered at different instants) are not reachable all at
    once; corrected all the way to 0 they make the regularised solve fight itself, and a
    robot lying on them never comes to rest. Within the slop each settles where its
    correction stops."""
    g0, gx, gy = gap_plane_nb(xy, gap, kind)
    # errors: anchor drift x, y; gap; tilts gy, -gx; yaw drift
    e0, e1, e2, e3, e4, e5 = 0.0, 0.0, g0, gy, -gx, 0.0
    angular = 0.0
    if slop > 0.0:
        extent = 0.0
        deepest = 1e300
        reach = 0.0  # the farthest the fitted tilt puts a point off the origin's gap
        for t in range(xy.shape[0]):
            extent = max(extent, math.hypot(xy[t, 0], xy[t, 1]))
            deepest = min(deepest, gap[t])
            reach = max(reach, abs(gx * xy[t, 0] + gy * xy[t, 1]))
        angular = slop / extent if extent > 0.0 else 0.0
        e2 = shrink(deepest, slop)
        tilt = shrink(reach, slop) / reach if reach > 0.0 else 0.0
        e3 *= tilt
        e4 *= tilt
    if use_anchor:
        # the origin's material point (body axes), where the anchor pose would put it
        d0, d1, d2 = origin[0] - p_body[0], origin[1] - p_body[1], origin[2] - p_body[2]
        b0 = R_body[0, 0] * d0 + R_body[1, 0] * d1 + R_body[2, 0] * d2
        b1 = R_body[0, 1] * d0 + R_body[1, 1] * d1 + R_body[2, 1] * d2
        b2 = R_body[0, 2] * d0 + R_body[1, 2] * d1 + R_body[2, 2] * d2
        w0 = origin[0] - (R_anchor[0, 0] * b0 + R_anchor[0, 1] * b1 + R_anchor[0, 2] * b2 + p_anchor[0])
        w1 = origin[1] - (R_anchor[1, 0] * b0 + R_anchor[1, 1] * b1 + R_anchor[1, 2] * b2 + p_anchor[1])
        w2 = origin[2] - (R_anchor[2, 0] * b0 + R_anchor[2, 1] * b1 + R_anchor[2, 2] * b2 + p_anchor[2])
        e0 = R[0, 0] * w0 + R[1, 0] * w1 + R[2, 0] * w2
        e1 = R[0, 1] * w0 + R[1, 1] * w1 + R[2, 1] * w2
        # the yaw: the skew part of dR = R_body R_anchorᵀ, about the normal
        yx = 0.5 * (_row_dot(R_body, 2, R_anchor, 1) - _row_dot(R_body, 1, R_anchor, 2))
        yy = 0.5 * (_row_dot(R_body, 0, R_anchor, 2) - _row_dot(R_body, 2, R_anchor, 0))
        yz = 0.5 * (_row_dot(R_body, 1, R_anchor, 0) - _row_dot(R_body, 0, R_anchor, 1))
        e5 = yx * R[0, 2] + yy * R[1, 2] + yz * R[2, 2]
        if slop > 0.0:
            drift = math.hypot(e0, e1)
            scale = shrink(drift, slop) / drift if drift > 0.0 else 0.0
            e0 *= scale
            e1 *= scale
            e5 = shrink(e5, angular)
    out[0] = -kp * e0 - kd * vel[0]
    out[1] = -kp * e1 - kd * vel[1]
    out[2] = -kp * e2 - kd * vel[2]
    out[3] = -kp * e3 - kd * vel[3]
    out[4] = -kp * e4 - kd * vel[4]
    out[5] = -kp * e5 - kd * vel[5]


@njit(cache=True)
def speculative_target_nb(xy, gap, vel, tolerance, dt, out) -> None:
    """A speculative contact's normal target (every point of its area farther than
    ``tolerance`` [m]) into out[2], in place of Eq. 20b's: the acceleration [m/s^2] at which
    its nearest point, gap g above the surface and moving along the normal at v_n (the
    origin's velocity vel (6,) in virtual-link axes carried to the point), arrives no deeper
    than the surface at the step's end: g + v_n dt + a dt^2 / 2 >= 0. A point arriving within
    the step (or driven there by the step's accelerations: a light limb under full-effort
    torques accelerates at thousands of m/s^2) is held there; one that would not arrive gets no
    force (its row is released). Nothing changes for a contact within the tolerance."""
    near = 0
    for t in range(1, gap.shape[0]):
        if gap[t] < gap[near]:
            near = t
    g = gap[near]
    if g <= tolerance:
        return
    vn = vel[2] + vel[3] * xy[near, 1] - vel[4] * xy[near, 0]
    out[2] = -2.0 * (g + vn * dt) / (dt * dt)


@njit(cache=True)
def stop_slip_target_nb(vel, dt, out) -> None:
    """The tangential targets into out[0:2] of a contact whose slip would reverse within the
    step (seed 000, 4.6: it sticks): the slip v_t (vel[0:2], virtual-link axes [m/s]) stops
    by the step's end, a_t = -v_t / dt [m/s^2], in place of Eq. 20b's -kd v_t. Coulomb's
    friction opposes a slip until it stops, then holds; a force held over the step can do
    neither, and one that left the point still slipping at (1 - kd dt) v_t while the torques
    reversed it had to push along the slip, doing work f . v_t dt (1 - kd dt / 2) that
    nothing paid for (0.11 J in a step of a thigh slipping at 0.13 m/s under full-effort
    torques). Stopped within the step, the work is f . v_t dt / 2: negative unless the
    point's own motion would reverse it faster than the stop."""
    out[0] = -vel[0] / dt
    out[1] = -vel[1] / dt


@njit(cache=True, inline="always")
def guard_acceleration_nb(gap: float, vn: float, dt: float) -> float:
    """The normal acceleration [m/s^2] at which a point gap g [m] from the surface, moving
    along the normal at vn [m/s], ends a step of dt [s] exactly at the surface (g > 0) or
    where it starts (g <= 0): g + vn dt + a dt^2 / 2 = min(g, 0)."""
    return -2.0 * (max(gap, 0.0) + vn * dt) / (dt * dt)


@njit(cache=True)
def guard_target_nb(gap, vel, dt, out) -> None:
    """A guard's targets into out (6,) (step_kernel._build_contacts: one point of the band
    that is not in a contact, moving out of the surface or not arriving at it at its
    velocity): 0 but the normal row, the acceleration [m/s^2] at which the point, gap g
    [m] from the surface and moving along the normal at v_n = vel[2] [m/s], ends the step
    no deeper than the surface (g > 0) or than it starts (g <= 0):
    g + v_n dt + a dt^2 / 2 >= min(g, 0). Over the step such a row does no positive work:
    the point ends where it started or lower, pushed up."""
    for c in range(6):
        out[c] = 0.0
    out[2] = guard_acceleration_nb(gap, vel[2], dt)


@njit(cache=True, inline="always")
def shrink(e: float, slop: float) -> float:
    """e moved towards 0 by slop >= 0 (0 inside [-slop, slop]): an error corrected only beyond its slop, continuously (no step in the correction where
    the error crosses the slop)."""
    if e > slop:
        return e - slop
    if e < -slop:
        return e + slop
    return 0.0


@njit(cache=True)
def all_finite(a) -> bool:
    """True when every entry of the array is finite (no NaN, no inf)."""
    for x in a.flat:
        if not math.isfinite(x):
            return False
    return True


@njit(cache=True)
def all_within(a, lo, hi) -> bool:
    """True when every entry of the array lies in [lo, hi] (NaN does not)."""
    for x in a.flat:
        if not (lo <= x <= hi):
            return False
    return True


@njit(cache=True)
def zmp_point(fx, fy, fz, nx, ny, height):
    """The ZMP (x, y, z) [m] on the plane z = height of a total contact force (fx, fy, fz) [N]
    with moment (nx, ny, ·) about the world origin [N m]: (n_O - p x f)_{x,y} = 0 solved for
    p = (x, y, height); NaN without a vertical force (fz <= 1e-12 N)."""
    if fz > 1e-12:
        return (height * fx - ny) / fz, (nx + height * fy) / fz, height
    return np.nan, np.nan, np.nan


@njit(cache=True)
def zmp_margin(x, y, support) -> float:
    """Signed distance [m] of the ZMP (x, y) to the support polygon's boundary (k, 2), ccw
    (signed_distance_nb: + inside); NaN without a polygon or a ZMP."""
    if support.shape[0] == 0 or not math.isfinite(x):
        return np.nan
    return signed_distance_nb(x, y, support)


@njit(cache=True)
def zmp_nb(forces, origins, moments, points, height):
    """ZMP (3,) on z = height of wrenches (forces (n, 3) at origins (n, 3), moments (n, 3)),
    the hull indices of points (m, 2), the signed margin, total force (3,), moment about O (3,)."""
    F = np.zeros(3)
    N = np.zeros(3)
    for i in range(forces.shape[0]):
        f = forces[i]
        o = origins[i]
        F += f
        N[0] += o[1] * f[2] - o[2] * f[1] + moments[i, 0]
        N[1] += o[2] * f[0] - o[0] * f[2] + moments[i, 1]
        N[2] += o[0] * f[1] - o[1] * f[0] + moments[i, 2]
    z = np.empty(3)
    z[0], z[1], z[2] = zmp_point(F[0], F[1], F[2], N[0], N[1], height)
    hull = convex_hull_nb(points)
    return z, hull, zmp_margin(z[0], z[1], points[hull]), F, N


@njit(cache=True)
def schur_solve_nb(L, parent, H, rhs, base, x_out, lam_out) -> int:
    """schur_solve_into with its scratch allocated here (for callers outside the step)."""
    k, nv = H.shape
    return schur_solve_into(L, parent, H, rhs, base, x_out, lam_out, np.empty((nv, k)), np.empty((k, k)),
                            np.empty((k, k)), np.empty(k))  # fmt: skip


@njit(cache=True)
def schur_solve_into(L, parent, H, rhs, base, x_out, lam_out, ZT, B, LB, r) -> int:
    """Eq. 20/21 by the Schur complement for Ĥ = H (symmetric): with A = Lᵀ L the tree
    factor of A (dynamics/mass_factor.py, parent: its coordinates' parents) and
    ZT = L^-T Hᵀ, B = H A^-1 Hᵀ = ZTᵀ ZT, B λ = rhs - H base, x = base + L^-1 (ZT λ).
    Only triangular solves along the tree's paths (A^-1 is never formed). H (k, nv); ZT
    (nv, k), B, LB (k, k), r (k,): scratch.
    Returns 0 on success, 1 when B is (nearly) singular (the caller then falls back to LU /
    least squares), 2 when not finite."""
    k, nv = H.shape
    rows_gram_nb(L, parent, H, ZT, B)
    # r = rhs - H base as -((-rhs) + H base): negation is exact, so these are the bits of
    # subtracting the products from rhs one by one
    for a in range(k):
        r[a] = -rhs[a]
    add_rows_times_nb(H, base, k, nv, r)
    for a in range(k):
        r[a] = -r[a]
    if not cholesky_into(B, LB):
        return 1
    dmin = 1e300
    dmax = 0.0
    for i in range(k):
        d = abs(LB[i, i])
        dmin = min(dmin, d)
        dmax = max(dmax, d)
    if not dmin > 1e-7 * dmax:
        return 1
    cho_solve_vec(LB, r, lam_out)
    back_project_nb(L, parent, ZT, lam_out, x_out)
    for i in range(nv):
        x_out[i] += base[i]
    for i in range(nv):
        if not math.isfinite(x_out[i]):
            return 2
    for j in range(k):
        if not math.isfinite(lam_out[j]):
            return 2
    return 0
