"""Seed 004 (haptic-rate simulation), its two experiments on our simulator, with each
contact method of ``--methods`` (SimulatorConfig.contact_method: seed 000's virtual links,
seed 004's own penalty method ``penalty_volume``).

1. Blocks against the update rate (Fig. 3-4): the stacks of bench/block_stack.py (blocks
   1 x 1 x 2 m, 1 kg, pyramid, dt = 5 ms, g = 9.8, mu 0.8 / 0.6) stepped for ``--seconds``;
   per N: the mean and 90th-percentile step cost and the update rate they allow (1 / cost);
   then the largest N whose mean (and 90th percentile) cost holds 1 kHz, 500 Hz (the paper's
   hexapod) and 300 Hz (the paper's lowest stable haptic rate: "300 Hz to 1 kHz or more").
   The paper reports cost per step against N (Fig. 4, ODE rising steeply, theirs about
   linear), not a count per rate: the rates here turn our cost into that.
2. Stick-slip (Fig. 5-6): a box (0.1 m cube, 1 kg) on the ground (mu_s 0.6, mu_d 0.4), pulled
   through a spring (k = 200 N/m) whose far end moves at a constant 0.05 m/s along +x; the
   spring force k (x_end - x_box) is computed each step and applied at the box's centre
   (``step(link_wrenches=...)``), dt = 1 ms, 6 s. Printed: the spring force every 0.25 s, its
   peaks (the onset of each slip) against mu_s m g and its troughs against
   2 mu_d m g - mu_s m g (a rigid Coulomb box: peaks at mu_s m g, the force falling to about
   2 mu_d m g - mu_s m g after each slip), and with --plot PATH the saw-tooth as a PNG.

Usage: python bench/seed004_haptic.py [--counts 1,3,6,13,20,30] [--seconds 2] [--no-stack] [--plot PATH]
       [--methods virtual_link,penalty_volume]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_stack import ours as stack_costs  # noqa: E402
from figures import pyplot, save  # noqa: E402
from mechanics import machine_load  # noqa: E402

from humanoid_sim.contact.environment import GroundPlane, Material  # noqa: E402
from humanoid_sim.model.robot_model import ShapeKind  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402
from humanoid_sim.world import FreeObject, Shape, World, assemble_world_model  # noqa: E402

RATES = (1000.0, 500.0, 300.0)  # [Hz]
MASS, EDGE = 1.0, 0.1  # [kg], [m]
MU_S, MU_D = 0.6, 0.4
K_SPRING, PULL_SPEED = 200.0, 0.05  # [N/m], [m/s]
G = 9.81


def stacks(counts: list[int], seconds: float, method: str = "virtual_link") -> None:
    print(f"1. block stacks, {method}, dt 5 ms, {seconds:g} s each ({machine_load()}):")
    print(f"{'N':>4} {'mean [µs]':>10} {'p90 [µs]':>9} {'rate at mean [Hz]':>18} {'rate at p90 [Hz]':>17} {'stood':>6}")
    rows = []
    for n in counts:
        costs, drift, _ = stack_costs(n, seconds, method)
        mean, p90 = float(costs.mean()), float(np.percentile(costs, 90))
        rows.append((n, mean, p90))
        print(f"{n:4d} {mean * 1e6:10.0f} {p90 * 1e6:9.0f} {1 / mean:18.0f} {1 / p90:17.0f} {str(drift < 0.01):>6}")
    for rate in RATES:
        at_mean = [n for n, mean, _ in rows if 1.0 / mean >= rate]
        at_p90 = [n for n, _, p90 in rows if 1.0 / p90 >= rate]
        print(f"  at {rate:6.0f} Hz: up to {max(at_mean, default=0)} blocks (mean cost), "
              f"{max(at_p90, default=0)} (90th percentile) among N = {counts}")  # fmt: skip
    print(f"  ({machine_load()}) paper: stacks of 3, 6, 13 blocks at dt = 5 ms on a Pentium 4 1.6 GHz, cost about linear "
          "in N; the hexapod (27 DOF) held 500 Hz on a Pentium 3 1 GHz")


def stick_slip(seconds: float = 6.0, dt: float = 1e-3, method: str = "virtual_link"):
    """Times [s] and spring forces [N] of the pulled box."""
    shape = Shape(ShapeKind.BOX, [EDGE] * 3)
    box = FreeObject("box", shape, MASS, shape.mass_properties(mass=MASS).inertia, position=(0.0, 0.0, EDGE / 2),
                     material=Material(MU_S, MU_D, 0.0))  # fmt: skip
    world = World(ground=GroundPlane(0.0, Material(MU_S, MU_D, 0.0)), objects=(box,))
    wm = assemble_world_model(world)
    sim = Simulator.from_world(wm, config=SimulatorConfig(dt=dt, gravity=np.array([0.0, 0.0, -G]), contact_method=method))
    qx = wm.objects[0].q.start  # the box's x coordinate
    x_anchor = float(sim.q[qx])  # the spring's far end starts at the box: relaxed
    wrench = np.zeros(6)
    times, forces = [], []
    for _ in range(int(round(seconds / dt))):
        end = x_anchor + PULL_SPEED * sim.t
        wrench[0] = K_SPRING * (end - float(sim.q[qx]))
        sim.step(link_wrenches={"box": wrench})
        times.append(sim.t)
        forces.append(wrench[0])
    return np.array(times), np.array(forces)


def print_stick_slip(t: np.ndarray, f: np.ndarray, plot: Path | None, method: str = "virtual_link") -> None:
    mg = MASS * G
    print(f"\n2. stick-slip ({method}): box {EDGE} m, {MASS} kg, mu_s {MU_S}, mu_d {MU_D}, spring {K_SPRING:g} N/m pulled at "
          f"{PULL_SPEED} m/s, dt 1 ms: mu_s m g = {MU_S * mg:.3f} N, mu_d m g = {MU_D * mg:.3f} N, "
          f"2 mu_d m g - mu_s m g = {(2 * MU_D - MU_S) * mg:.3f} N")  # fmt: skip
    print("  spring force [N] every 0.25 s: " + " ".join(f"{f[i]:.2f}" for i in range(249, len(f), 250)))
    inner = np.arange(1, len(f) - 1)
    peaks = inner[(f[inner] > f[inner - 1]) & (f[inner] >= f[inner + 1]) & (f[inner] > 0.5 * MU_S * mg)]
    # the onsets of slips: peaks followed within 0.4 s by a drop of more than 10 % of mu_s m g
    big = [p for p in peaks if f[p] - f[p:p + 400].min() > 0.1 * MU_S * mg]
    print(f"  peaks (force at the onset of each slip): {len(big)}: "
          + ", ".join(f"t {t[p]:.3f} s {f[p]:.3f} N ({f[p] / (MU_S * mg):.3f} mu_s m g)" for p in big[:8]))
    lows = []
    for a, b in zip(big, big[1:] + [len(f) - 1]):
        k = a + int(np.argmin(f[a:b]))
        lows.append(k)
    print("  troughs (the force when the box sticks again): "
          + ", ".join(f"{f[k]:.3f} N ({f[k] / ((2 * MU_D - MU_S) * mg):.3f} x (2 mu_d - mu_s) m g)" for k in lows[:8]))
    if plot is not None:
        fig, ax = pyplot().subplots(figsize=(7, 3.2))
        ax.plot(t, f, lw=0.8, label="spring force")
        ax.axhline(MU_S * mg, color="r", lw=0.6, ls="--", label="mu_s m g")
        ax.axhline(MU_D * mg, color="g", lw=0.6, ls="--", label="mu_d m g")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("force [N]")
        ax.set_title(f"box pulled through a spring at constant speed ({method}, dt 1 ms)", fontsize=9)
        ax.legend(fontsize=7)
        save(fig, plot)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", default="1,3,6,13,20,30")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--no-stack", action="store_true")
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--methods", default="virtual_link,penalty_volume")
    args = ap.parse_args()
    methods = args.methods.split(",")
    for method in methods:
        if not args.no_stack:
            stacks([int(c) for c in args.counts.split(",")], args.seconds, method)
        t, f = stick_slip(method=method)
        plot = args.plot
        if plot is not None and len(methods) > 1:  # one figure per method
            plot = plot.with_name(f"{plot.stem}_{method}{plot.suffix}")
        print_stick_slip(t, f, plot, method)


if __name__ == "__main__":
    main()
