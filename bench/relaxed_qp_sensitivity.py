"""Sensitivity of seed 002's contact method (contact_method="relaxed_qp") to the constants
the paper leaves open: the regularisation λ (ε / mean diag B), the compensation K dt of
Eq. 10 and k_w of w(x) = 1 - exp(-k_w x) (Eq. 21). One row per setting, the others at
their defaults (RelaxedQpParams()); dt = 1 ms.

Columns:
- rest pen: the box (2 kg, 0.2 x 0.1 x 0.05 m) resting 1 s on the ground: deepest
  penetration at the end [µm] (ε x_n / K);
- |Σf_z/mg - 1|: its total normal force against m g at the end;
- hold: the box on a 10 deg incline (μ_s 0.2 > tan α = 0.176 > μ_d 0.15) for 1.2 s:
  its displacement downhill [µm] (held: the regularisation's give only);
- slide err: on a 30 deg incline (μ_s 0.5, μ_d 0.3) its acceleration over 0.2-0.8 s
  against g (sin α - μ_d cos α), relative;
- drop rise: the box dropped from 0.3 m (tilted), restitution 0: its largest rise after
  first landing [mm] (0: no bounce); rest |v|: its speed 1.5 s after release [m/s];
- pend: seed 002's 10-link pendulum 1 s: deepest penetration [mm], CPU [µs/step].

Usage: python bench/relaxed_qp_sensitivity.py
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mechanics import machine_load  # noqa: E402

from humanoid_sim.contact.environment import Environment, GroundPlane, Material, StaticBox, rpy_to_rotation  # noqa: E402
from humanoid_sim.contact.relaxed_qp import RelaxedQpParams  # noqa: E402
from humanoid_sim.dynamics.spatial import rotation_to_quaternion  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum  # noqa: E402
from humanoid_sim.model.urdf_builder import free_box_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

G = 9.81
MASS, SIZE = 2.0, (0.2, 0.1, 0.05)


def _config(params: RelaxedQpParams, env: Environment) -> SimulatorConfig:
    return SimulatorConfig(environment=env, contact_method="relaxed_qp", relaxed_qp=params)


def _box(params: RelaxedQpParams, env: Environment, q: np.ndarray) -> Simulator:
    sim = Simulator(load_urdf(free_box_urdf(MASS, SIZE)), _config(params, env))
    sim.set_state(q, np.zeros(6))
    return sim


def rest(params: RelaxedQpParams) -> tuple[float, float]:
    env = Environment(ground=GroundPlane(0.0, Material(1.0, 0.4, 0.0)))
    sim = _box(params, env, np.array([0.0, 0.0, SIZE[2] / 2, 0.0, 0.0, 0.0, 1.0]))
    for _ in range(1000):
        r = sim.step()
    fz = sum(c.wrench_world[2] for c in r.contacts)
    return r.max_penetration, abs(fz / (MASS * G) - 1.0)


def incline(params: RelaxedQpParams, alpha_deg: float, mu_s: float, mu_d: float, steps: int):
    alpha = math.radians(alpha_deg)
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, alpha, 0.0]), np.array([4.0, 2.0, 0.2]),
                      Material(mu_s, mu_d, 0.0))  # fmt: skip
    R = rpy_to_rotation([0.0, alpha, 0.0])
    q = np.concatenate([R[:, 2] * (0.1 + SIZE[2] / 2), rotation_to_quaternion(R)])
    sim = _box(params, Environment(ground=None, boxes=(slope,)), q)
    s, t = [], []
    for _ in range(steps):
        r = sim.step()
        s.append((r.q[:3] - q[:3]) @ R[:, 0])
        t.append(r.t)
    return np.array(t), np.array(s), G * (math.sin(alpha) - mu_d * math.cos(alpha))


def drop(params: RelaxedQpParams) -> tuple[float, float]:
    env = Environment(ground=GroundPlane(0.0, Material(1.0, 0.8, 0.0)))
    R = rpy_to_rotation([0.1, -0.05, 0.3])
    sim = _box(params, env, np.concatenate([[0.0, 0.0, 0.3], rotation_to_quaternion(R)]))
    z, touched = [], []
    for _ in range(1500):
        r = sim.step()
        z.append(r.q[2])
        touched.append(bool(r.contacts))
    z = np.array(z[touched.index(True) :])
    rise = max(0.0, float(np.max(z[1:] - np.minimum.accumulate(z)[:-1])))
    return rise, float(np.linalg.norm(r.v))


def pendulum(params: RelaxedQpParams) -> tuple[float, float]:
    spec = BoxPendulum(links=10)
    env = Environment(ground=GroundPlane(material=Material(mu_s=1.0, mu_d=0.4)))
    sim = Simulator(box_pendulum(spec), _config(params, env), poses={})
    sim.set_state(spec.initial_configuration(math.radians(60.0)), np.zeros(sim.model.nv))
    pen, cpu = 0.0, 0.0
    for _ in range(1000):
        c0 = time.process_time()
        r = sim.step()
        cpu += time.process_time() - c0
        pen = max(pen, r.max_penetration)
    return pen, cpu / 1000


def row(label: str, params: RelaxedQpParams) -> str:
    pen, fz = rest(params)
    _, s_hold, _ = incline(params, 10.0, 0.2, 0.15, 1200)
    t, s, expected = incline(params, 30.0, 0.5, 0.3, 800)
    accel = 2.0 * np.polyfit(t[200:], s[200:], 2)[0]
    rise, v_end = drop(params)
    p_pen, p_cpu = pendulum(params)
    return (f"{label:<24} {pen * 1e6:9.3f} {fz:12.1e} {abs(s_hold[-1]) * 1e6:10.3f} {abs(accel / expected - 1):10.1e} "
            f"{rise * 1e3:10.4f} {v_end:9.1e} {p_pen * 1e3:9.3f} {p_cpu * 1e6:9.0f}")  # fmt: skip


def main() -> None:
    base = RelaxedQpParams()
    print(f"relaxed_qp sensitivity, dt = 1 ms, defaults {base} ({machine_load()})")
    pendulum(base)  # compiles / loads the kernels: untimed
    print(f"{'setting':<24} {'rest pen':>9} {'|Σfz/mg-1|':>12} {'hold':>10} {'slide err':>10} {'drop rise':>10} "
          f"{'rest |v|':>9} {'pend pen':>9} {'pend cpu':>9}")  # fmt: skip
    print(f"{'':<24} {'[µm]':>9} {'':>12} {'[µm]':>10} {'':>10} {'[mm]':>10} {'[m/s]':>9} {'[mm]':>9} {'[µs/st]':>9}")
    print(row("defaults", base))
    for reg in (1e-3, 1e-2, 1.0):
        print(row(f"regularisation {reg:g}", replace(base, regularisation=reg)))
    for kdt in (0.05, 0.5, 1.0):
        print(row(f"compensation K dt {kdt:g}", replace(base, compensation=kdt)))
    for k_w in (10.0, 1000.0):
        print(row(f"friction_rate k_w {k_w:g}", replace(base, friction_rate=k_w)))
    print(f"({machine_load()})")


if __name__ == "__main__":
    main()
