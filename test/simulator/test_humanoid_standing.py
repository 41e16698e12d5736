"""Humanoids standing 10 s in double support under a PD + gravity-compensation holding torque.

Truths: a resting body has Σ f_z = m g (no CoM acceleration) and the ZMP under its
CoM; rigid contacts neither slip nor penetrate.
"""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.dynamics.kinematics import center_of_mass, frame_jacobian, frame_placement
from humanoid_sim.dynamics.rigid_body_dynamics import gravity_forces, mass_matrix
from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.model import load_urdf
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs
from humanoid_sim.simulator.initial_pose import InitialPose
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]


def _public_urdf(relative: str) -> Path:
    for share in example_robot_data_share_dirs():
        p = Path(share) / "example-robot-data" / "robots" / relative
        if p.exists():
            return p
    pytest.fail(f"public URDF {relative} not found under example-robot-data")


def joint_gains(model, q0, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-joint PD gains scaled by the joint's effective inertia 1 / (M^-1)_jj at q0
    (critically damped at natural frequency omega [rad/s]), so the explicit PD stays
    stable at dt = 1 ms even on light links (kd dt / m_eff = 2 omega dt << 2)."""
    m_eff = 1.0 / np.diag(np.linalg.inv(mass_matrix(model, q0)))[6:]
    return omega**2 * m_eff, 2.0 * omega * m_eff


def holding_torque(model, q, v, q0, feet, kp, kd) -> np.ndarray:
    """PD about q0 plus the contact-consistent gravity compensation: the minimum-norm
    (τ, f) with S^T τ + J_feet^T f = g(q), i.e. static equilibrium on both soles."""
    nj = model.nj
    J = np.vstack([frame_jacobian(model, q, f) for f in feet])  # (12, nv)
    A = np.hstack([np.vstack([np.zeros((6, nj)), np.eye(nj)]), J.T])
    x = np.linalg.lstsq(A, gravity_forces(model, q), rcond=None)[0]
    return x[:nj] - kp * (q[7:] - q0[7:]) - kd * v[6:]


def _stand(model, sim: Simulator, q0: np.ndarray, feet: tuple[str, str], omega: float, seconds: float = 10.0):
    """Run the holding controller; return per-step records after checks that hold throughout."""
    kp, kd = joint_gains(model, q0, omega)
    dt = sim.config.dt
    steps = int(round(seconds / dt))
    sole0 = {f: frame_placement(model, q0, f)[:3, 3] for f in feet}
    mg = model.total_mass * 9.81
    foot_links = {model.frame(f).body for f in feet}
    fz_err, zmp_com, max_pen, slip = [], [], 0.0, 0.0
    for i in range(steps):
        q, v = sim.q, sim.v
        tau = holding_torque(model, q, v, q0, feet, kp, kd)
        r = sim.step(tau)
        bodies = {c.body for c in r.contacts}
        assert bodies == foot_links, f"step {i}: contacts on {sorted(c.link for c in r.contacts)}"
        assert all(c.kind == ContactKind.SURFACE and c.sticking for c in r.contacts), f"step {i}"
        max_pen = max(max_pen, r.max_penetration)
        if i % 50 == 0 or i == steps - 1:
            for f in feet:
                p = frame_placement(model, r.q, f)[:3, 3]
                slip = max(slip, float(np.linalg.norm((p - sole0[f])[:2])))
        if i >= steps - 1000:  # the last second: settled
            fz = sum(c.wrench_world[2] for c in r.contacts)
            fz_err.append(abs(fz - mg) / mg)
            com = center_of_mass(model, r.q)
            zmp_com.append(float(np.linalg.norm(r.zmp.zmp[:2] - com[:2])))
    return slip, max_pen, max(fz_err), max(zmp_com), r


def test_bundled_humanoid_stands_ten_seconds():
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    q0 = sim.reset("stand")
    slip, pen, fz_err, zmp_com, r = _stand(model, sim, q0, ("l_sole", "r_sole"), omega=30.0)
    assert slip < 1e-6
    assert pen < 1e-5
    assert fz_err < 1e-3
    assert zmp_com < 1e-3
    assert r.zmp.margin > 0.0
    assert r.validated and r.rounds == 1


def test_public_humanoid_g1_stands_ten_seconds():
    model = load_urdf(_public_urdf("g1_description/urdf/g1_29dof_rev_1_0.urdf"))
    pose = InitialPose("zero")  # straight legs, soles flat, base height by FK
    sim = Simulator(model, SimulatorConfig(dt=1e-3), poses={"zero": pose})
    q0 = sim.reset("zero")
    feet = ("left_ankle_roll_link", "right_ankle_roll_link")
    slip, pen, fz_err, zmp_com, r = _stand(model, sim, q0, feet, omega=30.0)
    assert slip < 1e-6
    assert pen < 1e-5
    assert fz_err < 1e-3
    assert zmp_com < 1e-3
