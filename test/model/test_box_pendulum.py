"""The n-link pendulum of box links built in code (humanoid_sim.model.box_pendulum)."""

import math

import numpy as np
import pytest

from humanoid_sim.dynamics.kinematics import frame_placement
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum
from humanoid_sim.model.robot_model import ShapeKind


def test_the_default_is_the_ten_links_of_four_by_four_by_ten_centimetres_hinged_at_055_m():
    spec = BoxPendulum()
    model = box_pendulum(spec)
    assert not model.floating_base
    assert model.nq == model.nv == model.nj == 10
    assert list(model.joint_names) == [f"joint{k}" for k in range(1, 11)]
    assert model.total_mass == pytest.approx(3.0)
    shapes = model.collision_shapes
    assert len(shapes) == 10
    assert all(s.kind == ShapeKind.BOX for s in shapes)
    assert np.allclose([s.size for s in shapes], [0.04, 0.04, 0.10])


def test_the_chain_hangs_from_the_pivot_and_the_first_joint_swings_it_toward_minus_x():
    spec = BoxPendulum(links=3, pivot_height=0.8, length=0.2)
    model = box_pendulum(spec)
    hanging = np.zeros(3)
    assert np.allclose(frame_placement(model, hanging, "link1")[:3, 3], [0.0, 0.0, 0.8])
    assert np.allclose(frame_placement(model, hanging, "link3")[:3, 3], [0.0, 0.0, 0.4])
    q = spec.initial_configuration(math.radians(60.0))
    assert np.allclose(q, [math.radians(60.0), 0.0, 0.0])
    # link3's joint is 0.4 m from the pivot along the straight chain, 60 degrees from the vertical
    p = frame_placement(model, q, "link3")[:3, 3]
    assert np.allclose(p, [-0.4 * math.sin(math.radians(60.0)), 0.0, 0.8 - 0.4 * math.cos(math.radians(60.0))])


def test_each_link_has_the_inertia_of_a_solid_box_about_its_centre():
    model = box_pendulum(BoxPendulum(links=2, width=0.04, depth=0.06, length=0.1, link_mass=0.3))
    body = model.body_names.index("link2")
    assert model.mass[body] == pytest.approx(0.3)
    assert np.allclose(model.com[body], [0.0, 0.0, -0.05])
    expected = 0.3 / 12.0 * np.array([0.06**2 + 0.1**2, 0.04**2 + 0.1**2, 0.04**2 + 0.06**2])
    assert np.allclose(np.diag(model.inertia_com[body]), expected)


@pytest.mark.parametrize(
    "field, value", [("links", 0), ("links", 2.5), ("pivot_height", 0.0), ("length", -0.1), ("link_mass", math.nan)]
)
def test_bad_dimensions_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"BoxPendulum.{field}"):
        BoxPendulum(**{field: value})
