"""Micro-benchmark of humanoid_sim.dynamics against Pinocchio, same run, same states.

Prints µs per call of FK, M (CRBA), b (RNEA, a = 0), ABA and the hot path
(DynamicsWorkspace.update = FK + M + b + J̇v terms) for the bundled humanoid and
Talos, Pinocchio side by side with the ratio ours / Pinocchio, and the first-call
time (numba compile or cache load). Run: ``python bench/dynamics.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

t_import = time.perf_counter()
c_import = time.process_time()
from humanoid_sim import dynamics as dyn  # noqa: E402
from humanoid_sim.dynamics import kernels  # noqa: E402
from humanoid_sim.dynamics.workspace import DynamicsWorkspace  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs  # noqa: E402

t_import = time.perf_counter() - t_import
c_import = time.process_time() - c_import


def per_call_us(fn, repeat: int) -> float:
    """Best of 20 batches of repeat/4 calls, µs per call (the minimum filters out
    the time slices lost to other processes on a shared machine)."""
    batch = max(1, repeat // 4)
    best = float("inf")
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, (time.perf_counter() - t0) / batch)
    return best * 1e6


def robots() -> list[tuple[str, Path]]:
    out = [("bundled humanoid", ROOT / "urdf" / "humanoid.urdf")]
    for share in example_robot_data_share_dirs():
        talos = share / "example-robot-data" / "robots" / "talos_data" / "robots" / "talos_reduced.urdf"
        if talos.is_file():
            out.append(("talos_reduced", talos))
            break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    try:
        import pinocchio as pin
    except ImportError:  # still useful without the oracle
        pin = None
    print(f"import humanoid_sim (dynamics, model): {t_import * 1e3:.0f} ms wall, {c_import * 1e3:.0f} ms CPU")
    rng = np.random.default_rng(0)
    for name, path in robots():
        model = load_urdf(path, mimic="independent")
        q = np.zeros(model.nq)
        q[2] = 1.0
        q[6] = 1.0
        q[7:] = rng.uniform(-0.5, 0.5, size=model.nq - 7)
        v = rng.normal(size=model.nv)
        tau = rng.normal(size=model.nv)
        ws = DynamicsWorkspace(model)
        t = ws.tree

        t0, c0 = time.perf_counter(), time.process_time()
        ws.update(q, v)
        ws.forward_dynamics(tau)
        dyn.mass_matrix(model, q), dyn.bias_forces(model, q, v), dyn.forward_dynamics(model, q, v, tau)
        first, first_cpu = time.perf_counter() - t0, time.process_time() - c0

        def fk() -> None:
            kernels.forward_kinematics_nb(
                t.parent, t.joint_type, t.joint_axis, t.R_parent_joint, t.p_parent_joint, t.q_index, q, ws.R, ws.p
            )

        ours = {
            "FK": per_call_us(fk, args.repeat),
            "M (CRBA)": per_call_us(lambda: dyn.mass_matrix(model, q), args.repeat),
            "b (RNEA)": per_call_us(lambda: dyn.bias_forces(model, q, v), args.repeat),
            "ABA": per_call_us(lambda: dyn.forward_dynamics(model, q, v, tau), args.repeat),
            "hot path FK+M+b": per_call_us(lambda: ws.update(q, v), args.repeat),
            "hot path ABA after update": per_call_us(lambda: (ws.update(q, v), ws.forward_dynamics(tau)), args.repeat),
        }
        theirs: dict[str, float] = {}
        if pin is not None:
            pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
            pd = pm.createData()
            qp = pin.neutral(pm)
            vp = np.zeros(pm.nv)
            taup = np.zeros(pm.nv)
            qp[:7] = q[:7]
            for j, joint_name in enumerate(model.joint_names):
                joint = pm.joints[pm.getJointId(joint_name)]
                qp[joint.idx_q] = q[7 + j]
                vp[joint.idx_v] = v[6 + j]
                taup[joint.idx_v] = tau[6 + j]
            vp[:6] = v[:6]
            taup[:6] = tau[:6]
            zero = np.zeros(pm.nv)

            def pin_hot() -> None:
                pin.forwardKinematics(pm, pd, qp, vp, zero)
                pin.crba(pm, pd, qp)
                pin.rnea(pm, pd, qp, vp, zero)

            theirs = {
                "FK": per_call_us(lambda: pin.forwardKinematics(pm, pd, qp), args.repeat),
                "M (CRBA)": per_call_us(lambda: pin.crba(pm, pd, qp), args.repeat),
                "b (RNEA)": per_call_us(lambda: pin.rnea(pm, pd, qp, vp, zero), args.repeat),
                "ABA": per_call_us(lambda: pin.aba(pm, pd, qp, vp, taup), args.repeat),
                "hot path FK+M+b": per_call_us(pin_hot, args.repeat),
                "hot path ABA after update": per_call_us(lambda: (pin_hot(), pin.aba(pm, pd, qp, vp, taup)), args.repeat),
            }
        print(f"\n{name}: nb={model.nb} nv={model.nv}; first calls (compile or cache load): "
              f"{first * 1e3:.0f} ms wall, {first_cpu * 1e3:.0f} ms CPU")
        print(f"  {'':28s} {'ours [µs]':>10s} {'pinocchio [µs]':>15s} {'ratio':>7s}")
        for key, value in ours.items():
            ref = theirs.get(key)
            ref_text = f"{ref:15.2f} {value / ref:7.1f}" if ref else f"{'-':>15s} {'-':>7s}"
            print(f"  {key:28s} {value:10.2f} {ref_text}")


if __name__ == "__main__":
    main()
