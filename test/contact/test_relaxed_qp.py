"""Seed 002's relaxed QP (contact/relaxed_qp.py): its pieces on small cases.

Truths: the contact-space matrix B built by test forces through the articulated-body
factors equals J A^-1 Jᵀ built with the Cholesky factor of the same A (M with the armature
and implicit damping on its diagonal); the projected Gauss-Seidel solve meets the KKT
conditions of min ½ xᵀ(B + ε I)x - xᵀ r over its cones, one-sided and box rows; the
method's constants are validated where they enter; w(x) of Eq. 21.
"""

from __future__ import annotations

import numpy as np
import pytest

from contact_scenes import BOX_SIZE, box_model, box_q
from humanoid_sim.contact.environment import Environment, GroundPlane, Material
from humanoid_sim.contact.relaxed_qp import (
    SLIDING,
    STATIC,
    RelaxedQpParams,
    allocate_relaxed_qp,
    contact_matrix_nb,
    solve_nb,
    w_friction,
)
from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig


def _pendulum_workspace(rng):
    """A 4-link box pendulum's step workspace at a random state (M with its diagonal)."""
    spec = BoxPendulum(links=4)
    env = Environment(ground=GroundPlane(material=Material(1.0, 0.4)))
    sim = Simulator(box_pendulum(spec), SimulatorConfig(environment=env, contact_method="relaxed_qp"), poses={})
    nv = sim.model.nv
    sim.set_state(spec.initial_configuration(0.7) + 0.3 * rng.standard_normal(sim.model.nq), rng.standard_normal(nv))
    sim.step()  # the workspace now holds the dynamics at the state the step started from
    return sim


