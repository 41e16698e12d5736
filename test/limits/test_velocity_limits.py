"""Velocity limits by effort bounds: the ros_control rule's truths, and joints driven at full effort stay
at their velocity limit when the rule is evaluated at the end of the step."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim.dynamics.rigid_body_dynamics import bias_forces, mass_matrix
from humanoid_sim.limits.velocity_limits import (
    EffortBounds,
    clamp_effort_into,
    coupled_effort_limits,
    coupled_effort_limits_into,
    coupled_work,
    effort_bounds,
    effort_bounds_into,
    implicit_effort_bounds,
    implicit_effort_bounds_into,
    velocity_rule,
)
from humanoid_sim.model import JointLimits, load_urdf
from humanoid_sim.model.robot_model import VELOCITY_LIMIT_BAND, default_k_velocity
from humanoid_sim.model.urdf_builder import chain_urdf


def limits(effort, velocity, k_velocity=None) -> JointLimits:
    effort = np.atleast_1d(np.asarray(effort, dtype=float))
    n = len(effort)
    return JointLimits(
        lower=np.full(n, -np.inf),
        upper=np.full(n, np.inf),
        velocity=np.broadcast_to(np.asarray(velocity, dtype=float), (n,)).copy(),
        effort=effort,
        k_velocity=None if k_velocity is None else np.broadcast_to(np.asarray(k_velocity, float), (n,)).copy(),
    )


def test_at_rest_and_below_the_band_the_full_effort_is_available() -> None:
    lim = limits([10.0, 100.0], [1.0, 15.0])  # default gains: ramp over the last 10 % of v_max
    for qdot in ([0.0, 0.0], [0.89, -13.4], [-0.89, 13.4]):
        lower, upper = effort_bounds(lim, np.array(qdot))
        np.testing.assert_array_equal(lower, [-10.0, -100.0])
        np.testing.assert_array_equal(upper, [10.0, 100.0])


def test_the_bound_falls_to_zero_at_the_limit_and_brakes_beyond() -> None:
    e, v = 10.0, 1.0
    lim = limits(e, v)
    k = lim.k_velocity[0]
    assert k == pytest.approx(e / (VELOCITY_LIMIT_BAND * v))
    # forward: the upper bound ramps down over the band, is 0 at v_max, brakes beyond
    for qdot, upper in ((v - 0.05, 5.0), (v, 0.0), (v + 0.05, -5.0), (v + 1.0, -e)):
        bounds = effort_bounds(lim, np.array([qdot]))
        assert bounds.upper[0] == pytest.approx(upper), qdot
        assert bounds.lower[0] == -e  # pushing backwards stays fully allowed
    # backwards: the mirror image
    for qdot, lower in ((-v + 0.05, -5.0), (-v, 0.0), (-v - 0.05, 5.0), (-v - 1.0, e)):
        bounds = effort_bounds(lim, np.array([qdot]))
        assert bounds.lower[0] == pytest.approx(lower), qdot
        assert bounds.upper[0] == e
    # far beyond: both bounds brake with the whole effort
    assert effort_bounds(lim, np.array([5.0])) == EffortBounds(np.array([-e]), np.array([-e]))


def test_bounds_are_ros_controls_saturated_rule(rng: np.random.Generator) -> None:
    n = 200
    e, v, k = rng.uniform(0.1, 300, n), rng.uniform(0.1, 30, n), rng.uniform(0.1, 5000, n)
    qdot = rng.uniform(-2, 2, n) * v
    lower, upper = effort_bounds(limits(e, v, k), qdot)
    np.testing.assert_allclose(lower, np.clip(-k * (qdot + v), -e, e), rtol=1e-15, atol=0)
    np.testing.assert_allclose(upper, np.clip(-k * (qdot - v), -e, e), rtol=1e-15, atol=0)


def test_bounds_are_ordered_inside_the_effort_limits_and_never_nan(rng: np.random.Generator) -> None:
    n = 4000
    pick = lambda values: rng.choice(np.array(values, dtype=float), n)  # noqa: E731
    e = pick([0.0, 1e-3, 1.0, 300.0, np.inf])
    v = pick([0.0, 1e-3, 1.0, 30.0, np.inf])
    k = pick([0.0, 1e-3, 1.0, 1e3, 1e9])
    qdot = pick([-np.inf, -50.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 50.0, np.inf, np.nan]) * rng.uniform(0.5, 1.5, n)
    for lower, upper in (
        effort_bounds(limits(e, v, k), qdot),
        implicit_effort_bounds(limits(e, v, k), qdot, pick([0.0, 1e-3, 1.0, 1e4, np.inf]), 1e-3),
    ):
        assert not np.any(np.isnan(lower)) and not np.any(np.isnan(upper))
        assert np.all(lower <= upper)
        assert np.all(-e <= lower) and np.all(upper <= e)


def test_without_a_velocity_limit_or_gain_only_the_effort_limit_applies() -> None:
    qdot = np.array([0.0, 1e3, -1e3, np.nan])
    for lim in (limits([5.0] * 4, np.inf, 7.0), limits([5.0] * 4, 1.0, 0.0)):
        lower, upper = effort_bounds(lim, qdot)
        np.testing.assert_array_equal(lower, np.full(4, -5.0))
        np.testing.assert_array_equal(upper, np.full(4, 5.0))
    # no effort limit, an explicit gain: the unsaturated linear rule
    lower, upper = effort_bounds(limits(np.inf, 2.0, 3.0), np.array([0.5]))
    assert (lower[0], upper[0]) == (-3.0 * 2.5, 3.0 * 1.5)
    # no effort at all (public URDFs' placeholder effort="0" velocity="0")
    lower, upper = effort_bounds(limits(0.0, 0.0), np.array([0.3]))
    assert lower[0] == 0.0 and upper[0] == 0.0


def test_wrappers_take_a_model_or_its_limits_and_check_shapes() -> None:
    model = load_urdf(chain_urdf(3, effort=20.0, velocity=2.0))
    qdot = np.array([0.0, 1.95, -3.0])
    from_model, from_limits = effort_bounds(model, qdot), effort_bounds(model.limits, qdot)
    np.testing.assert_array_equal(from_model.lower, from_limits.lower)
    np.testing.assert_array_equal(from_model.upper, from_limits.upper)
    np.testing.assert_allclose(from_model.upper, [20.0, 5.0, 20.0])
    with pytest.raises(ValueError, match=r"qdot has shape \(2,\), expected \(3,\)"):
        effort_bounds(model, np.zeros(2))
    with pytest.raises(ValueError, match=r"inverse_inertia has shape \(1,\), expected \(3,\)"):
        implicit_effort_bounds(model, qdot, np.ones(1), 1e-3)


def test_kernels_write_into_the_callers_arrays_and_clamp_in_place() -> None:
    lim = limits([10.0, 10.0], 1.0)
    lower, upper = np.full(2, np.nan), np.full(2, np.nan)
    effort_bounds_into(np.array([0.0, 0.975]), velocity_rule(lim), lower, upper)
    np.testing.assert_allclose(upper, [10.0, 2.5])
    tau = np.array([-50.0, 50.0])
    clamp_effort_into(tau, lower, upper, tau)
    np.testing.assert_allclose(tau, [-10.0, 2.5])
    # with an infinitely heavy joint (inverse inertia 0) the implicit rule is the explicit one
    implicit_effort_bounds_into(np.array([0.0, 0.975]), np.zeros(2), 1e-3, velocity_rule(lim), lower, upper)
    np.testing.assert_allclose(upper, [10.0, 2.5])


def drive_one_joint(
    inertia: float, k: float, *, implicit: bool, load: float = 0.0, tau_cmd: float = 10.0, seconds: float = 0.5
) -> np.ndarray:
    """Velocity history [rad/s] of one joint of ``inertia`` [kg m^2] driven by ``tau_cmd`` [N m] with
    effort limit 10 N m and velocity limit 1 rad/s, plus an external ``load`` [N m], at dt = 1 ms."""
    dt, lim = 1e-3, limits(10.0, 1.0, k)
    qdot, history = np.zeros(1), []
    lower, upper, tau = np.empty(1), np.empty(1), np.empty(1)
    for _ in range(int(round(seconds / dt))):
        if implicit:
            qdot_free = qdot + dt * load / inertia
            inverse_inertia = np.array([1.0 / inertia])
            implicit_effort_bounds_into(qdot_free, inverse_inertia, dt, velocity_rule(lim), lower, upper)
        else:
            effort_bounds_into(qdot, velocity_rule(lim), lower, upper)
        clamp_effort_into(np.array([tau_cmd]), lower, upper, tau)
        qdot = qdot + dt * (tau + load) / inertia
        history.append(qdot[0])
    return np.array(history)


DEFAULT_K = 10.0 / (VELOCITY_LIMIT_BAND * 1.0)


@pytest.mark.parametrize("inertia", [4e-4, 2e-2, 1.0, 10.0])  # a humanoid's wrist ... a loaded hip
@pytest.mark.parametrize("k", [DEFAULT_K, 1.0, 1e6])
def test_full_effort_against_a_1_rad_s_limit_stays_at_the_limit(inertia: float, k: float) -> None:
    forward = drive_one_joint(inertia, k, implicit=True)
    backward = drive_one_joint(inertia, k, implicit=True, tau_cmd=-10.0)
    assert forward.max() <= 1.0 + 1e-12
    assert backward.min() >= -1.0 - 1e-12
    np.testing.assert_allclose(forward, -backward, rtol=1e-15, atol=0)
    # reaching 1 rad/s at 10 N m takes inertia / 10 s, settling on the ramp ~ inertia / k s
    if inertia / 10.0 + 5.0 * inertia / k <= 0.4:
        assert forward[-1] >= 0.99


def test_evaluated_at_the_start_of_the_step_a_light_joint_chatters_far_past_its_limit() -> None:
    """Why the step evaluates the rule at the end of the step: a 4e-4 kg m^2 joint gains 25 rad/s
    in one 1 ms step at full effort, far more than the 0.1 rad/s ramp."""
    explicit = drive_one_joint(4e-4, DEFAULT_K, implicit=False)
    assert explicit.max() > 10.0
    # an explicit gain below inertia / dt is stable: it never passes the limit
    assert drive_one_joint(4e-4, 0.4, implicit=False).max() <= 1.0


def test_a_load_pushes_past_the_limit_by_load_over_gain_and_a_larger_one_wins() -> None:
    inertia = 2e-2
    held = drive_one_joint(inertia, DEFAULT_K, implicit=True, load=5.0)
    assert held[-1] == pytest.approx(1.0 + 5.0 / DEFAULT_K, rel=1e-9)  # 5 % past at half the effort
    overpowered = drive_one_joint(inertia, DEFAULT_K, implicit=True, load=15.0)
    # the actuator brakes with its whole 10 N m; the other 5 N m accelerate the joint (gravity can)
    np.testing.assert_allclose(np.diff(overpowered[-100:]), 1e-3 * 5.0 / inertia, rtol=1e-9)


def test_a_joint_of_a_model_driven_at_full_effort_stays_below_its_limit() -> None:
    """A one-joint model built in code: the rod spins about its long vertical axis (0.4 g m^2, no
    gravity torque), 10 N m against 1 rad/s, stepped with the model's own mass matrix."""
    model = load_urdf(chain_urdf(1, axis=(0.0, 0.0, 1.0), effort=10.0, velocity=1.0))
    q, v, dt = np.zeros(1), np.zeros(1), 1e-3
    lower, upper, tau = np.empty(1), np.empty(1), np.empty(1)
    speeds = []
    for _ in range(300):
        M_inv = np.linalg.inv(mass_matrix(model, q))
        b = bias_forces(model, q, v)
        qdot_free = v - dt * (M_inv @ b)
        implicit_effort_bounds_into(qdot_free, np.diag(M_inv).copy(), dt, velocity_rule(model), lower, upper)
        clamp_effort_into(np.array([10.0]), lower, upper, tau)
        v = v + dt * (M_inv @ (tau - b))
        q = q + dt * v
        speeds.append(v[0])
    assert 0.99 <= speeds[-1] and max(speeds) <= 1.0 + 1e-12
    lim = model.limits
    assert default_k_velocity(lim.effort, lim.velocity)[0] == lim.k_velocity[0] == pytest.approx(100.0)


