"""assemble_world_model: the robot's tree and one FREE one-body tree per free object."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model import load_urdf
from humanoid_sim.model.robot_model import JointType, ShapeKind
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.world import FreeObject, RobotEntry, Shape, World, assemble_world_model, load_world, load_world_robot
from humanoid_sim.world import load_world_robots

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def _cube_mesh() -> Shape:
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    return Shape(ShapeKind.MESH, np.zeros(0), corners)


def test_the_objects_follow_the_robots_bodies_and_coordinates(humanoid) -> None:
    world = load_world(REPO / "config" / "worlds" / "box_push.yaml")
    wm = assemble_world_model(world, humanoid)
    m = wm.model
    crate = world.objects[0]
    assert (wm.robot_nb, wm.robot_nq, wm.robot_nv) == (humanoid.nb, humanoid.nq, humanoid.nv)
    assert wm.robot is humanoid and wm.robot_name == "humanoid" and m.name == humanoid.name
    assert (m.nb, m.nq, m.nv, m.nj) == (humanoid.nb + 1, humanoid.nq + 7, humanoid.nv + 6, humanoid.nj)
    # the robot's part is the robot model unchanged
    for name in ("parent", "joint_type", "q_index", "v_index", "mass", "com", "inertia_com", "X_parent_joint"):
        np.testing.assert_array_equal(getattr(m, name)[: humanoid.nb], getattr(humanoid, name))
    assert m.joint_names == humanoid.joint_names
    for name in ("lower", "upper", "velocity", "effort", "k_velocity"):
        np.testing.assert_array_equal(getattr(m.limits, name), getattr(humanoid.limits, name))
    np.testing.assert_array_equal(m.joint_v_index, humanoid.joint_v_index)
    np.testing.assert_array_equal(m.gravity, humanoid.gravity)
    # the crate: a FREE root with the world file's mass properties, shape and frame
    obj = wm.object("crate")
    b = obj.body
    assert b == humanoid.nb and m.body_names[b] == "crate" and m.parent[b] == -1
    assert m.joint_type[b] == JointType.FREE and m.tree_root[b] == b
    assert obj.q == slice(humanoid.nq, humanoid.nq + 7) and obj.v == slice(humanoid.nv, humanoid.nv + 6)
    assert m.mass[b] == 10.0
    np.testing.assert_array_equal(m.inertia_com[b], crate.inertia)
    np.testing.assert_array_equal(m.com[b], crate.com)
    np.testing.assert_array_equal(m.tree_root[: humanoid.nb], 0)
    shapes = [s for s in m.collision_shapes if s.body == b]
    assert len(shapes) == 1 and shapes[0].kind == ShapeKind.BOX and shapes[0].link_name == "crate"
    np.testing.assert_array_equal(shapes[0].size, [0.4, 0.6, 0.5])
    np.testing.assert_array_equal(shapes[0].X_body_shape, np.eye(4))
    assert len(m.collision_shapes) == len(humanoid.collision_shapes) + 1
    assert m.frame("crate").body == b and set(humanoid.frames) < set(m.frames)
    assert obj.material.mu_d == 0.5 and obj.description is crate
    np.testing.assert_array_equal(wm.object_of_body, [-1] * humanoid.nb + [0])


def test_a_world_of_objects_alone_is_a_model_of_free_bodies() -> None:
    world = load_world(REPO / "config" / "worlds" / "cube_stack_5.yaml")
    wm = assemble_world_model(world)
    m = wm.model
    assert wm.robot is None and (wm.robot_nb, wm.robot_nq, wm.robot_nv) == (0, 0, 0)
    assert (m.name, m.nb, m.nq, m.nv, m.nj) == ("world", 5, 35, 30, 0)
    np.testing.assert_array_equal(m.parent, -1)
    np.testing.assert_array_equal(m.tree_root, np.arange(5))
    np.testing.assert_array_equal(m.gravity, [0.0, 0.0, -9.81])
    assert [o.body for o in wm.objects] == list(range(5)) and m.body_names == tuple(o.name for o in world.objects)
    q, v = wm.initial_state()
    for obj, desc in zip(wm.objects, world.objects):
        np.testing.assert_array_equal(q[obj.q][:3], desc.position)
    np.testing.assert_array_equal(v, 0.0)


def test_initial_state_turns_the_world_twist_into_body_axes(humanoid) -> None:
    box = Shape(ShapeKind.BOX, [0.2, 0.3, 0.4])
    obj = FreeObject(
        "box", box, 1.0, box.mass_properties(mass=1.0).inertia, position=[1.0, 2.0, 3.0], rpy=[0.3, -0.2, 1.1],
        linear_velocity=[0.5, -1.0, 2.0], angular_velocity=[-3.0, 1.0, 0.5],
    )  # fmt: skip
    wm = assemble_world_model(World(objects=(obj,)), humanoid)
    q_robot = np.arange(humanoid.nq, dtype=float)
    q, v = wm.initial_state(q_robot)
    np.testing.assert_array_equal(q[: humanoid.nq], q_robot)
    np.testing.assert_array_equal(v[: humanoid.nv], 0.0)
    o = wm.object("box")
    R = quaternion_to_rotation(q[o.q][3:7])
    np.testing.assert_allclose(R, obj.rotation, atol=1e-14)
    np.testing.assert_allclose(R @ v[o.v][:3], obj.linear_velocity, atol=1e-14)
    np.testing.assert_allclose(R @ v[o.v][3:], obj.angular_velocity, atol=1e-14)
    robot_q, robot_v = wm.robot_state(q, v)
    np.testing.assert_array_equal(robot_q, q_robot)
    assert robot_v.shape == (humanoid.nv,)
    with pytest.raises(ValueError, match=r"robot_q has shape \(3,\)"):
        wm.initial_state(np.zeros(3))


def test_a_mesh_object_keeps_its_hull_as_the_collision_shape() -> None:
    mesh = _cube_mesh()
    props = mesh.mass_properties(mass=2.0)
    wm = assemble_world_model(World(objects=(FreeObject("rock", mesh, 2.0, props.inertia, props.com),)))
    (shape,) = wm.model.collision_shapes
    assert shape.kind == ShapeKind.MESH and shape.body == 0
    np.testing.assert_array_equal(shape.vertices, mesh.vertices)


def test_name_clashes_and_empty_worlds_are_refused(humanoid) -> None:
    link = humanoid.body_names[1]
    box = Shape(ShapeKind.BOX, [0.2, 0.2, 0.2])
    clash = World(objects=(FreeObject(link, box, 1.0, box.mass_properties(mass=1.0).inertia),))
    with pytest.raises(InvalidValueError, match=f"objects \\['{link}'\\] have the name of a link or frame"):
        assemble_world_model(clash, humanoid)
    with pytest.raises(InvalidValueError, match="nothing to simulate"):
        assemble_world_model(World())
    with pytest.raises(UnknownNameError, match="unknown object 'nope'; valid objects: crate"):
        assemble_world_model(load_world(REPO / "config" / "worlds" / "box_push.yaml"), humanoid).object("nope")


def test_a_welded_robot_keeps_its_joints_first() -> None:
    robot = load_urdf(chain_urdf(2, fixed_base=True))
    box = Shape(ShapeKind.BOX, [0.2, 0.2, 0.2])
    wm = assemble_world_model(World(objects=(FreeObject("box", box, 1.0, box.mass_properties(mass=1.0).inertia),)), robot)
    assert wm.model.joint_v_slice == slice(0, 2) and wm.object("box").v == slice(2, 8)
    assert wm.model.floating_base is False


def test_the_world_robots_are_loaded_from_their_entries(humanoid) -> None:
    world = load_world(REPO / "config" / "worlds" / "box_push.yaml")
    robot = load_world_robot(world)
    assert robot.name == humanoid.name and robot.body_names == humanoid.body_names
    assert load_world_robot(load_world(REPO / "config" / "worlds" / "cube_stack_5.yaml")) is None
    two = World(robots=(RobotEntry("a", "urdf/humanoid.urdf"), RobotEntry("b", "urdf/humanoid.urdf")))
    first, second = load_world_robots(two)
    assert first.body_names == second.body_names == humanoid.body_names  # each with its own names
    assert load_world_robot(two).body_names == humanoid.body_names
