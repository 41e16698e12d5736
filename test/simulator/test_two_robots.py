"""Two humanoids in one world: each stands on its own feet, and they collide with each other.

Truths: a robot at rest carries its weight on its own soles (Σ f_z = m g, no slip); two
robots' links touching are a contact between two bodies (a wrench on a link of each robot)
that neither sinks in (penetration within the step's tolerance) nor lets a link pass
through the other robot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from humanoid_sim.control.holding_controller import HoldingController
from humanoid_sim.dynamics.kinematics import frame_placement
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.world import assemble_world_model, world_from_dict

REPO = Path(__file__).resolve().parents[2]
ENTRY = {"urdf": "urdf/humanoid.urdf", "initial_pose": "stand"}


def _two_humanoids(distance: float):
    """Two humanoids facing each other along x, ``distance`` [m] between their bases."""
    world = world_from_dict({"robots": [
        {"name": "humanoid", **ENTRY, "base_position_m": [-0.5 * distance, 0.0]},
        {"name": "partner", **ENTRY, "base_position_m": [0.5 * distance, 0.0], "base_rpy_deg": [0, 0, 180]},
    ]})  # fmt: skip
    wm = assemble_world_model(world, load_urdf(REPO / "urdf" / "humanoid.urdf"))
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=1e-3))
    controllers = []
    for tree in wm.robots:
        c = HoldingController(tree.model)
        c.reset(sim.q[tree.q])
        controllers.append(c)
    return wm, sim, controllers


def _torques(wm, sim, controllers) -> np.ndarray:
    q, v = sim.q, sim.v
    return np.concatenate([c.update(sim.t, q[t.q], v[t.v]) for c, t in zip(controllers, wm.robots)])


def test_two_humanoids_one_metre_apart_both_stand():
    wm, sim, controllers = _two_humanoids(1.0)
    soles = [(t, [f"{t.prefix}l_sole", f"{t.prefix}r_sole"]) for t in wm.robots]
    start = {f: frame_placement(wm.model, sim.q, f)[:3, 3] for _, feet in soles for f in feet}
    feet_bodies = [{wm.model.frame(f).body for f in feet} for _, feet in soles]
    robot_of_body = wm.robot_of_body
    slip, fz_error = 0.0, [0.0, 0.0]
    steps = 1000
    for i in range(steps):
        r = sim.step(_torques(wm, sim, controllers))
        assert {c.body for c in r.contacts} == feet_bodies[0] | feet_bodies[1], f"step {i}"
        assert all(c.other_body == -1 for c in r.contacts)  # the ground only
        assert r.max_penetration <= 1e-4
        if i >= steps - 300:  # settled: each robot's feet carry its weight
            for k, tree in enumerate(wm.robots):
                fz = sum(c.wrench_world[2] for c in r.contacts if robot_of_body[c.body] == k)
                mg = tree.model.total_mass * 9.81
                fz_error[k] = max(fz_error[k], abs(fz - mg) / mg)
    for f, p0 in start.items():
        slip = max(slip, float(np.linalg.norm((frame_placement(wm.model, sim.q, f)[:3, 3] - p0)[:2])))
    assert slip < 1e-6, slip
    assert max(fz_error) < 1e-3, fz_error


def test_a_humanoid_pushed_into_the_other_touches_it_and_does_not_pass_through():
    # facing each other with their chests 0.45 m apart: the first is pushed at the chest
    # towards the second (60 N from 0.1 s on) and moves onto it: head on head, then chest on
    # chest and forearm on forearm, the second pushed back
    wm, sim, controllers = _two_humanoids(0.45)
    robot_of_body = wm.robot_of_body
    push = {"chest": np.array([60.0, 0.0, 0.0, 0.0, 0.0, 0.0])}
    touching, max_penetration = 0, 0.0
    for i in range(1600):
        r = sim.step(_torques(wm, sim, controllers), link_wrenches=push if i >= 100 else None)
        between = [c for c in r.contacts if c.other_body >= 0 and robot_of_body[c.body] != robot_of_body[c.other_body]]
        if between:
            touching += 1
            max_penetration = max(max_penetration, r.max_penetration)
            for c in between:
                # the wrench acts on a link of one robot, the opposite one on a link of the other
                assert {robot_of_body[c.body], robot_of_body[c.other_body]} == {0, 1}
                assert c.link in wm.model.body_names and c.element == wm.model.body_names[c.other_body]
        chest_a = frame_placement(wm.model, r.q, "chest")[:3, 3]
        chest_b = frame_placement(wm.model, r.q, "partner/chest")[:3, 3]
        assert chest_a[0] < chest_b[0], f"step {i}: the chest passed through the other robot"
    assert touching > 100, touching
    assert max_penetration <= 1e-3, max_penetration
