"""Mass properties of rigid shapes from their mass (or density) and size.

Closed forms for the primitives, the divergence theorem (a sum over the surface triangles,
each closing a tetrahedron with the origin) for a closed convex mesh. Every result is about
the centre of mass, in the shape frame (a cylinder's and a capsule's axis is z). Units: kg,
m, kg m^2.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from humanoid_sim.errors import InvalidValueError

__all__ = [
    "MassProperties",
    "box_inertia",
    "capsule_inertia",
    "capsule_volume",
    "cylinder_inertia",
    "mesh_mass_properties",
    "sphere_inertia",
]


class MassProperties(NamedTuple):
    """mass [kg]; com: centre of mass in the shape frame [m], (3,); inertia: about the
    centre of mass, axes of the shape frame [kg m^2], (3, 3); volume [m^3]."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    volume: float


def _check_mass(mass: float) -> float:
    if not (math.isfinite(mass) and mass > 0.0):
        raise InvalidValueError(f"mass = {mass!r}: must be finite and > 0 [kg]")
    return float(mass)


def box_inertia(mass: float, size: np.ndarray) -> np.ndarray:
    """Box of full edge lengths size (3,) [m]: diag(m (y^2 + z^2) / 12, ...)."""
    m = _check_mass(mass)
    x, y, z = (float(s) for s in size)
    return np.diag([m * (y * y + z * z), m * (x * x + z * z), m * (x * x + y * y)]) / 12.0


def sphere_inertia(mass: float, radius: float) -> np.ndarray:
    """Solid sphere: 2/5 m r^2 on every axis."""
    return np.eye(3) * 0.4 * _check_mass(mass) * radius * radius


def cylinder_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """Solid cylinder, axis z: Izz = m r^2 / 2, Ixx = Iyy = m (3 r^2 + L^2) / 12."""
    m = _check_mass(mass)
    side = m * (3.0 * radius * radius + length * length) / 12.0
    return np.diag([side, side, 0.5 * m * radius * radius])


def capsule_volume(radius: float, length: float) -> float:
    """Capsule of segment length L and radius r: pi r^2 L + 4/3 pi r^3 [m^3]."""
    return math.pi * radius * radius * length + 4.0 / 3.0 * math.pi * radius**3


def capsule_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """Solid capsule, axis z (segment length L, radius r), uniform density: the cylinder
    (mass m_c) plus two hemispheres (together m_s) shifted to their centres of mass:
    Izz = m_c r^2 / 2 + 2/5 m_s r^2, Ixx = m_c (L^2/12 + r^2/4) + m_s (2/5 r^2 + L^2/4 + 3 L r / 8)."""
    m = _check_mass(mass)
    r, L = float(radius), float(length)
    vc, vs = math.pi * r * r * L, 4.0 / 3.0 * math.pi * r**3
    mc, ms = m * vc / (vc + vs), m * vs / (vc + vs)
    side = mc * (L * L / 12.0 + r * r / 4.0) + ms * (0.4 * r * r + L * L / 4.0 + 3.0 * L * r / 8.0)
    return np.diag([side, side, 0.5 * mc * r * r + 0.4 * ms * r * r])


def mesh_mass_properties(vertices: np.ndarray, triangles: np.ndarray, mass: float | None = None, density: float | None = None) -> MassProperties:
    """Mass properties of the solid bounded by a closed triangle mesh of uniform density.

    vertices: (n, 3) [m]; triangles: (t, 3) vertex indices, counter-clockwise seen from
    outside. Give mass [kg] or density [kg/m^3]. By the divergence theorem each triangle
    (a, b, c) adds the signed tetrahedron (0, a, b, c): volume det/6, first moment
    det/24 (a + b + c), second moment det/120 (sum of x x^T over the corners + s s^T,
    s = a + b + c).
    """
    v = np.asarray(vertices, dtype=float)
    tri = np.asarray(triangles, dtype=np.int64)
    a, b, c = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = float(det.sum() / 6.0)
    if not volume > 0.0:
        raise InvalidValueError(f"mesh volume = {volume!r} m^3: the triangles must close a solid, counter-clockwise from outside")
    s = a + b + c
    first = (det[:, None] * s).sum(axis=0) / 24.0
    second = np.einsum("i,ij,ik->jk", det, a, a) + np.einsum("i,ij,ik->jk", det, b, b)
    second += np.einsum("i,ij,ik->jk", det, c, c) + np.einsum("i,ij,ik->jk", det, s, s)
    second /= 120.0
    if (mass is None) == (density is None):
        raise InvalidValueError("give exactly one of mass [kg] and density [kg/m^3]")
    rho = float(density) if density is not None else _check_mass(float(mass)) / volume
    m = rho * volume
    com = first / volume
    cov = rho * second - m * np.outer(com, com)  # second moment about the centre of mass
    inertia = np.trace(cov) * np.eye(3) - cov
    return MassProperties(m, com, 0.5 * (inertia + inertia.T), volume)
