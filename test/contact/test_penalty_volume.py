"""Seed 004's penetration-volume quadrature (contact/penalty_volume.py) against the exact
intersection volume of a box face with the half space below a surface, and the wrench of
the linear pressure field k d(x, y) it carries."""

import numpy as np
import pytest

from humanoid_sim.contact.penalty_volume import PenaltyVolumeParams, allocate_penalty_volume, contact_elements_nb
from humanoid_sim.contact.step_data import allocate_contact_table

POINT, LINE, SURFACE = 1, 2, 3
HALF = (0.1, 0.05)  # [m] half extents of the face
NO_CANDIDATES = np.zeros(0, np.int64)
NO_RADII = np.zeros(0)


def face_table(depth):
    """A table with one surface contact: a 0.2 x 0.1 face, corners ccw, depth(x, y) [m]
    (positive = penetrating) at its corners."""
    tab = allocate_contact_table(2, 8, 6)
    corners = [(-HALF[0], -HALF[1]), (HALF[0], -HALF[1]), (HALF[0], HALF[1]), (-HALF[0], HALF[1])]
    for t, (x, y) in enumerate(corners):
        tab.xy[t] = (x, y)
        tab.gap[t] = -depth(x, y)
        tab.hull[t] = t
        tab.hit[t] = -1
    tab.kind[0] = SURFACE
    tab.point_count[0] = tab.hull_count[0] = 4
    return tab


def elements(tab, params=PenaltyVolumeParams()):
    pv = allocate_penalty_volume(params, 2, 8, 6)
    n = contact_elements_nb(pv, tab, 1, NO_CANDIDATES, NO_RADII)
    assert n > 0
    return pv.x[:n], pv.y[:n], pv.w[:n], pv.d[:n]


def exact_moments(depth, cells=(2000, 1000)):
    """∫ max(0, d) dA, ∫ x max(0, d) dA, ∫ y max(0, d) dA over the face by the midpoint rule
    on a fine grid (an independent reference)."""
    hx = 2 * HALF[0] / cells[0]
    hy = 2 * HALF[1] / cells[1]
    x = -HALF[0] + hx * (np.arange(cells[0]) + 0.5)
    y = -HALF[1] + hy * (np.arange(cells[1]) + 0.5)
    X, Y = np.meshgrid(x, y, indexing="ij")
    D = np.maximum(0.0, depth(X, Y))
    dA = hx * hy
    return D.sum() * dA, (X * D).sum() * dA, (Y * D).sum() * dA


def test_flat_face_pressed_evenly_has_volume_area_times_depth_at_the_centre():
    d0 = 1e-3
    x, y, w, d = elements(face_table(lambda x, y: d0 + 0 * x))
    area = 4 * HALF[0] * HALF[1]
    assert w.sum() == pytest.approx(area, rel=1e-12)
    assert (w * d).sum() == pytest.approx(area * d0, rel=1e-12)
    assert abs((w * d * x).sum()) < 1e-15 and abs((w * d * y).sum()) < 1e-15  # centroid at the centre


@pytest.mark.parametrize("d0, ax, ay", [(1e-3, 5e-3, 0.0), (1e-3, 2e-3, -4e-3), (2e-4, 1e-2, 6e-3), (-3e-4, 1e-2, 1e-2)])
def test_tilted_face_volume_and_centroid_are_exact(d0, ax, ay):
    """A face tilted about both axes, fully or partly below the surface (then the quadrature
    clips the fan's triangles at d = 0)."""

    def depth(x, y):
        return d0 + ax * x + ay * y

    x, y, w, d = elements(face_table(depth))
    V, Mx, My = exact_moments(depth)
    assert V > 0
    assert (w * d).sum() == pytest.approx(V, rel=1e-5)
    assert (w * d * x).sum() == pytest.approx(Mx, rel=1e-4, abs=1e-12)
    assert (w * d * y).sum() == pytest.approx(My, rel=1e-4, abs=1e-12)
    assert np.all(d >= 0.0)


