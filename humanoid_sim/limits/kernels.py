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


@njit(cache=True)
def quat_from_matrix_nb(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) with w >= 0 of a rotation matrix (Shepperd)."""
    m = R
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        r = np.sqrt(1.0 + tr) * 2.0
        q = np.array([0.25 * r, (m[2, 1] - m[1, 2]) / r, (m[0, 2] - m[2, 0]) / r, (m[1, 0] - m[0, 1]) / r])
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        r = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        q = np.array([(m[2, 1] - m[1, 2]) / r, 0.25 * r, (m[0, 1] + m[1, 0]) / r, (m[0, 2] + m[2, 0]) / r])
    elif m[1, 1] > m[2, 2]:
        r = np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        q = np.array([(m[0, 2] - m[2, 0]) / r, (m[0, 1] + m[1, 0]) / r, 0.25 * r, (m[1, 2] + m[2, 1]) / r])
    else:
        r = np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        q = np.array([(m[1, 0] - m[0, 1]) / r, (m[0, 2] + m[2, 0]) / r, (m[1, 2] + m[2, 1]) / r, 0.25 * r])
    q /= np.linalg.norm(q)
    return q if q[0] >= 0.0 else -q


@njit(cache=True)
def axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` [rad] about the unit ``axis`` (3,) (Rodrigues)."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    return np.array(
        [
            [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
        ]
    )


@njit(cache=True)
def matmul3_nb(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B for 3x3 matrices without the BLAS call overhead."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True)
def matvec3_nb(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A @ x for a 3x3 matrix and a 3-vector without the BLAS call overhead."""
    return np.array(
        [
            A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2],
            A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2],
            A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2],
        ]
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
    k, _ = k_and_dk_nb(theta, np.sqrt(max(0.0, 1.0 - c * c)))
    s0 = k * (d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2])
    s1 = k * (d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2])
    phi = np.arctan2(s1, s0) if theta > 0.0 else 0.0
    q = quat_from_matrix_nb(R_rel)
    psi = 2.0 * np.arctan2(q[1] * a[0] + q[2] * a[1] + q[3] * a[2], q[0])
    psi = (psi + np.pi) % (2.0 * np.pi) - np.pi  # wrap to (-π, π]
    if psi == -np.pi:
        psi = np.pi
    return phi, theta, psi, s0, s1


@njit(cache=True)
def swing_twist_rates_nb(R_rel, a, e1, e2):  # pragma: no cover - compiled
    """(G_swing (2, 3), g_twist (3,)); see ``swing_twist_rates``."""
    d = matvec3_nb(R_rel, a)
    c = min(1.0, max(-1.0, d[0] * a[0] + d[1] * a[1] + d[2] * a[2]))
    sin_t = np.sqrt(max(0.0, 1.0 - c * c))
    theta = np.arccos(c)
    k, dk_over_sin = k_and_dk_nb(theta, sin_t)
    # s = k(θ) E d with E = [e1; e2], θ = acos(d·a): ∂s/∂d = k E - u (dk/dθ / sin θ) aᵀ, u = E d
    # dd/dt = ω × d = -[d]× ω, so G_swing = -∂s/∂d [d]×; row i of ∂s/∂d is r_i:
    # -(r_i [d]×) ω = -r_i · (d × ω) = (d × r_i) · ω
    G_swing = np.empty((2, 3))
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
    w, v = q[0], q[1:]
    va = v[0] * a[0] + v[1] * a[1] + v[2] * a[2]
    v_cross_a = np.array([v[1] * a[2] - v[2] * a[1], v[2] * a[0] - v[0] * a[2], v[0] * a[1] - v[1] * a[0]])
    # q̇ = ½ (0, ω) ⊗ q: ẇ = -½ ω·v, v̇ = ½ (w ω + ω × v); ψ = 2 atan2(v·a, w)
    g_twist = (w * (w * a + v_cross_a) + va * v) / (w * w + va * va)
    return G_swing, g_twist


