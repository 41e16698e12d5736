"""Limit rows of the provider: signs, values, and derivatives against finite differences."""

import numpy as np
import pytest

from humanoid_sim.contact.constraint_rows import ConstraintProvider
from humanoid_sim.limits.ball_joint_rows import BallJointKinematics
from humanoid_sim.limits.kernels import DRIFT_SPEED, SWING_CHART_LIMIT
from humanoid_sim.limits.range_config import load_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.limits.swing_twist import axis_angle_matrix
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig


@pytest.fixture
def pendulum_provider(make_pendulum_urdf):
    model = load_urdf(make_pendulum_urdf(-0.5, 0.8))
    return RangeOfMotionProvider(model, load_range_of_motion("joint_stops: {enabled: true}\n"))


def test_provider_satisfies_the_solver_protocol(pendulum_provider):
    assert isinstance(pendulum_provider, ConstraintProvider)


@pytest.mark.parametrize("q, name, row, violation", [(0.9, "hinge upper", -1.0, 0.1), (-0.6, "hinge lower", 1.0, 0.1)])
def test_stop_rows(pendulum_provider, q, name, row, violation):
    rows = pendulum_provider.rows(np.array([q]), np.array([0.3]))
    rows.validate(1)
    assert rows.names == (name,)
    np.testing.assert_allclose(rows.jacobian, [[row]])
    assert rows.violation[0] == pytest.approx(violation)
    assert rows.drift[0] == 0.0 and rows.hard[0]
    pendulum_provider.accept_forces(np.array([7.0]))
    report = pendulum_provider.report()
    assert report.joint_torque[0] == pytest.approx(7.0 * row)  # the stop pushes back inside


def test_no_rows_inside_the_range(pendulum_provider):
    assert pendulum_provider.rows(np.array([0.2]), np.array([5.0])).count == 0
    with pytest.raises(ValueError, match="1 forces for 0 rows"):
        pendulum_provider.accept_forces(np.array([1.0]))


@pytest.fixture
def shoulder(make_shoulder_urdf, make_shoulder_yaml):
    model = load_urdf(make_shoulder_urdf())
    cfg = load_range_of_motion(make_shoulder_yaml())
    return model, BallJointKinematics(model, cfg.ball_joints[0])


def test_group_rotation_matches_the_joint_chain(shoulder, rng):
    _, kin = shoulder
    for _ in range(20):
        q = rng.uniform(-2, 2, 3)
        R = axis_angle_matrix(np.array([0, 1.0, 0]), q[0]) @ axis_angle_matrix(np.array([1.0, 0, 0]), q[1])
        R = R @ axis_angle_matrix(np.array([0, 0, 1.0]), q[2])
        np.testing.assert_allclose(kin.state(q).R_rel, R, atol=1e-12)


def _gaps(kin, q):
    return {r.kind: r.gap for r in kin.rows(q, np.inf)}


def test_group_rows_are_gap_rates(shoulder, rng):
    """row · q̇ = d gap/dt for swing and both twist rows, at postures inside and outside."""
    _, kin = shoulder
    h = 1e-6
    checked = 0
    for _ in range(60):
        q = rng.uniform(-1.6, 1.6, 3)
        qd = rng.normal(size=3)
        plus, minus = _gaps(kin, q + h * qd), _gaps(kin, q - h * qd)
        for r in kin.rows(q, np.inf):
            fd = (plus[r.kind] - minus[r.kind]) / (2 * h)
            assert r.row @ qd == pytest.approx(fd, rel=1e-4, abs=1e-5), r.kind
            checked += 1
    assert checked >= 150


def test_group_drift_is_the_gap_acceleration_at_constant_rates(shoulder, rng):
    _, kin = shoulder
    h = 1e-4
    for _ in range(30):
        q = rng.uniform(-1.6, 1.6, 3)
        qd = rng.normal(size=3)
        g0, gp, gm = _gaps(kin, q), _gaps(kin, q + h * qd), _gaps(kin, q - h * qd)
        for r in kin.rows_with_drift(q, qd, np.inf):
            # q(t) = q + t q̇ has q̈ = 0, so g̈ = d/dt(row) q̇ = drift
            assert r.drift == pytest.approx((gp[r.kind] - 2 * g0[r.kind] + gm[r.kind]) / h**2, rel=2e-3, abs=2e-3)


def test_group_drift_below_the_drift_speed_is_left_out_where_it_is_negligible(shoulder, rng):
    # the drift is quadratic in the rates: below DRIFT_SPEED it is taken as 0 (two fewer
    # evaluations of the group), and what is left out is (rate / 1 rad/s)² of the unit-rate drift
    _, kin = shoulder
    for _ in range(30):
        q = rng.uniform(-1.6, 1.6, 3)
        u = rng.normal(size=3)
        u /= np.abs(u).max()
        unit = {r.kind: r.drift for r in kin.rows_with_drift(q, u, np.inf)}
        assert max(abs(d) for d in unit.values()) > 0.0
        for r in kin.rows_with_drift(q, 0.5 * DRIFT_SPEED * u, np.inf):
            assert r.drift == 0.0
            assert abs(unit[r.kind]) * (0.5 * DRIFT_SPEED) ** 2 < 1e-9
        for r in kin.rows_with_drift(q, 2.0 * DRIFT_SPEED * u, np.inf):  # above it: computed
            assert r.drift == pytest.approx(unit[r.kind] * (2.0 * DRIFT_SPEED) ** 2, rel=1e-6, abs=1e-300)


