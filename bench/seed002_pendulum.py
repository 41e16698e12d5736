"""Seed 002 (relaxed-constraint contact), section 3, Table 1 and Figs. 5-7: the n-link
pendulum of box links striking the floor, on our simulator and on MuJoCo.

The scene (humanoid_sim.model.box_pendulum): n = 10 boxes of 4 x 4 x 10 cm, 0.3 kg each,
joined by revolute joints with parallel axes, the first hinged 0.55 m above the ground,
released at rest with the first joint at 60 degrees from the hanging vertical and the
chain straight; ground friction mu_s = 1.0, mu_d = 0.4; no restitution; 5 s simulated.

Printed:
- our simulator with each contact method of --methods (virtual_link: seed 000's virtual-link
  contacts, validity checks, the bounded solve where the checked one fails; relaxed_qp:
  seed 002's own per-vertex relaxed QP) at dt = 1 ms: whether it ran 5 s, the CPU seconds of
  its steps, the deepest penetration, the largest energy gain of one step (T + U, with the
  simulator's armature), the steps whose checked solve was replaced by the bounded solve,
  the kinetic energy at the end (at rest?);
- the same at larger steps (2, 5, 10, 20 ms): the largest step that is "stable" (runs the
  5 s with a finite state, penetration <= 1 mm, no step gaining more than 0.1 J);
- with --micro, the paper's "microscopic" row: penalty_volume (seed 004's penalty method)
  at dt = 10 µs;
- MuJoCo at 1 ms (the same URDF through bench/step.py's conversion, base fixed; one
  friction coefficient, chosen mu = mu_d = 0.4; MuJoCo's default soft contacts): CPU
  seconds, penetration, energy gain per step (mjENBL_ENERGY), kinetic energy at the end;
- the end link's normal forces over time: ours per contact (a virtual link has one wrench:
  its f_z and the centre of pressure p_v, no per-vertex split), relaxed_qp's per vertex
  (Figs. 5-7: the method has per-vertex forces), MuJoCo's per contact point
  (box-plane contacts are the box's vertices), as a table and, with --plot PATH, a PNG.

Usage: python bench/seed002_pendulum.py [--links 10] [--seconds 5] [--no-sweep] [--no-mujoco]
       [--methods virtual_link relaxed_qp] [--micro] [--plot docs/reproductions/seed002_end_link_forces.png]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import pyplot, save  # noqa: E402
from mechanics import MechanicsMeter, machine_load  # noqa: E402

from humanoid_sim.contact.environment import Environment, GroundPlane, Material  # noqa: E402
from humanoid_sim.contact.methods import CONTACT_METHODS  # noqa: E402
from humanoid_sim.dynamics.kinematics import frame_placement  # noqa: E402
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum, box_pendulum_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

MU_S, MU_D = 1.0, 0.4
START = math.radians(60.0)
PENETRATION_LIMIT = 1e-3  # [m]
GAIN_LIMIT = 0.1  # [J] per step
SWEEP = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2)


class Run(NamedTuple):
    """One run: dt [s]; t_end [s] reached; failure (None: ran to the end); cpu [s] of the
    steps; penetration [m] deepest; gain [J] largest one-step rise of T + U and gain_t [s]
    when; bounded: steps integrating the bounded solve, steps: steps made; first_bounded [s]
    (nan: none); kinetic_end [J]; energy (start, end) [J]; series: rows (t, f_z per end-link
    contact or vertex...) of the end link's normal forces [s, N]."""

    dt: float
    t_end: float
    failure: str | None
    cpu: float
    penetration: float
    gain: float
    gain_t: float
    bounded: int
    steps: int
    first_bounded: float
    kinetic_end: float
    energy: tuple[float, float]
    series: list

    @property
    def stable(self) -> bool:
        return self.failure is None and self.penetration <= PENETRATION_LIMIT and self.gain <= GAIN_LIMIT


def simulator(spec: BoxPendulum, dt: float, method: str = "virtual_link") -> Simulator:
    env = Environment(ground=GroundPlane(material=Material(mu_s=MU_S, mu_d=MU_D)))
    sim = Simulator(box_pendulum(spec), SimulatorConfig(dt=dt, environment=env, contact_method=method), poses={})
    sim.set_state(spec.initial_configuration(START), np.zeros(sim.model.nv))
    return sim


