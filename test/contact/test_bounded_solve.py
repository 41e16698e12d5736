"""The bounded solve (seed 002 Eq. 9/11 over seed 000's rows): valid by construction.

Truths: where the checked solve of seed 000 is valid, the bounded solve finds the same
forces (up to its regularisation); where it is not, every wrench the bounded solve returns
passes the validity checks of seed 000 4.4-4.5; a face turning onto the ground gets its
corners' complementarity answer; a collapsing humanoid never integrates a solve that failed
its checks; and a robot lying on redundant contacts comes to rest.
"""

from pathlib import Path

import numpy as np
import pytest
from contact_scenes import G

from humanoid_sim.contact.bounded_solve import (
    BLOCK_LINE,
    BLOCK_ONE_SIDED,
    BLOCK_POINT,
    BLOCK_SURFACE,
    BOUNDED_SWEEPS,
    BOUNDED_TOLERANCE,
    BoundedRows,
    _solve_faces,
    _subspace_step,
    bounded_solve_nb,
    bounded_work,
    regularised_product_nb,
)
from humanoid_sim.contact.constrained_solve import factor_mass_matrix
from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.dynamics.kinematics import center_of_mass, forward_kinematics
from humanoid_sim.dynamics.rigid_body_dynamics import mass_matrix
from humanoid_sim.limits.range_config import RangeOfMotionConfig, parse_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.initial_pose import InitialPose
from humanoid_sim.simulator.simulator import Simulator

URDF = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"
DATA = Path(__file__).resolve().parent / "data"


def _rows(H, rhs, kinds, sizes, mu=0.5, arm=0.0, hulls=None):
    nb = len(kinds)
    hulls = hulls or [np.zeros((0, 2))] * nb
    return BoundedRows(
        np.ascontiguousarray(H, dtype=float), np.asarray(rhs, dtype=float),
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), np.array(kinds, dtype=np.int64),
        np.full(nb, mu), np.full(nb, arm), np.zeros(nb), np.ascontiguousarray(np.concatenate(hulls), dtype=float),
        np.concatenate([[0], np.cumsum([len(h) for h in hulls])]).astype(np.int64), np.zeros((nb, 2)),
    )  # fmt: skip


def _solve(rows, M, base):
    factor = factor_mass_matrix(M)
    x = np.empty(len(base))
    lam = np.zeros(len(rows.rhs))
    sweeps = bounded_solve_nb(rows, *factor, base, 1e-9, 500, 1e-13, x, lam,
                              bounded_work(len(rows.rhs), len(x), len(rows.hull_xy)))
    return x, lam, sweeps


def test_unbounded_solution_is_the_equality_solve(rng):
    # well inside every bound, the minimiser solves B λ = r: the constraint rows hold
    nv = 5
    Q = rng.normal(size=(nv, nv))
    M = Q @ Q.T + nv * np.eye(nv)
    H = rng.normal(size=(2, nv))
    base = rng.normal(size=nv)
    rhs = H @ base + np.array([5.0, 3.0])  # pushes both rows the positive way
    x, lam, _ = _solve(_rows(H, rhs, [BLOCK_ONE_SIDED] * 2, [1, 1]), M, base)
    B = H @ np.linalg.solve(M, H.T)
    lam_exact = np.linalg.solve(B, rhs - H @ base)
    assert np.all(lam_exact > 0)
    assert lam == pytest.approx(lam_exact, rel=1e-6)
    assert H @ x == pytest.approx(rhs, rel=1e-6)


def test_one_sided_row_that_would_pull_is_released(rng):
    nv = 3
    M = np.diag([2.0, 1.0, 3.0])
    H = np.array([[1.0, 0.0, 0.0]])
    base = np.array([1.0, 0.0, 0.0])
    x, lam, _ = _solve(_rows(H, [0.0], [BLOCK_ONE_SIDED], [1]), M, base)
    # holding x0 at 0 would need λ < 0: the row is let go and x is the free solution
    assert lam[0] == 0.0
    assert x == pytest.approx(base)


