"""Seed 001 (Jacobian inverse kinematics), the sample program: the 3-link, 8-DOF chain's
effector moved in a straight line to a target, its error per iteration.

The chain, as the sample's FK builds it: three links of length 1 along z at zero angles;
joints (root first) X, Y, Z at the root, X, Y, Z at the end of link 1, X, Y at the end of
link 2; the effector at the end of link 3 (at (0, 0, 3) when all angles are 0). Here a
RobotModel built in code (URDF text: revolute joints without limits; massless joint
links, light 0.1 kg link boxes: only the kinematics matter).

The sample's loop: e = target - p; stop when |e| < step / 2 (step = 0.01); else move the
effector by step * e / |e| through the pseudo-inverse of the 3 x 8 position Jacobian,
W = I and redundancy η = 0. Here the pseudo-inverse is the library's
(humanoid_sim.control.inverse_kinematics.damped_weighted_pseudo_inverse: W^-1 J^T (J W^-1
J^T + λ^2 I)^-1 with λ only near singular postures), the Jacobian the library's
(frame_jacobian). For comparison the library's solve_ik (damped Newton steps on the whole
error, not a straight line) from the same start to the pose where the walk ended.

Targets: the origin (the sample's recorded movie: the effector moved to the origin; the
chain folds into a triangle) and (1, 1, 1); start: every joint 0.1 rad (all zeros is the
stretched singular posture the sample's text warns about: a -z step there has no solution;
the damped inverse makes no progress on it: printed too).

Usage: python bench/seed001_ik.py [--plot docs/reproductions/seed001_ik_convergence.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import pyplot, save  # noqa: E402

from humanoid_sim.control.inverse_kinematics import (  # noqa: E402
    FrameTask,
    IKParams,
    damped_weighted_pseudo_inverse,
    solve_ik,
)
from humanoid_sim.dynamics.kinematics import frame_jacobian, frame_placement  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.urdf_builder import box_link_xml  # noqa: E402

AXES = ("x", "y", "z", "x", "y", "z", "x", "y")
STEP = 0.01


def sample_chain_urdf() -> str:
    """The sample's 8-DOF chain as URDF text; frame ``effector`` at the tip."""
    axis = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}
    parts = ['<robot name="sample_chain"><link name="world"/>']
    parent, offset = "world", 0.0
    for k, a in enumerate(AXES):
        last_of_link = k in (2, 5, 7)
        name = f"j{k}_{a}"
        child = f"link_after_j{k}"
        if last_of_link:  # a link of length 1 along z follows
            parts.append(box_link_xml(child, 0.1, (0.05, 0.05, 1.0), com=(0.0, 0.0, 0.5), collision=False))
        else:
            parts.append(f'<link name="{child}"><inertial><mass value="0"/>'
                         '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>')
        parts.append(
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 {offset!r}"/><axis xyz="{axis[a]}"/>'
            '<limit lower="-1e3" upper="1e3" effort="1" velocity="1"/></joint>'
        )
        parent, offset = child, (1.0 if last_of_link else 0.0)
    parts.append('<link name="effector"><inertial><mass value="0"/>'
                 '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>')
    parts.append(f'<joint name="tip" type="fixed"><parent link="{parent}"/><child link="effector"/>'
                 '<origin xyz="0 0 1"/></joint></robot>')  # fmt: skip
    return "".join(parts)


def straight_line(model, q0: np.ndarray, target: np.ndarray, max_iterations: int = 2000):
    """The sample's loop; returns (q, errors per iteration)."""
    params = IKParams()
    w_inv = np.ones(model.nv)
    q = q0.copy()
    errors = []
    for _ in range(max_iterations):
        e = target - frame_placement(model, q, "effector")[:3, 3]
        dist = float(np.linalg.norm(e))
        errors.append(dist)
        if dist < STEP / 2:
            break
        J = frame_jacobian(model, q, "effector")[:3]
        q = q + damped_weighted_pseudo_inverse(J, w_inv, params) @ (e * STEP / dist)
    return q, errors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    model = load_urdf(sample_chain_urdf())
    print(f"seed 001 sample chain: {model.nj} joints {[n for n in model.joint_names]}, "
          f"effector at {frame_placement(model, np.zeros(model.nj), 'effector')[:3, 3]} at zero angles")  # fmt: skip
    runs = {}
    for label, q0, target in (
        ("origin from 0.1 rad", np.full(model.nj, 0.1), np.zeros(3)),
        ("(1, 1, 1) from 0.1 rad", np.full(model.nj, 0.1), np.ones(3)),
        ("origin from 0 (stretched)", np.zeros(model.nj), np.zeros(3)),
    ):
        q, errors = straight_line(model, q0, target)
        p = frame_placement(model, q, "effector")[:3, 3]
        reached = errors[-1] < STEP / 2
        print(f"\n{label}: straight-line walk, step {STEP}: {'reached' if reached else 'NOT reached'} in "
              f"{len(errors) - 1} iterations, final |e| = {errors[-1]:.2e} m, effector {np.round(p, 4)}")  # fmt: skip
        shown = sorted({0, 1, 2, 5, 10, 20, 50, 100, 150, 200, len(errors) - 1} & set(range(len(errors))))
        print("  iteration: |e| [m]  " + "  ".join(f"{i}: {errors[i]:.4f}" for i in shown))
        if reached:
            res = solve_ik(model, q0, [FrameTask("effector", _pose(target, frame_placement(model, q, "effector")), 1.0)],
                           params=IKParams(max_iterations=100))  # fmt: skip
            print(f"  library solve_ik (Newton, pose of the walk's end as target, from the same start): "
                  f"converged {res.converged} in {res.iterations} iterations, |e| {res.error:.1e}")  # fmt: skip
        runs[label] = errors
    if args.plot is not None:
        fig, ax = pyplot().subplots(figsize=(7, 3.5))
        for label, errors in runs.items():
            ax.plot(errors, label=label)
        ax.axhline(STEP / 2, color="k", lw=0.5, ls="--", label="stop: step / 2")
        ax.set_xlabel("iteration")
        ax.set_ylabel("|target - effector| [m]")
        ax.set_title("seed 001 sample chain (8 DOF): straight-line walk to the target, step 0.01")
        ax.legend(fontsize=8)
        save(fig, args.plot)


def _pose(target: np.ndarray, X_end: np.ndarray) -> np.ndarray:
    X = X_end.copy()
    X[:3, 3] = target
    return X


if __name__ == "__main__":
    main()
