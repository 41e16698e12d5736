"""Cost of one full simulator step of the bundled humanoid in double support, vs MuJoCo.

Both simulators run the same standing scene (bundled humanoid, "stand" pose, flat
ground, dt = 1 ms) under the same holding controller (``holding_controller``: constant
contact-consistent static torques at the initial pose plus a joint PD whose gains hold
the whole-body toppling mode). The MuJoCo model is the same URDF (masses and inertias
as ours: 69 kg), a free joint for the floating base, the same collision shapes (the
feet are boxes), a ground plane, timestep 1 ms and otherwise MuJoCo's defaults (Euler,
Newton solver, pyramidal cone, default solref/solimp); robot geoms touch only the
ground (no self-collision, as in ours). MuJoCo keeps the URDF's joint position limits (its
URDF import makes every revolute joint with a <limit> a limited joint), so ours runs with
them too: each URDF limit a hard stop (``RangeOfMotionConfig()``'s joint stops, the scene of
bench/falls.py). Printed: median and mean step cost [µs],
real-time factor, the cost without the stops (not MuJoCo's scene: what the stops' check costs
a step) and with the range-of-motion provider active, ratio to MuJoCo (and,
beside it, MuJoCo's cost and our ratio with its fourth-order Runge-Kutta integrator, the
order of ours: the targets are against its default),
foot slip [m] and worst penetration [m] of both after the run, and a profile of where
our step spends its time; the cost with self-collision on beside the cost without (same
run, 2 s each). Standing still on rigid contacts, our robot is at rest and its steps take
the constant-acceleration step without the Runge-Kutta stages (dynamics/integrator.py; the
share of such steps is printed); the same scene with both arms swinging (the shoulders'
pitch targets ±0.1 rad at 0.5 Hz, the feet planted) moves on every step and is timed on
both simulators too.

A passive fall beside it: the same humanoid from "stand" with zero torque on both
simulators (same URDF, same joint limits, same initial state), the mean step cost over the first 2 s of the
fall (the collapse onto the ground) for both, and the ratio; where ours spends it (the share
of steps solved by the bounded solve and their cost, the share with an impulse phase); ours also with the
range-of-motion provider, as the node runs it (joints at their stops while it lies), and
without any joint limit (not the same fall: the head and the forearms then swing through
their URDF ranges while the robot lies, which MuJoCo's do not); a fall
that raises is reported with its message and the cost of the steps it made. Each simulator runs the fall once
untimed first (first-call costs). The machine load is printed beside the timings.

Usage: python bench/step.py [seconds=10] [--no-profile] [--no-fall]
"""

from __future__ import annotations

import cProfile
import io
import pstats
import re
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import machine_load  # noqa: E402

from humanoid_sim.dynamics.kinematics import frame_jacobian, frame_placement  # noqa: E402
from humanoid_sim.dynamics.rigid_body_dynamics import gravity_forces, mass_matrix  # noqa: E402
from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion  # noqa: E402
from humanoid_sim.limits.range_config import RangeOfMotionConfig  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

URDF = REPO / "urdf" / "humanoid.urdf"
FEET = ("l_sole", "r_sole")
DT = 1e-3
FALL = 2.0  # [s] of the passive fall timed


SWING = 0.1  # [rad] amplitude of the shoulders' pitch in the swinging-arms scene
SWING_PERIOD = 2.0  # [s]