def test_point_contact_friction_is_capped_at_mu_fz():
    # a point mass pushed sideways on the ground: sticking would need |f_t| > μ f_z
    M = np.eye(3) * 2.0
    H = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # rows f_z, f_x, f_y
    base = np.array([8.0, 0.0, -G])  # a0: 8 m/s^2 sideways, gravity down
    x, lam, _ = _solve(_rows(H, [0.0, 0.0, 0.0], [BLOCK_POINT], [3], mu=0.5), M, base)
    fz, fx = lam[0], lam[1]
    assert fz == pytest.approx(2.0 * G, rel=1e-6)
    assert fx == pytest.approx(-0.5 * fz, rel=1e-6)  # at the cone, against the push
    assert x[0] == pytest.approx(8.0 - 0.5 * G, rel=1e-6)


def test_centre_of_pressure_is_kept_inside_the_sole():
    # one body with a square sole; a moment about y that would put p_v outside the sole
    half = 0.05
    hull = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    M = np.diag([1.0, 1.0, 1.0, 0.01, 0.01, 0.01])  # (v, ω) of a small body
    H = np.zeros((6, 6))
    H[0, 2] = H[1, 3] = H[2, 4] = H[3, 0] = H[4, 1] = H[5, 5] = 1.0  # f_z, n_x, n_y, f_x, f_y, n_z
    base = np.array([0.0, 0.0, -G, 0.0, 100.0, 0.0])  # tipping about y: holding needs p_v 0.1 m out
    x, lam, _ = _solve(_rows(H, np.zeros(6), [BLOCK_SURFACE], [6], mu=1.0, arm=0.03, hulls=[hull]), M, base)
    fz, nx, ny = lam[0], lam[1], lam[2]
    assert fz > 0
    px, py = -ny / fz, nx / fz
    assert -half - 1e-9 <= px <= half + 1e-9 and -half - 1e-9 <= py <= half + 1e-9
    assert abs(px) == pytest.approx(half, rel=1e-6)  # on the edge it tips about


@pytest.mark.parametrize("spin", [(30.0, 0.0), (20.0, -25.0), (0.0, 40.0), (3.0, 2.0)])
def test_a_face_turning_fast_onto_the_ground_gets_the_impulse_of_its_corners(spin):
    """A frictionless square face hitting the ground while turning (an impulse phase: rows are
    velocities, targets 0). With p_v inside the face, the forces of its rows are those of
    four corner forces >= 0, so the minimiser is the corners' complementarity problem: every
    corner leaves at >= 0, and those that push leave at 0. Compared with non-negative least
    squares over the four corner weights (scipy.optimize.nnls). (Row updates followed by a
    projection of p_v onto the face stopped short of it here: the spinning face got no
    impulse at all and its low corners went on into the ground.)"""
    from scipy.optimize import nnls

    half = 0.1
    hull = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    M = np.diag([2.0, 2.0, 2.0, 0.02, 0.03, 0.04])  # (v, ω) of the body, origin at the face's centre
    H = np.zeros((6, 6))
    H[0, 2] = H[1, 3] = H[2, 4] = H[3, 0] = H[4, 1] = H[5, 5] = 1.0  # f_z, n_x, n_y, f_x, f_y, n_z
    base = np.array([0.3, -0.2, -1.0, spin[0], spin[1], 5.0])  # falling at 1 m/s, turning
    rows = _rows(H, np.zeros(6), [BLOCK_SURFACE], [6], mu=0.0, arm=0.03, hulls=[hull])
    x, lam, _ = _solve(rows, M, base)
    # the corners' normal velocities v_z + ω_x y - ω_y x before and after
    corner = np.array([[1.0, y, -x] for x, y in hull])  # (4, 3): rows of (v_z, ω_x, ω_y)
    before, after = corner @ base[2:5], corner @ x[2:5]
    assert before.min() < -1.0  # some corner hits the ground faster than the face falls
    # the exact answer: weights w >= 0 of the corners' unit forces (λ = cornerᵀ w) least in
    # ½ ‖S cornerᵀ w‖² + wᵀ before (S² the (v_z, ω_x, ω_y) block of M^-1, diagonal here),
    # which is ½ ‖S cornerᵀ w + S^-1 v‖² less a constant (v: those velocities before)
    S = np.diag(np.sqrt(1.0 / np.diag(M)[2:5]))
    w, _ = nnls(S @ corner.T, -np.linalg.solve(S, base[2:5]))
    assert lam[:3] == pytest.approx(corner.T @ w, rel=1e-6, abs=1e-9)
    assert np.all(after >= -1e-6)  # no corner goes on into the ground
    assert np.all(np.abs(after[w > 1e-9]) < 1e-6)  # those that push come to rest
    assert np.all(lam[3:] == 0.0)  # frictionless, no torsion


