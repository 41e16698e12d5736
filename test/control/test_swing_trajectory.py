"""Swing-foot trajectory: end conditions, apex, derivatives consistent."""

import numpy as np
import pytest

from humanoid_sim.control.footsteps import Footstep
from humanoid_sim.control.swing_trajectory import swing_foot_sample

START = Footstep("left", 0.0, 0.1, 0.0)
END = Footstep("left", 0.3, 0.15, 0.4)


def test_ends_apex_and_zero_velocity():
    a = swing_foot_sample(START, END, 1.0, 1.0, 0.7, 0.05)
    b = swing_foot_sample(START, END, 1.7, 1.0, 0.7, 0.05)
    np.testing.assert_allclose(a.position, [0.0, 0.1, 0.0], atol=1e-15)
    np.testing.assert_allclose(b.position, [0.3, 0.15, 0.0], atol=1e-12)
    for s in (a, b):
        np.testing.assert_allclose(s.velocity, 0.0, atol=1e-12)
        np.testing.assert_allclose(s.acceleration, 0.0, atol=1e-9)
        assert s.yaw_rate == pytest.approx(0.0, abs=1e-12)
    assert b.yaw == pytest.approx(0.4)
    mid = swing_foot_sample(START, END, 1.35, 1.0, 0.7, 0.05)
    assert mid.position[2] == pytest.approx(0.05)
    np.testing.assert_allclose(mid.position[:2], [0.15, 0.125])


def test_derivatives_match_finite_differences():
    h = 1e-6
    for t in np.linspace(1.05, 1.65, 7):
        s = swing_foot_sample(START, END, t, 1.0, 0.7, 0.05)
        sp = swing_foot_sample(START, END, t + h, 1.0, 0.7, 0.05)
        sm = swing_foot_sample(START, END, t - h, 1.0, 0.7, 0.05)
        np.testing.assert_allclose((sp.position - sm.position) / (2 * h), s.velocity, atol=1e-6)
        np.testing.assert_allclose((sp.velocity - sm.velocity) / (2 * h), s.acceleration, atol=1e-5)
        assert (sp.yaw - sm.yaw) / (2 * h) == pytest.approx(s.yaw_rate, abs=1e-6)
        assert (sp.yaw_rate - sm.yaw_rate) / (2 * h) == pytest.approx(s.yaw_acc, abs=1e-5)