def run_ours(spec: BoxPendulum, dt: float, seconds: float, record: bool = False, method: str = "virtual_link") -> Run:
    """Our simulator on the pendulum with a contact method (contact/methods.py); record: the
    end link's contact forces every step (per vertex for a method that has them)."""
    warm = simulator(spec, dt, method)  # first calls compile / load the kernels: untimed
    for _ in range(5):
        warm.step()
    sim = simulator(spec, dt, method)
    meter = MechanicsMeter(sim.model, sim.armature)
    end_link = f"link{spec.links}"
    e0 = prev = meter(sim.q, sim.v).total
    cpu = pen = gain = 0.0
    gain_t, first_bounded = 0.0, math.nan
    bounded = steps = 0
    failure = None
    series = []
    for _ in range(int(round(seconds / dt))):
        c0 = time.process_time()
        try:
            r = sim.step()
        except Exception as exc:  # noqa: BLE001 -- a failure is a figure
            failure = f"{type(exc).__name__} at t = {sim.t:.3f} s: {exc}".splitlines()[0][:200]
            break
        cpu += time.process_time() - c0
        steps += 1
        if not (np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))):
            failure = f"non-finite state at t = {r.t:.3f} s"
            break
        pen = max(pen, r.max_penetration)
        if r.solver == "bounded":
            bounded += 1
            if math.isnan(first_bounded):
                first_bounded = r.t
        e = meter(r.q, r.v).total
        if e - prev > gain:
            gain, gain_t = e - prev, r.t
        prev = e
        if record:
            row = [r.t]
            X = frame_placement(sim.model, r.q, end_link)
            for c in r.contacts:
                if c.link != end_link:
                    continue
                if c.point_forces is None:
                    row.append((float(c.wrench_local[2]), c.kind.name, c.p_v.copy()))
                else:  # per vertex: its normal force, the vertex in the link frame
                    for p, f in zip(c.points, c.point_forces):
                        row.append((float(f @ c.R_world_vl[:, 2]), "vertex", X[:3, :3].T @ (p - X[:3, 3])))
            series.append(row)
    return Run(dt, sim.t, failure, cpu, pen, gain, gain_t, bounded, steps, first_bounded,
               meter.kinetic(sim.q, sim.v), (e0, prev), series)  # fmt: skip


def run_mujoco(spec: BoxPendulum, seconds: float, dt: float = 1e-3) -> Run:
    """MuJoCo on the same URDF (base fixed), mu = MU_D, default soft contacts; per-vertex
    normal forces of the end link's contacts."""
    import mujoco
    from step import mujoco_model

    m = mujoco_model(None, box_pendulum_urdf(spec), floating=False)
    m.opt.timestep = dt
    m.geom_friction[:, 0] = MU_D
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    end_body = m.body(f"link{spec.links}").id
    force = np.zeros(6)

    def fresh():
        d = mujoco.MjData(m)
        for k in range(spec.links):
            d.qpos[m.jnt_qposadr[m.joint(f"joint{k + 1}").id]] = spec.initial_configuration(START)[k]
        mujoco.mj_forward(m, d)
        return d

    d = fresh()
    for _ in range(5):
        mujoco.mj_step(m, d)
    d = fresh()
    e0 = prev = float(d.energy.sum())
    cpu = pen = gain = 0.0
    gain_t = 0.0
    failure = None
    series = []
    steps = 0
    for _ in range(int(round(seconds / dt))):
        c0 = time.process_time()
        mujoco.mj_step(m, d)
        cpu += time.process_time() - c0
        steps += 1
        if not np.all(np.isfinite(d.qpos)):
            failure = f"non-finite state at t = {d.time:.3f} s"
            break
        mujoco.mj_energyPos(m, d)
        mujoco.mj_energyVel(m, d)
        e = float(d.energy.sum())
        if e - prev > gain:
            gain, gain_t = e - prev, d.time
        prev = e
        row = [d.time]
        for i in range(d.ncon):
            con = d.contact[i]
            pen = max(pen, -float(con.dist))
            if end_body in (m.geom_bodyid[con.geom1], m.geom_bodyid[con.geom2]):
                mujoco.mj_contactForce(m, d, i, force)
                local = d.xmat[end_body].reshape(3, 3).T @ (con.pos - d.xpos[end_body])
                row.append((float(force[0]), "vertex", local.copy()))
        series.append(row)
    kinetic = float(d.energy[1])
    return Run(dt, d.time, failure, cpu, pen, gain, gain_t, 0, steps, math.nan, kinetic, (e0, prev), series)


