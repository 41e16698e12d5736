"""ExternalWrenchFeedforward: the CoM lean into measured external wrenches, and the walking
controller's joint_posture / external_wrenches inputs."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.control import (
    ExternalWrench,
    ExternalWrenchFeedforward,
    WalkingConfig,
    WalkingController,
    load_walking_config,
    walking_config_from_dict,
)
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

ROOT = Path(__file__).resolve().parents[2]
DT = 0.004


@pytest.fixture(scope="module")
def model():
    return load_urdf(ROOT / "urdf" / "humanoid.urdf")


@pytest.fixture(scope="module")
def standing(model):
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    sim.reset("stand")
    return sim.q.copy(), sim.v.copy()


def kinematics(model, q, v):
    kin = TaskKinematics(model)
    kin.update(q, v)
    return kin


def test_a_push_from_the_front_leans_the_com_forward_by_h_f_over_m_g(model, standing):
    kin = kinematics(model, *standing)
    ff = ExternalWrenchFeedforward(kin, time_constant=0.3, ground_height=0.0)
    h, force = 1.1, 30.0
    push = [ExternalWrench("l_lower_arm", np.array([0.5, 0.2, h]), np.array([-force / 2, 0, 0, 0, 0, 0])),
            ExternalWrench("r_lower_arm", np.array([0.5, -0.2, h]), np.array([-force / 2, 0, 0, 0, 0, 0]))]
    ff.update(push, DT)
    first = ff.lean.copy()
    for _ in range(int(5.0 / DT)):
        ff.update(push, DT)
    weight = kin.total_mass * 9.81
    assert 0.0 < first[0] < 1e-4  # no jump: the lean starts from rest
    assert ff.lean[0] == pytest.approx(h * force / weight, rel=1e-3)
    assert abs(ff.lean[1]) < 1e-12 and abs(ff.vertical_force) < 1e-12
    assert np.all(np.abs(ff.lean_velocity) < 1e-4)
    # The push on the floating base (its twist in the upright pelvis' axes): the force itself.
    np.testing.assert_allclose(ff.base_force[:3], [-force, 0.0, 0.0], atol=1e-3)
    ff.reset()
    assert not ff.lean.any() and not ff.lean_velocity.any() and not ff.base_force.any()


def test_a_downward_force_ahead_of_the_com_leans_it_back(model, standing):
    kin = kinematics(model, *standing)
    ff = ExternalWrenchFeedforward(kin, time_constant=0.1, ground_height=0.0)
    push = [ExternalWrench("l_lower_arm", kin.com + np.array([0.4, 0.0, 0.2]), np.array([0, 0, -50.0, 0, 0, 0]))]
    for _ in range(int(2.0 / DT)):
        ff.update(push, DT)
    assert ff.lean[0] == pytest.approx(-0.4 * 50.0 / (kin.total_mass * 9.81), rel=1e-3)
    assert ff.vertical_force == pytest.approx(-50.0, rel=1e-3)


def test_no_wrench_no_lean_and_bad_wrenches_are_refused(model, standing):
    kin = kinematics(model, *standing)
    ff = ExternalWrenchFeedforward(kin, time_constant=0.3, ground_height=0.0)
    ff.update(None, DT)
    ff.update([], DT)
    assert not ff.lean.any()
    with pytest.raises(KeyError, match="valid frames"):
        ff.update([ExternalWrench("hand", np.zeros(3), np.zeros(6))], DT)
    with pytest.raises(ValueError, match="6 finite numbers"):
        ff.update([ExternalWrench("l_lower_arm", np.zeros(3), np.array([np.nan, 0, 0, 0, 0, 0]))], DT)
    with pytest.raises(ValueError, match="time_constant"):
        ExternalWrenchFeedforward(kin, time_constant=0.0, ground_height=0.0)


def test_config_joint_posture_and_lean_time_are_validated(model):
    config = walking_config_from_dict({"joint_posture": {"l_shoulder_pitch": -0.8}, "external_wrench_lean_time": 0.5})
    assert config.joint_posture == {"l_shoulder_pitch": -0.8} and config.external_wrench_lean_time == 0.5
    assert load_walking_config(ROOT / "config" / "walking.yaml").joint_posture == {}
    with pytest.raises(ValueError, match="joint_posture"):
        WalkingConfig(joint_posture={"l_shoulder_pitch": float("inf")})
    with pytest.raises(ValueError, match="external_wrench_lean_time"):
        WalkingConfig(external_wrench_lean_time=-1.0)
    with pytest.raises(KeyError, match="valid joints"):
        WalkingController(model, WalkingConfig(joint_posture={"l_wrist": 0.0}))


def test_the_controller_without_wrenches_is_unchanged_and_leans_into_one(model, standing):
    q, v = standing
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    plain, pushed = WalkingController(model, config), WalkingController(model, config)
    plain.reset(q, v, 0.0)
    pushed.reset(q, v, 0.0)
    wrench = [ExternalWrench("r_lower_arm", np.array([0.3, -0.2, 1.1]), np.array([-30.0, 0, 0, 0, 0, 0]))]
    for k in range(100):
        tau_plain = plain.update(k * DT, q, v)
        tau_empty = pushed.update(k * DT, q, v, None, []) if k < 50 else pushed.update(k * DT, q, v, None, wrench)
        if k < 50:
            np.testing.assert_array_equal(tau_plain, tau_empty)
    lean = pushed.readout.com_reference - plain.readout.com_reference
    assert lean[0] > 0.0 and abs(lean[2]) < 1e-12
    assert not np.array_equal(tau_plain, tau_empty)


def test_joint_posture_moves_the_arms_of_the_ik_reference(model, standing):
    q, v = standing
    config = dataclasses.replace(load_walking_config(ROOT / "config" / "walking.yaml"),
                                 joint_posture={"l_shoulder_pitch": -0.8, "r_shoulder_pitch": -0.8})
    ctrl = WalkingController(model, config)
    ctrl.reset(q, v, 0.0)
    taus = [ctrl.update(k * DT, q, v) for k in range(50)]
    shoulder = model.joint_index("l_shoulder_pitch")
    # The posture task pulls the shoulder forward (negative pitch) from where it stands.
    assert taus[-1][shoulder] < taus[0][shoulder] - 1.0
