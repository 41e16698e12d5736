"""Free rigid objects of a world stepped in the one model with the robot (Simulator.from_world).

Truths: without gravity and ground the robot and spinning objects conserve the kinetic
energy and each tree its own spatial momentum; objects falling side by side follow the
closed form of free fall (and of torque-free spin about a principal axis); a box dropped on
the ground comes to rest on it; a bar thrown turning onto the ground does not sink into it;
a sphere rolls down a slope at 5/7 g sin a; a reset puts the robot on the ground as alone and
every object at its world-file pose and twist.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, rpy_to_rotation
from humanoid_sim.dynamics.integrator import FAST_MOTION
from humanoid_sim.dynamics.spatial import quaternion_to_rotation
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model import load_urdf
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.simulator.link_wrenches import LinkWrench
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.world import FreeObject, RobotEntry, Shape, StaticShape, World, assemble_world_model

HUMANOID = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"
G = 9.81
BOX = Shape(ShapeKind.BOX, [0.4, 0.3, 0.2])


def _box(name: str, **kw) -> FreeObject:
    return FreeObject(name, BOX, 2.0, BOX.mass_properties(mass=2.0).inertia, **kw)


def _sphere(name: str, radius: float = 0.1, mass: float = 1.0, **kw) -> FreeObject:
    shape = Shape(ShapeKind.SPHERE, [radius])
    return FreeObject(name, shape, mass, shape.mass_properties(mass=mass).inertia, **kw)


def _bar(length: float, width: float, **kw) -> FreeObject:
    """A 1 kg bar along its x axis, square section ``width`` [m]."""
    shape = Shape(ShapeKind.BOX, [length, width, width])
    return FreeObject("bar", shape, 1.0, shape.mass_properties(mass=1.0).inertia, **kw)


def _deepest_and_touching(sim: Simulator, steps: int) -> tuple[float, int]:
    """The deepest penetration over ``steps`` steps [m] and how many steps had a contact."""
    deepest, touching = 0.0, 0
    for _ in range(steps):
        r = sim.step()
        deepest = max(deepest, r.max_penetration)
        touching += bool(r.contacts)
    return deepest, touching


def _free_humanoid():
    """The bundled humanoid without joint damping and friction and with velocity limits out
    of reach (nothing that dissipates at zero torque)."""
    text = re.sub(r"<dynamics\b[^>]*?(/>|>.*?</dynamics>)", "", HUMANOID.read_text(), flags=re.S)
    return load_urdf(re.sub(r'(<limit\b[^>]*?\bvelocity=)"[^"]*"', r'\1"1e6"', text))


def _tree_momenta(ws: DynamicsWorkspace, tree_root: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Spatial momentum (linear, angular about the world origin) of each tree, (trees, 6)."""
    h = np.einsum("bij,bj->bi", ws.Iw, ws.V)
    return np.array([h[tree_root == r].sum(axis=0) for r in roots])


def test_free_flight_of_robot_and_spinning_objects_conserves_energy_and_each_trees_momentum():
    world = World(
        ground=None,
        objects=(
            _box("crate", position=[3.0, 0.0, 1.0], linear_velocity=[0.2, 0.1, 0.0], angular_velocity=[3.0, -4.0, 5.0]),
            _sphere("ball", position=[0.0, -3.0, 0.5], linear_velocity=[0.3, -0.2, 0.1], angular_velocity=[0.0, 8.0, 1.0]),
        ),
    )
    wm = assemble_world_model(world, _free_humanoid())
    sim = Simulator.from_world(wm, "stand", SimulatorConfig(gravity=np.zeros(3)))
    assert sim.config.environment.ground is None
    q0, v0 = sim.q, sim.v
    rng = np.random.default_rng(3)
    v0[:3] = [0.2, -0.1, 0.3]
    v0[3:6] = [1.0, -2.0, 2.5]
    v0[wm.model.joint_v_slice] = rng.uniform(-2.0, 2.0, wm.model.nj)
    sim.set_state(q0, v0)
    model = sim.model
    ws = DynamicsWorkspace(model)
    armature = sim.armature

    def measure(q, v):
        ws.update(q, v)
        return 0.5 * float(v @ ws.M @ v + armature @ (v * v)), _tree_momenta(ws, model.tree_root, model.roots)

    T0, h0 = measure(q0, v0)
    worst_T = 0.0
    worst_h = np.zeros(len(model.roots))
    scale = np.linalg.norm(h0, axis=1)
    touched = 0
    for step in range(2000):  # 2 s at 1 ms, the objects flying clear of the robot and each other
        r = sim.step()
        touched += len(r.contacts) > 0
        if step % 10 == 9:
            T, h = measure(r.q, r.v)
            worst_T = max(worst_T, abs(T - T0) / T0)
            worst_h = np.maximum(worst_h, np.linalg.norm(h - h0, axis=1) / scale)
    print(f"|dT|/T {worst_T:.2e}; per tree |dh|/|h| {worst_h}")
    assert touched == 0
    assert worst_T <= 1e-4
    assert np.all(worst_h <= 1e-6)


