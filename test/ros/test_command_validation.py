"""Torque command validation: every rejection kind, with its reason; accepted commands by index."""

import math

import numpy as np
import pytest

from humanoid_sim.ros import command_validation as cvd

JOINTS = ("hip", "knee", "ankle")


def test_named_command_accepted_subset_in_any_order():
    check = cvd.check_named_command(["ankle", "hip"], [1.5, -2.0], JOINTS)
    assert check.ok and check.reason == "" and check.kind == ""
    np.testing.assert_array_equal(check.joint_index, [2, 0])
    np.testing.assert_array_equal(check.effort, [1.5, -2.0])


@pytest.mark.parametrize(
    ("names", "effort", "kind", "in_reason"),
    [
        (["hip", "knee"], [], cvd.EFFORT_MISSING, "effort field is empty"),
        (["hip", "knee"], [1.0], cvd.WRONG_LENGTH, "2 names but 1 efforts"),
        (["hip", "hip"], [1.0, 2.0], cvd.DUPLICATE_JOINT, "hip"),
        (["hip", "elbow"], [1.0, 2.0], cvd.UNKNOWN_JOINT, "valid joints: hip, knee, ankle"),
        (["hip", "knee"], [1.0, math.nan], cvd.NON_FINITE, "'knee'=nan"),
        (["hip", "knee"], [math.inf, 0.0], cvd.NON_FINITE, "'hip'=inf"),
        (["hip", "knee"], [1e308, 0.0], cvd.OUT_OF_RANGE, "effort beyond 1e+06 for 'hip'=1e+308"),
        (["knee"], [-1e308], cvd.OUT_OF_RANGE, "'knee'=-1e+308"),
        (["hip", "knee", "ankle", "toe"], [0.0] * 4, cvd.WRONG_LENGTH, "4 names: the robot has 3 joints"),
    ],
)
def test_named_command_rejections(names, effort, kind, in_reason):
    check = cvd.check_named_command(names, effort, JOINTS)
    assert not check.ok
    assert check.kind == kind
    assert in_reason in check.reason
    assert check.joint_index.size == 0


@pytest.mark.parametrize("kind", ["unknown", "duplicate", "non_finite"])
def test_rejections_cut_long_and_many_names(kind):
    # A flood of 100,000-character names must not echo them: each cut, at most five shown.
    long = "x" * 100_000
    joints = JOINTS + tuple(f"j{k}" for k in range(8))
    if kind == "unknown":
        names, effort = [f"{long}{k}" for k in range(8)], [0.0] * 8
    elif kind == "duplicate":
        names, effort = [long, long, "hip"], [0.0, 0.0, 0.0]
    else:
        names, effort = list(JOINTS), [math.nan] * 3
    check = cvd.check_named_command(names, effort, joints)
    assert not check.ok
    assert len(check.reason) < 1000, check.reason[:300]
    if kind != "non_finite":
        assert "(100000 characters)" in check.reason or "(100001 characters)" in check.reason
    if kind == "unknown":
        assert check.reason.count("characters)") == cvd.SHOWN_NAMES and "and 3 more" in check.reason


def test_a_million_names_are_refused_by_their_count():
    names = [f"j{k}" for k in range(10**6)] + ["j0"]
    check = cvd.check_named_command(names, np.zeros(len(names)), JOINTS)
    assert check.kind == cvd.WRONG_LENGTH and check.reason == "1000001 names: the robot has 3 joints"


def test_lengths_are_checked_before_any_conversion_of_the_values():
    # values that could not even be converted to floats: refused by their count alone
    garbage = ["not a number"] * 10**6
    assert cvd.check_array_command(garbage, np.arange(3), JOINTS).kind == cvd.WRONG_LENGTH
    assert cvd.check_named_command(list(JOINTS), garbage, JOINTS).kind == cvd.WRONG_LENGTH
    assert cvd.check_named_command(["hip"] * 10**6, garbage, JOINTS).kind == cvd.WRONG_LENGTH


def test_array_command():
    order = cvd.joint_order_indices(["knee", "hip"], JOINTS)
    np.testing.assert_array_equal(order, [1, 0])
    ok = cvd.check_array_command([3.0, 4.0], order, ["knee", "hip"])
    assert ok.ok
    np.testing.assert_array_equal(ok.joint_index, [1, 0])
    np.testing.assert_array_equal(ok.effort, [3.0, 4.0])
    short = cvd.check_array_command([3.0], order, ["knee", "hip"])
    assert not short.ok and short.kind == cvd.WRONG_LENGTH and "expected 2" in short.reason
    empty = cvd.check_array_command([], order, ["knee", "hip"])
    assert not empty.ok and empty.kind == cvd.WRONG_LENGTH
    nan = cvd.check_array_command([3.0, -math.inf], order, ["knee", "hip"])
    assert not nan.ok and nan.kind == cvd.NON_FINITE and "'hip'=-inf" in nan.reason
    huge = cvd.check_array_command([-1e308, 4.0], order, ["knee", "hip"])
    assert not huge.ok and huge.kind == cvd.OUT_OF_RANGE and "'knee'=-1e+308" in huge.reason
    assert cvd.check_array_command([cvd.MAX_EFFORT, -cvd.MAX_EFFORT], order, ["knee", "hip"]).ok  # clamped later


def test_joint_order_defaults_and_errors():
    np.testing.assert_array_equal(cvd.joint_order_indices([], JOINTS), [0, 1, 2])
    with pytest.raises(ValueError, match="valid joints: hip, knee, ankle"):
        cvd.joint_order_indices(["hip", "wrist"], JOINTS)
    with pytest.raises(ValueError, match="twice: knee"):
        cvd.joint_order_indices(["knee", "knee"], JOINTS)


def test_rejection_counter_counts_all_and_throttles_logs():
    counter = cvd.RejectionCounter(log_period_s=1.0)
    logged = [counter.record(cvd.NON_FINITE, now_s=0.001 * k) for k in range(2500)]
    assert counter.counts[cvd.NON_FINITE] == 2500 and counter.total == 2500
    # first at t = 0, then at t = 1.0 and 2.0 s
    assert sum(logged) == 3 and logged[0] and logged[1000] and logged[2000]
    assert counter.suppressed == 2497
