"""The range of motion made, solved and kept inside the compiled step (limits/step_limits.py),
against the same provider through the general protocol (rows() and accept_forces())."""

from pathlib import Path

import numpy as np
import pytest

from general_path import GeneralPath
from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.contact.environment import Environment
from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion
from humanoid_sim.limits.range_config import RangeOfMotionConfig
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

REPO = Path(__file__).resolve().parents[2]
DT = 1e-3


class ForceOnFirst:
    """A general provider with one hard row on the first coordinate, always active and far from
    its limit (a row the solve leaves at zero force): it takes a place before the compiled one."""

    name = "first"

    def __init__(self, nv: int) -> None:
        self.nv = nv
        self.forces: list[np.ndarray] = []

    def rows(self, q, v):
        J = np.zeros((1, self.nv))
        J[0, 0] = 1.0
        one = np.ones(1)
        return OneSidedRows(J, np.zeros(1), -one, np.zeros(1), np.ones(1, bool), np.zeros(1), np.zeros(1),
                            np.zeros(1), ("first",))  # fmt: skip

    def accept_forces(self, forces):
        self.forces.append(np.array(forces))


def _fall_and_flail(sim: Simulator, steps: int, seed: int):
    """The humanoid from "stand": passive for the first half, then random full-effort torques
    resampled every 50 ms; yields each StepResult."""
    model = sim.model
    sim.reset("stand")
    rng = np.random.default_rng(seed)
    tau = None
    for i in range(steps):
        if i >= steps // 2 and i % 50 == 0:
            tau = rng.uniform(-1.0, 1.0, model.nj) * model.limits.effort
        yield sim.step(tau)


@pytest.mark.parametrize("config", ["stops", "range of motion"])
def test_the_compiled_rows_step_as_the_general_protocol_bit_for_bit(config):
    # the bundled humanoid falling onto its stops and flailing at full effort: every state, every
    # row, its force and the step's solver the same as through rows()/accept_forces()
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")

    def provider():
        if config == "stops":
            return RangeOfMotionProvider(model, RangeOfMotionConfig())
        return RangeOfMotionProvider(model, load_range_of_motion(REPO / "config" / "range_of_motion.yaml"))

    compiled, general = provider(), provider()
    a = Simulator(model, SimulatorConfig(dt=DT), providers=[compiled])
    b = Simulator(model, SimulatorConfig(dt=DT), providers=[GeneralPath(general)])
    assert a._compiled_provider is compiled and b._compiled_provider is None
    active = bounded = 0
    for ra, rb in zip(_fall_and_flail(a, 1600, 7), _fall_and_flail(b, 1600, 7)):
        assert np.array_equal(ra.q, rb.q) and np.array_equal(ra.v, rb.v)
        assert ra.solver == rb.solver
        ca, cb = compiled.report(), general.report()
        assert ca.names == cb.names
        assert np.array_equal(ca.violation, cb.violation) and np.array_equal(ca.force, cb.force)
        assert np.array_equal(ca.joint_torque, cb.joint_torque)
        assert len(ra.constraint_forces) == 1 and np.array_equal(ra.constraint_forces[0], rb.constraint_forces[0])
        active += len(ca.names) > 0
        bounded += ra.solver == "bounded"
    assert active > 400 and bounded > 50  # the stops were pressed, also in the bounded solve
    # the forces the next step starts from (the compiled rows keep those that are not 0)
    general_warm = {name: f for name, f in b._last_hard_forces().items() if f != 0.0}
    assert a._last_hard_forces() == general_warm != {}


def test_soft_rows_push_as_through_the_general_protocol(make_pendulum_urdf):
    # a soft stop's spring-damper force, applied in the compiled step: the same motion to rounding
    model = load_urdf(make_pendulum_urdf(-0.5, 0.3))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: soft, stiffness: 500, damping: 20}}\n")
    compiled, general = RangeOfMotionProvider(model, cfg), RangeOfMotionProvider(model, cfg)
    config = SimulatorConfig(dt=DT, environment=Environment(ground=None), gravity=np.zeros(3))
    a = Simulator(model, config, providers=[compiled])
    b = Simulator(model, config, providers=[GeneralPath(general)])
    for _ in range(3000):
        ra, rb = a.step(np.array([5.0])), b.step(np.array([5.0]))
        assert ra.q[0] == pytest.approx(rb.q[0], abs=1e-12) and ra.v[0] == pytest.approx(rb.v[0], abs=1e-9)
    assert ra.q[0] - 0.3 == pytest.approx(5.0 / 500.0, rel=1e-3)  # it yields in proportion to the load
    assert compiled.report().force == pytest.approx(general.report().force, rel=1e-9)
    assert compiled.report().force[0] == pytest.approx(5.0, rel=1e-3)


