"""The joint-space inertia's tree factor M = Lᵀ L (dynamics/mass_factor.py) against dense
linear algebra: the factor, its pattern (no fill-in off the tree's paths), and every product
the contact solves build from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dynamics_oracle import free_objects, random_state, random_tree_model

from humanoid_sim import dynamics as dyn
from humanoid_sim.dynamics.mass_factor import (
    back_project_nb,
    chain_parents,
    dof_parents,
    factor_nb,
    rows_gram_nb,
    rows_nb,
    solve_columns_nb,
    solve_lt_vec_nb,
    solve_vec_nb,
)
from humanoid_sim.model import load_urdf
from humanoid_sim.world import World, assemble_world_model

HUMANOID = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"


def _ancestor_or_self(parent: np.ndarray) -> np.ndarray:
    """pattern (n, n) bool: pattern[i, j] when j is i or one of i's ancestors."""
    n = len(parent)
    pattern = np.zeros((n, n), dtype=bool)
    for i in range(n):
        j = i
        while j >= 0:
            pattern[i, j] = True
            j = parent[j]
    return pattern


def _models():
    rng = np.random.default_rng(11)
    yield "humanoid", load_urdf(HUMANOID)
    yield "floating_tree", random_tree_model(rng, nb=9, floating_base=True)
    yield "welded_tree", random_tree_model(rng, nb=7, floating_base=False)
    yield "world", assemble_world_model(World(objects=free_objects()), random_tree_model(rng, nb=5)).model


@pytest.mark.parametrize("name,model", list(_models()), ids=lambda x: x if isinstance(x, str) else "")
def test_the_factor_of_m_has_m_s_tree_pattern_and_no_fill_in(name, model, rng: np.random.Generator) -> None:
    tree = dyn.kinematic_tree(model)
    parent = tree.dof_parent
    assert np.all(parent < np.arange(tree.nv))
    pattern = _ancestor_or_self(parent)
    related = pattern | pattern.T
    for _ in range(3):
        q, _ = random_state(model, rng)
        M = dyn.mass_matrix(model, q)
        assert np.all(M[~related] == 0.0)  # M's zeros follow the parents
        L = np.zeros_like(M)
        assert factor_nb(M, parent, L)
        assert np.all(L[~pattern] == 0.0)  # no fill-in
        np.testing.assert_allclose(L.T @ L, M, rtol=0.0, atol=1e-12 * np.abs(M).max())


def test_the_humanoid_s_coordinates_follow_their_joints_and_legs() -> None:
    model = load_urdf(HUMANOID)
    tree = dyn.kinematic_tree(model)
    parent = tree.dof_parent
    np.testing.assert_array_equal(parent[:6], [-1, 0, 1, 2, 3, 4])  # the floating base's six in a chain
    depth = np.zeros(tree.nv, dtype=int)
    for i in range(tree.nv):
        depth[i] = 1 + (depth[parent[i]] if parent[i] >= 0 else 0)
    sole = model.frame("l_sole").body
    assert depth[tree.v_index[sole] + tree.ndof[sole] - 1] == 12  # the base's six and the leg's six
    assert depth.max() == 14  # the longest: an arm, through the torso


def test_a_body_without_coordinates_passes_its_parent_on() -> None:
    # a welded root (no coordinates): its children's first coordinates are roots
    np.testing.assert_array_equal(
        dof_parents(np.array([-1, 0, 0, 1]), np.array([0, 0, 1, 2]), np.array([0, 1, 1, 1])), [-1, -1, 0])
    # a body of no coordinates between two that move: its child's coordinate hangs on its parent's
    np.testing.assert_array_equal(
        dof_parents(np.array([-1, 0, 1, 2]), np.array([0, 6, 7, 7]), np.array([6, 1, 0, 1])),
        [-1, 0, 1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError, match="depth-first"):
        dof_parents(np.array([-1, 0]), np.array([1, 0]), np.array([1, 1]))


def _tree_problem(rng):
    model = load_urdf(HUMANOID)
    tree = dyn.kinematic_tree(model)
    q, _ = random_state(model, rng)
    M = dyn.mass_matrix(model, q) + np.diag(rng.uniform(0.0, 0.01, tree.nv))
    return M, tree.dof_parent


def _dense_problem(rng):
    n = 11
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n), chain_parents(n)