def test_objects_falling_side_by_side_follow_the_closed_form():
    """No ground: a box spinning about a principal axis and a sphere, both thrown, over 1 s."""
    p_box, v_box, w_box = np.array([0.0, 0.0, 2.0]), np.array([1.0, 0.0, 3.0]), np.array([0.0, 0.0, 4.0])
    p_ball, v_ball, w_ball = np.array([1.0, 0.0, 2.0]), np.array([0.0, -0.5, 0.0]), np.array([2.0, -1.0, 3.0])
    world = World(
        ground=None,
        objects=(
            _box("box", position=p_box, linear_velocity=v_box, angular_velocity=w_box),
            _sphere("ball", position=p_ball, linear_velocity=v_ball, angular_velocity=w_ball),
        ),
    )
    wm = assemble_world_model(world)
    sim = Simulator.from_world(wm)
    assert wm.model.nq == 14 and wm.model.nv == 12 and wm.model.nj == 0
    t = 1.0
    for _ in range(round(t / sim.config.dt)):
        sim.step()
    g = np.array([0.0, 0.0, -G])
    q, v = sim.q, sim.v
    for obj, p0, v0, w0 in ((wm.object("box"), p_box, v_box, w_box), (wm.object("ball"), p_ball, v_ball, w_ball)):
        R = quaternion_to_rotation(q[obj.q][3:7])
        np.testing.assert_allclose(q[obj.q][:3], p0 + v0 * t + 0.5 * g * t * t, atol=1e-9)
        np.testing.assert_allclose(R @ v[obj.v][:3], v0 + g * t, atol=1e-9)
        np.testing.assert_allclose(R @ v[obj.v][3:], w0, atol=1e-9)  # torque-free, about a principal axis / a sphere
        angle = np.linalg.norm(w0) * t  # constant spin: R(t) = exp(w0 t)
        axis = w0 / np.linalg.norm(w0)
        K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        np.testing.assert_allclose(R, np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K, atol=1e-9)


def test_a_box_dropped_on_the_ground_comes_to_rest_on_it():
    world = World(objects=(_box("box", position=[0.0, 0.0, 0.4], rpy=[0.1, -0.05, 0.3]),))
    sim = Simulator.from_world(assemble_world_model(world))
    for _ in range(2000):
        r = sim.step()
    obj = sim.world_model.object("box")
    q, v = sim.q, sim.v
    R = quaternion_to_rotation(q[obj.q][3:7])
    assert np.linalg.norm(v[obj.v]) < 1e-3
    assert q[obj.q][2] == pytest.approx(0.1, abs=1e-3)  # on its largest face: half its 0.2 m height
    assert abs(R[2, 2]) == pytest.approx(1.0, abs=1e-4)
    assert r.contacts and all(c.link == "box" and c.element == "ground" for c in r.contacts)
    assert sum(c.wrench_world[2] for c in r.contacts) == pytest.approx(2.0 * G, rel=1e-3)
    assert r.max_penetration < 1e-4


@pytest.mark.parametrize(
    "height, rpy, linear, angular",
    [
        (0.2648, [-0.43794598, 2.92835442, 0.3910142], [-2.41135407, -2.58324286, -7.32870992],
         [-16.44783429, -22.52671765, -12.70015458]),
        (0.2669, [0.48322497, 0.17479871, -0.9088679], [1.37420979, 1.75767442, -5.34967369],
         [-6.7623051, 7.43416692, 5.51416699]),
    ],
)  # fmt: skip
def test_a_bar_thrown_turning_onto_the_ground_does_not_sink_into_it(height, rpy, linear, angular):
    """A 0.3 m bar of 1 kg thrown down at 5-7 m/s, turning at up to 30 rad/s, strikes the ground
    end first, bounces and tumbles to rest. No point of it goes more than 0.5 mm into the
    ground (the contact band is 0.2 mm): an impact's impulse holds every point of the face that
    strikes, not only the edge or corner its centre of pressure falls nearest to."""
    bar = _bar(0.3, 0.06, position=[0.0, 0.0, height], rpy=rpy, linear_velocity=linear, angular_velocity=angular)
    sim = Simulator.from_world(assemble_world_model(World(objects=(bar,))))
    deepest, touched = _deepest_and_touching(sim, 400)
    assert touched > 100  # it struck the ground and lies on it
    assert deepest < 5e-4, deepest


