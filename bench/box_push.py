"""The walking humanoid pushes a 10 kg crate (config/worlds/box_push.yaml) and the crate
slides on the ground with friction mu_d m g.

The world: the bundled humanoid standing at the origin facing +x, a 10 kg crate (0.4 x
0.6 x 0.5 m, mu_s 0.6, mu_d 0.5 against the ground) 0.6 m in front of it. The walking
controller (config/walking.yaml) is asked to walk forward at ``--speed`` m/s from 0.2 s;
the robot's legs meet the crate and push it. Printed: how far the crate slid, the steps
of the run in which it slid (its ground contacts slipping), and over those steps the
ground's friction force on the crate against mu_d m g (the issue's "the box slides with
friction mu_d m g (± 1 %)": the friction of a slipping contact is mu_d f_z by the method;
the normal force differs from m g by what the robot's push adds or takes vertically:
both printed), whether the robot stayed up (pelvis above 0.6 m, only its feet on the
ground), and the step cost.

Usage: python bench/box_push.py [--seconds 12] [--speed 0.2] [--self-collision]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import machine_load  # noqa: E402

from humanoid_sim.control import WalkingController, load_walking_config  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402
from humanoid_sim.world import assemble_world_model, load_world  # noqa: E402
from humanoid_sim.world.assembly import load_world_robot  # noqa: E402

G = 9.81
FEET = ("l_foot", "r_foot")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--speed", type=float, default=0.2)
    parser.add_argument("--self-collision", action="store_true")
    args = parser.parse_args()
    world = load_world(REPO / "config" / "worlds" / "box_push.yaml")
    wm = assemble_world_model(world, load_world_robot(world))
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=1e-3, self_collision=args.self_collision))
    crate = wm.object("crate")
    mass, mu_d = crate.description.mass, world.ground.material.mu_d
    robot = wm.robot
    config = load_walking_config(REPO / "config" / "walking.yaml")
    ctrl = WalkingController(robot, config)
    nq, nv = wm.robot_nq, wm.robot_nv
    ctrl.reset(sim.q[:nq], sim.v[:nv], sim.t)
    every = int(round(config.control_dt / sim.config.dt))
    tau = np.zeros(robot.nj)
    start = sim.q[crate.q][:3].copy()
    ratios, normals, cost = [], [], []
    fell = None
    contact_info = None
    for k in range(int(round(args.seconds / sim.config.dt))):
        if k == 200:
            ctrl.set_command(args.speed, 0.0, 0.0)
        if k % every == 0:
            tau = ctrl.update(sim.t, sim.q[:nq], sim.v[:nv], contact_info)
        t0 = time.perf_counter()
        r = sim.step(tau)
        cost.append(time.perf_counter() - t0)
        fz = {f: 0.0 for f in FEET}
        ground = [c for c in r.contacts if c.link == "crate" and c.other_body < 0]
        for c in r.contacts:
            if c.link in fz and c.other_body < 0:
                fz[c.link] += float(c.wrench_world[2])
            elif c.body < wm.robot_nb and c.other_body < 0 and c.link not in fz:
                fell = fell or f"{c.link} touched the ground at t = {r.t:.3f} s"
        contact_info = {"l_sole": fz["l_foot"] > 20.0, "r_sole": fz["r_foot"] > 20.0}
        if r.q[2] < 0.6:
            fell = fell or f"pelvis at {r.q[2]:.3f} m at t = {r.t:.3f} s"
        if ground and not any(c.sticking for c in ground):
            f = sum(c.wrench_world[:3] for c in ground)
            ratios.append(np.linalg.norm(f[:2]) / (mu_d * f[2]))
            normals.append(f[2] / (mass * G))
        if fell:
            break
    slid = np.linalg.norm((sim.q[crate.q][:3] - start)[:2])
    print(f"box push: walking at {args.speed} m/s into a {mass:g} kg crate (mu_d {mu_d}), {r.t:.2f} s simulated "
          f"({machine_load()})")
    print(f"  the crate slid {slid:.3f} m; it slipped on {len(ratios)} steps")
    if ratios:
        ratios, normals = np.array(ratios), np.array(normals)
        print(f"  ground friction on the crate / (mu_d f_z): min {ratios.min():.6f}, max {ratios.max():.6f}")
        print(f"  ground normal force / (m g): min {normals.min():.4f}, max {normals.max():.4f}, mean {normals.mean():.4f}")
        print(f"  friction / (mu_d m g): mean {np.mean(ratios * normals):.4f}")
    print(f"  robot: {'fell: ' + fell if fell else 'stayed up'}; step cost median {np.median(cost) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
