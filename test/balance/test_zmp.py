"""ZMP, support polygon and margin: closed forms and a whole-body momentum cross-check."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.balance.zmp import signed_distance_to_polygon, support_polygon, zmp_from_wrench, zmp_report
from humanoid_sim.dynamics.kinematics import frame_jacobian
from humanoid_sim.dynamics.rigid_body_dynamics import gravity_forces, inverse_dynamics, mass_matrix
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]


def test_zmp_of_a_vertical_force_is_its_point_of_application():
    p = np.array([0.3, -0.2, 0.0])
    f = np.array([0.0, 0.0, 100.0])
    assert np.allclose(zmp_from_wrench(f, np.cross(p, f)), p)


def test_zmp_is_where_the_line_of_action_pierces_the_ground():
    # a force (fx, 0, fz) through (0, 0, h) meets z = 0 at x = -h fx / fz
    fx, fz, h = 30.0, 200.0, 0.5
    f = np.array([fx, 0.0, fz])
    z = zmp_from_wrench(f, np.cross([0.0, 0.0, h], f), height=0.0)
    assert np.allclose(z, [-h * fx / fz, 0.0, 0.0])
    # the same on a plane at height 0.1
    z = zmp_from_wrench(f, np.cross([0.0, 0.0, h], f), height=0.1)
    assert np.allclose(z, [-(h - 0.1) * fx / fz, 0.0, 0.1])
    assert np.all(np.isnan(zmp_from_wrench(np.array([1.0, 0, 0]), np.zeros(3))))  # no f_z


def test_signed_distance_inside_outside_and_degenerate_polygons():
    square = support_polygon(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], float))
    assert len(square) == 4
    assert signed_distance_to_polygon(np.array([0.5, 0.25]), square) == pytest.approx(0.25)
    assert signed_distance_to_polygon(np.array([1.5, 0.5]), square) == pytest.approx(-0.5)
    assert signed_distance_to_polygon(np.array([2.0, 2.0]), square) == pytest.approx(-np.sqrt(2))
    seg = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert signed_distance_to_polygon(np.array([0.5, 0.2]), seg) == pytest.approx(-0.2)
    assert np.isnan(signed_distance_to_polygon(np.array([0.5, 0.2]), np.zeros((0, 2))))


def test_zmp_report_sums_wrenches_about_the_world_origin():
    forces = np.array([[0, 0, 100.0], [0, 0, 300.0]])
    origins = np.array([[0.0, 0.1, 0.0], [0.0, -0.1, 0.0]])
    r = zmp_report(forces, origins, np.zeros((2, 3)), origins[:, :2])
    assert np.allclose(r.zmp, [0.0, -0.05, 0.0])
    assert r.margin == pytest.approx(-0.0)  # on the segment between two points: boundary


def test_zmp_of_contact_wrenches_equals_zmp_of_whole_body_newton_euler():
    """While the humanoid sways its upper body, the ZMP from the solved contact wrenches
    equals the ZMP of the total external wrench implied by the motion: the base rows of
    inverse dynamics ID(q, v, a) = S_base^T F_contact (whole-body momentum rate minus gravity)."""
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    sim = Simulator(model, SimulatorConfig(dt=1e-3))
    q0 = sim.reset("stand")
    ws = DynamicsWorkspace(model)
    waist = model.joint_index("waist_pitch")
    arm = model.joint_index("l_shoulder_pitch")
    m_eff = 1.0 / np.diag(np.linalg.inv(mass_matrix(model, q0)))[6:]
    kp, kd = 900.0 * m_eff, 60.0 * m_eff  # PD at 30 rad/s, critically damped
    checked, zmps = 0, []
    for i in range(400):
        q, v = sim.q, sim.v
        target = q0[7:].copy()
        target[waist] += 0.15 * np.sin(2 * np.pi * 1.5 * i * 1e-3)
        target[arm] += 0.8 * np.sin(2 * np.pi * 2.0 * i * 1e-3)
        # gravity compensation consistent with both soles carrying the body
        J = np.vstack([frame_jacobian(model, q, f) for f in ("l_sole", "r_sole")])
        A = np.hstack([np.vstack([np.zeros((6, model.nj)), np.eye(model.nj)]), J.T])
        hold = np.linalg.lstsq(A, gravity_forces(model, q), rcond=None)[0][: model.nj]
        tau = hold - kp * (q[7:] - target) - kd * v[6:]
        r = sim.step(tau)
        if i % 40 != 39 or r.impulse:
            continue
        zmps_now = r.zmp.zmp[0]
        a = r.acceleration  # v̇ at (q, v), the one the reported wrenches belong to
        base_rows = inverse_dynamics(model, q, v, a)[:6]
        ws.update(q, v)
        F = np.linalg.solve(ws.S[:6], base_rows)  # contact wrench about the world origin
        z_id = zmp_from_wrench(F[:3], F[3:])
        assert np.allclose(r.zmp.zmp, z_id, atol=1e-9)
        assert r.zmp.force == pytest.approx(F[:3], abs=1e-6)
        checked += 1
        assert len(r.contacts) == 2
        zmps.append(zmps_now)
    assert checked >= 8
    assert np.ptp(zmps) > 5e-3  # the ZMP really moved: a dynamic check, not a static one
