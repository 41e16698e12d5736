"""Hermite boundary in the polar swing plane (seed 003, Eq. 3.6-3.17, 3.28-3.33)."""

import numpy as np
import pytest

from humanoid_sim.limits.swing_boundary import SwingBoundary, polar_to_plane

DEG = np.pi / 180


def square(half_diagonal=1.0, tangents=None, twist=((-0.2, 0.2),) * 4, centre=(-1.0, 1.0)):
    """A square with corners on the axes; zero tangents make Hermite segments straight."""
    phi = np.array([0.0, 90.0, 180.0, 270.0]) * DEG
    theta = np.full(4, half_diagonal)
    rates = np.zeros((4, 2)) if tangents is None else tangents
    tw = np.array(twist)
    return SwingBoundary("square", phi, theta, rates[:, 0], rates[:, 1], tw[:, 0], tw[:, 1], centre)


def shoulder_like():
    """Far forward (φ = 0), little backward (φ = 180°), Catmull-Rom tangents."""
    phi = np.arange(8) * 45.0 * DEG
    theta = np.array([165, 160, 160, 80, 50, 35, 25, 90]) * DEG
    nan = np.full(8, np.nan)
    tw = np.linspace(0.3, 1.0, 8)
    return SwingBoundary("shoulder", phi, theta, nan, nan, -tw, tw, (-1.4, 1.4))


def test_curve_passes_through_control_points_with_given_tangents(rng):
    n = 6
    phi = np.sort(rng.uniform(0, 2 * np.pi, n))
    theta = rng.uniform(0.8, 1.2, n)
    dphi = rng.uniform(0.5, 1.0, n)  # counter-clockwise, as the points run
    dtheta = rng.uniform(-0.2, 0.2, n)
    b = SwingBoundary("random", phi, theta, dphi, dtheta, np.full(n, -0.1), np.full(n, 0.1), (-0.5, 0.5))
    h = 1e-6
    for i in range(n):
        j = (i + 1) % n
        np.testing.assert_allclose(b.point(i, 0.0), polar_to_plane(phi[i], theta[i]), atol=1e-14)
        np.testing.assert_allclose(b.point(i, 1.0), polar_to_plane(phi[j], theta[j]), atol=1e-14)
        # the seed's tangent (dφ/dt, dθ/dt) at both ends of each segment, in polar coordinates
        for seg, t, k in ((i, 0.0, i), (i, 1.0, j)):
            t0, t1 = (t, t + h) if t == 0.0 else (t - h, t)
            p0, p1 = b.point(seg, t0), b.point(seg, t1)
            r0, r1 = np.linalg.norm(p0), np.linalg.norm(p1)
            a0, a1 = np.arctan2(p0[1], p0[0]), np.arctan2(p1[1], p1[0])
            da = (a1 - a0 + np.pi) % (2 * np.pi) - np.pi
            assert da / h == pytest.approx(dphi[k], abs=1e-5)
            assert (r1 - r0) / h == pytest.approx(dtheta[k], abs=1e-5)


def test_catmull_rom_tangents_are_continuous():
    b = shoulder_like()
    for i in range(b.n_points):
        np.testing.assert_allclose(b.tangent(i, 1.0), b.tangent((i + 1) % b.n_points, 0.0), atol=1e-12)


def test_zero_tangents_give_straight_segments():
    b = square()
    for t in np.linspace(0, 1, 11):
        p = b.point(0, t)
        assert p[0] + p[1] == pytest.approx(1.0)  # on the edge x + y = 1


def test_inside_outside_known_points():
    b = square()
    inside = [(0, 0), (0.49, 0.49), (0.99, 0.0), (-0.3, 0.6), (0.0, -0.999)]
    outside = [(0.51, 0.51), (1.01, 0.0), (-0.6, -0.6), (0.0, 1.2), (2.0, 2.0)]
    assert all(b.contains(np.array(p, float)) for p in inside)
    assert not any(b.contains(np.array(p, float)) for p in outside)
    # a ray through a control point (y = 0 passes corner (1, 0) and (-1, 0)) counts once
    assert b.contains(np.array([0.5, 0.0])) and not b.contains(np.array([1.5, 0.0]))


