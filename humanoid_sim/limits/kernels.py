"""Compiled kernels of the limits package (numba), kept in one module.

numba's on-disk cache (``cache=True``) is keyed on the file that defines a
function; a cached caller does not notice edits to a callee in another file.
Keeping every kernel of the package here means an edit anywhere in them
invalidates the cache of all of them.

Geometry conventions are those of ``swing_twist`` (swing point s, twist ψ,
ω_rel in the parent frame) and ``swing_boundary`` (cubic segments, coefficient
array (n, 4, 2) of P(t) = A t³ + B t² + C t + D, dense samples (n, S + 1, 2)).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# bound on |∂ψ_lim/∂s| [rad/rad] used only to decide that a twist row cannot become
# active this step (so its limit gradient need not be computed); steeper twist
# limits would merely join one step later
TWIST_LIMIT_SLOPE_CAP = 10.0
# joint rates [rad/s] below which a group's drift d/dt(row) · q̇ is taken as 0
# (group_rows_with_drift_nb): it is quadratic in them, |drift| <= κ |q̇|² with κ the rows'
# change per radian, so at most 1e-12 κ rad/s² here; its central difference costs two more
# evaluations of the group (8 of the 13 µs of a group whose twist row holds the bundled
# humanoid lying against its hip's twist limit, at 1e-8 rad/s)
DRIFT_SPEED = 1e-6
# swing θ [rad] beyond which a group makes no rows (group_rows_nb, group_clear_nb): the
# swing-twist chart is singular at θ = π (the swing's direction, and the twist, undefined
# there), its rates grow as 1 / (π - θ)² towards it (rows 1e3 times a group's usual ones at
# this limit), and at θ = π exactly they are divisions by zero. Every bundled swing boundary
# lies well inside it (the shoulders' reach 167°); beyond it the joints' own stops still act
SWING_CHART_LIMIT = np.pi - 0.05


@njit(cache=True)
def quat_from_matrix_nb(R: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) with w >= 0 of a rotation matrix (Shepperd), as four floats
    (nothing allocated: the range-of-motion rows evaluate it per group several times a step)."""
    m = R
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        r = np.sqrt(1.0 + tr) * 2.0
        w, x, y, z = 0.25 * r, (m[2, 1] - m[1, 2]) / r, (m[0, 2] - m[2, 0]) / r, (m[1, 0] - m[0, 1]) / r
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        r = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        w, x, y, z = (m[2, 1] - m[1, 2]) / r, 0.25 * r, (m[0, 1] + m[1, 0]) / r, (m[0, 2] + m[2, 0]) / r
    elif m[1, 1] > m[2, 2]:
        r = np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        w, x, y, z = (m[0, 2] - m[2, 0]) / r, (m[0, 1] + m[1, 0]) / r, 0.25 * r, (m[1, 2] + m[2, 1]) / r
    else:
        r = np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        w, x, y, z = (m[1, 0] - m[0, 1]) / r, (m[0, 2] + m[2, 0]) / r, (m[1, 2] + m[2, 1]) / r, 0.25 * r
    n = np.sqrt(w * w + x * x + y * y + z * z)
    if w < 0.0:
        n = -n
    return w / n, x / n, y / n, z / n


@njit(cache=True)
def axis_angle_into(axis, angle, out):  # pragma: no cover - compiled
    """out (3, 3) = the rotation matrix of ``angle`` [rad] about the unit ``axis`` (3,) (Rodrigues)."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + x * x * C, x * y * C - z * s, x * z * C + y * s
    out[1, 0], out[1, 1], out[1, 2] = y * x * C + z * s, c + y * y * C, y * z * C - x * s
    out[2, 0], out[2, 1], out[2, 2] = z * x * C - y * s, z * y * C + x * s, c + z * z * C


@njit(cache=True)
def axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` [rad] about the unit ``axis`` (3,) (Rodrigues)."""
    out = np.empty((3, 3))
    axis_angle_into(axis, angle, out)
    return out


@njit(cache=True)
def matmul3_into(A, B, C, transpose_b):  # pragma: no cover - compiled
    """C (3, 3) = A @ B, or A @ Bᵀ when transpose_b, without the BLAS call overhead (C apart
    from A and B)."""
    for i in range(3):
        for j in range(3):
            if transpose_b:
                C[i, j] = A[i, 0] * B[j, 0] + A[i, 1] * B[j, 1] + A[i, 2] * B[j, 2]
            else:
                C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(cache=True)
def matvec3_nb(A: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """A @ x for a 3x3 matrix and a 3-vector, as three floats (nothing allocated)."""
    return (
        A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2],
        A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2],
        A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2],
    )


@njit(cache=True)
def k_and_dk_nb(theta: float, sin_theta: float) -> tuple[float, float]:
    """k = θ / sin θ and (dk/dθ) / sin θ, with series near θ = 0."""
    if theta < 1e-4:
        return 1.0 + theta * theta / 6.0, 1.0 / 3.0 + 2.0 * theta * theta / 15.0
    k = theta / sin_theta
    dk_over_sin = (sin_theta - theta * np.cos(theta)) / sin_theta**3
    return k, dk_over_sin