def _lever_rows(mu):
    """A light body (1 kg, 0.002 kg m² about its centre of mass) on one point contact 0.2 m
    from its centre of mass along x and 0.3 m below it: B is badly conditioned (the point's
    rotational mobility is 45 times its translational one). Rows v_z, v_x, v_y of the point."""
    M = np.diag([1.0, 1.0, 1.0, 0.002, 0.002, 0.002])
    H = np.zeros((3, 6))
    p = np.array([-0.2, 0.0, -0.3])
    for row, axis in enumerate((2, 0, 1)):  # the point's velocity v + ω x p
        e = np.zeros(3)
        e[axis] = 1.0
        H[row, :3] = e
        H[row, 3:] = np.cross(p, e)
    return _rows(H, np.zeros(3), [BLOCK_POINT], [3], mu=mu), M, H


@pytest.mark.parametrize("push, mu", [(5.0, 0.8), (20.0, 0.8)])
def test_a_light_body_on_a_far_contact_gets_coulombs_answer_in_a_few_sweeps(push, mu):
    """The body of _lever_rows pushed sideways at 5 m/s² (its contact holds it, friction
    inside the cone) or 20 m/s² (it cannot: Coulomb's answer slides it with its friction at
    μ f_z against the point's sliding, the normal row held). Projected Gauss-Seidel alone took
    200 sweeps and more for both, and for the second stopped at its cap with the point
    accelerating off the ground at 2 m/s² while pressed on it (f_z > 0): not an answer. The
    subspace solve on the faces the sweeps found gets it in a few."""
    rows, M, H = _lever_rows(mu)
    base = np.array([push, 0.0, -G, 0.0, 0.0, 0.0])
    factor = factor_mass_matrix(M)
    x = np.empty(6)
    lam = np.zeros(3)
    sweeps = bounded_solve_nb(rows, *factor, base, 1e-6, BOUNDED_SWEEPS, 1e-8, x, lam,
                              bounded_work(len(rows.rhs), len(x), len(rows.hull_xy)))
    assert sweeps <= 10
    fz, ft = lam[0], lam[1:3]
    a_n, a_t = H[0] @ x, H[1:3] @ x
    assert fz > 0.0
    # held on the ground, to the regularisation's bias (ε λ of a cold start: 1e-6 of B's diagonal)
    assert abs(a_n) < 1e-3
    if push == 5.0:  # sticking: inside the cone, the point held
        assert np.linalg.norm(ft) < mu * fz
        assert np.linalg.norm(a_t) < 1e-3
    else:  # sliding: on the cone, against the point's sliding
        assert np.linalg.norm(ft) == pytest.approx(mu * fz, rel=1e-9)
        assert np.linalg.norm(a_t) > 1.0
        assert ft @ a_t == pytest.approx(-np.linalg.norm(ft) * np.linalg.norm(a_t), rel=1e-6)


def _spinning_line_rows(seed):
    """An impulse problem like a shin landing on a 2.4 cm line contact while it turns about the
    line's normal axis: a line block (f_z, n_y, f_x, f_y, n_z; μ 0.8) and two one-sided rows,
    random rows H over 8 dofs (the moment rows' levers short), a random A = L Lᵀ and a random
    velocity before the impulse; every row's target velocity 0. Returns the rows, A's factor
    (factor_mass_matrix) and the velocity."""
    rng = np.random.default_rng(seed)
    half = 0.012
    H = rng.normal(size=(7, 8))
    H[1] *= 0.05
    H[4] *= 0.05
    L = np.tril(rng.normal(size=(8, 8)) * 0.3) + np.diag(rng.uniform(0.5, 2.0, 8))
    rows = BoundedRows(H, np.zeros(7), np.array([0, 5, 6, 7]), np.array([BLOCK_LINE, BLOCK_ONE_SIDED, BLOCK_ONE_SIDED]),
                       np.array([0.8, 0.0, 0.0]), np.array([0.3 * half, 0.0, 0.0]), np.zeros(3),
                       np.array([[-half, 0.0], [half, 0.0]]), np.array([0, 2, 2, 2]), np.zeros((3, 2)))  # fmt: skip
    return rows, factor_mass_matrix(L @ L.T), rng.normal(size=8)


