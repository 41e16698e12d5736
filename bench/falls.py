"""Falls and flailing: humanoids collapsing passively and driven by random full-effort torques.

Robots: the bundled humanoid (urdf/humanoid.urdf, pose "stand") and talos (talos_reduced),
g1 (g1_29dof_rev_1_0) and icub of example-robot-data (``<mimic>`` joints read as independent
joints). Each starts at rest on flat ground (mu 1.0 / 0.8, restitution 0), its lowest collision
point on the ground (``Simulator.reset``: base height by forward kinematics), in its reference
posture: the bundled "stand" pose; the SRDF ``half_sitting`` state of talos and icub (joints and
base orientation; the base height is recomputed); g1 has none: its neutral (all-zero) posture.

Runs per robot, dt = 1 ms by default:
- zero torque for ``--duration`` s (the passive collapse);
- random torques for ``--duration`` s per seed: each joint's torque uniform in
  [-effort, effort] (URDF effort limit), resampled every 50 ms, seeded
  (``numpy.random.default_rng(seed)``).
Joint stops: by default a RangeOfMotionProvider makes every URDF position limit a hard stop
(``RangeOfMotionConfig()``, the same for every robot); ``--no-joint-stops`` runs a plain
``Simulator(model)``, which has no joint-limit rows (joints pass their limits, links fold
through each other).

Printed per robot (and in a summary table at the end):
- failures: runs that raised (any exception, SimulationError included), with the message;
  non-finite: runs whose state (q, v) or energy became non-finite (the run stops there);
- unvalidated: share of the steps whose checked solve (seed 000) failed its validity checks or
  met redundant rows (StepResult.validated False); bounded: share of the steps the bounded solve
  replaced it (StepResult.solver "bounded"); capped: share of the steps whose bounded solve
  stopped at its cap of Gauss-Seidel sweeps before its tolerance (StepResult.sweeps ==
  BOUNDED_SWEEPS: valid forces, not converged ones); a failed solve integrated as it was
  (validated False and solver not "bounded") counts as a failed solve; watched: share of the
  steps whose acceleration phase took in watched points it would have driven into the ground
  and solved again (StepResult.watched > 0);
- max penetration: largest StepResult.max_penetration of any step (the deepest point of any
  body in the band, in a contact or not) [m];
- max contact force: largest |force| of one contact in any step (ContactReport.wrench_world,
  impulse / dt included) [N], beside the robot's weight m g;
- energy excess: per step, ΔE - W with E = T + U (T = 1/2 v^T (M + diag(armature)) v,
  U = -m g . c_com; bench/mechanics.py) before and after the step and W = tau_applied . Δq_j
  the work of the applied joint torques, held over the step; the largest value [J] and the
  count of steps above 0.1 J (where there are any, the largest one's time and kind of step:
  solver, impulse phase, Runge-Kutta stages, contacts);
- after the zero-torque collapse (its last second): max kinetic energy [J] and whether it is
  < 1e-3 J (at rest); max |Σ f_z / (m g) - 1| over the steps (Σ f_z: the world z force of every
  ground contact, ContactReport.wrench_world, impulses included; a step without a ground
  contact counts as error 1); the count of steps that integrated a failed solve;
- mean step cost [µs] (Simulator.step only; the energy bookkeeping is outside the timing),
  printed with the machine load.

The script measures; its exit code is 0 unless ``--check`` is given, then 1 when a figure
misses its target (0 failures, 0 non-finite, penetration <= 1 mm, 0 steps with an energy excess
above 0.1 J, at rest (< 1e-3 J) over the last second of the collapse, Σ f_z = m g ± 0.5 % and
0 failed solves on every step of that second).

Usage: python bench/falls.py [--robots humanoid,talos,g1,icub] [--seeds 20] [--first-seed 0] [--duration 10]
       [--modes zero,random] [--no-joint-stops] [--contact-method virtual_link] [--max-wall S] [--check]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import MechanicsMeter, machine_load  # noqa: E402

from humanoid_sim.contact.bounded_solve import BOUNDED_SWEEPS  # noqa: E402
from humanoid_sim.contact.methods import CONTACT_METHODS  # noqa: E402
from humanoid_sim.dynamics.spatial import quaternion_to_rotation  # noqa: E402
from humanoid_sim.limits import RangeOfMotionProvider  # noqa: E402
from humanoid_sim.limits.range_config import RangeOfMotionConfig  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs  # noqa: E402
from humanoid_sim.simulator.initial_pose import InitialPose  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

RESAMPLE = 0.05  # [s] random torque hold time
ENERGY_TOLERANCE = 0.1  # [J] per step, beyond the work of the joint torques
TARGETS = {
    "penetration": 1e-3,  # [m]
    "rest_kinetic": 1e-3,  # [J]
    "fz_error": 5e-3,  # relative
}


@dataclass(frozen=True)
class RobotSpec:
    """name: label; urdf: path relative to example-robot-data's robots/ (or absolute);
    srdf: the SRDF holding a ``half_sitting`` group state, or None; pose: the pose name
    to reset to (the bundled humanoid's from config/initial_poses.yaml)."""

    name: str
    urdf: str
    srdf: str | None = None
    pose: str = "reference"


ROBOTS = {
    "humanoid": RobotSpec("humanoid", str(REPO / "urdf" / "humanoid.urdf"), pose="stand"),
    "talos": RobotSpec("talos", "talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf"),
    "g1": RobotSpec("g1", "g1_description/urdf/g1_29dof_rev_1_0.urdf"),
    "icub": RobotSpec("icub", "icub_description/robots/icub.urdf", "icub_description/srdf/icub.srdf"),
}


def robots_dir() -> Path:
    for share in example_robot_data_share_dirs():
        robots = Path(share) / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    raise FileNotFoundError("example-robot-data is not installed (no share/example-robot-data/robots)")


def half_sitting(srdf: Path, joint_names: list[str]) -> InitialPose:
    """The SRDF ``half_sitting`` group state: joints of the model, base orientation (the
    root_joint's quaternion x y z w); base height left to Simulator.reset (lowest point on
    the ground)."""
    root = ET.parse(srdf).getroot()
    state = next((s for s in root.iter("group_state") if s.get("name") == "half_sitting"), None)
    if state is None:
        raise ValueError(f"{srdf}: no group_state 'half_sitting'")
    joints, rpy = {}, (0.0, 0.0, 0.0)
    known = set(joint_names)
    for j in state.iter("joint"):
        values = [float(x) for x in j.get("value", "").split()]
        if j.get("name") == "root_joint" and len(values) == 7:
            R = quaternion_to_rotation(np.array(values[3:7]))
            rpy = (math.atan2(R[2, 1], R[2, 2]), -math.asin(max(-1.0, min(1.0, R[2, 0]))), math.atan2(R[1, 0], R[0, 0]))
        elif j.get("name") in known and len(values) == 1:
            joints[j.get("name")] = values[0]
    return InitialPose("reference", joints=joints, base_rpy=rpy)


def load_robot(spec: RobotSpec):
    """(model, poses or None) of a robot, the loader's warnings silenced; a URDF whose rounded
    inertias fail the strict checks is loaded with strict_inertia=False."""
    path = Path(spec.urdf)
    if not path.is_absolute():
        path = robots_dir() / spec.urdf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = load_urdf(path, mimic="independent")
        except Exception:  # public URDFs with rounded inertias
            model = load_urdf(path, mimic="independent", strict_inertia=False)
    if spec.pose != "reference":
        return model, None
    if spec.srdf is not None:
        pose = half_sitting(robots_dir() / spec.srdf, list(model.joint_names))
    else:
        pose = InitialPose("reference")  # neutral posture
    return model, {"reference": pose}


@dataclass
class RunResult:
    """Figures of one run (see the module docstring)."""

    robot: str
    mode: str
    seed: int | None
    duration: float
    t_end: float = 0.0
    failure: str | None = None
    nonfinite: bool = False
    cut: bool = False  # stopped by --max-wall
    steps: int = 0
    unvalidated: int = 0
    bounded: int = 0
    capped: int = 0
    watched: int = 0
    failed_steps: int = 0
    max_penetration: float = 0.0
    max_force: float = 0.0
    max_excess: float = -math.inf
    excess_steps: int = 0
    worst: str = ""  # the step of max_excess: its time and kind (solver, impulse phase, stages, contacts)
    last_kinetic_max: float = math.nan
    last_fz_error_max: float = math.nan
    last_failed: int = 0
    costs: list = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.robot} {self.mode}" + (f" seed {self.seed}" if self.seed is not None else "")

    @property
    def complete(self) -> bool:
        return self.failure is None and not self.nonfinite and not self.cut


