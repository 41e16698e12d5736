"""The integrator's held wrenches (dynamics/integrator.py): a contact's wrench held on its
body's point enters every stage as J(q)ᵀ w of that point at the stage's q.

- At the start of the step, the articulated-body acceleration with the held wrenches equals
  the one with their J(q)ᵀ w added to the generalised force, and release_held_wrenches_nb
  takes exactly that J(q)ᵀ w out of the generalised force held over the step.
- At another configuration, the wrench acts on the same material point, moved with its body
  (or lift below it, for a rolling sphere's centre), with its force and moment unturned.
"""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_oracle import assert_relative_close, random_state, random_tree_model

from humanoid_sim.dynamics.integrator import (
    free_acceleration_nb,
    held_wrenches,
    hold_wrench_nb,
    release_held_wrenches_nb,
    stage_work,
)
from humanoid_sim.dynamics.kinematic_tree import kinematic_tree
from humanoid_sim.dynamics.kinematics import forward_kinematics, point_jacobian
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
