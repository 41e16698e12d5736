"""The compiled tick kernels against their reference implementations (and truths).

Each kernel of humanoid_sim.control.tick_kernels must give what the readable reference gives
(footsteps.FootstepPlan.zmp_reference, TaskKinematics frame queries, inverse_kinematics.ik_step,
whole_body_torque.solve_whole_body) on the bundled humanoid at random states; so3_log_nb
is checked against the closed form exp/log pair, including angles near pi.
"""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim import dynamics as dyn
from humanoid_sim.control.footsteps import Footstep, FootstepParams, plan_footsteps
from humanoid_sim.control.inverse_kinematics import (
    ComTask,
    FrameTask,
    IKParams,
    OrientationTask,
    _limits_with_margin,
    ik_step,
)
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.control.tick_kernels import (
    COM_TASK,
    ORIENTATION_TASK,
    POSE_TASK,
    frames_nb,
    ik_step_nb,
    ik_task_rows_nb,
    so3_log_nb,
    whole_body_nb,
    whole_body_rows_nb,
    zmp_samples_nb,
)
from humanoid_sim.control.whole_body_torque import AccelerationTask, WholeBodyWeights, solve_whole_body
from humanoid_sim.dynamics.spatial import so3_exp, so3_log
from humanoid_sim.model.urdf_loader import load_urdf

URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"
FRAMES = ("l_sole", "r_sole", "pelvis")


@pytest.fixture(scope="module")
def model():
    return load_urdf(URDF)


def random_state(model, rng, spread=0.3):
    q = np.zeros(model.nq)
    q[:3] = rng.normal(scale=0.2, size=3) + [0.0, 0.0, 0.9]
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    lo, up = model.limits.lower, model.limits.upper
    mid = np.where(np.isfinite(lo + up), 0.5 * (lo + up), 0.0)
    q[7:] = np.clip(mid + rng.normal(scale=spread, size=model.nj), lo, up)
    v = rng.normal(size=model.nv)
    return q, v


def test_so3_log_matches_the_reference_and_inverts_exp(rng):
    out = np.empty(3)
    for angle in [0.0, 1e-8, 0.3, 2.0, np.pi - 1e-3, np.pi - 1e-6]:
        for _ in range(5):
            axis = rng.normal(size=3)
            w = angle * axis / np.linalg.norm(axis)
            R = so3_exp(w)
            so3_log_nb(R, out)
            np.testing.assert_allclose(out, so3_log(R), atol=1e-12)
            np.testing.assert_allclose(so3_exp(out), R, atol=1e-9)


def test_zmp_samples_match_the_plan_reference():
    params = FootstepParams()
    plan = plan_footsteps(Footstep("left", 0.0, 0.1, 0.0), Footstep("right", 0.0, -0.1, 0.0),
                          (0.2, 0.05, 0.1), 5, params, t_start=0.3)
    starts, ends, z0, z1 = plan._arrays
    dt = 0.002
    for t in [0.0, 0.3, 1.2345, plan.t_end - 0.5, plan.t_end + 1.0]:
        out = np.empty((801, 2))
        zmp_samples_nb(starts, ends, z0, z1, t, dt, out)
        np.testing.assert_allclose(out, plan.zmp_reference(t + dt * np.arange(801)), atol=1e-14)


def test_frames_match_task_kinematics(model, rng):
    kin = TaskKinematics(model)
    frames = [model.frame(f) for f in FRAMES]
    bodies = np.array([f.body for f in frames], dtype=np.int64)
    Xbf = np.ascontiguousarray(np.stack([f.X_body_frame for f in frames]))
    X, J, drift = np.zeros((3, 4, 4)), np.zeros((3, 6, model.nv)), np.zeros((3, 6))
    for _ in range(3):
        q, v = random_state(model, rng)
        kin.update(q, v)
        ws = kin.ws
        frames_nb(ws.parent, ws.ndof, ws.v_index, ws.S, ws.V, ws.A, ws.R, ws.p, bodies, Xbf, X, J, drift, True)
        for k, name in enumerate(FRAMES):
            np.testing.assert_allclose(X[k], kin.frame_pose(name), atol=1e-14)
            np.testing.assert_allclose(J[k], kin.frame_jacobian(name), atol=1e-13)
            np.testing.assert_allclose(drift[k], kin.frame_drift(name), atol=1e-12)
            # and against the dynamics package's independent frame functions
            np.testing.assert_allclose(X[k], dyn.frame_placement(model, q, name), atol=1e-12)
            np.testing.assert_allclose(J[k], dyn.frame_jacobian(model, q, name), atol=1e-12)