@njit(cache=True)
def line_roots_nb(coeffs, samples, nx, ny, offset, out_seg, out_t, out_p):  # pragma: no cover - compiled
    """Roots of nx P_x(t) + ny P_y(t) - offset on every segment; returns their count.

    Brackets are sign changes of the value at the dense samples, with the
    half-open rule (value > 0) so a root at a shared sample counts once; each
    bracket is refined by bisection to 1e-14 in t. out_p receives P(t).
    """
    n, m = samples.shape[0], samples.shape[1]
    h = 1.0 / (m - 1)
    count = 0
    for i in range(n):
        a = nx * coeffs[i, 0, 0] + ny * coeffs[i, 0, 1]
        b = nx * coeffs[i, 1, 0] + ny * coeffs[i, 1, 1]
        c = nx * coeffs[i, 2, 0] + ny * coeffs[i, 2, 1]
        d = nx * coeffs[i, 3, 0] + ny * coeffs[i, 3, 1] - offset
        prev = nx * samples[i, 0, 0] + ny * samples[i, 0, 1] - offset > 0.0
        for k in range(1, m):
            cur = nx * samples[i, k, 0] + ny * samples[i, k, 1] - offset > 0.0
            if cur != prev:
                lo, hi = (k - 1) * h, k * h
                for _ in range(48):
                    mid = 0.5 * (lo + hi)
                    if (((a * mid + b) * mid + c) * mid + d > 0.0) == prev:
                        lo = mid
                    else:
                        hi = mid
                t = 0.5 * (lo + hi)
                out_seg[count] = i
                out_t[count] = t
                for j in range(2):
                    out_p[count, j] = ((coeffs[i, 0, j] * t + coeffs[i, 1, j]) * t + coeffs[i, 2, j]) * t + coeffs[i, 3, j]
                count += 1
            prev = cur
    return count


@njit(cache=True)
def contains_nb(coeffs, samples, sx, sy):  # pragma: no cover - compiled
    """Crossing-number test: the ray from (sx, sy) towards +x crosses the curve an odd number of times."""
    cap = 3 * samples.shape[0] * samples.shape[1]
    seg, t, p = np.empty(cap, np.int64), np.empty(cap), np.empty((cap, 2))
    count = line_roots_nb(coeffs, samples, 0.0, 1.0, sy, seg, t, p)
    crossings = 0
    for r in range(count):
        if p[r, 0] > sx:
            crossings += 1
    return crossings % 2 == 1


@njit(cache=True)
def radial_hit_nb(coeffs, samples, sx, sy):  # pragma: no cover - compiled
    """(segment, t, radius) where the ray from the centre through s meets the curve.

    The hit of smallest radius >= |s|; if none (s beyond every hit), the
    farthest hit. For s at the centre the ray is +x.
    """
    r = np.sqrt(sx * sx + sy * sy)
    ux, uy = (sx / r, sy / r) if r > 1e-12 else (1.0, 0.0)
    cap = 3 * samples.shape[0] * samples.shape[1]
    seg, t, p = np.empty(cap, np.int64), np.empty(cap), np.empty((cap, 2))
    count = line_roots_nb(coeffs, samples, -uy, ux, 0.0, seg, t, p)
    best, far = -1, -1
    best_r, far_r = np.inf, 0.0
    for k in range(count):
        radius = p[k, 0] * ux + p[k, 1] * uy
        if radius <= 0.0:
            continue
        if radius >= r - 1e-12 and radius < best_r:
            best, best_r = k, radius
        if radius > far_r:
            far, far_r = k, radius
    if best < 0:
        best, best_r = far, far_r
    if best < 0:  # no hit at all: cannot happen for a curve around the centre
        return 0, 0.0, np.inf
    return seg[best], t[best], best_r


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
def nearest_nb(coeffs, samples, sx, sy):  # pragma: no cover - compiled
    """(segment, t) of the curve point nearest to (sx, sy).

    The nearest dense sample, then Newton in its segment; when Newton stops at
    a segment end, the neighbouring segment is searched from the shared point.
    """
    n, m = samples.shape[0], samples.shape[1]
    best, bi, bk = np.inf, 0, 0
    for i in range(n):
        for k in range(m):
            dx, dy = samples[i, k, 0] - sx, samples[i, k, 1] - sy
            d2 = dx * dx + dy * dy
            if d2 < best:
                best, bi, bk = d2, i, k
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
def twist_range_nb(coeffs, samples, lower, upper, c_lo, c_hi, sx, sy):  # pragma: no cover - compiled
    """(ψ_min, ψ_max) at (sx, sy): Eq. 3.16 on the boundary, Eq. 3.17 inside, nearest point outside."""
    n = lower.shape[0]
    if contains_nb(coeffs, samples, sx, sy):
        seg, t, radius = radial_hit_nb(coeffs, samples, sx, sy)
        w = min(1.0, np.sqrt(sx * sx + sy * sy) / radius) ** 2
    else:
        seg, t = nearest_nb(coeffs, samples, sx, sy)
        w = 1.0
    j = (seg + 1) % n
    b_lo = (1.0 - t) * lower[seg] + t * lower[j]
    b_hi = (1.0 - t) * upper[seg] + t * upper[j]
    return (1.0 - w) * c_lo + w * b_lo, (1.0 - w) * c_hi + w * b_hi


