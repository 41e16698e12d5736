"""The node's simulator from a world file: the world parameter, self_collision and srdf."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.ros.parameters import validate_parameters
from humanoid_sim.ros.sim_setup import StartupError, initial_configuration, load_robot, load_world_file, make_simulator

REPO_WORLDS = Path(__file__).resolve().parents[2] / "config" / "worlds"


def _warn(messages: list[str]):
    return messages.append


def test_no_world_is_the_environment_as_before():
    p = validate_parameters({})
    assert p.world == "" and p.self_collision is False and p.srdf == ""
    assert load_world_file(p) is None
    model, _ = load_robot(p)
    sim = make_simulator(p, model, _warn([]))
    assert sim.world_model is None and sim.model is model and not sim.config.self_collision


def test_a_package_world_gives_the_robot_then_its_objects():
    p = validate_parameters({"world": "config/worlds/box_push.yaml", "self_collision": True})
    world = load_world_file(p)
    model, urdf = load_robot(p, world)  # the world's robot entry (urdf_path is empty)
    assert model.name in urdf and world.robots[0].urdf.endswith("humanoid.urdf")
    sim = make_simulator(p, model, _warn([]), world)
    assert sim.config.self_collision
    wm = sim.world_model
    assert [o.name for o in wm.objects] == ["crate"] and wm.robot is model
    assert sim.model.nq == model.nq + 7 and sim.model.nv == model.nv + 6
    q = initial_configuration(p, sim)
    np.testing.assert_allclose(q[wm.object("crate").q][:3], [0.6, 0.0, 0.25])
    # the robot's joints keep their slices: joint_states read the robot alone
    assert sim.model.joint_q_slice == model.joint_q_slice and sim.model.joint_v_slice == model.joint_v_slice
    assert sim.model.joint_names == model.joint_names
    assert sim.providers[0].model is sim.model


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("objects:\n  - {name: crate, shape: box, sise_m: [1, 1, 1], mass_kg: 1}\n", "unknown key 'sise_m'"),
        ("objects: [\n", "not valid YAML"),
        ("objects:\n  - {name: crate, shape: cube, size_m: [1, 1, 1], mass_kg: 1}\n", "unknown shape 'cube'"),
    ],
)
def test_a_bad_world_file_is_one_line_naming_the_file_and_the_fault(tmp_path, text, fault):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(StartupError) as caught:
        load_world_file(validate_parameters({"world": str(path)}))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and fault in message


def test_a_missing_world_file_says_where_it_looked():
    with pytest.raises(StartupError) as caught:
        load_world_file(validate_parameters({"world": "config/worlds/nowhere.yaml"}))
    assert "nowhere.yaml" in str(caught.value)


def test_a_world_of_two_robots_gives_both_and_the_later_ones_urdf(tmp_path):
    from humanoid_sim.ros.sim_setup import later_robot_urdfs

    p = validate_parameters({"world": "config/worlds/two_humanoids.yaml"})
    world = load_world_file(p)
    model, urdf = load_robot(p, world)
    sim = make_simulator(p, model, _warn([]), world)
    wm = sim.world_model
    assert [t.name for t in wm.robots] == ["humanoid", "partner"] and wm.robot is model
    assert sim.model.joint_names[model.nj :] == tuple(f"partner/{n}" for n in model.joint_names)
    (text,) = later_robot_urdfs(wm)
    assert text == urdf  # the same bundled humanoid
    assert later_robot_urdfs(None) == ()
    # a later robot whose URDF is missing: one line naming it
    missing = tmp_path / "two.yaml"
    missing.write_text(
        "robots:\n  - {name: a, urdf: urdf/humanoid.urdf}\n  - {name: b, urdf: " + str(tmp_path / "none.urdf") + "}\n"
    )
    p = validate_parameters({"world": str(missing)})
    with pytest.raises(StartupError, match="none.urdf"):
        make_simulator(p, model, _warn([]), load_world_file(p))


@pytest.mark.parametrize(
    "parameter, world_method, expected",
    [("", None, "virtual_link"), ("", "relaxed_qp", "relaxed_qp"), ("penalty_volume", "relaxed_qp", "penalty_volume"),
     ("virtual_link", "penalty_volume", "virtual_link")],
)
def test_the_contact_method_parameter_overrides_the_world_file(tmp_path, parameter, world_method, expected):
    text = (REPO_WORLDS / "box_push.yaml").read_text()
    if world_method is not None:
        text = f"contact_method: {world_method}\n" + text
    path = tmp_path / "world.yaml"
    path.write_text(text)
    p = validate_parameters({"world": str(path), "contact_method": parameter})
    world = load_world_file(p)
    model, _ = load_robot(p, world)
    sim = make_simulator(p, model, _warn([]), world)
    assert sim.contact_method == expected


def test_an_unknown_contact_method_parameter_is_refused_listing_the_methods():
    with pytest.raises(ValueError, match="relaxed_qp"):
        validate_parameters({"contact_method": "soft"})