@pytest.mark.parametrize("seed", [3195, 5401, 5612])
def test_sweeps_that_cycle_are_damped_until_they_converge(seed):
    """Three of 6000 random problems of _spinning_line_rows on which the undamped sweeps cycle
    (the friction cone's projection makes them a fixed-point iteration, and its fixed point
    repels them): they ran to the 200-sweep cap, and the best multiple of the last iterate left
    the line approaching the ground at 0.23, 0.26 and 0.04 m/s (seed 3195: no impulse at all).
    An icub shin landing so went 1.08 mm into the ground. Damped once they turn back on
    themselves, the sweeps converge, and no row goes on approaching."""
    rows, factor, base = _spinning_line_rows(seed)
    x = np.empty(8)
    lam = np.zeros(7)
    sweeps = bounded_solve_nb(rows, *factor, base, 1e-6, BOUNDED_SWEEPS, 1e-8, x, lam, bounded_work(7, 8, 2))
    assert sweeps < BOUNDED_SWEEPS
    before, after = rows.H @ base, rows.H @ x
    assert before[0] < -0.2  # the line approaches the ground
    assert lam[0] > 0.0 and abs(lam[1]) <= 0.012 * lam[0] + 1e-12  # pressed, p_v on the line
    for row in (0, 5, 6):  # the normal row and the one-sided rows stop approaching
        assert after[row] > -1e-3 * abs(before[row]), (row, after[row])


def test_a_subspace_solve_that_failed_is_not_formed_again_on_the_same_faces():
    """One point contact pressed with f_z = 1 and asked for 5 of friction (μ = 0.5): on the
    face where its friction is free, the exact answer leaves the cone and the subspace solve
    fails. On the same faces it is not formed again (its Q is left as it was); on other faces
    (the friction on its bound) it is."""
    rows = _rows(np.eye(3), [1.0, 5.0, 0.0], [BLOCK_POINT], [3], mu=0.5)
    B, r, eps = np.eye(3), np.array([1.0, 5.0, 0.0]), 0.0
    sw = bounded_work(3, 3, 2).subspace
    sw.failed[0] = -1
    lam = np.array([1.0, 0.1, 0.0])  # friction inside its disc: free
    w = B @ lam
    assert not _subspace_step(rows, B, eps, r, lam, w, sw, 1e-9)
    np.testing.assert_array_equal(lam, [1.0, 0.1, 0.0])
    sw.Q[:] = np.nan
    assert not _subspace_step(rows, B, eps, r, lam, w, sw, 1e-9)  # the same faces: not formed
    assert np.isnan(sw.Q).all()
    lam = np.array([1.0, 0.5, 0.0])  # friction on its bound, along x: tied to f_z
    w = B @ lam
    assert _subspace_step(rows, B, eps, r, lam, w, sw, 1e-9)  # other faces: solved, and taken
    assert not np.isnan(sw.Q[0, 0]) and sw.failed[0] == -1
    assert lam[0] > 0.0 and np.hypot(lam[1], lam[2]) == pytest.approx(0.5 * lam[0])


def test_a_subspace_solve_on_another_edge_of_the_same_area_is_formed():
    """A square area pressed with f_z = 1 and asked for 5 of friction: the subspace solve with
    p_v on its edge x = 0.1 fails, and is not formed again there; with p_v on the edge y = 0.1
    (the same rows, another pair of vertices) it is formed."""
    square = np.array([[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]])
    rows = _rows(np.eye(6), [1.0, 0.0, 0.0, 5.0, 0.0, 0.0], [BLOCK_SURFACE], [6], mu=0.5, arm=0.05, hulls=[square])
    B, r, eps = np.eye(6), np.asarray(rows.rhs), 0.0
    sw = bounded_work(6, 6, 4).subspace
    sw.failed[0] = -1
    on_x = np.array([1.0, 0.0, -0.1, 0.1, 0.0, 0.0])  # (f_z, n_x, n_y, f_x, f_y, n_z): p_v = (0.1, 0)
    assert not _subspace_step(rows, B, eps, r, on_x.copy(), B @ on_x, sw, 1e-9)
    sw.Q[:] = np.nan
    assert not _subspace_step(rows, B, eps, r, on_x.copy(), B @ on_x, sw, 1e-9)
    assert np.isnan(sw.Q).all()  # the same edge: not formed
    on_y = np.array([1.0, 0.1, 0.0, 0.1, 0.0, 0.0])  # p_v = (0, 0.1)
    assert not _subspace_step(rows, B, eps, r, on_y.copy(), B @ on_y, sw, 1e-9)
    assert not np.isnan(sw.Q[0, 0])  # another edge: formed (and failing again, its friction out of the cone)