def test_a_step_without_rows_reports_none_and_a_general_provider_keeps_its_place(make_pendulum_urdf):
    model = load_urdf(make_pendulum_urdf(-0.5, 0.8))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: hard}}\n")
    config = SimulatorConfig(dt=DT, environment=Environment(ground=None))
    first, stops = ForceOnFirst(model.nv), RangeOfMotionProvider(model, cfg, lookahead=DT)
    sim = Simulator(model, config, providers=[first, stops])
    twin_first, twin_stops = ForceOnFirst(model.nv), RangeOfMotionProvider(model, cfg, lookahead=DT)
    twin = Simulator(model, config, providers=[twin_first, GeneralPath(twin_stops)])
    r = sim.step(np.zeros(1))  # hanging at 0, far from both stops
    twin.step(np.zeros(1))
    assert len(r.constraint_forces) == 2 and len(r.constraint_forces[1]) == 0 and len(first.forces) == 1
    assert stops.report().names == ()
    for _ in range(600):  # driven onto its upper stop and held there
        r, t = sim.step(np.array([50.0])), twin.step(np.array([50.0]))
        assert np.array_equal(r.q, t.q) and np.array_equal(r.v, t.v)
        assert all(np.array_equal(a, b) for a, b in zip(r.constraint_forces, t.constraint_forces, strict=True))
    assert stops.report().names == ("hinge upper",) and r.constraint_forces[1][0] > 10.0 and abs(r.v[0]) < 1e-9
    assert r.constraint_forces[1] == pytest.approx(stops.report().force)
    assert r.constraint_forces[0].shape == (1,) and len(first.forces) == 601
    assert np.array_equal(np.concatenate(first.forces), np.concatenate(twin_first.forces))
    # asked by hand between steps, the provider reports those rows until the next step
    stops.rows(np.array([0.0]), np.zeros(1))
    assert stops.report().names == ()
    sim.step(np.array([50.0]))
    assert stops.report().names == ("hinge upper",)


def test_the_compiled_rows_warm_start_by_code_and_forget_on_set_state(make_pendulum_urdf):
    model = load_urdf(make_pendulum_urdf(-0.5, 0.8))
    cfg = load_range_of_motion("joint_stops: {enabled: true, limit: {type: hard}}\n")
    provider = RangeOfMotionProvider(model, cfg, lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    for _ in range(400):
        sim.step(np.array([50.0]))
    warm = provider.compiled_rows.limits.warm
    assert provider.compiled_rows.names[0] == "hinge upper"
    # held at rest on its stop: its solved force (no impulse) is the force reported and kept
    assert warm[0] == provider.report().force[0] > 10.0 and warm[1] == 0.0
    assert sim._last_hard_forces() == {"hinge upper": warm[0]}
    sim.set_state(sim.q, sim.v)
    assert not warm.any() and sim._last_hard_forces() == {}
    sim.step(np.array([-50.0]))  # pulled off its stop: no row, nothing kept
    sim.step(np.array([-50.0]))
    assert not warm.any()


def test_groups_replaced_after_the_simulator_was_built_are_taken_up(make_shoulder_urdf, make_shoulder_yaml):
    model = load_urdf(make_shoulder_urdf())
    provider = RangeOfMotionProvider(model, load_range_of_motion(make_shoulder_yaml()), lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    kin = provider.groups[0]
    g = kin.group
    torque = 25.0 * np.cross(g.twist_axis, g.zero_azimuth_axis)
    for _ in range(1500):  # leaning the arm against its swing limit
        sim.step(kin.state(sim.q).J_group.T @ torque - 1.0 * sim.v)
    assert any(name.endswith("swing") for name in provider.report().names)
    provider.groups = []
    sim.step(kin.state(sim.q).J_group.T @ torque - 1.0 * sim.v)
    assert sim._compiled_rows is provider.compiled_rows
    assert not any(name.endswith("swing") for name in provider.report().names)


def test_a_group_row_that_is_not_finite_raises_one_clear_error_and_keeps_the_state(make_shoulder_urdf,
                                                                                    make_shoulder_yaml):
    # rates of 1e200 rad/s into the range's limits: the rows' drift, quadratic in them, overflows
    model = load_urdf(make_shoulder_urdf())
    provider = RangeOfMotionProvider(model, load_range_of_motion(make_shoulder_yaml()), lookahead=DT)
    sim = Simulator(model, SimulatorConfig(dt=DT, environment=Environment(ground=None)), providers=[provider])
    sim.set_state(sim.q, np.full(model.nv, 1e200))
    q, v, t = sim.q, sim.v, sim.t
    with pytest.raises(ValueError, match="range_of_motion: a non-finite limit row at this state"):
        sim.step(np.zeros(model.nj))
    assert np.array_equal(sim.q, q) and np.array_equal(sim.v, v) and sim.t == t
    assert provider.report().names == ()  # the refused step has nothing to report (and report() does not raise)
    with pytest.raises(ValueError, match="range_of_motion: a non-finite limit row at this state"):
        provider.rows(q, v)  # the general protocol says the same
