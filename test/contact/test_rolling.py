"""Round bodies against the environment: exact contact geometry, rolling at the closed-form rate.

A uniform body of radius r and axial inertia I rolling without slip down a slope of angle α
accelerates at g sin α / (1 + I / (m r²)): 5/7 g sin α for a solid sphere, 2/3 for a solid
cylinder on its side.
"""

import numpy as np
import pytest
from contact_scenes import G

from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation
from humanoid_sim.contact.virtual_link import ContactKind, classify_patch
from humanoid_sim.dynamics.spatial import axis_angle_to_rotation, quaternion_to_rotation, rotation_to_quaternion
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import round_body_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

ALPHA = np.radians(20.0)
MASS = 1.0
R_ACROSS = rpy_to_rotation([np.pi / 2, 0.0, 0.0])  # the link's z axis along world -y (across a slope about y)


def _slope_sim(urdf: str, radius: float, R_body_on_slope: np.ndarray, dt: float = 1e-3):
    """The body resting on the top face of a static box tilted by ALPHA about y (0.2 m thick).
    Returns the simulator, its model, the start position and the slope's axes (x downhill, z normal)."""
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, ALPHA, 0.0]), np.array([40.0, 4.0, 0.2]), Material(1.0, 0.8, 0.0))
    Rs = rpy_to_rotation([0.0, ALPHA, 0.0])
    model = load_urdf(urdf)
    sim = Simulator(model, SimulatorConfig(dt=dt, environment=Environment(ground=None, boxes=(slope,))))
    p0 = Rs[:, 2] * (0.1 + radius)
    sim.set_state(np.concatenate([p0, rotation_to_quaternion(Rs @ R_body_on_slope)]), np.zeros(6))
    return sim, model, p0, Rs


def _roll(sim: Simulator, p0: np.ndarray, Rs: np.ndarray, radius: float, seconds: float):
    """Run; returns (downhill velocity of the centre at the end [m/s], largest |change| of the
    centre's height above the slope [m], largest tangential speed of the body's material point
    at the contact (slip) [m/s], steps without contact)."""
    n = round(seconds / sim.config.dt)
    worst_height = worst_slip = 0.0
    lost = 0
    for _ in range(n):
        res = sim.step()
        lost += not res.contacts
        R = quaternion_to_rotation(sim.q[3:7])
        v, w = R @ sim.v[:3], R @ sim.v[3:6]
        worst_height = max(worst_height, abs((sim.q[:3] - p0) @ Rs[:, 2]))
        # material point at the contact: v + w x (-r n), in the slope's plane
        worst_slip = max(worst_slip, float(np.linalg.norm((v + np.cross(w, -radius * Rs[:, 2])) @ Rs[:, :2])))
    return float(v @ Rs[:, 0]), worst_height, worst_slip, lost


@pytest.mark.parametrize(
    "kind, length, R_body, ratio",
    [("sphere", 0.0, np.eye(3), 5.0 / 7.0), ("cylinder", 0.3, R_ACROSS, 2.0 / 3.0), ("capsule", 0.3, R_ACROSS, None)],
)
def test_round_body_rolls_down_a_slope_at_the_closed_form_rate(kind, length, R_body, ratio):
    radius = 0.05
    sim, model, p0, Rs = _slope_sim(round_body_urdf(kind, MASS, radius, length), radius, R_body)
    axial = model.inertia_com[0][2, 2] if kind != "sphere" else model.inertia_com[0][1, 1]
    expected = 1.0 / (1.0 + axial / (MASS * radius**2))
    if ratio is not None:
        assert expected == pytest.approx(ratio, rel=1e-12)
    v, height, slip, lost = _roll(sim, p0, Rs, radius, 1.0)
    rate = v / 1.0  # constant acceleration from rest: v(1 s) / 1 s
    print(f"{kind}: {rate / (G * np.sin(ALPHA)):.5f} g sin(alpha), closed form {expected:.5f}")
    assert rate == pytest.approx(expected * G * np.sin(ALPHA), rel=5e-3)
    # in contact on every step, at its resting height, without slip
    assert lost == 0 and height < 1e-6 and slip < 1e-6


