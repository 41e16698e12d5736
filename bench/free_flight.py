"""Free flight: no gravity, no ground, zero torque -- kinetic energy and momenta must stay constant.

Scene: ``SimulatorConfig(gravity=0, environment=Environment(ground=None))``, no constraint
providers (so no joint-limit rows: a Simulator without a RangeOfMotionProvider never uses the
URDF position limits), zero joint torque, dt = 1 ms by default. URDF ``<dynamics>`` elements
(joint damping and friction) are stripped from the URDF before loading and every joint
velocity limit is lifted to 1e6, so that a simulator that applies them (velocity limits by
limiting the actuator effort brake a joint even at zero command) still conserves energy.

1. The bundled humanoid (urdf/humanoid.urdf) from its "stand" posture, per seed
   (``numpy.random.default_rng(seed)``): base angular velocity uniform in the ball of radius
   5 rad/s (base frame), base linear velocity uniform in the ball of radius 0.5 m/s, joint
   velocities uniform in [-2, 2] rad/s; 2 s. Printed: max over the run of |T(t) - T(0)| / T(0)
   (T = 1/2 v^T (M + diag(Simulator.armature)) v) and its final value; max over the run of
   |P(t) - P(0)| / |P(0)| (linear momentum) and |L_c(t) - L_c(0)| / |L_c(0)| (angular
   momentum about the CoM; a momentum below 1e-6 sqrt(2 m T) is compared with sqrt(2 m T)
   instead of itself); momenta from
   the world-frame spatial inertias and body velocities, h = sum_i Iw_i V_i (bench/mechanics.py).
2. A floating cube (one link, a URDF built here: 1 kg box 0.4 x 0.3 x 0.2 m, distinct
   principal moments), its link origin at the CoM and, a second time, 0.1 m away from it;
   spinning at 50 rad/s about the body axis (1, 1, 1)/sqrt(3) (not a principal axis) with its
   CoM at rest; 1 s. Printed: max |T(t) - T(0)| / T(0) and its final value.

3. The humanoid of 1. with two free objects of a world (humanoid_sim.world.assembly: a 2 kg
   box 0.4 x 0.3 x 0.2 m spinning at (3, -4, 5) rad/s and a 1 kg ball of radius 0.1 m at
   (0, 8, 1) rad/s, both thrown), one model of three trees stepped as one, seed 0's
   humanoid velocities; 2 s. Printed as 1. (momenta of the whole system).

Targets (checked with ``--check``, exit 1 on a miss; the exit code is 0 otherwise): humanoid
and world |ΔT|/T <= 1e-4 and both momenta <= 1e-6 relative; cube |ΔT|/T <= 1e-3. A run that raises is
a failure (its message printed), never a crash of the script.

Usage: python bench/free_flight.py [--seeds 5] [--duration 2] [--cube-duration 1] [--dt 1e-3] [--check]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import MechanicsMeter, machine_load  # noqa: E402

from humanoid_sim.contact.environment import Environment  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

HUMANOID_URDF = REPO / "urdf" / "humanoid.urdf"
TARGET_ENERGY = 1e-4
TARGET_MOMENTUM = 1e-6
TARGET_CUBE = 1e-3
CUBE_SIZE = np.array([0.4, 0.3, 0.2])  # [m]
CUBE_MASS = 1.0  # [kg]
CUBE_SPIN = 50.0  # [rad/s]


class FlightResult(NamedTuple):
    """label; t_end [s]; energy_max / energy_final: |ΔT|/T; linear, angular: max relative
    momentum drift (NaN when not measured); failure: message or None; cost: mean step [µs]."""

    label: str
    t_end: float
    energy_max: float
    energy_final: float
    linear: float
    angular: float
    failure: str | None
    cost: float


def free_config(dt: float) -> SimulatorConfig:
    return SimulatorConfig(dt=dt, gravity=np.zeros(3), environment=Environment(ground=None, boxes=()))


def free_joints(urdf_text: str) -> str:
    """The URDF without its ``<dynamics .../>`` elements (joint damping, friction) and with
    every ``<limit velocity>`` set to 1e6 (no velocity limit in reach)."""
    text = re.sub(r"<dynamics\b[^>]*?(/>|>.*?</dynamics>)", "", urdf_text, flags=re.S)
    return re.sub(r'(<limit\b[^>]*?\bvelocity=)"[^"]*"', r'\1"1e6"', text)


def cube_urdf(com_offset: np.ndarray) -> str:
    """A one-link URDF: a box of CUBE_MASS and CUBE_SIZE whose CoM sits at com_offset [m]
    in the link frame (the collision box centred on the CoM)."""
    a, b, c = CUBE_SIZE
    m = CUBE_MASS
    ixx, iyy, izz = m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12
    x, y, z = com_offset
    return f"""<robot name="cube"><link name="cube">
  <inertial><origin xyz="{x} {y} {z}"/><mass value="{m}"/>
    <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>
  <collision><origin xyz="{x} {y} {z}"/><geometry><box size="{a} {b} {c}"/></geometry></collision>