@njit(cache=True)
def swing_twist_angles_nb(R_rel, a, e1, e2):  # pragma: no cover - compiled
    """(φ, θ, ψ, s_x, s_y) of ``R_rel``; see ``swing_twist_angles``."""
    d = matvec3_nb(R_rel, a)
    c = min(1.0, max(-1.0, d[0] * a[0] + d[1] * a[1] + d[2] * a[2]))
    theta = np.arccos(c)
    q = quat_from_matrix_nb(R_rel)
    psi = 2.0 * np.arctan2(q[1] * a[0] + q[2] * a[1] + q[3] * a[2], q[0])
    psi = (psi + np.pi) % (2.0 * np.pi) - np.pi  # wrap to (-π, π]
    if psi == -np.pi:
        psi = np.pi
    sin_t = np.sqrt(max(0.0, 1.0 - c * c))
    if sin_t == 0.0 and theta > 1.0:  # θ = π to rounding: the swing's direction is undefined, φ = 0
        return 0.0, theta, psi, theta, 0.0
    k, _ = k_and_dk_nb(theta, sin_t)
    s0 = k * (d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2])
    s1 = k * (d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2])
    phi = np.arctan2(s1, s0) if theta > 0.0 else 0.0
    return phi, theta, psi, s0, s1


@njit(cache=True)
def swing_twist_rates_nb(R_rel, a, e1, e2):  # pragma: no cover - compiled
    """(G_swing (2, 3), g_twist (3,)); see ``swing_twist_rates``."""
    G_swing, g_twist = np.empty((2, 3)), np.empty(3)
    swing_twist_rates_into(R_rel, a, e1, e2, G_swing, g_twist)
    return G_swing, g_twist


@njit(cache=True)
def swing_twist_rates_into(R_rel, a, e1, e2, G_swing, g_twist):  # pragma: no cover - compiled
    """G_swing (2, 3) = ∂s/∂ω_rel and g_twist (3,) = ∂ψ/∂ω_rel at R_rel (swing_twist_rates);
    both 0 at θ = π to rounding, where they are undefined (SWING_CHART_LIMIT)."""
    d = matvec3_nb(R_rel, a)
    c = min(1.0, max(-1.0, d[0] * a[0] + d[1] * a[1] + d[2] * a[2]))
    sin_t = np.sqrt(max(0.0, 1.0 - c * c))
    theta = np.arccos(c)
    if sin_t == 0.0 and theta > 1.0:
        G_swing[:, :] = 0.0
        g_twist[:] = 0.0
        return
    k, dk_over_sin = k_and_dk_nb(theta, sin_t)
    # s = k(θ) E d with E = [e1; e2], θ = acos(d·a): ∂s/∂d = k E - u (dk/dθ / sin θ) aᵀ, u = E d
    # dd/dt = ω × d = -[d]× ω, so G_swing = -∂s/∂d [d]×; row i of ∂s/∂d is r_i:
    # -(r_i [d]×) ω = -r_i · (d × ω) = (d × r_i) · ω
    for i in range(2):
        e = e1 if i == 0 else e2
        u_i = e[0] * d[0] + e[1] * d[1] + e[2] * d[2]
        r0 = k * e[0] - u_i * dk_over_sin * a[0]
        r1 = k * e[1] - u_i * dk_over_sin * a[1]
        r2 = k * e[2] - u_i * dk_over_sin * a[2]
        G_swing[i, 0] = d[1] * r2 - d[2] * r1
        G_swing[i, 1] = d[2] * r0 - d[0] * r2
        G_swing[i, 2] = d[0] * r1 - d[1] * r0
    q = quat_from_matrix_nb(R_rel)
    w, v0, v1, v2 = q[0], q[1], q[2], q[3]
    va = v0 * a[0] + v1 * a[1] + v2 * a[2]
    c0, c1, c2 = v1 * a[2] - v2 * a[1], v2 * a[0] - v0 * a[2], v0 * a[1] - v1 * a[0]  # v × a
    # q̇ = ½ (0, ω) ⊗ q: ẇ = -½ ω·v, v̇ = ½ (w ω + ω × v); ψ = 2 atan2(v·a, w)
    den = w * w + va * va  # > 0 but at θ = π (w = 0 and v ⊥ a there)
    g_twist[0] = (w * (w * a[0] + c0) + va * v0) / den
    g_twist[1] = (w * (w * a[1] + c1) + va * v1) / den
    g_twist[2] = (w * (w * a[2] + c2) + va * v2) / den


@njit(cache=True)
def may_cross_nb(boxes, i, nx, ny, offset):  # pragma: no cover - compiled
    """False when the line nx x + ny y = offset provably misses segment i's dense samples:
    the value nx x + ny y - offset is > 0 at every sample, or <= 0 at every one (the
    half-open rule of line_roots_nb), judged at the two corners of the segment's bounding
    box boxes[i] = (x_min, x_max, y_min, y_max) where it is least and greatest. Rounding
    is monotone, so the corners bound the rounded sample values too: skipping such a
    segment changes no root."""
    x_lo, x_hi = (boxes[i, 0], boxes[i, 1]) if nx >= 0.0 else (boxes[i, 1], boxes[i, 0])
    y_lo, y_hi = (boxes[i, 2], boxes[i, 3]) if ny >= 0.0 else (boxes[i, 3], boxes[i, 2])
    if nx * x_lo + ny * y_lo - offset > 0.0:
        return False
    if nx * x_hi + ny * y_hi - offset <= 0.0:
        return False
    return True