@pytest.mark.parametrize(
    ("up", "v_low", "v_high"),
    [(0.7e-3, -6.0, 1.0), (0.7e-3, -4.0, 0.3), (0.3e-3, -6.0, 0.5), (2e-3, -8.0, 1.0)],
)
def test_a_bar_striking_with_one_end_does_not_drive_its_rising_end_into_the_ground(up, v_low, v_high):
    """A 0.3 m bar of 1 kg, tilted so that one end's bottom edge is on the ground and the
    other's ``up`` above it, turning so that the low end strikes at v_low while the high end
    rises at v_high [m/s]. The impulse that stops the low end turns the high end down at
    v_high + v_low / 2 (a uniform bar: the impulse P = -m v_low / 4 at one end changes the
    other's velocity by -2 P / m), within the step it moves that end farther than it is up;
    no point of the bar goes more than 0.1 mm into the ground."""
    length, width = 0.3, 0.06
    tilt = -np.arcsin(up / length)
    height = -0.5 * length * np.sin(tilt) + 0.5 * width * np.cos(tilt)  # the low end's edge on the ground
    bar = _bar(length, width, position=[0.0, 0.0, height], rpy=[0.0, tilt, 0.0],
               linear_velocity=[0.0, 0.0, 0.5 * (v_low + v_high)], angular_velocity=[0.0, (v_low - v_high) / length, 0.0])
    assert (v_high + 0.5 * v_low) * 1e-3 < -up  # unstopped, the high end would end the step below the ground
    sim = Simulator.from_world(assemble_world_model(World(objects=(bar,))))
    deepest, touched = _deepest_and_touching(sim, 300)
    assert touched > 100
    assert deepest < 1e-4, deepest


@pytest.mark.parametrize(("pitch_deg", "mu"), [(20.0, 0.5), (30.0, 1.0), (45.0, 2.0)])
def test_a_bar_falling_with_one_end_sliding_gets_coulombs_normal_force_and_stays_on_the_ground(pitch_deg, mu):
    """A 0.6 m bar of 1 kg, pitched so that one end's bottom edge touches the ground, thrown
    along the ground at 2 m/s towards its high end: the low end slides, with friction μ f_z
    against the slide. At the start (no rotation) the edge's normal acceleration is zero with
    f_z = g / (n . (n - μ s) / m + n . ((I^-1 (r x (n - μ s))) x r)) (s the slide direction,
    r the edge from the centre of mass); the step reports that force, slipping, and the bar
    falls flat without its edge going into the ground."""
    length, width, g = 0.6, 0.02, 9.81
    pitch = np.radians(pitch_deg)
    height = 0.5 * length * np.sin(pitch) + 0.5 * width * np.cos(pitch)
    bar = _bar(length, width, position=[0.0, 0.0, height], rpy=[0.0, -pitch, 0.0], linear_velocity=[2.0, 0.0, 0.0])
    world = World(ground=GroundPlane(0.0, Material(mu, mu, 0.0)), objects=(bar,))
    sim = Simulator.from_world(assemble_world_model(world))
    R = rpy_to_rotation([0.0, -pitch, 0.0])
    r = R @ np.array([-0.5 * length, 0.0, -0.5 * width])  # the low edge's midpoint from the centre
    n, s = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    d = n - mu * s
    I_world = R @ np.asarray(bar.inertia) @ R.T
    f_z = g / (n @ d + n @ np.cross(np.linalg.solve(I_world, np.cross(r, d)), r))
    first = sim.step()
    (contact,) = first.contacts
    assert not contact.sticking
    np.testing.assert_allclose(contact.wrench_world[:3], f_z * d, rtol=1e-6, atol=1e-9)
    deepest, touching = _deepest_and_touching(sim, 150)  # until it lies nearly flat
    assert touching == 150
    assert max(deepest, first.max_penetration) < 1e-5, deepest


