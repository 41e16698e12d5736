"""The cheap "no active limit" screen of RangeOfMotionProvider.rows (limits.kernels.rows_screen_nb).

Truth: the exact rows of ``RangeOfMotionProvider.evaluate``. The screen may only say
"clear" when evaluate returns no row; rows() must always equal evaluate().
"""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.limits import RangeOfMotionProvider, load_range_of_motion
from humanoid_sim.limits.kernels import rows_screen_nb
from humanoid_sim.limits.range_tables import range_tables
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def humanoid_provider():
    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    provider = RangeOfMotionProvider(model, load_range_of_motion(REPO / "config" / "range_of_motion.yaml"))
    q_stand = Simulator(model).reset("stand")
    return model, provider, q_stand


def _screen(provider, q, v) -> bool:
    return bool(rows_screen_nb(provider.work, q, v, provider.activation_band, provider.lookahead))


def test_screen_is_clear_at_the_standing_pose(humanoid_provider):
    model, provider, q = humanoid_provider
    assert len(provider.groups) == 4
    assert _screen(provider, q, np.zeros(model.nv))
    assert provider.rows(q, np.zeros(model.nv)).count == 0


def test_the_disc_the_screen_trusts_lies_inside_every_boundary(humanoid_provider, rng):
    """RangeTables.inner: every point s of the disc of that radius about the swing plane's
    origin is inside its group's boundary and at least inner - |s| from it (SwingBoundary's
    exact contains and nearest); the bundled humanoid's four groups all have such a disc
    (their neutral postures are inside)."""
    _, provider, _ = humanoid_provider
    none = np.zeros(0, np.int64)
    tables = range_tables(none, none, np.zeros(0), np.zeros(0), provider.groups)
    for g, kin in enumerate(provider.groups):
        boundary, inner = kin.group.boundary, float(tables.inner[g])
        assert inner > 0.0, kin.group.name
        for _ in range(300):
            angle, radius = rng.uniform(0.0, 2.0 * np.pi), inner * np.sqrt(rng.uniform())
            s = radius * np.array([np.cos(angle), np.sin(angle)])
            assert boundary.contains(s), (kin.group.name, s)
            assert boundary.nearest(s).distance >= inner - radius - 1e-12, (kin.group.name, s)
        # and the disc is not much smaller than the least distance of the boundary from the origin
        assert inner >= 0.9 * boundary.nearest(np.zeros(2)).distance


def test_screen_never_hides_an_active_row(humanoid_provider, rng):
    """Random postures inside, near and beyond the limits: clear => no exact row; and rows()
    gives exactly the rows of evaluate()."""
    model, provider, q_stand = humanoid_provider
    lo = np.where(np.isfinite(model.limits.lower), model.limits.lower, -3.0)
    hi = np.where(np.isfinite(model.limits.upper), model.limits.upper, 3.0)
    clear = active = 0
    for i in range(1500):
        q = q_stand.copy()
        if i % 3 == 0:
            q[7:] = rng.uniform(lo - 0.1, hi + 0.1)
        else:
            q[7:] += rng.normal(0.0, 0.4 if i % 3 == 1 else 0.05, model.nj)
        v = rng.normal(0.0, 1.0, model.nv)
        exact = provider.evaluate(q, v)
        if _screen(provider, q, v):
            clear += 1
            assert exact.count == 0, exact.names
        active += exact.count > 0
        rows = provider.rows(q, v)
        assert rows.names == exact.names
        np.testing.assert_array_equal(rows.jacobian, exact.jacobian)
        np.testing.assert_array_equal(rows.violation, exact.violation)
    assert clear > 100 and active > 100  # both outcomes were exercised


def test_rows_with_lookahead_match_evaluate(humanoid_provider, rng):
    model, provider, q_stand = humanoid_provider
    ahead = RangeOfMotionProvider(model, provider.config, lookahead=0.05)
    for _ in range(300):
        q = q_stand.copy()
        q[7:] += rng.normal(0.0, 0.5, model.nj)
        v = rng.normal(0.0, 3.0, model.nv)
        assert ahead.rows(q, v).names == ahead.evaluate(q, v).names



def test_screen_in_a_world_of_several_trees_is_the_robots_alone(humanoid_provider, rng):
    """With a free object after the robot, a joint's v index is not its q index less nq - nv:
    the look-ahead screen of the robot in the world reads its groups' own velocities, so it
    decides exactly as for the robot alone (reading v at q index - (nq - nv) differs here in
    about 3 % of the states)."""
    from humanoid_sim.world import assemble_world_model, load_world

    robot, _, _ = humanoid_provider
    config = load_range_of_motion(REPO / "config" / "range_of_motion.yaml")
    wm = assemble_world_model(load_world(REPO / "config" / "worlds" / "box_push.yaml"), robot)
    alone = RangeOfMotionProvider(robot, config, lookahead=0.05)
    in_world = RangeOfMotionProvider(wm.model, config, lookahead=0.05)
    assert wm.model.nq - wm.model.nv == 2 and len(in_world.groups) == 4
    q_world = Simulator.from_world(wm).q
    groups_q = np.concatenate([k.q_index for k in alone.groups])
    clear = 0
    for _ in range(1500):
        q = q_world[: robot.nq].copy()
        q[groups_q] += rng.normal(0.0, 0.2, len(groups_q))
        v = rng.normal(0.0, 1.0, robot.nv)
        qw, vw = q_world.copy(), np.zeros(wm.model.nv)
        qw[: robot.nq], vw[: robot.nv] = q, v
        verdict = _screen(alone, q, v)
        assert _screen(in_world, qw, vw) == verdict
        clear += verdict
    assert 10 < clear < 1490  # both verdicts were exercised