@njit(cache=True)
def twist_range_gradient_nb(coeffs, samples, lower, upper, c_lo, c_hi, sx, sy, h):  # pragma: no cover - compiled
    out = np.empty((2, 2))
    for i in range(2):
        dx, dy = (h, 0.0) if i == 0 else (0.0, h)
        lo_p, hi_p = twist_range_nb(coeffs, samples, lower, upper, c_lo, c_hi, sx + dx, sy + dy)
        lo_m, hi_m = twist_range_nb(coeffs, samples, lower, upper, c_lo, c_hi, sx - dx, sy - dy)
        out[0, i] = (lo_p - lo_m) / (2.0 * h)
        out[1, i] = (hi_p - hi_m) / (2.0 * h)
    return out


@njit(cache=True)
def group_rows_nb(
    R_zero, axes, R_reference, a, e1, e2, coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, orientation, q, qd, band,
    lookahead, gap, row, active,
):  # pragma: no cover - compiled
    """Gaps, rows (d gap/dt per joint rate) and activity of swing / twist upper / twist lower."""
    R_rel, J = group_rotation_nb(R_zero, axes, R_reference, q)
    _, _, psi, sx, sy = swing_twist_angles_nb(R_rel, a, e1, e2)
    G_swing, g_twist = swing_twist_rates_nb(R_rel, a, e1, e2)
    # swing (Eq. 3.34): along the swing-plane direction to the nearest boundary posture
    inside = contains_nb(coeffs, samples, sx, sy)
    seg, t = nearest_nb(coeffs, samples, sx, sy)
    C = coeffs[seg]
    px = ((C[0, 0] * t + C[1, 0]) * t + C[2, 0]) * t + C[3, 0]
    py = ((C[0, 1] * t + C[1, 1]) * t + C[2, 1]) * t + C[3, 1]
    dist = np.sqrt((px - sx) ** 2 + (py - sy) ** 2)
    gap[0] = dist if inside else -dist
    if dist > 1e-9:
        sign = -1.0 if inside else 1.0
        nx, ny = sign * (sx - px) / dist, sign * (sy - py) / dist
    else:  # on the curve: the outward normal of its tangent
        tx = (3.0 * C[0, 0] * t + 2.0 * C[1, 0]) * t + C[2, 0]
        ty = (3.0 * C[0, 1] * t + 2.0 * C[1, 1]) * t + C[2, 1]
        norm = np.sqrt(tx * tx + ty * ty)
        nx, ny = orientation * ty / norm, -orientation * tx / norm
    axis = -(nx * G_swing[0] + ny * G_swing[1])  # d gap/dt per ω_rel
    row[0] = matvec3_nb(J.T, axis)
    # twist (Eq. 3.35), including the motion of the interpolated limit itself
    lo, hi = twist_range_nb(coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, sx, sy)
    gap[1] = hi - psi
    gap[2] = psi - lo
    # the limit's own gradient costs 4 boundary evaluations: skip it when neither twist
    # row can become active, bounding its rate by TWIST_LIMIT_SLOPE_CAP |ds/dt|
    w_rel = matvec3_nb(J, qd)
    psi_rate = abs(g_twist[0] * w_rel[0] + g_twist[1] * w_rel[1] + g_twist[2] * w_rel[2])
    sdx = G_swing[0, 0] * w_rel[0] + G_swing[0, 1] * w_rel[1] + G_swing[0, 2] * w_rel[2]
    sdy = G_swing[1, 0] * w_rel[0] + G_swing[1, 1] * w_rel[1] + G_swing[1, 2] * w_rel[2]
    s_rate = np.sqrt(sdx * sdx + sdy * sdy)
    reach = band + lookahead * (psi_rate + TWIST_LIMIT_SLOPE_CAP * s_rate)
    if min(gap[1], gap[2]) < reach or band == np.inf:
        grad = twist_range_gradient_nb(coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, sx, sy, 1e-6)
    else:
        grad = np.zeros((2, 2))
    row[1] = matvec3_nb(J.T, grad[1, 0] * G_swing[0] + grad[1, 1] * G_swing[1] - g_twist)
    row[2] = matvec3_nb(J.T, g_twist - grad[0, 0] * G_swing[0] - grad[0, 1] * G_swing[1])
    for k in range(3):
        # active when within the band now or, at the current rate, within the look-ahead time
        rate = row[k, 0] * qd[0] + row[k, 1] * qd[1] + row[k, 2] * qd[2]
        active[k] = gap[k] + lookahead * min(0.0, rate) < band