def test_swing_row_sign_and_activation(shoulder):
    model, kin = shoulder
    cfg_group = kin.group
    provider = RangeOfMotionProvider(model, load_range_of_motion("ball_joints: []\n"))
    assert provider.rows(np.zeros(3), np.zeros(3)).count == 0
    provider.groups = [kin]
    # arm swung 1.0 rad backward (pitch +1): beyond the 40 deg backward limit
    rows = provider.rows(np.array([1.0, 0.0, 0.0]), np.zeros(3))
    assert rows.names == ("shoulder swing",)
    # violation = distance in the swing plane to the nearest boundary posture (seed 003, 3.4)
    b = cfg_group.boundary
    dense = np.array([b.point(i, t) for i in range(b.n_points) for t in np.linspace(0, 1, 2001)])
    s = np.array([-1.0, 0.0])  # θ = 1 rad towards φ = 180°
    assert rows.violation[0] == pytest.approx(np.min(np.linalg.norm(dense - s, axis=1)), abs=1e-6)
    assert 0.0 < rows.violation[0] <= 1.0 - np.radians(40)
    # pitching forward (q̇ < 0) moves back inside: positive gap rate
    near = b.nearest(s)
    expected = -(s - near.point) / near.distance @ np.array([1.0, 0.0])  # ṡ = (1, 0) towards the centre
    assert rows.jacobian[0] @ np.array([-1.0, 0.0, 0.0]) == pytest.approx(expected, rel=1e-6)
    assert expected > 0.5
    # well inside: nothing; near the twist limit: a twist row only
    assert provider.rows(np.array([-0.5, 0.2, 0.1]), np.zeros(3)).count == 0
    # yaw about +z with the twist axis -z: twist ψ = -yaw
    rows = provider.rows(np.array([0.0, 0.0, np.radians(-61)]), np.zeros(3))
    assert rows.names == ("shoulder twist upper",) and rows.violation[0] == pytest.approx(np.radians(1))
    assert cfg_group.name == "shoulder"


def test_a_group_near_its_charts_singular_point_makes_no_rows_and_raises_nothing(shoulder):
    """Swung to θ = π (the arm straight up: pitch π, roll and yaw 0), the swing-twist chart is
    singular: the swing's direction and the twist are undefined there, and its rates were
    divisions by zero (a simulator with the provider raised ZeroDivisionError at such a
    state). Beyond SWING_CHART_LIMIT the group makes no rows; the posture reads θ = π, φ = 0;
    a simulator steps on from it."""
    model, kin = shoulder
    provider = RangeOfMotionProvider(model, load_range_of_motion("ball_joints: []\n"))
    provider.groups = [kin]
    for q in ([np.pi, 0.0, 0.0], [-np.pi, 0.0, 0.0], [0.0, np.pi, 0.0], [np.pi - 0.01, 0.0, 0.0]):
        for qd in (np.zeros(3), np.array([1.0, -0.5, 0.3])):
            assert provider.rows(np.array(q), qd).count == 0, q
    angles = kin.state(np.array([np.pi, 0.0, 0.0])).angles
    assert angles.theta == pytest.approx(np.pi) and angles.phi == 0.0
    np.testing.assert_array_equal(angles.swing_point, [angles.theta, 0.0])
    # inside the limit the swing row is there, finite, and the chart's rates large but bounded
    rows = provider.rows(np.array([SWING_CHART_LIMIT - 0.01, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]))
    assert "shoulder swing" in rows.names
    assert np.all(np.isfinite(rows.jacobian)) and np.abs(rows.jacobian).max() < 1e4
    sim = Simulator(model, SimulatorConfig(dt=1e-3), providers=[provider])
    sim.set_state(np.array([np.pi, 0.0, 0.0]), np.array([0.5, 0.0, 0.0]))
    for _ in range(20):
        r = sim.step()
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))


def test_read_only_and_list_states_give_the_same_rows(pendulum_provider):
    """A read-only state (a StepResult's arrays) or a list gives the rows of the same state as
    writable float64 vectors."""
    q, v = np.array([0.9]), np.array([0.3])
    expected = pendulum_provider.rows(q, v)
    q.setflags(write=False)
    v.setflags(write=False)
    for state in ((q, v), ([0.9], [0.3])):
        rows = pendulum_provider.rows(*state)
        assert rows.names == expected.names
        np.testing.assert_array_equal(rows.jacobian, expected.jacobian)
        np.testing.assert_array_equal(rows.violation, expected.violation)


def test_forces_of_no_rows_are_accepted_and_reported_as_none(pendulum_provider):
    assert pendulum_provider.rows(np.array([0.9]), np.array([0.0])).count == 1
    pendulum_provider.accept_forces(np.array([3.0]))
    assert pendulum_provider.rows(np.array([0.2]), np.array([0.0])).count == 0
    pendulum_provider.accept_forces(np.zeros(0))
    report = pendulum_provider.report()
    assert report.names == () and report.force.size == 0 and report.joint_torque[0] == 0.0
