"""Cost of one WalkingController tick, closed in-process around the Simulator.

The bundled humanoid stands ("stand" pose, 1 ms physics step), is commanded to walk
forward at the configured speed, and the controller runs every ``control_dt`` as in
the ROS nodes. Only ``WalkingController.update`` is timed (time.perf_counter); the
physics step is timed separately for comparison. Printed: median / mean / 90th percentile
tick cost [ms], the budget share at the control rate, the physics step cost, the tick's thread CPU time (wall time minus preemption on a loaded
machine) and, with
--profile, the top of a cProfile of the controller ticks.

Usage: python bench/controller.py [seconds=4] [--vx=walk_speed of config/walking.yaml] [--profile]
(source scripts/env.sh first: OPENBLAS_NUM_THREADS=1 matters for the small solves).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from humanoid_sim.control import WalkingController, load_walking_config  # noqa: E402
from humanoid_sim.model.urdf_loader import load_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

SOLES = {"l_foot": "l_sole", "r_foot": "r_sole"}


def main(argv: list[str]) -> None:
    seconds = 4.0
    vx = None
    profile = False
    for arg in argv:
        if arg == "--profile":
            profile = True
        elif arg.startswith("--vx="):
            vx = float(arg.split("=", 1)[1])
        else:
            seconds = float(arg)
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    sim.reset("stand")
    config = load_walking_config(REPO / "config" / "walking.yaml")
    if vx is None:
        vx = config.walk_speed
    ctrl = WalkingController(model, config)
    ctrl.reset(sim.q, sim.v, sim.t)
    # Warm up numba and the caches outside the timed region.
    for _ in range(5):
        ctrl.update(sim.t, sim.q, sim.v)
    ctrl.reset(sim.q, sim.v, sim.t)
    ctrl.set_command(vx, 0.0, 0.0)
    every = int(round(config.control_dt / sim.config.dt))
    tick_cost, tick_cpu, step_cost = [], [], []
    profiler = cProfile.Profile() if profile else None
    contact_info = None
    tau = np.zeros(model.nj)
    for k in range(int(round(seconds / sim.config.dt))):
        if k % every == 0:
            if profiler is not None:
                profiler.enable()
            c0 = time.thread_time()
            t0 = time.perf_counter()
            tau = ctrl.update(sim.t, sim.q, sim.v, contact_info)
            tick_cost.append(time.perf_counter() - t0)
            tick_cpu.append(time.thread_time() - c0)
            if profiler is not None:
                profiler.disable()
        t0 = time.perf_counter()
        result = sim.step(tau)
        step_cost.append(time.perf_counter() - t0)
        fz = {link: 0.0 for link in SOLES}
        for c in result.contacts:
            if c.link in fz:
                fz[c.link] += float(c.wrench_world[2])
        contact_info = {SOLES[link]: f > 20.0 for link, f in fz.items()}
        if result.q[2] < 0.6:
            print(f"fell at t = {result.t:.3f} s")
            break
    ticks = np.array(tick_cost) * 1e3
    steps = np.array(step_cost) * 1e3
    rate = 1.0 / config.control_dt
    print(f"controller: {ticks.size} ticks at {rate:.0f} Hz, vx = {vx:.3f} m/s, "
          f"{sim.t:.2f} s simulated")
    print(f"  tick cost median {np.median(ticks):.3f} ms, mean {ticks.mean():.3f} ms, "
          f"p90 {np.percentile(ticks, 90):.3f} ms, max {ticks.max():.3f} ms")
    cpu = np.array(tick_cpu) * 1e3
    print(f"  tick CPU time (this thread; excludes time preempted by other processes) median "
          f"{np.median(cpu):.3f} ms, mean {cpu.mean():.3f} ms")
    print(f"  share of one core at {rate:.0f} Hz: {np.median(ticks) * rate / 1e3:.1%} (median)")
    print(f"physics step: median {np.median(steps):.3f} ms, mean {steps.mean():.3f} ms (1 ms step)")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
