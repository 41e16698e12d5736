"""Range of motion of a ball joint in the swing plane, with twist limits (seed 003).

The swing range is a closed curve in the polar (φ, θ) plane of Fig. 2.3 (radius
θ, angle φ), through control points ("拘束点") with given tangents, each pair of
neighbours joined by a cubic Hermite segment (Eq. 3.6-3.15). We interpolate in
the Cartesian coordinates of that plane, ``s = θ (cos φ, sin φ)``, so the curve
closes around the centre without a wrap at φ = 360° and allows the shapes of
Fig. 3.2 that θ(φ) cannot describe. Tangents are given as the seed gives them,
``(dφ/dt, dθ/dt)`` per control point, and converted to the plane by the chain
rule, so the curve passes through each point with the seed's tangent.

Twist limits: a (min, max) per control point, linear along each segment on the
boundary (Eq. 3.16), and a centre range ψ_c used at θ = 0, blended towards the
boundary quadratically in θ/θ_lim (Eq. 3.17), θ_lim being where the ray from the
centre through the posture meets the boundary (the seed's Eq. 3.33 solves
φ(t) = φ_now for the same point).

Note on the printed seed: Eq. 3.8/3.13 print B = 3P₁ − 3P₀ − 2Ṗ₁ − Ṗ₀, which
gives the wrong end tangent; the Hermite form used here is B = 3P₁ − 3P₀ −
2Ṗ₀ − Ṗ₁. Eq. 3.17 as printed weights ψ_c by (θ/θ_lim)², which would put the
centre range on the boundary; the text says ψ_c belongs to θ = 0, so the
weights are swapped here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from humanoid_sim.limits.kernels import (
    contains_nb,
    line_roots_nb,
    nearest_nb,
    radial_hit_nb,
    twist_range_gradient_nb,
    twist_range_nb,
)

SAMPLES_PER_SEGMENT = 48  # dense samples used to bracket roots and nearest points


class BoundaryPoint(NamedTuple):
    """A point of the boundary curve.

    segment: index i of the segment from control point i to i+1 (mod n).
    t: curve parameter in [0, 1] within the segment.
    point: swing point on the curve [rad], shape (2,).
    distance: Euclidean distance in the swing plane to the query point [rad].
    """

    segment: int
    t: float
    point: np.ndarray
    distance: float


class TwistRange(NamedTuple):
    """Twist limits (ψ_min, ψ_max) [rad] at one swing point."""

    lower: float
    upper: float


def polar_to_plane(phi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Swing point(s) s = θ (cos φ, sin φ) [rad], shape (..., 2)."""
    phi = np.asarray(phi, dtype=float)
    theta = np.asarray(theta, dtype=float)
    return np.stack([theta * np.cos(phi), theta * np.sin(phi)], axis=-1)


def hermite_coefficients(p0: np.ndarray, p1: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Cubic coefficients (A, B, C, D) of P(t) = A t³ + B t² + C t + D (Eq. 3.6-3.10).

    p0, p1: end points, t0, t1: end tangents dP/dt, each shape (..., 2).
    Returns shape (..., 4, 2).
    """
    A = 2.0 * p0 - 2.0 * p1 + t0 + t1
    B = 3.0 * p1 - 3.0 * p0 - 2.0 * t0 - t1  # (seed prints -2 t1 - t0: a typo)
    return np.stack([A, B, t0, p0], axis=-2)


def _segments_intersect(p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Whether segments p→q and r→s properly intersect, broadcast over leading axes."""

    def orient(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])

    d1, d2 = orient(r, s, p), orient(r, s, q)
    d3, d4 = orient(p, q, r), orient(p, q, s)
    return (d1 * d2 < 0.0) & (d3 * d4 < 0.0)


