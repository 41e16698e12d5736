"""World files: the environment file and the example worlds load; bad entries are refused
with one message naming the entry and the valid keys."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import load_environment
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.world import World, WorldConfigError, load_world, world_from_dict
from humanoid_sim.world.inertia import box_inertia

ROOT = Path(__file__).resolve().parents[2]


def test_the_environment_file_loads_unchanged_as_a_world():
    world = load_world(ROOT / "config/environment.yaml")
    env = load_environment(ROOT / "config/environment.yaml")
    assert world.objects == () and world.robots == ()
    assert world.ground.height == env.ground.height and world.ground.material == env.ground.material
    got = world.environment()
    assert got.element_names() == env.element_names()
    for a, b in zip(got.boxes, env.boxes):
        np.testing.assert_array_equal(a.position, b.position)
        np.testing.assert_array_equal(a.rpy, b.rpy)
        np.testing.assert_array_equal(a.size, b.size)
        assert a.material == b.material


def test_the_example_worlds_load():
    worlds = {p.stem: load_world(p) for p in sorted((ROOT / "config/worlds").glob("*.yaml"))}
    assert {"cube_on_cube", "cube_stack_5", "block_stack", "box_push", "ball_kick"} <= set(worlds)
    top = worlds["cube_on_cube"].objects[0]
    assert top.mass == 1.0 and top.position[2] == 1.5
    np.testing.assert_allclose(top.inertia, np.eye(3) / 6.0)
    assert [o.position[2] for o in worlds["cube_stack_5"].objects] == [0.5, 1.5, 2.5, 3.5, 4.5]
    blocks = worlds["block_stack"].objects
    assert all(o.mass == 1.0 and o.shape.size.tolist() == [1.0, 1.0, 2.0] for o in blocks)
    crate = worlds["box_push"].objects[0]
    assert crate.mass == 10.0 and crate.material.mu_d == 0.5
    np.testing.assert_allclose(crate.inertia, box_inertia(10.0, [0.4, 0.6, 0.5]))
    robot = worlds["box_push"].robots[0]
    assert (robot.name, robot.urdf, robot.initial_pose) == ("humanoid", "urdf/humanoid.urdf", "stand")
    ball = worlds["ball_kick"].objects[0]
    assert ball.shape.kind == ShapeKind.SPHERE and ball.material.restitution == 0.6
    np.testing.assert_allclose(ball.inertia, 0.00347 * np.eye(3))  # given, not from density


def test_every_shape_kind_with_mass_or_density(tmp_path):
    obj = tmp_path / "cube.obj"
    corners = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    faces = [[4, 6, 7, 5], [0, 1, 3, 2], [2, 3, 7, 6], [0, 4, 5, 1], [1, 5, 7, 3], [0, 2, 6, 4]]
    obj.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) + "".join("f " + " ".join(str(i + 1) for i in f) + "\n" for f in faces))
    data = {
        "static": [{"name": "post", "shape": "cylinder", "radius_m": 0.1, "length_m": 1.0, "position_m": [2, 0, 0.5]}],
        "objects": [
            {"name": "b", "shape": "box", "size_m": [1, 2, 3], "density_kg_m3": 2.0},
            {"name": "s", "shape": "sphere", "radius_m": 0.5, "mass_kg": 2.0, "linear_velocity_m_s": [1, 0, 0]},
            {"name": "c", "shape": "capsule", "radius_m": 0.1, "length_m": 0.4, "mass_kg": 1.0, "rpy_deg": [90, 0, 0]},
            {"name": "m", "shape": "mesh", "file": "cube.obj", "scale": 2.0, "mass_kg": 8.0},
        ],
    }
    world = world_from_dict(data, base_dir=tmp_path)
    b, s, c, m = world.objects
    assert b.mass == pytest.approx(12.0)
    np.testing.assert_allclose(s.inertia, 0.4 * 2.0 * 0.25 * np.eye(3))
    np.testing.assert_allclose(c.rpy, [np.pi / 2, 0, 0])
    np.testing.assert_allclose(m.inertia, box_inertia(8.0, [2, 2, 2]), rtol=1e-12)  # the scaled hull
    assert world.static[0].shape.kind == ShapeKind.CYLINDER
    assert world.environment().boxes == ()  # a cylinder is no static box


@pytest.mark.parametrize(
    "data, message",
    [
        ({"object": []}, "unknown key 'object' in the world file (top level); valid keys: boxes, contact_method, default_material, ground, objects, robots, static"),
        ({"objects": [{"name": "crate", "shape": "cube", "size_m": [1, 1, 1], "mass_kg": 1}]},
         "unknown shape 'cube' in object 'crate'; valid shapes: box, capsule, cylinder, mesh, sphere"),
        ({"objects": [{"name": "crate", "shape": "box", "sise_m": [1, 1, 1], "mass_kg": 1}]},
         "unknown key 'sise_m' in object 'crate' (box); valid keys: angular_velocity_rad_s, com_m, density_kg_m3,"),
        ({"objects": [{"name": "crate", "shape": "capsule", "radius_m": 0.1, "mass_kg": 1}]},
         "object 'crate' (capsule): missing length_m; a capsule needs length_m, radius_m"),
        ({"objects": [{"name": "crate", "shape": "box", "size_m": [1, 1, 1]}]}, "object 'crate': give mass_kg or density_kg_m3"),
        ({"objects": [{"name": "crate", "shape": "box", "size_m": [1, 1, 1], "mass_kg": 1, "density_kg_m3": 1}]},
         "object 'crate': give mass_kg or density_kg_m3"),
        ({"objects": [{"name": "crate", "shape": "sphere", "radius_m": -1, "mass_kg": 1}]}, "object 'crate' (sphere): sphere size must be"),
        ({"objects": [{"name": "crate", "shape": "box", "size_m": [1, 1], "mass_kg": 1}]}, "object 'crate' (box): size_m must be 3 finite numbers"),
        ({"objects": [{"name": "crate", "shape": "box", "size_m": [1, 1, 1], "mass_kg": 1, "material": {"mu": 1}}]},
         "unknown key 'mu' in object 'crate' material; valid keys: mu_d, mu_s, restitution"),
        ({"objects": [{"name": "crate", "shape": "box", "size_m": [1, 1, 1], "mass_kg": 1, "inertia_kg_m2": [1, 1, 3]}]},
         "object 'crate': inertia principal moments"),
        ({"objects": [{"shape": "box", "size_m": [1, 1, 1], "mass_kg": 1}]}, "objects[0]: must be a mapping with a 'name'"),
        ({"boxes": [{"name": "step", "position_m": [0, 0, 0]}]}, "box 'step': missing size_m"),
        ({"boxes": [{"name": "step", "size_m": [1, 1, 1], "rpy_rad": [0, 0, 0], "rpy_deg": [0, 0, 0]}]}, "box 'step': give rpy_rad or rpy_deg, not both"),
        ({"robots": [{"name": "h", "urdf": "urdf/humanoid.urdf", "pose": "stand"}]},
         "unknown key 'pose' in robot 'h'; valid keys: base_position_m, base_rpy_deg, base_rpy_rad, initial_pose, name, urdf"),
        ({"robots": [{"name": "h"}]}, "robot 'h': urdf must name a URDF file"),
        ({"ground": {"height_m": 0, "material": {"mu_s": 0.5, "mu_d": 0.9}}}, "ground: material: mu_d = 0.9 exceeds mu_s = 0.5"),
        ({"static": [{"name": "x", "shape": "box", "size_m": [1, 1, 1]}], "objects": [{"name": "x", "shape": "sphere", "radius_m": 1, "mass_kg": 1}]},
         "world: duplicate names ['x']"),
        ({"static": [{"name": "rock", "shape": "mesh", "file": "no/such/rock.stl"}]}, "static shape 'rock' (mesh): mesh file 'no/such/rock.stl' not found"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_refused_with_one_message_naming_it(data, message):
    with pytest.raises(WorldConfigError) as info:
        world_from_dict(data)
    assert message in str(info.value)
    assert str(info.value).count("\n") == 0


def test_load_world_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("objects:\n  - {name: crate, shape: cube}\n")
    with pytest.raises(WorldConfigError, match=r"bad.yaml: unknown shape 'cube' in object 'crate'"):
        load_world(path)
    path.write_text("objects: [\n")
    with pytest.raises(WorldConfigError, match="not valid YAML"):
        load_world(path)
    assert isinstance(world_from_dict({}), World) and world_from_dict({}).ground is not None
