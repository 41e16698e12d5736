"""Kinematics and dynamics against Pinocchio on public humanoids, random trees and worlds.

Humanoid URDFs are loaded by our loader and by ``pinocchio.buildModelFromUrdf``
(free-flyer root); random trees are built in code on both sides. A world's model
(``assemble_world_model``: a robot and free objects as several floating trees) is the
robot plus one free-flyer joint per object under Pinocchio's universe. Joint order is
matched by name. Every quantity must agree to 1e-9 relative (see
``assert_relative_close``) at 20 seeded random states per robot.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from dynamics_oracle import (
    PinocchioMap,
    add_free_objects,
    assert_relative_close,
    example_robot_urdf,
    free_objects,
    pinocchio_model_from_robot_model,
    random_state,
    random_tree_model,
)

from humanoid_sim import dynamics as dyn
from humanoid_sim.model import load_urdf
from humanoid_sim.world import World, assemble_world_model

N_STATES = 20
BUNDLED_HUMANOID = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"

ROBOTS = {
    "bundled_humanoid": BUNDLED_HUMANOID,
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "g1_29dof": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    # romeo has massless finger chains (singular M), so iCub is the fourth humanoid
    "icub_reduced": "icub_description/robots/icub_reduced.urdf",
}


@functools.lru_cache(maxsize=None)
def robot(name: str) -> tuple:
    """(our model, Pinocchio model, map) for a robot of ROBOTS, loaded once."""
    source = ROBOTS[name]
    path = source if isinstance(source, Path) else example_robot_urdf(source)
    if not path.is_file():
        pytest.fail(f"URDF of {name} missing: {path}")
    # Pinocchio reads <mimic> joints as independent joints; do the same.
    model = load_urdf(path, mimic="independent")
    pin_model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return model, pin_model, PinocchioMap(model, pin_model)


@functools.lru_cache(maxsize=None)
def tree(seed: int, floating_base: bool) -> tuple:
    model = random_tree_model(np.random.default_rng(seed), nb=9, floating_base=floating_base)
    pin_model = pinocchio_model_from_robot_model(model)
    return model, pin_model, PinocchioMap(model, pin_model)


@functools.lru_cache(maxsize=None)
def world(robot_kind: str) -> tuple:
    """The free objects with the bundled humanoid ("humanoid"), a random tree ("floating",
    "fixed") or alone ("none"), as one model of several trees."""
    objects = World(objects=free_objects())
    if robot_kind == "humanoid":
        own = load_urdf(BUNDLED_HUMANOID, mimic="independent")
        model = assemble_world_model(objects, own).model
        pin_model = pin.buildModelFromUrdf(str(BUNDLED_HUMANOID), pin.JointModelFreeFlyer())
        add_free_objects(pin_model, model, own.nb)
    else:
        own = None
        if robot_kind != "none":
            own = random_tree_model(np.random.default_rng(5), nb=7, floating_base=robot_kind == "floating")
        model = assemble_world_model(objects, own).model
        pin_model = pinocchio_model_from_robot_model(model)
    return model, pin_model, PinocchioMap(model, pin_model)


CASES = [pytest.param(("urdf", name), id=name) for name in ROBOTS] + [
    pytest.param(("tree", 1, True), id="random_tree_floating"),
    pytest.param(("tree", 2, False), id="random_tree_fixed"),
] + [pytest.param(("world", kind), id=f"world_{kind}_and_3_objects") for kind in ("humanoid", "floating", "fixed", "none")]


def _case(case: tuple) -> tuple:
    if case[0] == "world":
        return world(case[1])
    return robot(case[1]) if case[0] == "urdf" else tree(case[1], case[2])


@pytest.mark.parametrize("case", CASES)
def test_mass_matrix_bias_gravity_inverse_and_forward_dynamics(case: tuple, rng: np.random.Generator) -> None:
    model, pin_model, conv = _case(case)
    data = pin_model.createData()
    for _ in range(N_STATES):
        q, v = random_state(model, rng)
        a = rng.normal(size=model.nv)
        tau = rng.normal(size=model.nv) * 10.0
        qp, vp, ap = conv.q(q), conv.v(v), conv.v(a)
        M_pin = pin.crba(pin_model, data, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        assert_relative_close(dyn.mass_matrix(model, q), conv.matrix_ours(M_pin), what="M")
        b_pin = pin.rnea(pin_model, data, qp, vp, np.zeros(pin_model.nv))
        assert_relative_close(dyn.bias_forces(model, q, v), conv.v_ours(b_pin), what="b")
        g_pin = pin.computeGeneralizedGravity(pin_model, data, qp)
        assert_relative_close(dyn.gravity_forces(model, q), conv.v_ours(g_pin), what="g")
        tau_pin = pin.rnea(pin_model, data, qp, vp, ap)
        assert_relative_close(dyn.inverse_dynamics(model, q, v, a), conv.v_ours(tau_pin), what="tau")
        a_pin = pin.aba(pin_model, data, qp, vp, conv.v(tau))
        # the forward error of M^-1 grows with M's condition number (the humanoid's shoulders
        # near their singular pose reach 1e9 at random states): 1e-9 up to a condition of 1e5
        rel = 1e-9 * max(1.0, np.linalg.cond(M_pin) / 1e5)
        assert_relative_close(dyn.forward_dynamics(model, q, v, tau), conv.v_ours(a_pin), rel=rel, what="ABA")


@pytest.mark.parametrize("case", CASES)
def test_frames_jacobians_and_drift(case: tuple, rng: np.random.Generator) -> None:
    """Placement, LOCAL_WORLD_ALIGNED Jacobian and classical drift J̇v of every frame."""
    model, pin_model, conv = _case(case)
    data = pin_model.createData()
    names = list(model.frames)  # every URDF link and joint
    missing = [name for name in names if not pin_model.existFrame(name)]
    assert not missing, f"frames unknown to Pinocchio: {missing}"
    for _ in range(N_STATES):
        q, v = random_state(model, rng)
        qp, vp = conv.q(q), conv.v(v)
        pin.forwardKinematics(pin_model, data, qp, vp, np.zeros(pin_model.nv))
        pin.computeJointJacobians(pin_model, data, qp)
        pin.updateFramePlacements(pin_model, data)
        X_world_body = dyn.forward_kinematics(model, q)
        for name in names:
            fid = pin_model.getFrameId(name)
            X_pin = data.oMf[fid].homogeneous
            X = dyn.frame_placement(model, q, name)
            assert_relative_close(X, X_pin, what=f"placement of {name}")
            frame = model.frame(name)
            assert_relative_close(X, X_world_body[frame.body] @ frame.X_body_frame, rel=1e-12, what=name)
            J_pin = pin.getFrameJacobian(pin_model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            assert_relative_close(dyn.frame_jacobian(model, q, name), conv.columns_ours(J_pin), what=f"J of {name}")
            drift_pin = pin.getFrameClassicalAcceleration(pin_model, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
            drift = dyn.point_drift_acceleration(model, q, v, frame.body, X[:3, 3])
            assert_relative_close(drift, drift_pin, what=f"drift of {name}")


@pytest.mark.parametrize("case", CASES)
def test_center_of_mass_and_its_jacobian(case: tuple, rng: np.random.Generator) -> None:
    model, pin_model, conv = _case(case)
    data = pin_model.createData()
    for _ in range(N_STATES):
        q, _ = random_state(model, rng)
        qp = conv.q(q)
        com_pin = pin.centerOfMass(pin_model, data, qp)
        J_pin = pin.jacobianCenterOfMass(pin_model, data, qp)
        # Pinocchio leaves out bodies welded to the universe (our FIXED_TO_WORLD
        # root); fold that fixed mass back in.
        welded = pin_model.inertias[0]
        moving_mass = data.mass[0]
        com_pin = (moving_mass * com_pin + welded.mass * welded.lever) / (moving_mass + welded.mass)
        J_pin = J_pin * moving_mass / (moving_mass + welded.mass)
        assert_relative_close(dyn.center_of_mass(model, q), com_pin, what="CoM")
        assert_relative_close(dyn.com_jacobian(model, q), conv.columns_ours(J_pin), what="J_com")


@pytest.mark.parametrize("case", CASES)
def test_integrate_and_difference(case: tuple, rng: np.random.Generator) -> None:
    model, pin_model, conv = _case(case)
    for _ in range(N_STATES):
        q, v = random_state(model, rng)
        dt = float(rng.uniform(0.001, 0.5))
        q_next = dyn.integrate(model, q, v, dt)
        q_next_pin = pin.integrate(pin_model, conv.q(q), conv.v(v) * dt)
        # Pinocchio keeps the sign of the quaternion; ours too (no w >= 0 flip)
        assert_relative_close(conv.q(q_next), q_next_pin, what="integrate")
        assert_relative_close(dyn.difference(model, q, q_next), v * dt, rel=1e-9, what="difference")
