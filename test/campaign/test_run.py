"""One campaign run: the metrics of a quiet stand and of a fall, every variation changing the
run, the same row twice, and failures (simulator, controller) as rows, never exceptions."""

import math

import pytest

from conftest import make_campaign
from humanoid_sim.campaign import CampaignFileError
from humanoid_sim.campaign.run import NOT_DETERMINISTIC_COLUMNS, check_campaign, run_environment, run_one

USER_CONTROLLERS = '''
import numpy as np


class NanTorques:
    def __init__(self, model):
        self.nj = model.nj

    def reset(self, q, v, t):
        pass

    def update(self, t, q, v, contact_info):
        return np.full(self.nj, np.nan if t > 0.05 else 0.0)


class Raises:
    def __init__(self, model, when=0.1):
        self.when = when
        self.nj = model.nj

    def reset(self, q, v, t):
        pass

    def update(self, t, q, v, contact_info):
        if t >= self.when:
            raise RuntimeError("controller gave up")
        return np.zeros(self.nj)
'''


def deterministic(row):
    return {k: v for k, v in row.items() if k not in NOT_DETERMINISTIC_COLUMNS}


def same(a, b):
    """Rows equal, NaN equal to NaN."""
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])), k


def only_run(campaign):
    (spec,) = campaign.runs()
    return run_one(campaign, spec)


def test_a_quiet_stand_is_ok_with_its_metrics():
    row = only_run(make_campaign(duration_s=0.5))
    assert row["outcome"] == "ok" and not row["fell"] and row["failure_reason"] == ""
    assert math.isnan(row["fall_time_s"])
    assert row["t_end_s"] == pytest.approx(0.5)
    assert row["distance_m"] < 0.01
    assert row["min_zmp_margin_m"] > 0.02  # the ZMP stays well inside the two soles
    assert row["peak_torque_nm"] > 10.0 and row["peak_torque_joint"]
    assert row["foot_slip_m"] == 0.0
    assert row["energy_j"] > 0.0


def test_a_hard_push_backwards_is_a_fall_with_its_time_and_reason():
    row = only_run(make_campaign(duration_s=1.5, parameters={
        "push_force_n": 400, "push_direction_deg": 180, "push_start_s": 0.2, "push_duration_s": 0.1}))
    assert row["outcome"] == "fell" and row["fell"]
    assert 0.2 < row["fall_time_s"] == row["t_end_s"] < 1.5
    assert row["failure_reason"].startswith("fell: ")
    assert row["distance_x_m"] < -0.05
    assert row["push_impulse_ns"] == pytest.approx(40.0)


def test_every_variation_changes_the_run_and_the_same_run_gives_the_same_row():
    base = {"push_force_n": 80, "push_direction_deg": 90, "push_start_s": 0.1}
    reference = deterministic(only_run(make_campaign(parameters=base)))
    varied = {
        "friction": 0.3, "slope_deg": 5.0, "mass_scale": 1.1, "inertia_scale": 1.3,
        "joint_damping": 2.0, "latency_s": 0.005, "sensor_noise_q": 0.002, "sensor_noise_v": 0.02,
        "controller.kp": 600.0, "terrain": "mat",
    }
    terrains = {"mat": [{"name": "mat", "position_m": [0.0, 0.0, -0.005], "size_m": [2.0, 2.0, 0.01]}]}
    for name, value in varied.items():
        campaign = make_campaign(parameters={**base, name: value}, world={"terrains": terrains})
        row = deterministic(only_run(campaign))
        metrics = ("distance_m", "energy_j", "peak_torque_nm", "min_zmp_margin_m")
        assert any(row[m] != reference[m] for m in metrics), name
        same(row, deterministic(only_run(campaign)))


def test_the_world_of_a_run_has_its_materials_and_terrain():
    terrains = {"step": [{"name": "step", "position_m": [0.5, 0.0, 0.02], "size_m": [0.3, 1.0, 0.04]}]}
    campaign = make_campaign(world={"terrains": terrains})
    env = run_environment(campaign, friction=0.4, restitution=0.3, terrain="step")
    assert env.element_names() == ("ground", "step")
    for material in (env.ground.material, env.boxes[0].material):
        assert (material.mu_s, material.mu_d, material.restitution) == pytest.approx((0.4, 0.32, 0.3))
    assert run_environment(campaign, 1.0, 0.0, "").boxes == ()


def test_a_slippery_ground_slips_and_a_grippy_one_does_not():
    push = {"push_force_n": 100, "push_direction_deg": 90, "push_start_s": 0.1, "push_duration_s": 0.2}
    slippery = only_run(make_campaign(parameters={**push, "friction": 0.1}))
    grippy = only_run(make_campaign(parameters={**push, "friction": 1.0}))
    assert slippery["foot_slip_m"] > 0.01
    assert grippy["foot_slip_m"] == 0.0


def test_simulator_and_controller_failures_are_rows(tmp_path):
    (tmp_path / "user_controllers.py").write_text(USER_CONTROLLERS)
    nan = only_run(make_campaign(controller={"kind": "python", "class": "user_controllers:NanTorques",
                                             "control_dt": 0.001}, base_dir=tmp_path))
    assert nan["outcome"] == "simulation_error" and "non-finite" in nan["failure_reason"]
    assert 0.05 < nan["t_end_s"] < 0.06 and not nan["fell"]
    raising = only_run(make_campaign(controller={"kind": "python", "class": "user_controllers:Raises",
                                                 "parameters": {"when": 0.2}}, base_dir=tmp_path))
    assert raising["outcome"] == "controller_error"
    assert "RuntimeError: controller gave up" in raising["failure_reason"]
    assert raising["t_end_s"] == pytest.approx(0.2)


def test_mistakes_every_run_would_make_are_caught_before_the_runs(tmp_path):
    with pytest.raises(CampaignFileError, match="valid links"):
        check_campaign(make_campaign(parameters={"push_link": "tail"}))
    with pytest.raises(CampaignFileError, match="unknown stand controller parameters"):
        check_campaign(make_campaign(parameters={"controller.gain": 3.0}))
    with pytest.raises(CampaignFileError, match="no class 'Missing'"):
        (tmp_path / "user_controllers.py").write_text(USER_CONTROLLERS)
        check_campaign(make_campaign(controller={"kind": "python", "class": "user_controllers:Missing"},
                                     base_dir=tmp_path))