def test_cylinder_on_its_side_rests_at_its_radius_on_a_line_contact():
    r, length = 0.05, 0.3
    model = load_urdf(round_body_urdf("cylinder", MASS, r, length))
    sim = Simulator(model, SimulatorConfig(environment=Environment(ground=GroundPlane(0.0))))
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), np.pi / 2) @ axis_angle_to_rotation(np.array([0.0, 0.0, 1.0]), 0.3)
    sim.set_state(np.concatenate([[0.1, -0.2, r + 1e-4], rotation_to_quaternion(R)]), np.zeros(6))
    for _ in range(500):
        res = sim.step()
    (contact,) = res.contacts
    assert contact.kind == ContactKind.LINE and len(contact.points) == 2
    assert np.ptp(contact.points @ quaternion_to_rotation(sim.q[3:7])[:, 2]) == pytest.approx(length, rel=1e-9)
    assert abs(sim.q[2] - r) < 1e-5
    assert contact.wrench_world[2] == pytest.approx(MASS * G, rel=1e-6)
    assert np.linalg.norm(sim.v) < 1e-6


def _one_patch(r, length, R, p, env=None):
    model = load_urdf(round_body_urdf("cylinder", MASS, r, length))
    det = ContactDetector(model, env or Environment())
    patches = det.detect(np.asarray(R, float)[None], np.asarray(p, float)[None])
    return patches, det


def test_cylinder_contact_is_a_line_on_its_side_a_disc_on_its_end_and_a_rim_point_tilted():
    r, length = 0.05, 0.3
    # on its side: the lowest line, both ends exactly on the ground
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    (patch,), _ = _one_patch(r, length, R, [0, 0, r])
    area = classify_patch(patch)
    assert area.kind == ContactKind.LINE and len(patch.points) == 2
    assert np.allclose(patch.gap, 0.0, atol=1e-15) and np.allclose(patch.points[:, 2], 0.0, atol=1e-15)
    assert np.allclose(np.sort(patch.points[:, 1]), [-length / 2, length / 2])
    # standing on an end: a surface whose hull is the rim, centred under the axis
    (patch,), _ = _one_patch(r, length, np.eye(3), [0.2, 0.1, length / 2])
    area = classify_patch(patch)
    assert area.kind == ContactKind.SURFACE
    assert np.allclose(area.origin, [0.2, 0.1, 0.0], atol=1e-12)
    assert np.allclose(np.linalg.norm(area.hull_xy, axis=1), r)
    assert len(area.hull) >= 12 and np.all(patch.roll[:, 0] == 0.0)  # rim points are fixed to the body
    # tilted by 0.3 rad: one point, the lowest point of the lower rim
    R = axis_angle_to_rotation(np.array([0.0, 1.0, 0.0]), 0.3)
    low = R @ np.array([0.0, 0.0, -length / 2]) + r * np.array([np.cos(0.3), 0.0, -np.sin(0.3)])
    (patch,), _ = _one_patch(r, length, R, -low[2] * np.array([0, 0, 1.0]))
    assert classify_patch(patch).kind == ContactKind.POINT
    assert np.allclose(patch.points[0], [low[0], low[1], 0.0], atol=1e-12) and abs(patch.gap[0]) < 1e-12