@dataclass(frozen=True)
class SwingBoundary:
    """A closed swing range with twist limits, validated on construction.

    name: the group name, used in error messages.
    phi, theta: control points, azimuth and swing [rad], shape (n,), n >= 3,
        0 < θ < π, in order around the centre (either sense).
    phi_rate, theta_rate: tangents dφ/dt, dθ/dt [rad per unit parameter] at the
        control points, shape (n,); NaN entries get Catmull-Rom tangents in the
        plane.
    twist_lower, twist_upper: twist limits at the control points [rad], (n,).
    centre_twist: (lower, upper) twist limits at θ = 0 [rad].

    Raises ValueError naming the group for: fewer than 3 points, θ outside
    (0, π), a self-crossing curve, a curve not enclosing the centre, and a
    twist lower limit above its upper limit.
    """

    name: str
    phi: np.ndarray
    theta: np.ndarray
    phi_rate: np.ndarray
    theta_rate: np.ndarray
    twist_lower: np.ndarray
    twist_upper: np.ndarray
    centre_twist: tuple[float, float]
    coefficients: np.ndarray = field(init=False, repr=False)  # (n, 4, 2)
    samples: np.ndarray = field(init=False, repr=False)  # (n, S + 1, 2)
    # (n, 6): each segment's samples' x_min, x_max, y_min, y_max, and bounds on how far P_x and P_y
    # move between neighbouring samples (max |P'| over the segment / S)
    boxes: np.ndarray = field(init=False, repr=False)
    orientation: float = field(init=False)  # +1 counter-clockwise, -1 clockwise

    def __post_init__(self) -> None:
        arrays = {}
        for key in ("phi", "theta", "phi_rate", "theta_rate", "twist_lower", "twist_upper"):
            arrays[key] = np.array(getattr(self, key), dtype=float).reshape(-1)
        n = arrays["phi"].size
        if n < 3:
            raise ValueError(f"range of motion {self.name!r}: needs at least 3 control points, got {n}")
        for key, arr in arrays.items():
            if arr.size != n:
                raise ValueError(f"range of motion {self.name!r}: {key} has {arr.size} entries, expected {n}")
        theta = arrays["theta"]
        if np.any(theta <= 0.0) or np.any(theta >= np.pi):
            bad = int(np.flatnonzero((theta <= 0.0) | (theta >= np.pi))[0])
            raise ValueError(
                f"range of motion {self.name!r}: control point {bad} has swing θ = "
                f"{np.degrees(theta[bad]):.1f} deg, must be in (0, 180) deg"
            )
        lo, hi = arrays["twist_lower"], arrays["twist_upper"]
        if np.any(lo > hi):
            bad = int(np.flatnonzero(lo > hi)[0])
            raise ValueError(
                f"range of motion {self.name!r}: control point {bad} has twist min "
                f"{np.degrees(lo[bad]):.1f} deg > twist max {np.degrees(hi[bad]):.1f} deg"
            )
        c_lo, c_hi = (float(x) for x in self.centre_twist)
        if c_lo > c_hi:
            raise ValueError(
                f"range of motion {self.name!r}: centre twist min {np.degrees(c_lo):.1f} deg "
                f"> centre twist max {np.degrees(c_hi):.1f} deg"
            )
        for key, arr in arrays.items():
            arr.setflags(write=False)
            object.__setattr__(self, key, arr)
        object.__setattr__(self, "centre_twist", (c_lo, c_hi))

        points = polar_to_plane(arrays["phi"], theta)
        tangents = self._plane_tangents(points)
        nxt = np.roll(np.arange(n), -1)
        coeffs = hermite_coefficients(points, points[nxt], tangents, tangents[nxt])
        ts = np.linspace(0.0, 1.0, SAMPLES_PER_SEGMENT + 1)
        powers = np.stack([ts**3, ts**2, ts, np.ones_like(ts)], axis=-1)  # (S+1, 4)
        samples = np.einsum("sk,nkd->nsd", powers, coeffs)
        # the shared end point of neighbouring segments must be bit-identical,
        # otherwise a root exactly at a control point is counted twice or never
        samples[:, -1] = samples[nxt, 0]
        # the kernels skip the segments a line or a query point provably misses by their boxes,
        # and the roots whose side is decided within their interval by how far P moves there
        move = (3.0 * np.abs(coeffs[:, 0]) + 2.0 * np.abs(coeffs[:, 1]) + np.abs(coeffs[:, 2])) / SAMPLES_PER_SEGMENT
        boxes = np.stack([samples[..., 0].min(axis=1), samples[..., 0].max(axis=1), samples[..., 1].min(axis=1),
                          samples[..., 1].max(axis=1), move[:, 0], move[:, 1]], axis=-1)  # fmt: skip
        for arr in (coeffs, samples, boxes):
            arr.setflags(write=False)
        object.__setattr__(self, "coefficients", coeffs)
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "boxes", boxes)

        poly = samples[:, :-1].reshape(-1, 2)
        area = 0.5 * np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
        object.__setattr__(self, "orientation", 1.0 if area > 0.0 else -1.0)
        self._check_simple(poly)
        if not self.contains(np.zeros(2)):
            raise ValueError(
                f"range of motion {self.name!r}: the boundary does not enclose the reference "
                "posture θ = 0 (control points must go around the centre)"
            )

    # --- construction helpers -------------------------------------------------
    def _plane_tangents(self, points: np.ndarray) -> np.ndarray:
        """Plane tangents dP/dt from the seed's (dφ/dt, dθ/dt) by the chain rule."""
        phi, theta = self.phi, self.theta
        dphi, dtheta = self.phi_rate, self.theta_rate
        # s = θ (cos φ, sin φ): ds = (cos φ dθ - θ sin φ dφ, sin φ dθ + θ cos φ dφ)
        tangents = np.stack(
            [np.cos(phi) * dtheta - theta * np.sin(phi) * dphi, np.sin(phi) * dtheta + theta * np.cos(phi) * dphi],
            axis=-1,
        )
        catmull_rom = 0.5 * (np.roll(points, -1, axis=0) - np.roll(points, 1, axis=0))
        missing = np.isnan(dphi) | np.isnan(dtheta)
        tangents[missing] = catmull_rom[missing]
        return tangents

    def _check_simple(self, poly: np.ndarray) -> None:
        """Raise if the dense polyline of the curve crosses itself."""
        m = poly.shape[0]
        a, b = poly, np.roll(poly, -1, axis=0)
        hit = _segments_intersect(a[:, None], b[:, None], a[None, :], b[None, :])
        idx = np.arange(m)
        gap = np.abs(idx[:, None] - idx[None, :])
        hit &= (gap > 1) & (gap < m - 1)  # neighbours share an end point
        if np.any(hit):
            i = int(np.argwhere(hit)[0, 0]) // SAMPLES_PER_SEGMENT
            raise ValueError(
                f"range of motion {self.name!r}: the boundary crosses itself "
                f"(segment {i} from control point {i} to {(i + 1) % self.n_points}); "
                "reorder the control points or shorten their tangents"
            )

    # --- evaluation -------------------------------------------------------------
    @property
    def n_points(self) -> int:
        return int(self.phi.size)

    def point(self, segment: int, t: float) -> np.ndarray:
        """Boundary point P_i(t) [rad], shape (2,) (Eq. 3.6, 3.11)."""
        C = self.coefficients[segment]
        return ((C[0] * t + C[1]) * t + C[2]) * t + C[3]

    def tangent(self, segment: int, t: float) -> np.ndarray:
        """dP_i/dt [rad per unit parameter], shape (2,)."""
        C = self.coefficients[segment]
        return (3.0 * C[0] * t + 2.0 * C[1]) * t + C[2]

    def _line_roots(self, normal: np.ndarray, offset: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All curve points with normal · P(t) = offset: (segments, t, points (r, 2))."""
        cap = 3 * self.n_points * SAMPLES_PER_SEGMENT
        seg, t, pts = np.empty(cap, dtype=np.int64), np.empty(cap), np.empty((cap, 2))
        count = line_roots_nb(
            self.coefficients, self.samples, self.boxes, float(normal[0]), float(normal[1]), float(offset), seg, t, pts
        )
        return seg[:count], t[:count], pts[:count]

    def contains(self, s: np.ndarray) -> bool:
        """Whether swing point ``s`` (2,) lies inside the range (Eq. 3.28-3.33).

        The seed intersects the segment from the previous posture with the curve;
        a segment from ``s`` to far outside (the ray +x) crossing the curve an odd
        number of times is the stateless form of the same test.
        """
        return bool(contains_nb(self.coefficients, self.samples, self.boxes, float(s[0]), float(s[1])))

    def crossing(self, s_from: np.ndarray, s_to: np.ndarray) -> BoundaryPoint | None:
        """First boundary crossing of the straight move s_from → s_to (Eq. 3.28-3.32).

        The line through both postures, substituted into the cubic segments,
        gives one cubic in t per segment (Eq. 3.32); the root nearest to
        ``s_from`` along the move is returned, None if the move does not cross.
        ``distance`` is the distance from ``s_from``.
        """
        p0 = np.asarray(s_from, dtype=float)
        step = np.asarray(s_to, dtype=float) - p0
        length2 = float(step @ step)
        if length2 == 0.0:
            return None
        normal = np.array([-step[1], step[0]])
        seg, t, pts = self._line_roots(normal, normal @ p0)
        if seg.size == 0:
            return None
        along = (pts - p0) @ step / length2
        ok = (along >= 0.0) & (along <= 1.0)
        if not np.any(ok):
            return None
        j = int(np.flatnonzero(ok)[np.argmin(along[ok])])
        return BoundaryPoint(int(seg[j]), float(t[j]), pts[j], float(np.sqrt(length2) * along[j]))

    def nearest(self, s: np.ndarray) -> BoundaryPoint:
        """Boundary point nearest to ``s`` in the swing plane (the seed's 近傍姿勢, 3.4).

        Global: the nearest dense sample, then Newton on (P(t) - s)·P'(t) = 0.
        """
        s = np.asarray(s, dtype=float)
        seg, t = nearest_nb(self.coefficients, self.samples, self.boxes, float(s[0]), float(s[1]))
        p = self.point(seg, t)
        return BoundaryPoint(int(seg), float(t), p, float(np.linalg.norm(p - s)))

    def outward_normal(self, segment: int, t: float) -> np.ndarray:
        """Unit outward normal of the curve at P_i(t), shape (2,)."""
        d = self.tangent(segment, t)
        n = self.orientation * np.array([d[1], -d[0]])
        return n / np.linalg.norm(n)

    def radial_hit(self, s: np.ndarray) -> BoundaryPoint:
        """Where the ray from the centre through ``s`` leaves the range (θ_lim, Eq. 3.33).

        The first hit at radius >= |s| (the boundary just outside the posture);
        ``distance`` is the hit's radius θ_lim [rad]. For s at the centre the
        ray is +x.
        """
        seg, t, radius = radial_hit_nb(self.coefficients, self.samples, self.boxes, float(s[0]), float(s[1]))
        return BoundaryPoint(int(seg), float(t), self.point(seg, t), float(radius))

    def boundary_twist(self, segment: int, t: float) -> TwistRange:
        """Twist limits on the boundary, linear along the segment (Eq. 3.16)."""
        j = (segment + 1) % self.n_points
        lower = (1.0 - t) * self.twist_lower[segment] + t * self.twist_lower[j]
        upper = (1.0 - t) * self.twist_upper[segment] + t * self.twist_upper[j]
        return TwistRange(float(lower), float(upper))

    def twist_range(self, s: np.ndarray) -> TwistRange:
        """Twist limits [rad] at swing point ``s`` (2,).

        Inside: blend from the centre range (θ = 0) to the boundary range where
        the ray through ``s`` leaves, weight (θ/θ_lim)² (Eq. 3.17, weights as the
        text defines them). Outside: the range at the nearest boundary point
        (seed 3.3, last paragraph).
        """
        lo, hi = twist_range_nb(
            self.coefficients, self.samples, self.boxes, self.twist_lower, self.twist_upper,
            self.centre_twist[0], self.centre_twist[1], float(s[0]), float(s[1]),
        )
        return TwistRange(lo, hi)

    def twist_range_gradient(self, s: np.ndarray, h: float = 1e-6) -> np.ndarray:
        """Rows (∂ψ_min/∂s, ∂ψ_max/∂s) by central differences, shape (2, 2)."""
        return twist_range_gradient_nb(
            self.coefficients, self.samples, self.boxes, self.twist_lower, self.twist_upper,
            self.centre_twist[0], self.centre_twist[1], float(s[0]), float(s[1]), h,
        )