def test_a_gram_formed_for_the_same_rows_is_used_as_it_is():
    """gram_ready: the work's L^-T Hᵀ and B = H A^-1 Hᵀ, formed by a caller for the same rows
    (the checked solve's Schur complement), are used as they are; without it they are formed
    again. The same rows solved with the Gram handed over give the same forces to the bit."""
    rows, factor, base = _spinning_line_rows(3195)
    k, nv = rows.H.shape

    def solve(work, ready):
        x, lam = np.empty(nv), np.zeros(k)
        sweeps = bounded_solve_nb(rows, *factor, base, 1e-6, BOUNDED_SWEEPS, 1e-8, x, lam, work, False, ready)
        return sweeps, x, lam

    work = bounded_work(k, nv, 2)
    formed = solve(work, False)
    handed = solve(work, True)  # the Gram the first solve formed, for the same rows
    assert handed[0] == formed[0]
    assert np.array_equal(handed[1], formed[1]) and np.array_equal(handed[2], formed[2])
    work.B[: k * k] *= 2.0  # another Gram: used when handed over, formed again when not
    assert not np.array_equal(solve(work, True)[2], formed[2])
    again = solve(work, False)
    assert np.array_equal(again[1], formed[1]) and np.array_equal(again[2], formed[2])


def _valid(report, mu_s, tol=1e-6):
    """The checks of seed 000 4.4-4.5 on a reported wrench (virtual-link frame)."""
    f = report.wrench_local
    fz = f[2]
    if fz < -tol:
        return False
    if fz <= tol:
        return True
    if np.hypot(f[0], f[1]) > mu_s * fz * (1 + tol) + tol:
        return False
    if report.kind == ContactKind.POINT:
        return True
    R, o = report.R_world_vl, report.origin
    xy = (report.points - o) @ R[:, :2]
    pv = np.array([-f[4] / fz, f[3] / fz])
    if report.kind == ContactKind.LINE:
        return xy[:, 0].min() - tol <= pv[0] <= xy[:, 0].max() + tol
    from scipy.spatial import ConvexHull

    hull = ConvexHull(xy)
    return bool(np.all(hull.equations[:, :2] @ pv + hull.equations[:, 2] <= tol))


def test_collapsing_humanoid_never_integrates_a_failed_solve():
    model = load_urdf(str(URDF))
    sim = Simulator(model, providers=[RangeOfMotionProvider(model, parse_range_of_motion({}))])
    sim.reset("stand")
    mu_s = sim.config.environment.ground.material.mu_s
    bounded = 0
    for _ in range(1500):  # 1.5 s of a passive collapse: knees buckle, hips and hands land
        r = sim.step()
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
        assert r.solver in ("checked", "bounded")
        if not r.validated:
            assert r.solver == "bounded"
        bounded += r.solver == "bounded"
        for c in r.contacts:
            if not np.any(c.impulse_local):
                assert _valid(c, mu_s), (r.t, c.link, c.kind, c.wrench_local)
    assert bounded > 0  # the collapse does meet solves that fail their checks


def test_friction_at_its_bound_opposes_the_acceleration_it_leaves(rng):
    """A point contact of a body much lighter along x than along y (B's friction block 2 x 2,
    far from a multiple of I), pushed along the ground harder than μ f_z holds: its friction
    takes the bound, and the point's tangential acceleration is opposite to it (Coulomb's
    maximal dissipation), whatever the push's direction. (Scaled onto the disc from the rows'
    own updates, the friction pointed off that direction, and a light limb's friction could
    drive it along itself.)"""
    M = np.diag([0.2, 5.0, 2.0])
    H = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # v_z, v_x, v_y rows
    for _ in range(20):
        u = np.array([np.cos(a := rng.uniform(0, 2 * np.pi)), np.sin(a)])
        # holding the point would take 1.5-4 times μ m g of friction
        push = u * rng.uniform(1.5, 4.0) * 0.5 * 2.0 * G / np.linalg.norm(np.diag(M)[:2] * u)
        base = np.array([push[0], push[1], -G])
        x, lam, _ = _solve(_rows(H, [0.0, 0.0, 0.0], [BLOCK_POINT], [3], mu=0.5), M, base)
        fz, ft = lam[0], lam[1:3]
        at = x[:2]  # the point's tangential acceleration, its target 0
        assert fz == pytest.approx(2.0 * G, rel=1e-6)
        assert np.linalg.norm(ft) == pytest.approx(0.5 * fz, rel=1e-9)
        assert ft @ at < 0.0
        assert abs(ft[0] * at[1] - ft[1] * at[0]) <= 1e-6 * np.linalg.norm(ft) * np.linalg.norm(at)


