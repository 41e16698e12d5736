"""Wrenches on named links: Jᵀ F checked by virtual power, and by the motion of a free box."""

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics import frame_placement, integrate
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model import load_urdf
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.urdf_builder import chain_urdf, free_box_urdf
from humanoid_sim.simulator import Simulator, SimulatorConfig
from humanoid_sim.simulator.link_wrenches import LinkWrench, generalized_force


def random_state(model, rng):
    q = neutral_configuration(model).astype(float)
    q[model.nq - model.nj :] = rng.uniform(-0.5, 0.5, model.nj)
    if model.floating_base:
        q[0:3] = rng.uniform(-1, 1, 3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
    return q


def test_generalized_force_does_the_power_of_the_wrench(rng):
    # For any velocity v: F · (twist of the point) = (Jᵀ F) · v, the twist by finite differences.
    model = load_urdf(chain_urdf(3, fixed_base=False))  # a floating base and three joints
    link = model.body_names[-1]
    q = random_state(model, rng)
    v = rng.normal(size=model.nv)
    wrench = rng.normal(size=6) * 10.0
    point = rng.normal(size=3) * 0.1
    tau = generalized_force(model, q, {link: LinkWrench(wrench, point)})
    eps = 1e-6
    X0 = frame_placement(model, q, link)
    X1 = frame_placement(model, integrate(model, q, v, eps), link)
    p0 = X0[:3, :3] @ point + X0[:3, 3]
    p1 = X1[:3, :3] @ point + X1[:3, 3]
    dR = (X1[:3, :3] - X0[:3, :3]) / eps @ X0[:3, :3].T
    omega = np.array([dR[2, 1], dR[0, 2], dR[1, 0]])
    power = wrench[:3] @ ((p1 - p0) / eps) + wrench[3:] @ omega
    assert tau @ v == pytest.approx(power, rel=1e-4, abs=1e-6)


def test_a_force_at_the_centre_of_mass_accelerates_a_free_box_by_f_over_m():
    model = load_urdf(free_box_urdf(mass=2.0))
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=Environment(ground=None), gravity=np.zeros(3)), poses={})
    q = neutral_configuration(model).astype(float)
    q[3:7] = [0.0, 0.0, np.sin(0.3), np.cos(0.3)]  # yawed: the base velocity is in the base frame
    sim.set_state(q, np.zeros(model.nv))
    force = np.array([4.0, -2.0, 1.0])
    result = sim.step(None, link_wrenches={"box": np.concatenate([force, np.zeros(3)])})
    R = frame_placement(model, result.q, "box")[:3, :3]
    np.testing.assert_allclose(R @ result.v[0:3], force / 2.0 * 1e-3, atol=1e-12)
    np.testing.assert_allclose(result.v[3:6], 0.0, atol=1e-12)


def test_bad_wrenches_are_refused_naming_the_problem():
    model = load_urdf(free_box_urdf())
    q = neutral_configuration(model)
    with pytest.raises(UnknownNameError, match=r"unknown link 'lid' of robot 'box'; valid links: box"):
        generalized_force(model, q, {"lid": np.zeros(6)})
    with pytest.raises(InvalidValueError, match="6 finite numbers"):
        generalized_force(model, q, {"box": [1.0, np.nan, 0, 0, 0, 0]})
    with pytest.raises(InvalidValueError, match="6 finite numbers"):
        generalized_force(model, q, {"box": [1.0, 2.0]})
    with pytest.raises(InvalidValueError, match="point .* 3 finite numbers"):
        generalized_force(model, q, {"box": LinkWrench(np.zeros(6), np.array([0.0, np.inf, 0.0]))})
    assert not generalized_force(model, q, {}).any()
