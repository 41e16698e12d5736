"""ZMP preview control: the cart-table ZMP tracks the footstep reference."""

import numpy as np
import pytest

from humanoid_sim.control.footsteps import Footstep, FootstepParams, plan_footsteps
from humanoid_sim.control.preview_control import (
    PreviewController,
    PreviewParams,
    cart_table_model,
    preview_gains,
    track_zmp_reference,
)


def test_cart_table_model_is_exact_for_constant_jerk():
    params = PreviewParams(dt=0.01, com_height=0.8)
    A, B, _ = cart_table_model(params)
    x0 = np.array([0.1, -0.2, 0.3])
    jerk = 1.7
    t = params.dt
    expected = np.array([
        x0[0] + x0[1] * t + x0[2] * t**2 / 2 + jerk * t**3 / 6,
        x0[1] + x0[2] * t + jerk * t**2 / 2,
        x0[2] + jerk * t,
    ])
    np.testing.assert_allclose(A @ x0 + B * jerk, expected, rtol=1e-14)


def test_preview_gains_decay_and_tail_is_lumped():
    # Constant reference p at rest (x = (p, 0, 0), zero error) needs zero jerk:
    # G_x[0] + Σ G_d = 0 for the infinite preview. The truncated raw gains nearly satisfy it
    # (their tail decays like the stable LIPM pole); the lumped gains satisfy it exactly.
    params = PreviewParams(dt=0.005, com_height=0.8, preview_time=2.5)
    raw = preview_gains(params, lump_tail=False)
    assert abs(raw.G_d[-1]) < 1e-3 * abs(raw.G_d[0])
    assert raw.G_x[0] + raw.G_d.sum() == pytest.approx(0.0, abs=2e-3 * raw.G_x[0])
    lumped = preview_gains(params)
    assert lumped.G_x[0] + lumped.G_d.sum() == pytest.approx(0.0, abs=1e-9 * raw.G_x[0])
    np.testing.assert_array_equal(lumped.G_d[:-1], raw.G_d[:-1])


@pytest.mark.parametrize("dt", [0.005, 0.002])
def test_cart_table_zmp_tracks_walking_reference(dt):
    z_c, g = 0.8, 9.81
    fp = FootstepParams()
    plan = plan_footsteps(Footstep("left", 0.0, 0.1, 0.0), Footstep("right", 0.0, -0.1, 0.0),
                          (0.2, 0.0, 0.1), 6, fp, t_start=1.6)  # start delay = preview time
    params = PreviewParams(dt=dt, com_height=z_c, gravity=g)
    ts = np.arange(0.0, plan.t_end + 2.0, dt)
    ref = plan.zmp_reference(ts)
    X = track_zmp_reference(params, ref, ref[0])
    zmp = X[:, 0] - z_c / g * X[:, 2]  # cart-table ZMP x - z_c/g x¨
    err = np.linalg.norm(zmp - ref, axis=1)
    # Steady state: the middle 60 % of every single-support phase.
    mask = np.zeros(ts.shape, bool)
    for ph in plan.phases:
        if ph.support != "double":
            d = ph.t_end - ph.t_start
            mask |= (ts > ph.t_start + 0.2 * d) & (ts < ph.t_end - 0.2 * d)
    assert mask.sum() > 100
    assert err[mask].max() < 0.004  # a few mm
    assert err.max() < 0.03  # transitions (ZMP corners) stay bounded
    # Ends at rest over the final ZMP.
    np.testing.assert_allclose(X[-1, 0], ref[-1], atol=2e-4)
    np.testing.assert_allclose(X[-1, 1], 0.0, atol=2e-3)


def test_controller_holds_still_on_constant_reference():
    params = PreviewParams(dt=0.005, com_height=0.8)
    ctrl = PreviewController(params)
    p = np.array([0.3, -0.05])
    ctrl.reset(p)
    for _ in range(200):
        s = ctrl.step(p, np.tile(p, (ctrl.n_preview, 1)))
    np.testing.assert_allclose(s.com, p, atol=1e-3)
    np.testing.assert_allclose(s.com_vel, 0.0, atol=1e-3)
