"""Jacobian IK (seed 001) on the bundled humanoid: reach, null space, singularity, limits."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim import dynamics as dyn
from humanoid_sim.control.inverse_kinematics import (
    ComTask,
    FrameTask,
    IKParams,
    OrientationTask,
    damped_weighted_pseudo_inverse,
    ik_step,
    solve_ik,
    task_jacobian_and_error,
)
from humanoid_sim.model.urdf_loader import load_urdf

URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"
STAND = dict(l_hip_pitch=-0.25, l_knee=0.5, l_ankle_pitch=-0.25, r_hip_pitch=-0.25, r_knee=0.5,
             r_ankle_pitch=-0.25, l_elbow_pitch=-0.3, r_elbow_pitch=-0.3)


@pytest.fixture(scope="module")
def model():
    return load_urdf(URDF)


def stand(model) -> np.ndarray:
    q = np.zeros(model.nq)
    q[6] = 1.0
    for name, value in STAND.items():
        q[7 + model.joint_index(name)] = value
    return q


def rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def test_reaches_a_foot_target_with_the_other_foot_and_pelvis_fixed(model):
    q0 = stand(model)
    X_l = dyn.frame_placement(model, q0, "l_sole")
    X_r = dyn.frame_placement(model, q0, "r_sole")
    target = X_l.copy()
    target[:3, 3] += [0.15, 0.03, 0.06]  # a swing-foot pose: forward, out, up, turned
    target[:3, :3] = rot_z(0.2)
    tasks = [FrameTask("l_sole", target), FrameTask("r_sole", X_r), FrameTask("pelvis", np.eye(4))]
    result = solve_ik(model, q0, tasks, params=IKParams(max_iterations=100))
    assert result.converged, result
    X = dyn.frame_placement(model, result.q, "l_sole")
    np.testing.assert_allclose(X, target, atol=1e-7)
    np.testing.assert_allclose(dyn.frame_placement(model, result.q, "r_sole"), X_r, atol=1e-7)


def test_null_space_posture_term_does_not_disturb_the_tasks(model):
    q0 = stand(model)
    X_l = dyn.frame_placement(model, q0, "l_sole")
    X_r = dyn.frame_placement(model, q0, "r_sole")
    com = dyn.center_of_mass(model, q0)
    tasks = [FrameTask("l_sole", X_l, 10.0), FrameTask("r_sole", X_r, 10.0),
             ComTask(com + [0.02, 0.03, -0.05]), OrientationTask("pelvis", np.eye(3))]
    # A posture with the arms elsewhere: the arms are redundant for these tasks.
    posture = q0.copy()
    for name, value in dict(l_shoulder_pitch=-0.8, r_shoulder_pitch=0.4, waist_yaw=0.2).items():
        posture[7 + model.joint_index(name)] = value
    # One step from a solved configuration: the posture term moves the joints but the task
    # error stays at its first-order level (the move lies in the null space of J).
    plain = solve_ik(model, q0, tasks, None, IKParams(max_iterations=100))
    assert plain.converged
    params = IKParams(posture_gain=1.0, max_step=10.0)
    delta, _ = ik_step(model, plain.q, tasks, posture, params)
    J, _ = task_jacobian_and_error(model, plain.q, tasks)
    assert np.linalg.norm(delta) > 0.3  # it does move
    assert np.linalg.norm(J @ delta) < 1e-8 * np.linalg.norm(delta) + 1e-9
    # Iterated: tasks still met and the arms went to the posture.
    with_posture = solve_ik(model, q0, tasks, posture, IKParams(max_iterations=300, posture_gain=0.2))
    assert with_posture.converged
    _, e = task_jacobian_and_error(model, with_posture.q, tasks)
    assert np.linalg.norm(e) < 1e-7
    j = 7 + model.joint_index("l_shoulder_pitch")
    assert abs(with_posture.q[j] - posture[j]) < 0.2 * abs(plain.q[j] - posture[j])


def test_near_singular_knee_step_stays_finite(model):
    # Almost straight legs: moving the sole further down is nearly impossible, J is close to
    # losing rank in that direction (σ_min tiny but not zero).
    q = np.zeros(model.nq)
    q[6] = 1.0
    for side in ("l", "r"):
        q[7 + model.joint_index(f"{side}_knee")] = 1e-3
        q[7 + model.joint_index(f"{side}_hip_pitch")] = -5e-4
        q[7 + model.joint_index(f"{side}_ankle_pitch")] = -5e-4
    target = dyn.frame_placement(model, q, "l_sole")
    target[2, 3] -= 0.05  # beyond the stretched leg
    tasks = [FrameTask("l_sole", target), FrameTask("pelvis", np.eye(4))]
    J, e = task_jacobian_and_error(model, q, tasks)
    sigma = np.linalg.svd(J, compute_uv=False)
    assert 0.0 < sigma[-1] < 1e-3  # near-singular posture
    params = IKParams(max_step=1e6)  # no step clipping: only the damping bounds the step
    delta, _ = ik_step(model, q, tasks, None, params)
    assert np.all(np.isfinite(delta)) and np.linalg.norm(delta) < 2.0
    # Undamped, the same step explodes (≈ |e| / σ_min).
    undamped = IKParams(max_step=1e6, damping_max=1e-30, damping_floor=0.0)
    wild = damped_weighted_pseudo_inverse(J, np.ones(model.nv), undamped) @ e
    assert np.linalg.norm(wild) > 50.0


def test_joint_limits_hold_while_reaching(model):
    q0 = stand(model)
    X_r = dyn.frame_placement(model, q0, "r_sole")
    target = dyn.frame_placement(model, q0, "l_sole")
    target[:3, 3] += [0.0, 0.0, 0.45]  # knee to the chest: needs the hip/knee near limits
    tasks = [FrameTask("l_sole", target), FrameTask("r_sole", X_r), FrameTask("pelvis", np.eye(4))]
    result = solve_ik(model, q0, tasks, params=IKParams(max_iterations=200, limit_margin=0.0))
    lo, up = model.limits.lower, model.limits.upper
    assert np.all(result.q[7:] >= lo - 1e-12) and np.all(result.q[7:] <= up + 1e-12)
    assert np.isfinite(result.error)
