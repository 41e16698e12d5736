"""The posture-holding controller (stand mode) against statics and in the simulator."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment
from humanoid_sim.control.holding_controller import HoldingController
from humanoid_sim.dynamics import center_of_mass, frame_jacobian, frame_placement, gravity_forces
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.initial_pose import load_initial_poses, pose_configuration
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    model = load_urdf(str(REPO / "urdf" / "humanoid.urdf"))
    q = pose_configuration(model, load_initial_poses(None, model.name)["stand"], Environment())
    return model, q


def test_holding_feed_forward_is_a_static_equilibrium_with_the_weight_on_the_feet(humanoid):
    model, q = humanoid
    controller = HoldingController(model)
    controller.reset(q)
    # Eq. 9 at rest: g(q) = S^T tau + J_C^T f, exactly.
    J = np.vstack([frame_jacobian(model, q, name) for name in ("l_sole", "r_sole")])
    residual = gravity_forces(model, q) - J.T @ controller.sole_wrenches
    residual[6:] -= controller.tau_ff
    assert np.max(np.abs(residual)) < 1e-8
    f = controller.sole_wrenches.reshape(2, 6)
    weight = model.total_mass * 9.81
    assert f[:, 2].sum() == pytest.approx(weight, rel=1e-9)
    # The wrenches' centre of pressure is under the CoM (moments about the sole origins, world axes).
    origins = np.array([frame_placement(model, q, name)[:3, 3] for name in ("l_sole", "r_sole")])
    moment = sum(np.cross(o, fi[:3]) + fi[3:] for o, fi in zip(origins, f))
    cop = np.array([-moment[1], moment[0]]) / weight
    np.testing.assert_allclose(cop, center_of_mass(model, q)[:2], atol=1e-9)
    # At the held posture and at rest, the command is the feed-forward alone.
    np.testing.assert_allclose(controller.update(0.0, q, np.zeros(model.nv)), np.clip(
        controller.tau_ff, -model.limits.effort, model.limits.effort))


def test_holding_gains_full_on_legs_bandwidth_limited_elsewhere(humanoid):
    model, q = humanoid
    controller = HoldingController(model, kp=1000.0, kd=20.0, bandwidth=40.0)
    controller.reset(q)
    legs = controller.leg_joints
    names = np.array(model.joint_names)
    assert set(names[legs]) == {f"{s}_{j}" for s in "lr" for j in
                                ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")}
    kp, kd = controller.gains
    assert np.all(kp[legs] == 1000.0) and np.all(kd[legs] == 20.0)
    I = controller.apparent_inertia[~legs]
    np.testing.assert_allclose(kp[~legs], np.minimum(1000.0, I * 1600.0))
    np.testing.assert_allclose(kd[~legs], np.minimum(20.0, I * 80.0))
    assert np.all(I > 0.0)


def test_holding_controller_rejects_bad_input_by_name(humanoid):
    model, _ = humanoid
    with pytest.raises(KeyError, match="l_sole"):
        HoldingController(model, sole_frames=("left_sole", "r_sole"))
    with pytest.raises(ValueError, match="kp"):
        HoldingController(model, kp=-1.0)
    with pytest.raises(RuntimeError, match="reset"):
        HoldingController(model).update(0.0, np.zeros(model.nq), np.zeros(model.nv))


def test_holding_controller_keeps_the_simulated_humanoid_standing(humanoid):
    """In-process with the simulator (no DDS): 1 s at 1 kHz, control at 500 Hz."""
    model, _ = humanoid
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    q0 = sim.reset("stand")
    controller = HoldingController(model)
    controller.reset(q0)
    tau = np.zeros(model.nj)
    for k in range(1000):
        if k % 2 == 0:
            tau = controller.update(sim.t, sim.q, sim.v)
        result = sim.step(tau)
    weight = model.total_mass * 9.81
    assert sum(c.wrench_world[2] for c in result.contacts) == pytest.approx(weight, rel=1e-3)
    assert np.linalg.norm(sim.q[:3] - q0[:3]) < 1e-3
    assert np.max(np.abs(sim.v)) < 1e-2
