"""Contact areas and their virtual-link frames (seed 000, 4.2, Table 1, Fig. 2).

A ``ContactPatch`` (points of one body on one surface) is classified by the
number and geometry of its distinct points: one point -> POINT, collinear
points -> LINE, otherwise SURFACE with the convex hull of the points as the
contact area S_C (Table 1).

The virtual-link frame: z along the surface normal pointing out of the
environment (the parent side) into the body; for a LINE contact x along the
line (so that the free rotation is about x); otherwise x along the surface's
first tangent. Origin: the point (POINT), the middle of the segment (LINE), the
area centroid of the hull (SURFACE) -- a point of S_C, as 4.2 allows for
sticking contacts.

Coordinates ``xy`` are in the virtual-link frame relative to its origin [m].
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from humanoid_sim.contact import kernels
from humanoid_sim.contact.detection import ContactPatch


class ContactKind(enum.IntEnum):
    """Number of contact points class of Table 1 (seed 000)."""

    POINT = 1
    LINE = 2
    SURFACE = 3


class ContactArea(NamedTuple):
    """One classified contact with its virtual-link frame.

    patch: the detected points it came from.
    kind: POINT / LINE / SURFACE.
    R_world_vl: axes of the virtual link in the world (columns x, y, z), shape (3, 3).
    origin: virtual-link origin in the world [m], shape (3,).
    xy: the distinct contact points in the virtual-link frame, relative to origin [m], shape (m, 2).
    gap: signed distance of those points [m] (negative = penetration), shape (m,).
    hull: indices into xy of the contact area's convex hull, counter-clockwise (SURFACE),
        the two ends (LINE), or the single point (POINT).
    roll: how those points move over the body's surface (ContactPatch.roll), shape (m, 4).
    """

    patch: ContactPatch
    kind: ContactKind
    R_world_vl: np.ndarray
    origin: np.ndarray
    xy: np.ndarray
    gap: np.ndarray
    hull: np.ndarray
    roll: np.ndarray

    @property
    def hull_xy(self) -> np.ndarray:
        return self.xy[self.hull]

    @property
    def points_world(self) -> np.ndarray:
        """Contact points in the world [m], shape (m, 3) (on the surface plane through origin)."""
        R = self.R_world_vl
        return self.origin + self.xy @ R[:, :2].T

    def gap_fit(self) -> np.ndarray:
        """Least-squares plane of the gaps, g(x, y) = g0 + gx x + gy y -> (g0, gx, gy) [m, -, -].

        Used for the penetration correction (seed 000 Eq. 20b): g0 is the normal
        position error of the origin, gy / -gx the tilt errors about x / y.
        """
        return np.array(kernels.gap_plane_nb(self.xy, self.gap, int(self.kind)))

    def size(self) -> float:
        """Representative size d of the area [m] (seed 000 Eq. 30, 33): the mean distance
        from the origin over the contact area (over the segment for a line), so that
        μ f_z d is the friction moment of a uniformly pressed area turning about the origin."""
        if self.kind == ContactKind.POINT:
            return 0.0
        return float(kernels.mean_distance_nb(np.ascontiguousarray(self.hull_xy), kernels._TRI_RULE))


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Indices of the convex hull of 2-D points (n, 2), counter-clockwise (Andrew's monotone chain)."""
    return kernels.convex_hull_nb(np.ascontiguousarray(points, dtype=float))


def polygon_centroid(poly: np.ndarray) -> np.ndarray:
    """Area centroid of a simple counter-clockwise polygon (k, 2), shape (2,)."""
    return kernels.polygon_centroid_nb(np.ascontiguousarray(poly, dtype=float))


def _frame(normal: np.ndarray, x_axis: np.ndarray) -> np.ndarray:
    """Axes (columns x, y, z) with z = normal and x the projection of x_axis."""
    x = x_axis - normal * (x_axis @ normal)
    x = x / np.sqrt(x @ x)
    R = np.empty((3, 3))
    R[:, 0] = x
    R[0, 1] = normal[1] * x[2] - normal[2] * x[1]
    R[1, 1] = normal[2] * x[0] - normal[0] * x[2]
    R[2, 1] = normal[0] * x[1] - normal[1] * x[0]
    R[:, 2] = normal
    return R


def classify_patch(patch: ContactPatch, merge_tolerance: float = 1e-6, line_tolerance: float = 1e-4) -> ContactArea:
    """Classify a patch as point / line / surface (Table 1) and place its virtual link (4.2).

    merge_tolerance: points closer than this in the surface plane are one point [m].
    line_tolerance: points within this distance of their principal line are collinear [m]
    (and so are points whose width is under kernels.LINE_ASPECT of their length).
    """
    kind, R, origin, xy, _, hull = kernels.classify_nb(
        patch.points, patch.normal, patch.tangent, merge_tolerance, line_tolerance
    )
    if kind == 1:  # one distinct point (duplicates merged): the deepest one
        i = int(np.argmin(patch.gap))
        return ContactArea(
            patch, ContactKind.POINT, R, patch.points[i].copy(), xy, patch.gap[i : i + 1].copy(), hull, patch.roll[i : i + 1]
        )
    return ContactArea(patch, ContactKind(kind), R, origin, xy, patch.gap, hull, patch.roll)


def reduce_area(area: ContactArea, hull_positions: tuple[int, ...]) -> ContactArea:
    """The point (one hull vertex) or line (two adjacent hull vertices) contact that
    replaces ``area`` when p_v leaves its convex hull (seed 000, 4.4 (2)).

    hull_positions: positions in ``area.hull`` (not point indices).
    """
    idx = area.hull[list(hull_positions)]
    xy, gap, roll = area.xy[idx], area.gap[idx], area.roll[idx]
    R = area.R_world_vl
    if len(idx) == 1:
        origin = area.origin + R[:, :2] @ xy[0]
        return ContactArea(area.patch, ContactKind.POINT, R, origin, np.zeros((1, 2)), gap, np.array([0]), roll)
    mid = 0.5 * (xy[0] + xy[1])
    d = xy[1] - xy[0]
    d /= np.linalg.norm(d)
    R_new = _frame(R[:, 2], R[:, :2] @ d)
    origin = area.origin + R[:, :2] @ mid
    new_xy = (xy - mid) @ (R[:, :2].T @ R_new[:, :2])
    return ContactArea(area.patch, ContactKind.LINE, R_new, origin, new_xy, gap, np.array([0, 1]), roll)


def nearest_on_hull(area: ContactArea, p: np.ndarray) -> tuple[bool, tuple[int, ...]]:
    """Whether the 2-D point p (virtual-link frame) lies in the contact area's convex hull,
    and if not, the hull positions of the nearest feature: (i,) a vertex or (i, j) an edge."""
    H = area.hull_xy
    if area.kind == ContactKind.POINT:
        return bool(np.hypot(*p) < 1e-12), (0,)
    if area.kind == ContactKind.LINE:
        x0, x1 = H[0, 0], H[1, 0]
        lo, hi = min(x0, x1), max(x0, x1)
        if lo - 1e-12 <= p[0] <= hi + 1e-12:
            return True, (0, 1)
        return False, ((0,) if abs(p[0] - x0) < abs(p[0] - x1) else (1,))
    H = np.ascontiguousarray(H)
    if kernels.signed_distance_nb(float(p[0]), float(p[1]), H) >= -1e-12:
        return True, tuple(range(len(H)))
    i, j = kernels.nearest_feature_nb(float(p[0]), float(p[1]), H)
    return False, ((int(i),) if j < 0 else (int(i), int(j)))
