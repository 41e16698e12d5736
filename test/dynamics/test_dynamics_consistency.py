"""Internal consistency and closed-form truths of the dynamics (no Pinocchio).

- ABA(tau) == solve(M, tau - b) and RNEA(ABA(tau)) == tau.
- Kokkevis' contact-space matrix == J M^-1 J^T.
- Jacobians == finite differences of forward kinematics along integrate().
- J̇ v == finite difference of J(q(t)) v.
- A free-floating tree without gravity conserves linear and angular momentum
  over a simulated second (RK4 with ABA), with internal joint torques applied.
- A single revolute pendulum oscillates with the small-amplitude period
  2 pi sqrt(I_pivot / (m g l)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dynamics_oracle import assert_relative_close, random_state, random_tree_model

from humanoid_sim import dynamics as dyn
from humanoid_sim.dynamics.spatial import quaternion_to_rotation, so3_log
from humanoid_sim.model.robot_model import Frame, JointLimits, JointType, RobotModel


@pytest.fixture(params=[True, False], ids=["floating", "fixed"])
def model(request: pytest.FixtureRequest) -> RobotModel:
    return random_tree_model(np.random.default_rng(7), nb=10, floating_base=request.param)


def test_aba_equals_solve_of_crba_and_rnea_inverts_it(model: RobotModel, rng: np.random.Generator) -> None:
    for _ in range(10):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv) * 5.0
        qdd = dyn.forward_dynamics(model, q, v, tau)
        M = dyn.mass_matrix(model, q)
        b = dyn.bias_forces(model, q, v)
        assert_relative_close(qdd, np.linalg.solve(M, tau - b), rel=1e-9, what="ABA vs CRBA")
        assert_relative_close(dyn.inverse_dynamics(model, q, v, qdd), tau, rel=1e-9, what="RNEA(ABA)")
        # M is symmetric positive definite
        assert np.allclose(M, M.T, atol=1e-12)
        assert np.all(np.linalg.eigvalsh(M) > 0.0)


def test_aba_with_external_point_forces_equals_jacobian_transpose(model: RobotModel, rng: np.random.Generator) -> None:
    """A force f at a point c of body i enters as the world wrench (f, c x f) in ABA
    and as J_c^T f in joint space."""
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv)
        X = dyn.forward_kinematics(model, q)
        f_ext = np.zeros((model.nb, 6))
        generalized = np.zeros(model.nv)
        for body in (model.nb - 1, 2):
            c = X[body, :3, 3] + rng.uniform(-0.1, 0.1, size=3)
            f = rng.normal(size=3) * 20.0
            f_ext[body] += np.concatenate([f, np.cross(c, f)])
            generalized += dyn.point_jacobian(model, q, body, c)[:3].T @ f
        M = dyn.mass_matrix(model, q)
        b = dyn.bias_forces(model, q, v)
        expected = np.linalg.solve(M, tau - b + generalized)
        assert_relative_close(dyn.forward_dynamics(model, q, v, tau, f_ext), expected, rel=1e-9, what="ABA f_ext")


def test_contact_space_matrix_is_J_Minv_JT(model: RobotModel, rng: np.random.Generator) -> None:
    for _ in range(5):
        q, _ = random_state(model, rng)
        X = dyn.forward_kinematics(model, q)
        rows = []
        for body in (model.nb - 1, model.nb // 2, 1):
            point = X[body, :3, 3] + rng.uniform(-0.1, 0.1, size=3)
            rows.append(dyn.point_jacobian(model, q, body, point))
        J_c = np.vstack(rows)  # 18 contact rows
        A = dyn.contact_space_matrix(model, q, J_c)
        expected = J_c @ np.linalg.solve(dyn.mass_matrix(model, q), J_c.T)
        assert_relative_close(A, expected, rel=1e-9, what="J M^-1 J^T")


def test_point_jacobian_matches_finite_differences(model: RobotModel, rng: np.random.Generator) -> None:
    """Column k: (d/dε) of the point's position and orientation along integrate(q, e_k ε)."""
    eps = 1e-6
    for _ in range(3):
        q, _ = random_state(model, rng)
        body = model.nb - 1
        offset = rng.uniform(-0.2, 0.2, size=3)  # point fixed to the body, body frame
        X0 = dyn.forward_kinematics(model, q)[body]
        J = dyn.point_jacobian(model, q, body, X0[:3, :3] @ offset + X0[:3, 3])
        J_fd = np.empty_like(J)
        for k in range(model.nv):
            dv = np.zeros(model.nv)
            dv[k] = eps
            Xp = dyn.forward_kinematics(model, dyn.integrate(model, q, dv))[body]
            Xm = dyn.forward_kinematics(model, dyn.integrate(model, q, -dv))[body]
            J_fd[:3, k] = ((Xp[:3, :3] @ offset + Xp[:3, 3]) - (Xm[:3, :3] @ offset + Xm[:3, 3])) / (2 * eps)
            J_fd[3:, k] = so3_log(Xp[:3, :3] @ Xm[:3, :3].T) / (2 * eps)
        assert_relative_close(J, J_fd, rel=1e-7, what="J vs finite differences")


