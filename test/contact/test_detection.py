"""Detection of collision shapes against the ground and static boxes; Table 1 classification."""

import dataclasses

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from humanoid_sim.contact import kernels
from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, GroundPlane, StaticBox
from humanoid_sim.contact.virtual_link import (
    ContactKind,
    classify_patch,
    convex_hull_2d,
    nearest_on_hull,
    polygon_centroid,
    reduce_area,
)
from humanoid_sim.dynamics.spatial import axis_angle_to_rotation
from humanoid_sim.model import load_urdf
from humanoid_sim.model.robot_model import CollisionShape, ShapeKind
from humanoid_sim.model.urdf_builder import free_box_urdf

SIZE = np.array([0.2, 0.1, 0.05])


def _model_with(*shapes):
    model = load_urdf(free_box_urdf(1.0, SIZE))
    made = tuple(
        CollisionShape(0, kind, X if X is not None else np.eye(4), np.asarray(size, float), np.zeros((0, 3)), "box")
        for kind, size, X in shapes
    )
    return dataclasses.replace(model, collision_shapes=made)


def _detect(model, R, p, env=None, tol=2e-4):
    det = ContactDetector(model, env or Environment(), tolerance=tol)
    return det.detect(np.asarray(R, float)[None], np.asarray(p, float)[None])


def test_box_flat_on_ground_is_one_surface_contact_with_its_bottom_face():
    model = load_urdf(free_box_urdf(1.0, SIZE))
    (patch,) = _detect(model, np.eye(3), [0.3, -0.2, SIZE[2] / 2])
    assert len(patch.points) == 4 and np.allclose(patch.gap, 0.0)
    area = classify_patch(patch)
    assert area.kind == ContactKind.SURFACE
    assert np.allclose(area.origin, [0.3, -0.2, 0.0])
    assert np.allclose(area.R_world_vl[:, 2], [0, 0, 1])
    hull = area.hull_xy
    x, y = hull[:, 0], hull[:, 1]
    assert 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) == pytest.approx(0.2 * 0.1)


@pytest.mark.parametrize("lift, count", [(1e-4, 4), (-3e-4, 4), (5e-4, 0)])
def test_tolerance_band_keeps_a_resting_box_in_contact(lift, count):
    model = load_urdf(free_box_urdf(1.0, SIZE))
    patches = _detect(model, np.eye(3), [0, 0, SIZE[2] / 2 + lift])
    assert sum(len(p.points) for p in patches) == count
    if count:
        assert np.allclose(patches[0].gap, lift)