@pytest.mark.parametrize("max_step, spread", [(0.05, 0.3), (10.0, 0.3), (10.0, 1.5)])
def test_ik_step_matches_the_reference(model, rng, max_step, spread):
    # (10.0, 1.5): big steps from spread-out postures make joints cross their limits, so the
    # locking passes run; 0.05: the step-length clamp is active.
    params = IKParams(max_step=max_step, posture_gain=0.3)
    lo, up = _limits_with_margin(model, params.limit_margin)
    kin = TaskKinematics(model)
    frames = {name: model.frame(name) for name in FRAMES}
    kinds = np.array([POSE_TASK, POSE_TASK, COM_TASK, ORIENTATION_TASK], dtype=np.int64)
    bodies = np.array([frames["l_sole"].body, frames["r_sole"].body, 0, frames["pelvis"].body], dtype=np.int64)
    Xbf = np.ascontiguousarray(np.stack([frames["l_sole"].X_body_frame, frames["r_sole"].X_body_frame,
                                         np.eye(4), frames["pelvis"].X_body_frame]))
    weights = np.array([10.0, 10.0, 1.0, 2.0])
    locked = 0
    for _ in range(4):
        q, _ = random_state(model, rng, spread)
        posture, _ = random_state(model, rng, spread)
        targets = np.tile(np.eye(4), (4, 1, 1))
        for k in (0, 1, 3):
            targets[k, :3, :3] = so3_exp(rng.normal(scale=0.3, size=3))
            targets[k, :3, 3] = rng.normal(scale=0.3, size=3)
        com_target = rng.normal(scale=0.3, size=3)
        tasks = [FrameTask("l_sole", targets[0], 10.0), FrameTask("r_sole", targets[1], 10.0),
                 ComTask(com_target, 1.0), OrientationTask("pelvis", targets[3, :3, :3], 2.0)]
        delta_ref, err_ref = ik_step(model, q, tasks, posture, params, kin)
        kin.update_kinematics(q)
        ws = kin.ws
        J, e = np.zeros((18, model.nv)), np.zeros(18)
        m = ik_task_rows_nb(ws.parent, ws.ndof, ws.v_index, ws.S, ws.R, ws.p, kin.com, kin.com_jacobian,
                            bodies, Xbf, kinds, weights, targets, com_target, J, e)
        assert m == 18
        delta = np.zeros(model.nv)
        err = ik_step_nb(J, e, 6, q[7:].copy(), np.clip(posture[7:], lo, up), params.posture_gain, lo, up,
                         params.base_weight, params.joint_weight, params.damping_floor, params.damping_max,
                         params.singular_threshold, params.max_step, delta)
        assert err == pytest.approx(err_ref, rel=1e-12)
        np.testing.assert_allclose(delta, delta_ref, rtol=1e-7, atol=1e-9 * max(1.0, np.abs(delta_ref).max()))
        locked += int(np.sum((delta_ref[6:] == 0.0) & (delta[6:] == 0.0)))  # locked joints: no motion
    if spread > 1.0:
        assert locked > 0  # the locking passes did run


@pytest.mark.parametrize("stance", [("l_sole",), ("l_sole", "r_sole")])
@pytest.mark.parametrize("torque_weight", [0.0, 1e-4])
def test_whole_body_matches_the_reference(model, rng, stance, torque_weight):
    kin = TaskKinematics(model)
    for _ in range(3):
        q, v = random_state(model, rng)
        kin.update(q, v)
        H = np.vstack([kin.frame_jacobian(f) for f in stance])
        drift = np.concatenate([kin.frame_drift(f) for f in stance])
        nc = H.shape[0]
        tasks = [
            AccelerationTask(kin.com_jacobian.copy(), kin.com_drift.copy(), rng.normal(size=3), 10.0),
            AccelerationTask(kin.frame_jacobian("pelvis")[3:], kin.frame_drift("pelvis")[3:],
                             rng.normal(size=3), 1.0),
            AccelerationTask(np.hstack([np.zeros((model.nj, 6)), np.eye(model.nj)]), np.zeros(model.nj),
                             rng.normal(size=model.nj), 0.01),
        ]
        weights = WholeBodyWeights(wrench=1e-6, torque=torque_weight, acceleration=1e-6)
        w_ref = rng.normal(scale=100.0, size=nc)
        w_f = rng.uniform(1e-6, 1e-4, size=nc)
        ref = solve_whole_body(kin.M, kin.b, H, drift, tasks, weights, w_ref, wrench_weight=w_f)
        J = np.vstack([t.jacobian for t in tasks])
        target = np.concatenate([t.acceleration - t.drift for t in tasks])
        w_rows = np.concatenate([np.full(t.jacobian.shape[0], t.weight) for t in tasks])
        qdd, wrenches, tau = np.zeros(model.nv), np.zeros(nc), np.zeros(model.nj)
        whole_body_nb(kin.M, kin.b, np.ascontiguousarray(H), drift, J, target, w_rows, weights.acceleration,
                      weights.torque, w_f, w_ref, 6, qdd, wrenches, tau)
        scale = max(1.0, np.abs(ref.tau).max())
        np.testing.assert_allclose(qdd, ref.qdd, rtol=1e-7, atol=1e-7 * max(1.0, np.abs(ref.qdd).max()))
        np.testing.assert_allclose(wrenches, ref.wrenches, rtol=1e-7, atol=1e-7 * max(1.0, np.abs(ref.wrenches).max()))
        np.testing.assert_allclose(tau, ref.tau, rtol=1e-7, atol=1e-7 * scale)
        # Truth: the equation of motion holds (Eq. 11): M qdd + b = H_Cᵀ f + [0; τ].
        lhs = kin.M @ qdd + kin.b
        rhs = H.T @ wrenches
        rhs[6:] += tau
        np.testing.assert_allclose(lhs, rhs, atol=1e-7 * max(1.0, np.abs(lhs).max()))
        np.testing.assert_allclose(H @ qdd, -drift, atol=1e-8)


