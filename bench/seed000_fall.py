"""Seed 000 (virtual-link contacts), a passive fall: the bundled humanoid released from
"stand" with zero joint torque on flat ground (mu_s 1.0, mu_d 0.8, no restitution),
dt = 1 ms, over time.

Printed every 0.1 s: the base (pelvis) height [m], kinetic, potential and total energy
(T = 1/2 v^T (M + diag(armature)) v, U = -m g . c; bench/mechanics.py) [J], the contacts
(count, and the links touching), the ground reaction Σ f_z / (m g) (impulses included) and
what was integrated (seed 000's checked solve, or the bounded solve that replaces a solve
failing its checks). Two runs: with the node's ranges of motion (config/range_of_motion.yaml
through the RangeOfMotionProvider: joint stops), the table printed; and a plain
``Simulator`` (no joint-limit rows: joints pass their limits), its summary only. Then: the largest one-step rise of T + U [J] (no torque acts: any rise
is energy the step made), the deepest penetration [m], when the robot came to rest
(T < 1e-3 J), the step cost (mean, median [µs]) with the machine load.

The walk of the paper's Fig. 4 (28-DOF figure walking) is test/control/test_walking_in_simulator.py
(the walking controller closed around the simulator) and scripts/demo.sh (over ROS 2,
reports/walk_report.png); the cost per step beside MuJoCo is bench/step.py.

Usage: python bench/seed000_fall.py [seconds=3]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import MechanicsMeter, machine_load  # noqa: E402

from humanoid_sim import package_file  # noqa: E402
from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

DT = 1e-3


def run(seconds: float, stops: bool, table: bool) -> None:
    model = load_urdf(package_file("urdf/humanoid.urdf"))
    providers = []
    if stops:
        providers = [RangeOfMotionProvider(model, load_range_of_motion(package_file("config/range_of_motion.yaml")))]
    sim = Simulator(model, SimulatorConfig(dt=DT), providers=providers)
    sim.reset("stand")
    for _ in range(5):  # first calls: untimed
        sim.step()
    sim.reset("stand")
    meter = MechanicsMeter(model, sim.armature)
    mg = model.total_mass * float(np.linalg.norm(model.gravity))
    prev = meter(sim.q, sim.v).total
    what = "with the node's ranges of motion (joint stops)" if stops else "plain Simulator (no joint stops)"
    print(f"\nseed 000 passive fall, {what}: bundled humanoid ({model.nj} joints, {model.total_mass:.1f} kg) from "
          f"\"stand\", zero torque, dt = {DT * 1e3:g} ms, {seconds:g} s ({machine_load()})")  # fmt: skip
    if table:
        print(f"{'t [s]':>6} {'base z':>7} {'T [J]':>8} {'U [J]':>8} {'T+U [J]':>8} {'n':>3} {'Σfz/mg':>7} {'solver':>8}  links touching")
    costs = []
    gain, gain_t, pen, rest = 0.0, 0.0, 0.0, None
    every = int(round(0.1 / DT))
    bounded = 0
    for i in range(int(round(seconds / DT))):
        t0 = time.perf_counter()
        r = sim.step()
        costs.append(time.perf_counter() - t0)
        s = meter(r.q, r.v)
        if s.total - prev > gain:
            gain, gain_t = s.total - prev, r.t
        prev = s.total
        pen = max(pen, r.max_penetration)
        bounded += r.solver == "bounded"
        if rest is None and r.t > 0.5 and s.kinetic < 1e-3:
            rest = r.t
        if table and (i + 1) % every == 0:
            fz = sum(float(c.wrench_world[2]) for c in r.contacts if c.other_body < 0)
            links = sorted({c.link for c in r.contacts})
            print(f"{r.t:6.2f} {r.q[2]:7.3f} {s.kinetic:8.3f} {s.potential:8.2f} {s.total:8.2f} {len(r.contacts):3d} "
                  f"{fz / mg:7.2f} {r.solver:>8}  {', '.join(links)}")  # fmt: skip
    costs = np.asarray(costs)
    fastest = np.argsort(-np.abs(r.v[6:]))[:2]
    print(f"largest one-step rise of T + U: {gain:.2e} J (t = {gain_t:.3f} s); deepest penetration {pen * 1e3:.2f} mm; "
          f"at rest (T < 1e-3 J) from t = {'never' if rest is None else f'{rest:.3f} s'}; T at the end {s.kinetic:.3f} J, "
          f"fastest joints then {', '.join(f'{model.joint_names[j]} {r.v[6 + j]:+.2f} rad/s' for j in fastest)}; "
          f"bounded solve {bounded}/{len(costs)} steps")  # fmt: skip
    print(f"step cost mean {costs.mean() * 1e6:.0f} µs, median {np.median(costs) * 1e6:.0f} µs ({machine_load()}); "
          "paper: about 30 ms per step including collision detection (Alpha 21264, 500 MHz, 2000)")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    run(seconds, stops=True, table=True)
    run(seconds, stops=False, table=False)


if __name__ == "__main__":
    main()
