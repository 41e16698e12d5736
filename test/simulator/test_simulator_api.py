"""Simulator contract: poses, determinism, clamping, failures, momentum, provider rows."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.contact.constraint_rows import ConstraintProvider, OneSidedRows
from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics.kinematics import frame_placement
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model import load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf
from humanoid_sim.simulator.simulator import SimulationError, Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def test_stand_pose_puts_flat_soles_exactly_on_the_ground(humanoid):
    sim = Simulator(humanoid)
    q = sim.reset("stand")
    assert np.all(sim.v == 0) and sim.t == 0.0
    for sole in ("l_sole", "r_sole"):
        X = frame_placement(humanoid, q, sole)
        assert abs(X[2, 3]) < 1e-12  # sole centre at ground height
        assert X[2, 2] == pytest.approx(1.0, abs=1e-12)  # flat
    knee = q[7 + humanoid.joint_index("l_knee")]
    assert knee > 0.1  # knees slightly bent
    with pytest.raises(KeyError, match="valid initial poses: .*stand"):
        sim.reset("handstand")


def test_same_inputs_give_the_same_bits(humanoid, rng):
    taus = rng.uniform(-20, 20, size=(150, humanoid.nj))
    runs = []
    for _ in range(2):
        sim = Simulator(humanoid)
        sim.reset("stand")
        runs.append(np.array([np.concatenate([r.q, r.v]) for r in (sim.step(t) for t in taus)]))
    assert np.array_equal(runs[0], runs[1])


def test_a_step_s_contact_reports_are_its_own(humanoid):
    # reports are copies: later steps (other contacts, other forces) and edits of another
    # step's reports leave them as they were
    sim = Simulator(humanoid)
    sim.reset("stand")
    first = sim.step()
    kept = [(c.link, c.points.copy(), c.wrench_world.copy(), c.R_world_vl.copy(), c.p_v.copy()) for c in first.contacts]
    assert {c.link for c in first.contacts} == {"l_foot", "r_foot"}
    assert all(c.wrench_world[2] > 0.0 for c in first.contacts)
    tau = np.zeros(humanoid.nj)
    tau[humanoid.joint_index("l_hip_pitch")] = 40.0
    later = [sim.step(tau) for _ in range(100)]
    later[-1].contacts[0].wrench_world[:] = 0.0
    for c, (link, points, wrench, R, pv) in zip(first.contacts, kept, strict=True):
        assert c.link == link
        assert np.array_equal(c.points, points) and np.array_equal(c.wrench_world, wrench)
        assert np.array_equal(c.R_world_vl, R) and np.array_equal(c.p_v, pv)
    assert not np.array_equal(later[-2].contacts[0].wrench_world, first.contacts[0].wrench_world)


def test_torques_are_clamped_to_effort_limits(humanoid):
    sim = Simulator(humanoid)
    sim.reset("stand")
    tau = np.full(humanoid.nj, 1e5)
    tau[3] = -1e5
    r = sim.step(tau)
    eff = humanoid.limits.effort
    assert np.array_equal(r.tau_applied[:3], eff[:3]) and r.tau_applied[3] == -eff[3]


def test_a_failed_step_raises_and_leaves_the_state_unchanged(humanoid):
    sim = Simulator(humanoid)
    sim.reset("stand")
    sim.step(np.zeros(humanoid.nj))
    q, v, t = sim.q, sim.v, sim.t
    tau = np.zeros(humanoid.nj)
    tau[0] = np.nan
    with pytest.raises(SimulationError, match="non-finite"):
        sim.step(tau)
    with pytest.raises(ValueError, match="expected"):
        sim.step(np.zeros(3))
    assert np.array_equal(sim.q, q) and np.array_equal(sim.v, v) and sim.t == t


def _spatial_momentum(model, q, v) -> np.ndarray:
    ws = DynamicsWorkspace(model)
    ws.update(q, v)
    return np.einsum("bij,bj->i", ws.Iw, ws.V)  # (P, L about the world origin)


def test_free_flight_conserves_momentum_under_internal_torques(humanoid, rng):
    cfg = SimulatorConfig(dt=5e-4, environment=Environment(ground=None), gravity=np.zeros(3))
    sim = Simulator(humanoid, cfg)
    q = sim.reset("stand")
    q[2] += 5.0
    v = rng.uniform(-0.5, 0.5, humanoid.nv)
    sim.set_state(q, v)
    h0 = _spatial_momentum(sim.model, q, v)
    for _ in range(1000):
        r = sim.step(rng.uniform(-5, 5, humanoid.nj))
        assert not r.contacts
    h1 = _spatial_momentum(sim.model, r.q, r.v)
    assert np.allclose(h1, h0, atol=2e-3 * np.linalg.norm(h0))


def test_free_fall_gains_linear_momentum_m_g_t(humanoid):
    sim = Simulator(humanoid, SimulatorConfig(environment=Environment(ground=None)))
    q = sim.reset("stand")
    for _ in range(200):
        r = sim.step()
    P = _spatial_momentum(humanoid, r.q, r.v)[:3]
    assert np.allclose(P, humanoid.total_mass * humanoid.gravity * r.t, rtol=1e-9, atol=1e-9)
    del q


class UpperStop:
    """A test provider: joint 0 of a fixed-base pendulum may not exceed `upper` (hard or soft)."""

    name = "upper_stop"

    def __init__(self, nv, upper, hard=True, stiffness=0.0, damping=0.0):
        self.nv, self.upper, self.hard = nv, upper, hard
        self.stiffness, self.damping = stiffness, damping
        self.forces = None

    def rows(self, q, v):
        viol = q[0] - self.upper
        if viol < -1e-3:
            return OneSidedRows.empty(self.nv)
        J = np.zeros((1, self.nv))
        J[0, 0] = -1.0  # gap = upper - q
        z = np.zeros(1)
        return OneSidedRows(J, z, np.array([viol]), z, np.array([self.hard]), np.array([self.stiffness]),
                            np.array([self.damping]), z, ("joint1 upper",))  # fmt: skip

    def accept_forces(self, forces):
        self.forces = forces


def test_hard_provider_row_holds_a_joint_at_its_stop_with_the_right_force():
    model = load_urdf(chain_urdf(1))
    stop = UpperStop(model.nv, upper=0.3)
    assert isinstance(stop, ConstraintProvider)
    cfg = SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3))
    sim = Simulator(model, cfg, providers=[stop])
    tau = np.array([5.0])  # pushes towards +q
    for _ in range(2000):
        r = sim.step(tau)
    assert abs(r.q[0] - 0.3) < 1e-4
    assert stop.forces[0] == pytest.approx(5.0, rel=1e-6)  # the stop balances the drive
    # pulled away, it is released (zero force) and the joint leaves the stop
    for _ in range(200):
        r = sim.step(-tau)
    assert r.q[0] < 0.29 and (stop.forces is None or np.all(stop.forces == 0) or len(stop.forces) == 0)


class BadRows(UpperStop):
    """UpperStop whose one active row has one field replaced by ``value``."""

    def __init__(self, nv, field, value):
        super().__init__(nv, upper=-1.0)
        self.field, self.value = field, value

    def rows(self, q, v):
        return super().rows(q, v)._replace(**{self.field: self.value})


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("jacobian", np.array([[np.nan]]), "non-finite jacobian or drift"),
        ("drift", np.array([np.inf]), "non-finite jacobian or drift"),
        ("restitution", np.array([1.5]), r"restitution must lie in \[0, 1\]"),
        ("restitution", np.array([np.nan]), r"restitution must lie in \[0, 1\]"),
        ("stiffness", np.zeros(2), r"stiffness has shape \(2,\), expected \(1,\)"),
        ("names", (), "names has 0 labels, expected 1"),
    ],
)
@pytest.mark.parametrize("rows_checked", [None, False, 1])
def test_malformed_provider_rows_raise_one_clear_error_and_keep_the_state(field, value, message, rows_checked):
    # validated unless the provider says, with rows_checked = True, that its rows are checked where made
    model = load_urdf(chain_urdf(1))
    cfg = SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3))
    provider = BadRows(model.nv, field, value)
    if rows_checked is not None:
        provider.rows_checked = rows_checked
    sim = Simulator(model, cfg, providers=[provider])
    q, v, t = sim.q.copy(), sim.v.copy(), sim.t
    with pytest.raises(ValueError, match=message):
        sim.step(np.array([1.0]))
    assert np.array_equal(sim.q, q) and np.array_equal(sim.v, v) and sim.t == t


def test_soft_provider_row_yields_in_proportion_to_the_load():
    model = load_urdf(chain_urdf(1))
    k = 500.0
    stop = UpperStop(model.nv, upper=0.3, hard=False, stiffness=k, damping=20.0)
    cfg = SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3))
    sim = Simulator(model, cfg, providers=[stop])
    for _ in range(4000):
        r = sim.step(np.array([5.0]))
    assert r.q[0] - 0.3 == pytest.approx(5.0 / k, rel=1e-3)
    assert stop.forces[0] == pytest.approx(5.0, rel=1e-3)


def test_tables_grown_between_two_steps_change_nothing_of_the_next(humanoid):
    # the humanoid with joint friction falling onto its stops (bounded solves with friction rows,
    # warm-started from the last step's torques): a twin whose tables grow twice mid-fall, as a
    # step that runs out of room grows them, steps to the same bits
    from dataclasses import replace

    from humanoid_sim.limits import RangeOfMotionProvider
    from humanoid_sim.limits.range_config import RangeOfMotionConfig
    from humanoid_sim.model.robot_model import JointDynamics

    model = replace(humanoid, joint_dynamics=JointDynamics(np.zeros(humanoid.nj), np.full(humanoid.nj, 2.0)))
    a, b = (Simulator(model, providers=[RangeOfMotionProvider(model, RangeOfMotionConfig())]) for _ in range(2))
    a.reset("stand")
    b.reset("stand")
    bounded = 0
    for i in range(700):
        if i in (450, 560):
            b._allocate_step(2 * len(b._tables[0].body), 2 * b._hard_room)
        ra, rb = a.step(None), b.step(None)
        assert np.array_equal(ra.q, rb.q) and np.array_equal(ra.v, rb.v), f"step {i}"
        bounded += i >= 450 and ra.solver == "bounded"
    assert bounded > 50 and len(b._tables[0].body) == 4 * len(a._tables[0].body)
