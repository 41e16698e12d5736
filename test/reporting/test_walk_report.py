"""The walk report on synthetic logs whose figures are known by construction."""

import json

import numpy as np
import pytest

from humanoid_sim.reporting import (
    Footprint,
    WalkLog,
    count_steps,
    walk_figures,
    write_walk_report,
    zmp_inside_share,
)

MASS = 50.0
WEIGHT = MASS * 9.81
SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


def synthetic_walk(n_steps: int = 6, step_time: float = 0.5, dt: float = 0.01, speed: float = 0.2):
    """A made-up walk: double support for 0.1 s, then one foot in the air for the rest of
    each step period, alternating feet; the base moves at ``speed`` along x."""
    duration = n_steps * step_time + 0.5
    t = np.arange(0.0, duration, dt)
    n = len(t)
    base = np.column_stack([speed * t, np.zeros(n), np.full(n, 0.8)])
    left = np.full(n, WEIGHT / 2)
    right = np.full(n, WEIGHT / 2)
    for k in range(n_steps):
        swing = left if k % 2 == 0 else right
        stance = right if k % 2 == 0 else left
        in_air = (t >= k * step_time + 0.1) & (t < (k + 1) * step_time)
        swing[in_air] = 0.0
        stance[in_air] = WEIGHT
    polygons = [SQUARE + [speed * tk, -0.5] for tk in t]
    zmp = np.column_stack([base[:, 0] + 0.5, np.zeros(n), np.zeros(n)])
    return t, base, left, right, polygons, zmp


def make_log(**overrides) -> WalkLog:
    t, base, left, right, polygons, zmp = synthetic_walk()
    fields = dict(
        t=t,
        base_position=base,
        com=base - [0.0, 0.0, 0.1],
        zmp=zmp,
        support_polygons=polygons,
        foot_force_z={"l_foot": left, "r_foot": right},
        robot_mass=MASS,
        wall_time_s=2.0 * (t[-1] - t[0]),
        footprints=(Footprint("l_foot", 0.0, SQUARE * 0.1), Footprint("r_foot", 0.5, SQUARE * 0.1 + 0.2)),
    )
    fields.update(overrides)
    return WalkLog(**fields)


def test_count_steps_counts_touch_downs_after_lift_offs():
    force = np.array([100, 100, 0, 0, 100, 100, 0, 100, 0, 0, 100], dtype=float)
    assert count_steps(force, on_threshold=50.0, off_threshold=10.0) == 3


def test_count_steps_ignores_chatter_between_thresholds_and_an_initial_landing():
    chatter = np.array([100, 30, 60, 30, 60, 100], dtype=float)  # never below off = 10
    assert count_steps(chatter, on_threshold=50.0, off_threshold=10.0) == 0
    landing = np.array([0, 0, 0, 100, 100], dtype=float)  # the foot starts in the air
    assert count_steps(landing, on_threshold=50.0, off_threshold=10.0) == 0
    assert count_steps(np.r_[landing, 0, 100], on_threshold=50.0, off_threshold=10.0) == 1
    with pytest.raises(ValueError, match="must exceed"):
        count_steps(chatter, on_threshold=10.0, off_threshold=10.0)


def test_zmp_inside_share_counts_inside_edge_outside_and_missing():
    zmp = np.array(
        [
            [0.5, 0.5, 0.0],  # inside
            [1.0, 0.5, 0.0],  # on the edge: inside
            [1.1, 0.5, 0.0],  # outside
            [np.nan, np.nan, np.nan],  # no ground reaction: outside
            [0.2, 0.2, 0.0],  # inside, but no polygon: outside
        ]
    )
    polygons = [SQUARE, SQUARE, SQUARE, SQUARE, np.zeros((0, 2))]
    assert zmp_inside_share(zmp, polygons) == pytest.approx(2 / 5)
    assert zmp_inside_share(zmp, polygons, tolerance=0.2) == pytest.approx(3 / 5)


def test_walk_figures_of_a_synthetic_walk():
    log = make_log()
    figures = walk_figures(log, min_base_height=0.5)
    duration = log.t[-1] - log.t[0]
    assert figures.steps == 6
    assert figures.distance_m == pytest.approx(0.2 * duration)
    assert figures.forward_m == pytest.approx(0.2 * duration)
    assert figures.duration_s == pytest.approx(duration)
    assert figures.real_time_factor == pytest.approx(0.5)
    assert figures.min_base_height_m == pytest.approx(0.8)
    # The ZMP runs along the middle of the (moving) square: always inside.
    assert figures.zmp_inside_share == pytest.approx(1.0)
    assert not figures.fell and figures.fall_reason == ""


def test_walk_figures_detect_a_fall_by_height_and_by_non_foot_contact():
    t, base, *_ = synthetic_walk()
    fallen = base.copy()
    fallen[len(t) // 2 :, 2] = 0.2
    figures = walk_figures(make_log(base_position=fallen), min_base_height=0.5)
    assert figures.fell and "base below 0.500 m" in figures.fall_reason
    assert f"t = {t[len(t) // 2]:.2f} s" in figures.fall_reason
    figures = walk_figures(make_log(non_foot_contacts=("l_hand", "l_hand")), min_base_height=0.5)
    assert figures.fell and figures.fall_reason == "non-foot contact: l_hand"


def test_walk_log_rejects_inconsistent_shapes_by_name():
    t, base, *_ = synthetic_walk()
    with pytest.raises(ValueError, match="WalkLog.com"):
        make_log(com=base[:-1])
    with pytest.raises(ValueError, match="support_polygons"):
        make_log(support_polygons=[SQUARE])
    with pytest.raises(ValueError, match="robot_mass"):
        make_log(robot_mass=-1.0)
    with pytest.raises(ValueError, match="non-decreasing"):
        make_log(t=t[::-1])


def test_write_walk_report_writes_the_picture_and_the_figures(tmp_path):
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib draws the picture")
    log = make_log(planned_zmp=make_log().zmp, note="synthetic data")
    path = tmp_path / "nested" / "walk_report.png"
    figures = write_walk_report(log, path, min_base_height=0.5)
    assert matplotlib.get_backend().lower() == "agg"
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 500 and height > 500
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["steps"] == figures.steps == 6
    assert record["distance_m"] == pytest.approx(figures.distance_m)
    assert record["zmp_inside_share"] == pytest.approx(1.0)
    assert record["mode"] == "walk" and record["note"] == "synthetic data"
    assert record["fell"] is False


def test_write_walk_report_survives_an_impact_spike_and_a_flight_phase(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib draws the picture")
    t, base, left, right, polygons, zmp = synthetic_walk()
    left = left.copy()
    left[50] = 100.0 * WEIGHT  # an impact
    zmp = zmp.copy()
    zmp[60:70] = np.nan  # airborne: no ZMP
    polygons = [p if not 60 <= k < 70 else np.zeros((0, 2)) for k, p in enumerate(polygons)]
    log = make_log(foot_force_z={"l_foot": left, "r_foot": right}, zmp=zmp, support_polygons=polygons)
    figures = write_walk_report(log, tmp_path / "spike.png", min_base_height=0.5)
    assert (tmp_path / "spike.png").stat().st_size > 10_000
    assert figures.zmp_inside_share == pytest.approx(1.0 - 10 / len(t))
