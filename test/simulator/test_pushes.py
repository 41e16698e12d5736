"""Pushes over time: exactly the steps they cover, refused with a reason, one per link."""

import numpy as np
import pytest

from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.simulator.pushes import PushSchedule

WRENCH = [200.0, 0.0, 0.0, 0.0, 0.0, 0.0]


@pytest.fixture
def schedule() -> PushSchedule:
    return PushSchedule(load_urdf(chain_urdf(2, fixed_base=False)))


def test_a_push_covers_exactly_its_steps(schedule):
    dt = 1e-3
    schedule.add("link1", WRENCH, duration=0.1, start=0.05)
    t, covered = 0.0, []
    for k in range(300):
        if schedule.at(t):
            covered.append(k)
        t += dt  # accumulated, as the simulator's time
    assert covered == list(range(50, 150))
    assert schedule.active() == () and schedule.pushes_applied == 1


def test_refused_pushes_change_nothing(schedule):
    with pytest.raises(UnknownNameError, match="unknown link 'pelvis' of robot 'chain'; valid links: .*link1"):
        schedule.add("pelvis", WRENCH, duration=0.1, start=0.0)
    for wrench in ([np.nan, 0, 0, 0, 0, 0], [np.inf, 0, 0, 0, 0, 0], [1.0, 2.0]):
        with pytest.raises(InvalidValueError, match="6 finite numbers"):
            schedule.add("link1", wrench, duration=0.1, start=0.0)
    for duration in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(InvalidValueError, match="duration"):
            schedule.add("link1", WRENCH, duration=duration, start=0.0)
    assert schedule.at(0.0) == {} and schedule.pushes_applied == 0


def test_a_new_push_on_a_link_replaces_the_acting_one(schedule):
    schedule.add("link1", WRENCH, duration=1.0, start=0.0)
    schedule.add("link1", [0.0, 5.0, 0.0, 0.0, 0.0, 0.0], duration=0.5, start=0.1, point=[0.0, 0.0, -0.2])
    assert schedule.at(0.05) == {}  # the new one starts at 0.1
    acting = schedule.at(0.2)["link1"]
    np.testing.assert_array_equal(acting.wrench, [0.0, 5.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(acting.point, [0.0, 0.0, -0.2])
    assert schedule.pushes_applied == 2
    schedule.clear()
    assert schedule.at(0.2) == {}