def test_sphere_objects_roll_down_a_slope_at_five_sevenths_g_sin_alpha():
    """Two balls side by side (the second's coordinates after the first's: each free body's
    contact force is held fixed in the world over the step on its own coordinates)."""
    alpha, radius = np.radians(20.0), 0.05
    Rs = rpy_to_rotation([0.0, alpha, 0.0])
    slope = StaticShape("slope", Shape(ShapeKind.BOX, [40.0, 4.0, 0.2]), np.zeros(3), [0.0, alpha, 0.0],
                        Material(1.0, 0.8, 0.0))  # fmt: skip
    p0 = Rs[:, 2] * (0.1 + radius)
    balls = tuple(_sphere(f"ball{k}", radius, position=p0 + [0.0, y, 0.0]) for k, y in enumerate((-1.0, 1.0)))
    sim = Simulator.from_world(assemble_world_model(World(ground=None, static=(slope,), objects=balls)))
    lost = 0
    for _ in range(1000):
        lost += len(sim.step().contacts) != 2
    assert lost == 0
    for obj in sim.world_model.objects:
        R = quaternion_to_rotation(sim.q[obj.q][3:7])
        rate = float((R @ sim.v[obj.v][:3]) @ Rs[:, 0]) / 1.0
        print(f"{obj.name}: {rate / (G * np.sin(alpha)):.5f} g sin(alpha)")
        assert rate == pytest.approx(5.0 / 7.0 * G * np.sin(alpha), rel=5e-3)