def test_edge_down_is_a_line_along_the_edge_and_corner_down_a_point():
    model = load_urdf(free_box_urdf(1.0, SIZE))
    R = axis_angle_to_rotation(np.array([1.0, 0, 0]), 0.4)
    edge = np.array([0.0, -SIZE[1] / 2, -SIZE[2] / 2])
    (patch,) = _detect(model, R, -(R @ edge) * [0, 0, 1])
    area = classify_patch(patch)
    assert area.kind == ContactKind.LINE
    assert abs(area.R_world_vl[:, 0] @ [1, 0, 0]) == pytest.approx(1.0)
    assert np.ptp(area.xy[:, 0]) == pytest.approx(SIZE[0])
    R = axis_angle_to_rotation(np.array([1.0, 1.0, 0]) / np.sqrt(2), 0.5)
    corners = [np.array([sx, sy, sz]) * SIZE / 2 for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    low = min(corners, key=lambda c: (R @ c)[2])
    (patch,) = _detect(model, R, -(R @ low) * [0, 0, 1])
    area = classify_patch(patch)
    assert area.kind == ContactKind.POINT
    assert np.allclose(area.origin, [(R @ low)[0], (R @ low)[1], 0.0], atol=1e-12)


def test_sphere_capsule_and_cylinder_contacts():
    r = 0.05
    model = _model_with((ShapeKind.SPHERE, [r], None))
    (patch,) = _detect(model, np.eye(3), [0, 0, r - 1e-5])
    assert classify_patch(patch).kind == ContactKind.POINT
    assert patch.gap[0] == pytest.approx(-1e-5)
    assert np.allclose(patch.points[0], [0, 0, -1e-5])
    # capsule lying along world x: its two end spheres touch -> a line of the segment length
    Rx = axis_angle_to_rotation(np.array([0.0, 1.0, 0.0]), np.pi / 2)
    model = _model_with((ShapeKind.CAPSULE, [r, 0.3], None))
    area = classify_patch(_detect(model, Rx, [0, 0, r])[0])
    assert area.kind == ContactKind.LINE and np.ptp(area.xy[:, 0]) == pytest.approx(0.3)
    # upright cylinder: its bottom circle is a surface close to the disc
    model = _model_with((ShapeKind.CYLINDER, [r, 0.2], None))
    area = classify_patch(_detect(model, np.eye(3), [0, 0, 0.1])[0])
    assert area.kind == ContactKind.SURFACE
    assert np.allclose(area.origin, 0.0, atol=1e-12)
    assert np.allclose(np.linalg.norm(area.hull_xy, axis=1), r)


def test_points_of_two_shapes_of_one_link_form_one_contact():
    X1, X2 = np.eye(4), np.eye(4)
    X1[:3, 3] = [-0.1, 0, 0]
    X2[:3, 3] = [0.1, 0, 0]
    model = _model_with((ShapeKind.SPHERE, [0.02], X1), (ShapeKind.SPHERE, [0.02], X2))
    patches = _detect(model, np.eye(3), [0, 0, 0.02])
    assert len(patches) == 1 and len(patches[0].points) == 2
    assert classify_patch(patches[0]).kind == ContactKind.LINE


def test_static_box_faces_are_separate_surfaces():
    platform = StaticBox("platform", np.array([0.0, 0.0, 0.1]), np.zeros(3), np.array([1.0, 1.0, 0.2]))
    env = Environment(ground=GroundPlane(0.0), boxes=(platform,))
    model = load_urdf(free_box_urdf(1.0, SIZE))
    (top,) = _detect(model, np.eye(3), [0, 0, 0.2 + SIZE[2] / 2], env)
    assert (top.element, top.surface) == (1, 4)  # element 1 (after the ground), face +z
    assert np.allclose(top.normal, [0, 0, 1]) and len(top.points) == 4
    # pressed against the +x side of the platform, off the ground
    (side,) = _detect(model, np.eye(3), [0.5 + SIZE[0] / 2, 0, 0.1], env)
    assert (side.element, side.surface) == (1, 0) and np.allclose(side.normal, [1, 0, 0])
    assert classify_patch(side).kind == ContactKind.SURFACE
    # a tilted platform: the normal follows its top face
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, 0.3, 0.0]), np.array([2.0, 2.0, 0.2]))
    R = axis_angle_to_rotation(np.array([0, 1.0, 0]), 0.3)
    (p,) = _detect(model, R, R[:, 2] * (0.1 + SIZE[2] / 2), Environment(ground=None, boxes=(slope,)))
    assert np.allclose(p.normal, R[:, 2]) and np.allclose(p.gap, 0.0, atol=1e-12)


def test_gap_fit_recovers_tilt_and_height():
    model = load_urdf(free_box_urdf(1.0, SIZE))
    R = axis_angle_to_rotation(np.array([0, 1.0, 0]), 1e-3)  # tiny pitch: still a surface
    (patch,) = _detect(model, R, [0, 0, SIZE[2] / 2 - 5e-5], tol=1e-3)
    area = classify_patch(patch)
    g0, gx, gy = area.gap_fit()
    assert area.kind == ContactKind.SURFACE
    assert np.allclose(area.gap, g0 + gx * area.xy[:, 0] + gy * area.xy[:, 1], atol=1e-12)
    assert gx == pytest.approx(-np.sin(1e-3), rel=1e-3)  # +pitch lowers the +x side
    assert abs(gy) < 1e-12


