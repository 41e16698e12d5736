"""Entity states of the simulation_interfaces services: base (q, v) <-> world pose and twist."""

import numpy as np
import pytest

pytest.importorskip("simulation_interfaces", reason="simulation_interfaces is not importable (run scripts/setup.sh)")

from humanoid_sim.ros.simulation_interfaces_services import base_from_entity_state, entity_state_of_base  # noqa: E402


def test_world_twist_round_trip(rng):
    quat = rng.normal(size=4)
    q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
    v = rng.normal(size=6)
    acceleration = rng.normal(size=6)
    pose, twist, accel = entity_state_of_base(q, v, acceleration)
    q_back, v_back = base_from_entity_state(pose, twist)
    np.testing.assert_allclose(q_back, q, atol=1e-12)
    np.testing.assert_allclose(v_back, v, atol=1e-12)
    assert (accel.linear.x, accel.angular.z) == (acceleration[0], acceleration[5])


def test_base_velocity_is_turned_into_world_axes():
    q = np.array([0.0, 0.0, 1.0, 0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])  # yawed 90 degrees
    _, twist, _ = entity_state_of_base(q, np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.zeros(6))
    assert twist.linear.x == pytest.approx(0.0, abs=1e-12) and twist.linear.y == pytest.approx(1.0)


def test_bad_poses_are_refused():
    pose, twist, _ = entity_state_of_base(np.array([0, 0, 1, 0, 0, 0, 1.0]), np.zeros(6), np.zeros(6))
    pose.orientation.w = 0.5
    with pytest.raises(ValueError, match="quaternion has length 0.5"):
        base_from_entity_state(pose, twist)
    pose.orientation.w = 1.0
    twist.linear.x = float("nan")
    with pytest.raises(ValueError, match="finite"):
        base_from_entity_state(pose, twist)
