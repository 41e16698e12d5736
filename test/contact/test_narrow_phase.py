"""The compiled narrow phase against truths: manifolds of boxes, spheres, capsules,
cylinders and convex hulls, and a brute-force signed distance on seeded random poses."""

import numpy as np
import pytest
from scipy.optimize import brentq, minimize
from scipy.spatial.transform import Rotation

from humanoid_sim.contact.convex_shapes import BOX, CAPSULE, CYLINDER, MESH, SPHERE, ShapeSpec, pack_shapes
from humanoid_sim.contact.narrow_phase import RIM_POINTS, collide

I3 = np.eye(3)
UNIT = np.ones(3)
CUBE_MESH = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) - 0.25


@pytest.fixture(scope="module")
def shapes():
    """0, 1: unit cubes; 2: sphere r 0.5; 3: capsule r 0.1, segment 1; 4: cylinder r 0.2,
    length 0.5; 5: unit-cube mesh; 6: tetrahedron mesh; 7: big static box 4 x 4 x 1."""
    return pack_shapes(
        [
            ShapeSpec(BOX, UNIT), ShapeSpec(BOX, UNIT), ShapeSpec(SPHERE, np.array([0.5])),
            ShapeSpec(CAPSULE, np.array([0.1, 1.0])), ShapeSpec(CYLINDER, np.array([0.2, 0.5])),
            ShapeSpec(MESH, np.zeros(0), CUBE_MESH), ShapeSpec(MESH, np.zeros(0), TETRA),
            ShapeSpec(BOX, np.array([4.0, 4.0, 1.0])),
        ]
    )  # fmt: skip


def rot(axis: str, deg: float) -> np.ndarray:
    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()


def same_points(a: np.ndarray, b: np.ndarray, tol: float = 1e-9) -> bool:
    """The same set of points (any order)."""
    if a.shape != b.shape:
        return False
    return all(np.min(np.linalg.norm(b - p, axis=1)) <= tol for p in a)


def check_consistent(c) -> None:
    """Every point pair is joined by gap * normal; the frame is orthonormal."""
    assert abs(np.linalg.norm(c.normal) - 1.0) < 1e-12
    assert abs(np.linalg.norm(c.tangent) - 1.0) < 1e-12 and abs(c.tangent @ c.normal) < 1e-12
    np.testing.assert_allclose(c.point_b - c.point_a, c.gap[:, None] * c.normal, atol=1e-12)


def test_cube_on_cube_is_a_surface_of_the_four_corners(shapes):
    c = collide(shapes, 0, I3, np.zeros(3), 1, I3, np.array([0.0, 0.0, 1.0 - 3e-5]))
    check_consistent(c)
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-15)
    corners = np.array([[x, y, 0.5] for x in (-0.5, 0.5) for y in (-0.5, 0.5)])
    assert same_points(c.point_a, corners)
    np.testing.assert_allclose(c.gap, -3e-5, atol=1e-14)
    np.testing.assert_allclose(c.tangent, [1, 0, 0])


def test_cube_overhanging_by_40_percent_gives_the_clipped_rectangle(shapes):
    c = collide(shapes, 0, I3, np.zeros(3), 1, I3, np.array([0.4, 0.0, 1.0 - 1e-4]))
    check_consistent(c)
    rect = np.array([[x, y, 0.5] for x in (-0.1, 0.5) for y in (-0.5, 0.5)])
    assert same_points(c.point_a, rect)
    np.testing.assert_allclose(c.gap, -1e-4, atol=1e-14)


def test_cube_turned_45_degrees_on_its_edge_touches_along_a_line(shapes):
    drop = 0.5 * np.sqrt(2.0)
    c = collide(shapes, 0, I3, np.zeros(3), 1, rot("x", 45), np.array([0.0, 0.0, 0.5 + drop - 2e-5]))
    check_consistent(c)
    assert len(c.gap) == 2
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-12)
    assert same_points(c.point_b, np.array([[-0.5, 0.0, 0.5 - 2e-5], [0.5, 0.0, 0.5 - 2e-5]]), 1e-12)
    np.testing.assert_allclose(c.gap, -2e-5, atol=1e-12)