@pytest.mark.parametrize("swing, stance", [(1, (0,)), (-1, (0, 1)), (-1, (1, 0)), (0, (1,))])
def test_whole_body_rows_match_the_task_definitions(model, rng, swing, stance):
    kin = TaskKinematics(model)
    q, v = random_state(model, rng)
    q_ref, _ = random_state(model, rng)
    kin.update(q, v)
    nv, nj = model.nv, model.nj
    X = np.stack([kin.frame_pose(f) for f in FRAMES])
    J = np.stack([kin.frame_jacobian(f) for f in FRAMES])
    drift = np.stack([kin.frame_drift(f) for f in FRAMES])
    com_ref, com_vel_ref, com_acc_ref = rng.normal(size=(3, 3))
    gains = rng.uniform(1.0, 50.0, size=(4, 3))  # rows com, swing, torso, posture
    R_torso = so3_exp(rng.normal(scale=0.2, size=3))
    torso_rate, torso_acc = rng.normal(size=2)
    X_feet = np.tile(np.eye(4), (4, 1, 1))
    X_feet[0, :3, 3] = [0.1, 0.1, 0.0]
    X_feet[1, :3, 3] = [-0.05, -0.1, 0.0]
    X_feet[swing if swing >= 0 else 0, :3, :3] = so3_exp([0.0, 0.0, 0.3])
    vel_ref, acc_ref = rng.normal(size=(2, 6))
    zmp = np.array([0.03, 0.02])
    task_J = np.zeros((nj + 12, nv))
    task_J[:nj, 6:] = np.eye(nj)
    target, weight = np.zeros(nj + 12), np.zeros(nj + 12)
    H_C, drift_C, w_f, w_ref = np.zeros((12, nv)), np.zeros(12), np.zeros(12), np.zeros(12)
    weight_total = 500.0
    m, nc = whole_body_rows_nb(6, kin.com_jacobian, kin.com, kin.com_velocity, kin.com_drift, com_ref,
                               com_vel_ref, com_acc_ref, gains, q_ref, q, v, X, J, drift, R_torso, torso_rate,
                               torso_acc, swing, X_feet, vel_ref, acc_ref, np.array(stance, dtype=np.int64),
                               zmp, weight_total, 1e-6, task_J, target, weight, H_C, drift_C, w_f, w_ref)
    assert (m, nc) == (nj + (12 if swing >= 0 else 6), 6 * len(stance))
    # the definitions (seed 000 Eq. 22): rows J, a_des - J̇ v
    kp, kd, w = gains[3]
    np.testing.assert_allclose(target[:nj], kp * (q_ref[7:] - q[7:]) - kd * v[6:], atol=1e-12)
    kp, kd, w = gains[0]
    a_com = com_acc_ref + kp * (com_ref - kin.com) + kd * (com_vel_ref - kin.com_velocity)
    np.testing.assert_allclose(task_J[nj:nj + 3], kin.com_jacobian)
    np.testing.assert_allclose(target[nj:nj + 3], a_com - kin.com_drift, atol=1e-12)
    kp, kd, w = gains[2]
    Jt = J[2, 3:]
    a_t = np.array([0, 0, torso_acc]) + kp * so3_log(R_torso @ X[2, :3, :3].T) + kd * (
        np.array([0, 0, torso_rate]) - Jt @ v)
    np.testing.assert_allclose(target[nj + 3:nj + 6], a_t - drift[2, 3:], atol=1e-10)
    assert np.all(weight[nj + 3:nj + 6] == w)
    if swing >= 0:
        kp, kd, w = gains[1]
        err = np.concatenate([X_feet[swing, :3, 3] - X[swing, :3, 3],
                              so3_log(X_feet[swing, :3, :3] @ X[swing, :3, :3].T)])
        a = acc_ref + kp * err + kd * (vel_ref - J[swing] @ v)
        np.testing.assert_allclose(task_J[nj + 6:m], J[swing])
        np.testing.assert_allclose(target[nj + 6:m], a - drift[swing], atol=1e-10)
    # contacts: rows, and the reference wrenches put the total centre of pressure at the ZMP
    f_total = np.zeros(3)
    moment_origin = np.zeros(3)
    for k, side in enumerate(stance):
        np.testing.assert_allclose(H_C[6 * k:6 * k + 6], J[side])
        np.testing.assert_allclose(drift_C[6 * k:6 * k + 6], drift[side])
        f, n = w_ref[6 * k:6 * k + 3], w_ref[6 * k + 3:6 * k + 6]
        f_total += f
        moment_origin += n + np.cross(X_feet[side, :3, 3], f)
    assert f_total[2] == pytest.approx(weight_total)
    np.testing.assert_allclose([-moment_origin[1] / f_total[2], moment_origin[0] / f_total[2]], zmp, atol=1e-12)
