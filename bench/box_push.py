"""The walking humanoid pushes a 10 kg crate with its forearms (config/worlds/crate_push.yaml)
and the crate slides on the ground with friction mu_d f_z.

The scene (the choices, and why):
- the crate: 10 kg, 1.2 m deep, 0.6 m wide, 1.3 m tall (a large, light packing crate) with
  its near face 0.56 m in front of the pelvis. Tall, so the forearms of the robot reaching
  forward (about 1.1 m above the ground, 0.55 m ahead of the pelvis) meet it, never the
  shins or the feet; deep, so a push at that height slides it rather than tipping it over
  its front edge (a uniform box pushed at height h slides while mu h < depth / 2);
- the floor: smooth, mu_s 0.4, mu_d 0.3 (the crate's ground contacts and the robot's feet
  take the ground's material): the crate slides against mu_d m g = 29 N. The walking
  controller takes that at 0.1 m/s, and 34 N at mu_d 0.35; at mu_d 0.4 (39 N), or walking at
  0.13 m/s, the robot falls backwards within half a second of meeting the crate (``--mu-d``,
  ``--speed``): the first contact is the hard part, a robot that came through it pushes on
  for as long as it is asked (20 s, 1.7 m);
- the forearms against the crate: frictionless (SimulatorConfig.body_material mu 0,
  averaged with the crate faces' 0), so the robot's lateral sway slides its forearms along
  the crate's face instead of twisting the crate, and the push on the vertical face is
  horizontal: the ground carries the crate's weight alone (with gloves of mu 0.1 the
  forearms' friction took 2 % of it on average, and the friction then was 0.98 mu_d m g).

The controller: the walking controller (config/walking.yaml) with
- the arms reaching forward (``REACH``: WalkingConfig.joint_posture, shoulders pitched
  forward 0.8 rad, elbows bent 0.6 rad; the robot raises them while standing);
- the measured reaction of the crate on the forearms (the wrenches of the robot–crate
  contacts of the previous physics step, as wrist force sensors would measure them) passed
  to WalkingController.update's ``external_wrenches``: the CoM leans into the ZMP shift
  they cause (h f / (m g): about 5 cm for 29 N at 1.1 m), filtered over
  ``external_wrench_lean_time`` (0.3 s), so the centre of pressure stays on the footstep
  plan, and their part on the floating base joins the whole-body dynamics, so the planned
  foot wrenches carry the push. Without it (``--no-feedforward``) the robot falls backwards
  within a second of meeting the crate.
It walks forward at ``--speed`` m/s from 0.2 s (the first step 1.6 s later), its forearms
meet the crate during the first step and it pushes the crate along, step by step.

Printed: how far the crate slid; which robot links touched it; the steps in which it slid
flat (all its ground contacts slipping at > 1 cm/s on this step and the one before, a
surface contact without an impact impulse) and over those the ground's tangential force on
the crate divided by mu_d times the ground's normal force on it (1 by the method), the
normal force against m g (the forearms' push adds or takes a vertical part), and the cosine
between the friction and the crate's slip velocity at the contact's centre; the other slipping steps (the first of a
slide, the crate rocking on an edge or a corner after the forearms' impact or landing back
flat with an impulse) with their ratio; whether the robot stayed up (pelvis above 0.6 m,
only its feet on the ground); the step cost (simulator and controller, median per physics
step) beside the machine's load.

Usage: python bench/box_push.py [--seconds 12] [--speed 0.1] [--mu-d MU] [--lean-time S]
       [--no-feedforward] [--self-collision]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import machine_load  # noqa: E402

from humanoid_sim.contact.environment import Material  # noqa: E402
from humanoid_sim.contact.virtual_link import ContactKind  # noqa: E402
from humanoid_sim.control import ExternalWrench, WalkingController, load_walking_config  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402
from humanoid_sim.world import assemble_world_model, load_world  # noqa: E402
from humanoid_sim.world.assembly import load_world_robot  # noqa: E402

G = 9.81
FOREARMS = Material(0.0, 0.0, 0.0)  # the robot's links against the crate: frictionless (mean with the crate's)
SLIDING = 0.01  # [m/s] crate speed above which its slipping ground contacts count as sliding
FEET = ("l_foot", "r_foot")
PELVIS_MIN = 0.6  # [m] pelvis height below which the robot counts as fallen
# Arms reaching forward to push [rad]: forearms about 1.15 m above the ground, 0.53 m ahead.
REACH = {"l_shoulder_pitch": -0.8, "r_shoulder_pitch": -0.8, "l_shoulder_roll": 0.0, "r_shoulder_roll": 0.0,
         "l_elbow_pitch": -0.6, "r_elbow_pitch": -0.6}


def slip_velocity(q: np.ndarray, v: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Horizontal velocity (2,) [m/s], world axes, of the free body's material point at ``point``
    (world [m]) from its q (position, quaternion x y z w) and twist v (body axes)."""
    R = Rotation.from_quat(q[3:7]).as_matrix()
    return (R @ v[:3] + np.cross(R @ v[3:], point - q[:3]))[:2]


