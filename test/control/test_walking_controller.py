"""WalkingController: config, standing and a short walk on a rigid-contact model.

The plant here is the humanoid with its planned stance soles held by bilateral rigid
constraints (seed 000 Eq. 20, solved with Pinocchio-independent numpy on our M, b), i.e. the
simulator's contact model *assuming* every contact stays valid. That assumption is then
checked on every tick (f_z > 0 and centre of pressure inside the 0.19 m x 0.12 m sole for
every loaded foot; friction inside μ = 1), so passing means the walk is physically
consistent with unilateral contacts. The full simulator walk is in
test_walking_in_simulator.py.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim import dynamics as dyn
from humanoid_sim.control import WalkingController, load_walking_config, walking_config_from_dict
from humanoid_sim.control.task_kinematics import TaskKinematics
from humanoid_sim.dynamics.spatial import so3_log
from humanoid_sim.model.urdf_loader import load_urdf

ROOT = Path(__file__).resolve().parents[2]
STAND = dict(l_hip_pitch=-0.25, l_knee=0.5, l_ankle_pitch=-0.25, r_hip_pitch=-0.25, r_knee=0.5,
             r_ankle_pitch=-0.25, l_shoulder_roll=0.15, r_shoulder_roll=-0.15,
             l_elbow_pitch=-0.3, r_elbow_pitch=-0.3)
SOLE_HALF = (0.095, 0.06)


@pytest.fixture(scope="module")
def model():
    return load_urdf(ROOT / "urdf" / "humanoid.urdf")


def stand(model) -> np.ndarray:
    q = np.zeros(model.nq)
    q[6] = 1.0
    for name, value in STAND.items():
        q[7 + model.joint_index(name)] = value
    q[2] = -dyn.frame_placement(model, q, "l_sole")[2, 3]
    return q


def run_on_rigid_contacts(model, config, duration, commands):
    """Close the loop for ``duration`` [s]; commands: {time: (vx, vy, wz)}.

    Returns per-tick records and the worst contact-validity figures."""
    ctrl = WalkingController(model, config)
    q = stand(model)
    v = np.zeros(model.nv)
    ctrl.reset(q, v, 0.0)
    kin = TaskKinematics(model)
    dt = config.control_dt
    anchors: dict[str, np.ndarray] = {}
    worst = {"min_fz_loaded": np.inf, "cop_ratio": 0.0, "friction_ratio": 0.0}
    records = []
    pending = dict(commands)
    for k in range(int(round(duration / dt))):
        t = k * dt
        for tc in [tc for tc in pending if tc <= t + 1e-9]:
            ctrl.set_command(*pending.pop(tc))
        phase = ctrl.plan.phase_at(t)
        sides = ["left", "right"] if phase.support == "double" else [phase.support]
        stance = [config.left_sole if sd == "left" else config.right_sole for sd in sides]
        kin.update(q, v)
        H = np.vstack([kin.frame_jacobian(name) for name in stance])
        if np.abs(H @ v).max() > 1e-6:  # touch-down: plastic impact (seed 000 Eq. 18-19, e = 0)
            M_inv_Ht = np.linalg.solve(kin.M, H.T)
            v = v - M_inv_Ht @ np.linalg.solve(H @ M_inv_Ht, H @ v)
        tau = ctrl.update(t, q, v)
        ro = ctrl.readout
        assert sorted(ro.wrenches) == sorted(stance)
        kin.update(q, v)
        rows, drift = [], []
        for name in stance:
            X = kin.frame_pose(name)
            anchors.setdefault(name, X.copy())
            J = kin.frame_jacobian(name, X)
            err = np.concatenate([anchors[name][:3, 3] - X[:3, 3], so3_log(anchors[name][:3, :3] @ X[:3, :3].T)])
            rows.append(J)
            drift.append(kin.frame_drift(name, X) - (400.0 * err - 40.0 * (J @ v)))  # drift correction
        for name in [n for n in anchors if n not in stance]:
            del anchors[name]
        H = np.vstack(rows)
        nc = H.shape[0]
        tau_g = np.zeros(model.nv)
        tau_g[6:] = tau
        K = np.block([[kin.M, -H.T], [H, np.zeros((nc, nc))]])
        sol = np.linalg.solve(K, np.concatenate([tau_g - kin.b, -np.concatenate(drift)]))
        qdd, wrenches = sol[: model.nv], sol[model.nv:]
        for i, name in enumerate(stance):
            R = kin.frame_pose(name)[:3, :3]
            f = R.T @ wrenches[6 * i: 6 * i + 3]
            n = R.T @ wrenches[6 * i + 3: 6 * i + 6]
            if f[2] > 0.05 * model.total_mass * 9.81:  # a loaded foot (not one being unloaded)
                worst["min_fz_loaded"] = min(worst["min_fz_loaded"], f[2])
                cop = np.array([-n[1], n[0]]) / f[2]
                worst["cop_ratio"] = max(worst["cop_ratio"], abs(cop[0]) / SOLE_HALF[0], abs(cop[1]) / SOLE_HALF[1])
                worst["friction_ratio"] = max(worst["friction_ratio"], np.hypot(f[0], f[1]) / f[2])
            else:
                assert f[2] > -10.0, f"tick {k}: {name} pulls the ground with {f[2]:.1f} N"
        records.append((t, kin.com.copy(), ro.com_reference.copy(), ro.phase.support))
        v = v + qdd * dt
        q = dyn.integrate(model, q, v, dt)
    return ctrl, q, records, worst


def test_config_file_loads_and_bad_keys_are_named():
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    assert config.control_dt > 0 and config.footsteps.step_width == pytest.approx(0.18)
    with pytest.raises(ValueError, match="unknown walking parameter 'speed'"):
        walking_config_from_dict({"speed": 1.0})
    with pytest.raises(ValueError, match="single_suport"):
        walking_config_from_dict({"footsteps": {"single_suport": 0.5}})


def test_update_before_reset_and_unknown_frames_fail_clearly(model):
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    ctrl = WalkingController(model, config)
    with pytest.raises(RuntimeError, match="reset"):
        ctrl.update(0.0, stand(model), np.zeros(model.nv))
    with pytest.raises(KeyError, match="l_foot_sole"):
        WalkingController(model, dataclasses.replace(config, left_sole="l_foot_sole"))


def test_standing_torques_are_gravity_compensation(model):
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    ctrl = WalkingController(model, config)
    q = stand(model)
    v = np.zeros(model.nv)
    ctrl.reset(q, v)
    tau = ctrl.update(0.0, q, v)
    wrench = ctrl.readout.wrenches
    # Statics: S^T τ + Σ J_cᵀ f = g(q) with Σ f_z = m g and the ZMP under the CoM.
    g = dyn.gravity_forces(model, q)
    total = np.zeros(model.nv)
    total[6:] = tau
    moment = np.zeros(3)
    force = np.zeros(3)
    for name, w in wrench.items():
        total += dyn.frame_jacobian(model, q, name).T @ w
        p = dyn.frame_placement(model, q, name)[:3, 3]
        force += w[:3]
        moment += w[3:] + np.cross(p, w[:3])
    np.testing.assert_allclose(total, g, atol=1e-3 * np.abs(g).max())
    assert force[2] == pytest.approx(model.total_mass * 9.81, rel=1e-4)
    zmp = np.array([-moment[1], moment[0]]) / force[2]
    np.testing.assert_allclose(zmp, dyn.center_of_mass(model, q)[:2], atol=1e-3)


def test_walks_and_stops_in_five_steps_with_valid_contacts(model):
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    # Command at once (the plan starts after start_delay 1.6 s + 1 s of double support); the
    # stop command at 3 s is read at the first touch-down (3.3 s); the two steps already in
    # the preview horizon are kept, then a stopping step and a closing step: 5 steps, the
    # final double support ends at 7.9 s.
    ctrl, q, records, worst = run_on_rigid_contacts(model, config, 8.1, {0.0: (0.2, 0.0, 0.0), 3.0: (0.0, 0.0, 0.0)})
    t = np.array([r[0] for r in records])
    com = np.array([r[1] for r in records])
    com_ref = np.array([r[2] for r in records])
    phases = [r[3] for r in records]
    swings = sum(1 for a, b in zip(phases, phases[1:]) if a == "double" and b != "double")
    assert swings == 5, swings
    assert np.max(np.linalg.norm(com - com_ref, axis=1)) < 0.01  # CoM follows the pattern
    assert worst["min_fz_loaded"] > 0.0
    assert worst["cop_ratio"] < 1.0  # every loaded sole keeps its centre of pressure inside
    assert worst["friction_ratio"] < 1.0
    # It went forward and ended standing with both soles on the last footsteps.
    assert com[-1, 0] - com[0, 0] > 0.4
    assert not ctrl.walking
    last = {s.side: s for s in ctrl.footsteps[-2:]}
    for side, frame in (("left", "l_sole"), ("right", "r_sole")):
        p = dyn.frame_placement(model, q, frame)[:3, 3]
        np.testing.assert_allclose(p[:2], [last[side].x, last[side].y], atol=5e-3)
        assert abs(p[2]) < 2e-3
    assert t[-1] > ctrl.plan.t_end


def test_command_changes_apply_after_the_previewed_steps(model):
    # Plan logic only (the state fed back is the standing one; torques are not used).
    config = dataclasses.replace(load_walking_config(ROOT / "config" / "walking.yaml"), control_dt=0.01)
    ctrl = WalkingController(model, config)
    q = stand(model)
    v = np.zeros(model.nv)
    ctrl.reset(q, v)
    ctrl.set_command(0.2, 0.0, 0.0)
    t = 0.0
    while t < 3.0:  # before the first touch-down (the first swing ends at 3.3 s)
        ctrl.update(t, q, v)
        t += config.control_dt
    before = ctrl.plan
    ctrl.set_command(0.1, 0.0, 0.0)
    while t < 3.45:  # the touch-down at 3.3 s reads the new command
        ctrl.update(t, q, v)
        t += config.control_dt
    after = ctrl.plan
    touchdown = 3.3
    committed = [p for p in before.phases if p.swing_side is not None
                 and p.t_start < touchdown + config.preview_time]
    for p in committed:
        match = [a for a in after.phases if a.swing_side is not None and abs(a.t_start - p.t_start) < 1e-9]
        assert match and match[0].swing_to == p.swing_to
    new_steps = [p for p in after.phases if p.swing_side is not None and p.t_start > committed[-1].t_start]
    stride = config.footsteps.step_period * 0.1
    # The walking frame advances 0.1 m/s * period per step: successive footsteps (alternating
    # feet) are that far apart in x once the new speed applies.
    xs = [p.swing_to.x for p in new_steps[:4]]
    assert np.diff(xs)[1:] == pytest.approx([stride] * (len(xs) - 2), abs=1e-9)
    assert ctrl.walking


def test_configured_com_height_is_reached_smoothly(model):
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    q0 = stand(model)
    z0 = dyn.center_of_mass(model, q0)[2]
    config = dataclasses.replace(config, com_height=float(z0) - 0.03)  # crouch 3 cm
    ctrl, q, records, worst = run_on_rigid_contacts(model, config, 1.6, {})
    com = np.array([r[1] for r in records])
    assert com[-1, 2] == pytest.approx(z0 - 0.03, abs=2e-3)
    assert np.max(np.abs(np.diff(com[:, 2]))) < 1e-3 * config.control_dt / 0.002  # no jump
    assert worst["cop_ratio"] < 1.0 and worst["min_fz_loaded"] > 0.0


def test_the_pattern_follows_the_time_passed_in_not_the_number_of_calls(model):
    """A caller that skips ticks (a state lost or late over DDS) gets the CoM reference of one
    that called every tick: the preview servo takes the samples it missed."""
    config = load_walking_config(ROOT / "config" / "walking.yaml")
    dt = config.control_dt
    q, v = stand(model), np.zeros(model.nv)
    every_tick, skipping = WalkingController(model, config), WalkingController(model, config)
    for ctrl in (every_tick, skipping):
        ctrl.reset(q, v, 0.0)
        ctrl.set_command(0.15, 0.0, 0.0)
    rng = np.random.default_rng(7)
    k_last = 0
    for k in range(1200):  # 4.8 s: the preview shifts the CoM and the first steps start
        every_tick.update(k * dt, q, v)
        if k > 0 and rng.random() < 0.7 and k - k_last < 20:
            continue  # skipped: up to 20 ticks go by between two calls
        skipping.update(k * dt, q, v)
        k_last = k
        np.testing.assert_allclose(skipping.readout.com_reference, every_tick.readout.com_reference, atol=1e-12)
    moved = every_tick.readout.com_reference[:2] - q[:2]
    assert np.linalg.norm(moved) > 0.05  # the reference did move: the comparison meant something