def holding_controller(model, q0, w: float = 30.0, swing: float = 0.0):
    """tau(q_joints, v_joints, t=0): constant contact-consistent static torques at q0 plus a joint PD.

    swing: amplitude [rad] of a sinusoid (period SWING_PERIOD) added to both shoulders' pitch
    targets: the arms swing, the feet stay planted and every step moves (0: standing still).

    The static torques solve M-free statics with both soles as 6-D contacts (least squares).
    PD gains: kp = w^2 m_eff + 2 k_g, kd = 2 w m_eff + 0.05 s * k_g, with m_eff the inertia of
    the joint with both feet held (1 / diag of the contact-constrained mobility) and k_g the
    toppling stiffness m g l of the load the joint carries (for a leg joint the rest of the
    body, else its subtree; l = distance of the load's COM from the joint). Without k_g the
    whole-body pitch mode is not held (a multi-link inverted pendulum): a simulator with any
    contact compliance (MuJoCo) falls over after ~3 s; an exactly rigid one stays at the
    unstable equilibrium.
    """
    from humanoid_sim.dynamics.workspace import DynamicsWorkspace
    from humanoid_sim.limits.range_config import joint_body

    nj = model.nj
    J = np.vstack([frame_jacobian(model, q0, f) for f in FEET])
    A = np.hstack([np.vstack([np.zeros((6, nj)), np.eye(nj)]), J.T])
    hold = np.linalg.lstsq(A, gravity_forces(model, q0), rcond=None)[0][:nj]
    Minv = np.linalg.inv(mass_matrix(model, q0))
    Y = Minv @ J.T
    m_eff = 1.0 / np.diag(Minv - Y @ np.linalg.solve(J @ Y, Y.T))[6:]
    ws = DynamicsWorkspace(model)
    ws.update(q0, np.zeros(model.nv))
    mass, parent = np.asarray(model.mass, dtype=float), np.asarray(model.parent)
    sub_m = mass.copy()
    sub_c = mass[:, None] * (np.einsum("bij,bj->bi", ws.R, np.asarray(model.com)) + ws.p)
    foot_bodies = {model.frame(f).body for f in FEET}
    has_foot = np.array([i in foot_bodies for i in range(len(mass))])
    for i in range(len(mass) - 1, 0, -1):
        sub_m[parent[i]] += sub_m[i]
        sub_c[parent[i]] += sub_c[i]
        has_foot[parent[i]] |= has_foot[i]
    g = float(np.linalg.norm(model.gravity))
    k_g = np.zeros(nj)
    for j, name in enumerate(model.joint_names):
        b = joint_body(model, name)
        m_load, c_load = (sub_m[0] - sub_m[b], sub_c[0] - sub_c[b]) if has_foot[b] else (sub_m[b], sub_c[b])
        if m_load > 0:
            k_g[j] = m_load * g * float(np.linalg.norm(c_load / m_load - ws.p[b]))
    kp = w * w * m_eff + 2.0 * k_g
    kd = 2.0 * w * m_eff + 0.05 * k_g
    qj0 = q0[7:].copy()
    eff = model.limits.effort
    shoulders = np.zeros(nj)
    shoulders[[model.joint_names.index(n) for n in ("l_shoulder_pitch", "r_shoulder_pitch")]] = swing

    def tau(qj, vj, t: float = 0.0):
        target = qj0 + shoulders * np.sin(2.0 * np.pi * t / SWING_PERIOD)
        return np.clip(hold - kp * (qj - target) - kd * vj, -eff, eff)

    return tau


# Joint limits of our runs: the URDF's as hard stops (MuJoCo's scene), none, or the node's
# range-of-motion provider (config/range_of_motion.yaml: stops and swing-twist ranges).
STOPS, NO_LIMITS, RANGE_OF_MOTION = "URDF stops", "no limits", "range of motion"


def _providers(model, limits: str) -> list:
    """The constraint providers of a run with ``limits`` (STOPS, NO_LIMITS or RANGE_OF_MOTION)."""
    if limits == NO_LIMITS:
        return []
    if limits == STOPS:
        return [RangeOfMotionProvider(model, RangeOfMotionConfig())]
    return [RangeOfMotionProvider(model, load_range_of_motion(REPO / "config" / "range_of_motion.yaml"))]


