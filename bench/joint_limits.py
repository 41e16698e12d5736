"""URDF joint dynamics and velocity limits of the bundled humanoid and public humanoids.

Printed per robot:
- the ranges of <dynamics> damping [N m s/rad] and friction [N m], <limit> velocity [rad/s]
  and effort [N m], and the velocity-limit gain k_v in use [N m s/rad] (URDF safety controller
  or the default e / (0.1 v_max));
- the effective inertia of each joint, m = 1 / (M^-1)_jj [kg m^2] (the rest of the body free:
  the smallest inertia the actuator sees) over the neutral and 20 random configurations, and
  with it: the velocity a 1 ms step at full effort adds, as a multiple of v_max (above ~1 the
  rule evaluated at the start of the step chatters), and the time constant m / k_v [ms] with
  which a joint driven at full effort settles at v_max;
- a drive test: base welded, every joint commanded at full effort (random signs, seed 0) for
  0.3 s at dt = 1 ms with gravity; the largest |qdot| / v_max reached over all joints (1 = held
  exactly), with the rule evaluated at the end of the step joint by joint with diag(M^-1)
  (which ignores how each actuator accelerates the other joints), then coupled over all joints
  with M^-1 (coupled_effort_limits_into: its iterations per step, and the joint-steps beyond
  v_max + e / k_v whose actuator is not braking with its whole effort -- 0 when the rule
  holds; beyond that, the other joints, gravity and Coriolis forces push the joint).
  Position limits are not applied (joints may wrap), which does not matter for velocities;
- the wall time of one coupled solve (floating base, neutral pose, full effort from rest), cold
  and warm-started from its own answer (as from the previous step), with the load average.

Usage: python bench/joint_limits.py  (source scripts/env.sh first; example-robot-data optional)
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from humanoid_sim.dynamics.rigid_body_dynamics import bias_forces, mass_matrix  # noqa: E402
from humanoid_sim.limits.velocity_limits import (  # noqa: E402
    clamp_effort_into,
    coupled_effort_limits_into,
    coupled_work,
    implicit_effort_bounds_into,
    velocity_rule,
)
from humanoid_sim.model import RobotModel, load_urdf, neutral_configuration  # noqa: E402
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs  # noqa: E402

PUBLIC = {
    "talos": "talos_data/robots/talos_reduced.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "icub": "icub_description/robots/icub.urdf",
}
DT = 1e-3


def robots() -> dict[str, Path]:
    found = {"bundled humanoid": REPO / "urdf" / "humanoid.urdf"}
    for share in example_robot_data_share_dirs():
        base = share / "example-robot-data" / "robots"
        if base.is_dir():
            found.update({name: base / rel for name, rel in PUBLIC.items()})
            break
    return found


def load(path: Path, floating_base: bool | None = None) -> RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_urdf(path, mimic="independent", strict_inertia=False, floating_base=floating_base)


def span(values: np.ndarray) -> str:
    return f"{values.min():.3g} .. {values.max():.3g}" + (
        f" ({len(np.unique(values))} values)" if len(np.unique(values)) > 1 else ""
    )


def effective_inertias(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    """Smallest 1 / (M^-1)_jj of each joint over the neutral and 20 random configurations, (nj,)."""
    smallest = np.full(model.nj, np.inf)
    first = model.nv - model.nj
    for k in range(21):
        q = neutral_configuration(model)
        if k:
            lo, hi = np.clip(model.limits.lower, -3, 3), np.clip(model.limits.upper, -3, 3)
            q[model.nq - model.nj :] = lo + rng.random(model.nj) * (hi - lo)
        smallest = np.minimum(smallest, 1.0 / np.diag(np.linalg.inv(mass_matrix(model, q)))[first:])
    return smallest


def drive_at_full_effort(
    path: Path, coupled: bool, seconds: float = 0.3
) -> tuple[float, str, list[int], int]:
    """Largest |qdot| / v_max over joints with finite limits, the joint reaching it, the coupled
    solve's iterations per step, and the joint-steps breaking the rule (see the module docstring)."""
    model = load(path, floating_base=False)
    lim = model.limits
    signs = np.where(np.random.default_rng(0).random(model.nj) < 0.5, -1.0, 1.0)
    tau_cmd = signs * np.where(np.isfinite(lim.effort), lim.effort, 0.0)
    q, v = neutral_configuration(model), np.zeros(model.nv)
    lower, upper, v_end = (np.empty(model.nj) for _ in range(3))
    tau, work, iterations, rule = tau_cmd.copy(), coupled_work(model.nj), [], velocity_rule(model)
    worst, broken = np.zeros(model.nj), 0
    limited = np.isfinite(lim.velocity) & (lim.velocity > 0)
    ramp = np.full(model.nj, np.inf)  # e / k_v: how far past v_max the actuator still need not brake fully
    ramp[lim.k_velocity > 0] = (lim.effort / lim.k_velocity)[lim.k_velocity > 0]
    for _ in range(int(round(seconds / DT))):
        M_inv = np.linalg.inv(mass_matrix(model, q))
        b = bias_forces(model, q, v)
        qdot_free = v - DT * (M_inv @ b)
        if coupled:
            iterations.append(coupled_effort_limits_into(tau_cmd, qdot_free, M_inv, DT, rule, True, work, tau, v_end))
        else:
            implicit_effort_bounds_into(qdot_free, np.diag(M_inv).copy(), DT, rule, lower, upper)
            clamp_effort_into(tau_cmd, lower, upper, tau)
        v = v + DT * (M_inv @ (tau - b))
        q = q + DT * v
        if not np.all(np.isfinite(v)):
            return np.inf, "diverged", iterations, broken
        worst[limited] = np.maximum(worst[limited], np.abs(v[limited]) / lim.velocity[limited])
        beyond = np.abs(v) > lim.velocity + ramp + 1e-9
        braking_fully = np.abs(tau + np.sign(v) * lim.effort) <= 1e-9 * lim.effort
        broken += int(np.sum(beyond & ~braking_fully))
    j = int(np.argmax(worst))
    return float(worst[j]), model.joint_names[j], iterations, broken


