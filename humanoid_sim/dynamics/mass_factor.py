"""The joint-space inertia's factor M = Lᵀ L that keeps the kinematic tree's sparsity.

M[i, j] is non-zero only when velocity coordinate i is an ancestor of j in the tree or j
of i (a coordinate's parent: the one before it in its joint, else the last one of the
nearest moving ancestor body; ``dof_parents``). Factored from the leaves towards the root,
M = Lᵀ L with L lower triangular has exactly that pattern, no fill-in (Featherstone, RBDA
6.5, the LTL factorization): L[i, j] != 0 only for j = i or j an ancestor of i. Every
product with L or Lᵀ then walks a coordinate's path to the root instead of a whole row:
for the bundled humanoid (34 coordinates, paths of at most 14) the factor costs about
half of the dense Cholesky factor L Lᵀ (which fills in completely below the floating
base), and the rows of a contact on a foot stay zero off that foot's path.

Symbols: M (n, n) symmetric positive definite; parent (n,) int64, each coordinate's
parent coordinate, -1 at a root, parent[i] < i; L (n, n) the factor (entries off the
pattern are never read or written: keep them zero); H (k, n) constraint rows;
ZT = L⁻ᵀ Hᵀ (n, k), so that H M⁻¹ Hᵀ = ZTᵀ ZT and M⁻¹ Hᵀ λ = L⁻¹ (ZT λ).
A dense matrix is the chain parent = (-1, 0, 1, ..., n - 2) (``chain_parents``): the same
functions then factor it densely.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "add_rows_times_nb",
    "back_project_nb",
    "chain_parents",
    "dof_parents",
    "factor_nb",
    "rows_gram_nb",
    "rows_nb",
    "solve_columns_nb",
    "solve_lt_vec_nb",
    "solve_vec_nb",
]


def dof_parents(parent: np.ndarray, v_index: np.ndarray, ndof: np.ndarray) -> np.ndarray:
    """Each velocity coordinate's parent coordinate (nv,) int64 for a tree of bodies with
    parent (nb,) (parent[i] < i, -1 at a root), first coordinates v_index (nb,) and joint
    DOF ndof (nb,): the coordinate before it in its joint, else the last coordinate of its
    body's nearest ancestor that moves, else -1."""
    nv = int(sum(int(n) for n in ndof))
    out = np.full(nv, -1, dtype=np.int64)
    for i in range(len(parent)):
        n, vi = int(ndof[i]), int(v_index[i])
        if n == 0:
            continue
        k = int(parent[i])
        while k >= 0 and ndof[k] == 0:
            k = int(parent[k])
        out[vi] = int(v_index[k]) + int(ndof[k]) - 1 if k >= 0 else -1
        out[vi + 1 : vi + n] = np.arange(vi, vi + n - 1)
    if np.any(out >= np.arange(nv)):
        raise ValueError("velocity coordinates must follow their parents' (v_index in depth-first order)")
    return out


def chain_parents(n: int) -> np.ndarray:
    """The parents (n,) that make every coordinate the previous one's child: a dense M."""
    return np.arange(-1, n - 1, dtype=np.int64)


@njit(cache=True)
def factor_nb(M, parent, L) -> bool:
    """L (n, n) with M = Lᵀ L (module docstring; RBDA Table 6.3, written into L, M unread
    off the pattern). False when M is not positive definite or not finite."""
    n = M.shape[0]
    for i in range(n):
        j = i
        while j >= 0:
            L[i, j] = M[i, j]
            j = parent[j]
    for k in range(n - 1, -1, -1):  # leaves first: eliminating k changes only its ancestors
        a = L[k, k]
        if not (a > 0.0) or not math.isfinite(a):
            return False
        a = math.sqrt(a)
        L[k, k] = a
        i = parent[k]
        while i >= 0:
            L[k, i] /= a
            i = parent[i]
        i = parent[k]
        while i >= 0:
            lki = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= lki * L[k, j]
                j = parent[j]
            i = parent[i]
    return True


@njit(cache=True)
def solve_vec_nb(L, parent, b, out) -> None:
    """out (n,) = M⁻¹ b = L⁻¹ L⁻ᵀ b; out may be b itself."""
    n = b.shape[0]
    for i in range(n):
        out[i] = b[i]
    for k in range(n - 1, -1, -1):  # L⁻ᵀ: from the leaves, each coordinate's share to its ancestors
        yk = out[k] / L[k, k]
        out[k] = yk
        i = parent[k]
        while i >= 0:
            out[i] -= L[k, i] * yk
            i = parent[i]
    for k in range(n):  # L⁻¹: from the root, each coordinate from its ancestors
        t = out[k]
        i = parent[k]
        while i >= 0:
            t -= L[k, i] * out[i]
            i = parent[i]
        out[k] = t / L[k, k]


