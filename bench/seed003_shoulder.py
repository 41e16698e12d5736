"""Seed 003 (swing-twist ranges of motion of ball joints): the right shoulder's range of the
bundled humanoid (config/range_of_motion.yaml), and its arm driven against it.

Printed:
- the boundary: per azimuth φ (every 15 deg; φ = 0 forward, 90 outward) the swing θ_lim where
  the ray from the centre leaves the range (the Hermite boundary of Eq. 3.6-3.15) and the
  twist limits there (Eq. 3.16-3.17), with --plot PATH a polar plot of the boundary and its
  control points (as seed 003's Fig. 2.3);
- a sweep: the humanoid floating without gravity or ground (nothing but the arm's own
  dynamics), the right shoulder driven for 1 s by a constant 20 N m torque about the swing
  axis that leans the arm toward azimuth φ (τ = J_groupᵀ n on the three shoulder joints),
  with the RangeOfMotionProvider (the node's configuration: hard swing-twist range) and
  without it (a plain Simulator: no limit rows at all); per φ: the largest swing θ reached,
  θ_lim at the arm's azimuth then, and how far past the boundary the arm went [deg]
  (max over the steps of θ - θ_lim(φ_now); <= 0: inside).

Usage: python bench/seed003_shoulder.py [--plot docs/reproductions/seed003_shoulder_range.png]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import pyplot, save  # noqa: E402
from mechanics import machine_load  # noqa: E402

from humanoid_sim import package_file  # noqa: E402
from humanoid_sim.contact.environment import Environment  # noqa: E402
from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion  # noqa: E402
from humanoid_sim.limits.ball_joint_rows import BallJointKinematics  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

GROUP = "r_shoulder"
TORQUE = 20.0  # [N m]
SECONDS = 1.0
DT = 1e-3


def theta_lim(boundary, phi: float) -> float:
    """Swing limit θ_lim [rad] along azimuth φ [rad]."""
    return boundary.radial_hit(np.array([math.cos(phi), math.sin(phi)]) * 1e-3).distance


def drive(model, config, group, phi: float, limited: bool) -> tuple[float, float, float]:
    """(largest θ, θ_lim at the arm's azimuth then, largest θ - θ_lim(φ_now)) [rad]."""
    providers = [RangeOfMotionProvider(model, config)] if limited else []
    sim_config = SimulatorConfig(dt=DT, environment=Environment(ground=None), gravity=np.zeros(3))
    sim = Simulator(model, sim_config, providers=providers)
    sim.reset("stand")
    kin = BallJointKinematics(model, group)
    joints = [model.joint_names.index(j) for j in group.joints]
    a, e1, e2 = group.twist_axis, group.zero_azimuth_axis, group.azimuth_axis_2
    n = TORQUE * np.cross(a, math.cos(phi) * e1 + math.sin(phi) * e2)  # swing toward φ, parent frame
    tau = np.zeros(model.nj)
    js = model.joint_q_slice
    best = (-math.inf, 0.0)
    past = -math.inf
    for _ in range(int(round(SECONDS / DT))):
        st = kin.state(sim.q[js][joints])
        tau[:] = 0.0
        tau[joints] = st.J_group.T @ n
        r = sim.step(tau)
        ang = kin.state(r.q[js][joints]).angles
        lim = theta_lim(group.boundary, ang.phi)
        past = max(past, ang.theta - lim)
        if ang.theta > best[0]:
            best = (ang.theta, lim)
    return best[0], best[1], past


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    config = load_range_of_motion(package_file("config/range_of_motion.yaml"))
    group = next(g for g in config.ball_joints if g.name == GROUP)
    b = group.boundary
    print(f"seed 003: {GROUP} range of the bundled humanoid (config/range_of_motion.yaml), {b.n_points} control points")
    print(f"{'φ [deg]':>8} {'θ_lim [deg]':>11} {'twist min..max [deg]':>22}")
    for deg in range(0, 360, 15):
        hit = b.radial_hit(np.array([math.cos(math.radians(deg)), math.sin(math.radians(deg))]) * 1e-3)
        tw = b.boundary_twist(hit.segment, hit.t)
        print(f"{deg:8d} {math.degrees(hit.distance):11.1f} {math.degrees(tw[0]):10.1f} .. {math.degrees(tw[1]):6.1f}")
    model = load_urdf(package_file("urdf/humanoid.urdf"))
    print(f"\narm driven toward φ by {TORQUE:g} N m about the swing axis for {SECONDS:g} s, no gravity, no ground "
          f"({machine_load()}):")  # fmt: skip
    print(f"{'φ [deg]':>8} | {'with the range: θ max':>21} {'θ_lim':>6} {'past':>7} | {'without: θ max':>14} {'θ_lim':>6} {'past':>7}")
    for deg in range(0, 360, 45):
        with_r = drive(model, config, group, math.radians(deg), True)
        without = drive(model, config, group, math.radians(deg), False)
        cells = [f"{math.degrees(x):{w}.1f}" for x, w in zip(with_r + without, (21, 6, 7, 14, 6, 7))]
        print(f"{deg:8d} | {' '.join(cells[:3])} | {' '.join(cells[3:])}")
    print("(past: largest θ - θ_lim(φ) over the run [deg]; <= 0 stayed inside)")
    if args.plot is not None:
        curve = np.array([b.point(i, t) for i in range(b.n_points) for t in np.linspace(0.0, 1.0, 40)])
        phi = np.arctan2(curve[:, 1], curve[:, 0])
        theta = np.hypot(curve[:, 0], curve[:, 1])
        ctrl = np.array([b.point(i, 0.0) for i in range(b.n_points)])
        fig = pyplot().figure(figsize=(4.8, 4.8))
        ax = fig.add_subplot(projection="polar")
        ax.plot(phi, np.degrees(theta), label="boundary (Hermite)")
        ax.plot(np.arctan2(ctrl[:, 1], ctrl[:, 0]), np.degrees(np.hypot(ctrl[:, 0], ctrl[:, 1])), "o", label="control points")
        ax.set_rmax(180)
        ax.set_title(f"{GROUP}: swing θ [deg] vs azimuth φ (0 forward, 90 outward)", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
        save(fig, args.plot)


if __name__ == "__main__":
    main()
