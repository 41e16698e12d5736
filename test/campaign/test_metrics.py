"""The metrics recorder on hand-made steps: energy, peak torque, ZMP margin, and the ends of a
run (a lost robot is a fall, a diverged state a simulation error)."""

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.balance.zmp import ZmpReport
from humanoid_sim.campaign.metrics import DIVERGED_SPEED, MetricsRecorder
from humanoid_sim.model.configuration import neutral_configuration
from humanoid_sim.model.urdf_loader import load_urdf
from humanoid_sim.simulator.simulator import StepResult

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model():
    return load_urdf(ROOT / "urdf" / "humanoid.urdf")


def step(model, t, q, v, margin=0.05):
    zmp = ZmpReport(np.zeros(3), np.zeros((0, 2)), margin, np.zeros(3), np.zeros(3))
    # by name: the recorder reads t, q, v, contacts and zmp; the other fields are placeholders
    known = {"t": t, "q": q, "v": v, "tau_applied": np.zeros(model.nj), "contacts": (), "zmp": zmp}
    return StepResult(**{name: known.get(name) for name in StepResult._fields})


def recorder(model, q0):
    return MetricsRecorder(model, q0, min_base_height=0.5, allowed_links=("l_foot", "r_foot"), dt=1e-3)


def test_energy_peak_torque_and_margin_accumulate(model):
    q = neutral_configuration(model)
    q[2] = 0.9
    rec = recorder(model, q)
    v = np.zeros(model.nv)
    v[6:] = 0.5
    tau = np.zeros(model.nj)
    tau[3] = -40.0
    for k, margin in enumerate([0.05, float("nan"), 0.01, 0.03]):
        q_k = q.copy()
        q_k[0] = 0.01 * (k + 1)
        assert not rec.record(step(model, (k + 1) * 1e-3, q_k, v, margin), tau)
    m = rec.result()
    assert m.outcome == "ok" and m.energy_j == pytest.approx(4 * 40.0 * 0.5 * 1e-3)
    assert m.peak_torque_nm == 40.0 and m.peak_torque_joint == model.joint_names[3]
    assert m.min_zmp_margin_m == 0.01
    assert m.distance_x_m == pytest.approx(0.04) and m.t_end_s == pytest.approx(4e-3)


def test_a_joint_far_past_its_velocity_limit_is_a_fall_and_a_diverged_state_an_error(model):
    q = neutral_configuration(model)
    q[2] = 0.9
    v = np.zeros(model.nv)
    v[6 + 2] = 6.0 * model.limits.velocity[2]
    rec = recorder(model, q)
    assert rec.record(step(model, 1e-3, q, v), np.zeros(model.nj))
    m = rec.result()
    assert m.outcome == "fell" and m.fell and m.fall_time_s == 1e-3
    assert f"lost control: joint {model.joint_names[2]}" in m.failure_reason
    v[0] = 2 * DIVERGED_SPEED
    far = q.copy()
    far[0] = 1e6
    rec = recorder(model, q)
    assert rec.record(step(model, 1e-3, far, v), np.zeros(model.nj))
    m = rec.result()
    assert m.outcome == "simulation_error" and not m.fell and "diverged" in m.failure_reason
    assert m.distance_m == 0.0  # the diverged state is not the run's end point


def test_the_base_below_the_fall_height_is_a_fall(model):
    q = neutral_configuration(model)
    q[2] = 0.4
    rec = recorder(model, q)
    assert rec.record(step(model, 2e-3, q, np.zeros(model.nv)), np.zeros(model.nj))
    assert rec.result().failure_reason.startswith("fell: the base went below 0.500 m")
