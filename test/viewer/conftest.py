"""Fixtures of the view's tests: the bundled humanoid standing under a holding controller."""

import pytest

from humanoid_sim.contact import load_environment
from humanoid_sim.control.holding_controller import HoldingController
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator import Simulator, SimulatorConfig
from standing_scene import REPO, URDF


@pytest.fixture(scope="module")
def model():
    return load_urdf(str(URDF))


@pytest.fixture
def standing(model):
    """(simulator at the stand pose on the bundled environment, its holding controller)."""
    sim = Simulator(model, SimulatorConfig(environment=load_environment(REPO / "config" / "environment.yaml")))
    q0 = sim.reset("stand")
    controller = HoldingController(model)
    controller.reset(q0)
    return sim, controller