def test_face_out_of_the_surface_has_no_elements():
    pv = allocate_penalty_volume(PenaltyVolumeParams(), 2, 8, 6)
    assert contact_elements_nb(pv, face_table(lambda x, y: -1e-4 + 0 * x), 1, NO_CANDIDATES, NO_RADII) == 0


def test_wrench_of_a_linear_pressure_field():
    """The elements' forces k w d give the resultant k V and the moment of the pressure
    p = k (d0 + a x + b y) over the rectangle: n_x = ∫ y p dA = k b A hy^2 / 3,
    n_y = -∫ x p dA = -k a A hx^2 / 3 (about the centre, virtual-link frame)."""
    k = PenaltyVolumeParams().stiffness
    d0, a, b = 1e-3, 4e-3, -6e-3
    x, y, w, d = elements(face_table(lambda x, y: d0 + a * x + b * y))
    f = k * w * d
    area = 4 * HALF[0] * HALF[1]
    assert f.sum() == pytest.approx(k * d0 * area, rel=1e-12)
    assert (y * f).sum() == pytest.approx(k * b * area * HALF[1] ** 2 / 3, rel=1e-12)
    assert (-x * f).sum() == pytest.approx(-k * a * area * HALF[0] ** 2 / 3, rel=1e-12)


def test_line_and_point_contacts_stand_for_their_stated_areas():
    params = PenaltyVolumeParams(line_width=0.02, point_area=5e-4)
    tab = allocate_contact_table(2, 8, 6)
    tab.kind[0] = LINE
    tab.point_count[0] = tab.hull_count[0] = 2
    tab.xy[0], tab.xy[1] = (-0.1, 0.0), (0.1, 0.0)
    tab.gap[0], tab.gap[1] = -1e-3, 1e-3  # half the edge penetrates, linearly
    tab.hull[0], tab.hull[1] = 0, 1
    tab.hit[:2] = -1
    tab.kind[1] = POINT
    tab.point_start[1] = tab.hull_start[1] = 2
    tab.point_count[1] = tab.hull_count[1] = 1
    tab.gap[2] = -2e-3
    tab.hull[2] = 0
    tab.hit[2] = -1
    pv = allocate_penalty_volume(params, 2, 8, 6)
    n = contact_elements_nb(pv, tab, 2, NO_CANDIDATES, NO_RADII)
    line = pv.contact[:n] == 0
    # the penetrating half (0.1 m) of the strip: volume 0.02 x ∫ d = 0.02 x 0.1 x 1e-3 / 2
    assert (pv.w[:n] * pv.d[:n])[line].sum() == pytest.approx(0.02 * 0.1 * 1e-3 / 2, rel=1e-12)
    assert (pv.w[:n] * pv.d[:n])[~line].sum() == pytest.approx(5e-4 * 2e-3, rel=1e-12)


def test_sphere_point_stands_for_its_cap():
    """A point detected on a sphere of radius r: the area π r d, so k w d = k π r d^2 (the
    cap's volume to first order)."""
    tab = allocate_contact_table(1, 4, 6)
    tab.kind[0] = POINT
    tab.point_count[0] = tab.hull_count[0] = 1
    tab.gap[0] = -0.01
    tab.hit[0] = 0
    pv = allocate_penalty_volume(PenaltyVolumeParams(point_area=1e-6), 1, 4, 6)
    n = contact_elements_nb(pv, tab, 1, np.zeros(1, np.int64), np.array([0.1]))
    assert n == 1
    assert pv.w[0] == pytest.approx(np.pi * 0.1 * 0.01)


@pytest.mark.parametrize("field, value", [("stiffness", 0.0), ("damping", -1.0), ("slip_regularisation", np.nan),
                                          ("point_area", -1e-3), ("implicit", 1)])  # fmt: skip
def test_params_are_validated(field, value):
    with pytest.raises(ValueError, match=field):
        PenaltyVolumeParams(**{field: value})
