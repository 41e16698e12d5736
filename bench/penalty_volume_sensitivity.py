"""Seed 004's penalty method: how its constants (contact/penalty_volume.PenaltyVolumeParams)
change what it does, one constant at a time from the defaults.

A 0.3 kg box (0.2 x 0.1 x 0.05 m, a light link) on its large face, friction mu_s 0.5 /
mu_d 0.4, no restitution. Per row:
- rest: the smallest and largest penetration over 0.4-0.5 s at rest on flat ground [m] and
  m g / (k A) beside it (equal when the box rests still; a range when it rattles, which it
  does where m g / (k A) < g dt^2, i.e. k A dt^2 / m > 1);
- creep: the box placed at rest on a 25 deg incline (tan 25 = 0.93 mu_s: held), its slide
  over 1 s [m] (the regularised friction creeps at about eps r / sqrt(1 - r^2), r = tan / mu_s);
- largest stable dt: the largest of 0.5, 1, 2, 5, 10, 20 ms at which the box dropped tilted (its
  centre at 0.12 m) comes to rest (|v| < 1e-3 after 1.5 s), never rises above its start, stays finite and
  penetrates less than 1 cm.
The machine load is printed beside (the figures are not timings).

Usage: python bench/penalty_volume_sensitivity.py
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import machine_load  # noqa: E402

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation  # noqa: E402
from humanoid_sim.contact.penalty_volume import PenaltyVolumeParams  # noqa: E402
from humanoid_sim.dynamics.spatial import rotation_to_quaternion  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.urdf_builder import free_box_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

MASS, SIZE, G = 0.3, (0.2, 0.1, 0.05), 9.81
AREA = SIZE[0] * SIZE[1]
MATERIAL = Material(0.5, 0.4, 0.0)
SLOPE = np.radians(25.0)
DTS = (0.5e-3, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3)


def sim_of(params: PenaltyVolumeParams, env: Environment, dt: float = 1e-3) -> Simulator:
    cfg = SimulatorConfig(dt=dt, environment=env, contact_method="penalty_volume", penalty_volume=params)
    return Simulator(load_urdf(free_box_urdf(MASS, SIZE)), cfg)


def rest_penetration(params: PenaltyVolumeParams) -> tuple[float, float]:
    sim = sim_of(params, Environment(ground=GroundPlane(0.0, MATERIAL)))
    sim.set_state(np.array([0, 0, SIZE[2] / 2, 0, 0, 0, 1.0]), np.zeros(6))
    pens = [sim.step().max_penetration for _ in range(500)]
    return min(pens[400:]), max(pens[400:])


def creep(params: PenaltyVolumeParams) -> float:
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, SLOPE, 0.0]), np.array([4.0, 2.0, 0.2]), MATERIAL)
    sim = sim_of(params, Environment(ground=None, boxes=(slope,)))
    R = rpy_to_rotation([0.0, SLOPE, 0.0])
    depth = MASS * G * np.cos(SLOPE) / (params.stiffness * AREA)
    p = R[:, 2] * (0.1 + SIZE[2] / 2 - depth)
    sim.set_state(np.concatenate([p, rotation_to_quaternion(R)]), np.zeros(6))
    p0 = sim.q[:3].copy()
    for _ in range(1000):
        r = sim.step()
    return float(np.linalg.norm(r.q[:3] - p0))


def drop_is_stable(params: PenaltyVolumeParams, dt: float) -> bool:
    sim = sim_of(params, Environment(ground=GroundPlane(0.0, MATERIAL)), dt)
    R = rpy_to_rotation([0.2, 0.3, 0.1])
    sim.set_state(np.concatenate([[0.0, 0.0, 0.12], rotation_to_quaternion(R)]), np.zeros(6))
    z0 = sim.q[2]
    try:
        for _ in range(int(round(1.5 / dt))):
            r = sim.step()
            if not (np.all(np.isfinite(r.q)) and r.q[2] <= z0 and r.max_penetration < 0.01):
                return False
    except Exception:  # noqa: BLE001 -- a failed step is unstable
        return False
    return float(np.linalg.norm(r.v)) < 1e-3


def largest_stable_dt(params: PenaltyVolumeParams) -> float:
    best = float("nan")
    for dt in DTS:
        if not drop_is_stable(params, dt):
            break
        best = dt
    return best


def main() -> None:
    base = PenaltyVolumeParams()
    rows = [("defaults", base)]
    for name, values in (("stiffness", (5e6, 8e7)), ("damping", (0.0, 1e6)), ("slip_regularisation", (1e-5, 1e-3)),
                         ("stribeck_velocity", (1e-3, 1e-1)), ("implicit", (False,))):  # fmt: skip
        for value in values:
            rows.append((f"{name}={value:g}" if not isinstance(value, bool) else f"{name}={value}",
                         dataclasses.replace(base, **{name: value})))  # fmt: skip
    print(f"penalty_volume sensitivity: box {MASS} kg {SIZE} m, mu {MATERIAL.mu_s}/{MATERIAL.mu_d} ({machine_load()})")
    print(f"defaults: {base}")
    print(f"{'row':>26} {'rest pen min..max [m]':>21} {'m g/(k A)':>10} {'creep 1 s on 25 deg [m]':>24} {'largest stable dt [ms]':>22}")
    for label, params in rows:
        lo, hi = rest_penetration(params)
        expected = MASS * G / (params.stiffness * AREA)
        slide = creep(params)
        dt = largest_stable_dt(params)
        print(f"{label:>26} {lo:10.3e}..{hi:9.3e} {expected:10.3e} {slide:24.3e} {dt * 1e3:22g}", flush=True)
    print(f"load after: {machine_load()}")


if __name__ == "__main__":
    main()
