"""The walking controller's robot walks into a 10 kg crate and pushes it along with its
forearms (config/worlds/crate_push.yaml; bench/box_push.py prints the figures).

The robot reaches forward (WalkingConfig.joint_posture) and walks at 0.1 m/s; the crate's
reaction on its forearms, read from the step's contact reports, is fed forward
(WalkingController.update's external_wrenches) so the CoM leans into the push. Asserted on
the simulator's own outputs: the robot stays up (pelvis above 0.6 m, only its feet on the
ground, no link but the forearms touching the crate), the crate slides >= 0.3 m, and on the
steps it slides flat (its ground contact a slipping surface on this step and the one
before, no impact impulse) the ground's friction on it is mu_d times the ground's normal
force to 1 % and opposes the slip velocity of the crate at the contact's centre (cosine < -0.95);
the forearms are frictionless, so over the slide that normal force is the crate's weight m g
(mean to 1 %): the crate slides against mu_d m g.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from humanoid_sim.contact import ContactKind, Material
from humanoid_sim.control import ExternalWrench, WalkingController, load_walking_config
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig
from humanoid_sim.world import assemble_world_model, load_world
from humanoid_sim.world.assembly import load_world_robot

ROOT = Path(__file__).resolve().parents[2]
REACH = {"l_shoulder_pitch": -0.8, "r_shoulder_pitch": -0.8, "l_shoulder_roll": 0.0, "r_shoulder_roll": 0.0,
         "l_elbow_pitch": -0.6, "r_elbow_pitch": -0.6}
FOREARMS = ("l_lower_arm", "r_lower_arm")
FEET = ("l_foot", "r_foot")


def slip_velocity(q: np.ndarray, v: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Horizontal velocity (2,) [m/s], world axes, of the free body's material point at ``point``
    (world [m]) from its q (position, quaternion x y z w) and twist v (body axes)."""
    R = Rotation.from_quat(q[3:7]).as_matrix()
    return (R @ v[:3] + np.cross(R @ v[3:], point - q[:3]))[:2]


def test_walking_robot_pushes_a_crate_that_slides_with_dynamic_friction():
    world = load_world(ROOT / "config" / "worlds" / "crate_push.yaml")
    wm = assemble_world_model(world, load_world_robot(world))
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=1e-3, body_material=Material(0.0, 0.0, 0.0)))
    crate = wm.object("crate")
    mu_d = world.ground.material.mu_d
    config = dataclasses.replace(load_walking_config(ROOT / "config" / "walking.yaml"), joint_posture=REACH)
    ctrl = WalkingController(wm.robot, config)
    nq, nv = wm.robot_nq, wm.robot_nv
    ctrl.reset(sim.q[:nq], sim.v[:nv], sim.t)
    every = int(round(config.control_dt / sim.config.dt))
    start = sim.q[crate.q][:2].copy()
    tau, contact_info, pushing = np.zeros(wm.robot.nj), None, []
    ratios, cosines, weights, pelvis_min = [], [], [], np.inf
    touched, grounded = set(), set()
    was_sliding = False
    for k in range(12000):
        if k == 200:
            ctrl.set_command(0.1, 0.0, 0.0)
        if k % every == 0:
            tau = ctrl.update(sim.t, sim.q[:nq], sim.v[:nv], contact_info, pushing)
        r = sim.step(tau)
        pelvis_min = min(pelvis_min, float(r.q[2]))
        fz = dict.fromkeys(FEET, 0.0)
        pushing = []
        for c in r.contacts:
            if c.body < wm.robot_nb and c.other_body < 0:
                grounded.add(c.link)
                if c.link in fz:
                    fz[c.link] += float(c.wrench_world[2])
            elif c.body == crate.body and 0 <= c.other_body < wm.robot_nb:
                touched.add(c.element)
                pushing.append(ExternalWrench(c.element, c.origin, -c.wrench_world))
            elif c.other_body == crate.body and c.body < wm.robot_nb:
                touched.add(c.link)
                pushing.append(ExternalWrench(c.link, c.origin, c.wrench_world))
        contact_info = {"l_sole": fz["l_foot"] > 20.0, "r_sole": fz["r_foot"] > 20.0}
        ground = [c for c in r.contacts if c.body == crate.body and c.other_body < 0]
        velocity = slip_velocity(r.q[crate.q], r.v[crate.v], ground[0].origin if ground else r.q[crate.q][:3])
        sliding = bool(ground) and not any(c.sticking for c in ground) and np.linalg.norm(velocity) > 0.01
        if sliding and was_sliding and all(c.kind == ContactKind.SURFACE and c.impulse_local[2] == 0.0
                                           for c in ground):
            f = sum(c.wrench_world[:3] for c in ground)
            ratios.append(np.linalg.norm(f[:2]) / (mu_d * f[2]))
            weights.append(f[2] / (crate.description.mass * np.linalg.norm(wm.model.gravity)))
            cosines.append(float(f[:2] @ velocity) / (np.linalg.norm(f[:2]) * np.linalg.norm(velocity)))
        was_sliding = sliding
        if r.q[2] < 0.6 or grounded - set(FEET):
            break
    assert pelvis_min > 0.6 and grounded <= set(FEET), (pelvis_min, grounded)
    assert touched and touched <= set(FOREARMS), touched
    assert np.linalg.norm(sim.q[crate.q][:2] - start) >= 0.3
    assert len(ratios) > 1000
    ratios = np.array(ratios)
    assert np.all(np.abs(ratios - 1.0) <= 0.01), (ratios.min(), ratios.max())
    # frictionless forearms push the vertical face horizontally: over the slide the ground
    # carries the crate's weight, so the friction is mu_d m g
    assert abs(np.mean(weights) - 1.0) <= 0.01, np.mean(weights)
    assert max(cosines) < -0.95  # opposed (a spinning surface contact turns the resultant a little)