@njit(cache=True)
def next_bracket_nb(samples, i, k, nx, ny, offset):  # pragma: no cover - compiled
    """(k', prev): the first sign change of nx P_x + ny P_y - offset between the dense samples
    k' - 1 and k' of segment i with k' >= k (half-open rule: value > 0, so a root at a shared
    sample counts once), prev the side of sample k' - 1; (-1, False) when there is none. Scan
    a segment from k = 1, then from k' + 1."""
    m = samples.shape[1]
    prev = nx * samples[i, k - 1, 0] + ny * samples[i, k - 1, 1] - offset > 0.0
    while k < m:
        cur = nx * samples[i, k, 0] + ny * samples[i, k, 1] - offset > 0.0
        if cur != prev:
            return k, prev
        prev = cur
        k += 1
    return -1, False


@njit(cache=True)
def bisect_root_nb(coeffs, samples, i, k, nx, ny, offset, prev):  # pragma: no cover - compiled
    """t of the root of nx P_x(t) + ny P_y(t) - offset on segment i bracketed by the dense
    samples k - 1 and k (next_bracket_nb; prev: the side of sample k - 1), refined by
    bisection to 1e-14 in t."""
    h = 1.0 / (samples.shape[1] - 1)
    a = nx * coeffs[i, 0, 0] + ny * coeffs[i, 0, 1]
    b = nx * coeffs[i, 1, 0] + ny * coeffs[i, 1, 1]
    c = nx * coeffs[i, 2, 0] + ny * coeffs[i, 2, 1]
    d = nx * coeffs[i, 3, 0] + ny * coeffs[i, 3, 1] - offset
    lo, hi = (k - 1) * h, k * h
    for _ in range(48):
        mid = 0.5 * (lo + hi)
        if (((a * mid + b) * mid + c) * mid + d > 0.0) == prev:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def curve_point_nb(coeffs, i, t, j):  # pragma: no cover - compiled
    """Coordinate j of P_i(t) (Horner)."""
    return ((coeffs[i, 0, j] * t + coeffs[i, 1, j]) * t + coeffs[i, 2, j]) * t + coeffs[i, 3, j]


@njit(cache=True)
def line_roots_nb(coeffs, samples, boxes, nx, ny, offset, out_seg, out_t, out_p):  # pragma: no cover - compiled
    """Roots of nx P_x(t) + ny P_y(t) - offset on every segment, in segment order; returns
    their count. Brackets and refinement: next_bracket_nb, bisect_root_nb; segments the line misses
    (may_cross_nb, boxes (n, 6) of swing_boundary) are skipped. out_p receives P(t)."""
    count = 0
    for i in range(samples.shape[0]):
        if not may_cross_nb(boxes, i, nx, ny, offset):
            continue
        k = 1
        while True:
            k, found = next_bracket_nb(samples, i, k, nx, ny, offset)
            if k < 0:
                break
            t = bisect_root_nb(coeffs, samples, i, k, nx, ny, offset, found)
            out_seg[count] = i
            out_t[count] = t
            out_p[count, 0] = curve_point_nb(coeffs, i, t, 0)
            out_p[count, 1] = curve_point_nb(coeffs, i, t, 1)
            count += 1
            k += 1
    return count


@njit(cache=True)
def root_side_nb(samples, boxes, i, k, ux, uy, offset):  # pragma: no cover - compiled
    """+1 when ux P_x(t) + uy P_y(t) > offset holds, as rounded, for every t between the dense
    samples k - 1 and k of segment i; -1 when <= offset holds for every such t; 0 when
    undecided. From sample k - 1 the curve moves at most boxes[i, 4] in x and boxes[i, 5] in y
    within the interval (a bound on |P'| times its length), and rounding moves a value by
    far less than the 1e-12 of slack: so a decided side needs no bisection of the root."""
    value = ux * samples[i, k - 1, 0] + uy * samples[i, k - 1, 1] - offset
    reach = abs(ux) * boxes[i, 4] + abs(uy) * boxes[i, 5] + 1e-12
    if value - reach > 0.0:
        return 1
    if value + reach < 0.0:
        return -1
    return 0


@njit(cache=True)
def contains_nb(coeffs, samples, boxes, sx, sy):  # pragma: no cover - compiled
    """Crossing-number test: the ray from (sx, sy) towards +x crosses the curve an odd number of
    times. A root whose side of sx is decided by its interval (root_side_nb) is not refined."""
    crossings = 0
    for i in range(samples.shape[0]):
        if not may_cross_nb(boxes, i, 0.0, 1.0, sy):
            continue
        k = 1
        while True:
            k, found = next_bracket_nb(samples, i, k, 0.0, 1.0, sy)
            if k < 0:
                break
            side = root_side_nb(samples, boxes, i, k, 1.0, 0.0, sx)
            if side == 0:  # undecided: the root itself
                t = bisect_root_nb(coeffs, samples, i, k, 0.0, 1.0, sy, found)
                side = 1 if curve_point_nb(coeffs, i, t, 0) > sx else -1
            if side > 0:
                crossings += 1
            k += 1
    return crossings % 2 == 1