</link></robot>"""


def fly(label: str, sim: Simulator, q0: np.ndarray, v0: np.ndarray, duration: float, momenta: bool) -> FlightResult:
    """Run zero-torque steps from (q0, v0); any exception becomes the result's failure."""
    t_end, e_max, e_fin, lin, ang, costs = 0.0, math.nan, math.nan, math.nan, math.nan, []
    failure = None
    try:
        meter = MechanicsMeter(sim.model, sim.armature)
        sim.set_state(q0, v0)
        s0 = meter(q0, v0)
        T0, P0, L0 = s0.kinetic, s0.linear_momentum, s0.angular_momentum_com
        # a momentum that is zero by construction (a cube spinning about its resting CoM) is
        # compared with the momentum scale of the motion, sqrt(2 m T), instead
        scale = math.sqrt(2.0 * sim.model.total_mass * T0)
        nP, nL = (max(float(np.linalg.norm(x)), 1e-6 * scale) for x in (P0, L0))
        e_max = lin = ang = 0.0
        tau = np.zeros(sim.model.nj)
        for _ in range(int(round(duration / sim.config.dt))):
            t0 = time.perf_counter()
            r = sim.step(tau)
            costs.append(time.perf_counter() - t0)
            t_end = r.t
            s = meter(r.q, r.v)
            e_fin = abs(s.kinetic - T0) / T0
            if not math.isfinite(e_fin):
                raise FloatingPointError("non-finite state or energy")
            e_max = max(e_max, e_fin)
            if momenta:
                lin = max(lin, float(np.linalg.norm(s.linear_momentum - P0)) / nP)
                ang = max(ang, float(np.linalg.norm(s.angular_momentum_com - L0)) / nL)
    except Exception as exc:  # noqa: BLE001 -- a failure is a figure, not a crash
        failure = f"{type(exc).__name__} at t = {t_end:.3f} s: {exc}".splitlines()[0][:200]
    if not momenta:
        lin = ang = math.nan
    cost = float(np.mean(costs)) * 1e6 if costs else math.nan
    return FlightResult(label, t_end, e_max, e_fin, lin, ang, failure, cost)


def ball(rng: np.random.Generator, radius: float) -> np.ndarray:
    """A point uniform in the ball of ``radius`` (3,)."""
    d = rng.normal(size=3)
    return d / np.linalg.norm(d) * radius * rng.uniform() ** (1.0 / 3.0)


def humanoid_runs(args) -> list[FlightResult]:
    try:
        model = load_urdf(free_joints(HUMANOID_URDF.read_text()))
        sim = Simulator(model, free_config(args.dt))
        q0 = sim.reset("stand")
    except Exception as exc:  # noqa: BLE001
        return [FlightResult("humanoid", 0.0, math.nan, math.nan, math.nan, math.nan, f"setup: {type(exc).__name__}: {exc}", math.nan)]
    spin = np.zeros(model.nv)
    spin[3] = 1.0
    fly("warm-up", sim, q0, spin, 10 * args.dt, momenta=False)  # first-call costs, untimed
    out = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        v0 = np.zeros(model.nv)
        v0[:3] = ball(rng, 0.5)
        v0[3:6] = ball(rng, 5.0)
        v0[6:] = rng.uniform(-2.0, 2.0, model.nj)
        label = f"humanoid seed {seed} |ω| {np.linalg.norm(v0[3:6]):.2f}"
        out.append(fly(label, sim, q0, v0, args.duration, momenta=True))
    return out


def world_runs(args) -> list[FlightResult]:
    from humanoid_sim.world import FreeObject, Shape, World, assemble_world_model
    from humanoid_sim.model.robot_model import ShapeKind

    try:
        box, ball_shape = Shape(ShapeKind.BOX, [0.4, 0.3, 0.2]), Shape(ShapeKind.SPHERE, [0.1])
        objects = (
            FreeObject("box", box, 2.0, box.mass_properties(mass=2.0).inertia, position=[3.0, 0.0, 1.0],
                       linear_velocity=[0.2, 0.1, 0.0], angular_velocity=[3.0, -4.0, 5.0]),
            FreeObject("ball", ball_shape, 1.0, ball_shape.mass_properties(mass=1.0).inertia, position=[0.0, -3.0, 0.5],
                       linear_velocity=[0.3, -0.2, 0.1], angular_velocity=[0.0, 8.0, 1.0]),
        )  # fmt: skip
        robot = load_urdf(free_joints(HUMANOID_URDF.read_text()))
        world = assemble_world_model(World(ground=None, objects=objects), robot)
        sim = Simulator.from_world(world, "stand", free_config(args.dt))
        q0, v0 = sim.q, sim.v
    except Exception as exc:  # noqa: BLE001
        return [FlightResult("world", 0.0, math.nan, math.nan, math.nan, math.nan, f"setup: {type(exc).__name__}: {exc}", math.nan)]
    rng = np.random.default_rng(0)
    v0[:3] = ball(rng, 0.5)
    v0[3:6] = ball(rng, 5.0)
    v0[world.model.joint_v_slice] = rng.uniform(-2.0, 2.0, robot.nj)
    return [fly("humanoid + box + ball", sim, q0, v0, args.duration, momenta=True)]


