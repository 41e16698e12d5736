"""The walking controller node's plain parts, without spinning: parameters, the velocity
command, odometry -> base state."""

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")

from humanoid_sim.ros.conversions import odometry_message, quaternion_from_rotation  # noqa: E402
from humanoid_sim.ros.walking_controller_node import (  # noqa: E402
    WalkCommand,
    base_state_from_odometry,
    validate_controller_parameter,
    validate_controller_parameters,
)



def test_parameters_defaults_and_every_rule_named():
    params = validate_controller_parameters({})
    assert params.mode == "walk" and params.walk_speed == 0.15 and params.foot_links == ("l_foot", "r_foot")
    assert validate_controller_parameter("walk_speed", 0.5) == (True, "")
    ok, reason = validate_controller_parameter("walk_speed", 3.0)
    assert not ok and "walk_speed" in reason and "outside" in reason
    ok, reason = validate_controller_parameter("mode", "run")
    assert not ok and "one of walk, stand" in reason
    ok, reason = validate_controller_parameter("control_rate", float("nan"))
    assert not ok and "not finite" in reason
    ok, reason = validate_controller_parameter("foot_links", ["l_foot"])
    assert not ok and "expected 2 names" in reason
    ok, reason = validate_controller_parameter("speed", 1.0)
    assert not ok and "unknown parameter 'speed'" in reason and "walk_speed" in reason
    with pytest.raises(ValueError) as error:
        validate_controller_parameters({"mode": "run", "hold_kp": -1.0})
    assert "mode" in str(error.value) and "hold_kp" in str(error.value)


def test_walk_command_default_cmd_vel_and_timeout():
    command = WalkCommand(default_speed=0.3, timeout=0.5)
    assert command.at(0.0) == (0.3, 0.0, 0.0)  # no cmd_vel: straight ahead at the default speed
    assert command.receive(1.0, 0.1, 0.05, 0.2)
    assert command.at(1.4) == (0.1, 0.05, 0.2)
    assert command.at(1.6) == (0.3, 0.0, 0.0)  # expired
    assert not command.receive(2.0, math.nan, 0.0, 0.0)  # ignored
    assert command.at(1.2) == (0.1, 0.05, 0.2)
    forever = WalkCommand(default_speed=0.0, timeout=0.0)
    assert forever.at(5.0) == (0.0, 0.0, 0.0)  # 0: stand
    forever.receive(0.0, 0.2, 0.0, 0.0)
    assert forever.at(1e6) == (0.2, 0.0, 0.0)


def test_base_state_from_odometry_inverts_the_simulators_message(rng):
    p = rng.normal(size=3)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = 0.7
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
    quat = quaternion_from_rotation(R)
    v, w = rng.normal(size=3), rng.normal(size=3)
    q_base, v_base = base_state_from_odometry(odometry_message(123, "odom", "pelvis", p, quat, v, w))
    np.testing.assert_allclose(q_base, np.concatenate([p, quat]), atol=1e-12)
    np.testing.assert_allclose(v_base, np.concatenate([v, w]), atol=1e-12)