@njit(cache=True)
def radial_hit_nb(coeffs, samples, boxes, sx, sy):  # pragma: no cover - compiled
    """(segment, t, radius) where the ray from the centre through s meets the curve.

    The hit of smallest radius >= |s|; if none (s beyond every hit), the
    farthest hit. For s at the centre the ray is +x. A root on the other side of the centre,
    decided by its interval (root_side_nb), is not refined.
    """
    r = np.sqrt(sx * sx + sy * sy)
    ux, uy = (sx / r, sy / r) if r > 1e-12 else (1.0, 0.0)
    best_seg, best_t, best_r = -1, 0.0, np.inf
    far_seg, far_t, far_r = -1, 0.0, 0.0
    for i in range(samples.shape[0]):
        if not may_cross_nb(boxes, i, -uy, ux, 0.0):
            continue
        k = 1
        while True:
            k, found = next_bracket_nb(samples, i, k, -uy, ux, 0.0)
            if k < 0:
                break
            if root_side_nb(samples, boxes, i, k, ux, uy, 0.0) < 0:  # radius <= 0
                k += 1
                continue
            t = bisect_root_nb(coeffs, samples, i, k, -uy, ux, 0.0, found)
            k += 1
            radius = curve_point_nb(coeffs, i, t, 0) * ux + curve_point_nb(coeffs, i, t, 1) * uy
            if radius <= 0.0:
                continue
            if radius >= r - 1e-12 and radius < best_r:
                best_seg, best_t, best_r = i, t, radius
            if radius > far_r:
                far_seg, far_t, far_r = i, t, radius
    if best_seg < 0:
        best_seg, best_t, best_r = far_seg, far_t, far_r
    if best_seg < 0:  # no hit at all: cannot happen for a curve around the centre
        return 0, 0.0, np.inf
    return best_seg, best_t, best_r


@njit(cache=True)
def newton_nearest_nb(C, t, sx, sy):  # pragma: no cover - compiled
    """Newton on (P(t) - s)·P'(t) = 0 within one segment, t clamped to [0, 1]; (t, distance²)."""
    for _ in range(12):
        px = ((C[0, 0] * t + C[1, 0]) * t + C[2, 0]) * t + C[3, 0] - sx
        py = ((C[0, 1] * t + C[1, 1]) * t + C[2, 1]) * t + C[3, 1] - sy
        dx = (3.0 * C[0, 0] * t + 2.0 * C[1, 0]) * t + C[2, 0]
        dy = (3.0 * C[0, 1] * t + 2.0 * C[1, 1]) * t + C[2, 1]
        ddx = 6.0 * C[0, 0] * t + 2.0 * C[1, 0]
        ddy = 6.0 * C[0, 1] * t + 2.0 * C[1, 1]
        g = px * dx + py * dy
        hess = dx * dx + dy * dy + px * ddx + py * ddy
        if hess <= 0.0:
            break
        t_new = min(1.0, max(0.0, t - g / hess))
        if abs(t_new - t) < 1e-15:
            t = t_new
            break
        t = t_new
    px = ((C[0, 0] * t + C[1, 0]) * t + C[2, 0]) * t + C[3, 0] - sx
    py = ((C[0, 1] * t + C[1, 1]) * t + C[2, 1]) * t + C[3, 1] - sy
    return t, px * px + py * py


@njit(cache=True)
def box_distance2_nb(boxes, i, sx, sy):  # pragma: no cover - compiled
    """Squared distance from (sx, sy) to segment i's bounding box (0 inside): no dense sample
    of the segment is nearer, with the samples' own rounding (it is monotone)."""
    dx = boxes[i, 0] - sx if sx < boxes[i, 0] else (sx - boxes[i, 1] if sx > boxes[i, 1] else 0.0)
    dy = boxes[i, 2] - sy if sy < boxes[i, 2] else (sy - boxes[i, 3] if sy > boxes[i, 3] else 0.0)
    return dx * dx + dy * dy


@njit(cache=True)
def nearest_sample_nb(samples, boxes, sx, sy):  # pragma: no cover - compiled
    """(squared distance, segment, sample) of the dense sample nearest to (sx, sy), the first
    in (segment, sample) order among equals. The segment whose box is nearest is searched
    first; a segment whose box is farther than the best sample so far is skipped."""
    n, m = samples.shape[0], samples.shape[1]
    first, lb_first = 0, np.inf
    for i in range(n):
        lb = box_distance2_nb(boxes, i, sx, sy)
        if lb < lb_first:
            first, lb_first = i, lb
    best, bi, bk = np.inf, 0, 0
    for j in range(-1, n):
        i = first if j < 0 else j
        if (j >= 0 and i == first) or box_distance2_nb(boxes, i, sx, sy) > best:
            continue
        for k in range(m):
            dx, dy = samples[i, k, 0] - sx, samples[i, k, 1] - sy
            d2 = dx * dx + dy * dy
            if d2 < best or (d2 == best and (i < bi or (i == bi and k < bk))):
                best, bi, bk = d2, i, k
    return best, bi, bk


