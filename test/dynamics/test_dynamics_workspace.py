"""The simulator's hot path (DynamicsWorkspace) against the public functions and
Pinocchio, and its kernels called from user numba code."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from dynamics_oracle import (
    PinocchioMap,
    assert_relative_close,
    pinocchio_model_from_robot_model,
    random_state,
    random_tree_model,
)
from numba import njit

from humanoid_sim import dynamics as dyn
from humanoid_sim.dynamics.kernels import point_drift_into, point_jacobian_into


@njit(cache=True)
def _stack_contact_rows(parent, ndof, v_index, S, V, A, bodies, points, J_out, drift_out):
    """What a contact solver does: one 3-row block per contact point (linear part)."""
    J6 = np.empty((6, J_out.shape[1]))
    d6 = np.empty(6)
    for c in range(bodies.shape[0]):
        point_jacobian_into(parent, ndof, v_index, S, bodies[c], points[c], J6)
        point_drift_into(V, A, bodies[c], points[c], d6)
        J_out[3 * c : 3 * c + 3] = J6[:3]
        drift_out[3 * c : 3 * c + 3] = d6[:3]


def test_workspace_update_matches_pinocchio(rng: np.random.Generator) -> None:
    model = random_tree_model(np.random.default_rng(3), nb=12, floating_base=True)
    pin_model = pinocchio_model_from_robot_model(model)
    conv = PinocchioMap(model, pin_model)
    data = pin_model.createData()
    ws = dyn.DynamicsWorkspace(model)
    for _ in range(20):
        q, v = random_state(model, rng)
        ws.update(q, v)
        qp, vp = conv.q(q), conv.v(v)
        M_pin = pin.crba(pin_model, data, qp)
        assert_relative_close(ws.M, conv.matrix_ours(np.triu(M_pin) + np.triu(M_pin, 1).T), what="M")
        assert_relative_close(ws.b, conv.v_ours(pin.nonLinearEffects(pin_model, data, qp, vp)), what="b")
        X = dyn.forward_kinematics(model, q)
        assert_relative_close(ws.R, X[:, :3, :3], rel=1e-14, what="R")
        assert_relative_close(ws.p, X[:, :3, 3], rel=1e-14, what="p")
        tau = rng.normal(size=model.nv)
        a_pin = pin.aba(pin_model, data, qp, vp, conv.v(tau))
        assert_relative_close(ws.forward_dynamics(tau), conv.v_ours(a_pin), what="ABA")
        assert_relative_close(ws.inverse_mass_times(tau), np.linalg.solve(ws.M, tau), what="M^-1 tau")
        # body spatial velocities: the angular part is the body's angular velocity
        pin.forwardKinematics(pin_model, data, qp, vp)
        body = model.nb - 1
        jid = pin_model.frames[pin_model.getFrameId(model.body_names[body])].parentJoint
        omega_pin = data.oMi[jid].rotation @ data.v[jid].angular
        assert_relative_close(ws.V[body, 3:], omega_pin, what="ω")


def test_point_kernels_from_numba_match_public_functions(rng: np.random.Generator) -> None:
    model = random_tree_model(np.random.default_rng(4), nb=10, floating_base=True)
    ws = dyn.DynamicsWorkspace(model)
    q, v = random_state(model, rng)
    ws.update(q, v)
    bodies = np.array([9, 5, 0], dtype=np.int64)
    points = ws.p[bodies] + rng.uniform(-0.1, 0.1, size=(3, 3))
    J = np.empty((9, model.nv))
    drift = np.empty(9)
    _stack_contact_rows(ws.parent, ws.ndof, ws.v_index, ws.S, ws.V, ws.A, bodies, points, J, drift)
    for c, body in enumerate(bodies):
        J_ref = dyn.point_jacobian(model, q, int(body), points[c])
        assert_relative_close(J[3 * c : 3 * c + 3], J_ref[:3], rel=1e-14, what="J rows")
        d_ref = dyn.point_drift_acceleration(model, q, v, int(body), points[c])
        assert_relative_close(drift[3 * c : 3 * c + 3], d_ref[:3], rel=1e-14, what="drift rows")
        assert_relative_close(ws.point_jacobian(int(body), points[c]), J_ref, rel=1e-14, what="ws J")
        assert_relative_close(ws.point_drift(int(body), points[c]), d_ref, rel=1e-14, what="ws drift")


def test_update_does_not_allocate_new_buffers(rng: np.random.Generator) -> None:
    model = random_tree_model(np.random.default_rng(5), nb=6, floating_base=False)
    ws = dyn.DynamicsWorkspace(model)
    buffers = [ws.R, ws.p, ws.S, ws.V, ws.A, ws.M, ws.b]
    ids = [id(x) for x in buffers]
    for _ in range(3):
        q, v = random_state(model, rng)
        ws.update(q, v)
        assert [id(x) for x in (ws.R, ws.p, ws.S, ws.V, ws.A, ws.M, ws.b)] == ids
    assert_relative_close(ws.M, dyn.mass_matrix(model, q), rel=1e-14, what="M after reuse")


def test_bad_inputs_name_the_problem() -> None:
    model = random_tree_model(np.random.default_rng(6), nb=4, floating_base=True)
    with pytest.raises(ValueError, match=r"q must have shape \(10,\)"):
        dyn.mass_matrix(model, np.zeros(3))
    with pytest.raises(KeyError, match="valid bodies: link0, link1"):
        dyn.point_jacobian(model, np.r_[np.zeros(6), 1.0, np.zeros(3)], "nope", np.zeros(3))
    with pytest.raises(KeyError, match="valid frames"):
        dyn.frame_placement(model, np.r_[np.zeros(6), 1.0, np.zeros(3)], "nope")


def test_massless_moving_leaf_gives_a_clear_error() -> None:
    """A moving body whose subtree has no mass makes M singular (romeo's fingers)."""
    from dataclasses import replace

    model = random_tree_model(np.random.default_rng(8), nb=4, floating_base=True)
    mass = np.array(model.mass)
    inertia = np.array(model.inertia_com)
    mass[3] = 0.0
    inertia[3] = 0.0
    massless = replace(model, mass=mass, inertia_com=inertia)
    q, v = random_state(massless, np.random.default_rng(0))
    with pytest.raises(ValueError, match="singular articulated inertia.*link3"):
        dyn.forward_dynamics(massless, q, v, np.zeros(massless.nv))
