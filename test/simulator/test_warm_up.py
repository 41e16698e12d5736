"""warm_up: each scenario reaches the step path it is there for, and the state comes back exactly."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.simulator.warm_up import warm_up, warm_up_scenarios

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def simulator_with_limits(model) -> Simulator:
    provider = RangeOfMotionProvider(model, load_range_of_motion(REPO / "config" / "range_of_motion.yaml"))
    return Simulator(model, SimulatorConfig(dt=1e-3), providers=[provider])


def test_each_scenario_takes_its_path(humanoid):
    sim = simulator_with_limits(humanoid)
    q_rest = sim.reset("stand")
    scenarios = warm_up_scenarios(sim, q_rest)
    assert set(scenarios) == {"resting", "landing", "sliding", "joint stop"}
    tau = np.zeros(humanoid.nj)

    sim.set_state(*scenarios["resting"])
    resting = sim.step(tau)
    assert not resting.impulse and all(c.sticking for c in resting.contacts) and len(resting.contacts) == 2

    sim.set_state(*scenarios["landing"])
    landing = [sim.step(tau) for _ in range(3)]
    assert any(r.impulse for r in landing)

    sim.set_state(*scenarios["sliding"])
    sliding = sim.step(tau)
    assert sliding.contacts and not any(c.sticking for c in sliding.contacts)

    sim.set_state(*scenarios["joint stop"])
    stop = sim.step(tau)
    assert stop.constraint_forces[0].size > 0


def test_state_is_restored_and_the_run_is_unchanged(humanoid, rng):
    taus = rng.uniform(-5.0, 5.0, size=(30, humanoid.nj))
    reference = simulator_with_limits(humanoid)
    q_rest = reference.reset("stand")
    expected = [reference.step(tau) for tau in taus]

    sim = simulator_with_limits(humanoid)
    sim.reset("stand")
    sim.step(taus[0])  # not at rest, t > 0: warm_up must give exactly this state back
    q, v, t = sim.q, sim.v, sim.t
    report = warm_up(sim, q_rest)
    assert set(report.seconds) == {"resting", "landing", "sliding", "joint stop"} and not report.failed
    assert np.array_equal(sim.q, q) and np.array_equal(sim.v, v) and sim.t == t
    for tau, want in zip(taus[1:], expected[1:]):
        got = sim.step(tau)
        # set_state forgets the contact memory, which the first run kept: compare physics, not bits
        np.testing.assert_allclose(got.q, want.q, atol=1e-9)