def test_friction_of_a_sliding_contact_never_pushes_along_its_sliding(rng):
    """A point contact of a 3-dof body sliding along s: whatever the rows ask (here random
    tangential targets), its friction is the force nearest the unbounded one in the half of
    its disc that does not push along s (B = H M^-1 Hᵀ isotropic: the least of the objective
    there). It never does positive work on the sliding, and it holds the point across the
    sliding as far as μ f_z allows."""
    M = np.diag([2.0, 2.0, 2.0])
    H = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # v_z, v_x, v_y rows
    s = np.array([0.6, 0.8])
    mu = 0.5
    cases = {"inside": 0, "off the sliding's direction": 0, "on the arc": 0}
    for _ in range(60):
        base = np.array([0.6, 0.8, -1.0]) * rng.uniform(0.5, 2.0, 3)
        rhs = np.array([0.0, *rng.normal(scale=3.0, size=2)])
        rows = _rows(H, rhs, [BLOCK_POINT], [3], mu=mu)
        rows = rows._replace(slip=s.reshape(1, 2))
        _, lam, _ = _solve(rows, M, base)
        free = 2.0 * (rhs - H @ base)  # B = I / 2: the unbounded forces
        fz, ft = lam[0], lam[1:3]
        assert fz == pytest.approx(free[0], rel=1e-9) and fz > 0.0
        want = free[1:].copy()
        along = want @ s
        if along > 0.0:
            want -= along * s
        cap = mu * fz
        n = np.linalg.norm(want)
        case = "on the arc" if n > cap else ("off the sliding's direction" if along > 0.0 else "inside")
        cases[case] += 1
        if n > cap:
            want *= cap / n
        assert ft == pytest.approx(want, abs=1e-9 * fz), case
        assert ft @ s <= 1e-12 * fz
    assert min(cases.values()) > 0, cases


def g1_simulator() -> Simulator:
    """g1 of example-robot-data (29 joints with their stops, mesh collision hulls) on flat
    ground at its neutral pose; the test skips where example-robot-data is not installed."""
    urdfs = [s / "example-robot-data/robots/g1_description/urdf/g1_29dof_rev_1_0.urdf" for s in example_robot_data_share_dirs()]
    urdfs = [u for u in urdfs if u.is_file()]
    if not urdfs:
        pytest.skip("example-robot-data (g1) is not installed")
    model = load_urdf(urdfs[0])
    sim = Simulator(model, providers=[RangeOfMotionProvider(model, RangeOfMotionConfig())],
                    poses={"neutral": InitialPose("neutral")})  # fmt: skip
    sim.reset("neutral")
    return sim


def test_a_robot_lying_on_redundant_contacts_comes_to_rest():
    """g1 collapsing passively from its neutral pose ends lying on ten or more redundant
    contacts: every step of the lying is a bounded solve. The robot comes to rest and the
    ground carries its weight on every step of the last second. (The bounded solve corrects
    position errors only beyond the contact band: corrected all the way to 0, the errors of
    redundant contacts, measured contact by contact, fight each other and the robot never
    settles.) Its left hand lies last on two corners of its hull 4 mm apart and rocks from one
    to the other, an inelastic tap at each change, until about 5.9 s; the last second checked
    is the seventh."""
    sim = g1_simulator()
    model = sim.model
    mg = model.total_mass * float(np.linalg.norm(model.gravity))
    bounded = 0
    for step in range(7000):
        r = sim.step()
        assert r.validated or r.solver == "bounded"
        if step >= 6000:
            T = 0.5 * r.v @ ((mass_matrix(model, r.q) + np.diag(sim.armature)) @ r.v)
            fz = sum(c.wrench_world[2] for c in r.contacts if c.element == "ground")
            assert T < 1e-3, (r.t, T)
            assert abs(fz / mg - 1.0) < 5e-3, (r.t, fz / mg)
            bounded += r.solver == "bounded"
            # the bounded solve's Gauss-Seidel sweeps (at their cap: forces valid, not converged)
            assert (1 <= r.sweeps <= BOUNDED_SWEEPS) if r.solver == "bounded" else r.sweeps == 0
    assert bounded > 500  # lying on redundant contacts: the bounded solve
    assert len(r.contacts) >= 8


