"""The self-collision pair filter on a small robot built in code."""

import numpy as np
import pytest

from humanoid_sim.contact.self_collision import self_collision_pairs
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.model import load_urdf

INERTIA = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'


def link(name: str, geometry: str) -> str:
    return f'<link name="{name}">{INERTIA}<collision><geometry>{geometry}</geometry></collision></link>'


def joint(name: str, parent: str, child: str, kind: str = "revolute", xyz: str = "0 0 0") -> str:
    limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>' if kind == "revolute" else ""
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><origin xyz="{xyz}"/><axis xyz="0 1 0"/>{limit}</joint>'


ROBOT = (
    '<robot name="mini">'
    + link("torso", '<box size="0.3 0.2 0.5"/>')
    + link("head", '<sphere radius="0.1"/>')
    + link("l_arm", '<capsule radius="0.04" length="0.3"/>')
    + link("l_hand", '<sphere radius="0.05"/>')
    + link("r_arm", '<capsule radius="0.04" length="0.3"/>')
    + link("r_hand", '<sphere radius="0.05"/>')
    + joint("neck", "torso", "head", "fixed", "0 0 0.35")
    + joint("l_shoulder", "torso", "l_arm", xyz="0 0.15 0.2")
    + joint("l_wrist", "l_arm", "l_hand", xyz="0 0 -0.3")
    + joint("r_shoulder", "torso", "r_arm", xyz="0 -0.15 0.2")
    + joint("r_wrist", "r_arm", "r_hand", xyz="0 0 -0.3")
    + "</robot>"
)


def link_pairs(model, pairs):
    names = [s.link_name for s in model.collision_shapes]
    return {frozenset((names[i], names[j])) for i, j in pairs}


def test_same_body_and_adjacent_links_are_excluded():
    model = load_urdf(ROBOT)
    pairs = self_collision_pairs(model)
    assert pairs.dtype == np.int64 and np.all(pairs[:, 0] < pairs[:, 1])
    expected = {
        ("torso", "l_hand"), ("torso", "r_hand"), ("head", "l_hand"), ("head", "r_hand"),  # the head is the torso's body
        ("l_arm", "r_arm"), ("l_arm", "r_hand"), ("l_hand", "r_arm"), ("l_hand", "r_hand"),
    }  # fmt: skip
    assert link_pairs(model, pairs) == {frozenset(p) for p in expected}


def test_links_joined_through_links_without_geometry_are_adjacent():
    """A hip of three revolute joints: the pelvis and the thigh are adjacent (the two links
    between carry no geometry), the two thighs are not."""
    bare = '<link name="{}"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    parts = ['<robot name="hips">', link("pelvis", '<box size="0.3 0.3 0.1"/>')]
    for side, y in (("l", "0.1"), ("r", "-0.1")):
        parts += [bare.format(f"{side}_yaw"), bare.format(f"{side}_roll"), link(f"{side}_thigh", '<box size="0.1 0.1 0.4"/>')]
        parts += [joint(f"{side}_1", "pelvis", f"{side}_yaw", xyz=f"0 {y} -0.1"), joint(f"{side}_2", f"{side}_yaw", f"{side}_roll"),
                  joint(f"{side}_3", f"{side}_roll", f"{side}_thigh", xyz="0 0 -0.2")]  # fmt: skip
    model = load_urdf("".join(parts) + "</robot>")
    assert link_pairs(model, self_collision_pairs(model)) == {frozenset(("l_thigh", "r_thigh"))}


def test_srdf_disabled_pairs_are_excluded(tmp_path):
    model = load_urdf(ROBOT)
    srdf = tmp_path / "mini.srdf"
    srdf.write_text(
        '<robot name="mini"><disable_collisions link1="l_hand" link2="r_hand" reason="Never"/>'
        '<disable_collisions link1="head" link2="l_hand" reason="Never"/></robot>'
    )
    got = link_pairs(model, self_collision_pairs(model, srdf))
    assert frozenset(("l_hand", "r_hand")) not in got
    assert frozenset(("head", "l_hand")) not in got and frozenset(("torso", "l_hand")) not in got  # one body
    assert frozenset(("l_arm", "r_arm")) in got
    srdf.write_text('<robot name="mini"><disable_collisions link1="l_foot" link2="r_hand"/></robot>')
    with pytest.raises(UnknownNameError, match="unknown link 'l_foot'.*valid links:.*l_hand"):
        self_collision_pairs(model, srdf)