def test_crossing_edges_touch_in_one_point_at_their_closest_points(shapes):
    drop = 0.5 * np.sqrt(2.0)
    Ra = rot("x", 45)  # top edge along x at z = drop
    Rb = rot("y", 45)  # bottom edge along y at z = pb_z - drop
    gap = 1e-4
    c = collide(shapes, 0, Ra, np.zeros(3), 1, Rb, np.array([0.1, -0.2, 2 * drop + gap]), band=2e-4)
    check_consistent(c)
    assert len(c.gap) == 1
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(c.point_a[0], [0.1, 0.0, drop], atol=1e-9)
    np.testing.assert_allclose(c.point_b[0], [0.1, 0.0, drop + gap], atol=1e-9)
    np.testing.assert_allclose(c.gap, gap, atol=1e-9)


def test_sphere_on_box_face_edge_and_corner(shapes):
    c = collide(shapes, 0, I3, np.zeros(3), 2, I3, np.array([0.2, 0.1, 1.0 - 1e-4]))
    check_consistent(c)
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(c.point_b, [[0.2, 0.1, 0.5 - 1e-4]], atol=1e-12)
    np.testing.assert_allclose(c.gap, [-1e-4], atol=1e-12)
    np.testing.assert_allclose(c.roll_b, [[0.5, 0, 0, 0]])  # the point rolls over the sphere
    np.testing.assert_allclose(c.roll_a, [[0, 0, 0, 0]])
    corner = np.array([0.5, 0.5, 0.5])
    d = np.array([1.0, 2.0, 2.0]) / 3.0
    c = collide(shapes, 0, I3, np.zeros(3), 2, I3, corner + (0.5 + 5e-5) * d)
    check_consistent(c)
    np.testing.assert_allclose(c.normal, d, atol=1e-9)
    np.testing.assert_allclose(c.point_a, [corner], atol=1e-9)
    np.testing.assert_allclose(c.gap, [5e-5], atol=1e-9)
    edge = np.array([0.5, 0.1, 0.5])
    d = np.array([1.0, 0.0, 1.0]) / np.sqrt(2.0)
    c = collide(shapes, 0, I3, np.zeros(3), 2, I3, edge + (0.5 - 1e-3) * d)
    np.testing.assert_allclose(c.normal, d, atol=1e-9)
    np.testing.assert_allclose(c.point_a, [edge], atol=1e-9)
    np.testing.assert_allclose(c.gap, [-1e-3], atol=1e-9)


def test_sphere_on_sphere(shapes):
    sph = pack_shapes([ShapeSpec(SPHERE, np.array([0.5])), ShapeSpec(SPHERE, np.array([0.25]))])
    d = np.array([2.0, -1.0, 2.0]) / 3.0
    c = collide(sph, 0, I3, np.ones(3), 1, rot("z", 30), np.ones(3) + (0.75 - 2e-3) * d)
    check_consistent(c)
    np.testing.assert_allclose(c.normal, d, atol=1e-12)
    np.testing.assert_allclose(c.gap, [-2e-3], atol=1e-12)
    np.testing.assert_allclose(c.point_a, [np.ones(3) + 0.5 * d], atol=1e-12)
    assert len(collide(sph, 0, I3, np.ones(3), 1, I3, np.ones(3) + 0.76 * d).gap) == 0


def test_capsule_lying_touches_in_two_points_standing_in_one(shapes):
    c = collide(shapes, 7, I3, np.zeros(3), 3, rot("y", 90), np.array([0.3, 0.2, 0.6 - 1e-4]))
    check_consistent(c)
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-12)
    assert same_points(c.point_b, np.array([[-0.2, 0.2, 0.5 - 1e-4], [0.8, 0.2, 0.5 - 1e-4]]), 1e-12)
    np.testing.assert_allclose(c.gap, -1e-4, atol=1e-12)
    c = collide(shapes, 7, I3, np.zeros(3), 3, I3, np.array([0.3, 0.2, 0.5 + 0.6 + 1e-4]))
    np.testing.assert_allclose(c.point_b, [[0.3, 0.2, 0.5 + 1e-4]], atol=1e-12)
    np.testing.assert_allclose(c.gap, [1e-4], atol=1e-12)