def print_run(name: str, r: Run) -> None:
    status = "ran to the end" if r.failure is None else f"FAILED: {r.failure}"
    print(f"  {name:<14} dt {r.dt * 1e3:5.3g} ms: {status}; t = {r.t_end:.3f} s, CPU {r.cpu:6.2f} s "
          f"({r.cpu / max(r.steps, 1) * 1e6:7.1f} µs/step), penetration {r.penetration * 1e3:.3f} mm, "
          f"largest gain {r.gain:.2e} J/step (t = {r.gain_t:.3f} s), energy {r.energy[0]:.3f} -> {r.energy[1]:.3f} J, "
          f"kinetic at the end {r.kinetic_end:.2e} J"
          + (f", bounded solve {r.bounded}/{r.steps} steps (first t = {r.first_bounded:.3f} s)"
             if name.startswith("humanoid") else "")
          + (("  STABLE" if r.stable else "  not stable") if name.startswith("humanoid") else ""))  # fmt: skip


def sample(series: list, times) -> list:
    """The rows of ``series`` nearest each of ``times``."""
    ts = np.array([row[0] for row in series])
    return [series[int(np.argmin(np.abs(ts - t)))] for t in times]


def _vertex_text(items) -> str:
    """Per-vertex normal forces sorted by the vertex's x, y, z in the link frame."""
    pts = sorted(items, key=lambda p: tuple(np.round(p[2], 3)))
    return " ".join(f"{f:6.2f}" for f, _, _ in pts) or "-"


def print_forces(ours: Run, mj: Run | None, relaxed: Run | None = None) -> None:
    times = list(np.round(np.arange(0.05, 1.0001, 0.05), 3)) + [1.5, 2.0, 3.0, 4.0, 5.0]
    times = [t for t in times if t <= ours.t_end + 1e-9]
    print("\nend link's normal forces [N] (ours: f_z per contact, L line, S surface; relaxed_qp and "
          "MuJoCo: f_n per contact point, sorted by the vertex's x, y, z in the link frame):")  # fmt: skip
    mj_rows = sample(mj.series, times) if mj is not None and mj.series else [None] * len(times)
    rq_rows = sample(relaxed.series, times) if relaxed is not None and relaxed.series else [None] * len(times)
    for row, mrow, rrow in zip(sample(ours.series, times), mj_rows, rq_rows):
        ours_txt = "  ".join(f"{f:7.2f} {kind[0]}" for f, kind, _ in row[1:]) or "   -"
        text = f"  t = {row[0]:5.3f}  ours: {ours_txt:<28}"
        if rrow is not None:
            text += f"  relaxed_qp: {_vertex_text(rrow[1:]):<27}"
        if mrow is not None:
            text += "  MuJoCo: " + _vertex_text(mrow[1:])
        print(text)


def _plot_vertices(ax, run: Run, title: str) -> None:
    """The per-vertex normal forces of a run (vertices keyed by the signs of their link-frame
    coordinates) on ax."""
    tm = np.array([row[0] for row in run.series])
    corners = {}
    for k, row in enumerate(run.series):
        for f, _, p in row[1:]:
            key = tuple(int(np.sign(round(c, 3))) for c in p)
            corners.setdefault(key, np.zeros(len(tm)))[k] += f
    for key, f in sorted(corners.items()):
        label = " ".join(f"{axis}{'+' if c > 0 else '-' if c < 0 else '0'}" for axis, c in zip("xyz", key))
        ax.plot(tm, f, lw=0.7, label=f"vertex {label}")
    ax.set_ylabel("normal force [N]")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=4)


