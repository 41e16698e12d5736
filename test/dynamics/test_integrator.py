"""The integrator's held wrenches (dynamics/integrator.py): a contact's wrench held on its
body's point enters every stage as J(q)ᵀ w of that point at the stage's q.

- At the start of the step, the articulated-body acceleration with the held wrenches equals
  the one with their J(q)ᵀ w added to the generalised force, and release_held_wrenches_nb
  takes exactly that J(q)ᵀ w out of the generalised force held over the step.
- At another configuration, the wrench acts on the same material point, moved with its body
  (or lift below it, for a rolling sphere's centre), with its force and moment unturned.
- A state at rest (no coordinate moving REST_MOTION in the step, no velocity changing
  REST_VELOCITY_CHANGE) takes the constant-acceleration step without the stages, and that is
  the step the four stages give, to rounding; any state that moves more takes the stages.
- The stages' articulated-body pass is, to the last bit, the separate passes of the dynamics
  workspace (its locals and fused loops change no sum), and the held forces summed four rows at
  a time are those summed one row at a time.
- A joint held on its stop is locked at its solved acceleration for the stages: the
  articulated-body pass gives it that acceleration and the others those of the dynamics with
  it prescribed (a dense solve of M q̈ = τ - b + E μ, Eᵀ q̈ = α); its stop's force leaves the
  generalised force held over the step.
"""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_oracle import assert_relative_close, random_state, random_tree_model

from humanoid_sim.dynamics.integrator import (
    REST_MOTION,
    REST_VELOCITY_CHANGE,
    at_rest_nb,
    free_acceleration_nb,
    held_forces_nb,
    held_wrenches,
    hold_wrench_nb,
    lock_stops_nb,
    release_held_wrenches_nb,
    rk4_step_nb,
    runge_kutta_nb,
    stage_work,
)
from humanoid_sim.dynamics.kinematic_tree import kinematic_tree
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.dynamics.kinematics import forward_kinematics, point_jacobian
from humanoid_sim.dynamics.rigid_body_dynamics import bias_forces, gravity_forces, mass_matrix
from humanoid_sim.dynamics.spatial import axis_angle_to_rotation


@pytest.fixture(params=[True, False], ids=["floating", "fixed"])
def model(request):
    return random_tree_model(np.random.default_rng(11), nb=9, floating_base=request.param)


def _held(model, rng, q, w, tree):
    """Three held wrenches on random bodies at q (one lifted), and what they are: (body,
    material point in the body frame, offset from it in the world, f, n) each."""
    free_acceleration_nb(tree, w, held_wrenches(1), q, np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv))
    R, p = w.R.copy(), w.p.copy()
    held = held_wrenches(3)
    entries = []
    for lift in (0.0, 0.0, 0.05):
        body = int(rng.integers(model.nb))
        x = rng.normal(size=3)
        axis = rng.normal(size=3)
        R_vl = axis_angle_to_rotation(axis / np.linalg.norm(axis), rng.uniform(0.0, np.pi))
        wrench = rng.normal(size=6) * 10.0
        hold_wrench_nb(held, R, p, body, x, lift, R_vl, wrench, -1.0)
        material = x + lift * R_vl[:, 2]
        entries.append((body, R[body].T @ (material - p[body]), -lift * R_vl[:, 2], -R_vl @ wrench[:3], -R_vl @ wrench[3:]))
    return held, entries, (R, p, w.S.copy())


def _generalised(model, q, entries) -> np.ndarray:
    """Σ J(q)ᵀ (f, n) of the entries' points of action at q (Jacobians of kinematics.py)."""
    X = forward_kinematics(model, q)
    tau = np.zeros(model.nv)
    for body, local, offset, f, n in entries:
        x = X[body, :3, :3] @ local + X[body, :3, 3] + offset
        J = point_jacobian(model, q, body, x)
        tau += J[:3].T @ f + J[3:].T @ n
    return tau


