"""Limits in motion, with the reference stepper of conftest.py (Pinocchio dynamics + LCP).

These exercise the rows of RangeOfMotionProvider dynamically: a pendulum on its
URDF stop, a shoulder swept around by a rotating torque, twist and soft limits.
(They do not depend on the simulator's own solve: test_limits_in_simulator.py runs that.)
"""

import numpy as np
import pytest

from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.limits.range_config import load_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider

GRAVITY_ARM = 1.0 * 9.81 * 0.5  # pendulum: m g L/2 [N m]


def run_pendulum(stepper_for, urdf, law_yaml, tau, steps, h=1e-3, q0=0.0):
    stepper = stepper_for(urdf)
    cfg = load_range_of_motion(f"joint_stops: {{enabled: true, limit: {law_yaml}}}\n")
    # the reference stepper treats rows ahead of contact speculatively: look one step ahead
    provider = RangeOfMotionProvider(stepper.model, cfg, lookahead=h)
    q, v = np.array([q0]), np.zeros(1)
    history = []
    for k in range(steps):
        t = tau(k * h) if callable(tau) else tau
        rows = provider.rows(q, v)
        q, v, lam = stepper.step(q, v, np.array([t]), h, rows)
        provider.accept_forces(lam)
        history.append((q[0], v[0], provider.report()))
    return history


def test_pendulum_driven_into_stop_holds_and_balances_the_drive(stepper_for, make_pendulum_urdf):
    upper, drive = 0.8, 50.0
    hist = run_pendulum(stepper_for, make_pendulum_urdf(-0.5, upper), "{type: hard}", drive, 1500)
    qs = np.array([x[0] for x in hist])
    impact = int(np.argmax(qs > upper - 1e-3))
    assert impact > 0
    # after the impact step the joint stays at the stop
    assert np.max(qs[impact + 1 :]) < upper + 1e-4
    assert np.min(qs[impact + 1 :]) > upper - 1e-4
    q_end, v_end, report = hist[-1]
    assert abs(v_end) < 1e-6
    # stop torque balances drive + gravity: drive - m g L/2 sin q + stop = 0
    assert report.names == ("hinge upper",)
    assert report.joint_torque[0] == pytest.approx(-(drive - GRAVITY_ARM * np.sin(q_end)), rel=1e-6)


def test_pendulum_is_released_when_the_drive_reverses(stepper_for, make_pendulum_urdf):
    upper = 0.8
    hist = run_pendulum(stepper_for, make_pendulum_urdf(-0.5, upper), "{type: hard}", lambda t: 50.0 if t < 1.0 else -20.0, 1300)
    q_at_1s = hist[999][0]
    assert q_at_1s == pytest.approx(upper, abs=1e-4)
    # leaves the stop at once: no force once it moves away
    after = hist[1002:1150]  # (later it swings down onto the lower stop)
    assert all(x[2].force.size == 0 or np.all(x[2].force == 0.0) for x in after)
    assert hist[-1][0] < upper - 0.1


def test_soft_stop_lets_the_joint_out_in_proportion_to_the_load(stepper_for, make_pendulum_urdf):
    upper, K = 0.8, 400.0
    excursions = []
    for drive in (15.0, 30.0):
        hist = run_pendulum(stepper_for, make_pendulum_urdf(-0.5, upper), f"{{type: soft, stiffness: {K}, damping: 8}}", drive, 4000)
        q_end, v_end, report = hist[-1]
        assert abs(v_end) < 1e-5
        excursion = q_end - upper
        # spring-damper wall at rest: K * excursion = drive - gravity torque
        assert excursion == pytest.approx((drive - GRAVITY_ARM * np.sin(q_end)) / K, rel=1e-3)
        assert report.force[0] == pytest.approx(K * excursion, rel=1e-3)
        excursions.append(excursion)
    assert excursions[1] > 2.0 * excursions[0] * 0.99  # more load, proportionally further out


# ----------------------------------------------------------------------------- shoulder


def sweep_shoulder(stepper_for, urdf, yaml_text, use_limits, seconds=8.0, h=2e-3, twist_torque=0.0):
    """Swing torque of 25 N m turning once every 4 s around the hanging arm, plus damping."""
    stepper = stepper_for(urdf)
    provider = RangeOfMotionProvider(stepper.model, load_range_of_motion(yaml_text), lookahead=h)
    kin = provider.groups[0]
    g = kin.group
    q, v = np.zeros(3), np.zeros(3)
    out = []
    for k in range(int(seconds / h)):
        t = k * h
        phi = 2 * np.pi * t / 4.0
        lean = np.cos(phi) * g.zero_azimuth_axis + np.sin(phi) * g.azimuth_axis_2
        torque = 25.0 * np.cross(g.twist_axis, lean) + twist_torque * g.twist_axis  # in the parent frame
        state = kin.state(q)
        tau = state.J_group.T @ torque - 1.0 * v
        rows = provider.rows(q, v) if use_limits else OneSidedRows.empty(3)
        # hard rows re-checked at the new posture (nonlinear post-stabilisation)
        q, v, lam = stepper.step(q, v, tau, h, rows, (lambda x: provider.evaluate(x, np.zeros(3))) if use_limits else None)
        if use_limits:
            provider.accept_forces(lam)
        out.append(kin.state(q).angles)
    return g, out