def run_ours(seconds: float, limits: str = STOPS, self_collision: bool = False, swing: float = 0.0):
    """Our standing run; limits: the joint limits (_providers);
    self_collision: the robot's links collide with each other (SimulatorConfig); swing: the arms'
    amplitude (holding_controller). Returns the step costs [s], foot slip and worst penetration
    [m], the simulator, the controller and the share of the steps taken at rest (StepResult.stages
    0: the constant-acceleration step of dynamics/integrator.py)."""
    model = load_urdf(URDF)
    config = SimulatorConfig(dt=DT, self_collision=self_collision)
    sim = Simulator(model, config, providers=_providers(model, limits))
    q0 = sim.reset("stand")
    ctrl = holding_controller(model, q0, swing=swing)
    sole0 = [frame_placement(model, q0, f)[:3, 3] for f in FEET]
    for _ in range(20):  # compile / warm caches
        sim.step(ctrl(sim.q[7:], sim.v[6:]))
    sim.reset("stand")
    steps = int(round(seconds / DT))
    costs = np.empty(steps)
    pen = 0.0
    at_rest = 0
    for i in range(steps):
        q, v = sim._q, sim._v
        tau = ctrl(q[7:], v[6:], sim.t)
        t0 = time.perf_counter()
        r = sim.step(tau)
        costs[i] = time.perf_counter() - t0
        pen = max(pen, r.max_penetration)
        at_rest += r.stages == 0
    slip = max(float(np.linalg.norm((frame_placement(model, r.q, f)[:3, 3] - s0)[:2])) for f, s0 in zip(FEET, sole0))
    return costs, slip, pen, sim, ctrl, at_rest / steps


def mujoco_model(model, urdf_text: str | None = None, floating: bool = True, rk4: bool = False):
    """MuJoCo model of a URDF (urdf_text; None: the bundled humanoid) as in our scene: a
    ground plane, timestep DT, robot geoms touching the ground only; floating: its root
    body gets a free joint (False: the URDF's base stays fixed to the world); rk4: its
    fourth-order Runge-Kutta integrator instead of its default (Euler)."""
    import mujoco

    src = URDF.read_text() if urdf_text is None else urdf_text
    src = re.sub(
        r"(<robot[^>]*>)",
        r'\1<mujoco><compiler discardvisual="true" balanceinertia="true" fusestatic="false" '
        r'boundmass="1e-6" boundinertia="1e-9"/></mujoco>',
        src,
        count=1,
    )
    fixed = mujoco.MjModel.from_xml_string(src)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "humanoid.xml"
        mujoco.mj_saveLastXML(str(path), fixed)
        root = ET.parse(path).getroot()
    world = root.find("worldbody")
    if floating:
        world.find("body").insert(0, ET.Element("freejoint", name="base"))
    world.insert(0, ET.Element("geom", name="ground", type="plane", size="0 0 1"))
    ET.SubElement(root, "option", timestep=str(DT))
    m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    # robot geoms touch the ground only (our simulator has no self-collision either)
    ground = m.geom("ground").id
    m.geom_contype[:] = 1
    m.geom_conaffinity[:] = 0
    m.geom_contype[ground] = 0
    m.geom_conaffinity[ground] = 1
    if rk4:
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    return m


def mujoco_state(m, model, q0):
    """MjData of m at our configuration q0 (at rest); the joint qpos and dof addresses in
    our joint order."""
    import mujoco

    d = mujoco.MjData(m)
    names = [m.joint(i).name for i in range(1, m.njnt)]
    qadr = np.array([m.jnt_qposadr[m.joint(n).id] for n in model.joint_names])
    dadr = np.array([m.jnt_dofadr[m.joint(n).id] for n in model.joint_names])
    assert sorted(names) == sorted(model.joint_names)
    d.qpos[:3] = q0[:3]
    x, y, z, w = q0[3:7]
    d.qpos[3:7] = (w, x, y, z)
    d.qpos[qadr] = q0[7:]
    mujoco.mj_forward(m, d)
    return d, qadr, dadr


def run_mujoco(seconds: float, model, q0, ctrl, rk4: bool = False):
    """Step costs [s], foot slip [m] and worst penetration [m] of MuJoCo standing under ctrl;
    rk4: its fourth-order Runge-Kutta integrator instead of its default (Euler)."""
    import mujoco

    m = mujoco_model(model, rk4=rk4)
    d, qadr, dadr = mujoco_state(m, model, q0)
    soles = [m.body(f).id for f in FEET]
    sole0 = [d.xpos[b].copy() for b in soles]
    steps = int(round(seconds / DT))
    costs = np.empty(steps)
    pen = 0.0
    for i in range(steps):
        d.qfrc_applied[dadr] = ctrl(d.qpos[qadr], d.qvel[dadr], d.time)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        costs[i] = time.perf_counter() - t0
        if d.ncon:
            pen = max(pen, float(-d.contact.dist[: d.ncon].min()))
    slip = max(float(np.linalg.norm((d.xpos[b] - s0)[:2])) for b, s0 in zip(soles, sole0))
    return costs, slip, pen