def test_held_wrenches_are_j_transpose_w_at_the_start_and_are_released_exactly(model, rng):
    tree = kinematic_tree(model)
    w = stage_work(tree)
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv) * 5.0
        held, entries, (R, p, S) = _held(model, rng, q, w, tree)
        extra = _generalised(model, q, entries)
        with_held, reference = np.empty(model.nv), np.empty(model.nv)
        free_acceleration_nb(tree, w, held, q, v, tau, with_held)
        free_acceleration_nb(tree, w, held_wrenches(1), q, v, tau + extra, reference)
        assert_relative_close(with_held, reference, rel=1e-9, what="ABA with held wrenches")
        released = tau + extra
        release_held_wrenches_nb(tree, w, held, R, p, S, released)
        assert_relative_close(released, tau, rel=1e-9, what="released")


def test_a_held_wrench_moves_with_its_material_point_and_keeps_its_world_axes(model, rng):
    tree = kinematic_tree(model)
    w = stage_work(tree)
    q, v = random_state(model, rng)
    held, entries, _ = _held(model, rng, q, w, tree)
    q2, v2 = random_state(model, rng)  # another configuration of the step's stages
    tau = rng.normal(size=model.nv)
    with_held, reference = np.empty(model.nv), np.empty(model.nv)
    free_acceleration_nb(tree, w, held, q2, v2, tau, with_held)
    free_acceleration_nb(tree, w, held_wrenches(1), q2, v2, tau + _generalised(model, q2, entries), reference)
    assert_relative_close(with_held, reference, rel=1e-9, what="held wrenches at another q")
    # and not the generalised force of the start
    free_acceleration_nb(tree, w, held_wrenches(1), q2, v2, tau + _generalised(model, q, entries), reference)
    assert np.max(np.abs(with_held - reference)) > 1e-3


def _near_rest(model, rng, tree, w, held, speed, acceleration, dt):
    """A state (q, v, a1) whose velocities are ~speed and whose accelerations are ~acceleration
    under the held forces tau_c = g(q) + M δ (gravity held, as contacts hold a robot at rest) and
    joint damping; a1 is the first stage's acceleration, as the step's solve gives it."""
    q, _ = random_state(model, rng)
    v = rng.normal(size=model.nv) * speed
    tau_c = gravity_forces(model, q) + mass_matrix(model, q) @ (rng.normal(size=model.nv) * acceleration)
    damping = rng.uniform(0.0, 2.0, size=model.nv)
    a1 = np.empty(model.nv)
    free_acceleration_nb(tree, w, held, q, v, tau_c - damping * v, a1)
    return q, v, a1, tau_c, damping


def test_a_state_at_rest_takes_the_step_the_four_stages_would_give(model, rng):
    tree = kinematic_tree(model)
    w = stage_work(tree, np.full(model.nv, 0.01))
    held = held_wrenches(1)
    dt = 1e-3
    for _ in range(5):
        q, v, a1, tau_c, damping = _near_rest(model, rng, tree, w, held, 1e-12, 1e-9, dt)
        assert np.max(np.abs(v)) * dt <= REST_MOTION and np.max(np.abs(a1)) * dt <= REST_VELOCITY_CHANGE
        assert at_rest_nb(v, a1, dt)
        q_rest, v_rest, q_rk, v_rk = np.empty(model.nq), np.empty(model.nv), np.empty(model.nq), np.empty(model.nv)
        assert rk4_step_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_rest, v_rest) == 0
        np.testing.assert_array_equal(v_rest, v + dt * a1)  # the constant-acceleration step
        runge_kutta_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_rk, v_rk)
        # what the stages add is the change of the acceleration within the step: the damping's
        # decay of the step's velocity change (D / m up to 200 1/s here), a few % of that change
        assert np.max(np.abs(v_rest - v_rk)) <= 0.1 * np.max(np.abs(v_rk - v))
        assert np.max(np.abs(q_rest - q_rk)) <= 1e-15