@njit(cache=True)
def _solve_lt_columns_nb(L, parent, Z) -> None:
    """Z (n, m) = L⁻ᵀ Z in place, all m columns together (from the leaves to the root), the
    innermost loop over the columns (contiguous); a coordinate whose entries are all zero
    (off every column's paths) passes nothing to its ancestors and is skipped."""
    n, m = Z.shape
    for k in range(n - 1, -1, -1):
        inv = 1.0 / L[k, k]
        nonzero = False
        for c in range(m):
            z = Z[k, c] * inv
            Z[k, c] = z
            nonzero |= z != 0.0
        if not nonzero:
            continue
        i = parent[k]
        while i >= 0:
            lki = L[k, i]
            for c in range(m):
                Z[i, c] -= lki * Z[k, c]
            i = parent[i]


@njit(cache=True)
def solve_lt_vec_nb(L, parent, z) -> None:
    """z (n,) = L⁻ᵀ z in place: one column of _solve_lt_columns_nb, the same arithmetic."""
    n = z.shape[0]
    for k in range(n - 1, -1, -1):
        zk = z[k] * (1.0 / L[k, k])
        z[k] = zk
        if zk == 0.0:
            continue
        i = parent[k]
        while i >= 0:
            z[i] -= L[k, i] * zk
            i = parent[i]


@njit(cache=True)
def solve_columns_nb(L, parent, B) -> None:
    """B (n, m) = M⁻¹ B in place, all m columns together."""
    n, m = B.shape
    _solve_lt_columns_nb(L, parent, B)
    for k in range(n):
        i = parent[k]
        while i >= 0:
            lki = L[k, i]
            for c in range(m):
                B[k, c] -= lki * B[i, c]
            i = parent[i]
        inv = 1.0 / L[k, k]
        for c in range(m):
            B[k, c] *= inv


@njit(cache=True)
def rows_nb(L, parent, H, ZT) -> None:
    """ZT (n, k) = L⁻ᵀ Hᵀ for k rows H (k, n), all k columns together (_solve_lt_columns_nb)."""
    k, n = H.shape
    for i in range(n):
        for c in range(k):
            ZT[i, c] = H[c, i]
    _solve_lt_columns_nb(L, parent, ZT)


@njit(cache=True)
def rows_gram_nb(L, parent, H, ZT, B) -> None:
    """ZT (n, k) = L⁻ᵀ Hᵀ (rows_nb) and B (k, k) = H M⁻¹ Hᵀ = ZTᵀ ZT, one triangle computed
    and mirrored, zeros of ZT skipped."""
    k, n = H.shape
    rows_nb(L, parent, H, ZT)
    for a in range(k):
        for b in range(a + 1):
            B[a, b] = 0.0
    for i in range(n):
        for a in range(k):
            za = ZT[i, a]
            if za != 0.0:
                for b in range(a + 1):
                    B[a, b] += za * ZT[i, b]
    for a in range(k):
        for b in range(a):
            B[b, a] = B[a, b]


@njit(cache=True)
def add_rows_times_nb(A, x, m, n, out) -> None:
    """out[:m] += A[:m, :n] x[:n], each row's sum continued from out[a] over the columns in
    order. Four rows at a time: four independent sums, so that the processor does not wait on
    one sum's additions, each in the order of one (the same bits as one row at a time)."""
    a = 0
    while a + 3 < m:
        s0, s1, s2, s3 = out[a], out[a + 1], out[a + 2], out[a + 3]
        for b in range(n):
            xb = x[b]
            s0 += A[a, b] * xb
            s1 += A[a + 1, b] * xb
            s2 += A[a + 2, b] * xb
            s3 += A[a + 3, b] * xb
        out[a], out[a + 1], out[a + 2], out[a + 3] = s0, s1, s2, s3
        a += 4
    for a in range(a, m):
        s = out[a]
        for b in range(n):
            s += A[a, b] * x[b]
        out[a] = s


@njit(cache=True)
def back_project_nb(L, parent, ZT, lam, y) -> None:
    """y (n,) = M⁻¹ Hᵀ λ = L⁻¹ (ZT λ), with ZT = L⁻ᵀ Hᵀ (n, k) from rows_nb and λ (k,): the
    velocity or acceleration change the row forces λ make. ZT λ is formed first
    (add_rows_times_nb), then L⁻¹ along the tree's paths: the same bits as one coordinate at a
    time."""
    n, k = ZT.shape
    for m in range(n):
        y[m] = 0.0
    add_rows_times_nb(ZT, lam, n, k, y)
    for m in range(n):  # a coordinate's ancestors come before it: their y is final
        t = y[m]
        i = parent[m]
        while i >= 0:
            t -= L[m, i] * y[i]
            i = parent[i]
        y[m] = t / L[m, m]