class FallRun(NamedTuple):
    """One timed passive fall of ours: costs (steps,) [s]; t_end, the simulated time reached
    [s]; z_end, the base height then [m]; failure, the message of the exception that ended it
    (None when it ran to the end); model; kinds (steps, 3) int: per step, whether the bounded
    solve replaced the checked one, whether an impulse phase ran, and the sweeps."""

    costs: np.ndarray
    t_end: float
    z_end: float
    failure: str | None
    model: object
    kinds: np.ndarray


def fall_ours(seconds: float, limits: str = STOPS) -> FallRun:
    """Our passive fall from "stand" (zero torque), run once untimed and once timed;
    limits: the joint limits (_providers)."""
    model = load_urdf(URDF)
    sim = Simulator(model, SimulatorConfig(dt=DT), providers=_providers(model, limits))
    steps = int(round(seconds / DT))
    costs: list[float] = []
    kinds: list[tuple[bool, bool, int]] = []
    failure = None
    for timed in (False, True):
        sim.reset("stand")
        costs = []
        kinds = []
        try:
            for _ in range(steps):
                t0 = time.perf_counter()
                r = sim.step(None)
                costs.append(time.perf_counter() - t0)
                kinds.append((r.solver == "bounded", bool(r.impulse), int(r.sweeps)))
        except Exception as exc:  # noqa: BLE001 -- a failure is a figure, not a crash
            failure = f"{type(exc).__name__} at t = {sim.t:.3f} s: {exc}".splitlines()[0][:200]
        if not timed:
            failure = None
    kinds_array = np.asarray(kinds, np.int64).reshape(-1, 3)
    return FallRun(np.asarray(costs), sim.t, float(sim.q[2]), failure, model, kinds_array)


def fall_composition(costs: np.ndarray, kinds: np.ndarray) -> str:
    """Where a fall's steps spend their time (costs (n,) [s] and kinds (n, 3), as FallRun's,
    n > 0), two lines: the share of steps whose solve was the bounded one (their mean cost and
    the mean sweeps of their Gauss-Seidel solves) against the steps that passed the checked
    solve of seed 000, and the share that ran an impulse phase; then per kind of step (checked
    or bounded, each with or without an impulse phase) its share of the steps, its mean cost
    and its share of the fall's time, and the time in bounded solves of the fewest sweeps
    (those that the first subspace solve ends)."""
    bounded, impulse, sweeps = kinds[:, 0] == 1, kinds[:, 1] == 1, kinds[:, 2]
    total = costs.sum()

    def mean_us(mask) -> str:
        return f"{costs[mask].mean() * 1e6:.1f} µs" if mask.any() else "-"

    mean_sweeps = f"{sweeps[bounded].mean():.1f}" if bounded.any() else "-"
    parts = [f"{name} {mask.mean():.0%} of the steps at {mean_us(mask)}, {costs[mask].sum() / total:.0%} of the time"
             for name, mask in (("checked", ~bounded & ~impulse), ("checked+impulse", ~bounded & impulse),
                                ("bounded", bounded & ~impulse), ("bounded+impulse", bounded & impulse))
             if mask.any()]
    if bounded.any():
        fewest = bounded & (sweeps == sweeps[bounded].min())
        parts.append(f"bounded solves of {sweeps[bounded].min()} sweeps (the fewest): {fewest.mean():.0%} of the "
                     f"steps, {costs[fewest].sum() / total:.0%} of the time")
    return (
        f"  of its steps: {bounded.mean():.0%} solved by the bounded solve (mean {mean_us(bounded)}, {mean_sweeps} "
        f"sweeps), {1 - bounded.mean():.0%} by the checked solve alone (mean {mean_us(~bounded)}); "
        f"{impulse.mean():.0%} with an impulse phase (mean {mean_us(impulse)})\n"
        "  time by kind of step: " + "; ".join(parts)
    )


