"""Mass properties: closed forms against the divergence theorem on meshes of the same solids."""

import numpy as np
import pytest
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world.inertia import (
    box_inertia,
    capsule_inertia,
    capsule_volume,
    cylinder_inertia,
    mesh_mass_properties,
    sphere_inertia,
)
from humanoid_sim.world.shape import Shape


def hull_mesh(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and outward counter-clockwise triangles of the convex hull of points."""
    hull = ConvexHull(points)
    tri = hull.simplices.copy()
    for t, eq in zip(tri, hull.equations):  # orient each triangle with the outward normal
        a, b, c = points[t]
        if np.dot(np.cross(b - a, c - a), eq[:3]) < 0:
            t[[1, 2]] = t[[2, 1]]
    return points, tri


def box_points(size) -> np.ndarray:
    return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) * 0.5 * np.asarray(size)


def test_box_mesh_by_the_divergence_theorem_equals_the_closed_form():
    size = np.array([0.3, 0.7, 1.1])
    props = mesh_mass_properties(*hull_mesh(box_points(size)), mass=2.5)
    assert props.volume == pytest.approx(np.prod(size), rel=1e-12)
    np.testing.assert_allclose(props.com, 0.0, atol=1e-14)
    np.testing.assert_allclose(props.inertia, box_inertia(2.5, size), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(box_inertia(12.0, [1.0, 1.0, 1.0]), 2.0 * np.eye(3))  # m a^2 / 6


def test_a_moved_and_turned_mesh_keeps_its_inertia_about_its_centre_of_mass(rng):
    size = np.array([0.3, 0.7, 1.1])
    R = Rotation.random(random_state=int(rng.integers(1 << 31))).as_matrix()
    shift = rng.normal(size=3)
    props = mesh_mass_properties(*hull_mesh(box_points(size) @ R.T + shift), density=900.0)
    assert props.mass == pytest.approx(900.0 * np.prod(size), rel=1e-12)
    np.testing.assert_allclose(props.com, shift, atol=1e-12)
    np.testing.assert_allclose(props.inertia, R @ box_inertia(props.mass, size) @ R.T, rtol=1e-10, atol=1e-12)


def fine_sphere(r: float, n: int = 4000) -> np.ndarray:
    k = np.arange(n) + 0.5
    phi, th = np.arccos(1 - 2 * k / n), np.pi * (1 + 5**0.5) * k
    return r * np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], axis=1)


def test_sphere_cylinder_and_capsule_closed_forms_match_fine_meshes():
    r, L, m = 0.2, 0.6, 3.0
    sphere = mesh_mass_properties(*hull_mesh(fine_sphere(r)), mass=m)
    np.testing.assert_allclose(sphere.inertia, sphere_inertia(m, r), rtol=2e-3, atol=1e-6)
    ang = np.linspace(0, 2 * np.pi, 512, endpoint=False)
    rim = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1)
    cyl = np.vstack([np.column_stack([rim, np.full(512, z)]) for z in (-L / 2, L / 2)])
    props = mesh_mass_properties(*hull_mesh(cyl), mass=m)
    np.testing.assert_allclose(props.inertia, cylinder_inertia(m, r, L), rtol=1e-4, atol=1e-8)
    ball = fine_sphere(r)
    caps = np.vstack([ball[ball[:, 2] > 0] + [0, 0, L / 2], ball[ball[:, 2] <= 0] - [0, 0, L / 2]])
    caps = np.vstack([caps, np.column_stack([rim, np.full(512, L / 2)]), np.column_stack([rim, np.full(512, -L / 2)])])
    props = mesh_mass_properties(*hull_mesh(caps), mass=m)
    assert props.volume == pytest.approx(capsule_volume(r, L), rel=2e-3)
    np.testing.assert_allclose(props.inertia, capsule_inertia(m, r, L), rtol=2e-3, atol=1e-6)


def test_shape_mass_properties_from_mass_or_density():
    ball = Shape(ShapeKind.SPHERE, [0.1])
    props = ball.mass_properties(density=1000.0)
    assert props.mass == pytest.approx(1000.0 * 4.0 / 3.0 * np.pi * 1e-3)
    np.testing.assert_allclose(props.inertia, 0.4 * props.mass * 0.01 * np.eye(3))
    cube = Shape(ShapeKind.MESH, np.zeros(0), box_points([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(cube.mass_properties(mass=6.0).inertia, np.eye(3), rtol=1e-12)
    with pytest.raises(InvalidValueError, match="exactly one of mass"):
        ball.mass_properties(mass=1.0, density=2.0)
    with pytest.raises(InvalidValueError, match="mass"):
        box_inertia(-1.0, [1, 1, 1])
    with pytest.raises(InvalidValueError, match="size"):
        Shape(ShapeKind.CYLINDER, [0.1])
