"""Spawn resources, worlds with an object added or removed, and the state carried across."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment, GroundPlane, StaticBox, rpy_to_rotation
from humanoid_sim.ros.entity_resource import (
    ResourceError,
    carried_state,
    rpy_of_rotation,
    spawned_object,
    unique_name,
    world_of_environment,
    world_with_object,
    world_without_object,
)
from humanoid_sim.world import assemble_world_model, world_from_dict

BOX = "{name: block, shape: box, size_m: [0.2, 0.3, 0.4], mass_kg: 2.0, position_m: [1.0, 2.0, 0.5]}"


def test_a_yaml_object_entry_is_a_free_object_at_its_own_pose():
    obj = spawned_object("", BOX, "", set(), False)
    assert obj.name == "block" and obj.mass == 2.0
    np.testing.assert_allclose(obj.shape.size, [0.2, 0.3, 0.4])
    np.testing.assert_allclose(obj.position, [1.0, 2.0, 0.5])
    np.testing.assert_allclose(obj.inertia[0, 0], 2.0 * (0.3**2 + 0.4**2) / 12)


def test_the_request_name_and_pose_replace_the_entry_s(tmp_path):
    rng = np.random.default_rng(7)
    rpy = rng.uniform(-1.0, 1.0, 3)
    R = rpy_to_rotation(rpy)
    file = tmp_path / "ball.yaml"
    file.write_text("objects:\n  - {name: b, shape: sphere, radius_m: 0.1, density_kg_m3: 1000, rpy_deg: [0, 0, 90]}\n")
    obj = spawned_object(f"file://{file}", "", "ball", set(), False, (np.array([0.5, 0.0, 2.0]), R))
    assert obj.name == "ball"
    np.testing.assert_allclose(obj.position, [0.5, 0.0, 2.0])
    np.testing.assert_allclose(obj.rotation, R, atol=1e-12)
    np.testing.assert_allclose(obj.mass, 1000 * 4 / 3 * np.pi * 0.1**3)


def test_rpy_of_rotation_inverts_rpy_to_rotation():
    rng = np.random.default_rng(3)
    for rpy in rng.uniform([-3, -1.5, -3], [3, 1.5, 3], (20, 3)):
        np.testing.assert_allclose(rpy_to_rotation(rpy_of_rotation(rpy_to_rotation(rpy))), rpy_to_rotation(rpy), atol=1e-12)


@pytest.mark.parametrize(
    ("uri", "text", "name", "kind", "words"),
    [
        ("", "", "x", "no_resource", "resource_string"),
        ("/no/such/file.yaml", "", "x", "no_resource", "cannot be read"),
        ("", "{shape: box", "x", "parse", "not valid YAML"),
        ("", "[1, 2]", "x", "parse", "expected a mapping"),
        ("", "{shape: cube, size_m: [1, 1, 1], mass_kg: 1}", "x", "parse", "valid shapes: box"),
        ("", "{shape: box, sise_m: [1, 1, 1], mass_kg: 1}", "x", "parse", "valid keys"),
        ("", "{shape: box, size_m: [1, 1, 1], mass_kg: 1}", "", "name_invalid", "no name"),
        ("", "{shape: box, size_m: [1, 1, 1], mass_kg: 1}", "two words", "name_invalid", "letters, digits"),
        ("", "{shape: box, size_m: [1, 1, 1], mass_kg: 1}", "crate", "name_not_unique", "taken"),
    ],
)
def test_bad_requests_are_refused_with_the_fault(uri, text, name, kind, words):
    with pytest.raises(ResourceError) as caught:
        spawned_object(uri, text, name, {"crate", "ground"}, False)
    assert caught.value.kind == kind and words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_renaming_finds_a_free_name():
    assert unique_name("crate", {"crate", "crate_2"}) == "crate_3"
    assert spawned_object("", BOX, "crate", {"crate"}, True).name == "crate_2"
    assert spawned_object("", "{shape: sphere, radius_m: 0.1, mass_kg: 1}", "", set(), True).name == "object"


def _world():
    return world_from_dict({
        "objects": [
            {"name": "a", "shape": "box", "size_m": [1, 1, 1], "mass_kg": 1.0, "position_m": [0, 0, 0.5]},
            {"name": "b", "shape": "sphere", "radius_m": 0.2, "mass_kg": 1.0, "position_m": [3, 0, 0.2]},
        ]
    })  # fmt: skip


def test_objects_are_added_and_removed_by_name():
    world = _world()
    c = spawned_object("", BOX, "c", set(world.names()), False)
    assert [o.name for o in world_with_object(world, c).objects] == ["a", "b", "c"]
    assert [o.name for o in world_without_object(world, "a").objects] == ["b"]
    with pytest.raises(KeyError, match="objects: a, b"):
        world_without_object(world, "zz")
    with pytest.raises(ValueError, match="duplicate"):
        world_with_object(world, spawned_object("", BOX, "a", set(), False))


def test_the_state_of_every_body_present_before_is_carried_over():
    rng = np.random.default_rng(11)
    old = assemble_world_model(_world())
    q, v = rng.normal(size=old.model.nq), rng.normal(size=old.model.nv)
    world = world_with_object(world_without_object(_world(), "a"), spawned_object("", BOX, "c", set(), False))
    new = assemble_world_model(world)
    q0, v0 = new.initial_state()
    q1, v1 = carried_state(old, q, v, new, q0, v0)
    np.testing.assert_array_equal(q1[new.object("b").q], q[old.object("b").q])
    np.testing.assert_array_equal(v1[new.object("b").v], v[old.object("b").v])
    np.testing.assert_array_equal(q1[new.object("c").q], q0[new.object("c").q])  # the new one: its own pose
    np.testing.assert_allclose(q1[new.object("c").q][:3], [1.0, 2.0, 0.5])


def test_an_environment_becomes_a_world_of_its_ground_and_boxes():
    env = Environment(ground=GroundPlane(height=0.1), boxes=(StaticBox("step", np.array([1.0, 0, 0.05]), np.zeros(3), np.array([0.4, 1, 0.1])),))
    world = world_of_environment(env)
    assert world.names() == ["ground", "step"] and world.objects == ()
    assert world.environment().boxes[0].name == "step"
    np.testing.assert_allclose(world.environment().boxes[0].size, [0.4, 1, 0.1])
    assert world.environment().ground.height == 0.1


def test_a_robot_alone_carries_its_state_into_a_world_with_an_object():
    from humanoid_sim.model import load_urdf
    from humanoid_sim.package_data import package_file

    robot = load_urdf(package_file("urdf/humanoid.urdf"))
    rng = np.random.default_rng(2)
    q, v = rng.normal(size=robot.nq), rng.normal(size=robot.nv)
    world = world_with_object(world_of_environment(Environment()), spawned_object("", BOX, "", set(), False))
    new = assemble_world_model(world, robot)
    q0, v0 = new.initial_state()
    q1, v1 = carried_state(None, q, v, new, q0, v0)
    np.testing.assert_array_equal(q1[: robot.nq], q)
    np.testing.assert_array_equal(v1[: robot.nv], v)
    np.testing.assert_array_equal(q1[new.object("block").q], q0[new.object("block").q])


def test_a_rebuild_carries_every_robots_state_over():
    from humanoid_sim.model import load_urdf
    from humanoid_sim.model.urdf_builder import chain_urdf
    from humanoid_sim.world import RobotEntry, World

    a, b = load_urdf(chain_urdf(2, fixed_base=True)), load_urdf(chain_urdf(3, fixed_base=True))
    world = World(robots=(RobotEntry("a", "x.urdf"), RobotEntry("b", "x.urdf")))
    old = assemble_world_model(world, a, [b])
    rng = np.random.default_rng(3)
    q, v = rng.normal(size=old.model.nq), rng.normal(size=old.model.nv)
    new = assemble_world_model(world_with_object(world, spawned_object("", BOX, "", set(), False)), a, [b])
    q0, v0 = new.initial_state()
    q1, v1 = carried_state(old, q, v, new, q0, v0)
    for before, after in zip(old.robots, new.robots):
        np.testing.assert_array_equal(q1[after.q], q[before.q])
        np.testing.assert_array_equal(v1[after.v], v[before.v])
    np.testing.assert_array_equal(q1[new.object("block").q], q0[new.object("block").q])
    with pytest.raises(ValueError, match="robot coordinates differ"):
        carried_state(old, q, v, assemble_world_model(world, a, [a]), *assemble_world_model(world, a, [a]).initial_state())
