"""Eq. 18-21 of seed 000 on plain arrays, against dense solves and closed-form impulses."""

import numpy as np
import pytest

from humanoid_sim.contact.constrained_solve import (
    SimulationError,
    factor_mass_matrix,
    mass_solve,
    solve_constrained,
)
from humanoid_sim.contact.kernels import cholesky_into, schur_solve_into
from humanoid_sim.dynamics.mass_factor import chain_parents, factor_nb


def _spd(rng, n):
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n)


def test_schur_solve_matches_dense_kkt(rng):
    nv, k = 9, 4
    M = _spd(rng, nv)
    H = rng.standard_normal((k, nv))
    tau_minus_b = rng.standard_normal(nv)
    rhs = rng.standard_normal(k)
    L = factor_mass_matrix(M)
    assert np.allclose(L.L.T @ L.L, M)
    a0 = mass_solve(L, tau_minus_b)
    sol = solve_constrained(L, H, H, rhs, a0)
    K = np.block([[M, -H.T], [H, np.zeros((k, k))]])  # Eq. 20
    dense = np.linalg.solve(K, np.concatenate([tau_minus_b, rhs]))
    assert np.allclose(sol.x, dense[:nv], atol=1e-12)
    assert np.allclose(sol.lam, dense[nv:], atol=1e-12)
    assert not sol.rank_deficient


def test_modified_jacobian_of_dynamic_friction_matches_dense(rng):
    nv, k = 7, 3
    M = _spd(rng, nv)
    H = rng.standard_normal((k, nv))
    H_hat = H.copy()
    H_hat[0] -= 0.4 * rng.standard_normal(nv)  # Eq. 36 changes the f_z row only
    rhs, tmb = rng.standard_normal(k), rng.standard_normal(nv)
    L = factor_mass_matrix(M)
    sol = solve_constrained(L, H, H_hat, rhs, mass_solve(L, tmb))
    K = np.block([[M, -H_hat.T], [H, np.zeros((k, k))]])  # Eq. 20a
    dense = np.linalg.solve(K, np.concatenate([tmb, rhs]))
    assert np.allclose(sol.x, dense[:nv], atol=1e-12)
    assert np.allclose(sol.lam, dense[nv:], atol=1e-12)


def test_dependent_rows_fall_back_to_least_squares(rng):
    nv = 6
    M = _spd(rng, nv)
    H = rng.standard_normal((2, nv))
    H = np.vstack([H, H[0]])  # a repeated constraint
    rhs = np.array([0.3, -0.2, 0.3])  # consistent
    L = factor_mass_matrix(M)
    sol = solve_constrained(L, H, H, rhs, np.zeros(nv))
    assert sol.rank_deficient
    assert np.allclose(H @ sol.x, rhs, atol=1e-9)


def test_point_impulse_on_a_free_body_matches_the_closed_form():
    """Newton's impact at a corner of a free box (Eq. 15, 18, 19) vs
    P = -(1 + e) v_n / (1/m + (r x n) . I^-1 (r x n))."""
    m, e = 2.0, 0.5
    I = np.diag([0.01, 0.02, 0.025])
    M = np.block([[m * np.eye(3), np.zeros((3, 3))], [np.zeros((3, 3)), I]])
    r = np.array([0.1, -0.05, -0.025])  # contact point from the COM (body = world axes)
    n = np.array([0.0, 0.0, 1.0])
    skew = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
    h = n @ np.hstack([np.eye(3), -skew])  # normal row of the point Jacobian
    v = np.array([0.3, 0.0, -1.0, 0.5, -0.2, 0.1])
    vn = h @ v
    L = factor_mass_matrix(M)
    sol = solve_constrained(L, h[None], h[None], np.array([-e * vn]), v)
    rxn = np.cross(r, n)
    P = -(1 + e) * vn / (1 / m + rxn @ np.linalg.solve(I, rxn))
    assert sol.lam[0] == pytest.approx(P, rel=1e-12)
    assert h @ sol.x == pytest.approx(-e * vn, rel=1e-12)
    assert np.allclose(sol.x[:3], v[:3] + P * n / m)


def test_non_positive_definite_mass_matrix_is_a_simulation_error():
    with pytest.raises(SimulationError, match="positive definite"):
        factor_mass_matrix(np.diag([1.0, 0.0, 1.0]))
    with pytest.raises(SimulationError):
        factor_mass_matrix(np.array([[1.0, np.nan], [np.nan, 1.0]]))


@pytest.mark.parametrize("n", [1, 2, 4, 5, 7, 9, 12])
def test_cholesky_four_rows_at_a_time_is_one_row_at_a_time_to_the_last_bit(n, rng):
    A = _spd(rng, n)
    expected = np.zeros((n, n))
    for j in range(n):  # the textbook order: column by column, each sum over k ascending
        s = float(A[j, j])
        for k in range(j):
            s -= expected[j, k] * expected[j, k]
        expected[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = float(A[i, j])
            for k in range(j):
                t -= expected[i, k] * expected[j, k]
            expected[i, j] = t / expected[j, j]
    L = np.full((n, n), np.nan)
    assert cholesky_into(A, L)
    np.testing.assert_array_equal(L, expected)
    np.testing.assert_allclose(L @ L.T, A, rtol=1e-12, atol=1e-12 * np.abs(A).max())


@pytest.mark.parametrize("k", [1, 3, 4, 6, 9])
def test_the_schur_solve_s_right_side_is_summed_row_by_row(k, rng):
    nv = 11
    M = _spd(rng, nv)
    parent = chain_parents(nv)
    L = np.zeros_like(M)
    assert factor_nb(M, parent, L)
    H, rhs, base = rng.standard_normal((k, nv)), rng.standard_normal(k), rng.standard_normal(nv)
    x, lam, r = np.empty(nv), np.empty(k), np.empty(k)
    assert schur_solve_into(L, parent, H, rhs, base, x, lam, np.empty((nv, k)), np.empty((k, k)), np.empty((k, k)), r) == 0
    expected = np.empty(k)
    for a in range(k):  # rhs - H base, one row at a time
        t = float(rhs[a])
        for i in range(nv):
            t -= float(H[a, i]) * float(base[i])
        expected[a] = t
    np.testing.assert_array_equal(r, expected)
    np.testing.assert_allclose(H @ x, rhs, rtol=1e-9, atol=1e-9)
