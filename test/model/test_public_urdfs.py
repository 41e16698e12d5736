"""Public humanoid URDFs (example-robot-data) load unmodified and agree with Pinocchio."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.model import JointType, ShapeKind, load_urdf

pin = pytest.importorskip("pinocchio")


PUBLIC = [
    "talos_data/robots/talos_reduced.urdf",
    "talos_data/robots/talos_full_v2_box.urdf",
    "talos_data/robots/talos_full_v2.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "icub_description/robots/icub.urdf",
    "romeo_description/urdf/romeo.urdf",
    "simple_humanoid_description/urdf/simple_humanoid.urdf",
]


def load_quietly(path: Path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_urdf(path, **kwargs)


@pytest.mark.parametrize("relative", PUBLIC, ids=[Path(p).stem for p in PUBLIC])
def test_public_humanoid_matches_pinocchio(relative: str, robots_dir: Path) -> None:
    path = robots_dir / relative
    # Pinocchio reads <mimic> joints as independent joints by default; so do we with this flag.
    model = load_quietly(path, mimic="independent")
    oracle = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())

    assert model.floating_base
    assert model.nb == oracle.njoints - 1  # Pinocchio counts the universe
    assert model.nv == oracle.nv
    n_continuous = sum(1 for j in oracle.joints[2:] if j.nq == 2)  # (cos, sin) in Pinocchio
    assert model.nq == oracle.nq - n_continuous
    oracle_mass = sum(inertia.mass for inertia in oracle.inertias)
    assert model.total_mass == pytest.approx(oracle_mass, rel=1e-12)
    assert set(model.joint_names) == set(oracle.names[2:])

    compared_limits = 0
    # Body by body (matched by joint name): parent, placement, axis, mass, COM, inertia.
    for i, name in enumerate(model.joint_names):
        body = i + 1
        jid = oracle.getJointId(name)
        parent_name = oracle.names[oracle.parents[jid]]
        expected_parent = 0 if parent_name == "root_joint" else model.joint_index(parent_name) + 1
        assert model.parent[body] == expected_parent, name
        np.testing.assert_allclose(
            model.X_parent_joint[body], oracle.jointPlacements[jid].homogeneous, atol=1e-12
        )
        inertia = oracle.inertias[jid]
        assert model.mass[body] == pytest.approx(inertia.mass, abs=1e-12), name
        if inertia.mass > 0:
            np.testing.assert_allclose(model.com[body], inertia.lever, atol=1e-12)
        np.testing.assert_allclose(model.inertia_com[body], inertia.inertia, atol=1e-12)
        if oracle.joints[jid].nq == 1:  # bounded joint (continuous ones have nq = 2)
            compared_limits += 1
            q = oracle.joints[jid].idx_q
            assert model.limits.lower[i] == pytest.approx(oracle.lowerPositionLimit[q]), name
            assert model.limits.upper[i] == pytest.approx(oracle.upperPositionLimit[q]), name
            v = oracle.joints[jid].idx_v
            assert model.limits.effort[i] == pytest.approx(oracle.effortLimit[v]), name
            assert model.limits.velocity[i] == pytest.approx(oracle.velocityLimit[v]), name
    assert compared_limits == model.nj - n_continuous
    # Root body: merged inertia of the base link.
    root = oracle.inertias[1]
    assert model.mass[0] == pytest.approx(root.mass, abs=1e-12)
    np.testing.assert_allclose(model.inertia_com[0], root.inertia, atol=1e-12)

    # Every URDF link frame sits on the same body at the same pose as Pinocchio's BODY frame.
    for frame in oracle.frames:
        if frame.type != pin.FrameType.BODY or frame.name == "universe":
            continue
        ours = model.frame(frame.name)
        joint_name = oracle.names[frame.parentJoint]
        expected_body = 0 if joint_name == "root_joint" else model.joint_index(joint_name) + 1
        assert ours.body == expected_body, frame.name
        np.testing.assert_allclose(ours.X_body_frame, frame.placement.homogeneous, atol=1e-12)


def test_romeo_with_mimic_fixed_welds_the_fingers(robots_dir: Path) -> None:
    path = robots_dir / "romeo_description/urdf/romeo.urdf"
    independent = load_quietly(path, mimic="independent")
    fixed = load_quietly(path, mimic="fixed")
    assert fixed.nv < independent.nv
    assert fixed.total_mass == pytest.approx(independent.total_mass, rel=1e-12)
    assert all(t != JointType.FIXED_TO_WORLD for t in fixed.joint_type[1:])


def test_mimic_refused_by_default_naming_the_joint(robots_dir: Path) -> None:
    from humanoid_sim.model import UrdfError

    with pytest.raises(UrdfError, match=r"joint '\w+': <mimic> joints are not supported"):
        load_urdf(robots_dir / "talos_data/robots/talos_reduced.urdf")


def test_talos_loads_without_flooding_the_console(capfd: pytest.CaptureFixture[str], robots_dir: Path) -> None:
    path = robots_dir / "talos_data/robots/talos_full_v2.urdf"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_urdf(path, mimic="independent")
    out, err = capfd.readouterr()
    assert len(caught) <= 1
    assert len(out.splitlines()) + len(err.splitlines()) <= 2
    assert model.nv == 50 and len(model.collision_shapes) > 0


MESHED = [
    "talos_data/robots/talos_reduced.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "icub_description/robots/icub.urdf",
    "romeo_description/urdf/romeo.urdf",
    "tiago_description/robots/tiago.urdf",
]


@pytest.mark.parametrize("relative", MESHED, ids=[Path(p).stem for p in MESHED])
def test_collision_hulls_match_pinocchio_geometry(
    relative: str, rng: np.random.Generator, robots_dir: Path
) -> None:
    """Each mesh hull (scaled, placed in its body frame) has the same support function as the
    mesh Pinocchio/coal loads with assimp: same convex set, so same units, axes and scale."""
    path = robots_dir / relative
    model = load_quietly(path, mimic="independent", strict_inertia=False)
    oracle = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    geometry = pin.buildGeomFromUrdf(
        oracle, str(path), pin.COLLISION, package_dirs=[str(robots_dir.parents[1])]
    )
    by_name = {g.name: g for g in geometry.geometryObjects}
    directions = rng.normal(size=(64, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    index_in_link: dict[str, int] = {}
    compared = 0
    for shape in model.collision_shapes:
        k = index_in_link.get(shape.link_name, 0)
        index_in_link[shape.link_name] = k + 1
        if shape.kind != ShapeKind.MESH:
            continue
        g = by_name[f"{shape.link_name}_{k}"]
        assert model.frame(shape.link_name).body == (
            0
            if oracle.names[g.parentJoint] == "root_joint"
            else model.joint_index(oracle.names[g.parentJoint]) + 1
        )
        g.geometry.buildConvexHull(True, "Qt")
        theirs_local = np.array(g.geometry.vertices())
        X = g.placement.homogeneous
        theirs = theirs_local @ X[:3, :3].T + X[:3, 3]
        ours = shape.vertices @ shape.X_body_shape[:3, :3].T + shape.X_body_shape[:3, 3]
        np.testing.assert_allclose(
            (ours @ directions.T).max(axis=0),
            (theirs @ directions.T).max(axis=0),
            atol=1e-6,
            err_msg=f"{shape.link_name} collision {k}",
        )
        compared += 1
    assert compared > 0


OTHERS = [  # non-humanoids that exercise other paths: world weld, continuous joints, rounded inertias
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf",
    "tiago_description/robots/tiago.urdf",
]


@pytest.mark.parametrize("relative", OTHERS, ids=[Path(p).stem for p in OTHERS])
def test_other_public_robots_agree_with_pinocchio(relative: str, robots_dir: Path) -> None:
    path = robots_dir / relative
    model = load_quietly(path, mimic="independent", strict_inertia=False)
    oracle = (
        pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        if model.floating_base
        else pin.buildModelFromUrdf(str(path))
    )
    assert model.nv == oracle.nv
    n_continuous = sum(1 for j in oracle.joints[1:] if j.nq == 2)
    assert model.nq == oracle.nq - n_continuous
    assert model.total_mass == pytest.approx(sum(i.mass for i in oracle.inertias), rel=1e-12)
    for i, name in enumerate(model.joint_names):
        jid = oracle.getJointId(name)
        np.testing.assert_allclose(model.inertia_com[i + 1], oracle.inertias[jid].inertia, atol=1e-12)
        np.testing.assert_allclose(
            model.X_parent_joint[i + 1], oracle.jointPlacements[jid].homogeneous, atol=1e-12
        )
    if not model.floating_base:  # the world weld is the root's placement in the world
        first = oracle.getJointId(model.joint_names[0])
        X_world_first = model.X_parent_joint[0] @ model.X_parent_joint[1]
        np.testing.assert_allclose(X_world_first, oracle.jointPlacements[first].homogeneous, atol=1e-12)
