"""Rolling down a slope: a solid sphere, cylinder and capsule of several radii.

Each body starts at rest on the top face of a static box tilted by 20° (μ_s 1, μ_d 0.8)
and rolls for 1 s (dt = 1 ms unless --dt). Printed per body and radius: the downhill
acceleration of its centre (its velocity after 1 s / 1 s) over g sin α beside the closed
form 1 / (1 + I / (m r²)) (5/7 sphere, 2/3 cylinder), the relative error, the largest
slip (tangential speed of the body's material point at the contact), the largest rise of
the centre above its resting height, and the steps without a contact
(test/contact/test_rolling.py asserts the truths).

Usage: python bench/rolling.py [radius ...] [--dt=seconds]   (default radii 0.05 0.1 0.3 m)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from humanoid_sim.contact.environment import Environment, Material, StaticBox, rpy_to_rotation  # noqa: E402
from humanoid_sim.dynamics.spatial import quaternion_to_rotation, rotation_to_quaternion  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.urdf_builder import round_body_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

ALPHA = np.radians(20.0)
G = 9.81
LENGTH = 0.3  # cylinder and capsule segment [m]


def roll(kind: str, radius: float, seconds: float = 1.0, dt: float = 1e-3) -> tuple[float, float, float, float, int]:
    """(measured / g sin α, closed form / g sin α, largest slip [m/s], largest rise [m], steps without contact)."""
    slope = StaticBox("slope", np.zeros(3), np.array([0.0, ALPHA, 0.0]), np.array([40.0, 4.0, 0.2]), Material(1.0, 0.8, 0.0))
    Rs = rpy_to_rotation([0.0, ALPHA, 0.0])
    model = load_urdf(round_body_urdf(kind, 1.0, radius, 0.0 if kind == "sphere" else LENGTH))
    sim = Simulator(model, SimulatorConfig(dt=dt, environment=Environment(ground=None, boxes=(slope,))))
    R_body = np.eye(3) if kind == "sphere" else rpy_to_rotation([np.pi / 2, 0.0, 0.0])
    p0 = Rs[:, 2] * (0.1 + radius)
    sim.set_state(np.concatenate([p0, rotation_to_quaternion(Rs @ R_body)]), np.zeros(6))
    axial = model.inertia_com[0][2, 2]
    expected = 1.0 / (1.0 + axial / radius**2)
    slip = rise = 0.0
    lost = 0
    for _ in range(round(seconds / dt)):
        res = sim.step()
        lost += not res.contacts
        R = quaternion_to_rotation(sim.q[3:7])
        v, w = R @ sim.v[:3], R @ sim.v[3:6]
        slip = max(slip, float(np.linalg.norm((v + np.cross(w, -radius * Rs[:, 2])) @ Rs[:, :2])))
        rise = max(rise, float((sim.q[:3] - p0) @ Rs[:, 2]))
    return float(v @ Rs[:, 0]) / seconds / (G * np.sin(ALPHA)), expected, slip, rise, lost


def main(argv: list[str]) -> None:
    dt = float(next((a.split("=", 1)[1] for a in argv if a.startswith("--dt=")), 1e-3))
    radii = [float(a) for a in argv if not a.startswith("--")] or [0.05, 0.1, 0.3]
    print(f"dt = {dt:g} s; load average {os.getloadavg()[0]:.2f} (the figures do not depend on it)")
    print(f"{'body':9s} {'r [m]':>6s} {'a/(g sin a)':>12s} {'closed form':>12s} {'error':>8s} {'slip [m/s]':>11s} {'rise [m]':>9s} {'no contact':>10s}")
    for kind in ("sphere", "cylinder", "capsule"):
        for r in radii:
            got, want, slip, rise, lost = roll(kind, r, dt=dt)
            print(f"{kind:9s} {r:6.3f} {got:12.5f} {want:12.5f} {got / want - 1:+8.2%} {slip:11.2e} {rise:9.2e} {lost:10d}")


if __name__ == "__main__":
    main(sys.argv[1:])