def test_inside_outside_shoulder_front_wide_back_narrow():
    b = shoulder_like()
    assert b.contains(polar_to_plane(0.0, 150 * DEG))  # arm far forward
    assert not b.contains(polar_to_plane(np.pi, 60 * DEG))  # same lean backward
    assert b.contains(polar_to_plane(np.pi, 45 * DEG))
    assert not b.contains(polar_to_plane(np.pi / 2, 165 * DEG))


def test_crossing_of_a_move_with_the_boundary():
    b = square()
    hit = b.crossing(np.array([0.0, 0.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(hit.point, [0.5, 0.5], atol=1e-12)
    assert hit.distance == pytest.approx(np.sqrt(0.5))
    assert b.crossing(np.array([0.0, 0.0]), np.array([0.2, 0.1])) is None
    # in and out again (Fig. 3.3 B): the first crossing from the start is reported
    hit = b.crossing(np.array([-2.0, 0.5]), np.array([2.0, 0.5]))
    np.testing.assert_allclose(hit.point, [-0.5, 0.5], atol=1e-12)


def test_nearest_boundary_point_of_square():
    b = square()
    for s, expect in (((1.0, 1.0), (0.5, 0.5)), ((0.1, 0.1), (0.5, 0.5)), ((2.0, 0.0), (1.0, 0.0))):
        near = b.nearest(np.array(s))
        np.testing.assert_allclose(near.point, expect, atol=1e-9)
        assert near.distance == pytest.approx(np.linalg.norm(np.subtract(s, expect)), abs=1e-9)


def test_nearest_point_on_smooth_curve_is_a_foot_of_perpendicular(rng):
    b = shoulder_like()
    for _ in range(50):
        s = rng.uniform(-3, 3, 2)
        near = b.nearest(s)
        dense = np.array([b.point(i, t) for i in range(b.n_points) for t in np.linspace(0, 1, 400)])
        assert near.distance <= np.min(np.linalg.norm(dense - s, axis=1)) + 1e-9
        if 0.0 < near.t < 1.0:
            assert abs((near.point - s) @ b.tangent(near.segment, near.t)) < 1e-9


def test_twist_limits_on_boundary_are_linear_between_points():  # Eq. 3.16
    b = square(twist=((-0.1, 0.1), (-0.3, 0.5), (-0.2, 0.2), (-0.2, 0.2)))
    for t in (0.0, 0.25, 0.6, 1.0):
        lo, hi = b.boundary_twist(0, t)
        assert lo == pytest.approx((1 - t) * -0.1 + t * -0.3)
        assert hi == pytest.approx((1 - t) * 0.1 + t * 0.5)
    # a point exactly on the boundary gets the boundary value (weight 1)
    p = b.point(0, 0.6)
    lo, hi = b.twist_range(p * (1 - 1e-12))
    assert hi == pytest.approx(0.4 * 0.1 + 0.6 * 0.5, abs=1e-9)


def test_twist_limits_blend_quadratically_to_the_centre():  # Eq. 3.17 (weights as the text defines)
    b = square(twist=((-0.2, 0.2),) * 4, centre=(-1.0, 1.2))
    assert b.twist_range(np.zeros(2)) == pytest.approx((-1.0, 1.2))
    # half way to the corner (1, 0): θ/θ_lim = 1/2 -> weight 1/4 on the boundary value
    lo, hi = b.twist_range(np.array([0.5, 0.0]))
    assert lo == pytest.approx(0.75 * -1.0 + 0.25 * -0.2)
    assert hi == pytest.approx(0.75 * 1.2 + 0.25 * 0.2)
    # towards the edge midpoint (0.5, 0.5): θ_lim = |(0.5, 0.5)|
    s = np.array([0.5, 0.5]) * 0.8
    lo, hi = b.twist_range(s)
    assert hi == pytest.approx(0.36 * 1.2 + 0.64 * 0.2)
    # outside: the nearest boundary point's range
    assert b.twist_range(np.array([3.0, 0.0])) == pytest.approx((-0.2, 0.2))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(phi=[0.0, 1.0], theta=[1.0, 1.0]), "at least 3 control points"),
        (dict(theta=[1.0, 1.0, 4.0, 1.0]), "must be in \\(0, 180\\) deg"),
        (dict(twist_lower=[0.0, 0.5, 0.0, 0.0], twist_upper=[0.1, 0.2, 0.1, 0.1]), "twist min .* > twist max"),
        (dict(centre_twist=(0.3, -0.3)), "centre twist min"),
        (dict(phi=[0.0, np.pi, np.pi / 2, 3 * np.pi / 2]), "crosses itself"),
        (dict(phi=[0.1, 0.3, 0.5, 0.7]), "does not enclose"),
    ],
)
def test_invalid_boundaries_raise_one_clear_error(kwargs, message):
    args = dict(
        name="bad",
        phi=np.array([0, 90, 180, 270]) * DEG,
        theta=[1.0] * 4,
        phi_rate=[np.nan] * 4,
        theta_rate=[np.nan] * 4,
        twist_lower=[-0.1] * 4,
        twist_upper=[0.1] * 4,
        centre_twist=(-0.2, 0.2),
    )
    args.update(kwargs)
    n = len(args["phi"])
    for key in ("theta", "phi_rate", "theta_rate", "twist_lower", "twist_upper"):
        if len(args[key]) != n:
            args[key] = args[key][:n]
    with pytest.raises(ValueError, match=message) as err:
        SwingBoundary(**args)
    assert "'bad'" in str(err.value)


