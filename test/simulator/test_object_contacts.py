"""Free objects touching static boxes and each other in the one compiled step.

Worlds are built in code (humanoid_sim.world). Truths: a cube resting on a cube is one
surface contact carrying m g, without drift; a cube overhanging a static box by 40 % stays
(its centre of mass is over the support) and at 60 % tips off the edge; a stack of five
cubes stands; a box sliding on frictionless ground into a resting twin shares its momentum
(plastic impact: both move at half the speed, momentum conserved).
"""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import GroundPlane, Material
from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.world import FreeObject, Shape, StaticShape, World, assemble_world_model

G = 9.81
MATERIAL = Material(0.8, 0.6, 0.0)


def cube(name: str, position, size: float = 1.0, mass: float = 2.0, **kw) -> FreeObject:
    shape = Shape(ShapeKind.BOX, [size, size, size])
    return FreeObject(name, shape, mass, shape.mass_properties(mass=mass).inertia, position=position,
                      material=MATERIAL, **kw)  # fmt: skip


def simulator(world: World, dt: float = 1e-3, material: Material = MATERIAL) -> tuple[Simulator, object]:
    wm = assemble_world_model(world)
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=dt, gravity=np.array([0.0, 0.0, -G]), body_material=material))
    return sim, wm


def position(sim: Simulator, wm, name: str) -> np.ndarray:
    return sim.q[wm.object(name).q][:3]


def tilt(sim: Simulator, wm, name: str) -> float:
    """Angle of the object's z axis from the world's z [rad]."""
    R = quaternion_to_rotation(sim.q[wm.object(name).q][3:7])
    return float(np.arccos(np.clip(R[2, 2], -1.0, 1.0)))


def static_cube(x: float = 0.0) -> StaticShape:
    return StaticShape("pedestal", Shape(ShapeKind.BOX, [1.0, 1.0, 1.0]), position=[x, 0.0, 0.5], material=MATERIAL)


def test_a_cube_resting_on_a_static_cube_is_one_surface_contact_carrying_its_weight():
    sim, wm = simulator(World(ground=None, static=(static_cube(),), objects=(cube("top", [0.0, 0.0, 1.5]),)))
    start = position(sim, wm, "top")
    for k in range(5000):
        r = sim.step()
        if k >= 100:
            assert len(r.contacts) == 1
            c = r.contacts[0]
            assert c.kind == ContactKind.SURFACE and c.element == "pedestal" and c.other_body == -1
            assert abs(c.wrench_world[2] / (2.0 * G) - 1.0) <= 1e-3
    assert np.linalg.norm(position(sim, wm, "top") - start) < 1e-6


def test_a_cube_on_a_free_cube_is_a_contact_between_two_bodies():
    sim, wm = simulator(World(ground=GroundPlane(0.0, MATERIAL), objects=(cube("bottom", [0.0, 0.0, 0.5]),
                                                                          cube("top", [0.1, 0.0, 1.5]))))  # fmt: skip
    start = position(sim, wm, "top")
    for _ in range(2000):
        r = sim.step()
    between = [c for c in r.contacts if c.other_body >= 0]
    assert len(between) == 1
    c = between[0]
    assert c.kind == ContactKind.SURFACE and c.link == "top" and c.element == "bottom"
    assert c.other_body == wm.object("bottom").body and c.body == wm.object("top").body
    np.testing.assert_allclose(c.wrench_world[2], 2.0 * G, rtol=1e-3)
    ground = sum(c.wrench_world[2] for c in r.contacts if c.other_body < 0)
    np.testing.assert_allclose(ground, 4.0 * G, rtol=1e-3)  # both cubes' weight
    assert np.linalg.norm(position(sim, wm, "top") - start) < 1e-6


@pytest.mark.parametrize("overhang, stays", [(0.4, True), (0.6, False)])
def test_a_cube_overhanging_a_static_box_stays_at_40_percent_and_tips_at_60(overhang: float, stays: bool):
    """The cube's centre is over the box at 40 % overhang (the support reaches the box's
    edge: the narrow phase's clipped face), beyond it at 60 %."""
    sim, wm = simulator(World(ground=None, static=(static_cube(),), objects=(cube("top", [overhang, 0.0, 1.5]),)))
    for _ in range(1500):
        sim.step()
    if stays:
        assert tilt(sim, wm, "top") < 1e-6
        assert np.linalg.norm(position(sim, wm, "top") - [overhang, 0.0, 1.5]) < 1e-6
    else:
        assert tilt(sim, wm, "top") > np.radians(30.0)


def test_a_stack_of_five_cubes_stands():
    cubes = tuple(cube(f"c{i}", [0.0, 0.0, 0.5 + i], mass=1.0) for i in range(5))
    sim, wm = simulator(World(ground=GroundPlane(0.0, MATERIAL), objects=cubes))
    start = np.array([position(sim, wm, c.name) for c in cubes])
    worst = 0.0
    for _ in range(3000):
        r = sim.step()
        worst = max(worst, r.max_penetration)
    end = np.array([position(sim, wm, c.name) for c in cubes])
    assert np.abs(end - start).max() < 1e-4
    assert worst <= 1e-4
    assert np.all(np.isnan(r.zmp[0]))  # no robot: no ZMP (the ground contacts are the objects')
    top = [c for c in r.contacts if c.link == "c4"]
    assert len(top) == 1 and abs(top[0].wrench_world[2] / G - 1.0) < 1e-3


def test_a_box_sliding_into_a_resting_twin_shares_its_momentum():
    """Frictionless ground, no restitution: the moving box (1 m/s) meets its twin; after
    the impact both move at 0.5 m/s (momentum conserved, the plastic impact's energy lost)."""
    ice = Material(0.0, 0.0, 0.0)
    a = cube("a", [-0.6, 0.0, 0.5], linear_velocity=[1.0, 0.0, 0.0])
    b = cube("b", [0.6, 0.0, 0.5])
    sim, wm = simulator(World(ground=GroundPlane(0.0, ice), objects=(a, b)), material=ice)
    for _ in range(400):  # the gap of 0.2 m closes at 0.2 s
        sim.step()
    va = sim.v[wm.object("a").v][:3]
    vb = sim.v[wm.object("b").v][:3]
    np.testing.assert_allclose(va[0] + vb[0], 1.0, atol=1e-6)  # momentum (equal masses, body axes = world)
    np.testing.assert_allclose([va[0], vb[0]], [0.5, 0.5], atol=1e-3)
    assert position(sim, wm, "b")[0] - position(sim, wm, "a")[0] >= 1.0 - 1e-3  # touching, not inside


def test_the_readme_world_example_stacks_five_cubes():
    """README.md's world block (section "The library (no ROS)"), run as written: the stack of
    config/worlds/cube_stack_5.yaml rests as a chain of contacts, each cube on the one below."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text[text.index("A world of bodies") :]
    start = section.index("```python\n") + len("```python\n")
    example = section[start : section.index("```\n", start)]
    assert "Simulator.from_world" in example
    scope: dict = {}
    exec(example, scope)  # noqa: S102 -- the README's own example
    sim = scope["sim"]
    for _ in range(200):
        result = sim.step()
    pairs = sorted((c.link, c.element) for c in result.contacts)
    assert pairs == [("cube_1", "ground"), ("cube_2", "cube_1"), ("cube_3", "cube_2"), ("cube_4", "cube_3"),
                     ("cube_5", "cube_4")]  # fmt: skip