def make_simulator(spec: RobotSpec, model, poses, args) -> Simulator:
    """The robot's simulator (flat ground, joint stops per args), reset to its pose."""
    providers = [RangeOfMotionProvider(model, RangeOfMotionConfig())] if args.joint_stops else []
    sim = Simulator(model, SimulatorConfig(dt=args.dt, contact_method=args.contact_method), providers=providers, poses=poses)
    sim.reset(spec.pose)
    return sim


def run_one(spec: RobotSpec, model, poses, mode: str, seed: int | None, args) -> RunResult:
    """One run; any exception is recorded as the run's failure, never raised."""
    res = RunResult(spec.name, mode, seed, args.duration)
    try:
        sim = make_simulator(spec, model, poses, args)
        meter = MechanicsMeter(sim.model, sim.armature)
        mg = sim.model.total_mass * float(np.linalg.norm(sim.model.gravity))
        nj, nq = model.nj, model.nq
        effort = np.asarray(model.limits.effort, dtype=float)
        rng = np.random.default_rng(seed) if seed is not None else None
        hold = max(1, int(round(RESAMPLE / args.dt)))
        steps = int(round(args.duration / args.dt))
        last_from = steps - int(round(1.0 / args.dt))
        tau = np.zeros(nj)
        v = sim.v
        E0 = meter(sim.q, v).total
        ke_last, fz_last = [], []
        wall0 = time.perf_counter()
        for i in range(steps):
            if rng is not None and i % hold == 0:
                tau = rng.uniform(-effort, effort)
            q_before = sim.q
            t0 = time.perf_counter()
            r = sim.step(tau)
            res.costs.append(time.perf_counter() - t0)
            res.steps = i + 1
            res.t_end = r.t
            if not (np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))):
                res.nonfinite = True
                break
            ms = meter(r.q, r.v)
            if not math.isfinite(ms.total):
                res.nonfinite = True
                break
            # the torque is held over the step: its work is tau . Δq of the joints, exactly
            work = float(r.tau_applied @ (r.q[nq - nj :] - q_before[nq - nj :]))
            excess = ms.total - E0 - work
            if excess > res.max_excess:
                res.max_excess = excess
                res.worst = (f"t {r.t:.3f} s, {r.solver}{' + impulse' if r.impulse else ''}, {r.stages} stages, "
                             f"{len(r.contacts)} contacts")
            res.excess_steps += excess > ENERGY_TOLERANCE
            E0, v = ms.total, r.v
            res.max_penetration = max(res.max_penetration, r.max_penetration)
            for c in r.contacts:
                res.max_force = max(res.max_force, float(np.linalg.norm(c.wrench_world[:3])))
            res.unvalidated += not r.validated
            res.bounded += r.solver == "bounded"
            res.capped += r.solver == "bounded" and r.sweeps >= BOUNDED_SWEEPS
            res.watched += r.watched > 0
            failed = not r.validated and r.solver != "bounded"  # a failed solve integrated as it was
            res.failed_steps += failed
            if i >= last_from:
                ke_last.append(ms.kinetic)
                fz = sum(c.wrench_world[2] for c in r.contacts if c.element == "ground")
                fz_last.append(abs(fz / mg - 1.0))
                res.last_failed += failed
            if args.max_wall and time.perf_counter() - wall0 > args.max_wall:
                res.cut = i + 1 < steps
                break
        if ke_last:
            res.last_kinetic_max = max(ke_last)
            res.last_fz_error_max = max(fz_last)
    except Exception as exc:  # noqa: BLE001 -- a failure is a figure, not a crash
        res.failure = f"{type(exc).__name__} at t = {res.t_end:.3f} s: {exc}".splitlines()[0][:200]
    return res


