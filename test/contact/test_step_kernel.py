"""The compiled step (contact/step_kernel.py) against the Python reference step
(test/oracle/reference_simulator.py): from the same state and contact memory, every step of
violent scenes gives the same state, contacts, wrenches and solver verdicts.

Each step starts both from the compiled simulator's state and memory, so the comparison is
per step (chaotic scenes would otherwise amplify rounding differences into different
trajectories). A step whose checked solve meets a nearly singular B (condition number above
1e10: redundant contacts of a lying robot) is decided by rounding -- whether B counts as
rank deficient, which contact is released first -- and the two implementations, which
round differently, may legitimately take different valid branches there. The same holds for
a slipping contact whose tangential velocity at the end of the step is below TIE_SPEED (two
feet sliding symmetrically to a stop: whether the slip "reverses" is the sign of 1e-12 m/s).
Such a step must only be valid (finite, solved by a checked or the bounded solve), and it
must be rare. The scenes reach every branch of the step: impacts and bounces, releases,
area reductions, slipping, spinning, rolling, hard rows of a joint stop, and the bounded
solve of a humanoid lying on the ground."""

from __future__ import annotations

import numpy as np
import pytest

import oracle.contact_solver
import oracle.reference_simulator

from contact_scenes import box_model, box_q, ground_sim
from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.contact.environment import Environment, GroundPlane, Material
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf, round_body_urdf
from humanoid_sim.robots import load_robot
from humanoid_sim.simulator import Simulator, SimulatorConfig
from oracle.contact_solver import ContactMemory
from oracle.reference_simulator import ReferenceSimulator

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def memory_of(sim: Simulator) -> dict:
    """The compiled step's contact memory as the reference's dict."""
    m = sim._memory
    cur = int(m.current[0])
    return {
        tuple(int(x) for x in m.key[cur, r]): ContactMemory(
            bool(m.sticking[cur, r]), m.R[cur, r].copy(), m.p[cur, r].copy(), m.slip[cur, r].copy(),
            m.force[cur, r].copy(), m.moment[cur, r].copy(), m.origin[cur, r].copy(),
        )
        for r in range(int(m.count[cur]))
    }


CONDITION_LIMIT = 1e10
TIE_SPEED = 1e-9  # [m/s]


@pytest.fixture(autouse=True)
def reference_conditioning(monkeypatch) -> list:
    """Records, per step, the largest condition number of a B the reference solves and the
    smallest end-of-step tangential speed of a slipping contact it checks."""
    seen: list[float] = [0.0, np.inf]
    solve, check = oracle.contact_solver.solve_constrained, oracle.contact_solver._check

    def recording(M_factor, H, H_hat, rhs, base):
        if H.shape[0]:
            Y = np.linalg.solve(M_factor.L.T @ M_factor.L, H_hat.T)
            seen[0] = max(seen[0], float(np.linalg.cond(H @ Y)))
        return solve(M_factor, H, H_hat, rhs, base)

    def checking(c, x, next_vt, ws, gains, apply, impulse=False):
        if not c.sticking:
            seen[1] = min(seen[1], float(np.hypot(*next_vt(c, x))))
        return check(c, x, next_vt, ws, gains, apply, impulse)

    monkeypatch.setattr(oracle.contact_solver, "solve_constrained", recording)
    monkeypatch.setattr(oracle.contact_solver, "_check", checking)
    _CONDITION[:] = [seen]
    return seen


_CONDITION: list = []


def compare_step(sim: Simulator, ref: ReferenceSimulator, tau, stats: dict) -> None:
    ref.set_state(sim.q, sim.v, sim.t)
    ref._reference_memory = memory_of(sim)
    ref._last_hard_force = sim._last_hard_forces()
    seen = _CONDITION[0]
    seen[:] = [0.0, np.inf]
    a = sim.step(tau)
    b = ref.step(tau)
    stats["steps"] += 1
    assert np.all(np.isfinite(a.q)) and np.all(np.isfinite(a.v))
    assert a.solver == "bounded" or a.validated
    try:
        same_step(a, b, stats)
    except AssertionError:
        if not (seen[0] > CONDITION_LIMIT or seen[1] < TIE_SPEED):
            raise
        stats["ill_posed"] += 1  # decided by rounding (module docstring)