def fall_mujoco(seconds: float, model, q0, rk4: bool = False):
    """Step costs [s] of MuJoCo's passive fall from the same q0 (zero torque, at rest), and its
    base height at the end [m]; rk4: its fourth-order Runge-Kutta integrator."""
    import mujoco

    m = mujoco_model(model, rk4=rk4)
    steps = int(round(seconds / DT))
    for timed in (False, True):
        d, _, _ = mujoco_state(m, model, q0)
        costs = np.empty(steps)
        for i in range(steps):
            t0 = time.perf_counter()
            mujoco.mj_step(m, d)
            costs[i] = time.perf_counter() - t0
    return costs, float(d.qpos[2])


def print_fall(seconds: float) -> None:
    """The passive fall on both simulators: mean step cost and ratio."""
    fall_s = min(seconds, FALL)
    print(f"\npassive fall from \"stand\", zero torque, the URDF's joint stops, first {fall_s:g} s ({machine_load()}):")
    ours, t_end, z_end, failure, model, kinds = fall_ours(fall_s)
    if len(ours):
        print(
            f"  humanoid_sim: step cost mean {ours.mean() * 1e6:8.1f} µs, median {np.median(ours) * 1e6:8.1f} µs "
            f"over {len(ours)} steps (to t = {t_end:.3f} s, base height then {z_end:.3f} m)"
            + (f"  FAILED: {failure}" if failure else "")
        )
        print(fall_composition(ours, kinds))
    else:
        print(f"  humanoid_sim: no step made  FAILED: {failure}")
    try:
        q0 = Simulator(model, SimulatorConfig(dt=DT)).reset("stand")
        mj, base_z = fall_mujoco(fall_s, model, q0)
    except ImportError:
        print("  mujoco not installed: no comparison")
        return
    print(
        f"  MuJoCo:       step cost mean {mj.mean() * 1e6:8.1f} µs, median {np.median(mj) * 1e6:8.1f} µs "
        f"(base height at the end {base_z:.3f} m)"
    )
    if len(ours):
        print(
            f"  ratio humanoid_sim / MuJoCo over the fall: mean step {ours.mean() / mj.mean():.1f}, "
            f"median step {np.median(ours) / np.median(mj):.1f}"
        )
    for limits, what in ((RANGE_OF_MOTION, "with the range-of-motion provider (as the node runs)"),
                         (NO_LIMITS, "without joint limits (not the same fall)")):
        lim, _, _, lim_failure, _, _ = fall_ours(fall_s, limits)
        if len(lim):
            print(
                f"  humanoid_sim {what}: step cost mean {lim.mean() * 1e6:8.1f} µs, median "
                f"{np.median(lim) * 1e6:8.1f} µs; ratio to MuJoCo, mean step {lim.mean() / mj.mean():.1f}"
                + (f"  FAILED: {lim_failure}" if lim_failure else "")
            )
    rk, rk_z = fall_mujoco(fall_s, model, q0, rk4=True)
    print(
        f"  MuJoCo RK4:   step cost mean {rk.mean() * 1e6:8.1f} µs, median {np.median(rk) * 1e6:8.1f} µs "
        f"(its Runge-Kutta integrator, the order of ours; base height at the end {rk_z:.3f} m)"
        + (f"; ratio, mean step {ours.mean() / rk.mean():.1f}" if len(ours) else "")
    )


def profile_ours(sim, ctrl, steps: int = 500) -> str:
    sim.reset("stand")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        sim.step(ctrl(sim._q[7:], sim._v[6:], sim.t))
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
    return out.getvalue()


def print_swinging(seconds: float, model, q0) -> None:
    """Standing with the arms swinging (holding_controller's swing): every step moves, so every
    step of ours takes the Runge-Kutta stages; both simulators, the same controller."""
    ours, slip, pen, _, ctrl, rest = run_ours(seconds, swing=SWING)
    mj, mslip, mpen = run_mujoco(seconds, model, q0, ctrl)
    print(
        f"\nstanding, arms swinging ±{SWING:g} rad at {1 / SWING_PERIOD:g} Hz "
        f"(every step moves; {rest:.0%} of ours at rest):\n"
        f"  humanoid_sim: step cost median {np.median(ours) * 1e6:8.1f} µs, mean {ours.mean() * 1e6:8.1f} µs "
        f"(slip {slip:.3e} m, penetration {pen:.3e} m)\n"
        f"  MuJoCo:       step cost median {np.median(mj) * 1e6:8.1f} µs, mean {mj.mean() * 1e6:8.1f} µs "
        f"(slip {mslip:.3e} m, penetration {mpen:.3e} m)\n"
        f"  ratio humanoid_sim / MuJoCo (median step): {np.median(ours) / np.median(mj):.2f}"
    )


