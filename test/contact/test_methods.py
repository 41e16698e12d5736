"""Choosing the contact method: names, refusals, and where the choice comes from."""

from __future__ import annotations

import pytest

from humanoid_sim.contact.methods import CONTACT_METHODS, PENALTY_VOLUME, RELAXED_QP, VIRTUAL_LINK, method_index
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.simulator.simulator import SimulatorConfig
from humanoid_sim.world.loader import WorldConfigError, world_from_dict


def test_every_method_has_its_index():
    assert [method_index(m) for m in CONTACT_METHODS] == [VIRTUAL_LINK, RELAXED_QP, PENALTY_VOLUME]
    assert CONTACT_METHODS[VIRTUAL_LINK] == "virtual_link"


def test_an_unknown_method_is_refused_listing_the_methods():
    with pytest.raises(UnknownNameError) as err:
        SimulatorConfig(contact_method="soft")
    assert "'soft'" in str(err.value)
    for name in CONTACT_METHODS:
        assert name in str(err.value)


def test_the_world_file_names_a_method_or_is_refused():
    assert world_from_dict({}).contact_method is None
    assert world_from_dict({"contact_method": "relaxed_qp"}).contact_method == "relaxed_qp"
    with pytest.raises(WorldConfigError, match="penalty_volume"):
        world_from_dict({"contact_method": "penalty"})


@pytest.mark.parametrize("method", CONTACT_METHODS)
def test_every_method_reports_the_same_fields(method):
    """A 2 kg box resting on the ground under each method: the same StepResult fields, the
    solver named, per-point forces from the per-vertex methods that sum to the contact's force."""
    from humanoid_sim.simulator.simulator import Simulator
    from humanoid_sim.world import assemble_world_model

    world = world_from_dict({
        "contact_method": method,
        "objects": [{"name": "box", "shape": "box", "size_m": [0.2, 0.2, 0.2], "mass_kg": 2.0,
                     "position_m": [0.0, 0.0, 0.1]}],
    })  # fmt: skip
    sim = Simulator.from_world(assemble_world_model(world, None))
    assert sim.contact_method == method
    for _ in range(300):
        r = sim.step()
    assert r.solver == ("checked" if method == "virtual_link" else method)
    (c,) = r.contacts
    assert c.link == "box" and c.element == "ground"
    assert c.wrench_world[2] == pytest.approx(2.0 * 9.81, rel=1e-3)
    if method == "virtual_link":
        assert c.point_forces is None
    else:
        assert c.point_forces.shape == c.points.shape
        assert c.point_forces.sum(axis=0) == pytest.approx(c.wrench_world[:3], rel=1e-9, abs=1e-9)