def same_step(a, b, stats: dict) -> None:
    assert (a.solver, a.impulse, a.validated) == (b.solver, b.impulse, b.validated)
    # the bounded solve iterates to a tolerance: the two stop after different sweeps
    loose = 1e3 if a.solver == "bounded" else 1.0
    scale = 1.0 + np.max(np.abs(b.v))
    np.testing.assert_allclose(a.q, b.q, atol=1e-9 * scale * loose)
    np.testing.assert_allclose(a.v, b.v, atol=1e-7 * scale * loose)
    assert len(a.contacts) == len(b.contacts)
    if a.solver == "bounded":  # redundant contacts: the total is unique, not its distribution
        np.testing.assert_allclose(a.zmp.force, b.zmp.force, atol=1e-4 * (1.0 + np.abs(b.zmp.force).max()))
        stats["bounded"] += 1
        stats["impulse"] += a.impulse
        return
    for ca, cb in zip(a.contacts, b.contacts):
        assert (ca.link, ca.element, ca.kind, ca.sticking, ca.spinning) == (cb.link, cb.element, cb.kind, cb.sticking, cb.spinning)
        f = 1.0 + np.max(np.abs(cb.wrench_world))
        np.testing.assert_allclose(ca.wrench_world, cb.wrench_world, atol=1e-6 * f)
        np.testing.assert_allclose(ca.impulse_local, cb.impulse_local, atol=1e-9 * f)
        np.testing.assert_allclose(ca.points, cb.points, atol=1e-12)
        stats["kinds"].add(int(ca.kind))
        stats["slipping"] |= not ca.sticking
        stats["spinning"] |= ca.spinning
    assert a.max_penetration == pytest.approx(b.max_penetration, abs=1e-12)
    np.testing.assert_allclose(a.zmp.force, b.zmp.force, atol=1e-6 * (1.0 + np.abs(b.zmp.force).max()))
    for fa, fb in zip(a.constraint_forces, b.constraint_forces):
        np.testing.assert_allclose(fa, fb, atol=1e-6 * (1.0 + np.max(np.abs(fb), initial=0.0)))
    stats["bounded"] += a.solver == "bounded"
    stats["impulse"] += a.impulse


def new_stats() -> dict:
    return {"kinds": set(), "slipping": False, "spinning": False, "bounded": 0, "impulse": 0, "steps": 0, "ill_posed": 0}


def pair(model, config=None, **kwargs):
    return Simulator(model, config, **kwargs), ReferenceSimulator(model, config, **kwargs)


def test_humanoid_falling_and_lying_matches_the_reference() -> None:
    sim, ref = pair(load_robot())
    sim.reset("stand")
    stats = new_stats()
    for _ in range(1500):
        compare_step(sim, ref, None, stats)
    assert stats["bounded"] > 10 and stats["impulse"] > 10  # the lying robot's redundant contacts
    assert stats["ill_posed"] < 0.03 * stats["steps"]


def test_humanoid_flailing_matches_the_reference() -> None:
    sim, ref = pair(load_robot())
    sim.reset("stand")
    rng = np.random.default_rng(3)
    effort = sim.model.limits.effort
    stats = new_stats()
    for k in range(600):
        if k % 50 == 0:
            tau = rng.uniform(-effort, effort)
        compare_step(sim, ref, tau, stats)
    assert stats["impulse"] > 10 and stats["ill_posed"] < 0.03 * stats["steps"]


def test_tumbling_and_bouncing_box_matches_the_reference() -> None:
    env = Environment(ground=GroundPlane(0.0, Material(0.6, 0.5, 0.5)))
    sim, ref = pair(box_model(), SimulatorConfig(environment=env))
    R = np.array([[0.8, 0.0, 0.6], [0.0, 1.0, 0.0], [-0.6, 0.0, 0.8]])
    sim.set_state(box_q([0, 0, 0.3], R), np.array([1.5, 0.4, 0.0, 2.0, -5.0, 9.0]))
    stats = new_stats()
    for _ in range(1200):
        compare_step(sim, ref, None, stats)
    assert stats["kinds"] >= {1, 2, 3} and stats["slipping"] and stats["impulse"] > 3


def test_box_spun_on_the_ground_matches_the_reference() -> None:
    sim = ground_sim(Material(0.5, 0.4, 0.0))
    ref = ReferenceSimulator(sim.model, sim.config)
    sim.set_state(box_q([0, 0, 0.025], np.eye(3)), np.array([0.3, 0.0, 0.0, 0.0, 0.0, 6.0]))
    stats = new_stats()
    for _ in range(400):
        compare_step(sim, ref, None, stats)
    assert stats["spinning"] and stats["slipping"]


def test_box_sliding_down_a_slope_matches_the_reference() -> None:
    """A 30 degree slope as flat ground under gravity tilted by 30 degrees (the step's
    static boxes go through the narrow phase, the reference's through point detection)."""
    alpha = np.radians(30.0)
    env = Environment(ground=GroundPlane(0.0, Material(0.3, 0.25, 0.0)))
    gravity = 9.81 * np.array([np.sin(alpha), 0.0, -np.cos(alpha)])
    sim, ref = pair(box_model(), SimulatorConfig(environment=env, gravity=gravity))
    sim.set_state(box_q([0.0, 0.0, 0.025], np.eye(3)), np.zeros(6))
    stats = new_stats()
    for _ in range(300):
        compare_step(sim, ref, None, stats)
    assert stats["slipping"]