@pytest.mark.parametrize("kind", [1, 2, 3])
def test_gap_plane_is_the_least_squares_plane(rng, kind):
    # the plane of seed 000 Eq. 20b's penetration and tilt errors, off the points' centroid
    n = 7
    xy = rng.uniform(-0.1, 0.1, (n, 2)) + [0.3, -0.2]
    if kind == 2:  # a line's points lie on its x axis
        xy[:, 1] = 0.0
    gap = rng.normal(0.0, 1e-3, n)
    cols = {1: [0], 2: [0, 1], 3: [0, 1, 2]}[kind]
    expected = np.zeros(3)
    expected[cols] = np.linalg.lstsq(np.column_stack([np.ones(n), xy])[:, cols], gap, rcond=None)[0]
    assert np.allclose(np.array(kernels.gap_plane_nb(xy, gap, kind)), expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("n", [4, 8, 17, 64])
def test_the_hull_of_many_points_is_the_convex_hull_of_all_of_them(rng, n):
    """The hull's points are sorted by a merge sort in scratch (kernels.convex_hull_into): for
    any number of points, a duplicate among them, it is the convex hull (scipy's vertices),
    counter-clockwise."""
    pts = rng.uniform(-0.1, 0.1, (n, 2))
    pts[n // 2] = pts[0]
    hull = convex_hull_2d(pts)
    expected = ConvexHull(pts).vertices
    assert sorted(map(tuple, pts[hull])) == sorted(map(tuple, pts[expected]))
    a, b, c = pts[hull], np.roll(pts[hull], -1, axis=0), np.roll(pts[hull], -2, axis=0)
    assert np.all((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]) > 0)


@pytest.mark.parametrize("order", ["random", "sorted", "reversed", "few keys"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 300])
def test_the_hits_sort_is_numpys_stable_argsort(rng, n, order):
    """The step orders its hits by key with kernels.argsort_stable_into (a merge sort in
    scratch, nothing allocated): numpy's stable argsort, ties in index order, whatever the
    keys' order; only the first n keys are read."""
    keys = {"random": rng.integers(0, 1000, n), "sorted": np.sort(rng.integers(0, 1000, n)),
            "reversed": np.sort(rng.integers(0, 1000, n))[::-1].copy(), "few keys": rng.integers(0, 3, n)}[order]
    padded = np.concatenate([keys, [-1, -2]])  # beyond n: never read
    out, tmp = np.full(n + 2, -7, np.int64), np.zeros(n + 2, np.int64)
    kernels.argsort_stable_into(padded, n, out, tmp)
    assert np.array_equal(out[:n], np.argsort(keys, kind="stable")) and np.all(out[n:] == -7)


def test_hull_centroid_and_nearest_feature():
    pts = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.2, 0.7]], float)
    hull = convex_hull_2d(pts)
    assert sorted(hull.tolist()) == [0, 1, 2, 3]
    assert np.allclose(polygon_centroid(pts[hull]), [0.5, 0.5])
    model = load_urdf(free_box_urdf(1.0, SIZE))
    area = classify_patch(_detect(model, np.eye(3), [0, 0, SIZE[2] / 2])[0])
    inside, _ = nearest_on_hull(area, np.array([0.05, 0.02]))
    assert inside
    inside, feature = nearest_on_hull(area, np.array([0.15, 0.0]))  # beyond the +x edge
    assert not inside and len(feature) == 2
    line = reduce_area(area, feature)
    assert line.kind == ContactKind.LINE and np.allclose(line.origin, [0.1, 0, 0])
    inside, feature = nearest_on_hull(area, np.array([0.3, 0.2]))  # beyond the (+x, +y) corner
    assert not inside and len(feature) == 1
    point = reduce_area(area, feature)
    assert point.kind == ContactKind.POINT and np.allclose(point.origin, [0.1, 0.05, 0])
