"""TaskKinematics: CoM velocity/drift and frame quantities against independent references."""

from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_sim import dynamics as dyn
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.model.urdf_loader import load_urdf

URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"


def random_state(model, rng):
    q = np.zeros(model.nq)
    q[:3] = rng.normal(size=3)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(np.maximum(model.limits.lower, -1.0), np.minimum(model.limits.upper, 1.0))
    return q, rng.normal(size=model.nv)


def test_com_drift_is_the_time_derivative_of_the_com_jacobian(rng):
    model = load_urdf(URDF)
    kin = TaskKinematics(model)
    for _ in range(3):
        q, v = random_state(model, rng)
        kin.update(q, v)
        drift = kin.com_drift.copy()
        h = 1e-6

        def jv(qq):
            kin.update(qq, v)
            return kin.com_jacobian @ v

        fd = (jv(dyn.integrate(model, q, v, h)) - jv(dyn.integrate(model, q, v, -h))) / (2 * h)
        np.testing.assert_allclose(drift, fd, atol=1e-5 * (1 + np.abs(fd).max()))


def test_com_and_frames_match_pinocchio(rng):
    model = load_urdf(URDF)
    pm = pin.buildModelFromUrdf(str(URDF), pin.JointModelFreeFlyer())
    data = pm.createData()
    iq = np.array([pm.joints[pm.getJointId(n)].idx_q for n in model.joint_names])
    iv = np.array([pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names])
    kin = TaskKinematics(model)
    q, v = random_state(model, rng)
    qp = np.zeros(pm.nq)
    qp[:7] = q[:7]
    qp[iq] = q[7:]
    vp = np.zeros(pm.nv)
    vp[:6] = v[:6]
    vp[iv] = v[6:]
    kin.update(q, v)
    pin.centerOfMass(pm, data, qp, vp, np.zeros(pm.nv))
    np.testing.assert_allclose(kin.com, data.com[0], atol=1e-12)
    np.testing.assert_allclose(kin.com_velocity, data.vcom[0], atol=1e-10)
    np.testing.assert_allclose(kin.com_drift, data.acom[0], atol=1e-9)  # a = 0: the drift
    pin.forwardKinematics(pm, data, qp, vp, np.zeros(pm.nv))
    pin.computeJointJacobians(pm, data, qp)
    pin.updateFramePlacements(pm, data)
    for name in ("l_sole", "r_sole", "chest"):
        fid = pm.getFrameId(name)
        np.testing.assert_allclose(kin.frame_pose(name), data.oMf[fid].homogeneous, atol=1e-12)
        J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
        ours = kin.frame_jacobian(name)
        np.testing.assert_allclose(ours[:, :6], J[:, :6], atol=1e-12)
        np.testing.assert_allclose(ours[:, 6:], J[:, iv], atol=1e-12)
        acc = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
        np.testing.assert_allclose(kin.frame_drift(name), acc, atol=1e-9)