def robot_crate_wrenches(contacts, robot_nb: int, crate_body: int) -> list[ExternalWrench]:
    """The crate's wrenches on the robot's links from a step's contact reports (the wrench of
    a two-body contact acts on ``body``, its opposite on ``other_body``), at the contact
    origins, world axes."""
    out = []
    for c in contacts:
        if c.other_body == crate_body and c.body < robot_nb:
            out.append(ExternalWrench(c.link, c.origin, c.wrench_world))
        elif c.body == crate_body and 0 <= c.other_body < robot_nb:
            out.append(ExternalWrench(c.element, c.origin, -c.wrench_world))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--speed", type=float, default=0.1)
    parser.add_argument("--mu-d", type=float, default=None, help="the ground's mu_d (and mu_s = mu_d + 0.1)")
    parser.add_argument("--lean-time", type=float, default=None, help="WalkingConfig.external_wrench_lean_time [s]")
    parser.add_argument("--no-feedforward", action="store_true", help="do not feed the crate's reaction forward")
    parser.add_argument("--self-collision", action="store_true")
    args = parser.parse_args()
    world = load_world(REPO / "config" / "worlds" / "crate_push.yaml")
    if args.mu_d is not None:
        ground = dataclasses.replace(world.ground, material=Material(args.mu_d + 0.1, args.mu_d, 0.0))
        world = dataclasses.replace(world, ground=ground)
    wm = assemble_world_model(world, load_world_robot(world))
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=1e-3, self_collision=args.self_collision,
                                                          body_material=FOREARMS))
    crate = wm.object("crate")
    mass, mu_d = crate.description.mass, world.ground.material.mu_d
    config = dataclasses.replace(load_walking_config(REPO / "config" / "walking.yaml"), joint_posture=REACH)
    if args.lean_time is not None:
        config = dataclasses.replace(config, external_wrench_lean_time=args.lean_time)
    ctrl = WalkingController(wm.robot, config)
    nq, nv = wm.robot_nq, wm.robot_nv
    ctrl.reset(sim.q[:nq], sim.v[:nv], sim.t)
    every = int(round(config.control_dt / sim.config.dt))
    tau = np.zeros(wm.robot.nj)
    start = sim.q[crate.q][:3].copy()
    ratios, normals, opposing, others, cost = [], [], [], [], []
    was_sliding = False
    fell = None
    contact_info, pushing = None, []
    touched: set[str] = set()
    for k in range(int(round(args.seconds / sim.config.dt))):
        if k == 200:
            ctrl.set_command(args.speed, 0.0, 0.0)
        t0 = time.perf_counter()
        if k % every == 0:
            tau = ctrl.update(sim.t, sim.q[:nq], sim.v[:nv], contact_info,
                              None if args.no_feedforward else pushing)
        r = sim.step(tau)
        cost.append(time.perf_counter() - t0)
        fz = {f: 0.0 for f in FEET}
        ground = [c for c in r.contacts if c.link == "crate" and c.other_body < 0]
        for c in r.contacts:
            if c.link in fz and c.other_body < 0:
                fz[c.link] += float(c.wrench_world[2])
            elif c.body < wm.robot_nb and c.other_body < 0 and c.link not in fz:
                fell = fell or f"{c.link} touched the ground at t = {r.t:.3f} s"
        pushing = robot_crate_wrenches(r.contacts, wm.robot_nb, crate.body)
        touched.update(w.link for w in pushing)
        contact_info = {"l_sole": fz["l_foot"] > 20.0, "r_sole": fz["r_foot"] > 20.0}
        if r.q[2] < PELVIS_MIN:
            fell = fell or f"pelvis at {r.q[2]:.3f} m at t = {r.t:.3f} s"
        velocity = slip_velocity(r.q[crate.q], r.v[crate.v], ground[0].origin if ground else r.q[crate.q][:3])
        sliding = bool(ground) and not any(c.sticking for c in ground) and np.linalg.norm(velocity) > SLIDING
        if sliding:
            f = sum(c.wrench_world[:3] for c in ground)
            ratio = np.linalg.norm(f[:2]) / (mu_d * f[2])
            if was_sliding and all(c.kind == ContactKind.SURFACE and c.impulse_local[2] == 0.0 for c in ground):
                ratios.append(ratio)
                normals.append(f[2] / (mass * G))
                opposing.append(float(f[:2] @ velocity) / (np.linalg.norm(f[:2]) * np.linalg.norm(velocity)))
            else:
                others.append(ratio)
        was_sliding = sliding
        if fell:
            break
    slid = np.linalg.norm((sim.q[crate.q][:3] - start)[:2])
    print(f"box push: walking at {args.speed} m/s into a {mass:g} kg crate (ground mu_d {mu_d}), "
          f"{r.t:.2f} s simulated, feed-forward {'off' if args.no_feedforward else 'on'} ({machine_load()})")
    print(f"  the crate slid {slid:.3f} m; robot links that touched it: {', '.join(sorted(touched)) or 'none'}")
    print(f"  it slid flat on {len(ratios)} steps (all its ground contacts slipping at > {SLIDING} m/s on this "
          f"step and the one before, a surface contact without an impact impulse)")
    if ratios:
        ratios, normals = np.array(ratios), np.array(normals)
        print(f"  ground friction on the crate / (mu_d f_z): min {ratios.min():.6f}, max {ratios.max():.6f}")
        print(f"  ground normal force / (m g): min {normals.min():.4f}, max {normals.max():.4f}, mean {normals.mean():.4f}")
        print(f"  friction / (mu_d m g): mean {np.mean(ratios * normals):.4f}; cosine of friction and slip velocity: "
              f"max {max(opposing):.6f} (-1: opposed)")
    if others:
        print(f"  other slipping steps (the first of a slide, the crate rocking on an edge or a corner after the "
              f"forearms' impact, or landing back flat with an impulse): {len(others)}, friction / (mu_d f_z) from "
              f"{min(others):.4f} to {max(others):.4f}")
    print(f"  robot: {'fell: ' + fell if fell else 'stayed up'} (pelvis {r.q[2]:.3f} m); "
          f"step cost median {np.median(cost) * 1e6:.0f} µs (simulator + controller)")


if __name__ == "__main__":
    main()
