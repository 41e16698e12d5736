"""The exception tree: one base, built-in bases kept, messages listing the valid names."""

import pytest

from humanoid_sim.errors import HumanoidSimError, UnknownNameError


def test_unknown_name_lists_the_valid_names_sorted():
    error = UnknownNameError("link", "pelvs", ["r_foot", "pelvis", "l_foot"], "of robot 'humanoid'")
    assert str(error) == "unknown link 'pelvs' of robot 'humanoid'; valid links: l_foot, pelvis, r_foot"
    assert error.valid == ("l_foot", "pelvis", "r_foot") and error.name == "pelvs" and error.kind == "link"


def test_unknown_name_is_caught_as_key_error_and_as_the_base():
    for base in (KeyError, HumanoidSimError):
        with pytest.raises(base):
            raise UnknownNameError("initial pose", "crouch", [])
    assert str(UnknownNameError("initial pose", "crouch", [])).endswith("valid initial poses: (none)")
