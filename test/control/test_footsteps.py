"""Footstep plans: alternation, geometry from the command, turning, timing, ZMP reference."""

import math

import numpy as np
import pytest

from humanoid_sim.control.footsteps import (
    Footstep,
    FootstepParams,
    plan_footsteps,
)

PARAMS = FootstepParams(single_support=0.7, double_support=0.2, initial_double_support=1.0,
                        final_double_support=1.0, step_width=0.2, max_step_length=0.3)
LEFT = Footstep("left", 0.0, 0.1, 0.0)
RIGHT = Footstep("right", 0.0, -0.1, 0.0)


def test_straight_walk_alternates_and_advances_by_command():
    vx = 0.2
    plan = plan_footsteps(LEFT, RIGHT, (vx, 0.0, 0.0), 6, PARAMS)
    steps = plan.footsteps
    assert len(steps) == 7  # 6 walking steps + closing step
    sides = [s.side for s in steps]
    assert all(a != b for a, b in zip(sides, sides[1:]))
    stride = vx * PARAMS.step_period  # the walking frame advance per step
    for k, s in enumerate(steps[:6]):
        assert s.x == pytest.approx((k + 1) * stride)
        assert s.y == pytest.approx(0.1 if s.side == "left" else -0.1)
    # Closing step lands beside the last one: feet parallel, step_width apart.
    assert steps[6].x == pytest.approx(steps[5].x)
    assert abs(steps[6].y - steps[5].y) == pytest.approx(PARAMS.step_width)


def test_starts_and_stops_in_double_support_with_correct_timing():
    plan = plan_footsteps(LEFT, RIGHT, (0.2, 0.0, 0.0), 3, PARAMS, t_start=2.0)
    assert plan.phases[0].support == "double" and plan.phases[-1].support == "double"
    assert plan.t_start == 2.0
    n_steps = 4
    expected_end = 2.0 + PARAMS.initial_double_support + n_steps * PARAMS.single_support \
        + (n_steps - 1) * PARAMS.double_support + PARAMS.final_double_support
    assert plan.t_end == pytest.approx(expected_end)
    for a, b in zip(plan.phases, plan.phases[1:]):
        assert b.t_start == pytest.approx(a.t_end)
    singles = [p for p in plan.phases if p.support != "double"]
    assert all(p.support != p.swing_side for p in singles)


def test_zmp_reference_at_support_foot_and_centre_at_ends():
    plan = plan_footsteps(LEFT, RIGHT, (0.2, 0.0, 0.0), 4, PARAMS)
    for phase in plan.phases:
        mid_t = 0.5 * (phase.t_start + phase.t_end)
        if phase.support != "double":
            foot = phase.left if phase.support == "left" else phase.right
            np.testing.assert_allclose(plan.zmp_reference(mid_t), foot.position, atol=1e-12)
    np.testing.assert_allclose(plan.zmp_reference(plan.t_start), [0.0, 0.0], atol=1e-12)
    last = plan.footsteps[-1]
    prev = plan.footsteps[-2]
    centre = 0.5 * (last.position + prev.position)
    np.testing.assert_allclose(plan.zmp_reference(plan.t_end + 5.0), centre, atol=1e-12)
    # Continuous in time (linear in double support).
    ts = np.linspace(plan.t_start, plan.t_end, 4001)
    z = plan.zmp_reference(ts)
    assert np.max(np.abs(np.diff(z, axis=0))) < 0.2 * (ts[1] - ts[0]) / PARAMS.double_support + 1e-9


def test_turning_rotates_successive_footsteps():
    yaw_rate = 0.2
    plan = plan_footsteps(LEFT, RIGHT, (0.1, 0.0, yaw_rate), 5, PARAMS)
    dyaw = yaw_rate * PARAMS.step_period
    for k, s in enumerate(plan.footsteps[:5]):
        assert s.yaw == pytest.approx((k + 1) * dyaw)
    # Each foot sits half a step width from the walking frame, across its heading.
    first_left, first_right = plan.footsteps[0], plan.footsteps[1]
    assert first_left.side == "left"  # turning left starts with the left foot
    lateral = np.array([-math.sin(first_right.yaw), math.cos(first_right.yaw)])
    # Frame origin implied by the right foot: p + w/2 * lateral.
    origin_k2 = first_right.position + 0.5 * PARAMS.step_width * lateral
    assert np.linalg.norm(origin_k2) == pytest.approx(2 * 0.1 * PARAMS.step_period, rel=0.02)


def test_step_length_is_clamped_and_lateral_walk_starts_with_moving_side():
    plan = plan_footsteps(LEFT, RIGHT, (5.0, 0.0, 0.0), 2, PARAMS)
    assert plan.footsteps[0].x == pytest.approx(PARAMS.max_step_length)
    plan = plan_footsteps(LEFT, RIGHT, (0.0, -0.05, 0.0), 2, PARAMS)
    assert plan.footsteps[0].side == "right"
    assert plan.footsteps[0].y < RIGHT.y


def test_zero_steps_is_standing_and_bad_input_is_refused():
    plan = plan_footsteps(LEFT, RIGHT, (0.0, 0.0, 0.0), 0, PARAMS)
    assert plan.footsteps == () and len(plan.phases) == 1
    with pytest.raises(ValueError, match="sides"):
        plan_footsteps(RIGHT, LEFT, (0.0, 0.0, 0.0), 1, PARAMS)
    with pytest.raises(ValueError, match="single_support"):
        FootstepParams(single_support=0.0)
    with pytest.raises(ValueError, match="finite"):
        plan_footsteps(LEFT, RIGHT, (float("nan"), 0.0, 0.0), 1, PARAMS)


def test_replanning_at_a_touch_down_with_the_same_command_keeps_the_steps():
    # The walking controller rolls its plan at touch-downs: planning again from the feet
    # after step k (next swing the other foot) must reproduce the remaining footsteps.
    command = (0.2, 0.0, 0.15)
    plan = plan_footsteps(LEFT, RIGHT, command, 6, PARAMS)
    singles = [p for p in plan.phases if p.swing_side is not None]
    k = 2
    done = singles[k]
    feet = {"left": done.left, "right": done.right}
    feet[done.swing_side] = done.swing_to
    other = "right" if done.swing_side == "left" else "left"
    again = plan_footsteps(feet["left"], feet["right"], command, 6 - (k + 1), PARAMS,
                           t_start=done.t_end, first_swing=other,
                           initial_double_support=PARAMS.double_support, zmp_start=done.zmp_end)
    for a, b in zip(plan.footsteps[k + 1:], again.footsteps):
        assert a.side == b.side
        np.testing.assert_allclose([a.x, a.y, a.yaw], [b.x, b.y, b.yaw], atol=1e-12)
    ts = np.linspace(done.t_end, plan.t_end, 500)
    np.testing.assert_allclose(plan.zmp_reference(ts), again.zmp_reference(ts), atol=1e-12)