@njit(cache=True)
def nearest_nb(coeffs, samples, boxes, sx, sy):  # pragma: no cover - compiled
    """(segment, t) of the curve point nearest to (sx, sy).

    The nearest dense sample (nearest_sample_nb), then Newton in its segment; when Newton
    stops at a segment end, the neighbouring segment is searched from the shared point.
    """
    n, m = samples.shape[0], samples.shape[1]
    _, bi, bk = nearest_sample_nb(samples, boxes, sx, sy)
    t, d2 = newton_nearest_nb(coeffs[bi], bk / (m - 1), sx, sy)
    if t >= 1.0:
        j = (bi + 1) % n
        t2, e2 = newton_nearest_nb(coeffs[j], 0.0, sx, sy)
        if e2 < d2:
            return j, t2
    elif t <= 0.0:
        j = (bi - 1) % n
        t2, e2 = newton_nearest_nb(coeffs[j], 1.0, sx, sy)
        if e2 < d2:
            return j, t2
    return bi, t


@njit(cache=True)
def twist_range_nb(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx, sy):  # pragma: no cover - compiled
    """(ψ_min, ψ_max) at (sx, sy): Eq. 3.16 on the boundary, Eq. 3.17 inside, nearest point outside."""
    n = lower.shape[0]
    if contains_nb(coeffs, samples, boxes, sx, sy):
        seg, t, radius = radial_hit_nb(coeffs, samples, boxes, sx, sy)
        w = min(1.0, np.sqrt(sx * sx + sy * sy) / radius) ** 2
    else:
        seg, t = nearest_nb(coeffs, samples, boxes, sx, sy)
        w = 1.0
    j = (seg + 1) % n
    b_lo = (1.0 - t) * lower[seg] + t * lower[j]
    b_hi = (1.0 - t) * upper[seg] + t * upper[j]
    return (1.0 - w) * c_lo + w * b_lo, (1.0 - w) * c_hi + w * b_hi


@njit(cache=True)
def twist_range_gradient_into(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx, sy, h, out):  # pragma: no cover
    """out (2, 2): rows (∂ψ_min/∂s, ∂ψ_max/∂s) at (sx, sy) by central differences of step h."""
    for i in range(2):
        dx, dy = (h, 0.0) if i == 0 else (0.0, h)
        lo_p, hi_p = twist_range_nb(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx + dx, sy + dy)
        lo_m, hi_m = twist_range_nb(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx - dx, sy - dy)
        out[0, i] = (lo_p - lo_m) / (2.0 * h)
        out[1, i] = (hi_p - hi_m) / (2.0 * h)


@njit(cache=True)
def twist_range_gradient_nb(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx, sy, h):  # pragma: no cover
    """twist_range_gradient_into, into a new (2, 2) array."""
    out = np.empty((2, 2))
    twist_range_gradient_into(coeffs, samples, boxes, lower, upper, c_lo, c_hi, sx, sy, h, out)
    return out


@njit(cache=True)
def _row_through_J(J, x0, x1, x2, row, r):  # pragma: no cover - compiled
    """row[r] (3,) = Jᵀ x: a rate along x of ω_rel per joint rate."""
    for i in range(3):
        row[r, i] = J[0, i] * x0 + J[1, i] * x1 + J[2, i] * x2


@njit(cache=True)
def _rates_nb(J, qd, G_swing, g_twist):  # pragma: no cover - compiled
    """(|ψ̇|, |ṡ|) of a group at joint rates qd (3,): ω_rel = J qd, ψ̇ = g_twist · ω_rel,
    ṡ = G_swing ω_rel (swing_twist_rates_into)."""
    w0 = J[0, 0] * qd[0] + J[0, 1] * qd[1] + J[0, 2] * qd[2]
    w1 = J[1, 0] * qd[0] + J[1, 1] * qd[1] + J[1, 2] * qd[2]
    w2 = J[2, 0] * qd[0] + J[2, 1] * qd[1] + J[2, 2] * qd[2]
    psi_rate = abs(g_twist[0] * w0 + g_twist[1] * w1 + g_twist[2] * w2)
    sdx = G_swing[0, 0] * w0 + G_swing[0, 1] * w1 + G_swing[0, 2] * w2
    sdy = G_swing[1, 0] * w0 + G_swing[1, 1] * w1 + G_swing[1, 2] * w2
    return psi_rate, np.sqrt(sdx * sdx + sdy * sdy)