@njit(cache=True)
def group_rows_with_drift_nb(
    R_zero, axes, R_reference, a, e1, e2, coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, orientation, q, qd, band,
    lookahead, gap, row, drift, active,
):  # pragma: no cover - compiled
    group_rows_nb(R_zero, axes, R_reference, a, e1, e2, coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, orientation,
                   q, qd, band, lookahead, gap, row, active)
    drift[:] = 0.0
    speed = np.max(np.abs(qd))
    if speed == 0.0 or not (active[0] or active[1] or active[2]):
        return
    eps = 1e-6 / speed
    gap_p, row_p, act_p = np.empty(3), np.empty((3, 3)), np.empty(3, dtype=np.bool_)
    gap_m, row_m, act_m = np.empty(3), np.empty((3, 3)), np.empty(3, dtype=np.bool_)
    group_rows_nb(R_zero, axes, R_reference, a, e1, e2, coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, orientation,
                   q + eps * qd, qd, np.inf, 0.0, gap_p, row_p, act_p)
    group_rows_nb(R_zero, axes, R_reference, a, e1, e2, coeffs, samples, tw_lo, tw_hi, c_lo, c_hi, orientation,
                   q - eps * qd, qd, np.inf, 0.0, gap_m, row_m, act_m)
    for k in range(3):
        if active[k]:
            dr = row_p[k] - row_m[k]
            drift[k] = (dr[0] * qd[0] + dr[1] * qd[1] + dr[2] * qd[2]) / (2.0 * eps)


@njit(cache=True)
def group_rotation_nb(R_zero, axes, R_reference, q_group):  # pragma: no cover - compiled
    """(R_rel (3, 3), J_group (3, 3)) of a 3-revolute chain at joint angles q_group."""
    R = np.eye(3)
    J = np.empty((3, 3))
    for k in range(3):
        R = matmul3_nb(R, R_zero[k])
        J[:, k] = matvec3_nb(R, axes[k])  # axis of joint k in P (unchanged by its own rotation)
        R = matmul3_nb(R, axis_angle_matrix(axes[k], q_group[k]))
    return matmul3_nb(R, R_reference.T), J


