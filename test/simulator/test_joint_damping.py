"""URDF joint damping in the step: the decay rate of a damped joint, stability where damping
dominates a light link (icub's wrists and neck), and the terminal velocity tau / D."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.simulator import Simulator, SimulatorConfig

NO_GROUND = SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3))


def pendulum(link_mass: float, damping: float) -> tuple[Simulator, float]:
    """A one-link pendulum in zero gravity; returns the simulator and the link's inertia
    about the joint axis [kg m^2] (box 0.05 x 0.05 x 1 m, COM 0.5 m below the joint)."""
    sim = Simulator(load_urdf(chain_urdf(1, link_mass=link_mass, damping=damping)), NO_GROUND)
    inertia = link_mass * (0.05**2 + 1.0) / 12.0 + link_mass * 0.25
    return sim, inertia


def test_damped_joint_decays_at_the_rate_d_over_i() -> None:
    sim, inertia = pendulum(1.0, 0.5)
    sim.set_state(np.zeros(1), np.array([2.0]))
    for _ in range(1000):
        r = sim.step()
    # v(t) = v0 exp(-D t / I); the implicit damping term changes the rate by O(D dt / I) = 1.5e-3
    assert r.v[0] == pytest.approx(2.0 * np.exp(-0.5 * 1.0 / inertia), rel=3e-3)


def test_damping_far_above_the_link_inertia_stays_stable_and_only_dissipates() -> None:
    sim, inertia = pendulum(1e-5, 1.0)
    assert 1.0 * sim.config.dt / inertia > 100.0  # explicit damping diverges above ~2.8
    sim.set_state(np.zeros(1), np.array([3.0]))
    v = [3.0]
    for _ in range(100):
        v.append(float(sim.step().v[0]))
    v = np.array(v)
    assert np.all(np.isfinite(v))
    assert np.all(v[1:] >= 0.0) and np.all(np.diff(v) <= 0.0)  # no overshoot, no gain
    assert v[-1] < 1e-6 * v[0]


def test_a_constant_torque_reaches_the_terminal_velocity_tau_over_d() -> None:
    for mass in (1.0, 1e-5):
        sim, _ = pendulum(mass, 2.0)
        for _ in range(3000):
            r = sim.step(np.array([0.5]))
        assert r.v[0] == pytest.approx(0.25, rel=1e-6)  # 18 time constants I / D
