"""The report: fall rates by group and the PNG + HTML files."""

import numpy as np
import pyarrow as pa

from humanoid_sim.campaign.report import fall_rate_by, varied_columns, write_report


def test_fall_rates_per_value_and_per_bin():
    labels, rate, counts = fall_rate_by(["a", "b", "a", "a"], np.array([True, False, False, True]))
    assert labels == ["a", "b"]
    np.testing.assert_allclose(rate, [2 / 3, 0.0])
    np.testing.assert_array_equal(counts, [3, 1])
    x = list(np.linspace(0.0, 1.0, 100))
    labels, rate, counts = fall_rate_by(x, np.array(x) > 0.5)
    assert len(labels) == 8 and counts.sum() == 100
    assert rate[0] == 0.0 and rate[-1] == 1.0


def test_the_report_has_a_polar_map_and_a_panel_per_varied_parameter(tmp_path, rng):
    n = 60
    direction = rng.uniform(0, 360, n)
    force = rng.uniform(0, 300, n)
    fell = (force > 150) & (np.cos(np.radians(direction)) < 0)
    table = pa.table({
        "run_id": np.arange(n), "push_direction_deg": direction, "push_force_n": force,
        "push_duration_s": np.full(n, 0.1), "push_impulse_ns": 0.1 * force, "friction": np.full(n, 1.0),
        "outcome": np.where(fell, "fell", "ok"), "failure_reason": np.where(fell, "fell: at t = 1 s", ""),
        "wall_time_s": np.full(n, 0.5),
    })
    assert varied_columns(table) == ["push_direction_deg", "push_force_n"]  # friction is constant
    files = write_report(table, tmp_path, "pushes")
    assert files.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = files.html.read_text()
    assert "fall rate by push_direction_deg" in page and "fall rate by push_force_n" in page
    assert "data:image/png;base64," in page
    assert f"fell {int(fell.sum())}" in page