def warm_up(spec: RobotSpec, model, poses, args) -> None:
    """A few untimed steps (numba caches, first-call costs) so the first run's cost is fair."""
    try:
        sim = make_simulator(spec, model, poses, args)
        rng = np.random.default_rng(12345)
        effort = np.asarray(model.limits.effort, dtype=float)
        for i in range(100):
            sim.step(rng.uniform(-effort, effort) if i % 20 == 0 else None)
    except Exception:  # noqa: BLE001
        pass


def fmt(x: float, spec: str = ".2e") -> str:
    """x formatted, "-" when there is no figure (NaN: not measured, -inf: no step)."""
    return "-" if x is None or math.isnan(x) or x == -math.inf else format(x, spec)


def print_run(r: RunResult) -> None:
    cost = np.mean(r.costs) * 1e6 if r.costs else math.nan
    status = "ok" if r.complete else ("FAILED: " + r.failure if r.failure else "NON-FINITE" if r.nonfinite else "cut by --max-wall")
    extra = ""
    if r.mode == "zero":
        extra = f", last 1 s: KE max {fmt(r.last_kinetic_max)} J, Σfz err {fmt(r.last_fz_error_max)}, failed {r.last_failed}"
    print(
        f"  {r.label:<22} t {r.t_end:6.3f} s  bounded {r.bounded / max(1, r.steps):6.1%} (capped {r.capped / max(1, r.steps):.1%})  "
        f"watched {r.watched / max(1, r.steps):.1%}  failed {r.failed_steps}  "
        f"pen {fmt(r.max_penetration)} m  F max {fmt(r.max_force)} N  ΔE-W max {fmt(r.max_excess, '.3g')} J ({r.excess_steps} > 0.1 J)  "
        f"{cost:7.0f} µs/step{extra}  [{status}]",
        flush=True,
    )
    if r.excess_steps:  # where to look: the largest excess's step
        print(f"    its largest ΔE - W: {r.worst}", flush=True)