@njit(cache=True)
def group_rows_nb(tab, g, q, qd, band, lookahead, gap, row, active, sc, swing, twist):  # pragma: no cover
    """Gaps gap (3,), rows row (3, 3) (d gap/dt per joint rate) and activity active (3,) of
    the swing, twist upper and twist lower limits of group g of the tables tab (RangeTables)
    at its joint angles q (3,) [rad] and rates qd (3,) [rad/s]; a row is active when
    gap + lookahead min(0, d gap/dt) < band. sc: GroupScratch (its geometry fields).
    swing, twist: whether to evaluate the swing row, the twist rows (the others are left as
    they are, inactive: the drift's central difference needs only the active rows)."""
    n, m = tab.n_points[g], tab.n_samples[g]
    coeffs, samples, boxes = tab.coefficients[g, :n], tab.samples[g, :n, :m], tab.boxes[g, :n]
    tw_lo, tw_hi = tab.twist_lower[g, :n], tab.twist_upper[g, :n]
    c_lo, c_hi = tab.centre_twist[g, 0], tab.centre_twist[g, 1]
    a, e1, e2 = tab.twist_axis[g], tab.azimuth_axis_1[g], tab.azimuth_axis_2[g]
    R_rel, J, G_swing, g_twist, grad = sc.R_rel, sc.J, sc.G_swing, sc.g_twist, sc.grad
    group_rotation_into(tab.R_zero[g], tab.axes[g], tab.R_reference[g], q, R_rel, J, sc.work)
    _, theta, psi, sx, sy = swing_twist_angles_nb(R_rel, a, e1, e2)
    active[0] = active[1] = active[2] = False
    if theta > SWING_CHART_LIMIT:  # no rows near the chart's singular point
        gap[0] = gap[1] = gap[2] = np.inf
        return
    swing_twist_rates_into(R_rel, a, e1, e2, G_swing, g_twist)
    if swing:
        # swing (Eq. 3.34): along the swing-plane direction to the nearest boundary posture
        inside = contains_nb(coeffs, samples, boxes, sx, sy)
        seg, t = nearest_nb(coeffs, samples, boxes, sx, sy)
        px, py = curve_point_nb(coeffs, seg, t, 0), curve_point_nb(coeffs, seg, t, 1)
        dist = np.sqrt((px - sx) ** 2 + (py - sy) ** 2)
        gap[0] = dist if inside else -dist
        if dist > 1e-9:
            sign = -1.0 if inside else 1.0
            nx, ny = sign * (sx - px) / dist, sign * (sy - py) / dist
        else:  # on the curve: the outward normal of its tangent
            tx = (3.0 * coeffs[seg, 0, 0] * t + 2.0 * coeffs[seg, 1, 0]) * t + coeffs[seg, 2, 0]
            ty = (3.0 * coeffs[seg, 0, 1] * t + 2.0 * coeffs[seg, 1, 1]) * t + coeffs[seg, 2, 1]
            norm = np.sqrt(tx * tx + ty * ty)
            nx, ny = tab.orientation[g] * ty / norm, -tab.orientation[g] * tx / norm
        # d gap/dt per ω_rel: -(nx G_swing[0] + ny G_swing[1])
        _row_through_J(J, -(nx * G_swing[0, 0] + ny * G_swing[1, 0]), -(nx * G_swing[0, 1] + ny * G_swing[1, 1]),
                       -(nx * G_swing[0, 2] + ny * G_swing[1, 2]), row, 0)  # fmt: skip
    if twist:
        # twist (Eq. 3.35), including the motion of the interpolated limit itself
        lo, hi = twist_range_nb(coeffs, samples, boxes, tw_lo, tw_hi, c_lo, c_hi, sx, sy)
        gap[1] = hi - psi
        gap[2] = psi - lo
        # the limit's own gradient costs 4 boundary evaluations: skip it when neither twist
        # row can become active, bounding its rate by TWIST_LIMIT_SLOPE_CAP |ds/dt|
        psi_rate, s_rate = _rates_nb(J, qd, G_swing, g_twist)
        reach = band + lookahead * (psi_rate + TWIST_LIMIT_SLOPE_CAP * s_rate)
        if min(gap[1], gap[2]) < reach or band == np.inf:
            twist_range_gradient_into(coeffs, samples, boxes, tw_lo, tw_hi, c_lo, c_hi, sx, sy, 1e-6, grad)
        else:
            grad[:] = 0.0
        _row_through_J(J, grad[1, 0] * G_swing[0, 0] + grad[1, 1] * G_swing[1, 0] - g_twist[0],
                       grad[1, 0] * G_swing[0, 1] + grad[1, 1] * G_swing[1, 1] - g_twist[1],
                       grad[1, 0] * G_swing[0, 2] + grad[1, 1] * G_swing[1, 2] - g_twist[2], row, 1)  # fmt: skip
        _row_through_J(J, g_twist[0] - grad[0, 0] * G_swing[0, 0] - grad[0, 1] * G_swing[1, 0],
                       g_twist[1] - grad[0, 0] * G_swing[0, 1] - grad[0, 1] * G_swing[1, 1],
                       g_twist[2] - grad[0, 0] * G_swing[0, 2] - grad[0, 1] * G_swing[1, 2], row, 2)  # fmt: skip
    for k in range(3):
        if (swing if k == 0 else twist):
            # active when within the band now or, at the current rate, within the look-ahead time
            rate = row[k, 0] * qd[0] + row[k, 1] * qd[1] + row[k, 2] * qd[2]
            active[k] = gap[k] + lookahead * min(0.0, rate) < band


