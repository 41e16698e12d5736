"""tf link tree: chaining the published transforms reproduces Pinocchio's link placements."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 messages are not installed (run scripts/setup.sh)")
pin = pytest.importorskip("pinocchio", reason="Pinocchio (the oracle) is not installed")

from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.ros.link_tree import link_tree, urdf_link_joint_names  # noqa: E402

URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"

# A small tree with a fixed link between two moving ones and a prismatic joint.
SMALL_URDF = """<robot name="small">
  <link name="base"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="bracket"/>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="0 1 1"/><limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="jfix" type="fixed"><parent link="a"/><child link="bracket"/><origin xyz="0 0 -0.4" rpy="0.1 0.2 0.3"/></joint>
  <joint name="jb" type="prismatic"><parent link="bracket"/><child link="b"/>
    <origin xyz="0.05 0 0" rpy="0 0.4 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="jtip" type="fixed"><parent link="b"/><child link="tip"/><origin xyz="0 0 -0.1"/></joint>
</robot>"""


def chain(tree, q):
    """X_odom_link for every link by composing the tf transforms (what a tf listener does)."""
    edges = {child: (parent, X) for parent, child, X in tree.static}
    for parent, child, X in zip(tree.moving_parent, tree.moving_child, tree.moving_transforms(q)):
        edges[child] = (parent, X)
    if tree.floating:
        edges[tree.root_link] = (tree.odom_frame, tree.base_transform(q))

    def world(link):
        if link == tree.odom_frame:
            return np.eye(4)
        parent, X = edges[link]
        return world(parent) @ X

    return {link: world(link) for link in tree.links}


def pinocchio_placements(urdf_xml, q):
    model = pin.buildModelFromXML(urdf_xml, pin.JointModelFreeFlyer())
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return {
        frame.name: data.oMf[model.getFrameId(frame.name)].homogeneous
        for frame in model.frames
        if frame.type == pin.FrameType.BODY
    }


def random_q(model, rng):
    q = np.zeros(model.nq)
    q[:3] = rng.normal(size=3)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(-1.0, 1.0, size=model.nj)
    return q


@pytest.mark.parametrize("source", ["small", "humanoid"])
def test_tf_chain_matches_pinocchio(source, rng):
    urdf_xml = SMALL_URDF if source == "small" else URDF.read_text()
    model = load_urdf(urdf_xml)
    tree = link_tree(model, urdf_xml)
    links, _ = urdf_link_joint_names(urdf_xml)
    assert set(tree.links) == set(links)
    for _ in range(5):
        q = random_q(model, rng)
        ours = chain(tree, q)
        oracle = pinocchio_placements(urdf_xml, q)  # same q layout: no continuous joints here
        for link in links:
            np.testing.assert_allclose(ours[link], oracle[link], atol=1e-12, err_msg=link)


def test_static_and_moving_split():
    model = load_urdf(SMALL_URDF)
    tree = link_tree(model, SMALL_URDF)
    assert tree.floating and tree.root_link == "base"
    assert {(p, c) for p, c, _ in tree.static} == {("a", "bracket"), ("b", "tip")}
    assert tree.moving_parent == ("base", "bracket") and tree.moving_child == ("a", "b")


def test_fixed_base_publishes_static_odom_to_root():
    model = load_urdf(SMALL_URDF, floating_base=False)
    tree = link_tree(model, SMALL_URDF)
    assert not tree.floating
    assert ("odom", "base") in {(p, c) for p, c, _ in tree.static}


@pytest.mark.parametrize("floating", [True, False])
def test_pose_rows_match_moving_transforms(rng, floating):
    """The compiled tf rows equal the numpy transforms (translation, quaternion w >= 0)."""
    from humanoid_sim.ros.conversions import quaternions_from_rotations

    text = URDF.read_text() if floating else SMALL_URDF
    model = load_urdf(text, floating_base=floating)
    tree = link_tree(model, text)
    assert tree.floating == floating
    out = np.full((model.nj + int(floating), 7), np.nan)
    for _ in range(5):
        q = rng.normal(size=model.nq)
        if floating:
            q[3:7] = rng.normal(size=4) * 2.0  # not normalised, any sign of w
        X = tree.moving_transforms(q)
        if floating:
            X = np.concatenate([tree.base_transform(q)[None], X])
        rows = tree.pose_rows(q, out)
        assert rows is out
        np.testing.assert_allclose(rows[:, :3], X[:, :3, 3], atol=1e-12)
        np.testing.assert_allclose(rows[:, 3:], quaternions_from_rotations(X[:, :3, :3]), atol=1e-12)


def test_a_later_robots_tree_is_prefixed_and_places_its_links_as_the_world_model(rng):
    """tf of a world's second robot: links "r2/<link>", base under odom, and the chained
    transforms at its own coordinates equal the world model's placement of each link."""
    from humanoid_sim.dynamics.kinematics import frame_placement
    from humanoid_sim.ros.link_tree import later_link_trees
    from humanoid_sim.world import RobotEntry, World, assemble_world_model

    small = load_urdf(SMALL_URDF)
    world = World(robots=(RobotEntry("first", "x.urdf"), RobotEntry("r2", "x.urdf")))
    wm = assemble_world_model(world, small, [small])
    ((tree, q_part),) = later_link_trees(wm.robots[1:], [SMALL_URDF])
    assert q_part == wm.robots[1].q
    assert tree.root_link == "r2/base" and tree.moving_parent == ("r2/base", "r2/bracket")
    assert {(p, c) for p, c, _ in tree.static} == {("r2/a", "r2/bracket"), ("r2/b", "r2/tip")}
    links, _ = urdf_link_joint_names(SMALL_URDF)
    assert set(tree.links) == {f"r2/{link}" for link in links}
    for _ in range(3):
        q = np.concatenate([random_q(small, rng), random_q(small, rng)])
        ours = chain(tree, q[q_part])
        for link in links:
            np.testing.assert_allclose(ours[f"r2/{link}"], frame_placement(wm.model, q, f"r2/{link}"), atol=1e-12)