def test_contact_matrix_by_test_forces_equals_the_cholesky_one(rng):
    sim = _pendulum_workspace(rng)
    nv = sim.model.nv
    rq = allocate_relaxed_qp(RelaxedQpParams(), 4, 8, nv)
    m = 7
    rq.J[:m] = rng.standard_normal((m, nv))
    contact_matrix_nb(sim._tree, sim._dyn, rq, m)
    M = sim._dyn.M  # with the armature and dt x damping on its diagonal
    L = np.linalg.cholesky(M)
    Y = np.linalg.solve(L, rq.J[:m].T)
    expected = Y.T @ Y
    np.testing.assert_allclose(rq.B[:m, :m], expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def _small_problem(rng, nvert, n_hard, n_fric, mu):
    """A random QP over nvert vertices (rank-deficient B: more rows than unknowns behind
    them, as with four vertices of one box), n_hard one-sided and n_fric box rows."""
    m = 3 * nvert + n_hard + n_fric
    rq = allocate_relaxed_qp(RelaxedQpParams(), 4, nvert + 2, 5)
    Jb = rng.standard_normal((m, 6))
    B = Jb @ Jb.T  # rank 6 < m
    rq.B[:m, :m] = B
    rq.r[:m] = rng.standard_normal(m)
    rq.x[:m] = 0.0
    rq.mode[:nvert] = STATIC
    rq.mu[:nvert] = mu
    rq.cap[3 * nvert + n_hard : m] = 0.3
    eps = 1e-2 * np.trace(B) / m
    return rq, m, eps


@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_solve_meets_the_kkt_conditions(rng, mu):
    """x in K, the gradient g = (B + ε I) x - r in the dual cone K*, xᵀ g = 0 per block:
    a vertex's cone K = {f_n >= μ^-1 |f_t|} has K* = {g_n >= μ |g_t|}; a one-sided row
    x >= 0, g >= 0; a box row: g = 0 inside, pointing outwards at a bound."""
    nvert, n_hard, n_fric = 4, 2, 2
    for _ in range(5):
        rq, m, eps = _small_problem(rng, nvert, n_hard, n_fric, mu=mu)
        solve_nb(rq, nvert, n_hard, n_fric, eps, 20000, 1e-14)
        x = rq.x[:m]
        g = (rq.B[:m, :m] + eps * np.eye(m)) @ x - rq.r[:m]
        scale = 1.0 + np.abs(rq.r[:m]).max()
        tol = 1e-5 * scale  # the cone search (_static_block) is accurate to its last golden sections
        for t in range(nvert):
            xb, gb = x[3 * t : 3 * t + 3], g[3 * t : 3 * t + 3]
            assert np.hypot(xb[1], xb[2]) <= mu * xb[0] * (1 + 1e-9) + 1e-15
            assert gb[0] >= mu * np.hypot(gb[1], gb[2]) - tol
            assert abs(xb @ gb) < tol * (1.0 + np.abs(xb).max())
        for j in range(3 * nvert, 3 * nvert + n_hard):
            assert x[j] >= 0.0 and g[j] > -tol and abs(x[j] * g[j]) < tol * (1.0 + x[j])
        for j in range(3 * nvert + n_hard, m):
            cap = rq.cap[j]
            assert abs(x[j]) <= cap + 1e-15
            if abs(x[j]) < cap * (1 - 1e-9):
                assert abs(g[j]) < tol
            else:  # at a bound, the gradient pushes outwards
                assert g[j] * np.sign(x[j]) < tol
        np.testing.assert_allclose(rq.w[:m], (rq.B[:m, :m] + eps * np.eye(m)) @ x, atol=1e-9 * scale)


def test_solve_with_friction_stays_in_the_cones_and_beats_no_force(rng):
    nvert = 4
    for _ in range(5):
        rq, m, eps = _small_problem(rng, nvert, 0, 0, mu=0.3)
        rq.mode[1] = SLIDING  # one vertex slides with 0.2 f_n along a fixed direction
        rq.coef[1] = 0.2
        rq.slip[1] = [0.6, 0.8]
        solve_nb(rq, nvert, 0, 0, eps, 2000, 1e-12)
        x = rq.x[:m]
        for t in range(nvert):
            fn, ft = x[3 * t], x[3 * t + 1 : 3 * t + 3]
            assert fn >= 0.0
            assert np.hypot(*ft) <= 0.3 * fn * (1 + 1e-12)
        np.testing.assert_allclose(x[4:6], 0.2 * x[3] * np.array([0.6, 0.8]), atol=1e-15)
        value = 0.5 * x @ (rq.B[:m, :m] + eps * np.eye(m)) @ x - x @ rq.r[:m]
        assert value <= 0.0  # never worse than no force


def test_a_resting_box_has_four_vertex_rows_and_balanced_forces():
    env = Environment(ground=GroundPlane(0.0, Material(1.0, 0.4, 0.0)))
    sim = Simulator(box_model(), SimulatorConfig(environment=env, contact_method="relaxed_qp"))
    sim.set_state(box_q([0, 0, BOX_SIZE[2] / 2], np.eye(3)), np.zeros(6))
    for _ in range(200):
        r = sim.step()
    (c,) = r.contacts
    assert c.point_forces.shape == (4, 3)
    # the symmetric box: each vertex carries a quarter of m g (regularised least norm)
    np.testing.assert_allclose(c.point_forces[:, 2], r.contacts[0].wrench_world[2] / 4, rtol=1e-2)
    np.testing.assert_allclose(c.point_forces.sum(axis=0), c.wrench_world[:3], atol=1e-9)


@pytest.mark.parametrize(
    "field, value",
    [("regularisation", 0.0), ("compensation", 0.0), ("compensation", 1.5), ("friction_rate", -1.0), ("sweeps", 0),
     ("tolerance", float("nan")), ("max_rounds", 0), ("match_radius", 0.0)],
)  # fmt: skip
def test_params_are_validated(field, value):
    with pytest.raises(InvalidValueError, match=field):
        RelaxedQpParams(**{field: value})


def test_w_of_eq_21():
    assert w_friction(0.0, 100.0) == 0.0
    assert w_friction(0.01, 100.0) == pytest.approx(1.0 - np.exp(-1.0))
    assert w_friction(1.0, 100.0) == pytest.approx(1.0)