def test_segment_boxes_skip_nothing_that_counts(rng):
    """The kernels skip segments by their boxes and leave roots unrefined whose side their
    interval decides (limits.kernels may_cross_nb, nearest_sample_nb, root_side_nb): the
    answers are those of the full search to the last bit (boxes that decide nothing: infinite)."""
    from humanoid_sim.limits import kernels as K

    for b in (shoulder_like(), square(), square(tangents=np.full((4, 2), 0.7))):
        c, s = b.coefficients, b.samples
        box, full = b.boxes, np.tile([-np.inf, np.inf, -np.inf, np.inf, np.inf, np.inf], (len(c), 1))
        cap = 3 * s.shape[0] * s.shape[1]
        buffers = [(np.empty(cap, np.int64), np.empty(cap), np.empty((cap, 2))) for _ in range(2)]
        lo, hi, (c_lo, c_hi) = b.twist_lower, b.twist_upper, b.centre_twist
        for _ in range(400):
            sx, sy = rng.normal(0.0, 1.5, 2)
            nx, ny = rng.normal(size=2)
            for k in (K.contains_nb, K.nearest_nb, K.radial_hit_nb):
                assert k(c, s, box, sx, sy) == k(c, s, full, sx, sy)
            assert K.twist_range_nb(c, s, box, lo, hi, c_lo, c_hi, sx, sy) == K.twist_range_nb(
                c, s, full, lo, hi, c_lo, c_hi, sx, sy
            )
            offset = nx * sx + ny * sy
            counts = [K.line_roots_nb(c, s, bx, nx, ny, offset, *buf) for bx, buf in zip((box, full), buffers)]
            assert counts[0] == counts[1]
            for a, f in zip(*buffers):
                np.testing.assert_array_equal(a[: counts[0]], f[: counts[0]])
        # the shortcut was taken: some segments lie off a line
        assert sum(K.may_cross_nb(box, i, 0.0, 1.0, 0.3) for i in range(len(c))) < len(c)