@njit(cache=True)
def group_rows_with_drift_nb(tab, g, q, qd, band, lookahead, sc):  # pragma: no cover - compiled
    """group_rows_nb into sc.gap, sc.row, sc.active (GroupScratch), and sc.drift (3,) =
    d/dt(row) · qd of the active rows [rad/s²] (a central difference of the rows along qd;
    0 when every rate is below DRIFT_SPEED)."""
    gap, row, drift, active = sc.gap, sc.row, sc.drift, sc.active
    group_rows_nb(tab, g, q, qd, band, lookahead, gap, row, active, sc, True, True)
    drift[:] = 0.0
    speed = 0.0
    for k in range(3):
        speed = max(speed, abs(qd[k]))
    if speed < DRIFT_SPEED or not (active[0] or active[1] or active[2]):
        return
    eps = 1e-6 / speed
    q_shift, gap_pm, row_pm, act_pm = sc.q_shift, sc.gap_pm, sc.row_pm, sc.active_pm
    for side in range(2):
        for k in range(3):
            q_shift[k] = q[k] + eps * qd[k] if side == 0 else q[k] - eps * qd[k]
        group_rows_nb(tab, g, q_shift, qd, np.inf, 0.0, gap_pm[side], row_pm[side], act_pm[side], sc, active[0],
                      active[1] or active[2])
    for k in range(3):
        if active[k] and act_pm[0, k] and act_pm[1, k]:  # (a side past SWING_CHART_LIMIT: none)
            dr0 = row_pm[0, k, 0] - row_pm[1, k, 0]
            dr1 = row_pm[0, k, 1] - row_pm[1, k, 1]
            dr2 = row_pm[0, k, 2] - row_pm[1, k, 2]
            drift[k] = (dr0 * qd[0] + dr1 * qd[1] + dr2 * qd[2]) / (2.0 * eps)


@njit(cache=True)
def group_rotation_into(R_zero, axes, R_reference, q_group, R_rel, J, work):  # pragma: no cover - compiled
    """R_rel (3, 3) and J (3, 3) (ω_rel = J q̇) of a 3-revolute chain at joint angles q_group
    (ball_joint_rows); work (3, 3, 3): scratch."""
    R, T, A = work[0], work[1], work[2]
    for i in range(3):
        for j in range(3):
            R[i, j] = 1.0 if i == j else 0.0
    for k in range(3):
        matmul3_into(R, R_zero[k], T, False)
        for i in range(3):  # axis of joint k in P (unchanged by its own rotation)
            J[i, k] = T[i, 0] * axes[k, 0] + T[i, 1] * axes[k, 1] + T[i, 2] * axes[k, 2]
        axis_angle_into(axes[k], q_group[k], A)
        matmul3_into(T, A, R, False)
    matmul3_into(R, R_reference, R_rel, True)


@njit(cache=True)
def group_rotation_nb(R_zero, axes, R_reference, q_group):  # pragma: no cover - compiled
    """(R_rel (3, 3), J_group (3, 3)) of a 3-revolute chain at joint angles q_group."""
    R_rel, J = np.empty((3, 3)), np.empty((3, 3))
    group_rotation_into(R_zero, axes, R_reference, q_group, R_rel, J, np.empty((3, 3, 3)))
    return R_rel, J


@njit(cache=True)
def stop_gaps_nb(tab, i, q, v, lookahead):  # pragma: no cover - compiled
    """(upper gap, lower gap, their predictions) of stop i of tab (RangeTables) at (q, v): the gap
    less what its rate closes within the look-ahead [rad or m]."""
    qs = q[tab.stop_q[i]]
    rate = v[tab.stop_v[i]] * lookahead
    up = tab.stop_upper[i] - qs  # d/dt = -q̇
    lo = qs - tab.stop_lower[i]
    return up, lo, up - max(rate, 0.0), lo + min(rate, 0.0)


@njit(cache=True)
def group_clear_nb(tab, g, qg, qdg, band, lookahead, sc):  # pragma: no cover - compiled
    """True when provably no row of group g of tab (RangeTables) is active at joint angles
    qg (3,) and rates qdg (3,); False when one may be (then group_rows_with_drift_nb).

    The swing gap is at least tab.inner - |s| within the disc about the origin that the boundary
    keeps clear of, and anywhere at least (distance to the nearest dense sample) - tab.reach
    (bound on half the longest arc between neighbouring samples), and the twist range at any
    swing point contains [tab.lo_max, tab.hi_min] (Eq. 3.16-3.17 blend limits of the control points and the
    centre). With a look-ahead the band widens by what the rows' rates can close in that
    time, bounded as group_rows_nb bounds them: the swing row's rate by |ṡ|, the twist rows'
    by |ψ̇| + TWIST_LIMIT_SLOPE_CAP |ṡ|."""
    R_rel, J, G_swing, g_twist = sc.R_rel, sc.J, sc.G_swing, sc.g_twist
    group_rotation_into(tab.R_zero[g], tab.axes[g], tab.R_reference[g], qg, R_rel, J, sc.work)
    a, e1, e2 = tab.twist_axis[g], tab.azimuth_axis_1[g], tab.azimuth_axis_2[g]
    _, theta, psi, sx, sy = swing_twist_angles_nb(R_rel, a, e1, e2)
    if theta > SWING_CHART_LIMIT:  # group_rows_nb makes no rows there
        return True
    swing_band = band
    twist_band = band
    if lookahead != 0.0:
        swing_twist_rates_into(R_rel, a, e1, e2, G_swing, g_twist)
        psi_rate, s_rate = _rates_nb(J, qdg, G_swing, g_twist)
        swing_band = band + lookahead * s_rate
        twist_band = band + lookahead * (psi_rate + TWIST_LIMIT_SLOPE_CAP * s_rate)
    if tab.hi_min[g] - psi < twist_band or psi - tab.lo_max[g] < twist_band:
        return False
    # within the disc about the origin that the boundary keeps clear of (tab.inner): inside it,
    # at least inner - |s| from it, without a search of the samples (a posture near neutral)
    if np.sqrt(sx * sx + sy * sy) + swing_band <= tab.inner[g]:
        return True
    n, m = tab.n_points[g], tab.n_samples[g]
    samples, boxes = tab.samples[g, :n, :m], tab.boxes[g, :n]
    reach = tab.reach[g]
    best, _, _ = nearest_sample_nb(samples, boxes, sx, sy)
    dmin = np.sqrt(best)
    if dmin - reach < swing_band or not dmin > 2.0 * reach:
        return False
    # inside (contains_nb) by the crossing parity of the sample polygon: the straight
    # homotopy between curve and polygon stays within 2 reach of the samples, so a point
    # farther away has the same winding number for both
    crossings = 0
    for i in range(n):
        if boxes[i, 2] > sy or boxes[i, 3] <= sy:  # every sample above, or every one at or below
            continue
        for k in range(m - 1):
            ax, ay = samples[i, k, 0], samples[i, k, 1]
            bx, by = samples[i, k + 1, 0], samples[i, k + 1, 1]
            if (ay > sy) != (by > sy):
                if ax + (sy - ay) * (bx - ax) / (by - ay) > sx:
                    crossings += 1
    return crossings % 2 == 1


