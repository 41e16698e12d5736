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