def test_a_lying_robot_whose_foot_rests_on_a_corner_does_not_creep():
    """g1 lying on twelve contacts (a state of a passive collapse from its neutral pose, in
    data/), its right foot resting on one corner of its sole, the corner's friction 0.5-0.7
    of its f_z (μ_s = 1): over a second no link moves and the ground carries the weight on
    every step. (A contact sliding at the phase's start had its friction held on the ray
    against its sliding: nothing held the corner across it, the step pushed it that way and
    it went on sliding, and the foot crept along the ground at 6 mm/s for 5 s.)"""
    sim = g1_simulator()
    model = sim.model
    x = np.loadtxt(DATA / "g1_lying_on_a_foot_corner.txt")
    sim.set_state(x[: model.nq], x[model.nq :])
    mg = model.total_mass * float(np.linalg.norm(model.gravity))
    for step in range(1100):
        r = sim.step()
        if step == 100:
            before = forward_kinematics(model, r.q)[:, :3, 3]
        if step >= 100:
            fz = sum(c.wrench_world[2] for c in r.contacts if c.element == "ground")
            assert abs(fz / mg - 1.0) < 1e-4, (r.t, fz / mg)
    moved = np.linalg.norm(forward_kinematics(model, r.q)[:, :3, 3] - before, axis=1)
    assert moved.max() < 1e-5, dict(zip(model.body_names, moved))
    assert r.solver == "bounded" and len(r.contacts) >= 10


def test_a_guard_takes_no_friction_after_a_bounded_pass_of_the_phase():
    """g1 tumbling at 1 m/s under random full-effort torques (a state of bench/falls.py, in
    data/), its shoulder sliding at 4.8 m/s just above the ground: the point nearest the
    ground is a guard, frictionless. The acceleration phase's first pass goes to the bounded
    solve, and a joint stop the step would carry past its limit (the watch) makes it solve
    again, checked. Every contact's friction stays within μ_s f_z, and the step adds no energy
    beyond the torques' work. (The bounded pass had left the guard sticking: the checked pass
    gave it friction rows and did not check them, 455 N of friction on 85 N, and the step
    gained 0.54 J.)"""
    sim = g1_simulator()
    model = sim.model
    nq, nv, nj = model.nq, model.nv, model.nj
    x = np.loadtxt(DATA / "g1_tumbling_onto_a_shoulder.txt")
    q, v, tau = x[:nq], x[nq : nq + nv], x[nq + nv :]
    sim.set_state(q, v)

    def energy(q, v):
        M = mass_matrix(model, q) + np.diag(sim.armature)
        return 0.5 * v @ M @ v - model.total_mass * float(model.gravity @ center_of_mass(model, q))

    before = energy(q, v)
    r = sim.step(tau)
    work = float(r.tau_applied @ (r.q[nq - nj :] - q[nq - nj :]))
    assert r.contacts and r.sweeps > 0  # a bounded pass ran in the acceleration phase
    mu_s = sim.config.environment.ground.material.mu_s
    for c in r.contacts:
        assert _valid(c, mu_s), (c.link, c.wrench_local)
    assert energy(r.q, r.v) - before - work < 1e-2


@pytest.mark.parametrize("seed, steps", [(14, 6400), (18, 3000)])
def test_a_flailing_foot_never_ends_a_step_more_than_a_millimetre_deep(seed, steps):
    """g1 under random full-effort torques (resampled every 50 ms, seeds 14 and 18) kicks and spins
    its feet on the ground. At t = 5.58 s a sole lies on the ground along one edge (a line
    contact); the checked rounds put p_v past one end, reduce the line to that end and fail
    their checks: the bounded solve must hold the edge as it was built (given the reduced
    point only, it let the other end go 0.8 mm in, every other step, to 4.2 mm). At t = 6.285 s
    a tilted sole (a surface contact, its deepest point 0.64 mm in) is reduced to the vertex
    nearest p_v, at the surface, and the checked solve passes: that reduction must not hold
    when the step drives the deepest point in (it went 0.65 mm deeper). Seed 18, t = 2.99 s: a
    foot spinning onto the ground rocks from edge to edge over the impulse passes (each pass
    stops one edge and turns another down); stopped after three passes, the step ended with a
    sphere 1.76 mm deep. No point ends deeper than 1 mm."""
    sim = g1_simulator()
    effort = np.asarray(sim.model.limits.effort, dtype=float)
    rng = np.random.default_rng(seed)
    deepest = 0.0
    for step in range(steps):
        if step % 50 == 0:
            tau = rng.uniform(-effort, effort)
        r = sim.step(tau)
        assert r.validated or r.solver == "bounded"
        deepest = max(deepest, r.max_penetration)
    assert deepest <= 1e-3, deepest


