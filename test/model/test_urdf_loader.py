"""load_urdf on small hand-written URDFs, against closed-form answers."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from humanoid_sim.model import JointType, ShapeKind, load_urdf, neutral_configuration
from humanoid_sim.model.urdf_builder import box_inertia, box_link_xml, chain_urdf, free_box_urdf


def inertial_xml(mass: float, I: tuple[float, float, float], xyz: str = "0 0 0", rpy: str = "0 0 0") -> str:
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        f'<inertia ixx="{I[0]}" ixy="0" ixz="0" iyy="{I[1]}" iyz="0" izz="{I[2]}"/></inertial>'
    )


def test_free_box_has_free_base_and_box_inertia() -> None:
    model = load_urdf(free_box_urdf(mass=2.0, size=(0.4, 0.2, 0.1)))
    assert model.nb == 1 and model.nq == 7 and model.nv == 6 and model.nj == 0
    assert model.joint_type[0] == JointType.FREE
    assert model.floating_base
    np.testing.assert_allclose(
        np.diag(model.inertia_com[0]),
        [2.0 * (0.04 + 0.01) / 12, 2.0 * (0.16 + 0.01) / 12, 2.0 * (0.16 + 0.04) / 12],
    )
    (shape,) = model.collision_shapes
    assert shape.kind == ShapeKind.BOX and shape.body == 0
    np.testing.assert_allclose(shape.size, [0.4, 0.2, 0.1])


def test_fixed_child_is_merged_with_parallel_axis_theorem() -> None:
    # Two boxes: parent m1 at the origin, child m2 welded at d along x and turned 90 deg about z.
    m1, m2, d = 3.0, 1.0, 0.4
    I1, I2 = (0.1, 0.2, 0.3), (0.01, 0.04, 0.05)
    urdf = (
        '<robot name="r">'
        f'<link name="a">{inertial_xml(m1, I1)}</link>'
        f'<link name="b">{inertial_xml(m2, I2)}</link>'
        f'<joint name="weld" type="fixed"><parent link="a"/><child link="b"/>'
        f'<origin xyz="{d} 0 0" rpy="0 0 {math.pi / 2}"/></joint></robot>'
    )
    model = load_urdf(urdf)
    assert model.nb == 1 and model.body_names == ("a",)
    assert model.mass[0] == pytest.approx(m1 + m2)
    com_x = m2 * d / (m1 + m2)
    np.testing.assert_allclose(model.com[0], [com_x, 0.0, 0.0], atol=1e-15)
    reduced = m1 * m2 / (m1 + m2) * d * d  # parallel-axis term about the common COM
    expected = np.diag([I1[0] + I2[1], I1[1] + I2[0] + reduced, I1[2] + I2[2] + reduced])
    np.testing.assert_allclose(model.inertia_com[0], expected, atol=1e-12)
    frame_b = model.frame("b")
    assert frame_b.body == 0
    np.testing.assert_allclose(frame_b.X_body_frame[:3, 3], [d, 0, 0])
    np.testing.assert_allclose(
        frame_b.X_body_frame[:3, :3], Rotation.from_euler("z", 90, degrees=True).as_matrix(), atol=1e-15
    )
    np.testing.assert_array_equal(model.frame("weld").X_body_frame, frame_b.X_body_frame)


def test_inertial_origin_rpy_rotates_the_tensor(rng: np.random.Generator) -> None:
    rpy = rng.uniform(-math.pi, math.pi, 3)
    I = (0.3, 0.5, 0.7)
    urdf = (
        f'<robot name="r"><link name="a">{inertial_xml(2.0, I, xyz="0.1 -0.2 0.3", rpy=" ".join(repr(float(a)) for a in rpy))}'
        "</link></robot>"
    )
    model = load_urdf(urdf)
    # URDF rpy is extrinsic x-y-z (R = Rz Ry Rx): scipy's lowercase "xyz".
    R = Rotation.from_euler("xyz", rpy).as_matrix()
    np.testing.assert_allclose(model.inertia_com[0], R @ np.diag(I) @ R.T, atol=1e-14)
    np.testing.assert_allclose(model.com[0], [0.1, -0.2, 0.3])


def test_joint_types_limits_and_depth_first_order() -> None:
    lim = '<limit lower="-1" upper="2" effort="30" velocity="4"/>'
    urdf = (
        '<robot name="tree">'
        + box_link_xml("base", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("l1", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("l2", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("r1", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("r2", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="jl1" type="revolute"><parent link="base"/><child link="l1"/>'
        f'<axis xyz="0 0 2"/>{lim}</joint>'
        + '<joint name="jr1" type="continuous"><parent link="base"/><child link="r1"/>'
        '<limit effort="5" velocity="6" lower="-1" upper="1"/></joint>'
        + '<joint name="jl2" type="prismatic"><parent link="l1"/><child link="l2"/>'
        '<axis xyz="0 1 0"/><limit lower="0" upper="0.5"/></joint>'
        + '<joint name="jr2" type="revolute"><parent link="r1"/><child link="r2"/></joint>'
        "</robot>"
    )
    model = load_urdf(urdf)
    assert model.body_names == ("base", "l1", "l2", "r1", "r2")
    assert model.parent.tolist() == [-1, 0, 1, 0, 3]
    assert model.joint_names == ("jl1", "jl2", "jr1", "jr2")
    assert model.joint_type.tolist() == [
        JointType.FREE,
        JointType.REVOLUTE,
        JointType.PRISMATIC,
        JointType.REVOLUTE,
        JointType.REVOLUTE,
    ]
    np.testing.assert_allclose(model.joint_axis[1], [0, 0, 1])  # normalised
    assert model.q_index.tolist() == [0, 7, 8, 9, 10] and model.v_index.tolist() == [0, 6, 7, 8, 9]
    assert (model.nq, model.nv) == (11, 10)
    inf = math.inf
    assert model.limits.lower.tolist() == [-1.0, 0.0, -inf, -inf]
    assert model.limits.upper.tolist() == [2.0, 0.5, inf, inf]
    assert model.limits.effort.tolist() == [30.0, inf, 5.0, inf]
    assert model.limits.velocity.tolist() == [4.0, inf, 6.0, inf]
    assert model.joint_index("jr1") == 2
    with pytest.raises(KeyError, match="valid joints: jl1, jl2, jr1, jr2"):
        model.joint_index("nope")
    # Every link and every joint is a frame; a moving joint's frame is its child's.
    assert set(model.frames) == {"base", "l1", "l2", "r1", "r2", "jl1", "jl2", "jr1", "jr2"}
    assert model.frame("jl2").body == 2
    np.testing.assert_array_equal(model.frame("jl2").X_body_frame, np.eye(4))


def test_arrays_are_read_only() -> None:
    model = load_urdf(chain_urdf(2))
    with pytest.raises(ValueError):
        model.mass[0] = 5.0
    with pytest.raises(ValueError):
        model.X_parent_joint[1, 0, 3] = 1.0


def test_world_weld_fixes_the_root_at_the_weld_origin() -> None:
    urdf = (
        '<robot name="arm"><link name="world"/>'
        + box_link_xml("base", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("link1", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="weld" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="1 2 3" rpy="0 0 1.5707963267948966"/></joint>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="link1"/></joint></robot>'
    )
    model = load_urdf(urdf)
    assert model.body_names == ("base", "link1")
    assert model.joint_type[0] == JointType.FIXED_TO_WORLD and not model.floating_base
    assert (model.nq, model.nv) == (1, 1)
    np.testing.assert_allclose(model.X_parent_joint[0][:3, 3], [1, 2, 3])
    # The world frame seen from the root body is the inverse weld.
    np.testing.assert_allclose(
        model.frame("world").X_body_frame @ model.X_parent_joint[0], np.eye(4), atol=1e-15
    )

    free = load_urdf(urdf, floating_base=True)
    assert free.joint_type[0] == JointType.FREE and free.nv == 7
    np.testing.assert_array_equal(free.X_parent_joint[0], np.eye(4))

    fixed = load_urdf(free_box_urdf(), floating_base=False)
    assert fixed.joint_type[0] == JointType.FIXED_TO_WORLD and fixed.nq == fixed.nv == 0
    np.testing.assert_array_equal(fixed.X_parent_joint[0], np.eye(4))


def test_world_root_with_moving_child_keeps_world_as_fixed_body() -> None:
    urdf = (
        '<robot name="p"><link name="world"/>'
        + box_link_xml("bob", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="hinge" type="continuous"><parent link="world"/><child link="bob"/></joint></robot>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the world link has no <inertial> but must not warn
        model = load_urdf(urdf)
    assert model.body_names == ("world", "bob")
    assert model.joint_type.tolist() == [JointType.FIXED_TO_WORLD, JointType.REVOLUTE]
    assert model.nv == 1 and model.mass.tolist() == [0.0, 1.0]


def test_links_without_inertial_warn_once_listing_them() -> None:
    urdf = (
        '<robot name="r"><link name="base"/><link name="a"/><link name="b"/>'
        + box_link_xml("c", 1.0, (0.1, 0.1, 0.1))
        + '<link name="sensor"/>'
        '<joint name="ja" type="continuous"><parent link="base"/><child link="a"/></joint>'
        '<joint name="jb" type="continuous"><parent link="a"/><child link="b"/></joint>'
        '<joint name="jc" type="continuous"><parent link="b"/><child link="c"/></joint>'
        '<joint name="js" type="fixed"><parent link="c"/><child link="sensor"/></joint></robot>'
    )
    with pytest.warns(UserWarning) as record:
        model = load_urdf(urdf)
    messages = [str(w.message) for w in record]
    assert len(messages) == 1
    assert "without <inertial>" in messages[0] and "base, a, b" in messages[0]
    assert "sensor" not in messages[0]  # merged into a massive body: harmless
    assert model.mass.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_explicit_zero_mass_intermediate_is_silent_but_massless_leaf_warns() -> None:
    zero = '<inertial><mass value="0"/></inertial>'
    base = box_link_xml("base", 1.0, (0.1, 0.1, 0.1))
    mid = f'<link name="mid">{zero}</link>'
    tip = box_link_xml("tip", 1.0, (0.1, 0.1, 0.1))
    joints = (
        '<joint name="j1" type="continuous"><parent link="base"/><child link="mid"/></joint>'
        '<joint name="j2" type="continuous"><parent link="mid"/><child link="tip"/></joint>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_urdf(f'<robot name="r">{base}{mid}{tip}{joints}</robot>')
    leaf = f'<robot name="r">{base}{mid}<joint name="j1" type="continuous"><parent link="base"/><child link="mid"/></joint></robot>'
    with pytest.warns(UserWarning, match="singular mass matrix.*mid"):
        load_urdf(leaf)


def test_mimic_policies() -> None:
    urdf = (
        '<robot name="g">'
        + box_link_xml("palm", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("f1", 0.1, (0.01, 0.01, 0.05))
        + box_link_xml("f2", 0.1, (0.01, 0.01, 0.05))
        + '<joint name="j1" type="prismatic"><parent link="palm"/><child link="f1"/><limit lower="0" upper="0.04"/></joint>'
        '<joint name="j2" type="prismatic"><parent link="palm"/><child link="f2"/><limit lower="0" upper="0.04"/>'
        '<mimic joint="j1" multiplier="1"/></joint></robot>'
    )
    independent = load_urdf(urdf, mimic="independent")
    assert independent.joint_names == ("j1", "j2")
    fixed = load_urdf(urdf, mimic="fixed")
    assert fixed.joint_names == ("j1",) and fixed.frame("f2").body == 0
    assert fixed.total_mass == pytest.approx(independent.total_mass) == pytest.approx(1.2)


def test_primitive_shapes_and_capsule_extension_follow_merged_frames() -> None:
    urdf = (
        '<robot name="s">'
        + box_link_xml("a", 1.0, (0.1, 0.1, 0.1), collision=False)
        + '<link name="b"><collision><origin xyz="0 0 0.5"/><geometry><sphere radius="0.2"/></geometry></collision>'
        '<collision><geometry><cylinder radius="0.1" length="0.3"/></geometry></collision>'
        '<collision><geometry><capsule radius="0.05" length="0.4"/></geometry></collision></link>'
        '<joint name="w" type="fixed"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/></joint></robot>'
    )
    model = load_urdf(urdf)
    kinds = [s.kind for s in model.collision_shapes]
    assert kinds == [ShapeKind.SPHERE, ShapeKind.CYLINDER, ShapeKind.CAPSULE]
    assert all(s.body == 0 and s.link_name == "b" for s in model.collision_shapes)
    np.testing.assert_allclose(model.collision_shapes[0].X_body_shape[:3, 3], [1.0, 0.0, 0.5])
    np.testing.assert_allclose(model.collision_shapes[1].size, [0.1, 0.3])
    np.testing.assert_allclose(model.collision_shapes[2].size, [0.05, 0.4])
    assert all(s.vertices.shape == (0, 3) for s in model.collision_shapes)


def _write_box_stl(path: Path, extents: tuple[float, float, float]) -> None:
    import trimesh

    trimesh.creation.box(extents=extents).export(path)


@pytest.mark.parametrize("suffix", [".stl", ".obj"])
def test_mesh_hull_is_scaled_and_found_relative_to_the_urdf(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "meshes").mkdir()
    _write_box_stl(tmp_path / "meshes" / f"cube{suffix}", (1.0, 1.0, 1.0))
    urdf_path = tmp_path / "robot.urdf"
    urdf_path.write_text(
        '<robot name="m">'
        + box_link_xml("a", 1.0, (0.1, 0.1, 0.1), collision=False).replace(
            "</link>",
            f'<collision><geometry><mesh filename="meshes/cube{suffix}" scale="0.2 0.4 2"/></geometry></collision></link>',
        )
        + "</robot>"
    )
    (shape,) = load_urdf(urdf_path).collision_shapes
    assert shape.kind == ShapeKind.MESH
    corners = {tuple(np.round(v, 12)) for v in shape.vertices}
    expected = {(sx * 0.1, sy * 0.2, sz * 1.0) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)}
    assert corners == {tuple(np.round(c, 12)) for c in expected}


def test_package_uris_resolve_through_paths_env_and_file_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "share" / "my_robot_pkg"
    (pkg / "meshes").mkdir(parents=True)
    _write_box_stl(pkg / "meshes" / "part.stl", (2.0, 2.0, 2.0))

    def urdf(uri: str) -> str:
        return (
            '<robot name="m">'
            + box_link_xml("a", 1.0, (0.1, 0.1, 0.1), collision=False).replace(
                "</link>", f'<collision><geometry><mesh filename="{uri}"/></geometry></collision></link>'
            )
            + "</robot>"
        )

    uri = "package://my_robot_pkg/meshes/part.stl"
    monkeypatch.delenv("HUMANOID_SIM_PACKAGE_PATH", raising=False)
    for paths in ([tmp_path / "share"], [pkg]):  # a dir holding the package, or the package itself
        (shape,) = load_urdf(urdf(uri), package_paths=[str(p) for p in paths]).collision_shapes
        assert np.abs(shape.vertices).max() == pytest.approx(1.0)
    monkeypatch.setenv(
        "HUMANOID_SIM_PACKAGE_PATH", f"/nonexistent{__import__('os').pathsep}{tmp_path / 'share'}"
    )
    assert len(load_urdf(urdf(uri)).collision_shapes) == 1
    (shape,) = load_urdf(urdf(f"file://{pkg / 'meshes' / 'part.stl'}")).collision_shapes
    assert np.abs(shape.vertices).max() == pytest.approx(1.0)


def test_neutral_configuration_clips_into_limits() -> None:
    urdf = (
        '<robot name="r">'
        + box_link_xml("a", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("b", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("c", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><limit lower="0.2" upper="1"/></joint>'
        '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><limit lower="-1" upper="-0.5"/></joint>'
        "</robot>"
    )
    q = neutral_configuration(load_urdf(urdf))
    np.testing.assert_array_equal(q, [0, 0, 0, 0, 0, 0, 1, 0.2, -0.5])
    q_fixed = neutral_configuration(load_urdf(urdf, floating_base=False))
    np.testing.assert_array_equal(q_fixed, [0.2, -0.5])


def test_chain_builder_matches_its_description() -> None:
    model = load_urdf(chain_urdf(3, link_length=0.5, link_mass=2.0))
    assert model.body_names == ("base", "link1", "link2", "link3")
    assert model.joint_type[0] == JointType.FIXED_TO_WORLD and model.nv == 3
    np.testing.assert_allclose(model.X_parent_joint[2][:3, 3], [0, 0, -0.5])
    np.testing.assert_allclose(model.com[1:], [[0, 0, -0.25]] * 3)
    np.testing.assert_allclose(np.diag(model.inertia_com[1]), box_inertia(2.0, (0.05, 0.05, 0.5)))
    floating = load_urdf(chain_urdf(2, fixed_base=False, joint_type="prismatic", axis=(0, 0, 1)))
    assert floating.nv == 8 and floating.joint_type[1] == JointType.PRISMATIC


def test_a_massless_free_body_gives_one_warning_naming_both_problems() -> None:
    with pytest.warns(UserWarning) as record:
        load_urdf('<robot name="r"><link name="lonely"/></robot>')
    assert len(record) == 1
    message = str(record[0].message)
    assert "without <inertial>, mass taken as 0: lonely" in message
    assert "singular mass matrix): lonely" in message


def test_floating_base_true_needs_a_single_world_weld() -> None:
    from humanoid_sim.model import UrdfError

    urdf = (
        '<robot name="p"><link name="world"/>'
        + box_link_xml("bob", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="hinge" type="continuous"><parent link="world"/><child link="bob"/></joint></robot>'
    )
    with pytest.raises(
        UrdfError,
        match=r"link 'world': floating_base=True needs exactly one fixed joint.*hinge \(continuous\)",
    ):
        load_urdf(urdf, floating_base=True)


def test_xml_string_and_file_give_the_same_model(tmp_path: Path) -> None:
    text = chain_urdf(2)
    path = tmp_path / "chain.urdf"
    path.write_text(text)
    a, b = load_urdf(text), load_urdf(path)
    assert a.body_names == b.body_names
    np.testing.assert_array_equal(a.X_parent_joint, b.X_parent_joint)
    np.testing.assert_array_equal(a.inertia_com, b.inertia_com)


def test_package_uris_resolve_through_the_ament_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ament_index_python")
    from humanoid_sim.model.resource_paths import find_package

    prefix = tmp_path / "install"
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "indexed_pkg").write_text("")
    (prefix / "share" / "indexed_pkg").mkdir()
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    monkeypatch.delenv("HUMANOID_SIM_PACKAGE_PATH", raising=False)
    assert find_package("indexed_pkg") == prefix / "share" / "indexed_pkg"
    # The example-robot-data share dir is the last resort.
    assert find_package("example-robot-data").name == "example-robot-data"


def test_a_joint_named_like_a_link_leaves_the_frame_name_to_the_link() -> None:
    urdf = (
        '<robot name="r">'
        + box_link_xml("a", 1.0, (0.1, 0.1, 0.1))
        + box_link_xml("b", 1.0, (0.1, 0.1, 0.1))
        + '<joint name="a" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/></joint>'
        "</robot>"
    )
    model = load_urdf(urdf)
    assert model.joint_names == ("a",)
    assert model.frame("a").body == 0  # the link a, not the joint a (body 1)
    np.testing.assert_array_equal(model.frame("a").X_body_frame, np.eye(4))


def test_strict_inertia_false_keeps_impossible_inertias_with_one_warning() -> None:
    urdf = (
        '<robot name="r">'
        '<link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.3"/></inertial>'
        '<collision><geometry><sphere radius="0.1"/></geometry></collision></link>'
        '<link name="b"><inertial><mass value="0"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial></link>'
        '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
    )
    from humanoid_sim.model import UrdfError

    with pytest.raises(UrdfError, match="triangle inequality.*strict_inertia=False"):
        load_urdf(urdf)
    with pytest.warns(UserWarning) as record:
        model = load_urdf(urdf, strict_inertia=False)
    assert len(record) == 1
    assert "link 'a': inertia violates" in str(record[0].message)
    assert "link 'b': zero mass with non-zero inertia" in str(record[0].message)
    np.testing.assert_allclose(np.diag(model.inertia_com[0]), [0.2, 0.2, 0.4])  # kept as written, summed
