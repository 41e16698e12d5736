"""Contacts between two bodies on the contacts topic: both bodies named (object on object,
robot link and object), checked on real steps of worlds without spinning."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("humanoid_sim_interfaces.msg", reason="humanoid_sim_interfaces is not built (run scripts/setup.sh)")

from humanoid_sim.dynamics.kinematics import frame_placement  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.package_data import package_file  # noqa: E402
from humanoid_sim.ros.contact_states import contacts_message, contacts_message_type  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator  # noqa: E402
from humanoid_sim.world import assemble_world_model, load_world, world_from_dict  # noqa: E402


def _pairs(sim: Simulator, steps: int) -> set[tuple[str, str]]:
    types = contacts_message_type()
    pairs: set[tuple[str, str]] = set()
    for _ in range(steps):
        result = sim.step()
        msg = contacts_message(types, 0, "odom", result.contacts)
        pairs |= {(c.body_a, c.body_b) for c in msg.contacts}
    return pairs


def test_objects_touching_each_other_are_both_named():
    sim = Simulator.from_world(assemble_world_model(load_world(package_file("config/worlds/cube_stack_5.yaml"))))
    names = [o.name for o in sim.world_model.objects]
    pairs = _pairs(sim, 3)
    between = {p for p in pairs if p[0] in names and p[1] in names}
    assert len(between) == len(names) - 1  # each cube on the one below
    assert any(b == "ground" and a in names for a, b in pairs)


def test_a_ball_dropped_on_the_robot_names_the_link_and_the_ball():
    robot = load_urdf(package_file("urdf/humanoid.urdf"))
    world = world_from_dict({
        "robots": [{"name": "humanoid", "urdf": "urdf/humanoid.urdf", "initial_pose": "stand"}],
        "objects": [{"name": "ball", "shape": "sphere", "radius_m": 0.04, "mass_kg": 0.2, "position_m": [0, 0, 5.0]}],
    })  # fmt: skip
    sim = Simulator.from_world(assemble_world_model(world, robot))
    q = sim.q
    foot = frame_placement(sim.model, q, "l_foot")[:3, 3]
    ball = sim.world_model.object("ball")
    q[ball.q.start : ball.q.start + 3] = foot + np.array([0.0, 0.0, 0.25])
    sim.set_state(q, sim.v)
    pairs = _pairs(sim, 300)
    robot_links = set(robot.body_names)
    with_ball = {p for p in pairs if "ball" in p}
    assert with_ball, pairs
    assert all((a in robot_links and b == "ball") or (a == "ball" and b in robot_links | {"ground"}) for a, b in with_ball)
    assert any(a in robot_links or b in robot_links for a, b in with_ball)