def test_drift_matches_finite_difference_of_jacobian_times_v(model: RobotModel, rng: np.random.Generator) -> None:
    """J̇ v = d/dt (J(q(t)) v) at t = 0 with q(t) = integrate(q, v t), the point
    moving with the body."""
    h = 1e-5
    for _ in range(5):
        q, v = random_state(model, rng)
        body = int(rng.integers(1, model.nb))
        offset = rng.uniform(-0.2, 0.2, size=3)

        def Jv(t: float) -> np.ndarray:
            qt = dyn.integrate(model, q, v, t)
            X = dyn.forward_kinematics(model, qt)[body]
            return dyn.point_jacobian(model, qt, body, X[:3, :3] @ offset + X[:3, 3]) @ v

        X0 = dyn.forward_kinematics(model, q)[body]
        drift = dyn.point_drift_acceleration(model, q, v, body, X0[:3, :3] @ offset + X0[:3, 3])
        assert_relative_close(drift, (Jv(h) - Jv(-h)) / (2 * h), rel=1e-6, what="J̇v vs FD")


def _configuration_rate(model: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dq/dt in the embedding R^nq: base position R v_lin, quaternion ½ quat ⊗ (ω, 0)."""
    qdot = np.zeros(model.nq)
    if model.floating_base:
        x, y, z, w = q[3:7]
        R = quaternion_to_rotation(q[3:7])
        qdot[:3] = R @ v[:3]
        wx, wy, wz = v[3:6]
        qdot[3:7] = 0.5 * np.array(
            [w * wx + y * wz - z * wy, w * wy + z * wx - x * wz, w * wz + x * wy - y * wx, -x * wx - y * wy - z * wz]
        )
        qdot[7:] = v[6:]
    else:
        qdot[:] = v
    return qdot


def _rk4_step(model: RobotModel, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float) -> tuple:
    """Classical RK4 on (q, v) with q in its embedding (quaternion renormalised at the end;
    the kinematics normalise the stage quaternions), 4th order overall."""

    def rate(qs: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _configuration_rate(model, qs, vs), dyn.forward_dynamics(model, qs, vs, tau)

    k1q, k1v = rate(q, v)
    k2q, k2v = rate(q + dt / 2 * k1q, v + dt / 2 * k1v)
    k3q, k3v = rate(q + dt / 2 * k2q, v + dt / 2 * k2v)
    k4q, k4v = rate(q + dt * k3q, v + dt * k3v)
    q_next = dyn.normalize_configuration(model, q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q))
    return q_next, v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)


def _spatial_momentum(model: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Total (linear, angular about the world origin) momentum, world frame."""
    ws = dyn.DynamicsWorkspace(model)
    ws.update(q, v)
    return np.einsum("bij,bj->i", ws.Iw, ws.V)


def _momentum_by_points(model: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The same momentum from first principles: COM velocities by Jacobians."""
    X = dyn.forward_kinematics(model, q)
    linear = np.zeros(3)
    angular = np.zeros(3)
    for i in range(model.nb):
        c = X[i, :3, :3] @ model.com[i] + X[i, :3, 3]
        twist = dyn.point_jacobian(model, q, i, c) @ v
        p = model.mass[i] * twist[:3]
        linear += p
        angular += np.cross(c, p) + X[i, :3, :3] @ model.inertia_com[i] @ X[i, :3, :3].T @ twist[3:]
    return np.concatenate([linear, angular])


def test_free_floating_tree_conserves_momentum_without_gravity(rng: np.random.Generator) -> None:
    model = random_tree_model(np.random.default_rng(11), nb=8, floating_base=True, gravity=(0.0, 0.0, 0.0))
    q, v = random_state(model, rng)
    v *= 0.5
    tau = np.zeros(model.nv)
    tau[6:] = rng.normal(size=model.nv - 6)  # internal joint torques keep momentum
    h0 = _momentum_by_points(model, q, v)
    assert_relative_close(_spatial_momentum(model, q, v), h0, rel=1e-12, what="momentum formulas")
    dt = 1e-3
    for _ in range(1000):  # one simulated second
        q, v = _rk4_step(model, q, v, tau, dt)
    h1 = _momentum_by_points(model, q, v)
    assert np.linalg.norm(h0) > 1.0
    assert np.max(np.abs(h1 - h0)) < 1e-8 * max(1.0, np.max(np.abs(h0))), (h0, h1)
    assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12


def _pendulum(length: float, mass: float, radius_of_gyration: float) -> RobotModel:
    """One link hinged at the world origin about y, COM at -length along z."""
    inertia = mass * radius_of_gyration**2 * np.eye(3)
    return RobotModel(
        name="pendulum",
        body_names=("world_anchor", "rod"),
        parent=np.array([-1, 0]),
        joint_type=np.array([JointType.FIXED_TO_WORLD, JointType.REVOLUTE]),
        joint_axis=np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        X_parent_joint=np.tile(np.eye(4), (2, 1, 1)),
        mass=np.array([0.0, mass]),
        com=np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -length]]),
        inertia_com=np.array([np.zeros((3, 3)), inertia]),
        q_index=np.array([0, 0]),
        v_index=np.array([0, 0]),
        nq=1,
        nv=1,
        joint_names=("hinge",),
        limits=JointLimits(*(np.array([v]) for v in (-np.inf, np.inf, np.inf, np.inf))),
        frames={"rod": Frame("rod", 1, np.eye(4))},
    )


def test_pendulum_small_amplitude_period() -> None:
    length, mass, k = 0.8, 2.0, 0.1
    model = _pendulum(length, mass, k)
    g = 9.81
    period = 2 * math.pi * math.sqrt((mass * k**2 + mass * length**2) / (mass * g * length))
    q, v = np.array([0.01]), np.array([0.0])
    dt = 1e-3
    t = 0.0
    crossings = []
    while len(crossings) < 5:  # downward zero crossings of the angle
        q_next, v_next = _rk4_step(model, q, v, np.zeros(1), dt)
        t_next = t + dt
        if q[0] > 0.0 >= q_next[0]:
            crossings.append(t + dt * q[0] / (q[0] - q_next[0]))
        q, v, t = q_next, v_next, t_next
    measured = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    # finite amplitude lengthens the period by ~ theta0^2 / 16 = 6e-6
    assert abs(measured - period) / period < 2e-5, (measured, period)
    # equilibrium: no torque needed hanging straight down, m g l sin(θ) otherwise
    assert abs(dyn.gravity_forces(model, np.array([0.0]))[0]) < 1e-12
    assert dyn.gravity_forces(model, np.array([0.3]))[0] == pytest.approx(mass * g * length * math.sin(0.3), rel=1e-12)