def test_cylinder_flat_tilted_and_lying(shapes):
    # flat on its end disc: RIM_POINTS exact rim points
    c = collide(shapes, 7, I3, np.zeros(3), 4, I3, np.array([0.1, 0.0, 0.75 - 1e-4]))
    check_consistent(c)
    assert len(c.gap) == RIM_POINTS >= 16
    np.testing.assert_allclose(np.linalg.norm(c.point_b[:, :2] - [0.1, 0.0], axis=1), 0.2, atol=1e-12)
    np.testing.assert_allclose(c.gap, -1e-4, atol=1e-12)
    # tilted 20 degrees about x: the exact lowest rim point
    R = rot("x", 20)
    low = -0.25 * R[:, 2] - 0.2 * R[:, 1]  # the lower disc's rim point farthest down
    p = np.array([0.0, 0.0, 0.5 - low[2] - 5e-5])
    c = collide(shapes, 7, I3, np.zeros(3), 4, R, p)
    check_consistent(c)
    assert len(c.gap) == 1
    np.testing.assert_allclose(c.point_b[0], p + low, atol=1e-12)
    np.testing.assert_allclose(c.gap, [-5e-5], atol=1e-12)
    assert c.roll_b[0, 0] == pytest.approx(0.2 / np.sin(np.radians(20)))  # c = r / |s|, s = n - (n . a) a
    # lying on its side: the lowest line
    c = collide(shapes, 7, I3, np.zeros(3), 4, rot("x", 90), np.array([0.0, 0.0, 0.7 - 1e-4]))
    check_consistent(c)
    assert same_points(c.point_b, np.array([[0.0, -0.25, 0.5 - 1e-4], [0.0, 0.25, 0.5 - 1e-4]]), 1e-12)


def test_convex_hull_against_box(shapes):
    # the cube mesh behaves as the box
    for R in (I3, rot("z", 30)):
        box = collide(shapes, 7, I3, np.zeros(3), 1, R, np.array([0.2, 0.1, 1.0 - 1e-4]))
        mesh = collide(shapes, 7, I3, np.zeros(3), 5, R, np.array([0.2, 0.1, 1.0 - 1e-4]))
        assert same_points(box.point_b, mesh.point_b, 1e-12) and len(mesh.gap) == 4
    # a tetrahedron on its base: a triangle; upside down on its apex: one point
    c = collide(shapes, 7, I3, np.zeros(3), 6, I3, np.array([0.0, 0.0, 0.75 - 1e-4]))
    assert same_points(c.point_b, TETRA[:3] + [0.0, 0.0, 0.75 - 1e-4], 1e-12)
    flip = rot("x", 180)
    c = collide(shapes, 7, I3, np.zeros(3), 6, flip, np.array([0.0, 0.0, 1.25 - 1e-4]))
    np.testing.assert_allclose(c.point_b, [flip @ TETRA[3] + [0.0, 0.0, 1.25 - 1e-4]], atol=1e-12)
    np.testing.assert_allclose(c.gap, [-1e-4], atol=1e-12)


@pytest.mark.parametrize("sb", [1, 2, 3, 4, 5, 6])
def test_swapping_the_shapes_flips_the_normal_and_keeps_the_points(shapes, sb, rng):
    for _ in range(5):
        Ra, Rb = Rotation.random(2, random_state=rng.integers(1 << 31)).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        pb = d * 0.9
        ab = collide(shapes, 0, Ra, np.zeros(3), sb, Rb, pb, band=0.05)
        ba = collide(shapes, sb, Rb, pb, 0, Ra, np.zeros(3), band=0.05)
        assert len(ab.gap) == len(ba.gap)
        if len(ab.gap):
            np.testing.assert_allclose(ba.normal, -ab.normal, atol=1e-9)
            assert same_points(ab.point_a, ba.point_b, 1e-8) and same_points(ab.point_b, ba.point_a, 1e-8)


# ---------------------------------------------------------------- brute-force reference


def support_points(kind: int, size, vertices, R, p, dirs: np.ndarray) -> np.ndarray:
    """max over the shape of d . x for each row d of dirs (m, 3), from its definition."""
    local = dirs @ R  # directions in the shape frame
    if kind in (BOX, MESH):
        v = vertices if kind == MESH else CUBE_MESH * size
        h = (local @ v.T).max(axis=1)
    elif kind == SPHERE:
        h = size[0] * np.ones(len(dirs))
    elif kind == CAPSULE:
        h = 0.5 * size[1] * np.abs(local[:, 2]) + size[0]
    else:
        h = 0.5 * size[1] * np.abs(local[:, 2]) + size[0] * np.linalg.norm(local[:, :2], axis=1)
    return h + dirs @ p


