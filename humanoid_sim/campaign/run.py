"""One campaign run, headless and in-process: the Simulator and the controller closed in one
loop, with the run's push, world, model variation, damping, latency and sensor noise; the
result is one row (a dict: run identity, scenario values, metrics).

The loop, per physics step of dt at time t:
  1. every control_dt: the controller sees the measured state (the true q, v plus the run's
     seeded sensor noise) and returns joint torques; the command is given at its time;
  2. the torques go through the latency's delay line (filled with the first command), are
     clamped to the effort limits (the actuator torques of the metrics), and the viscous
     damping -d qdot_j of the true joint velocities is added;
  3. Simulator.step(tau, external_force = J^T F of the push while it acts);
  4. the metrics account for the step; a fall stops the run.
A SimulationError or a controller exception ends the run with its failure reason: a row
like any other, never an exception out of ``run_one``.

Deterministic: the same campaign and RunSpec give the same row in any process (the row's
``wall_time_s`` aside).
"""

from __future__ import annotations

import functools
import time
import traceback
from dataclasses import replace
from typing import Any

import numpy as np

from humanoid_sim.campaign.campaign_file import SOURCE_ROOT, Campaign, CampaignFileError, resolve_path
from humanoid_sim.campaign.controllers import SOLE_FRAMES, build_controller
from humanoid_sim.campaign.metrics import MetricsRecorder, RunMetrics
from humanoid_sim.campaign.model_variation import scaled_model, slope_gravity
from humanoid_sim.campaign.parameter_space import RunSpec
from humanoid_sim.campaign.push import LinkPush
from humanoid_sim.contact.environment import Environment, GroundPlane, Material, load_environment
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.initial_pose import InitialPose, load_initial_poses
from humanoid_sim.simulator.simulator import SimulationError, Simulator, SimulatorConfig

__all__ = ["CONTACT_FORCE_N", "NOT_DETERMINISTIC_COLUMNS", "check_campaign", "failed_row", "load_model", "run_one"]

CONTACT_FORCE_N = 20.0  # [N] vertical sole force above which contact_info says "in contact"
DYNAMIC_TO_STATIC_FRICTION = 0.8  # mu_d / mu_s of the varied materials (the default Material's ratio)
NOT_DETERMINISTIC_COLUMNS = ("wall_time_s",)


@functools.lru_cache(maxsize=4)
def load_model(urdf: str) -> RobotModel:
    """The robot of a URDF, loaded once per process (models are immutable)."""
    return load_urdf(urdf)


@functools.lru_cache(maxsize=4)
def initial_poses(robot: str) -> dict[str, InitialPose]:
    """The named initial poses of a robot from config/initial_poses.yaml (source tree or
    installed share directory), read once per process."""
    return load_initial_poses(resolve_path("config/initial_poses.yaml", SOURCE_ROOT), robot)


@functools.lru_cache(maxsize=4)
def _base_environment(path: str | None) -> Environment:
    return Environment() if path is None else load_environment(path)


def _material(friction: float, restitution: float) -> Material:
    return Material(mu_s=friction, mu_d=DYNAMIC_TO_STATIC_FRICTION * friction, restitution=restitution)


def run_environment(campaign: Campaign, friction: float, restitution: float, terrain: str) -> Environment:
    """The world of a run: the campaign's environment plus the terrain's boxes, every element
    with the run's friction (mu_s; mu_d = 0.8 mu_s) and restitution."""
    env = _base_environment(campaign.world.environment)
    ground = env.ground
    if ground is not None:
        ground = GroundPlane(ground.height, _material(friction, restitution), ground.name)
    boxes = tuple(replace(b, material=_material(friction, restitution))
                  for b in env.boxes + campaign.world.terrain(terrain))
    return Environment(ground=ground, boxes=boxes)


def check_campaign(campaign: Campaign) -> None:
    """Check the names a campaign gives against its robot (push links, allowed contact links,
    initial pose) and build its first run's controller once, so that a mistake is one
    CampaignFileError before any run rather than the same failure in every row."""
    model = load_model(campaign.robot.urdf)
    links = {s.scenario.push_link for s in campaign.runs()}
    for link in sorted(links):
        if link not in model.frames:
            raise CampaignFileError(f"push_link {link!r} is no link of {model.name!r}; valid links: "
                                    f"{', '.join(model.body_names)}")
    for link in campaign.fall.allowed_contact_links:
        if link not in model.body_names:
            raise CampaignFileError(f"fall.allowed_contact_links: {link!r} is no link of {model.name!r}; valid links: "
                                    f"{', '.join(model.body_names)}")
    sim = Simulator(model, SimulatorConfig(dt=campaign.world.physics_dt), poses=initial_poses(model.name))
    try:
        sim.reset(campaign.robot.initial_pose)
    except KeyError as exc:
        raise CampaignFileError(f"robot.initial_pose: {exc.args[0]}") from None
    first = campaign.runs()[0]
    try:
        build_controller(campaign.controller, model, first.scenario)
    except CampaignFileError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CampaignFileError(f"controller: {exc}") from None


def _measured(rng: np.random.Generator, q: np.ndarray, v: np.ndarray, first_joint_q: int, noise_q: float,
              noise_v: float) -> tuple[np.ndarray, np.ndarray]:
    """The state the controller sees: q (nq,), v (nv,) with white noise on the joint positions
    and on every velocity (copies when noisy; the arrays themselves otherwise)."""
    if noise_q > 0.0:
        q = q.copy()
        q[first_joint_q:] += rng.normal(0.0, noise_q, len(q) - first_joint_q)
    if noise_v > 0.0:
        v = v + rng.normal(0.0, noise_v, len(v))
    return q, v


