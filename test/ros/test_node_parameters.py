"""Parameter specs and validation (what the node's set-parameters callback answers)."""

import math

import pytest

from humanoid_sim.ros.parameters import PARAMETER_SPECS, SPECS_BY_NAME, validate_parameter, validate_parameters


def test_defaults_are_valid_and_described():
    params = validate_parameters({})
    assert params.loop_mode == "realtime" and params.physics_dt == 0.001
    assert params.joint_order == () and params.initial_joint_names == ()
    for spec in PARAMETER_SPECS:
        assert spec.description, spec.name
        assert validate_parameter(spec.name, spec.default) == (True, ""), spec.name


@pytest.mark.parametrize(
    ("name", "value", "in_reason"),
    [
        ("physics_dt", 0.0, "physics_dt: 0.0 is outside [1e-05, 0.02] s"),
        ("physics_dt", math.nan, "not finite"),
        ("physics_dt", "fast", "expected a number"),
        ("real_time_factor", 1000.0, "outside"),
        ("joint_states_rate", -1.0, "outside"),
        ("loop_mode", "turbo", "not one of realtime, fast, lockstep"),
        ("timeout_behaviour", "explode", "zero_torque, damping"),
        ("initial_base_position", [0.0], "expected x y (resting on the ground) or x y z"),
        ("initial_base_rpy", [0.0, 1.0, 4.0], "outside"),
        ("odom_frame", "", "must not be empty"),
        ("push_wrench", [1.0, 2.0, 3.0], "expected 6 numbers, got 3"),
        ("push_wrench", [math.inf, 0.0, 0.0, 0.0, 0.0, 0.0], "not finite"),
        ("push_point", [0.0, 0.0], "expected 3 numbers"),
        ("push_duration", 0.0, "outside"),
        ("no_such_parameter", 1.0, "unknown parameter"),
        ("joint_order", [1.0], "list of strings"),
        ("thread_priority", 100, "thread_priority: 100.0 is outside [0, 99]"),
        ("thread_priority", 50.0, "expected an integer"),
        ("thread_priority", True, "expected an integer"),
    ],
)
def test_bad_values_rejected_with_reason(name, value, in_reason):
    ok, reason = validate_parameter(name, value)
    assert not ok
    assert in_reason in reason


def test_integer_accepted_for_float_and_converted():
    params = validate_parameters({"tf_rate": 100, "initial_base_position": [0, 0, 1]})
    assert params.tf_rate == 100.0 and isinstance(params.tf_rate, float)
    assert params.initial_base_position == (0.0, 0.0, 1.0)


def test_cross_checks_and_all_problems_reported():
    with pytest.raises(ValueError) as info:
        validate_parameters(
            {"initial_joint_names": ["a", "b"], "initial_joint_positions": [0.1], "physics_dt": 1.0}
        )
    assert "physics_dt" in str(info.value)
    with pytest.raises(ValueError, match="2 names but initial_joint_positions 1"):
        validate_parameters({"initial_joint_names": ["a", "b"], "initial_joint_positions": [0.1]})


def test_structural_parameters_are_read_only():
    for name in ("robot_description", "physics_dt", "loop_mode", "joint_order"):
        assert SPECS_BY_NAME[name].read_only
    for name in ("real_time_factor", "tf_rate", "command_timeout"):
        assert not SPECS_BY_NAME[name].read_only