def cube_runs(args) -> list[FlightResult]:
    out = []
    for label, offset in (("cube, origin at CoM", np.zeros(3)), ("cube, origin 0.1 m off CoM", np.array([0.06, -0.05, 0.0624]))):
        try:
            model = load_urdf(cube_urdf(offset))
            sim = Simulator(model, free_config(args.dt))
            q0 = np.zeros(model.nq)
            q0[2] = 1.0
            q0[6] = 1.0  # identity quaternion (x, y, z, w)
            w = CUBE_SPIN * np.ones(3) / np.sqrt(3.0)  # base frame, not a principal axis
            v0 = np.zeros(model.nv)
            v0[3:6] = w
            v0[:3] = np.cross(offset, w)  # origin velocity with the CoM at rest: v_c - w x c = c x w
        except Exception as exc:  # noqa: BLE001
            out.append(FlightResult(label, 0.0, math.nan, math.nan, math.nan, math.nan, f"setup: {type(exc).__name__}: {exc}", math.nan))
            continue
        out.append(fly(label, sim, q0, v0, args.cube_duration, momenta=True))
    return out


def fmt(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2e}"


def print_results(title: str, results: list[FlightResult]) -> None:
    print(title)
    head = f"  {'run':<36}{'t [s]':>7}{'|ΔT|/T max':>12}{'final':>10}{'|ΔP|/|P|':>10}{'|ΔL|/|L|':>10}{'µs/step':>9}"
    print(head)
    for r in results:
        cost = "-" if math.isnan(r.cost) else f"{r.cost:.0f}"
        print(
            f"  {r.label:<36}{r.t_end:>7.3f}{fmt(r.energy_max):>12}{fmt(r.energy_final):>10}{fmt(r.linear):>10}"
            f"{fmt(r.angular):>10}{cost:>9}" + (f"  FAILED: {r.failure}" if r.failure else ""),
            flush=True,
        )


def worst(values) -> float:
    """Largest figure, NaN-proof: NaN (not measured) counts as a miss."""
    vals = list(values)
    return math.inf if any(math.isnan(v) for v in vals) else max(vals, default=math.nan)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5, help="humanoid runs (seeds 0..N-1)")
    p.add_argument("--duration", type=float, default=2.0, help="humanoid flight [s]")
    p.add_argument("--cube-duration", type=float, default=1.0, help="cube spin [s]")
    p.add_argument("--dt", type=float, default=1e-3, help="step [s]")
    p.add_argument("--check", action="store_true", help="exit 1 when a figure misses its target")
    args = p.parse_args(argv)
    if args.duration <= 0 or args.cube_duration <= 0 or args.dt <= 0 or args.seeds < 0:
        p.error("durations and --dt must be > 0, --seeds >= 0")
    print(f"free flight: no gravity, no ground, zero torque, dt = {args.dt * 1e3:g} ms; {machine_load()}", flush=True)
    hum = humanoid_runs(args)
    print_results(f"bundled humanoid, {args.duration:g} s", hum)
    cube = cube_runs(args)
    print_results(f"cube {CUBE_SIZE.tolist()} m, {CUBE_MASS:g} kg, {CUBE_SPIN:g} rad/s about (1,1,1), {args.cube_duration:g} s", cube)
    world = world_runs(args)
    print_results(f"world: the humanoid and two spinning objects as one model, {args.duration:g} s", world)

    misses = []
    if any(r.failure for r in hum + cube + world):
        misses.append(f"{sum(bool(r.failure) for r in hum + cube + world)} runs failed")
    for label, runs in (("humanoid", hum), ("world", world)):
        if not runs:
            continue
        e, lin, ang = worst(r.energy_max for r in runs), worst(r.linear for r in runs), worst(r.angular for r in runs)
        print(f"{label} worst: |ΔT|/T {e:.2e} (target 1e-4), |ΔP|/|P| {lin:.2e}, |ΔL|/|L| {ang:.2e} (target 1e-6)")
        if not e <= TARGET_ENERGY:
            misses.append(f"{label} |ΔT|/T {e:.2e} > {TARGET_ENERGY:g}")
        if not lin <= TARGET_MOMENTUM:
            misses.append(f"{label} linear momentum drift {lin:.2e} > {TARGET_MOMENTUM:g}")
        if not ang <= TARGET_MOMENTUM:
            misses.append(f"{label} angular momentum drift {ang:.2e} > {TARGET_MOMENTUM:g}")
    c = worst(r.energy_max for r in cube)
    print(f"cube worst: |ΔT|/T {c:.2e} (target 1e-3)")
    if not c <= TARGET_CUBE:
        misses.append(f"cube |ΔT|/T {c:.2e} > {TARGET_CUBE:g}")
    print("misses: " + ("; ".join(misses) if misses else "none"))
    return 1 if (args.check and misses) else 0


if __name__ == "__main__":
    sys.exit(main())