def test_a_crate_pushed_near_its_base_slides_against_mu_d_m_g():
    """A 10 kg crate on the ground (mu_d 0.5) pushed by 80 N along x 5 cm above its bottom
    face (no tipping): a = (F - mu_d m g) / m from rest."""
    world = World(
        ground=GroundPlane(0.0, Material(0.6, 0.5, 0.0)),
        objects=(FreeObject("crate", Shape(ShapeKind.BOX, [0.4, 0.6, 0.5]), 10.0,
                            Shape(ShapeKind.BOX, [0.4, 0.6, 0.5]).mass_properties(mass=10.0).inertia,
                            position=[0.0, 0.0, 0.25]),),
    )  # fmt: skip
    sim = Simulator.from_world(assemble_world_model(world))
    crate = sim.world_model.object("crate")
    push = {"crate": LinkWrench(np.array([80.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.array([0.0, 0.0, -0.2]))}
    for _ in range(500):
        r = sim.step(link_wrenches=push)
    expected = (80.0 - 0.5 * 10.0 * G) / 10.0 * 0.5
    R = quaternion_to_rotation(sim.q[crate.q][3:7])
    speed = (R @ sim.v[crate.v][:3])[0]
    print(f"crate: {speed:.5f} m/s after 0.5 s, closed form {expected:.5f}")
    assert speed == pytest.approx(expected, rel=1e-2)
    assert abs(sim.q[crate.q][2] - 0.25) < 1e-4 and all(not c.sticking for c in r.contacts)


def test_reset_puts_the_robot_on_the_ground_as_alone_and_the_objects_at_their_pose_and_twist():
    robot = load_urdf(HUMANOID)
    crate = _box("crate", position=[0.6, 0.0, 0.1], rpy=[0.0, 0.0, 0.5], linear_velocity=[0.0, 1.0, 0.0],
                 angular_velocity=[0.0, 0.0, 2.0])  # fmt: skip
    ball = _sphere("ball", position=[0.0, 0.0, -0.5])  # below the ground: must not lift the robot
    world = World(ground=GroundPlane(0.0), objects=(crate, ball), robots=(RobotEntry("humanoid", "urdf/humanoid.urdf"),))
    wm = assemble_world_model(world, robot)
    sim = Simulator.from_world(wm, "stand")
    alone = Simulator(robot)
    q_alone = alone.reset("stand")
    for q in (sim.q, sim.reset("stand")):
        np.testing.assert_allclose(q[: wm.robot_nq], q_alone, atol=1e-12)
        obj = wm.object("crate")
        np.testing.assert_allclose(q[obj.q][:3], [0.6, 0.0, 0.1])
        R = quaternion_to_rotation(q[obj.q][3:7])
        np.testing.assert_allclose(R, rpy_to_rotation([0.0, 0.0, 0.5]), atol=1e-12)
        v = sim.v
        np.testing.assert_allclose(R @ v[obj.v][:3], [0.0, 1.0, 0.0], atol=1e-12)
        np.testing.assert_allclose(R @ v[obj.v][3:], [0.0, 0.0, 2.0], atol=1e-12)
        np.testing.assert_array_equal(v[: wm.robot_nv], 0.0)
        assert sim.t == 0.0


def test_set_state_makes_every_free_bodys_quaternion_unit():
    world = World(objects=(_box("a", position=[0, 0, 1]), _box("b", position=[1, 0, 1])))
    sim = Simulator.from_world(assemble_world_model(world))
    q = sim.q
    for obj in sim.world_model.objects:
        q[obj.q.start + 3 : obj.q.stop] *= 3.0
    sim.set_state(q, sim.v)
    for obj in sim.world_model.objects:
        assert np.linalg.norm(sim.q[obj.q][3:7]) == pytest.approx(1.0, abs=1e-15)


def test_the_robot_and_a_crate_beside_it_both_rest_on_the_ground():
    robot = load_urdf(HUMANOID)
    world = World(objects=(_box("crate", position=[0.8, 0.0, 0.1]),))
    sim = Simulator.from_world(assemble_world_model(world, robot), "stand")
    q0 = sim.q
    obj = sim.world_model.object("crate")
    for _ in range(100):
        r = sim.step()
    links = {c.link for c in r.contacts}
    assert "crate" in links and len(links) > 1  # the crate and the robot's feet
    np.testing.assert_allclose(sim.q[obj.q], q0[obj.q], atol=1e-6)
    crate_force = sum(c.wrench_world[2] for c in r.contacts if c.link == "crate")
    assert crate_force == pytest.approx(2.0 * G, rel=1e-3)


def test_the_world_robot_entry_gives_the_pose_and_the_base():
    robot = load_urdf(HUMANOID)
    entry = RobotEntry("humanoid", "urdf/humanoid.urdf", initial_pose="stand", base_position=[0.5, 0.2, 1.2],
                       base_rpy=[0.0, 0.0, 0.3])  # fmt: skip
    wm = assemble_world_model(World(objects=(_box("crate", position=[2.0, 0.0, 0.1]),), robots=(entry,)), robot)
    sim = Simulator.from_world(wm)
    alone = Simulator(robot)
    stand = alone.reset("stand")
    q = sim.q
    np.testing.assert_allclose(q[:3], [0.5, 0.2, 1.2])
    np.testing.assert_allclose(quaternion_to_rotation(q[3:7]), rpy_to_rotation([0.0, 0.0, 0.3]), atol=1e-12)
    np.testing.assert_allclose(q[robot.joint_q_slice], stand[robot.joint_q_slice])
    with pytest.raises(UnknownNameError, match="valid initial poses"):
        Simulator.from_world(wm, "no_such_pose")


@pytest.mark.parametrize("elbow_speed", [100.0, 150.0])
def test_a_link_whirling_at_a_hundred_rad_per_second_keeps_its_energy(elbow_speed):
    # RK4's error grows as (ω dt)⁵: one step of 1 ms at 150 rad/s lost 8.7e-6 of the energy, and
    # 1 s of them 1.2e-4. A step in which a coordinate moves more than FAST_MOTION is taken in
    # two halves (integrator.held_step_nb): 5e-7 and 4e-6
    model = load_urdf(chain_urdf(2, joint_type="continuous"))  # two 1 kg rods of 1 m, no limits
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=Environment(ground=None), gravity=np.zeros(3)))
    q, v = np.array([0.0, 0.3]), np.array([2.0, elbow_speed])
    sim.set_state(q, v)
    ws = DynamicsWorkspace(model)

    def energy(q, v):
        ws.update(q, v)
        return 0.5 * float(v @ ws.M @ v)

    e0 = e = energy(q, v)
    worst = 0.0
    for _ in range(1000):
        r = sim.step(np.zeros(2))
        assert r.stages == (7 if np.abs(v).max() * 1e-3 > FAST_MOTION else 3)  # v: the step's start
        v = r.v
        e1 = energy(r.q, r.v)
        worst = max(worst, abs(e1 - e))
        e = e1
    assert worst <= 1e-6 * e0
    assert abs(e - e0) <= 1e-5 * e0
