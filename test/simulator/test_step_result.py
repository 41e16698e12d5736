"""A step's result (simulator/step_result.py): made from a copy of what the compiled step wrote,
its arrays, ZMP and contacts decoded when first read. Read at once or after later steps, the
same values; its arrays its own; immutable; its ZMP that of its contacts. And the compiled step
itself allocates nothing but its array arguments' boxes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.balance.zmp import zmp_report
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator import Simulator, SimulatorConfig, StepResult
from package_under_test import python_command, subprocess_env

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid():
    return load_urdf(REPO / "urdf" / "humanoid.urdf")


def _values(r: StepResult) -> list:
    """Everything a result says, as copies (plain values and arrays)."""
    z = r.zmp
    contacts = [(c.link, c.element, c.kind, c.sticking, c.spinning, c.points.copy(), c.origin.copy(),
                 c.R_world_vl.copy(), c.wrench_local.copy(), c.wrench_world.copy(), c.impulse_local.copy(),
                 c.p_v.copy(), c.other_body) for c in r.contacts]  # fmt: skip
    return [r.t, r.q.copy(), r.v.copy(), r.tau_applied.copy(), r.acceleration.copy(), z.zmp.copy(),
            z.support_polygon.copy(), z.margin, z.force.copy(), z.moment.copy(), r.rounds, r.validated, r.impulse,
            r.max_penetration, r.solver, r.sweeps, r.watched, r.stages, contacts]  # fmt: skip


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)  # NaN margins are the same


def test_a_result_read_after_later_steps_is_the_one_read_at_once(humanoid, rng):
    """Two simulators take the same efforts (random, up to 40 N m: feet rocking, slipping,
    lifting); one's results are read at once, the other's only after all 80 steps: every
    field is the same."""
    taus = rng.uniform(-40.0, 40.0, (80, humanoid.nj))
    read_at_once, kept = Simulator(humanoid), Simulator(humanoid)
    read_at_once.reset("stand")
    kept.reset("stand")
    expected = [_values(read_at_once.step(tau)) for tau in taus]
    results = [kept.step(tau) for tau in taus]
    assert len({len(e[-1]) for e in expected}) > 1  # the contacts changed over the run
    for r, e in zip(results, expected, strict=True):
        assert _same(_values(r), e)


def test_a_result_s_arrays_are_its_own(humanoid):
    """Writing into a result's arrays changes neither the simulator's state nor another result."""
    sim, twin = Simulator(humanoid), Simulator(humanoid)
    sim.reset("stand")
    twin.reset("stand")
    first, twin_first = sim.step(), twin.step()
    state = sim.q, sim.v
    for a in (first.q, first.v, first.tau_applied, first.acceleration, first.zmp.zmp, first.contacts[0].wrench_world):
        a[:] = 1e3
    assert np.array_equal(sim.q, state[0]) and np.array_equal(sim.v, state[1])
    second = sim.step()
    assert _same(_values(second), _values(twin.step()))
    assert not np.shares_memory(second.q, first.q) and not np.shares_memory(second.q, sim.q)
    assert np.array_equal(twin_first.q, state[0])


def test_a_result_is_immutable_and_lists_its_fields_in_order(humanoid):
    sim = Simulator(humanoid)
    sim.reset("stand")
    r = sim.step()
    with pytest.raises(AttributeError):
        r.q = np.zeros(humanoid.nq)
    with pytest.raises(AttributeError):
        r.extra = 1
    assert list(r._asdict()) == list(StepResult._fields)
    assert [name for name, _ in zip(StepResult._fields, r, strict=True)] == list(StepResult._fields)
    assert tuple(r)[0] == r.t and tuple(r)[-1] == r.stages
    made = StepResult(1.0, np.zeros(3), np.ones(3), np.zeros(2), (), None, 2, True, False, 0.0, (), np.zeros(3))
    assert (made.t, made.rounds, made.solver, made.sweeps, made.watched, made.stages) == (1.0, 2, "checked", 0, 0, 3)
    assert np.array_equal(made.v, np.ones(3)) and made.contacts == () and made.zmp is None


def test_the_result_s_zmp_is_that_of_its_ground_contacts(humanoid, rng):
    """The step's ZMP (computed in the compiled step) is balance.zmp_report of the reported
    wrenches and points: point, support polygon, margin, total force and moment."""
    sim = Simulator(humanoid)
    sim.reset("stand")
    for tau in rng.uniform(-40.0, 40.0, (40, humanoid.nj)):
        r = sim.step(tau)
        c = r.contacts
        if not c:  # in the air: no ZMP, no support
            assert np.all(np.isnan(r.zmp.zmp)) and len(r.zmp.support_polygon) == 0 and np.isnan(r.zmp.margin)
            continue
        expected = zmp_report(np.array([k.wrench_world[:3] for k in c]), np.array([k.origin for k in c]),
                              np.array([k.wrench_world[3:] for k in c]), np.vstack([k.points[:, :2] for k in c]))
        z = r.zmp
        assert np.allclose(z.zmp, expected.zmp, rtol=0, atol=1e-12)
        assert np.allclose(z.force, expected.force, rtol=1e-14, atol=1e-9)
        assert np.allclose(z.moment, expected.moment, rtol=1e-14, atol=1e-9)
        assert sorted(map(tuple, z.support_polygon)) == sorted(map(tuple, expected.support_polygon))
        assert z.margin == pytest.approx(expected.margin, abs=1e-12)


@pytest.mark.parametrize("method", ["relaxed_qp", "penalty_volume"])
def test_per_point_forces_are_read_back_with_their_points(humanoid, method):
    """Under the per-point methods the copy also holds each point's force: read after later
    steps, a contact's point forces are one row per point and sum to its wrench's force."""
    sim = Simulator(humanoid, SimulatorConfig(contact_method=method))
    sim.reset("stand")
    results = [sim.step() for _ in range(30)]
    for r in results:
        assert len(r.contacts) == 2
        for c in r.contacts:
            assert c.point_forces.shape == c.points.shape
            assert np.allclose(c.point_forces.sum(axis=0), c.wrench_world[:3], rtol=1e-12, atol=1e-9)


ALLOCATIONS = """
import sys
from humanoid_sim.model import load_urdf  # first: the package chooses numba's cache before numba starts
from humanoid_sim.simulator import Simulator
from numba.core.runtime import rtsys
sim = Simulator(load_urdf(sys.argv[1]))
sim.reset("stand")
for _ in range(1300):  # the fall once: the step's tables grow to what it needs (allocated then)
    sim.step()
sim.reset("stand")
counts = []
for _ in range(3):  # standing, then falling onto the ground (impacts, slipping, the bounded solve), then lying
    before = rtsys.get_allocation_stats().alloc
    for _ in range(400):
        sim.step()
    counts.append((rtsys.get_allocation_stats().alloc - before) / 400)
print(*counts)
"""


def test_the_compiled_step_allocates_only_its_arguments_boxes():
    """numba's memory statistics over a passive fall: each compiled step allocates exactly the
    boxes of its three array arguments (the efforts, the external and soft generalized forces;
    the state is the step's own, contact/step_data.StepState), nothing in the step itself."""
    run = subprocess.run(python_command("-c", ALLOCATIONS, str(REPO / "urdf" / "humanoid.urdf")), capture_output=True,
                         text=True, timeout=900, env=subprocess_env({**os.environ, "NUMBA_NRT_STATS": "1"}))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert [float(x) for x in run.stdout.split()] == [3.0, 3.0, 3.0]
