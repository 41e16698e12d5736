"""URDF joint Coulomb friction in the step (a held row |λ| <= F, or the known torque F
against the motion): static holding, the sliding deceleration F / I, stopping dead, and a
pendulum that comes to rest where gravity's torque falls below F."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.simulator import Simulator, SimulatorConfig

INERTIA = (0.05**2 + 1.0) / 12.0 + 0.25  # the 1 kg, 1 m link about its joint [kg m^2]


def pendulum(friction: float, gravity: bool = False) -> Simulator:
    cfg = SimulatorConfig(environment=Environment(ground=None), gravity=None if gravity else np.zeros(3))
    return Simulator(load_urdf(chain_urdf(1, friction=friction)), cfg)


@pytest.mark.parametrize("torque", [0.5, 1.99])
def test_a_torque_below_the_friction_moves_nothing(torque: float) -> None:
    sim = pendulum(2.0)
    for _ in range(500):
        r = sim.step(np.array([torque]))
    assert abs(r.v[0]) < 1e-12 and abs(r.q[0]) < 1e-12  # held (rounding only)


def test_a_torque_above_the_friction_accelerates_at_tau_minus_f_over_i() -> None:
    sim = pendulum(2.0)
    for _ in range(500):
        r = sim.step(np.array([5.0]))
    assert r.v[0] == pytest.approx((5.0 - 2.0) / INERTIA * 0.5, rel=1e-9)


def test_a_spinning_joint_decelerates_at_f_over_i_and_stops_dead() -> None:
    sim = pendulum(1.5)
    sim.set_state(np.zeros(1), np.array([2.0]))
    v = []
    for _ in range(1000):
        v.append(sim.step().v[0])
    v = np.array(v)
    t_stop = 2.0 * INERTIA / 1.5  # 0.445 s
    k = int(0.3 / sim.config.dt) - 1  # v at t = 0.3 s
    assert v[k] == pytest.approx(2.0 - 1.5 / INERTIA * 0.3, rel=1e-9)
    assert np.all(np.diff(v) <= 0.0) and np.all(v >= 0.0)  # never reverses
    assert np.all(np.abs(v[int(t_stop / sim.config.dt) + 2 :]) < 1e-12)  # stopped dead, no chatter


def test_a_swinging_pendulum_comes_to_rest_where_gravity_is_below_the_friction() -> None:
    sim = pendulum(2.0, gravity=True)
    sim.set_state(np.array([1.2]), np.zeros(1))
    energy = []
    for _ in range(4000):
        r = sim.step()
        energy.append(0.5 * INERTIA * r.v[0] ** 2 - 9.81 * 0.5 * np.cos(r.q[0]))
    assert abs(r.v[0]) < 1e-12
    assert 9.81 * 0.5 * abs(np.sin(r.q[0])) <= 2.0 + 1e-9  # held by friction
    assert abs(r.q[0]) > 0.05  # not at the bottom: friction holds it off-centre
    # friction only dissipates (the held-force integration of the stopping step leaves < 1e-6 J)
    assert np.all(np.diff(energy) <= 1e-6)
