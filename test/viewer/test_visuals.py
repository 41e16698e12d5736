"""URDF <visual> elements placed on model bodies; mesh files resolved as the loader does."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from humanoid_sim.dynamics.kinematics import frame_placement, forward_kinematics
from humanoid_sim.model import UrdfError, load_urdf, neutral_configuration
from humanoid_sim.viewer import collision_visuals, load_visuals
from standing_scene import URDF

MESH_ROBOT = """<robot name="meshy">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.1" rpy="0 0 1.5707963"/><geometry><box size="0.1 0.2 0.3"/></geometry>
      <material name="red"/></visual>
  </link>
  <joint name="fix" type="fixed"><parent link="base"/><child link="tip"/><origin xyz="0.5 0 0"/></joint>
  <link name="tip">
    <visual><geometry><mesh filename="package://parts/meshes/tetra.stl" scale="2 2 2"/></geometry>
      <material name="inline"><color rgba="0 0.5 1 0.5"/></material></visual>
    <visual><geometry><sphere radius="0.05"/></geometry></visual>
  </link>
</robot>"""


@pytest.fixture
def parts_package(tmp_path):
    import trimesh

    mesh = trimesh.Trimesh(vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], faces=[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    (tmp_path / "parts" / "meshes").mkdir(parents=True)
    mesh.export(tmp_path / "parts" / "meshes" / "tetra.stl")
    return tmp_path


def test_bundled_humanoid_visuals_sit_on_their_links(model):
    visuals = load_visuals(model, URDF)
    assert len(visuals) == 13
    assert {v.kind for v in visuals} == {"box", "cylinder", "sphere"}
    np.testing.assert_allclose(visuals[0].rgba, [0.8, 0.7, 0.6, 1.0])  # the URDF's "skin" material
    origins = [
        [float(x) for x in visual.find("origin").get("xyz").split()]
        for link in ET.parse(URDF).getroot().findall("link")
        for visual in link.findall("visual")
    ]
    q = neutral_configuration(model)
    X_body = forward_kinematics(model, q)
    for visual, xyz in zip(visuals, origins):
        X_world_visual = X_body[visual.body] @ visual.X_body_visual
        # the visual sits at its <origin> in its link's frame (rpy 0 in this URDF)
        expected = frame_placement(model, q, visual.link) @ np.block([[np.eye(3), np.array(xyz)[:, None]], [np.zeros((1, 3)), 1.0]])
        np.testing.assert_allclose(X_world_visual, expected, atol=1e-12)


def test_mesh_uri_material_and_merged_link(parts_package):
    model = load_urdf(MESH_ROBOT.replace("<mesh", "<box size='0.1 0.1 0.1'/><!--").replace("</geometry>\n      <material name=\"inline\">", "--></geometry>\n      <material name=\"inline\">"))
    visuals = load_visuals(model, MESH_ROBOT, package_paths=[parts_package])
    box, mesh, sphere = visuals
    np.testing.assert_allclose(box.rgba, [1, 0, 0, 1])
    np.testing.assert_allclose(box.X_body_visual[:3, 3], [0, 0, 0.1])
    assert mesh.kind == "mesh" and mesh.mesh_path == parts_package / "parts" / "meshes" / "tetra.stl"
    np.testing.assert_allclose(mesh.size, [2, 2, 2])
    np.testing.assert_allclose(mesh.rgba, [0, 0.5, 1, 0.5])
    assert mesh.body == 0  # "tip" is merged into "base" by the fixed joint
    np.testing.assert_allclose(mesh.X_body_visual[:3, 3], [0.5, 0, 0])
    assert sphere.kind == "sphere" and sphere.size[0] == 0.05


def test_unresolvable_package_and_bad_geometry_name_the_visual(model):
    with pytest.raises(UrdfError, match="link 'tip' visual 0.*package 'parts' not found"):
        load_visuals(load_urdf(MESH_ROBOT.replace("package://parts/meshes/tetra.stl", "x.stl")), MESH_ROBOT)
    bad = MESH_ROBOT.replace('<sphere radius="0.05"/>', "<cone/>").replace("package://parts/meshes/tetra.stl", "x.stl")
    with pytest.raises(UrdfError, match="link 'tip' visual 1: unknown geometry <cone>"):
        load_visuals(load_urdf(MESH_ROBOT.replace("package://parts/meshes/tetra.stl", "x.stl")), bad, package_paths=["/nonexistent"])


def test_collision_shapes_stand_in_for_missing_visuals(model):
    visuals = collision_visuals(model)
    assert len(visuals) == len(model.collision_shapes)
    for visual, shape in zip(visuals, model.collision_shapes):
        assert visual.body == shape.body
        np.testing.assert_array_equal(visual.X_body_visual, shape.X_body_shape)
