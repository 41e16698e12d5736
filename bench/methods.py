"""The contact methods side by side, and MuJoCo beside them, in one run.

Three scenes, each under every contact method of ``SimulatorConfig.contact_method``
(virtual_link: seed 000; relaxed_qp: seed 002; penalty_volume: seed 004) and under MuJoCo
(the same URDF, its default soft contacts, bench/step.py's conversion):

- **standing**: the bundled humanoid from "stand" under the library's HoldingController (PD and
  gravity compensation on both soles, control/holding_controller.py), dt 1 ms; MuJoCo under
  bench/step.py's joint-space holding controller (static torques and a PD on the joints: it
  needs no conversion of MuJoCo's base state). Under bench/step.py's controller (its stiffness
  against whole-body pitch tuned on rigid feet) the robot stands under virtual_link and MuJoCo
  but leans and falls within 2-3 s under the per-vertex methods, whose contacts give a little;
  the HoldingController closes the loop on the base and holds it under all three.
  Printed: step cost (median, mean) [µs], deepest penetration [mm], slip of the soles
  [mm] at the end, the error of Σ f_z against m g over the last second (mean and worst,
  relative), the kinetic energy at the end [J].
- **falling**: the same humanoid from "stand" with zero torque, dt 1 ms. Printed: step cost,
  deepest penetration, the largest one-step rise of T + U [J] (a passive system never gains
  energy; T + U leaves out the energy stored in penalty_volume's springs, ½ k d² per unit
  area: their release after an impact shows as a rise), T over the last second (at rest:
  < 1e-3 J), Σ f_z error over the last second.
- **pendulum**: seed 002's 10-link pendulum of box links (pivot 0.55 m, 60 degrees, mu_s 1.0,
  mu_d 0.4), 5 s at dt 1 ms. Printed: ran to the end or the failure, CPU per step,
  penetration, largest one-step rise of T + U, T at the end.

A method that raises or goes non-finite is a figure (printed with its message), not a crash.
The machine load is printed beside the timings: read ratios on a loaded machine.

Usage: python bench/methods.py [--seconds 3] [--pendulum-seconds 5]
       [--methods virtual_link,relaxed_qp,penalty_volume] [--no-mujoco]
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

import seed002_pendulum  # noqa: E402
from mechanics import MechanicsMeter, machine_load  # noqa: E402
from step import DT, FEET, URDF, holding_controller, mujoco_model, mujoco_state  # noqa: E402

from humanoid_sim.contact.methods import CONTACT_METHODS  # noqa: E402
from humanoid_sim.control.holding_controller import HoldingController  # noqa: E402
from humanoid_sim.dynamics.kinematics import frame_placement  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.box_pendulum import BoxPendulum  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402



class Figures(NamedTuple):
    """One scene under one method. cost (median, mean) [s]; penetration [m]; slip [m] (nan:
    not measured); fz_error (mean, worst) relative over the last second (nan: not measured);
    gain [J]: largest one-step rise of T + U (nan: not measured); kinetic_end [J]; kinetic_last
    [J]: the largest T over the last second; t_end [s]; failure (None: ran to the end)."""

    cost: tuple[float, float]
    penetration: float
    slip: float
    fz_error: tuple[float, float]
    gain: float
    kinetic_end: float
    kinetic_last: float
    t_end: float
    failure: str | None


def _failure(exc: BaseException, t: float) -> str:
    return f"{type(exc).__name__} at t = {t:.3f} s: {exc}".splitlines()[0][:160]


def _humanoid(method: str, torque: bool, seconds: float) -> Figures:
    """The bundled humanoid from "stand": under the holding controller (torque) or passive."""
    model = load_urdf(URDF)
    sim = Simulator(model, SimulatorConfig(dt=DT, contact_method=method))
    q0 = sim.reset("stand")
    holding = HoldingController(model) if torque else None
    ctrl = None if holding is None else (lambda: holding.update(sim.t, sim.q, sim.v))
    if holding is not None:
        holding.reset(q0)
    for _ in range(10):  # first calls compile or load the kernels: untimed
        sim.step(None if ctrl is None else ctrl())
    sim.reset("stand")
    if holding is not None:
        holding.reset(sim.q)
    meter = MechanicsMeter(model, sim.armature)
    mg = float(np.sum(model.mass) * np.linalg.norm(model.gravity))
    soles0 = [frame_placement(model, q0, f)[:3, 3] for f in FEET]
    steps = int(round(seconds / DT))
    last = steps - int(round(1.0 / DT))
    costs, fz_err, kin_last = [], [], []
    pen, gain, failure = 0.0, 0.0, None
    prev = meter(sim.q, sim.v).total
    for i in range(steps):
        tau = None if ctrl is None else ctrl()
        t0 = time.perf_counter()
        try:
            r = sim.step(tau)
        except Exception as exc:  # noqa: BLE001 -- a failure is a figure
            failure = _failure(exc, sim.t)
            break
        costs.append(time.perf_counter() - t0)
        if not (np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))):
            failure = f"non-finite state at t = {r.t:.3f} s"
            break
        pen = max(pen, r.max_penetration)
        state = meter(r.q, r.v)
        if ctrl is None:
            gain = max(gain, state.total - prev)
        prev = state.total
        if i >= last:
            fz = sum(float(c.wrench_world[2]) for c in r.contacts if c.other_body < 0)
            fz_err.append(abs(fz - mg) / mg)
            kin_last.append(state.kinetic)
    c = np.asarray(costs) if costs else np.array([math.nan])
    slip = math.nan
    if torque and failure is None:
        slip = max(float(np.linalg.norm((frame_placement(model, sim.q, f)[:3, 3] - s0)[:2]))
                   for f, s0 in zip(FEET, soles0))  # fmt: skip
    fz = (float(np.mean(fz_err)), float(np.max(fz_err))) if fz_err else (math.nan, math.nan)
    return Figures((float(np.median(c)), float(np.mean(c))), pen, slip, fz, gain if ctrl is None else math.nan,
                   meter.kinetic(sim.q, sim.v), max(kin_last) if kin_last else math.nan, sim.t, failure)  # fmt: skip


def _from_run(run) -> Figures:
    """bench/seed002_pendulum.py's Run of the pendulum as this bench's Figures (cost: CPU per step)."""
    per_step = run.cpu / max(run.steps, 1)
    return Figures((per_step, per_step), run.penetration, math.nan, (math.nan, math.nan), run.gain, run.kinetic_end,
                   math.nan, run.t_end, run.failure)  # fmt: skip


def _pendulum(method: str, seconds: float) -> Figures:
    """Seed 002's pendulum: 10 box links striking the floor (bench/seed002_pendulum.py's run)."""
    return _from_run(seed002_pendulum.run_ours(BoxPendulum(), DT, seconds, method=method))


def _mujoco_humanoid(torque: bool, seconds: float) -> Figures:
    import mujoco

    model = load_urdf(URDF)
    q0 = Simulator(model, SimulatorConfig(dt=DT)).reset("stand")
    ctrl = holding_controller(model, q0) if torque else None
    m = mujoco_model(model)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    mg = float(np.sum(model.mass) * np.linalg.norm(model.gravity))
    d, qadr, dadr = mujoco_state(m, model, q0)
    for _ in range(10):
        mujoco.mj_step(m, d)
    d, qadr, dadr = mujoco_state(m, model, q0)
    soles = [m.body(f).id for f in FEET]
    soles0 = [d.xpos[b].copy() for b in soles]
    steps = int(round(seconds / DT))
    last = steps - int(round(1.0 / DT))
    costs, fz_err, kin_last = np.empty(steps), [], []
    pen, gain, force = 0.0, 0.0, np.zeros(6)
    mujoco.mj_energyPos(m, d)
    mujoco.mj_energyVel(m, d)
    prev = float(d.energy.sum())
    for i in range(steps):
        if ctrl is not None:
            d.qfrc_applied[dadr] = ctrl(d.qpos[qadr], d.qvel[dadr])
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        costs[i] = time.perf_counter() - t0
        e = float(d.energy.sum())
        if ctrl is None:
            gain = max(gain, e - prev)
        prev = e
        if d.ncon:
            pen = max(pen, float(-d.contact.dist[: d.ncon].min()))
        if i >= last:
            fz = 0.0
            for k in range(d.ncon):
                mujoco.mj_contactForce(m, d, k, force)
                fz += abs(float(force[0]) * float(d.contact[k].frame[2]))  # normal force's vertical part
            fz_err.append(abs(fz - mg) / mg)
            kin_last.append(float(d.energy[1]))
    slip = max(float(np.linalg.norm((d.xpos[b] - s0)[:2])) for b, s0 in zip(soles, soles0)) if torque else math.nan
    return Figures((float(np.median(costs)), float(np.mean(costs))), pen, slip,
                   (float(np.mean(fz_err)), float(np.max(fz_err))), gain if ctrl is None else math.nan,
                   float(d.energy[1]), max(kin_last), float(d.time), None)  # fmt: skip


def _mujoco_pendulum(seconds: float) -> Figures:
    return _from_run(seed002_pendulum.run_mujoco(BoxPendulum(), seconds, DT))


def _mm(x: float) -> str:
    return "     -" if math.isnan(x) else f"{x * 1e3:6.3f}"


def _e(x: float) -> str:
    return "       -" if math.isnan(x) else f"{x:8.1e}"


def print_table(title: str, rows: list[tuple[str, Figures]]) -> None:
    print(f"\n{title}")
    print(f"  {'method':<15} {'median µs':>9} {'mean µs':>8} {'pen mm':>6} {'slip mm':>7} {'Σfz err':>8} "
          f"{'worst':>8} {'gain J':>8} {'T end J':>8} {'T last s':>8}  outcome")  # fmt: skip
    for name, f in rows:
        outcome = "ran to the end" if f.failure is None else f"FAILED: {f.failure}"
        print(f"  {name:<15} {f.cost[0] * 1e6:9.1f} {f.cost[1] * 1e6:8.1f} {_mm(f.penetration)} {_mm(f.slip):>7} "
              f"{_e(f.fz_error[0])} {_e(f.fz_error[1])} {_e(f.gain)} {_e(f.kinetic_end)} {_e(f.kinetic_last)}  "
              f"{outcome} (t = {f.t_end:.3f} s)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="standing and falling [s] (default 3)")
    parser.add_argument("--pendulum-seconds", type=float, default=5.0, help="the pendulum [s] (default 5)")
    parser.add_argument("--methods", default=",".join(CONTACT_METHODS), help="comma-separated contact methods")
    parser.add_argument("--no-mujoco", action="store_true", help="leave MuJoCo out")
    args = parser.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        SimulatorConfig(contact_method=m)  # refuses an unknown name, listing the methods
    try:
        import mujoco  # noqa: F401

        with_mujoco = not args.no_mujoco
    except ImportError:
        print("mujoco not installed: no comparison")
        with_mujoco = False
    scenes = (
        (f"standing under the HoldingController (MuJoCo: bench/step.py's), bundled humanoid, dt 1 ms, {args.seconds:g} s",
         lambda m: _humanoid(m, True, args.seconds), lambda: _mujoco_humanoid(True, args.seconds)),
        (f"passive fall from \"stand\", zero torque, dt 1 ms, {args.seconds:g} s",
         lambda m: _humanoid(m, False, args.seconds), lambda: _mujoco_humanoid(False, args.seconds)),
        (f"seed 002's pendulum, 10 box links, pivot 0.55 m, dt 1 ms, {args.pendulum_seconds:g} s (cost: CPU per step)",
         lambda m: _pendulum(m, args.pendulum_seconds), lambda: _mujoco_pendulum(args.pendulum_seconds)),
    )  # fmt: skip
    print(f"contact methods beside MuJoCo ({machine_load()})")
    print("columns: step cost; deepest penetration; sole slip at the end; |Σ f_z - m g| / m g over the last second "
          "(mean, worst); largest one-step rise of T + U (passive scenes); T at the end; largest T over the last second")
    for title, ours, theirs in scenes:
        rows = [(m, ours(m)) for m in methods]
        if with_mujoco:
            rows.append(("MuJoCo", theirs()))
        print_table(f"{title} ({machine_load()})", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
