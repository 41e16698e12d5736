"""Random URDF trees (moving and fixed joints, rotated origins and inertials) against Pinocchio."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from humanoid_sim.model import load_urdf

pin = pytest.importorskip("pinocchio")


def _vec(v: np.ndarray) -> str:
    return " ".join(repr(float(x)) for x in v)


def random_urdf(rng: np.random.Generator, n_links: int) -> str:
    """A random tree: each link hangs from an earlier one by a revolute, prismatic,
    continuous or fixed joint with a random origin; inertials have random rpy."""
    parts = ['<robot name="random">']
    for k in range(n_links):
        principal = np.sort(rng.uniform(0.01, 0.5, 3))
        principal[2] = min(principal[2], principal[0] + principal[1])  # triangle inequality
        parts.append(
            f'<link name="l{k}"><inertial><origin xyz="{_vec(rng.uniform(-0.2, 0.2, 3))}"'
            f' rpy="{_vec(rng.uniform(-3, 3, 3))}"/><mass value="{float(rng.uniform(0.1, 5))!r}"/>'
            f'<inertia ixx="{float(principal[0])!r}" ixy="0" ixz="0" iyy="{float(principal[1])!r}" iyz="0"'
            f' izz="{float(principal[2])!r}"/></inertial></link>'
        )
    for k in range(1, n_links):
        jtype = rng.choice(["revolute", "prismatic", "continuous", "fixed", "fixed"])
        parent = int(rng.integers(0, k))
        axis = rng.normal(size=3)
        parts.append(
            f'<joint name="j{k}" type="{jtype}"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="{_vec(rng.uniform(-0.5, 0.5, 3))}" rpy="{_vec(rng.uniform(-3, 3, 3))}"/>'
            f'<axis xyz="{_vec(axis)}"/><limit lower="-1" upper="1" effort="10" velocity="3"/></joint>'
        )
    parts.append("</robot>")
    return "".join(parts)


@pytest.mark.parametrize("trial", range(6))
def test_random_tree_matches_pinocchio(rng: np.random.Generator, trial: int) -> None:
    for _ in range(trial):  # a different tree per trial from the one seeded generator
        rng.random()
    urdf = random_urdf(rng, n_links=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_urdf(urdf)
    oracle = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    assert model.nv == oracle.nv
    assert model.total_mass == pytest.approx(sum(i.mass for i in oracle.inertias), rel=1e-12)
    to_body = {"root_joint": 0} | {name: i + 1 for i, name in enumerate(model.joint_names)}
    for jid in range(1, oracle.njoints):
        body = to_body[oracle.names[jid]]
        assert model.parent[body] == (to_body[oracle.names[oracle.parents[jid]]] if jid > 1 else -1)
        if jid > 1:
            np.testing.assert_allclose(
                model.X_parent_joint[body], oracle.jointPlacements[jid].homogeneous, atol=1e-12
            )
        inertia = oracle.inertias[jid]
        assert model.mass[body] == pytest.approx(inertia.mass, rel=1e-12)
        np.testing.assert_allclose(model.com[body], inertia.lever, atol=1e-12)
        np.testing.assert_allclose(model.inertia_com[body], inertia.inertia, atol=1e-12)
    # Joint axes: Pinocchio's motion subspace at q = 0 (angular part for revolute, linear for prismatic).
    data = oracle.createData()
    q0 = pin.neutral(oracle)
    pin.computeJointJacobians(oracle, data, q0)
    for i, name in enumerate(model.joint_names):
        jid = oracle.getJointId(name)
        v = oracle.joints[jid].idx_v
        J_local = pin.getJointJacobian(oracle, data, jid, pin.LOCAL)[:, v]
        axis = model.joint_axis[i + 1]
        if oracle.joints[jid].shortname().removeprefix("JointModel").startswith("P"):
            np.testing.assert_allclose(J_local[:3], axis, atol=1e-12)
        else:
            np.testing.assert_allclose(J_local[3:], axis, atol=1e-12)
    # Every link frame on the same body at the same place.
    for frame in oracle.frames:
        if frame.type == pin.FrameType.BODY and frame.name != "universe":
            ours = model.frame(frame.name)
            assert ours.body == to_body[oracle.names[frame.parentJoint]]
            np.testing.assert_allclose(ours.X_body_frame, frame.placement.homogeneous, atol=1e-12)
