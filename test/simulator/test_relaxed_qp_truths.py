"""Seed 002's contact method (SimulatorConfig(contact_method="relaxed_qp")) on whole scenes.

Truths, with the method's own tolerances (docs/relaxed_qp.md): at rest Σ f_z = m g and the
per-vertex forces add up to the contact's wrench; the penetration at rest is the
regularisation's, ε x_n / K per vertex (below 10 µm for these scenes at dt = 1 ms); a
static vertex keeps its reference point, so nothing creeps; a box on an incline holds
below tan α = μ_s (also between μ_d and μ_s: the hysteresis) and slides at
g (sin α - μ_d cos α) above it; a box dropped at zero restitution does not bounce and comes
to rest; without contacts the step is the virtual-link one; the bundled humanoid stands
under a holding controller without slipping and falls passively to rest; seed 002's
pendulum runs at dt = 1 ms without failure.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contact"))

from contact_scenes import BOX_MASS, BOX_SIZE, G, box_model, box_q  # noqa: E402
from humanoid_sim import package_file  # noqa: E402
from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation  # noqa: E402
from humanoid_sim.control.holding_controller import HoldingController  # noqa: E402
from humanoid_sim.dynamics.kinematics import frame_placement  # noqa: E402
from humanoid_sim.dynamics.spatial import rotation_to_quaternion  # noqa: E402
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

HALF_Z = BOX_SIZE[2] / 2
REST_PENETRATION = 1e-5  # [m] ε x_n / K at rest (docs/relaxed_qp.md: 5 µm for the box)


def _config(**kw) -> SimulatorConfig:
    return SimulatorConfig(contact_method="relaxed_qp", **kw)


def _ground_box(material: Material = Material(1.0, 0.4, 0.0)) -> Simulator:
    env = Environment(ground=GroundPlane(0.0, material))
    return Simulator(box_model(), _config(environment=env))


def test_a_box_resting_on_the_ground_carries_m_g_without_creep_or_sinking():
    sim = _ground_box()
    sim.set_state(box_q([0.0, 0.0, HALF_Z], np.eye(3)), np.zeros(6))
    for _ in range(200):  # settles
        r = sim.step()
    p0 = r.q[:3].copy()
    for _ in range(1500):
        r = sim.step()
        (c,) = r.contacts
        assert c.wrench_world[2] == pytest.approx(BOX_MASS * G, rel=1e-6)
        assert r.max_penetration < REST_PENETRATION
    assert c.sticking and c.point_forces.shape == (4, 3)
    np.testing.assert_allclose(c.point_forces.sum(axis=0), c.wrench_world[:3], atol=1e-9)
    assert np.all(c.point_forces[:, 2] > 0.0)
    assert np.linalg.norm(r.q[:3] - p0) < 1e-9  # no creep over 1.5 s
    assert np.linalg.norm(r.v) < 1e-6


def _slope(alpha: float, material: Material) -> tuple[Simulator, np.ndarray]:
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, alpha, 0.0]), np.array([4.0, 2.0, 0.2]), material)
    R = rpy_to_rotation([0.0, alpha, 0.0])
    sim = Simulator(box_model(), _config(environment=Environment(ground=None, boxes=(slope,))))
    sim.set_state(np.concatenate([R[:, 2] * (0.1 + HALF_Z), rotation_to_quaternion(R)]), np.zeros(6))
    return sim, R[:, 0]


@pytest.mark.parametrize("alpha_deg, mu_s, mu_d", [(20.0, 0.5, 0.4), (10.0, 0.2, 0.15)])
def test_a_box_on_an_incline_holds_below_the_static_limit(alpha_deg, mu_s, mu_d):
    alpha = math.radians(alpha_deg)
    assert math.tan(alpha) < mu_s  # (10 deg: tan = 0.176 > mu_d = 0.15, held by static friction alone)
    sim, downhill = _slope(alpha, Material(mu_s, mu_d, 0.0))
    p0 = sim.q[:3].copy()
    for _ in range(200):
        r = sim.step()
    settled = (r.q[:3] - p0) @ downhill
    assert abs(settled) < 1e-5  # the regularisation's give: ε x_t / K per vertex
    for _ in range(1000):
        r = sim.step()
    assert abs((r.q[:3] - p0) @ downhill - settled) < 1e-9  # then no creep
    (c,) = r.contacts
    assert c.sticking
    assert np.hypot(*c.wrench_local[:2]) == pytest.approx(BOX_MASS * G * math.sin(alpha), rel=1e-6)
    assert c.wrench_local[2] == pytest.approx(BOX_MASS * G * math.cos(alpha), rel=1e-6)


@pytest.mark.parametrize("alpha_deg, mu_s, mu_d", [(20.0, 0.3, 0.25), (30.0, 0.5, 0.3)])
def test_a_box_on_an_incline_slides_with_dynamic_friction_above_it(alpha_deg, mu_s, mu_d):
    alpha = math.radians(alpha_deg)
    assert math.tan(alpha) > mu_s
    sim, downhill = _slope(alpha, Material(mu_s, mu_d, 0.0))
    p0 = sim.q[:3].copy()
    s, t = [], []
    for _ in range(800):
        r = sim.step()
        s.append((r.q[:3] - p0) @ downhill)
        t.append(r.t)
    accel = 2.0 * np.polyfit(t[200:], s[200:], 2)[0]  # once w(|v_t|) of Eq. 21 is 1
    assert accel == pytest.approx(G * (math.sin(alpha) - mu_d * math.cos(alpha)), rel=1e-4)
    (c,) = r.contacts
    assert not c.sticking
    assert np.hypot(*c.wrench_local[:2]) == pytest.approx(mu_d * c.wrench_local[2], rel=1e-4)


def test_a_dropped_box_comes_to_rest_without_bouncing():
    sim = _ground_box(Material(1.0, 0.8, 0.0))
    R = rpy_to_rotation([0.1, -0.05, 0.3])
    sim.set_state(box_q([0.0, 0.0, 0.3], R), np.zeros(6))
    z0 = sim.q[2]
    heights, touched = [], []
    for _ in range(1500):
        r = sim.step()
        heights.append(r.q[2])
        touched.append(bool(r.contacts))
        assert np.all(np.isfinite(r.q))
    first = touched.index(True)
    assert max(heights[first:]) <= z0  # never higher than it fell
    # restitution 0: once down on its face it stays down (no rise beyond the settling)
    assert max(heights[first + 300 :]) - min(heights[first + 300 :]) < 1e-4
    assert abs(r.q[2] - HALF_Z) < REST_PENETRATION
    assert np.linalg.norm(r.v) < 1e-5
    assert sum(c.wrench_world[2] for c in r.contacts) == pytest.approx(BOX_MASS * G, rel=1e-6)


def test_free_flight_is_the_virtual_link_step():
    runs = []
    for method in ("virtual_link", "relaxed_qp"):
        sim = Simulator(box_model(), SimulatorConfig(environment=Environment(ground=None), contact_method=method))
        sim.set_state(box_q([0.0, 0.0, 1.0], rpy_to_rotation([0.3, 0.2, 0.1])),
                      np.array([0.5, -0.2, 3.0, 2.0, -4.0, 1.0]))  # fmt: skip
        runs.append(np.array([np.concatenate([sim.step().q, sim.v]) for _ in range(300)]))
    np.testing.assert_array_equal(runs[0], runs[1])


def _humanoid(method_config: SimulatorConfig) -> Simulator:
    return Simulator.from_urdf(package_file("urdf/humanoid.urdf"), pose="stand", config=method_config)


def test_the_humanoid_stands_under_a_holding_controller_without_slipping():
    sim = _humanoid(_config())
    ctl = HoldingController(sim.model)
    ctl.reset(sim.q)
    mg = sim.model.total_mass * G
    feet = ("l_foot", "r_foot")
    for _ in range(100):
        sim.step(ctl.update(sim.t, sim.q, sim.v))
    start = {f: frame_placement(sim.model, sim.q, f)[:3, 3] for f in feet}
    for _ in range(1400):
        r = sim.step(ctl.update(sim.t, sim.q, sim.v))
        # ε x_n / K with the light feet's large diagonal of B: tens of µm (docs/relaxed_qp.md)
        assert r.max_penetration < 1e-4
    assert {c.link for c in r.contacts} == set(feet)
    assert all(c.sticking for c in r.contacts)
    assert sum(c.wrench_world[2] for c in r.contacts) == pytest.approx(mg, rel=1e-3)
    for f in feet:  # a sticking vertex keeps its reference point: the soles stay put
        assert np.linalg.norm(frame_placement(sim.model, sim.q, f)[:3, 3] - start[f]) < 1e-5


def test_the_humanoid_falls_passively_to_rest_on_the_ground():
    sim = _humanoid(_config())
    z0 = sim.q[2]
    for _ in range(3500):
        r = sim.step()  # zero torque
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        assert r.max_penetration < 5e-3
    assert r.q[2] < 0.5 * z0  # down on the ground
    assert np.linalg.norm(r.v[:6]) < 0.05  # the trunk at rest (arms may still swing a little)
    assert sum(c.wrench_world[2] for c in r.contacts) == pytest.approx(sim.model.total_mass * G, rel=0.05)


def _pendulum(seconds: float) -> None:
    spec = BoxPendulum(links=10)
    env = Environment(ground=GroundPlane(material=Material(mu_s=1.0, mu_d=0.4)))
    sim = Simulator(box_pendulum(spec), _config(environment=env), poses={})
    sim.set_state(spec.initial_configuration(math.radians(60.0)), np.zeros(sim.model.nv))
    touched = False
    for _ in range(int(round(seconds / sim.config.dt))):
        r = sim.step()
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        assert r.max_penetration < 1e-3
        touched |= bool(r.contacts)
    assert touched


def test_seed_002_pendulum_runs_one_second_at_one_millisecond():
    _pendulum(1.0)


@pytest.mark.slow
def test_seed_002_pendulum_runs_five_seconds_at_one_millisecond():
    _pendulum(5.0)