@pytest.mark.parametrize(("speed", "acceleration"), [(1e-6, 1e-9), (1e-12, 1e-4), (np.nan, 0.0)])
def test_a_state_that_moves_takes_the_four_stages(model, rng, speed, acceleration):
    tree = kinematic_tree(model)
    w = stage_work(tree, np.full(model.nv, 0.01))
    held = held_wrenches(1)
    dt = 1e-3
    q, v, a1, tau_c, damping = _near_rest(model, rng, tree, w, held, 1e-12, acceleration, dt)
    v[rng.integers(model.nv)] = speed  # one coordinate moving (or not finite) is enough
    free_acceleration_nb(tree, w, held, q, v, tau_c - damping * v, a1)
    assert not at_rest_nb(v, a1, dt)
    q_step, v_step, q_rk, v_rk = np.empty(model.nq), np.empty(model.nv), np.empty(model.nq), np.empty(model.nv)
    assert rk4_step_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_step, v_step) == 3
    runge_kutta_nb(tree, w, held, q, v, a1, tau_c, damping, dt, q_rk, v_rk)
    np.testing.assert_array_equal(q_step, q_rk)
    np.testing.assert_array_equal(v_step, v_rk)


def test_a_joint_locked_on_its_stop_moves_at_its_acceleration_and_the_others_as_if_it_were_prescribed(model, rng):
    tree = kinematic_tree(model)
    w = stage_work(tree)
    held = held_wrenches(1)
    one_dof = [c for c in range(model.nv) if tree.ndof[tree.dof_body[c]] == 1]
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv) * 5.0
        a = rng.normal(size=model.nv) * 3.0
        c0, c1, c2 = rng.choice(one_dof, size=3, replace=False)
        # two stop rows (±1 on one joint, force > 0), a row of two joints, a stop without force
        J = np.zeros((4, model.nv))
        J[0, c0], J[1, c1], J[2, c1], J[2, c2], J[3, c2] = 1.0, -1.0, 0.5, 0.5, 1.0
        force = np.array([2.0, 3.0, 4.0, 0.0])
        tau_c = tau.copy()
        assert lock_stops_nb(tree, w, J, force, 4, a, tau_c) == 2
        assert sorted(np.flatnonzero(w.locked)) == sorted([c0, c1])
        np.testing.assert_array_equal(tau_c, tau - 2.0 * J[0] - 3.0 * J[1])  # their forces taken out
        qdd = np.zeros(model.nv)
        free_acceleration_nb(tree, w, held, q, v, tau_c, qdd)
        # the truth: M q̈ = τ_c - b + E μ with Eᵀ q̈ = α (μ: the torques that hold the locked joints)
        E = np.zeros((model.nv, 2))
        E[c0, 0] = E[c1, 1] = 1.0
        kkt = np.block([[mass_matrix(model, q), -E], [E.T, np.zeros((2, 2))]])
        rhs = np.concatenate([tau_c - bias_forces(model, q, v), a[[c0, c1]]])
        assert_relative_close(qdd, np.linalg.solve(kkt, rhs)[: model.nv], rel=1e-9)
        assert qdd[c0] == a[c0] and qdd[c1] == a[c1]


def test_the_stage_pass_is_the_workspace_s_separate_passes_to_the_last_bit(model, rng):
    tree = kinematic_tree(model)
    w = stage_work(tree)
    ws = DynamicsWorkspace(model)
    qdd = np.empty(model.nv)
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv) * 10.0
        ws.update(q, v)
        expected = ws.forward_dynamics(tau).copy()
        free_acceleration_nb(tree, w, held_wrenches(1), q, v, tau, qdd)
        np.testing.assert_array_equal(qdd, expected)


@pytest.mark.parametrize("nv", [1, 3, 4, 5, 8, 11])
def test_held_forces_four_rows_at_a_time_are_one_row_at_a_time(nv, rng):
    M = rng.normal(size=(nv, nv))
    a, a0, tau = rng.normal(size=nv), rng.normal(size=nv), rng.normal(size=nv)
    expected = np.empty(nv)
    for i in range(nv):  # tau + M (a - a0), one row at a time, each sum in column order
        s = 0.0
        for j in range(nv):
            s += float(M[i, j]) * (float(a[j]) - float(a0[j]))
        expected[i] = float(tau[i]) + s
    out = np.empty(nv)
    held_forces_nb(M, a, a0, tau, out)
    np.testing.assert_array_equal(out, expected)
