"""Seed 004's penalty method (SimulatorConfig(contact_method="penalty_volume")) against
closed-form physics, with the tolerances the method states (docs/penalty_volume.md): a
penalty contact penetrates by design, m g / (k A) for a box resting on a face of area A;
the regularised friction lets a held box creep at about ε r / sqrt(1 - r^2), r = tan α / μ_s.
"""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation
from humanoid_sim.contact.penalty_volume import PenaltyVolumeParams
from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.dynamics.kinematics import frame_placement
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.model import load_urdf
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum
from humanoid_sim.model.urdf_builder import free_box_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]
G = 9.81
MASS = 0.3  # [kg] a light box link
SIZE = (0.2, 0.1, 0.05)  # [m]
AREA = SIZE[0] * SIZE[1]
PARAMS = PenaltyVolumeParams()
MATERIAL = Material(0.5, 0.4, 0.0)


def config(environment=None, **kw) -> SimulatorConfig:
    env = environment if environment is not None else Environment(ground=GroundPlane(0.0, MATERIAL))
    return SimulatorConfig(dt=1e-3, environment=env, contact_method="penalty_volume", **kw)


def box_sim(environment=None) -> Simulator:
    return Simulator(load_urdf(free_box_urdf(MASS, SIZE)), config(environment))


def resting_depth(mass=MASS, area=AREA, cos=1.0) -> float:
    return mass * G * cos / (PARAMS.stiffness * area)


def test_box_at_rest_carries_its_weight_at_the_stated_depth_without_creep():
    sim = box_sim()
    sim.set_state(np.array([0, 0, SIZE[2] / 2, 0, 0, 0, 1.0]), np.zeros(6))
    for _ in range(500):
        r = sim.step()
    x0 = r.q[:2].copy()
    for _ in range(1000):
        r = sim.step()
    (c,) = r.contacts
    assert c.kind == ContactKind.SURFACE
    assert 2 <= r.rounds <= 6  # the implicit passes
    assert c.wrench_world[2] == pytest.approx(MASS * G, rel=1e-9)
    assert np.allclose(c.wrench_world[[0, 1, 3, 4, 5]], 0.0, atol=1e-9)
    assert r.max_penetration == pytest.approx(resting_depth(), rel=1e-6)
    assert SIZE[2] / 2 - r.q[2] == pytest.approx(resting_depth(), rel=1e-6)
    assert np.linalg.norm(r.q[:2] - x0) < 1e-12  # no creep on flat ground
    # the points' forces carry the contact's force and moment (consistent loads)
    assert np.allclose(c.point_forces.sum(axis=0), c.wrench_world[:3], atol=1e-9)
    moment = np.cross(c.points - c.origin, c.point_forces).sum(axis=0)
    assert np.allclose(moment, c.wrench_world[3:], atol=1e-9)


def slope_sim(alpha: float) -> Simulator:
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, alpha, 0.0]), np.array([4.0, 2.0, 0.2]), MATERIAL)
    sim = box_sim(Environment(ground=None, boxes=(slope,)))
    R = rpy_to_rotation([0.0, alpha, 0.0])
    p = R[:, 2] * (0.1 + SIZE[2] / 2 - resting_depth(cos=np.cos(alpha)))
    sim.set_state(np.concatenate([p, rotation_to_quaternion(R)]), np.zeros(6))
    return sim


@pytest.mark.parametrize("alpha_deg", [15.0, 25.0])
def test_box_holds_on_an_incline_below_static_friction_creeping_at_the_stated_rate(alpha_deg):
    alpha = np.radians(alpha_deg)
    ratio = np.tan(alpha) / MATERIAL.mu_s
    assert ratio < 1.0
    creep = PARAMS.slip_regularisation * ratio / np.sqrt(1.0 - ratio**2)  # [m/s]
    sim = slope_sim(alpha)
    p0 = sim.q[:3].copy()
    for _ in range(1000):
        r = sim.step()
    moved = np.linalg.norm(r.q[:3] - p0)
    assert moved < 1.5 * creep * 1.0  # 1 s at most at the creep speed (plus the settling)
    assert abs(r.v[0]) == pytest.approx(creep, rel=0.05)  # body x: down the slope


def test_box_slides_down_an_incline_above_static_friction_at_the_dynamic_rate():
    alpha = np.radians(30.0)
    assert np.tan(alpha) > MATERIAL.mu_s
    sim = slope_sim(alpha)
    for _ in range(300):
        r = sim.step()
    v0 = r.v[0]  # body x: down the slope [m/s]
    for _ in range(500):
        r = sim.step()
    (c,) = r.contacts
    assert not c.sticking
    expected = G * (np.sin(alpha) - MATERIAL.mu_d * np.cos(alpha))
    assert (r.v[0] - v0) / 0.5 == pytest.approx(expected, rel=1e-3)