def coupled_solve_cost(path: Path) -> tuple[float, float]:
    """Median wall time [us] of one coupled solve, cold and warm-started, for the floating robot in
    its neutral pose, every joint commanded at full effort from rest (random signs, seed 0)."""
    model = load(path)
    rule, nj, first = velocity_rule(model), model.nj, model.nv - model.nj
    q = neutral_configuration(model)
    M_inv = np.linalg.inv(mass_matrix(model, q))
    A = np.ascontiguousarray(M_inv[first:, first:])
    qdot_free = -DT * (M_inv @ bias_forces(model, q, np.zeros(model.nv)))[first:]
    tau_cmd = np.where(np.random.default_rng(0).random(nj) < 0.5, -1.0, 1.0) * np.where(
        np.isfinite(rule.effort), rule.effort, 0.0
    )
    work, tau, v_end = coupled_work(nj), np.empty(nj), np.empty(nj)
    costs = []
    for warm in (False, True):
        coupled_effort_limits_into(tau_cmd, qdot_free, A, DT, rule, warm, work, tau, v_end)  # compile, warm up
        samples = []
        for _ in range(200):
            start = time.perf_counter()
            coupled_effort_limits_into(tau_cmd, qdot_free, A, DT, rule, warm, work, tau, v_end)
            samples.append(time.perf_counter() - start)
        costs.append(1e6 * float(np.median(samples)))
    return costs[0], costs[1]


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} (timings are noisy on a loaded machine)")
    rng = np.random.default_rng(0)
    for name, path in robots().items():
        model = load(path)
        lim, dyn = model.limits, model.joint_dynamics
        print(f"{name} ({path.name}, {model.nj} joints)")
        print(f"  damping [N m s/rad]: {span(dyn.damping)}; friction [N m]: {span(dyn.friction)}")
        print(f"  velocity limit [rad/s]: {span(lim.velocity)}; effort limit [N m]: {span(lim.effort)}")
        print(f"  k_v in use [N m s/rad]: {span(lim.k_velocity)}")
        m = effective_inertias(model, rng)
        ok = np.isfinite(lim.velocity) & (lim.velocity > 0) & (lim.k_velocity > 0)
        step_gain = (lim.effort * DT / m / lim.velocity)[ok]
        settle_ms = (1e3 * m / lim.k_velocity)[ok]
        print(f"  effective inertia 1/(M^-1)_jj [kg m^2]: {span(m)}")
        print(f"  one 1 ms step at full effort adds [v_max]: {span(step_gain)}")
        print(f"  settling time constant m / k_v [ms]: {span(settle_ms)}")
        worst, joint, _, broken = drive_at_full_effort(path, coupled=False)
        print(
            "  all joints at full effort 0.3 s, joint-by-joint end-of-step rule:"
            f" max |qdot| / v_max = {worst:.4f} ({joint}); rule broken in {broken} joint-steps"
        )
        worst, joint, iterations, broken = drive_at_full_effort(path, coupled=True)
        its = np.array(iterations)
        print(
            f"  all joints at full effort 0.3 s, coupled end-of-step rule: max |qdot| / v_max = {worst:.4f}"
            f" ({joint}); rule broken in {broken} joint-steps; iterations per step median"
            f" {np.median(its):.0f}, 99 % {np.percentile(its, 99):.0f}, max {its.max()}, unconverged {np.sum(its >= 200)}"
        )
        cold, warm = coupled_solve_cost(path)
        print(f"  coupled solve, floating base, neutral pose, full effort: {cold:.1f} us cold, {warm:.1f} us warm-started")


if __name__ == "__main__":
    main()
