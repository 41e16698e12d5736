"""A floating robot with mass below all its collision geometry gives one warning naming the links."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from humanoid_sim.model import CollisionCoverageWarning, collision_coverage_warning, load_urdf
from humanoid_sim.model.urdf_builder import box_link_xml, chain_urdf

ROOT = Path(__file__).resolve().parents[2]


def coverage_warnings(source, **kwargs) -> list[str]:
    """Messages of the CollisionCoverageWarnings one load_urdf call gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_urdf(source, **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, CollisionCoverageWarning)]


def test_legs_without_collision_under_a_colliding_base_are_named_once() -> None:
    # a free 1 kg cube with a collision box, two 1 m links hanging below it without any
    messages = coverage_warnings(chain_urdf(2, fixed_base=False, name="dangling"))
    assert messages == [
        "robot 'dangling': no collision geometry under links link1, link2 (their centres of mass lie"
        " below every collision shape with base 'base' upright in the neutral pose): they sink"
        " through the ground"
    ]


def test_a_robot_without_any_collision_shape_falls_through() -> None:
    urdf = (
        '<robot name="ghost">'
        + box_link_xml("pelvis", 5.0, (0.2, 0.2, 0.2), collision=False)
        + box_link_xml("shin", 2.0, (0.1, 0.1, 0.5), com=(0, 0, -0.25), collision=False)
        + '<joint name="knee" type="revolute"><parent link="pelvis"/><child link="shin"/>'
        '<axis xyz="0 1 0"/><limit effort="10" velocity="1"/></joint></robot>'
    )
    assert coverage_warnings(urdf) == [
        "robot 'ghost': no collision shapes on any link, below base 'pelvis' or elsewhere: it falls"
        " through the ground"
    ]


def test_robots_that_cannot_fall_or_stand_on_their_shapes_are_silent() -> None:
    assert coverage_warnings(chain_urdf(2, fixed_base=True)) == []  # welded to the world
    assert coverage_warnings(chain_urdf(2, fixed_base=False), floating_base=False) == []
    assert coverage_warnings(ROOT / "urdf" / "humanoid.urdf") == []
    # massless: nothing to sink
    massless = '<robot name="r"><link name="a"><inertial><mass value="0"/></inertial></link></robot>'
    assert coverage_warnings(massless) == []


QUARTER_TURN_ABOUT_X = "1.5707963267948966 0 0"


@pytest.mark.parametrize(
    "geometry, xyz, rpy, lowest_z",
    [
        ('<sphere radius="0.1"/>', "0 0 0", "0 0 0", -0.1),
        ('<box size="0.2 0.2 0.4"/>', "0 0 0", "0 0 0", -0.2),
        ('<box size="0.2 0.2 0.4"/>', "0 0 0", QUARTER_TURN_ABOUT_X, -0.1),  # on its side
        ('<cylinder radius="0.1" length="1"/>', "0 0 0", "0 0 0", -0.5),
        ('<cylinder radius="0.1" length="1"/>', "0 0 0", QUARTER_TURN_ABOUT_X, -0.1),  # lying
        ('<capsule radius="0.1" length="1"/>', "0 0 0", "0 0 0", -0.6),
        ('<capsule radius="0.1" length="1"/>', "0 0 0.3", "0 0 0", -0.3),
    ],
)
def test_lowest_point_of_each_primitive(geometry: str, xyz: str, rpy: str, lowest_z: float) -> None:
    """A free body whose centre of mass is 1 cm above the shape's lowest point is covered, 1 cm below not."""
    for com_z, sinks in ((lowest_z + 0.01, False), (lowest_z - 0.01, True)):
        urdf = (
            f'<robot name="r"><link name="body"><inertial><origin xyz="0 0 {com_z}"/><mass value="1"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<collision><origin xyz="{xyz}" rpy="{rpy}"/><geometry>{geometry}</geometry></collision>'
            "</link></robot>"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CollisionCoverageWarning)
            model = load_urdf(urdf)
        message = collision_coverage_warning(model)
        assert (message is not None) == sinks, (geometry, xyz, rpy, com_z)
        assert not sinks or "no collision geometry under links body" in message


@pytest.mark.parametrize(
    "relative",
    [
        "talos_data/robots/talos_reduced.urdf",
        "talos_data/robots/talos_full_v2.urdf",
        "g1_description/urdf/g1_29dof_rev_1_0.urdf",
        "icub_description/robots/icub.urdf",
        "romeo_description/urdf/romeo.urdf",
    ],
    ids=lambda p: Path(p).stem,
)
def test_public_humanoids_stand_on_their_collision_geometry(relative: str, robots_dir: Path) -> None:
    assert coverage_warnings(robots_dir / relative, mimic="independent", strict_inertia=False) == []


def test_simple_humanoid_without_leg_collisions_names_its_legs(robots_dir: Path) -> None:
    """example-robot-data's simple_humanoid has collision shapes on its base link only."""
    path = robots_dir / "simple_humanoid_description/urdf/simple_humanoid.urdf"
    (message,) = coverage_warnings(path)
    legs = "RLEG_LINK4, RLEG_LINK5, r_ankle, LLEG_LINK4, LLEG_LINK5, l_ankle"
    assert f"robot 'simple_humanoid': no collision geometry under links {legs} (" in message