def signed_distance(a, Ra, pa, b, Rb, pb, refine: bool = True) -> tuple[float, np.ndarray]:
    """max over unit u of (min_B u.x - max_A u.x): the distance of separated convex shapes,
    minus the penetration depth of overlapping ones; and the maximising u (A into B).
    refine False: the best of 20000 sampled directions only."""

    def f(u):
        u = np.atleast_2d(u)
        u = u / np.linalg.norm(u, axis=1)[:, None]
        return -support_points(*b, Rb, pb, -u) - support_points(*a, Ra, pa, u)

    k = np.arange(20000) + 0.5
    phi, th = np.arccos(1 - 2 * k / 20000), np.pi * (1 + 5**0.5) * k
    dirs = np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], axis=1)
    values = f(dirs)
    if not refine:
        return float(values.max()), dirs[np.argmax(values)]
    best, u_best = -np.inf, dirs[0]
    for u0 in dirs[np.argsort(values)[-3:]]:  # local searches from the three best samples, each restarted
        for _ in range(2):
            res = minimize(lambda u: -f(u)[0], u0, method="Nelder-Mead", options={"xatol": 1e-11, "fatol": 1e-13, "maxiter": 4000})
            u0 = res.x / np.linalg.norm(res.x)
        if f(u0)[0] > best:
            best, u_best = float(f(u0)[0]), u0
    return best, u_best


SPECS = {
    "box": (BOX, np.array([0.6, 0.4, 0.3]), None),
    "hull": (MESH, None, Rotation.from_euler("xyz", [5, 10, 15], degrees=True).apply(np.random.default_rng(3).normal(size=(12, 3)) * 0.3)),
    "sphere": (SPHERE, np.array([0.25]), None),
    "capsule": (CAPSULE, np.array([0.15, 0.5]), None),
    "cylinder": (CYLINDER, np.array([0.2, 0.4]), None),
}


@pytest.mark.parametrize("name_b", list(SPECS))
@pytest.mark.parametrize("name_a", list(SPECS))
def test_random_poses_match_the_brute_force_signed_distance(name_a, name_b, rng):
    specs = [SPECS[name_a], SPECS[name_b]]
    shapes = pack_shapes([ShapeSpec(k, np.zeros(0) if s is None else s, v) for k, s, v in specs])
    ref_shape = [(k, s, v) for k, s, v in specs]
    if specs[0][0] == MESH:  # the reference uses the hull's own vertices
        ref_shape[0] = (MESH, None, shapes.vertices[shapes.vert_start[0] : shapes.vert_start[1]])
    if specs[1][0] == MESH:
        ref_shape[1] = (MESH, None, shapes.vertices[shapes.vert_start[1] : shapes.vert_start[2]])
    # a cylinder's least penetration (rim against edge) is found by a local search
    tol = 1e-3 if "cylinder" in (name_a, name_b) else 1e-6
    checked = 0
    for _ in range(6):
        Ra, Rb = Rotation.random(2, random_state=rng.integers(1 << 31)).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        target = rng.uniform(-0.02, 0.004)
        t = 0.6
        for _ in range(4):  # place B so that the signed distance is near the target
            sd, u = signed_distance(ref_shape[0], Ra, np.zeros(3), ref_shape[1], Rb, t * d, refine=False)
            t -= (sd - target) / max(0.2, float(u @ d))
        sd, u = signed_distance(ref_shape[0], Ra, np.zeros(3), ref_shape[1], Rb, t * d)
        c = collide(shapes, 0, Ra, np.zeros(3), 1, Rb, t * d, band=0.005)
        if sd > 0.005 + 1e-6:
            assert len(c.gap) == 0
            continue
        assert len(c.gap) >= 1, (sd, name_a, name_b)
        check_consistent(c)
        assert c.gap.min() == pytest.approx(sd, abs=tol)
        assert np.sign(c.gap.min()) == np.sign(sd) or abs(sd) < tol
        if abs(sd) > 10 * tol:  # a unique direction of least penetration / of separation
            assert np.degrees(np.arccos(min(1.0, float(c.normal @ u)))) < (10.0 if tol > 1e-6 else 0.01)
        checked += 1
    assert checked >= 3


