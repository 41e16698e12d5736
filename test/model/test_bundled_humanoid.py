"""urdf/humanoid.urdf: the 28-DOF human figure of seed 000 (Fig. 5, Table 3)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.model import JointType, ShapeKind, load_urdf, neutral_configuration

HUMANOID = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"

# Table 3 of seed 000: mass [kg] and (Ixx, Iyy, Izz) [kg m^2]. Limbs lie along z here, so the
# paper's smallest moment (about the limb axis) is put on z.
TABLE3 = {
    "pelvis": (15.0, (0.4, 0.2, 0.4)),
    "chest": (16.0, (0.8, 0.4, 0.8)),
    "head": (4.0, (0.1, 0.1, 0.1)),
    "thigh": (5.0, (0.2, 0.2, 0.1)),
    "shank": (4.0, (0.2, 0.2, 0.1)),
    "foot": (2.0, (0.02, 0.02, 0.02)),
    "upper_arm": (4.0, (0.2, 0.2, 0.1)),
    "lower_arm": (2.0, (0.2, 0.2, 0.1)),
}
BALL_JOINTS = {
    "l_hip": ("yaw", "roll", "pitch"),
    "r_hip": ("yaw", "roll", "pitch"),
    "l_shoulder": ("pitch", "roll", "yaw"),
    "r_shoulder": ("pitch", "roll", "yaw"),
    "waist": ("yaw", "pitch", "roll"),
    "neck": ("yaw", "pitch", "roll"),
}


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bundled model must load without any warning
        return load_urdf(HUMANOID)


def world_poses_at_zero(model) -> np.ndarray:
    """X_world_body at q = neutral with the base at the origin (all joint transforms identity)."""
    X = np.zeros((model.nb, 4, 4))
    for i in range(model.nb):
        X[i] = (
            model.X_parent_joint[i] if model.parent[i] < 0 else X[model.parent[i]] @ model.X_parent_joint[i]
        )
    return X


def test_dimensions_and_total_mass(model) -> None:
    assert model.floating_base
    assert model.nj == 28 and model.nv == 34 and model.nq == 35 and model.nb == 29
    assert model.total_mass == pytest.approx(69.0, abs=1e-12)
    assert all(t == JointType.REVOLUTE for t in model.joint_type[1:])


def test_table3_masses_and_inertias(model) -> None:
    for i, name in enumerate(model.body_names):
        key = name[2:] if name[:2] in ("l_", "r_") else name
        if key in TABLE3:
            mass, moments = TABLE3[key]
            assert model.mass[i] == mass, name
            np.testing.assert_allclose(model.inertia_com[i], np.diag(moments), err_msg=name)
        else:  # intermediate link of a multi-axis joint: intentionally massless
            assert model.mass[i] == 0.0 and name.endswith("_link"), name
    assert int(np.count_nonzero(model.mass)) == 13  # pelvis, chest, head + 2 x 5 limb segments


def test_ball_joints_have_three_orthogonal_intersecting_axes(model) -> None:
    for prefix, axes in BALL_JOINTS.items():
        names = [f"{prefix}_{a}" for a in axes]
        bodies = [model.joint_index(n) + 1 for n in names]
        assert model.parent[bodies[1]] == bodies[0] and model.parent[bodies[2]] == bodies[1], prefix
        # Second and third joint at the first one's origin: the axes intersect in one point.
        for b in bodies[1:]:
            np.testing.assert_array_equal(model.X_parent_joint[b], np.eye(4))
        A = np.array([model.joint_axis[b] for b in bodies])
        np.testing.assert_allclose(np.abs(A @ A.T), np.eye(3), err_msg=prefix)
        assert model.mass[bodies[2]] > 0.0


def test_soles_are_019_by_012_boxes_under_the_ankles(model) -> None:
    X_world = world_poses_at_zero(model)
    for side in ("l", "r"):
        foot = model.body_names.index(f"{side}_foot")
        boxes = [s for s in model.collision_shapes if s.body == foot and s.kind == ShapeKind.BOX]
        assert len(boxes) == 1
        box = boxes[0]
        np.testing.assert_allclose(box.size[:2], [0.19, 0.12])
        sole = model.frame(f"{side}_sole")
        assert sole.body == foot
        # Sole frame: centre of the box's bottom face, z up (axes parallel to the foot's).
        bottom_centre = box.X_body_shape[:3, 3] - box.X_body_shape[:3, 2] * box.size[2] / 2
        np.testing.assert_allclose(sole.X_body_frame[:3, 3], bottom_centre, atol=1e-15)
        np.testing.assert_allclose(sole.X_body_frame[:3, :3], np.eye(3))
        assert sole.X_body_frame[2, 3] < 0.0  # below the ankle joint
        X_world_sole = X_world[foot] @ sole.X_body_frame
        # Standing pose: pelvis 0.95 m above the sole, hip 0.90 m above it.
        assert X_world[0][2, 3] - X_world_sole[2, 3] == pytest.approx(0.95)
        hip = model.joint_index(f"{side}_hip_yaw") + 1
        assert X_world[hip][2, 3] - X_world_sole[2, 3] == pytest.approx(0.90)


def test_limits_are_human_and_bounded(model) -> None:
    lim = model.limits
    assert np.all(np.isfinite(lim.lower)) and np.all(np.isfinite(lim.upper))
    assert np.all(lim.lower <= 0.0) and np.all(lim.upper >= 0.0)
    assert np.all(lim.lower < lim.upper)
    knee = model.joint_index("l_knee")
    assert (lim.lower[knee], lim.upper[knee]) == (0.0, 2.4)
    effort = dict(zip(model.joint_names, lim.effort))
    assert effort["l_hip_pitch"] == effort["r_knee"] == 300.0
    assert effort["l_ankle_roll"] == 200.0 and effort["r_elbow_pitch"] == 100.0 and effort["neck_yaw"] == 30.0
    # Left and right limbs mirror each other about the sagittal plane.
    for name in model.joint_names:
        if name.startswith("l_"):
            i, j = model.joint_index(name), model.joint_index("r_" + name[2:])
            if name.endswith("_roll"):
                assert (lim.lower[i], lim.upper[i]) == (-lim.upper[j], -lim.lower[j]), name
            else:
                assert (lim.lower[i], lim.upper[i]) == (lim.lower[j], lim.upper[j]), name
    np.testing.assert_array_equal(neutral_configuration(model)[7:], np.zeros(28))


def test_pinocchio_reads_the_same_model(model) -> None:
    pin = pytest.importorskip("pinocchio")
    oracle = pin.buildModelFromUrdf(str(HUMANOID), pin.JointModelFreeFlyer())
    assert oracle.nv == 34 and oracle.nq == 35
    assert pin.computeTotalMass(oracle) == pytest.approx(69.0)
    # Sibling joints are in name order in the file, so Pinocchio's joint order is ours.
    assert tuple(oracle.names[2:]) == model.joint_names
    for i in range(1, model.nb):
        np.testing.assert_allclose(oracle.jointPlacements[i + 1].homogeneous, model.X_parent_joint[i])
        np.testing.assert_allclose(oracle.inertias[i + 1].inertia, model.inertia_com[i])
    data = oracle.createData()
    M = pin.crba(oracle, data, pin.neutral(oracle))
    M = np.triu(M) + np.triu(M, 1).T
    assert np.linalg.eigvalsh(M).min() > 0.0  # massless intermediates leave M positive definite
    sole = oracle.getFrameId("l_sole")
    pin.framesForwardKinematics(oracle, data, pin.neutral(oracle))
    np.testing.assert_allclose(data.oMf[sole].translation, [0.045, 0.09, -0.95], atol=1e-12)


def test_standing_com_is_over_the_feet_at_human_height(model) -> None:
    X_world = world_poses_at_zero(model)
    com = sum(m * (X[:3, :3] @ c + X[:3, 3]) for m, c, X in zip(model.mass, model.com, X_world)) / 69.0
    foot = model.body_names.index("l_foot")
    (box,) = [s for s in model.collision_shapes if s.body == foot and s.kind == ShapeKind.BOX]
    heel = X_world[foot][0, 3] + box.X_body_shape[0, 3] - box.size[0] / 2
    toe = heel + box.size[0]
    assert heel < com[0] < toe and com[1] == pytest.approx(0.0, abs=1e-12)
    sole_z = (X_world[foot] @ model.frame("l_sole").X_body_frame)[2, 3]
    assert 0.85 < com[2] - sole_z < 1.05  # about 55 % of a 1.73 m body height


def test_plain_urdf_that_urdf_parser_py_reads_silently(capfd: pytest.CaptureFixture[str]) -> None:
    urdf = pytest.importorskip("urdf_parser_py.urdf")
    robot = urdf.URDF.from_xml_file(str(HUMANOID))
    out, err = capfd.readouterr()
    assert out == err == ""  # no "unknown tag" complaints: only standard URDF elements
    assert sum(link.inertial.mass for link in robot.links if link.inertial) == pytest.approx(69.0)
    assert sum(1 for j in robot.joints if j.type == "revolute") == 28
