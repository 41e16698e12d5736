"""Several robots in one world model: names, layout, and the dynamics of each tree alone.

Truths: the trees of a joined model do not couple, so M is block-diagonal by tree and each
robot's block (and its part of b) is the robot's own M (b) at the same configuration.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.dynamics.rigid_body_dynamics import bias_forces, mass_matrix
from humanoid_sim.errors import InvalidValueError, UnknownNameError
from humanoid_sim.model import CollisionCoverageWarning, load_urdf
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.robot_model import ShapeKind
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.world import (
    FreeObject,
    RobotEntry,
    Shape,
    World,
    WorldConfigError,
    assemble_world_model,
    load_world,
    world_from_dict,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def _chain(fixed: bool = False):
    """A two-link pendulum; floating, it has no collision geometry below its links (warned)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollisionCoverageWarning)
        return load_urdf(chain_urdf(2, fixed_base=fixed))


def _random_q(model, rng) -> np.ndarray:
    q = neutral_configuration(model)
    j = model.joint_q_index
    q[j] = rng.uniform(-1.0, 1.0, len(j))
    if model.floating_base:
        q[0:3] = rng.uniform(-1.0, 1.0, 3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
    return q


def test_the_later_robots_names_are_prefixed_with_their_entry_name() -> None:
    a, b = _chain(), _chain()
    box = Shape(ShapeKind.BOX, [0.2, 0.2, 0.2])
    world = World(
        objects=(FreeObject("box", box, 1.0, box.mass_properties(mass=1.0).inertia),),
        robots=(RobotEntry("first", "unused.urdf"), RobotEntry("r2", "unused.urdf")),
    )
    wm = assemble_world_model(world, a, [b])
    m = wm.model
    assert m.body_names == a.body_names + tuple(f"r2/{n}" for n in b.body_names) + ("box",)
    assert m.joint_names == a.joint_names + tuple(f"r2/{n}" for n in b.joint_names)
    assert set(m.frames) == set(a.frames) | {f"r2/{n}" for n in b.frames} | {"box"}
    assert {s.link_name for s in m.collision_shapes} == (
        {s.link_name for s in a.collision_shapes} | {f"r2/{s.link_name}" for s in b.collision_shapes} | {"box"}
    )
    first, second = wm.robots
    assert (first.name, first.prefix, first.model, wm.robot, wm.robot_name) == ("first", "", a, a, "first")
    assert (second.name, second.prefix, second.model) == ("r2", "r2/", b)
    # layout: first robot, second robot, then the object; each robot's part is its own model's
    assert first.bodies == slice(0, a.nb) and second.bodies == slice(a.nb, a.nb + b.nb)
    assert first.q == slice(0, a.nq) and second.q == slice(a.nq, a.nq + b.nq) and wm.object("box").q.start == a.nq + b.nq
    assert second.v == slice(a.nv, a.nv + b.nv) and second.joints == slice(a.nj, a.nj + b.nj)
    assert (wm.robot_nb, wm.robot_nq, wm.robot_nv) == (a.nb, a.nq, a.nv)
    assert m.frame("r2/" + b.body_names[-1]).body == a.nb + b.nb - 1
    np.testing.assert_array_equal(m.joint_v_index[second.joints], np.arange(second.v.start + 6, second.v.stop))
    np.testing.assert_array_equal(wm.robot_of_body, [0] * a.nb + [1] * b.nb + [-1])
    assert m.tree_root[second.bodies.start] == second.bodies.start  # its own tree
    assert wm.robot_tree("r2") is second
    with pytest.raises(UnknownNameError, match=r"unknown robot 'r3'.*first.*r2"):
        wm.robot_tree("r3")


def test_duplicate_robot_names_are_refused_naming_the_entry() -> None:
    entry = {"name": "twin", "urdf": "urdf/humanoid.urdf"}
    with pytest.raises(WorldConfigError, match=r"robot 'twin' \(robots\[1\]\): another robot entry has this name"):
        world_from_dict({"robots": [entry, dict(entry)]})
    with pytest.raises(WorldConfigError, match=r"robot 'a/b': a robot's name is letters, digits and '_'"):
        world_from_dict({"robots": [{"name": "a/b", "urdf": "urdf/humanoid.urdf"}]})


def test_an_object_named_like_a_later_robots_link_is_refused() -> None:
    a, b = _chain(), _chain()
    box = Shape(ShapeKind.BOX, [0.2, 0.2, 0.2])
    clash = f"r2/{b.body_names[0]}"
    world = World(objects=(FreeObject(clash, box, 1.0, box.mass_properties(mass=1.0).inertia),),
                  robots=(RobotEntry("first", "x.urdf"), RobotEntry("r2", "x.urdf")))  # fmt: skip
    with pytest.raises(InvalidValueError, match=rf"objects \['{clash}'\] have the name of a link or frame of robot 'r2'"):
        assemble_world_model(world, a, [b])
    with pytest.raises(InvalidValueError, match=r"1 later robots given for the entries \[\]"):
        assemble_world_model(World(robots=(RobotEntry("first", "x.urdf"),)), a, [b])


def test_mass_matrix_and_bias_are_block_diagonal_and_each_block_is_the_robots_own(humanoid) -> None:
    world = load_world(REPO / "config" / "worlds" / "two_humanoids.yaml")
    wm = assemble_world_model(world, humanoid)  # the later robot is loaded from its entry
    rng = np.random.default_rng(7)
    for _ in range(3):
        qs = [_random_q(t.model, rng) for t in wm.robots]
        vs = [rng.normal(size=t.model.nv) for t in wm.robots]
        q, v = np.concatenate(qs), np.concatenate(vs)
        M, b = mass_matrix(wm.model, q), bias_forces(wm.model, q, v)
        for k, tk in enumerate(wm.robots):
            np.testing.assert_allclose(M[tk.v, tk.v], mass_matrix(tk.model, qs[k]), rtol=0.0, atol=1e-12)
            np.testing.assert_allclose(b[tk.v], bias_forces(tk.model, qs[k], vs[k]), rtol=0.0, atol=1e-12)
            for other in wm.robots[k + 1 :]:
                assert np.all(M[tk.v, other.v] == 0.0) and np.all(M[other.v, tk.v] == 0.0)


def test_each_robot_starts_in_its_entrys_pose_where_the_entry_puts_it(humanoid) -> None:
    from humanoid_sim.dynamics.kinematics import frame_placement
    from humanoid_sim.simulator.simulator import Simulator

    world = load_world(REPO / "config" / "worlds" / "two_humanoids.yaml")
    wm = assemble_world_model(world, humanoid)
    sim = Simulator.from_world(wm)
    alone = Simulator.from_urdf(REPO / "urdf" / "humanoid.urdf", "stand")
    q = sim.q
    for tree, x, yaw in zip(wm.robots, (-0.5, 0.5), (0.0, np.pi)):
        qr = q[tree.q]
        np.testing.assert_allclose(qr[0:2], [x, 0.0], atol=1e-12)
        np.testing.assert_allclose(qr[2], alone.q[2], atol=1e-9)  # resting on the ground, as alone
        np.testing.assert_allclose(qr[7:], alone.q[7:], atol=1e-12)  # the stand pose's joints
        R = frame_placement(tree.model, qr, tree.model.body_names[0])[:3, :3]
        np.testing.assert_allclose(R[:2, 0], [np.cos(yaw), np.sin(yaw)], atol=1e-12)
    assert np.all(sim.v == 0.0)
    q_again = sim.reset("stand")
    np.testing.assert_allclose(q_again[wm.robots[1].q], q[wm.robots[1].q], atol=1e-12)
    # a height given: the base origin there
    raised = world_from_dict({"robots": [{"name": "h", "urdf": "urdf/humanoid.urdf"},
                                         {"name": "p", "urdf": "urdf/humanoid.urdf", "base_position_m": [3, 1, 2.5]}]})  # fmt: skip
    sim2 = Simulator.from_world(assemble_world_model(raised, humanoid))
    np.testing.assert_allclose(sim2.q[sim2.world_model.robot_tree("p").q][0:3], [3.0, 1.0, 2.5], atol=1e-12)


def test_a_fixed_base_robot_and_a_floating_one_share_a_world() -> None:
    a, b = _chain(fixed=True), _chain()
    wm = assemble_world_model(World(robots=(RobotEntry("arm", "x.urdf"), RobotEntry("r2", "x.urdf"))), a, [b])
    # the joints are no longer one slice: they are found by index
    with pytest.raises(ValueError, match="not contiguous"):
        wm.model.joint_v_slice
    np.testing.assert_array_equal(wm.model.joint_v_index, [0, 1, 8, 9])
