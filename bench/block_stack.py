"""Seed 004's block-stack benchmark: step cost against the number of blocks, beside MuJoCo.

Stacks of N = 1, 3, 6, 13, 20 blocks of 1 m x 1 m x 2 m (standing), 1 kg each, on flat
ground, g = 9.8 m/s^2, dt = 5 ms (seed 004, Fig. 3-4; the paper gives no coordinates):
a pyramid of rows w, w - 1, ... (w the smallest width whose full pyramid holds N blocks),
filled from the bottom row up, each upper block resting half on each of the two below
it, neighbours in a row side by side 1 mm apart. Friction mu_s 0.8, mu_d 0.6 everywhere,
no restitution. Both simulators step the same stack for ``--seconds`` (10 s by default):
humanoid_sim as free objects of a world (``Simulator.from_world``), MuJoCo with one free
box body per block (timestep 5 ms, its defaults otherwise: Euler, Newton solver, pyramidal
cone, soft contacts of default solref/solimp, friction 0.8). Printed per N: mean and
median step cost [µs] of each, their ratio, and whether the stack stood (every block's
centre within ``--tolerance`` (1 cm) of its start after the run), the largest drift of a
block [m] and the deepest penetration [m] seen. The machine load is printed beside.
One row per contact method of ``--methods`` (SimulatorConfig.contact_method; MuJoCo beside
the first); with ``--largest-dt`` each row also gives the largest step among
``--dts`` [ms] at which the stack still stands (the update rate it needs: 1 / dt).

Usage: python bench/block_stack.py [--counts 1,3,6,13,20] [--seconds 10] [--tolerance 0.01]
       [--methods virtual_link,penalty_volume] [--largest-dt] [--dts 5,10,20,40]
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

from humanoid_sim.contact.environment import GroundPlane, Material  # noqa: E402
from humanoid_sim.model.robot_model import ShapeKind  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402
from humanoid_sim.world import FreeObject, Shape, World, assemble_world_model  # noqa: E402

DT = 5e-3
G = 9.8
SIZE = (1.0, 1.0, 2.0)  # [m] x, y, z: standing blocks
MASS = 1.0  # [kg]
GAP = 1e-3  # [m] between neighbours of a row
MATERIAL = Material(0.8, 0.6, 0.0)


def block_positions(n: int) -> np.ndarray:
    """Centres (n, 3) of n blocks in a pyramid (module docstring) [m]."""
    width = 1
    while width * (width + 1) // 2 < n:
        width += 1
    centres = []
    row = 0
    while len(centres) < n:
        k = width - row
        pitch = SIZE[0] + GAP
        for i in range(k):
            if len(centres) == n:
                break
            centres.append(((i - 0.5 * (k - 1)) * pitch, 0.0, SIZE[2] * (row + 0.5)))
        row += 1
    return np.array(centres)


def ours(n: int, seconds: float, method: str = "virtual_link", dt: float = DT):
    """Step costs [s], the largest drift of a block [m] and the deepest penetration [m] of
    the stack of n blocks stepped for ``seconds`` at dt [s] with the contact method."""
    shape = Shape(ShapeKind.BOX, list(SIZE))
    inertia = shape.mass_properties(mass=MASS).inertia
    start = block_positions(n)
    objects = tuple(FreeObject(f"block_{i + 1}", shape, MASS, inertia, position=p, material=MATERIAL) for i, p in enumerate(start))
    world = World(ground=GroundPlane(0.0, MATERIAL), objects=objects)
    wm = assemble_world_model(world)
    cfg = SimulatorConfig(dt=dt, gravity=np.array([0.0, 0.0, -G]), body_material=MATERIAL, contact_method=method)
    sim = Simulator.from_world(wm, config=cfg)
    steps = int(round(seconds / dt))
    costs = np.empty(steps)
    pen = 0.0
    sim.step()  # first-call costs
    sim.reset()
    for i in range(steps):
        t0 = time.perf_counter()
        r = sim.step()
        costs[i] = time.perf_counter() - t0
        pen = max(pen, r.max_penetration)
    end = np.array([r.q[o.q][:3] for o in wm.objects])
    return costs, float(np.linalg.norm(end - start, axis=1).max()), pen


def largest_dt(n: int, seconds: float, method: str, dts: list[float], tolerance: float) -> float:
    """The largest of dts [s] at which the stack of n blocks stands for ``seconds`` (nan: none)."""
    for dt in sorted(dts, reverse=True):
        try:
            _, drift, _ = ours(n, seconds, method, dt)
        except Exception:  # noqa: BLE001 -- a failed run does not stand
            continue
        if drift <= tolerance:
            return dt
    return float("nan")


def mujoco_stack(n: int, seconds: float):
    import mujoco

    start = block_positions(n)
    hx, hy, hz = (0.5 * s for s in SIZE)
    inertia = MASS / 12.0 * np.array([SIZE[1] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[2] ** 2, SIZE[0] ** 2 + SIZE[1] ** 2])
    bodies = "".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}"><freejoint/><geom type="box" size="{hx} {hy} {hz}" friction="0.8 0.005 0.0001"/>'
        f'<inertial pos="0 0 0" mass="{MASS}" diaginertia="{inertia[0]} {inertia[1]} {inertia[2]}"/></body>'
        for p in start
    )
    xml = (f'<mujoco><option timestep="{DT}" gravity="0 0 {-G}"/><worldbody>'
           f'<geom type="plane" size="0 0 1" friction="0.8 0.005 0.0001"/>{bodies}</worldbody></mujoco>')  # fmt: skip
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d)  # first-call costs
    mujoco.mj_resetData(m, d)
    steps = int(round(seconds / DT))
    costs = np.empty(steps)
    pen = 0.0
    for i in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        costs[i] = time.perf_counter() - t0
        if d.ncon:
            pen = max(pen, float(-d.contact.dist[: d.ncon].min()))
    end = d.qpos.reshape(n, 7)[:, :3]
    return costs, float(np.linalg.norm(end - start, axis=1).max()), pen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,3,6,13,20")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--methods", default="virtual_link,penalty_volume")
    parser.add_argument("--largest-dt", action="store_true")
    parser.add_argument("--dts", default="5,10,20,40", help="steps to try for --largest-dt [ms]")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    methods = args.methods.split(",")
    dts = [float(x) * 1e-3 for x in args.dts.split(",")]
    print(f"block stack: blocks 1 x 1 x 2 m, 1 kg, dt {DT * 1e3:g} ms, {args.seconds:g} s per stack ({machine_load()})")
    try:
        import mujoco

        version = mujoco.__version__
    except ImportError:
        version = None
        print("mujoco not installed: humanoid_sim alone")
    header = f"{'method':>15} {'N':>3} {'ours mean':>10} {'median':>8} {'stood':>6} {'drift [m]':>10} {'pen [m]':>9}"
    if version:
        header += f" | {'MuJoCo ' + version + ' mean':>18} {'median':>8} {'stood':>6} {'drift [m]':>10} {'pen [m]':>9} | ratio"
    if args.largest_dt:
        header += f" | {'largest dt [ms]':>15}"
    print(header + "   (costs in µs per step)")
    for method, n in [(m, n) for m in methods for n in counts]:
        costs, drift, pen = ours(n, args.seconds, method)
        line = (f"{method:>15} {n:>3} {costs.mean() * 1e6:>10.1f} {np.median(costs) * 1e6:>8.1f} "
                f"{str(drift <= args.tolerance):>6} {drift:>10.2e} {pen:>9.2e}")  # fmt: skip
        if version and method == methods[0]:
            mj, mdrift, mpen = mujoco_stack(n, args.seconds)
            line += (f" | {mj.mean() * 1e6:>18.1f} {np.median(mj) * 1e6:>8.1f} {str(mdrift <= args.tolerance):>6} "
                     f"{mdrift:>10.2e} {mpen:>9.2e} | {np.median(costs) / np.median(mj):5.1f}x")  # fmt: skip
        if args.largest_dt:
            line += f" | {largest_dt(n, args.seconds, method, dts, args.tolerance) * 1e3:>15g}"
        print(line, flush=True)
    print(f"load after: {machine_load()}")


if __name__ == "__main__":
    main()