@njit(cache=True)
def rows_screen_nb(
    q, v, stop_q, stop_v, stop_lower, stop_upper, band, lookahead,
    g_q, g_v, g_R_zero, g_axes, g_R_reference, g_a, g_e1, g_e2, g_n, g_samples, g_reach, g_lo_max, g_hi_min,
):  # pragma: no cover - compiled
    """True when provably no limit row is active at (q, v) (the cheap path of
    RangeOfMotionProvider.rows); False when some row may be active (then the exact rows).

    Stops: the exact test of ``evaluate``. Ball-joint groups: the swing
    gap is at least (distance to the nearest dense sample) - g_reach (bound on half the longest
    arc between neighbouring samples), and the twist range at any swing point contains
    [g_lo_max, g_hi_min] (Eq. 3.16-3.17 blend limits of the control points and the centre).
    With a look-ahead the band widens by what the rows' rates can close in that time, bounded
    as group_rows_nb bounds them: the swing row's rate by |ṡ|, the twist rows' by
    |ψ̇| + TWIST_LIMIT_SLOPE_CAP |ṡ|. g_q, g_v (G, 3): each group's joints' q and v indices
    (in a world of several trees they differ by more than nq - nv).
    Groups are padded to the largest control-point count; g_n holds each group's count.
    """
    for i in range(stop_q.shape[0]):
        qs = q[stop_q[i]]
        rate = v[stop_v[i]] * lookahead
        if stop_upper[i] - qs - max(rate, 0.0) < band or qs - stop_lower[i] + min(rate, 0.0) < band:
            return False
    ng = g_q.shape[0]
    if ng == 0:
        return True
    qg = np.empty(3)
    qdg = np.empty(3)
    for g in range(ng):
        for k in range(3):
            qg[k] = q[g_q[g, k]]
            qdg[k] = v[g_v[g, k]]
        R_rel, J = group_rotation_nb(g_R_zero[g], g_axes[g], g_R_reference[g], qg)
        _, _, psi, sx, sy = swing_twist_angles_nb(R_rel, g_a[g], g_e1[g], g_e2[g])
        swing_band = band
        twist_band = band
        if lookahead != 0.0:
            G_swing, g_twist = swing_twist_rates_nb(R_rel, g_a[g], g_e1[g], g_e2[g])
            w_rel = matvec3_nb(J, qdg)
            psi_rate = abs(g_twist[0] * w_rel[0] + g_twist[1] * w_rel[1] + g_twist[2] * w_rel[2])
            sdx = G_swing[0, 0] * w_rel[0] + G_swing[0, 1] * w_rel[1] + G_swing[0, 2] * w_rel[2]
            sdy = G_swing[1, 0] * w_rel[0] + G_swing[1, 1] * w_rel[1] + G_swing[1, 2] * w_rel[2]
            s_rate = np.sqrt(sdx * sdx + sdy * sdy)
            swing_band = band + lookahead * s_rate
            twist_band = band + lookahead * (psi_rate + TWIST_LIMIT_SLOPE_CAP * s_rate)
        if g_hi_min[g] - psi < twist_band or psi - g_lo_max[g] < twist_band:
            return False
        n = g_n[g]
        samples = g_samples[g, :n]
        best = np.inf
        for i in range(n):
            for k in range(samples.shape[1]):
                dx, dy = samples[i, k, 0] - sx, samples[i, k, 1] - sy
                d2 = dx * dx + dy * dy
                if d2 < best:
                    best = d2
        dmin = np.sqrt(best)
        if dmin - g_reach[g] < swing_band or not dmin > 2.0 * g_reach[g]:
            return False
        # inside (contains_nb) by the crossing parity of the sample polygon: the straight
        # homotopy between curve and polygon stays within 2 g_reach of the samples, so a
        # point farther away has the same winding number for both
        crossings = 0
        for i in range(n):
            for k in range(samples.shape[1] - 1):
                ax, ay = samples[i, k, 0], samples[i, k, 1]
                bx, by = samples[i, k + 1, 0], samples[i, k + 1, 1]
                if (ay > sy) != (by > sy):
                    if ax + (sy - ay) * (bx - ax) / (by - ay) > sx:
                        crossings += 1
        if crossings % 2 == 0:
            return False
    return True