def test_a_tilted_disc_in_a_wide_band_touches_at_its_lowest_rim_point():
    """With a detection band much wider than the contact tolerance (speculative contacts) a
    disc tilted by 2 degrees still touches at its exact lowest point, not at its rim."""
    r, length, tilt = 0.05, 0.3, np.radians(2.0)
    model = load_urdf(round_body_urdf("cylinder", MASS, r, length))
    det = ContactDetector(model, Environment(), tolerance=0.02, flat_tolerance=2e-4)
    R = axis_angle_to_rotation(np.array([0.0, 1.0, 0.0]), tilt)
    low = R @ np.array([0.0, 0.0, -length / 2]) + r * np.array([np.cos(tilt), 0.0, -np.sin(tilt)])
    (patch,) = det.detect(R[None], (-low[2] * np.array([0, 0, 1.0]))[None])
    assert len(patch.points) == 1 and abs(patch.gap[0]) < 1e-15
    assert np.allclose(patch.points[0], [low[0], low[1], 0.0], atol=1e-15)
    (patch,) = det.detect(np.eye(3)[None], np.array([[0.0, 0.0, length / 2]]))  # flat: its rim
    assert classify_patch(patch).kind == ContactKind.SURFACE and np.all(patch.roll[:, 0] == 0.0)


def test_cylinder_on_a_box_face_and_its_lowest_point():
    r, length = 0.05, 0.3
    platform = StaticBox("platform", np.array([0.0, 0.0, 0.1]), np.zeros(3), np.array([1.0, 1.0, 0.2]))
    env = Environment(ground=GroundPlane(0.0), boxes=(platform,))
    R = axis_angle_to_rotation(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    patches, det = _one_patch(r, length, R, [0, 0, 0.2 + r], env)
    (top,) = patches
    assert (top.element, top.surface) == (1, 4) and len(top.points) == 2
    assert np.allclose(top.points[:, 2], 0.2, atol=1e-15)
    R = axis_angle_to_rotation(np.array([0.0, 1.0, 0.0]), 0.7)
    assert det.lowest_height(R[None], np.array([[0.0, 0.0, 1.0]])) == pytest.approx(
        1.0 - length / 2 * np.cos(0.7) - r * np.sin(0.7), abs=1e-15
    )


def test_a_standing_cylinder_on_a_slope_does_not_creep():
    """Its rim points are fixed to the body: the sticking anchor holds it."""
    r, length = 0.05, 0.3
    alpha = np.radians(10.0)
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, alpha, 0.0]), np.array([4.0, 2.0, 0.2]))
    Rs = rpy_to_rotation([0.0, alpha, 0.0])
    sim = Simulator(load_urdf(round_body_urdf("cylinder", MASS, r, length)), SimulatorConfig(environment=Environment(None, (slope,))))
    p0 = Rs[:, 2] * (0.1 + length / 2)
    sim.set_state(np.concatenate([p0, rotation_to_quaternion(Rs)]), np.zeros(6))
    for _ in range(1000):
        res = sim.step()
    assert res.contacts[0].kind == ContactKind.SURFACE and res.contacts[0].sticking
    assert np.linalg.norm(sim.q[:3] - p0) < 1e-6


def test_rolling_contact_row_has_the_contact_points_rate_not_the_material_points():
    """A sphere rolling at ω on flat ground: the material point under it accelerates up at
    r ω² while the contact point stays on the ground: the row's drift is the latter's."""
    r, w = 0.05, 20.0
    sim = Simulator(
        load_urdf(round_body_urdf("sphere", MASS, r)), SimulatorConfig(environment=Environment(ground=GroundPlane(0.0)))
    )
    sim.set_state(np.array([0.0, 0.0, r, 0.0, 0.0, 0.0, 1.0]), np.array([r * w, 0.0, 0.0, 0.0, w, 0.0]))
    sim.step()  # the step's contact table holds the row built at the start of the step
    tab = sim._tables[int(sim._out.counts[0]["table"])]
    assert int(sim._out.counts[0]["contacts"]) == 1 and tab.rolling[0]
    assert np.allclose(tab.vel[0], [0, 0, 0, 0, w, 0], atol=1e-15)
    # J̇v of the material point (0 for a body-frame base velocity held constant) plus ω x δ
    assert np.allclose(tab.drift[0], [0, 0, -r * w * w, 0, 0, 0], atol=1e-12)
