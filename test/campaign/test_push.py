"""The push: J^T F of a horizontal force at a link's origin, during its window only; in free
fall without gravity it changes the robot's momentum by exactly the impulse."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.campaign.push import LinkPush
from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics import com_jacobian, frame_placement, point_jacobian
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model():
    return load_urdf(ROOT / "urdf" / "humanoid.urdf")


def test_the_generalized_force_is_the_point_jacobian_transpose_times_the_force(model, rng):
    q = neutral_configuration(model)
    q[7:] = rng.uniform(-0.2, 0.2, model.nj)
    push = LinkPush(model, "chest", 120.0, 90.0, start_s=0.5, duration_s=0.2)
    assert push.generalized_force(q, 0.49) is None and push.generalized_force(q, 0.7) is None
    tau = push.generalized_force(q, 0.5)
    point = frame_placement(model, q, "chest")[:3, 3]
    J = point_jacobian(model, q, model.frame("chest").body, point)
    np.testing.assert_allclose(tau, J[:3].T @ np.array([0.0, 120.0, 0.0]), atol=1e-9)
    with pytest.raises(KeyError, match="valid frames"):
        LinkPush(model, "tail", 1.0, 0.0, 0.0, 1.0)


def test_a_push_in_free_fall_adds_its_impulse_to_the_momentum(model):
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=Environment(ground=None), gravity=np.zeros(3)))
    push = LinkPush(model, "pelvis", 200.0, 30.0, start_s=0.0, duration_s=0.05)
    for _ in range(80):
        sim.step(np.zeros(model.nj), external_force=push.generalized_force(sim.q, sim.t))
    momentum = model.total_mass * (com_jacobian(model, sim.q) @ sim.v)
    impulse = 200.0 * 0.05 * np.array([np.cos(np.radians(30.0)), np.sin(np.radians(30.0)), 0.0])
    # semi-implicit Euler conserves momentum up to O(dt): 0.2 % of the 10 N s impulse
    np.testing.assert_allclose(momentum, impulse, atol=0.02)