def plot_forces(path: Path, ours: Run, mj: Run | None, relaxed: Run | None = None) -> None:
    panels = 1 + (mj is not None) + (relaxed is not None)
    fig, axes = pyplot().subplots(panels, 1, figsize=(8, 3.2 * panels), sharex=True, squeeze=False)
    t = np.array([row[0] for row in ours.series])
    fz = np.array([sum(f for f, _, _ in row[1:]) for row in ours.series])
    axes[0, 0].plot(t, fz, lw=0.7)
    axes[0, 0].set_ylim(-0.5, 20.0)
    axes[0, 0].set_ylabel("end link f_z [N]")
    axes[0, 0].set_title(f"humanoid_sim (seed 000 method), dt = {ours.dt * 1e3:g} ms: end link's total normal force "
                         f"(peak {fz.max():.0f} N at t = {t[int(np.argmax(fz))]:.3f} s, off the scale)", fontsize=9)
    k = 1
    if relaxed is not None:
        _plot_vertices(axes[k, 0], relaxed, f"humanoid_sim relaxed_qp (seed 002), dt = {relaxed.dt * 1e3:g} ms: the end "
                       "link's vertices (link frame)")  # fmt: skip
        axes[k, 0].set_ylim(-0.5, 20.0)
        k += 1
    if mj is not None:
        _plot_vertices(axes[k, 0], mj, "MuJoCo, dt = 1 ms: the end link's contact points (its vertices; link frame)")
    axes[-1, 0].set_xlabel("t [s]")
    save(fig, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--no-mujoco", action="store_true")
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--methods", nargs="+", default=["virtual_link", "relaxed_qp"], choices=CONTACT_METHODS,
                    help="contact methods to run (rows of Table 1)")
    ap.add_argument("--micro", action="store_true",
                    help="also the paper's microscopic row: penalty_volume at dt = 10 µs (seed 004's penalty method)")
    args = ap.parse_args()
    spec = BoxPendulum(links=args.links)
    print(f"seed 002 pendulum: {spec.links} links {spec.width * 100:g} x {spec.depth * 100:g} x {spec.length * 100:g} cm, "
          f"{spec.link_mass} kg each, pivot {spec.pivot_height} m, joint1 at 60 deg, mu_s {MU_S}, mu_d {MU_D}, "
          f"{args.seconds:g} s ({machine_load()})")  # fmt: skip
    runs = {}
    for method in args.methods:
        name = f"humanoid_sim {method}" if method != "virtual_link" else "humanoid_sim"
        runs[method] = run = run_ours(spec, 1e-3, args.seconds, record=True, method=method)
        print_run(name, run)
        if not args.no_sweep:
            largest = 1e-3 if run.stable else None
            for dt in SWEEP[1:]:
                r = run_ours(spec, dt, args.seconds, method=method)
                print_run(name, r)
                if r.stable:
                    largest = dt
            print(f"  largest stable step of {method} among {[f'{d * 1e3:g} ms' for d in SWEEP]}: "
                  f"{'none' if largest is None else f'{largest * 1e3:g} ms'}")  # fmt: skip
    if args.micro:  # Table 1's microscopic method: a penalty method at a step 100 x smaller
        print_run("humanoid_sim penalty_volume (micro)", run_ours(spec, 1e-5, args.seconds, method="penalty_volume"))
    mj = None
    if not args.no_mujoco:
        try:
            mj = run_mujoco(spec, args.seconds)
        except ImportError:
            print("  mujoco not installed: no comparison")
        else:
            print_run(f"MuJoCo {__import__('mujoco').__version__}", mj)
    print(f"  paper (Table 1; C, Core i7-2720QM 2.2 GHz, RK-Gill): proposed 1 ms 31.3 s, macroscopic (LCP) 1 ms 6.9 s, "
          f"microscopic (penalty) 0.01 ms 187.5 s ({machine_load()})")  # fmt: skip
    ours = runs.get("virtual_link") or next(iter(runs.values()))
    relaxed = runs.get("relaxed_qp") if ours is not runs.get("relaxed_qp") else None
    print_forces(ours, mj, relaxed)
    if args.plot is not None:
        plot_forces(args.plot, ours, mj, relaxed)


if __name__ == "__main__":
    main()