@pytest.mark.parametrize("definite", [True, False], ids=["positive_definite", "indefinite"])
def test_the_face_system_is_solved_by_cholesky_or_else_lu(definite, rng):
    """The subspace step's Q μ = x: a symmetric Q by its Cholesky factor, and one that is not
    positive definite (rounding, on a nearly dependent face) by LU from the same Q."""
    m = 6
    A = rng.normal(size=(m, m))
    Q = A @ A.T + np.eye(m) if definite else A + A.T
    x = rng.normal(size=m)
    Q_big, x_big = np.zeros((m + 2, m + 2)), np.zeros(m + 2)
    Q_big[:m, :m], x_big[:m] = Q, x
    assert _solve_faces(Q_big, x_big, m, True, np.zeros((m + 2, m + 2)), np.zeros(m + 2))
    np.testing.assert_allclose(Q @ x_big[:m], x, rtol=0, atol=1e-10 * np.abs(x).max() * np.linalg.cond(Q))


def _fall_solve(name: str, max_sweeps: int, tol: float):
    """A bounded solve of the bundled humanoid's passive fall from "stand" (bench/step.py's fall,
    the acceleration phase at t = 0.665 s ("a") and 0.918 s ("b")), as the step posed it
    (data/humanoid_fall_bounded_solves.npz: its rows, M's tree factor, the free acceleration and
    the warm start), solved with max_sweeps and tol. Returns (λ, sweeps)."""
    z = np.load(DATA / "humanoid_fall_bounded_solves.npz")
    rows = BoundedRows(*(z[f"{name}_{field}"] for field in BoundedRows._fields))
    reg = float(z[f"{name}_meta"][0])
    lam = z[f"{name}_lam0"].copy()
    x = np.empty(len(z[f"{name}_base"]))
    work = bounded_work(len(rows.rhs), len(x), len(rows.hull_xy))
    sweeps = bounded_solve_nb(rows, z[f"{name}_L"], z[f"{name}_parent"], z[f"{name}_base"], reg, max_sweeps, tol, x,
                              lam, work, True)  # fmt: skip
    return lam, sweeps


@pytest.mark.parametrize("name", ["a", "b"])
def test_frictions_still_turning_converge_to_their_limit(name):
    """Frictions on their bound whose direction the sweeps turn at a steady rate (one slow mode,
    0.96-0.97 per sweep) are extrapolated to the sweeps' limit: at the default tolerance the
    answer is within 5e-6 of the largest force from the answer at 1e-13, before the cap.
    (Swept only, "a" took 154 sweeps and "b" stopped at the cap, 9.7e-4 away.)"""
    lam, sweeps = _fall_solve(name, BOUNDED_SWEEPS, BOUNDED_TOLERANCE)
    exact, exact_sweeps = _fall_solve(name, 20000, 1e-13)
    assert exact_sweeps < 20000
    assert sweeps < (100 if name == "a" else BOUNDED_SWEEPS)
    assert np.abs(lam - exact).max() <= 5e-6 * np.abs(exact).max()


@pytest.mark.parametrize("m", [1, 3, 4, 7, 10])
def test_the_regularised_product_four_rows_at_a_time_is_one_row_at_a_time(m, rng):
    """(B + ε I) x over the first m rows, as the sweeps' running product starts from it."""
    B = rng.standard_normal((m + 2, m + 2))
    x, r = rng.standard_normal(m + 2), rng.standard_normal(m + 2)
    eps = 1e-3
    expected = np.empty(m)
    for a in range(m):
        s = eps * float(x[a])
        for b in range(m):
            s += float(B[a, b]) * float(x[b])
        expected[a] = s
    w = np.full(m + 2, np.nan)
    assert regularised_product_nb(B, eps, x, r, w, m) == np.abs(r[:m]).max()
    np.testing.assert_array_equal(w[:m], expected)
    assert np.isnan(w[m:]).all()