def test_dropped_tilted_box_comes_to_rest_without_bouncing_above_its_start():
    sim = box_sim()
    R = rpy_to_rotation([0.2, 0.3, 0.1])
    sim.set_state(np.concatenate([[0.0, 0.0, 0.3], rotation_to_quaternion(R)]), np.zeros(6))
    z0 = sim.q[2]
    heights = []
    for _ in range(2000):
        r = sim.step()
        heights.append(r.q[2])
        assert np.all(np.isfinite(r.q))
    assert max(heights) <= z0
    assert np.linalg.norm(r.v) < 1e-6
    assert SIZE[2] / 2 - r.q[2] == pytest.approx(resting_depth(), rel=1e-3)  # came to rest flat


def test_spinning_box_slows_by_the_distributed_friction_torque():
    """dω/dt = -μ_d m g r̄ / I_z, r̄ the mean distance from the centre over the face (the
    quadrature of the friction torque by the face's 12 elements: within 5 %)."""
    sim = box_sim()
    sim.set_state(np.array([0, 0, SIZE[2] / 2 - resting_depth(), 0, 0, 0, 1.0]), np.array([0, 0, 0, 0, 0, 5.0]))
    a, b = SIZE[0] / 2, SIZE[1] / 2
    n = 400
    x = -a + 2 * a * (np.arange(n) + 0.5) / n
    y = -b + 2 * b * (np.arange(n) + 0.5) / n
    mean_distance = np.hypot(*np.meshgrid(x, y)).mean()
    inertia = MASS * (SIZE[0] ** 2 + SIZE[1] ** 2) / 12
    expected = -MATERIAL.mu_d * MASS * G * mean_distance / inertia
    w = [sim.step().v[5] for _ in range(40)]
    rate = (w[35] - w[5]) / 0.030
    assert rate == pytest.approx(expected, rel=0.05)
    for _ in range(200):
        r = sim.step()
    assert abs(r.v[5]) < 1e-9  # stopped, without spinning back
    assert np.linalg.norm(r.v[:2]) < 1e-9


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def test_free_flight_is_unaffected(humanoid):
    sim = Simulator(humanoid, config(Environment(ground=GroundPlane(0.0, MATERIAL))))
    q = sim.reset("stand")
    q[2] += 2.0
    sim.set_state(q, np.zeros(humanoid.nv))
    for _ in range(200):
        r = sim.step()
        assert not r.contacts
    assert r.v[2] == pytest.approx(-G * 0.2, rel=1e-9)


def test_bundled_humanoid_stands_under_a_holding_controller(humanoid):
    from test_humanoid_standing import holding_torque, joint_gains

    sim = Simulator(humanoid, SimulatorConfig(dt=1e-3, contact_method="penalty_volume"))
    q0 = sim.reset("stand")
    feet = ("l_sole", "r_sole")
    kp, kd = joint_gains(humanoid, q0, 30.0)
    soles = [frame_placement(humanoid, q0, f)[:3, 3] for f in feet]
    mg = humanoid.total_mass * G
    sole_area = 2 * 0.19 * 0.12
    for i in range(1500):
        r = sim.step(holding_torque(humanoid, sim.q, sim.v, q0, feet, kp, kd))
        assert np.all(np.isfinite(r.q))
    fz = sum(c.wrench_world[2] for c in r.contacts)
    assert fz == pytest.approx(mg, rel=1e-3)
    assert {c.link for c in r.contacts} == {"l_foot", "r_foot"}
    # the soles sink m g / (k A) on average; the holding pose leans them onto the heels
    assert r.max_penetration < 3.0 * mg / (PARAMS.stiffness * sole_area)
    for f, s0 in zip(feet, soles):
        assert np.linalg.norm(frame_placement(humanoid, r.q, f)[:2, 3] - s0[:2]) < 1e-5


def test_passive_fall_from_stand_comes_to_rest(humanoid):
    sim = Simulator(humanoid, SimulatorConfig(dt=1e-3, contact_method="penalty_volume"))
    sim.reset("stand")
    pen = 0.0
    for _ in range(3000):
        r = sim.step()
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        pen = max(pen, r.max_penetration)
    assert np.linalg.norm(r.v[:6]) < 0.05  # the base at rest (a free wrist may still swing)
    # the impact lands on box corners and edges, which stand for point_area / line_width
    # (docs/penalty_volume.md): a few centimetres at the impact, millimetres at rest
    assert pen < 0.05
    assert r.max_penetration < 0.005


def _pendulum(seconds: float) -> None:
    spec = BoxPendulum()
    env = Environment(ground=GroundPlane(material=MATERIAL))
    sim = Simulator(box_pendulum(spec), config(env), poses={})
    sim.set_state(spec.initial_configuration(), np.zeros(sim.model.nv))
    pen = 0.0
    for _ in range(int(round(seconds / 1e-3))):
        r = sim.step()
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        pen = max(pen, r.max_penetration)
    assert pen < 0.02


def test_box_pendulum_strikes_the_floor_for_one_second():
    _pendulum(1.0)


@pytest.mark.slow
def test_box_pendulum_five_seconds():
    _pendulum(5.0)