def test_arm_swept_around_never_leaves_the_swing_range(stepper_for, make_shoulder_urdf, make_shoulder_yaml):
    g, limited = sweep_shoulder(stepper_for, make_shoulder_urdf(), make_shoulder_yaml(), True)
    b = g.boundary
    worst = 0.0
    for angles in limited:
        if not b.contains(angles.swing_point):
            worst = max(worst, b.nearest(angles.swing_point).distance)
    assert worst < 1e-4  # checked every step [rad in the swing plane]
    # it did press against the boundary all around, including the narrow back
    back = [a for a in limited if abs(abs(a.phi) - np.pi) < 0.4]
    assert back and max(a.theta for a in back) > np.radians(35)
    # (unlimited, the Euler-like chain later reaches its gimbal lock: 3 s cover the back half-turn)
    _, free = sweep_shoulder(stepper_for, make_shoulder_urdf(), make_shoulder_yaml(), False, seconds=3.0)
    outside = [b.nearest(a.swing_point).distance for a in free if not b.contains(a.swing_point)]
    free_back = [a for a in free if abs(abs(a.phi) - np.pi) < 0.4]
    # an unlimited arm swings far into the backward region
    assert max(outside) > 0.3 and max(a.theta for a in free_back) > np.radians(70)


def test_twist_limit_holds_under_a_twisting_load(stepper_for, make_shoulder_urdf, make_shoulder_yaml):
    g, limited = sweep_shoulder(stepper_for, make_shoulder_urdf(), make_shoulder_yaml(), True, seconds=4.0, twist_torque=8.0)
    b = g.boundary
    excess = [a.psi - b.twist_range(a.swing_point).upper for a in limited]
    assert max(excess) < 2e-3
    assert max(a.psi for a in limited) > np.radians(30)  # the load did drive it to the limit
    _, free = sweep_shoulder(stepper_for, make_shoulder_urdf(), make_shoulder_yaml(), False, seconds=3.0, twist_torque=8.0)
    assert max(a.psi - b.twist_range(a.swing_point).upper for a in free) > 0.3


CONE_YAML = """
ball_joints:
  - name: shoulder
    joints: [shoulder_pitch, shoulder_roll, shoulder_yaw]
    twist_axis: [0, 0, -1]
    zero_azimuth_axis: [1, 0, 0]
    centre_twist_deg: [-60, 60]
    limit: {type: soft, stiffness: 200, damping: 10}
    control_points:
""" + "".join(
    f"      - {{phi_deg: {p}, theta_deg: 40, twist_deg: [-60, 60], tangent_deg: [45, 0]}}\n" for p in range(0, 360, 45)
)


def test_soft_swing_range_lets_the_arm_out_in_proportion_to_the_torque(stepper_for, make_shoulder_urdf):
    """A soft 40° cone (Tokizaki's cone, seed 003 Fig. 1.6) pushed backward by a constant pitch torque.

    By symmetry the arm stays in the pitch plane; at rest the wall force is
    K * excursion and balances drive - gravity.
    """
    K = 200.0
    excursions = []
    for drive in (15.0, 30.0):
        stepper = stepper_for(make_shoulder_urdf())
        provider = RangeOfMotionProvider(stepper.model, load_range_of_motion(CONE_YAML), lookahead=2e-3)
        kin = provider.groups[0]
        q, v = np.zeros(3), np.zeros(3)
        for _ in range(3000):
            tau = np.array([drive, 0.0, 0.0]) - 2.0 * v  # pitch +: swing backward
            rows = provider.rows(q, v)
            q, v, lam = stepper.step(q, v, tau, 2e-3, rows)
            provider.accept_forces(lam)
        near = kin.group.boundary.nearest(kin.state(q).angles.swing_point)
        assert np.max(np.abs(v)) < 1e-5
        assert abs(q[1]) < 1e-9 and abs(q[2]) < 1e-9  # a pure pitch stays a pure pitch
        report = provider.report()
        gravity = 2.0 * 9.81 * 0.3 * np.sin(q[0])
        assert report.names == ("shoulder swing",)
        assert report.joint_torque[0] == pytest.approx(-(drive - gravity), rel=1e-4)
        assert report.force[0] == pytest.approx(K * near.distance, rel=1e-3)
        # Hermite cone with tangents 45 deg per unit is nearly circular: excursion ≈ pitch - 40°
        assert near.distance == pytest.approx((drive - gravity) / K, rel=2e-2)
        excursions.append(near.distance)
    assert excursions[1] > 1.5 * excursions[0]