def random_spd(rng: np.random.Generator, n: int, condition: float) -> np.ndarray:
    """A symmetric positive definite n x n matrix with eigenvalues spread over `condition`."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, condition, n)) @ Q.T


def assert_rule_holds_at_the_end(tau, qdot_end, tau_cmd, rule, rtol=1e-9) -> None:
    lower, upper = np.empty(len(tau)), np.empty(len(tau))
    effort_bounds_into(qdot_end, rule, lower, upper)
    expected = np.clip(tau_cmd, lower, upper)
    np.testing.assert_allclose(tau, expected, rtol=rtol, atol=rtol * np.max(np.abs(rule.effort)))


def test_coupled_rule_of_one_joint_is_the_joint_by_joint_rule(rng: np.random.Generator) -> None:
    lim = limits(10.0, 1.0)
    for _ in range(50):
        qdot_free, inverse_inertia, tau_cmd = rng.uniform(-3, 3, 1), rng.uniform(0.1, 1e4, 1), rng.uniform(-20, 20, 1)
        tau, _ = coupled_effort_limits(lim, tau_cmd, qdot_free, inverse_inertia.reshape(1, 1), 1e-3)
        bounds = implicit_effort_bounds(lim, qdot_free, inverse_inertia, 1e-3)
        assert tau[0] == pytest.approx(np.clip(tau_cmd, bounds.lower, bounds.upper)[0], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("condition", [1.0, 1e2, 1e4])
def test_coupled_efforts_obey_every_joints_rule_at_the_end_of_the_step(
    rng: np.random.Generator, condition: float
) -> None:
    """Joint-space inverse inertias like a humanoid's: largest eigenvalue 10 .. 3000 1/(kg m^2)
    (the bundled humanoid's: 2400), conditioned up to 1e4 (the public humanoids': 2e3 .. 8e3)."""
    n, dt = 12, 1e-3
    work, tau, qdot_end = coupled_work(n), np.empty(n), np.empty(n)
    iterations = []
    for trial in range(40):
        lim = limits(rng.uniform(1, 300, n), rng.uniform(1, 20, n), rng.choice([1.0, 100.0, 1e5], n))
        rule = velocity_rule(lim)
        A = random_spd(rng, n, condition)
        A *= rng.uniform(10.0, 3000.0) / np.linalg.eigvalsh(A)[-1]  # [1/(kg m^2)]
        qdot_free = rng.uniform(-2, 2, n) * lim.velocity
        tau_cmd = rng.choice([-1.0, 1.0], n) * lim.effort * rng.uniform(0.5, 1.5, n)
        iterations.append(coupled_effort_limits_into(tau_cmd, qdot_free, A, dt, rule, False, work, tau, qdot_end))
        np.testing.assert_allclose(qdot_end, qdot_free + dt * A @ tau, rtol=1e-12, atol=1e-9)
        assert np.all(np.abs(tau) <= lim.effort)
        assert_rule_holds_at_the_end(tau, qdot_end, tau_cmd, rule)
        # warm-started from the answer, it stays there
        again = tau.copy()
        coupled_effort_limits_into(tau_cmd, qdot_free, A, dt, rule, True, work, again, qdot_end)
        np.testing.assert_allclose(again, tau, rtol=1e-9, atol=1e-9)
    assert max(iterations) < 200  # converged (bench/joint_limits.py prints the counts on real robots)


def test_a_welded_humanoid_driven_at_full_effort_exceeds_a_limit_only_while_braking_fully() -> None:
    """Every joint of the bundled humanoid (base welded, gravity on) commanded at its full effort,
    random signs, 0.1 s: a joint past v_max + e / k_v (the ramp) has its actuator braking with its
    whole effort -- what pushes it further are the other joints, gravity and Coriolis forces."""
    from pathlib import Path

    from humanoid_sim.model import neutral_configuration

    model = load_urdf(Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf", floating_base=False)
    rule, dt, nj = velocity_rule(model), 1e-3, model.nj
    tau_cmd = np.where(np.random.default_rng(3).random(nj) < 0.5, -1.0, 1.0) * rule.effort
    q, v = neutral_configuration(model), np.zeros(nj)
    work, tau, qdot_end = coupled_work(nj), tau_cmd.copy(), np.empty(nj)
    fastest = 0.0
    for _ in range(100):
        M_inv = np.linalg.inv(mass_matrix(model, q))
        b = bias_forces(model, q, v)
        coupled_effort_limits_into(tau_cmd, v - dt * M_inv @ b, M_inv, dt, rule, True, work, tau, qdot_end)
        v = v + dt * M_inv @ (tau - b)
        q = q + dt * v
        beyond = np.abs(v) > rule.velocity + rule.effort / rule.k_velocity + 1e-9
        np.testing.assert_allclose(tau[beyond], -np.sign(v[beyond]) * rule.effort[beyond], rtol=1e-9)
        fastest = max(fastest, float(np.max(np.abs(v) / rule.velocity)))
    assert fastest > 0.9  # the joints did reach their limits
