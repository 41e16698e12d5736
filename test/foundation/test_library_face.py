"""``from humanoid_sim import ...``: every public name resolves; importing the package alone is light."""

import json
import subprocess

import pytest

import humanoid_sim
from package_under_test import REPO, python_command, subprocess_env


def test_every_public_name_resolves():
    for name in humanoid_sim.__all__:
        assert getattr(humanoid_sim, name) is not None, name
    assert {"Simulator", "SimulatorConfig", "load_robot", "PushSchedule", "HumanoidSimError"} <= set(humanoid_sim.__all__)


def test_an_unknown_name_lists_the_public_ones():
    with pytest.raises(AttributeError, match="public names: .*Simulator"):
        humanoid_sim.Simulatr  # noqa: B018


def test_importing_the_package_loads_no_numerics():
    script = "import sys, json, humanoid_sim; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'numba', 'scipy'))))"
    out = subprocess.run(python_command("-c", script), env=subprocess_env(), cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_from_urdf_stands_the_robot_or_lists_its_poses():
    from humanoid_sim import Simulator, UnknownNameError, load_robot, package_file

    sim = Simulator.from_urdf(package_file("urdf/humanoid.urdf"), pose="stand")
    reference = Simulator(load_robot())
    assert sim.model.name == "humanoid"
    assert (sim.q == reference.reset("stand")).all()
    with pytest.raises(UnknownNameError, match="unknown initial pose 'kneel' for robot 'humanoid'; valid initial poses: stand"):
        Simulator.from_urdf(package_file("urdf/humanoid.urdf"), pose="kneel")