def print_standing_mujoco(mj, mslip, mpen, med, seconds) -> None:
    mmed = np.median(mj) * 1e6
    print(f"MuJoCo {__import__('mujoco').__version__}: same scene and controller")
    print(f"  step cost median {mmed:8.1f} µs, mean {mj.mean() * 1e6:8.1f} µs, real-time factor {DT / np.median(mj):6.2f}")
    print(f"  foot slip {mslip:.3e} m, max penetration {mpen:.3e} m after {seconds:g} s")
    print(f"ratio humanoid_sim / MuJoCo (median step): {med / mmed:.2f}")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = float(args[0]) if args else 10.0
    ours, slip, pen, sim, ctrl, rest = run_ours(seconds)
    print(f"humanoid_sim: {sim.model.nv} dof, double support, the URDF's joint stops, dt = {DT * 1e3:.1f} ms, "
          f"{seconds:g} s simulated ({machine_load()})")
    med = np.median(ours) * 1e6
    print(f"  step cost median {med:8.1f} µs, mean {ours.mean() * 1e6:8.1f} µs, real-time factor {DT / np.median(ours):6.2f}")
    print(f"  {rest:.0%} of its steps at rest (the constant-acceleration step, no Runge-Kutta stages)")
    print(f"  foot slip {slip:.3e} m, max penetration {pen:.3e} m after {seconds:g} s")
    bare = run_ours(min(seconds, 2.0), NO_LIMITS)[0]
    print(
        f"  without the joint stops (not MuJoCo's scene): step cost median {np.median(bare) * 1e6:8.1f} µs, "
        f"mean {bare.mean() * 1e6:8.1f} µs"
    )
    lim, lslip, lpen, *_ = run_ours(min(seconds, 2.0), RANGE_OF_MOTION)
    print(
        f"  with the range-of-motion provider: step cost median {np.median(lim) * 1e6:8.1f} µs, "
        f"mean {lim.mean() * 1e6:8.1f} µs (slip {lslip:.3e} m, penetration {lpen:.3e} m)"
    )
    self_costs, sslip, spen, *_ = run_ours(min(seconds, 2.0), self_collision=True)
    base_costs = run_ours(min(seconds, 2.0))[0]  # the same length, right beside it
    print(
        f"  with self-collision: step cost median {np.median(self_costs) * 1e6:8.1f} µs against "
        f"{np.median(base_costs) * 1e6:8.1f} µs without ({np.median(self_costs) / np.median(base_costs):.2f}x; "
        f"slip {sslip:.3e} m, penetration {spen:.3e} m)"
    )
    try:
        mj, mslip, mpen = run_mujoco(seconds, sim.model, sim.reset("stand"), ctrl)
    except ImportError:
        print("mujoco not installed: no comparison")
        mj = None
    if mj is not None:
        print_standing_mujoco(mj, mslip, mpen, med, seconds)
        rk, rslip, rpen = run_mujoco(seconds, sim.model, sim.reset("stand"), ctrl, rk4=True)
        print(
            f"  with MuJoCo's RK4 integrator (the order of ours): step cost median {np.median(rk) * 1e6:8.1f} µs "
            f"(slip {rslip:.3e} m, penetration {rpen:.3e} m); "
            f"ratio humanoid_sim / MuJoCo RK4 {med / (np.median(rk) * 1e6):.2f}"
        )
        print_swinging(seconds, sim.model, sim.reset("stand"))
    if "--no-fall" not in sys.argv:
        print_fall(seconds)
    if "--no-profile" not in sys.argv:
        print("\nwhere our standing step spends its time (cProfile, 500 steps, sorted by own time):")
        print(profile_ours(sim, ctrl))


if __name__ == "__main__":
    main()