FIXTURE_REFERENCE = {  # the fixture's shapes for the brute-force reference
    0: (BOX, UNIT, None), 1: (BOX, UNIT, None), 2: (SPHERE, np.array([0.5]), None),
    3: (CAPSULE, np.array([0.1, 1.0]), None), 4: (CYLINDER, np.array([0.2, 0.5]), None),
    5: (MESH, None, CUBE_MESH), 6: (MESH, None, TETRA),
}  # fmt: skip


@pytest.mark.parametrize("sb", [1, 2, 3, 4, 5, 6])
def test_points_appear_exactly_when_the_pair_comes_within_the_band(shapes, sb):
    """B lowered onto A through the band: no points while farther than the band, then the
    deepest point at the brute-force signed distance."""
    band = 1e-3
    R = rot("xyz", [10, 20, 30])
    assert len(collide(shapes, 0, I3, np.zeros(3), sb, R, np.array([0.0, 0.0, 3.0]), band=band).gap) == 0
    def sd_at(lift: float, refine: bool) -> float:
        ref = signed_distance(FIXTURE_REFERENCE[0], I3, np.zeros(3), FIXTURE_REFERENCE[sb], R, np.array([0.05, 0.0, lift]), refine)
        return ref[0]

    # the lift at which B touches A; the sampled reference lies below the true one
    coarse = brentq(sd_at, 0.0, 3.0, args=(False,), xtol=1e-6)
    top = brentq(sd_at, coarse - 0.05, coarse, args=(True,), xtol=1e-7)
    seen = set()
    for lift in top + np.array([5e-3, 2e-3, 1.5e-3, 5e-4, 0.0, -5e-4, -2e-3]):
        p = np.array([0.05, 0.0, lift])
        sd, _ = signed_distance(FIXTURE_REFERENCE[0], I3, np.zeros(3), FIXTURE_REFERENCE[sb], R, p)
        c = collide(shapes, 0, I3, np.zeros(3), sb, R, p, band=band)
        if sd > band + 1e-6:
            assert len(c.gap) == 0, (lift, sd)
            seen.add("apart")
        elif sd < band - 1e-6:
            seen.add("touching")
            assert len(c.gap) >= 1, (lift, sd)
            assert c.gap.min() == pytest.approx(sd, abs=1e-5 if sb == 4 else 1e-7)
    assert seen == {"apart", "touching"}


def test_boxes_face_to_face_with_their_sides_in_line_touch_only_where_they_meet():
    """The chests of two humanoids pushed face to face (0.22 x 0.32 x 0.42 m boxes, faces 3°
    apart, touching along the lower edge; their sides in line to within 1e-10 m, as in
    test/simulator/test_two_robots.py): the manifold is that edge, at its gap, whichever side
    of the line the sides lie. (Clipping one face by the other, an edge within the 2-D
    tolerance of the clip edge with its ends on either side of the test put a point far off
    both faces, 17 mm deep where the boxes are apart.)"""
    shapes = pack_shapes([ShapeSpec(BOX, np.array([0.22, 0.32, 0.42]))] * 2)
    R_a = np.array([[0.9550473140251761, -6.750612343172676e-10, 0.2964534161943436],
                    [9.247885357472285e-10, 1.0, -7.021527208610059e-10],
                    [-0.2964534161943436, 9.447457907734037e-10, 0.9550473140251761]])  # fmt: skip
    p_a = np.array([0.2375049065136717, 3.628199217433866e-10, 1.220209961777646])
    R_b = np.array([[-0.9696329539179285, 1.0968906928539134e-09, 0.24456478625589734],
                    [-8.86001337585645e-10, -1.0, 9.723174065897424e-10],
                    [0.2445647862558973, 7.26106271348359e-10, 0.9696329539179284]])  # fmt: skip
    p_b = np.array([0.4793822244489207, -2.4288377303722165e-10, 1.2340379333010618])
    half = np.array([0.11, 0.16, 0.21])
    for dy in np.linspace(-3e-9, 3e-9, 13):
        m = collide(shapes, 0, R_a, p_a + [0.0, dy, 0.0], 1, R_b, p_b, 2e-4)
        assert len(m.gap) == 2
        for xa, xb, gap in zip(m.point_a, m.point_b, m.gap):
            assert np.all(np.abs(R_a.T @ (xa - p_a - [0.0, dy, 0.0])) <= half + 1e-8)  # on box a
            assert np.all(np.abs(R_b.T @ (xb - p_b)) <= half + 1e-8)  # on box b
            assert -1e-5 < gap < 0.0  # the edge, 4.6 µm in