@njit(cache=True)
def rows_screen_nb(w, q, v, band, lookahead):  # pragma: no cover - compiled
    """True when provably no limit row of w.tables (LimitWork) is active at (q, v): every
    stop clear by the exact test of limit_rows_nb, every group by group_clear_nb."""
    tab, sc = w.tables, w.rows.group
    for i in range(tab.stop_q.shape[0]):
        _, _, up_pred, lo_pred = stop_gaps_nb(tab, i, q, v, lookahead)
        if up_pred < band or lo_pred < band:
            return False
    for g in range(tab.g_q.shape[0]):
        qg, qdg = _group_state(tab, g, q, v, sc)
        if not group_clear_nb(tab, g, qg, qdg, band, lookahead, sc):
            return False
    return True


@njit(cache=True)
def _group_state(tab, g, q, v, sc):  # pragma: no cover - compiled
    """(angles, rates) (3,) each of group g's joints at (q, v), in sc.q_group, sc.v_group."""
    qg, qdg = sc.q_group, sc.v_group
    for k in range(3):
        qg[k] = q[tab.g_q[g, k]]
        qdg[k] = v[tab.g_v[g, k]]
    return qg, qdg


@njit(cache=True)
def group_rows_of_nb(w, g, q, qd, band, lookahead):  # pragma: no cover - compiled
    """group_rows_with_drift_nb of group g of w.tables (LimitWork) into w.rows.group."""
    group_rows_with_drift_nb(w.tables, g, q, qd, band, lookahead, w.rows.group)


@njit(cache=True)
def _start_row(out, count, code, gap, drift):  # pragma: no cover - compiled
    """Row ``count`` of out (LimitRows): its code, gap and drift, its Jacobian row cleared."""
    out.code[count] = code
    out.gap[count] = gap
    out.drift[count] = drift
    for c in range(out.jacobian.shape[1]):
        out.jacobian[count, c] = 0.0


@njit(cache=True)
def limit_rows_nb(w, q, v, band, lookahead, screen):  # pragma: no cover - compiled
    """The active limit rows of w.tables (LimitWork) at the state q (nq,), v (nv,) into
    w.rows (LimitRows); returns their count. Order: the stops (upper, then lower, of each), then
    each group's swing, twist upper and twist lower rows. A row is active when its gap less
    what its rate closes within ``lookahead`` [s] is below ``band`` [rad or m].

    Row codes: stop i upper 2 i, lower 2 i + 1; group g's kind k 2 S + 3 g + k (S stops).
    A stop's row is ∓1 on its joint's v coordinate, its drift 0; a group's row is d gap/dt
    per rate of its three joints (group_rows_with_drift_nb). screen: skip the groups that
    group_clear_nb proves inactive (the same rows: it only proves what the exact rows say)."""
    tab, out = w.tables, w.rows
    count = 0
    ns = tab.stop_q.shape[0]
    for i in range(ns):
        up, lo, up_pred, lo_pred = stop_gaps_nb(tab, i, q, v, lookahead)
        if up_pred < band:
            _start_row(out, count, 2 * i, up, 0.0)
            out.jacobian[count, tab.stop_v[i]] = -1.0
            count += 1
        if lo_pred < band:
            _start_row(out, count, 2 * i + 1, lo, 0.0)
            out.jacobian[count, tab.stop_v[i]] = 1.0
            count += 1
    sc = out.group
    for g in range(tab.g_q.shape[0]):
        qg, qdg = _group_state(tab, g, q, v, sc)
        if screen and group_clear_nb(tab, g, qg, qdg, band, lookahead, sc):
            continue
        group_rows_with_drift_nb(tab, g, qg, qdg, band, lookahead, sc)
        for k in range(3):
            if sc.active[k]:
                _start_row(out, count, 2 * ns + 3 * g + k, sc.gap[k], sc.drift[k])
                for c in range(3):
                    out.jacobian[count, tab.g_v[g, c]] = sc.row[k, c]
                count += 1
    return count