def _identity(spec: RunSpec) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": spec.run_id, "key": spec.key, "seed": spec.seed}
    row.update(spec.scenario.as_row())
    row["push_impulse_ns"] = spec.scenario.push_impulse_ns
    return row


def failed_row(spec: RunSpec, outcome: str, reason: str) -> dict[str, Any]:
    """The row of a run that produced no metrics (e.g. outcome worker_error: its process died)."""
    row = _identity(spec)
    nan = float("nan")
    row.update(RunMetrics(outcome, False, nan, reason, 0.0, nan, nan, nan, nan, "", nan, nan)._asdict())
    row["wall_time_s"] = nan
    return row


def run_one(campaign: Campaign, spec: RunSpec) -> dict[str, Any]:
    """Run one scenario of the campaign; the results row (module docstring)."""
    wall_start = time.perf_counter()
    sc = spec.scenario
    model = load_model(campaign.robot.urdf)
    row = _identity(spec)
    dt = campaign.world.physics_dt
    sim_model = scaled_model(model, sc.mass_scale, sc.inertia_scale)
    env = run_environment(campaign, sc.friction, sc.restitution, sc.terrain)
    sim = Simulator(sim_model, SimulatorConfig(dt=dt, environment=env,
                                               gravity=slope_gravity(model, sc.slope_deg, sc.slope_direction_deg)),
                    poses=initial_poses(model.name))
    q0 = sim.reset(campaign.robot.initial_pose)
    fall = campaign.fall
    min_height = fall.min_base_height_m if fall.min_base_height_m is not None else 0.75 * float(q0[2])
    metrics = MetricsRecorder(model, q0, min_height, fall.allowed_contact_links, dt)
    try:
        controller, control_dt = build_controller(campaign.controller, model, sc)
        controller.reset(sim.q, sim.v, sim.t)
        _loop(campaign, spec, sim, controller, control_dt, metrics)
    except SimulationError as exc:
        metrics.fail("simulation_error", f"SimulationError: {exc}")
    except Exception as exc:  # a user controller may raise anything: the campaign goes on
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        metrics.fail("controller_error", f"{type(exc).__name__}: {exc} ({frame.filename}:{frame.lineno})")
    row.update(metrics.result()._asdict())
    row["wall_time_s"] = time.perf_counter() - wall_start
    return row


def _loop(campaign: Campaign, spec: RunSpec, sim: Simulator, controller: Any, control_dt: float,
          metrics: MetricsRecorder) -> None:
    sc = spec.scenario
    model = sim.model
    dt = sim.config.dt
    nj, nv, nq = model.nj, model.nv, model.nq
    push = LinkPush(model, sc.push_link, sc.push_force_n, sc.push_direction_deg, sc.push_start_s, sc.push_duration_s)
    every = max(1, int(round(control_dt / dt)))
    delay = int(round(sc.latency_s / dt))
    line = np.zeros((delay + 1, nj))  # delay line of commanded torques, one slot per physics step
    effort = model.limits.effort
    damping = sc.joint_damping
    rng = np.random.default_rng(spec.seed)
    sole_bodies = {model.frame(name).body: name for name in SOLE_FRAMES if name in model.frames}
    contact_info = {name: False for name in sole_bodies.values()}
    command_pending = campaign.controller.kind != "stand" and hasattr(controller, "set_command")
    command = campaign.controller.command
    tau_cmd = np.zeros(nj)
    tau_actuator = np.zeros(nj)
    tau = np.zeros(nj)
    fz = dict.fromkeys(sole_bodies, 0.0)
    q, v = sim.q, sim.v  # the state at t (each StepResult's arrays are its own)
    steps = int(round(campaign.duration_s / dt))
    for k in range(steps):
        t = sim.t
        if command_pending and t + 1e-9 >= campaign.controller.command_time_s:
            controller.set_command(*command)
            command_pending = False
        if k % every == 0:
            q_meas, v_meas = _measured(rng, q, v, nq - nj, sc.sensor_noise_q, sc.sensor_noise_v)
            tau_cmd = np.asarray(controller.update(t, q_meas, v_meas, contact_info), dtype=float)
            if tau_cmd.shape != (nj,):
                raise ValueError(f"the controller returned torques of shape {tau_cmd.shape}, expected ({nj},)")
            if k == 0:
                line[:] = tau_cmd
        line[k % (delay + 1)] = tau_cmd
        np.clip(line[(k + 1) % (delay + 1)] if delay else tau_cmd, -effort, effort, out=tau_actuator)
        if damping > 0.0:
            np.multiply(v[nv - nj:], -damping, out=tau)
            tau += tau_actuator
        else:
            tau[:] = tau_actuator
        result = sim.step(tau, external_force=push.generalized_force(q, t))
        q, v = result.q, result.v
        for body in fz:
            fz[body] = 0.0
        for contact in result.contacts:
            if contact.body in fz:
                fz[contact.body] += float(contact.wrench_world[2])
        for body, name in sole_bodies.items():
            contact_info[name] = fz[body] > CONTACT_FORCE_N
        if metrics.record(result, tau_actuator):
            return