def test_rolling_cylinder_matches_the_reference() -> None:
    env = Environment(ground=GroundPlane(0.0, Material(0.8, 0.7, 0.0)))
    model = load_urdf(round_body_urdf("cylinder", 1.0, 0.1, 0.3))
    sim, ref = pair(model, SimulatorConfig(environment=env))
    R = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])  # axis along y: rolls along x
    sim.set_state(box_q([0, 0, 0.1], R), np.array([1.0, 0, 0, 0, 10.0, 0]))
    stats = new_stats()
    for _ in range(300):
        compare_step(sim, ref, None, stats)


def test_a_box_striking_with_one_edge_while_the_other_rises_matches_the_reference(monkeypatch) -> None:
    """The low edge strikes at 6 m/s while the other, 0.5 mm up, rises at 1 m/s: the first
    impulse turns the high edge down, and a second pass stops it (step 3's passes)."""
    passes: list[int] = []
    solve = oracle.reference_simulator.solve_with_checks

    def counting(*args, **kwargs):
        if kwargs.get("impulse"):
            passes[-1] += 1
        return solve(*args, **kwargs)

    monkeypatch.setattr(oracle.reference_simulator, "solve_with_checks", counting)
    env = Environment(ground=GroundPlane(0.0, Material(0.6, 0.5, 0.2)))
    sim, ref = pair(box_model(), SimulatorConfig(environment=env))
    length, height = 0.2, 0.05
    tilt = -np.arcsin(5e-4 / length)
    z = -0.5 * length * np.sin(tilt) + 0.5 * height * np.cos(tilt)
    R = np.array([[np.cos(tilt), 0.0, np.sin(tilt)], [0.0, 1.0, 0.0], [-np.sin(tilt), 0.0, np.cos(tilt)]])
    sim.set_state(box_q([0.0, 0.0, z], R), np.array([0.0, 0.0, -2.5, 0.0, -7.0 / length, 0.0]))
    stats = new_stats()
    for _ in range(300):
        passes.append(0)
        compare_step(sim, ref, None, stats)
    assert max(passes) >= 2 and stats["impulse"] >= 2


class UpperStop:
    """Joint 0 of a fixed-base pendulum may not exceed `upper` (one hard row)."""

    def __init__(self, nv: int, upper: float) -> None:
        self.nv, self.upper = nv, upper

    def rows(self, q, v):
        viol = q[0] - self.upper
        if viol < -0.05:
            return OneSidedRows.empty(self.nv)
        J = np.zeros((1, self.nv))
        J[0, 0] = -1.0  # gap = upper - q
        z = np.zeros(1)
        return OneSidedRows(J, z, np.array([viol]), z, np.array([True]), z, z, np.array([0.3]), ("upper",))

    def accept_forces(self, forces) -> None:
        pass


class AllStops:
    """Every joint of a chain may not exceed `upper` (one hard row each, all at once)."""

    def __init__(self, nv: int, upper: float) -> None:
        self.nv, self.upper = nv, upper

    def rows(self, q, v):
        n = self.nv
        z = np.zeros(n)
        return OneSidedRows(-np.eye(n), z, q - self.upper, z, np.ones(n, bool), z, z, np.full(n, 0.3),
                            tuple(f"upper {k}" for k in range(n)))  # fmt: skip

    def accept_forces(self, forces) -> None:
        pass


def test_more_hard_rows_than_the_tables_hold_match_the_reference() -> None:
    """20 joint stops at once: the step grows its hard-row table mid-step (its factor of M
    carries over) and still matches the reference."""
    model = load_urdf(chain_urdf(20))
    cfg = SimulatorConfig(environment=Environment(ground=None))
    sim = Simulator(model, cfg, providers=[AllStops(model.nv, 0.0)])
    ref = ReferenceSimulator(model, cfg, providers=[AllStops(model.nv, 0.0)])
    sim.set_state(np.zeros(model.nq), np.full(model.nv, 0.5))
    stats = new_stats()
    for _ in range(50):
        compare_step(sim, ref, np.full(model.nj, 5.0), stats)
    assert stats["impulse"] >= 1


def test_joint_stop_rows_match_the_reference() -> None:
    model = load_urdf(chain_urdf(1))
    cfg = SimulatorConfig(environment=Environment(ground=None))
    sim = Simulator(model, cfg, providers=[UpperStop(model.nv, upper=0.3)])
    ref = ReferenceSimulator(model, cfg, providers=[UpperStop(model.nv, upper=0.3)])
    sim.set_state(np.array([0.0]), np.array([4.0]))
    stats = new_stats()
    for k in range(800):
        compare_step(sim, ref, np.array([30.0 if k < 400 else -30.0]), stats)
    assert stats["impulse"] >= 1
