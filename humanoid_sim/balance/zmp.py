"""ZMP of the total ground reaction, the support polygon and the stability margin.

The ZMP (seed 000, 4.4 (2)) is the point of the ground plane z = h where the
total contact wrench has no horizontal moment. With one foot down it equals
that foot's p_v (Eq. 26). Frames: world, z up; units m, N, N m.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.contact import kernels
from humanoid_sim.contact.virtual_link import convex_hull_2d


class ZmpReport(NamedTuple):
    """zmp: ZMP on the ground plane (world) [m], shape (3,); NaN when no vertical force.
    support_polygon: convex hull of the ground contact points, counter-clockwise (k, 2) [m].
    margin: signed distance of the ZMP to the polygon boundary [m], + inside, - outside,
        NaN without a polygon.
    force, moment: total contact force [N] and moment about the world origin [N m], (3,) each.
    """

    zmp: np.ndarray
    support_polygon: np.ndarray
    margin: float
    force: np.ndarray
    moment: np.ndarray


def zmp_from_wrench(force: np.ndarray, moment_origin: np.ndarray, height: float = 0.0) -> np.ndarray:
    """ZMP on the plane z = height of a wrench (force [N], moment about the world origin [N m]).

    Solves (n_O - p x f)_{x,y} = 0 for p = (p_x, p_y, height).
    """
    fz = float(force[2])
    if fz <= 1e-12:
        return np.full(3, np.nan)
    px = (height * force[0] - moment_origin[1]) / fz
    py = (moment_origin[0] + height * force[1]) / fz
    return np.array([px, py, height])


def support_polygon(points_xy: np.ndarray) -> np.ndarray:
    """Convex hull (counter-clockwise) of ground contact points (n, 2) [m] -> (k, 2)."""
    pts = np.asarray(points_xy, dtype=float).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros((0, 2))
    return pts[convex_hull_2d(pts)]


def signed_distance_to_polygon(p: np.ndarray, polygon: np.ndarray) -> float:
    """Distance [m] from p (2,) to the boundary of a convex counter-clockwise polygon (k, 2):
    positive inside, negative outside; for k = 1 or 2 the (negative) distance to the point
    or segment; NaN for an empty polygon or a NaN point."""
    p = np.asarray(p, dtype=float)
    if len(polygon) == 0 or not np.all(np.isfinite(p[:2])):
        return float("nan")
    return float(kernels.signed_distance_nb(float(p[0]), float(p[1]), np.ascontiguousarray(polygon, dtype=float)))


def zmp_report(forces: np.ndarray, origins: np.ndarray, moments: np.ndarray, ground_points_xy: np.ndarray, height: float = 0.0) -> ZmpReport:
    """ZMP of contact wrenches: forces (n, 3) [N] and moments (n, 3) [N m] acting at
    origins (n, 3) [m] (world); the support polygon of ground_points_xy (m, 2)."""
    pts = np.ascontiguousarray(ground_points_xy, dtype=float).reshape(-1, 2)
    z, hull, margin, F, N = kernels.zmp_nb(
        np.ascontiguousarray(forces, dtype=float).reshape(-1, 3),
        np.ascontiguousarray(origins, dtype=float).reshape(-1, 3),
        np.ascontiguousarray(moments, dtype=float).reshape(-1, 3),
        pts,
        float(height),
    )
    return ZmpReport(z, pts[hull], float(margin), F, N)
