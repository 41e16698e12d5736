"""Ball-joint groups of the bundled humanoid against the Pinocchio oracle (floating base)."""

import numpy as np
import pinocchio as pin
import pytest

from humanoid_sim.limits import RangeOfMotionProvider, default_range_of_motion_path, load_range_of_motion
from humanoid_sim.model import load_urdf

URDF = str(default_range_of_motion_path().parents[1] / "urdf" / "humanoid.urdf")


@pytest.fixture(scope="module")
def humanoid():
    model = load_urdf(URDF)
    provider = RangeOfMotionProvider(model, load_range_of_motion(default_range_of_motion_path()))
    pm = pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer())
    return model, provider, pm, pm.createData()


def random_state(model, rng):
    q = np.zeros(model.nq)
    q[:3] = rng.normal(size=3)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(-1.5, 1.5, model.nj)
    return q, rng.normal(size=model.nv)


def to_pin(model, pm, q, v):
    """Our (q, v) in Pinocchio's joint order (same layout per joint: free flyer xyzw, revolute 1)."""
    pq, pv = np.zeros(pm.nq), np.zeros(pm.nv)
    pq[:7], pv[:6] = q[:7], v[:6]
    for j, name in enumerate(model.joint_names):
        jid = pm.getJointId(name)
        pq[pm.idx_qs[jid]] = q[7 + j]
        pv[pm.idx_vs[jid]] = v[6 + j]
    return pq, pv


def test_group_rotation_and_rate_match_pinocchio(humanoid, rng):
    model, provider, pm, pd = humanoid
    for _ in range(5):
        q, v = random_state(model, rng)
        pq, pv = to_pin(model, pm, q, v)
        pin.computeJointJacobians(pm, pd, pq)
        pin.forwardKinematics(pm, pd, pq, pv)
        for kin in provider.groups:
            ids = [pm.getJointId(j) for j in kin.group.joints]
            parent = pm.parents[ids[0]]
            R_P = pd.oMi[parent].rotation
            q_zero = pq.copy()
            for jid in ids:
                q_zero[pm.idx_qs[jid]] = 0.0
            d0 = pin.Data(pm)
            pin.forwardKinematics(pm, d0, q_zero)
            R_ref = d0.oMi[parent].rotation.T @ d0.oMi[ids[2]].rotation
            R_rel = R_P.T @ pd.oMi[ids[2]].rotation @ R_ref.T
            state = kin.state(q[kin.q_index])
            np.testing.assert_allclose(state.R_rel, R_rel, atol=1e-12)
            # ω_rel in P = R_Pᵀ (ω_child - ω_parent): only the group's columns, equal to J_group
            J3 = pin.getJointJacobian(pm, pd, ids[2], pin.LOCAL_WORLD_ALIGNED)[3:]
            JP = pin.getJointJacobian(pm, pd, parent, pin.LOCAL_WORLD_ALIGNED)[3:]
            J_rel = R_P.T @ (J3 - JP)
            cols = [pm.idx_vs[jid] for jid in ids]
            np.testing.assert_allclose(J_rel[:, cols], state.J_group, atol=1e-12)
            others = np.setdiff1d(np.arange(pm.nv), cols)
            np.testing.assert_allclose(J_rel[:, others], 0.0, atol=1e-12)


def test_provider_rows_on_the_floating_humanoid(humanoid, rng):
    """Rows live on the group columns of v (after the 6 base columns) and are gap rates."""
    model, provider, _, _ = humanoid
    h = 1e-6
    checked = 0
    for _ in range(10):
        q, v = random_state(model, rng)
        rows = provider.evaluate(q, v)
        rows.validate(model.nv)
        assert np.all(rows.jacobian[:, :6] == 0.0)
        for i, name in enumerate(rows.names):
            group = next((k for k in provider.groups if name.startswith(k.group.name + " ")), None)
            if group is None:  # a URDF stop: unit row on its joint
                assert np.count_nonzero(rows.jacobian[i]) == 1
                continue
            kind = name[len(group.group.name) + 1 :]
            qd = v[group.v_index]
            gp = {r.kind: r.gap for r in group.rows(q[group.q_index] + h * qd, np.inf)}[kind]
            gm = {r.kind: r.gap for r in group.rows(q[group.q_index] - h * qd, np.inf)}[kind]
            assert rows.jacobian[i] @ v == pytest.approx((gp - gm) / (2 * h), rel=1e-4, abs=1e-5)
            assert rows.violation[i] > -provider.activation_band
            checked += 1
    assert checked >= 10
