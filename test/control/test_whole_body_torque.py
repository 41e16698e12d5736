"""Whole-body torques of seed 000 Eq. 11/23, checked against Pinocchio and statics."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from humanoid_sim import dynamics as dyn
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.control.whole_body_torque import AccelerationTask, WholeBodyWeights, solve_whole_body
from humanoid_sim.model.urdf_loader import load_urdf

TASK_WEIGHT = 1e8  # tasks dominate the 1e-6 regularisation: its bias is ~1e-14 relative
URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"
STAND = dict(l_hip_pitch=-0.25, l_knee=0.5, l_ankle_pitch=-0.25, r_hip_pitch=-0.25, r_knee=0.5,
             r_ankle_pitch=-0.25, l_shoulder_roll=0.15, r_shoulder_roll=-0.15)


@pytest.fixture(scope="module")
def humanoid():
    model = load_urdf(URDF)
    pin_model = pin.buildModelFromUrdf(str(URDF), pin.JointModelFreeFlyer())
    # Our joint order -> Pinocchio's v index (matched by name).
    pin_v = np.array([pin_model.joints[pin_model.getJointId(n)].idx_v for n in model.joint_names])
    pin_q = np.array([pin_model.joints[pin_model.getJointId(n)].idx_q for n in model.joint_names])
    return model, pin_model, pin_q, pin_v


def stand_configuration(model) -> np.ndarray:
    q = np.zeros(model.nq)
    q[6] = 1.0
    for name, value in STAND.items():
        q[7 + model.joint_index(name)] = value
    q[2] = -dyn.frame_placement(model, q, "l_sole")[2, 3]  # soles on z = 0
    return q


def to_pin(model, pin_q, pin_v, q=None, v=None):
    out = []
    if q is not None:
        qp = np.zeros(7 + model.nj)
        qp[:7] = q[:7]
        qp[pin_q] = q[7:]
        out.append(qp)
    if v is not None:
        vp = np.zeros(6 + model.nj)
        vp[:6] = v[:6]
        vp[pin_v] = v[6:]
        out.append(vp)
    return out


def hold_still_task(nv: int) -> AccelerationTask:
    """Every coordinate at zero acceleration (a consistent, fully specified motion)."""
    return AccelerationTask(np.eye(nv), np.zeros(nv), np.zeros(nv), TASK_WEIGHT)


def contact_rows(kin: TaskKinematics, frames):
    H = np.vstack([kin.frame_jacobian(f) for f in frames])
    drift = np.concatenate([kin.frame_drift(f) for f in frames])
    return H, drift


def test_single_support_static_torques_match_pinocchio_statics(humanoid):
    model, pin_model, pin_q, pin_v = humanoid
    q = stand_configuration(model)
    v = np.zeros(model.nv)
    kin = TaskKinematics(model)
    kin.update(q, v)
    H, drift = contact_rows(kin, ["l_sole"])
    sol = solve_whole_body(kin.M, kin.b, H, drift, [hold_still_task(model.nv)])
    np.testing.assert_allclose(sol.qdd, 0.0, atol=1e-9)
    # Oracle: Pinocchio gravity and sole Jacobian; the 6 base rows fix the sole wrench,
    # the joint rows give the torques: τ = g_J - J_Jᵀ f (one foot: unique).
    data = pin_model.createData()
    (qp,) = to_pin(model, pin_q, pin_v, q=q)
    g = pin.computeGeneralizedGravity(pin_model, data, qp)
    pin.computeJointJacobians(pin_model, data, qp)
    pin.updateFramePlacements(pin_model, data)
    J = pin.getFrameJacobian(pin_model, data, pin_model.getFrameId("l_sole"), pin.LOCAL_WORLD_ALIGNED)
    f = np.linalg.solve(J[:, :6].T, g[:6])
    tau_pin = g[6:] - J[:, 6:].T @ f
    np.testing.assert_allclose(sol.wrenches, f, rtol=1e-7, atol=1e-6)
    np.testing.assert_allclose(sol.tau, tau_pin[pin_v - 6], rtol=1e-7, atol=1e-6)
    assert sol.wrenches[2] == pytest.approx(model.total_mass * 9.81, rel=1e-9)


def test_double_support_static_balance_and_zmp_under_com(humanoid):
    model, pin_model, pin_q, pin_v = humanoid
    q = stand_configuration(model)
    v = np.zeros(model.nv)
    kin = TaskKinematics(model)
    kin.update(q, v)
    H, drift = contact_rows(kin, ["l_sole", "r_sole"])
    weight = model.total_mass * 9.81
    ref = np.array([0, 0, weight / 2, 0, 0, 0] * 2, dtype=float)
    sol = solve_whole_body(kin.M, kin.b, H, drift, [hold_still_task(model.nv)], wrench_reference=ref)
    np.testing.assert_allclose(sol.qdd, 0.0, atol=1e-9)
    # Gravity compensation: H_Jᵀ τ + H_Cᵀ τ_C = g(q) (Pinocchio's gravity vector).
    data = pin_model.createData()
    (qp,) = to_pin(model, pin_q, pin_v, q=q)
    g = pin.computeGeneralizedGravity(pin_model, data, qp)
    generalized = H.T @ sol.wrenches
    generalized[6:] += sol.tau
    g_ours = np.concatenate([g[:6], g[pin_v]])
    np.testing.assert_allclose(generalized, g_ours, rtol=1e-8, atol=1e-6)
    # Statics: Σ f = m g (up), the ZMP of the two wrenches is the CoM projection.
    f_l, f_r = sol.wrenches[:6], sol.wrenches[6:]
    np.testing.assert_allclose(f_l[:3] + f_r[:3], [0.0, 0.0, weight], atol=1e-6)
    p_l = kin.frame_pose("l_sole")[:3, 3]
    p_r = kin.frame_pose("r_sole")[:3, 3]
    moment_origin = f_l[3:] + np.cross(p_l, f_l[:3]) + f_r[3:] + np.cross(p_r, f_r[:3])
    zmp = np.array([-moment_origin[1], moment_origin[0]]) / weight  # ground at z = 0
    com = pin.centerOfMass(pin_model, data, qp)
    np.testing.assert_allclose(zmp, com[:2], atol=1e-9)
    # The reference splits the load evenly (symmetric stance): no internal twist either.
    assert f_l[2] == pytest.approx(weight / 2, rel=1e-6)


def test_dynamic_solution_satisfies_pinocchio_dynamics_and_tasks(humanoid, rng):
    model, pin_model, pin_q, pin_v = humanoid
    q = stand_configuration(model)
    v = 0.3 * rng.normal(size=model.nv)
    kin = TaskKinematics(model)
    # The stance foot must not move: project v onto the constraint's null space.
    kin.update(q, v)
    H, _ = contact_rows(kin, ["l_sole"])
    v = v - np.linalg.pinv(H) @ (H @ v)
    kin.update(q, v)
    H, drift = contact_rows(kin, ["l_sole"])
    a_com = np.array([0.3, -0.2, 0.1])
    X_t = kin.frame_pose("chest")
    J_t = kin.frame_jacobian("chest", X_t)[3:]
    a_t = np.array([0.5, -1.0, 0.2])
    tasks = [
        AccelerationTask(kin.com_jacobian.copy(), kin.com_drift.copy(), a_com, TASK_WEIGHT),
        AccelerationTask(J_t.copy(), kin.frame_drift("chest", X_t)[3:].copy(), a_t, TASK_WEIGHT),
    ]
    sol = solve_whole_body(kin.M, kin.b, H, drift, tasks, WholeBodyWeights())
    assert np.max(sol.task_residual) < 1e-7  # feasible tasks met (up to the regularisation)
    qp, vp = to_pin(model, pin_q, pin_v, q=q, v=v)
    ap = to_pin(model, pin_q, pin_v, v=sol.qdd)[0]
    data = pin_model.createData()
    tau_rnea = pin.rnea(pin_model, data, qp, vp, ap)
    generalized = H.T @ sol.wrenches
    generalized[6:] += sol.tau
    np.testing.assert_allclose(generalized, np.concatenate([tau_rnea[:6], tau_rnea[pin_v]]), rtol=1e-7, atol=1e-6)
    # Contact kept: classical acceleration of the sole is zero (Pinocchio).
    pin.forwardKinematics(pin_model, data, qp, vp, ap)
    pin.updateFramePlacements(pin_model, data)
    acc = pin.getFrameClassicalAcceleration(pin_model, data, pin_model.getFrameId("l_sole"), pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(acc.vector, 0.0, atol=1e-8)
    # CoM task met: Pinocchio's CoM acceleration.
    pin.centerOfMass(pin_model, data, qp, vp, ap)
    np.testing.assert_allclose(data.acom[0], a_com, atol=1e-7)


def test_fixed_base_pendulum_torque_is_inverse_dynamics():
    # One link, no contact, fully actuated: τ = m l^2 θ̈ + m g l sin θ for θ̈ desired.
    m, l, g, theta = 2.0, 0.5, 9.81, 0.3
    M = np.array([[m * l * l]])
    b = np.array([m * g * l * np.sin(theta)])
    task = AccelerationTask(np.eye(1), np.zeros(1), np.array([1.5]), 1.0)
    sol = solve_whole_body(M, b, np.zeros((0, 1)), np.zeros(0), [task], n_actuated=1)
    assert sol.tau[0] == pytest.approx(m * l * l * 1.5 + m * g * l * np.sin(theta), rel=1e-5)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="shapes"):
        solve_whole_body(np.eye(7), np.zeros(6), np.zeros((0, 7)), np.zeros(0), [])
    with pytest.raises(ValueError, match="task 0"):
        solve_whole_body(np.eye(7), np.zeros(7), np.zeros((0, 7)), np.zeros(0),
                         [AccelerationTask(np.eye(3), np.zeros(3), np.zeros(3))], n_actuated=1)