@pytest.mark.parametrize("problem", [_tree_problem, _dense_problem], ids=["humanoid_tree", "dense_chain"])
def test_products_with_the_factor_are_the_dense_ones(problem, rng: np.random.Generator) -> None:
    """What the checked and bounded solves build B from: L⁻ᵀ Hᵀ, H M⁻¹ Hᵀ (exactly
    symmetric), M⁻¹ Hᵀ λ, the unsymmetric H M⁻¹ Ĥᵀ from two row products (L⁻ᵀ ĥᵀ of one
    row alone the same), and M⁻¹ b."""
    M, parent = problem(rng)
    n, k = M.shape[0], 5
    L = np.zeros_like(M)
    assert factor_nb(M, parent, L)
    H, H_hat = rng.standard_normal((k, n)), rng.standard_normal((k, n))
    lam, b = rng.standard_normal(k), rng.standard_normal(n)
    scale = np.abs(np.linalg.inv(M)).max() * 10.0
    ZT, ZhT, B = np.empty((n, k)), np.empty((n, k)), np.empty((k, k))
    rows_gram_nb(L, parent, H, ZT, B)
    rows_nb(L, parent, H_hat, ZhT)
    np.testing.assert_allclose(L.T @ ZT, H.T, rtol=0, atol=1e-12 * np.abs(H).max() * np.abs(M).max() * scale)
    np.testing.assert_allclose(B, H @ np.linalg.solve(M, H.T), rtol=1e-10, atol=1e-12 * scale)
    assert np.array_equal(B, B.T)
    np.testing.assert_allclose(ZT.T @ ZhT, H @ np.linalg.solve(M, H_hat.T), rtol=1e-10, atol=1e-12 * scale)
    for a in range(k):  # one row of Ĥ alone: the same column, to the last bit
        z = H_hat[a].copy()
        solve_lt_vec_nb(L, parent, z)
        assert np.array_equal(z, ZhT[:, a])
    y = np.empty(n)
    back_project_nb(L, parent, ZhT, lam, y)
    np.testing.assert_allclose(y, np.linalg.solve(M, H_hat.T @ lam), rtol=1e-10, atol=1e-12 * scale)
    x = np.empty(n)
    solve_vec_nb(L, parent, b, x)
    np.testing.assert_allclose(M @ x, b, rtol=0, atol=1e-10 * np.abs(b).max())
    inplace = b.copy()
    solve_vec_nb(L, parent, inplace, inplace)
    assert np.array_equal(inplace, x)
    X = np.ascontiguousarray(np.stack([b, 2.0 * b, H[0]], axis=1))
    expected = np.linalg.solve(M, X)
    solve_columns_nb(L, parent, X)
    np.testing.assert_allclose(X, expected, rtol=1e-10, atol=1e-12 * scale)


def test_a_foot_s_rows_stay_on_the_foot_s_path(rng: np.random.Generator) -> None:
    """L⁻ᵀ Hᵀ of a contact on a sole is zero off the sole's path to the root: the arms' and
    the other leg's coordinates are never visited (the pattern the products rely on)."""
    model = load_urdf(HUMANOID)
    tree = dyn.kinematic_tree(model)
    q, _ = random_state(model, rng)
    M = dyn.mass_matrix(model, q)
    L = np.zeros_like(M)
    assert factor_nb(M, tree.dof_parent, L)
    H = np.ascontiguousarray(dyn.frame_jacobian(model, q, "l_sole"))
    on_path = np.any(H != 0.0, axis=0)
    ZT = np.empty((tree.nv, 6))
    rows_nb(L, tree.dof_parent, H, ZT)
    assert np.all(ZT[~on_path] == 0.0)
    assert np.any(ZT[on_path] != 0.0, axis=1).all()
    assert 6 < on_path.sum() < tree.nv


@pytest.mark.parametrize("problem", [_tree_problem, _dense_problem], ids=["humanoid_tree", "dense_chain"])
@pytest.mark.parametrize("k", [1, 6, 13])
def test_back_projection_is_one_coordinate_at_a_time_to_the_last_bit(problem, k, rng: np.random.Generator) -> None:
    """M⁻¹ Hᵀ λ formed with ZT λ four coordinates at a time: the sums of one at a time."""
    M, parent = problem(rng)
    n = M.shape[0]
    L = np.zeros_like(M)
    assert factor_nb(M, parent, L)
    ZT = np.empty((n, k))
    rows_nb(L, parent, rng.standard_normal((k, n)), ZT)
    lam = rng.standard_normal(k)
    expected = np.empty(n)
    for m in range(n):
        t = 0.0
        for c in range(k):
            t += float(ZT[m, c]) * float(lam[c])
        i = parent[m]
        while i >= 0:
            t -= float(L[m, i]) * expected[i]
            i = parent[i]
        expected[m] = t / float(L[m, m])
    y = np.empty(n)
    back_project_nb(L, parent, ZT, lam, y)
    np.testing.assert_array_equal(y, expected)