@dataclass
class Row:
    """Aggregated figures of one robot and mode (several seeds for random)."""

    robot: str
    mode: str
    runs: list

    def figures(self) -> dict:
        rs = self.runs
        steps = sum(r.steps for r in rs)
        costs = np.concatenate([np.asarray(r.costs) for r in rs]) if steps else np.zeros(0)
        zero = self.mode == "zero" and rs
        return {
            "runs": len(rs),
            "failures": sum(r.failure is not None for r in rs),
            "nonfinite": sum(r.nonfinite for r in rs),
            "cut": sum(r.cut for r in rs),
            "unvalidated": sum(r.unvalidated for r in rs) / max(1, steps),
            "bounded": sum(r.bounded for r in rs) / max(1, steps),
            "capped": sum(r.capped for r in rs) / max(1, steps),
            "watched": sum(r.watched for r in rs) / max(1, steps),
            "failed_steps": sum(r.failed_steps for r in rs),
            "penetration": max((r.max_penetration for r in rs), default=math.nan),
            "force": max((r.max_force for r in rs), default=math.nan),
            "excess": max((r.max_excess for r in rs), default=math.nan),
            "excess_steps": sum(r.excess_steps for r in rs),
            "rest_kinetic": rs[0].last_kinetic_max if zero else math.nan,
            "fz_error": rs[0].last_fz_error_max if zero else math.nan,
            "last_failed": rs[0].last_failed if zero else 0,
            "cost": costs.mean() * 1e6 if len(costs) else math.nan,
        }

    def misses(self) -> list[str]:
        f = self.figures()
        out = []
        if f["failures"]:
            out.append(f"{f['failures']} failures")
        if f["nonfinite"]:
            out.append(f"{f['nonfinite']} non-finite")
        if f["cut"]:
            out.append(f"{f['cut']} runs cut by --max-wall")
        if not f["penetration"] <= TARGETS["penetration"]:
            out.append(f"penetration {f['penetration']:.2e} m > 1 mm")
        if f["failed_steps"]:
            out.append(f"{f['failed_steps']} steps integrated a solve that failed its checks")
        if f["excess_steps"]:
            out.append(f"{f['excess_steps']} steps gain > 0.1 J beyond the torques' work")
        if self.mode == "zero":
            if not f["rest_kinetic"] < TARGETS["rest_kinetic"]:
                out.append(f"not at rest: KE {fmt(f['rest_kinetic'])} J over the last second")
            if not f["fz_error"] <= TARGETS["fz_error"]:
                out.append(f"Σfz/(mg) error {fmt(f['fz_error'])} > 0.5 %")
            if f["last_failed"]:
                out.append(f"{f['last_failed']} failed solves in the last second")
        return out


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'robot':<9}{'mode':<8}{'runs':>5}{'fail':>5}{'nonfin':>7}{'bounded':>8}{'capped':>7}{'watched':>8}{'failed':>7}{'pen [m]':>10}{'F max [N]':>10}"
        f"{'ΔE-W max [J]':>13}{'>0.1J':>7}{'rest KE [J]':>12}{'rest':>5}{'Σfz err':>9}{'fail 1s':>8}{'µs/step':>9}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        f = row.figures()
        zero = row.mode == "zero"
        rest = ("yes" if f["rest_kinetic"] < TARGETS["rest_kinetic"] else "no") if zero else "-"
        print(
            f"{row.robot:<9}{row.mode:<8}{f['runs']:>5}{f['failures']:>5}{f['nonfinite']:>7}{f['bounded']:>8.1%}{f['capped']:>7.1%}{f['watched']:>8.1%}{f['failed_steps']:>7}"
            f"{fmt(f['penetration']):>10}{fmt(f['force']):>10}{fmt(f['excess'], '.3g'):>13}{f['excess_steps']:>7}"
            f"{fmt(f['rest_kinetic']) if zero else '-':>12}{rest:>5}{fmt(f['fz_error']) if zero else '-':>9}"
            f"{f['last_failed'] if zero else '-':>8}{f['cost']:>9.0f}"
        )


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robots", default=",".join(ROBOTS), help=f"comma list of {', '.join(ROBOTS)}")
    p.add_argument("--seeds", type=int, default=20, help="random-torque runs per robot (seeds F..F+N-1)")
    p.add_argument("--first-seed", type=int, default=0, help="F: the first seed (the figures are those of 0..19)")
    p.add_argument("--duration", type=float, default=10.0, help="simulated seconds per run")
    p.add_argument("--dt", type=float, default=1e-3, help="step [s]")
    p.add_argument("--modes", default="zero,random", help="comma list of zero, random")
    p.add_argument(
        "--joint-stops", action=argparse.BooleanOptionalAction, default=True, help="URDF position limits as hard stops"
    )
    p.add_argument("--contact-method", default="virtual_link", choices=CONTACT_METHODS,
                   help="how contacts are solved (docs/contact_methods.md)")
    p.add_argument("--max-wall", type=float, default=0.0, help="wall-clock limit per run [s] (0: none)")
    p.add_argument("--check", action="store_true", help="exit 1 when a figure misses its target")
    args = p.parse_args(argv)
    args.robots = [r.strip() for r in args.robots.split(",") if r.strip()]
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [r for r in args.robots if r not in ROBOTS] + [m for m in args.modes if m not in ("zero", "random")]
    if bad:
        p.error(f"unknown {bad}; robots: {', '.join(ROBOTS)}; modes: zero, random")
    if args.duration <= 0 or args.dt <= 0 or args.seeds < 0 or args.first_seed < 0:
        p.error("--duration and --dt must be > 0, --seeds and --first-seed >= 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    seeds = f"{args.seeds if 'random' in args.modes else 0} seeds"
    seeds += f" from {args.first_seed}" if args.first_seed else ""
    print(
        f"falls: {', '.join(args.robots)}; {args.duration:g} s per run at dt = {args.dt * 1e3:g} ms; modes {args.modes}; "
        f"{seeds}; joint stops {'on' if args.joint_stops else 'off'}; {machine_load()}",
        flush=True,
    )
    rows: list[Row] = []
    for name in args.robots:
        spec = ROBOTS[name]
        try:
            model, poses = load_robot(spec)
        except Exception as exc:  # noqa: BLE001
            msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
            print(f"{name}: cannot load: {msg}")
            for mode in args.modes:
                r = RunResult(name, mode, None, args.duration, failure=f"load: {msg}")
                rows.append(Row(name, mode, [r]))
            continue
        print(f"{name}: {model.name}, {model.nv} dof, {model.total_mass:.2f} kg, pose {spec.pose!r}", flush=True)
        warm_up(spec, model, poses, args)
        if "zero" in args.modes:
            r = run_one(spec, model, poses, "zero", None, args)
            print_run(r)
            rows.append(Row(name, "zero", [r]))
        if "random" in args.modes and args.seeds:
            runs = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                r = run_one(spec, model, poses, "random", seed, args)
                print_run(r)
                runs.append(r)
            rows.append(Row(name, "random", runs))
    print(f"\nsummary, contact method {args.contact_method} ({machine_load()}; step costs on a shared machine are noisy)")
    print_table(rows)
    misses = [(row, m) for row in rows for m in row.misses()]
    if misses:
        print("\nmisses against the targets:")
        for row, m in misses:
            print(f"  {row.robot} {row.mode}: {m}")
    else:
        print("\nevery figure meets its target")
    return 1 if (args.check and misses) else 0


if __name__ == "__main__":
    sys.exit(main())
