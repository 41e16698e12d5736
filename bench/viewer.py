"""Cost of the browser view to the simulation loop at 1 kHz physics.

One process, one simulator: the bundled humanoid standing (the "stand" pose, the bundled
environment, dt = 1 ms) under the holding controller. The same loop (controller, step) runs
in alternating rounds without the view and with it (``viewer.update(result)`` after every
step, playback "fast", so the view never holds the loop), the state reset to the same start
before each round. With the view, a client is connected: a separate process that receives
every message over the websocket as a browser does (without drawing), so the server's
encoding and sending count; a browser's own rendering runs in its own processes.

Two ways, each printed with the machine's load:
  real time: the loop held to 1 kHz (1 ms of simulated time per ms of wall time), the way
      the node's realtime mode runs. The cost is the view's extra CPU time (every thread of
      the process: the sender, viser's server) per second, as a share of the loop's
      real-time budget (1 s per s); also the share of the loop's own CPU time. CPU times do
      not depend on what else the machine runs.
  as fast as possible: time per step without and with the view (wall: noisy under load;
      CPU of the whole process). The view draws a fixed number of frames per wall second,
      so its share of the run falls as the loop gets faster.

Usage: python bench/viewer.py [rounds=6] [steps_per_round=3000]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from humanoid_sim.contact import load_environment  # noqa: E402
from humanoid_sim.control.holding_controller import HoldingController  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.simulator import Simulator, SimulatorConfig  # noqa: E402
from humanoid_sim.viewer import Viewer, ViewerConfig  # noqa: E402

URDF = REPO / "urdf" / "humanoid.urdf"
DT = 1e-3  # [s] physics step: 1 kHz
CLIENT = """
import sys, time
import viser
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect
with connect(sys.argv[1], subprotocols=[f"viser-v{viser.__version__}"], max_size=None) as ws:
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline:
        try:
            ws.recv(timeout=1.0)
        except TimeoutError:
            pass
        except ConnectionClosed:
            break
"""


def run_round(
    sim: Simulator, controller: HoldingController, q0: np.ndarray, steps: int, viewer: Viewer | None,
    real_time: bool = False,
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process: every thread) per step of one round from
    q0; real_time: each step waits for its millisecond of wall time."""
    sim.set_state(q0, np.zeros(sim.model.nv))
    controller.reset(q0)
    wall, cpu = time.perf_counter(), time.process_time()
    for k in range(steps):
        result = sim.step(controller.update(sim.t, sim.q, sim.v))
        if viewer is not None:
            viewer.update(result)
        ahead = wall + (k + 1) * DT - time.perf_counter()
        if real_time and ahead > 0.0:
            time.sleep(ahead)
    return (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps


def main(rounds: int = 6, steps: int = 3000) -> None:
    model = load_urdf(str(URDF))
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=load_environment(REPO / "config" / "environment.yaml")))
    q0 = sim.reset("stand")
    controller = HoldingController(model)
    controller.reset(q0)
    run_round(sim, controller, q0, 500, None)  # kernels loaded, caches warm
    viewer = Viewer(sim, URDF, ViewerConfig(port=0, playback="fast"))
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, viewer.url.replace("http://", "ws://"), str(3600)],
        stdout=subprocess.PIPE, text=True,
    )
    time.sleep(3.0)  # the client connects and takes the scene
    without, with_view, rt_without, rt_with = [], [], [], []
    try:
        for _ in range(rounds):
            rt_without.append(run_round(sim, controller, q0, steps, None, real_time=True)[1] / DT)  # CPU s per s
            rt_with.append(run_round(sim, controller, q0, steps, viewer, real_time=True)[1] / DT)
        load_rt = os.getloadavg()
        for _ in range(rounds):
            without.append(run_round(sim, controller, q0, steps, None))
            with_view.append(run_round(sim, controller, q0, steps, viewer))
    finally:
        viewer.close()
        client.terminate()
        client.wait()
    load = os.getloadavg()
    fps = viewer.config.fps
    print(f"bench/viewer.py: {rounds} rounds x {steps} steps of {1e3 * DT:g} ms each way, alternating (bundled"
          f" humanoid standing, holding controller); the view draws {fps:g} frames per s to one websocket client")
    cpu_off, cpu_on = np.median(rt_without), np.median(rt_with)
    extra = np.median(np.array(rt_with) - np.array(rt_without))
    print(f"  real time (1 kHz): process CPU {1e3 * cpu_off:6.1f} ms per s without the view, {1e3 * cpu_on:6.1f} ms"
          f" per s with it")
    print(f"    cost of the view: {100.0 * extra:.1f} % of the loop's real-time budget"
          f" ({100.0 * extra / cpu_off:.0f} % of the loop's own CPU time); load average"
          f" {load_rt[0]:.2f} {load_rt[1]:.2f} {load_rt[2]:.2f} on {os.cpu_count()} CPUs")
    a, b = np.array(without), np.array(with_view)  # (rounds, [wall, cpu]) seconds per step
    wall_ratio, cpu_ratio = b[:, 0] / a[:, 0] - 1.0, b[:, 1] / a[:, 1] - 1.0
    print(f"  as fast as possible: {1e6 * np.median(a[:, 0]):6.1f} us wall, {1e6 * np.median(a[:, 1]):6.1f} us CPU per"
          f" step without the view; {1e6 * np.median(b[:, 0]):6.1f} us wall, {1e6 * np.median(b[:, 1]):6.1f} us CPU"
          " with it")
    print(f"    cost of the view: {100.0 * np.median(wall_ratio):+.1f} % wall, {100.0 * np.median(cpu_ratio):+.1f} % CPU"
          f" (medians of the rounds' ratios; CPU per round {', '.join(f'{100 * r:+.0f}' for r in cpu_ratio)} %);"
          f" load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
