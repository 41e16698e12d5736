"""Models of several floating trees (a robot and free objects) against Pinocchio.

The world's model (humanoid_sim.world.assembly) appends every free object as a one-body
tree with a FREE joint. Pinocchio builds the same system as the robot plus one free-flyer
joint per object under the universe (the URDF loaded by Pinocchio, the objects added
joint by joint), or, for random trees, entirely in code. M, b, g, the inverse and forward
dynamics and the LOCAL_WORLD_ALIGNED Jacobians and drifts of points on every body must
agree to 1e-9 relative at seeded random states, and M has no entry between two trees.
"""

from __future__ import annotations

import functools
from pathlib import Path

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

from humanoid_sim import dynamics as dyn
from humanoid_sim.model import load_urdf
from humanoid_sim.model.robot_model import RobotModel, ShapeKind
from humanoid_sim.world import FreeObject, Shape, World, assemble_world_model

N_STATES = 10
HUMANOID = Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"


def _objects() -> tuple[FreeObject, ...]:
    """Two boxes of distinct principal moments, one with its centre of mass off its origin
    and a turned inertia, and a sphere."""
    box = Shape(ShapeKind.BOX, [0.4, 0.3, 0.2])
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
        [[1.0, 0.0, 0.0], [0.0, np.cos(0.4), -np.sin(0.4)], [0.0, np.sin(0.4), np.cos(0.4)]]
    )
    crate_inertia = box.mass_properties(mass=10.0).inertia
    return (
        FreeObject("crate", box, 10.0, crate_inertia, position=[0.6, 0.0, 0.25]),
        FreeObject("odd_box", box, 2.5, R @ np.diag([0.03, 0.05, 0.07]) @ R.T, com=[0.05, -0.02, 0.01]),
        FreeObject("ball", Shape(ShapeKind.SPHERE, [0.11]), 0.43, np.eye(3) * 0.4 * 0.43 * 0.11**2),
    )


def _add_free_objects(pin_model: pin.Model, model: RobotModel, first_object: int) -> None:
    """Our object bodies (first_object ..) as free-flyer joints under Pinocchio's universe."""
    for body in range(first_object, model.nb):
        jid = pin_model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), model.body_names[body])
        inertia = pin.Inertia(float(model.mass[body]), np.array(model.com[body]), np.array(model.inertia_com[body]))
        pin_model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        pin_model.addFrame(pin.Frame(model.body_names[body], jid, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))


@functools.lru_cache(maxsize=None)
def humanoid_with_objects() -> tuple:
    robot = load_urdf(HUMANOID, mimic="independent")
    world = assemble_world_model(World(objects=_objects()), robot)
    pin_model = pin.buildModelFromUrdf(str(HUMANOID), pin.JointModelFreeFlyer())
    _add_free_objects(pin_model, world.model, robot.nb)
    return world.model, pin_model, PinocchioMap(world.model, pin_model)


@functools.lru_cache(maxsize=None)
def tree_with_objects(floating_base: bool | None) -> tuple:
    """A random tree (floating or welded; None: no robot) and the objects, built in code on both sides."""
    robot = None if floating_base is None else random_tree_model(np.random.default_rng(5), nb=7, floating_base=floating_base)
    model = assemble_world_model(World(objects=_objects()), robot).model
    pin_model = pinocchio_model_from_robot_model(model)
    return model, pin_model, PinocchioMap(model, pin_model)


CASES = [
    pytest.param(humanoid_with_objects, id="humanoid_and_3_objects"),
    pytest.param(functools.partial(tree_with_objects, True), id="floating_tree_and_3_objects"),
    pytest.param(functools.partial(tree_with_objects, False), id="welded_tree_and_3_objects"),
    pytest.param(functools.partial(tree_with_objects, None), id="3_objects_alone"),
]


@pytest.mark.parametrize("case", CASES)
def test_dynamics_of_several_trees_match_pinocchio(case, rng: np.random.Generator) -> None:
    model, pin_model, conv = case()
    data = pin_model.createData()
    assert pin_model.nv == model.nv
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
        assert_relative_close(dyn.forward_dynamics(model, q, v, tau), conv.v_ours(a_pin), what="ABA")


@pytest.mark.parametrize("case", CASES)
def test_point_jacobians_of_several_trees_match_pinocchio(case, rng: np.random.Generator) -> None:
    """The LOCAL_WORLD_ALIGNED Jacobian and classical drift of a point fixed on every body."""
    model, pin_model, conv = case()
    pin_model = pin.Model(pin_model)
    offsets = rng.uniform(-0.2, 0.2, size=(model.nb, 3))
    frame_ids = []
    for body in range(model.nb):  # a frame at the offset from each body's own (link) frame
        link = pin_model.frames[pin_model.getFrameId(model.body_names[body])]
        placement = link.placement * pin.SE3(np.eye(3), offsets[body])
        frame = pin.Frame(f"point{body}", link.parentJoint, 0, placement, pin.FrameType.OP_FRAME)
        frame_ids.append(pin_model.addFrame(frame))
    data = pin_model.createData()
    for _ in range(4):
        q, v = random_state(model, rng)
        qp, vp = conv.q(q), conv.v(v)
        pin.forwardKinematics(pin_model, data, qp, vp, np.zeros(pin_model.nv))
        pin.computeJointJacobians(pin_model, data, qp)
        pin.updateFramePlacements(pin_model, data)
        X = dyn.forward_kinematics(model, q)
        for body, fid in enumerate(frame_ids):
            point = X[body, :3, :3] @ offsets[body] + X[body, :3, 3]
            assert_relative_close(point, data.oMf[fid].translation, what=f"point on {model.body_names[body]}")
            J_pin = pin.getFrameJacobian(pin_model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            J = dyn.point_jacobian(model, q, body, point)
            assert_relative_close(J, conv.columns_ours(J_pin), what=f"J of a point on {model.body_names[body]}")
            drift_pin = pin.getFrameClassicalAcceleration(pin_model, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
            drift = dyn.point_drift_acceleration(model, q, v, body, point)
            assert_relative_close(drift, drift_pin, what=f"drift of a point on {model.body_names[body]}")


@pytest.mark.parametrize("case", CASES)
def test_mass_matrix_has_no_entry_between_trees(case, rng: np.random.Generator) -> None:
    model, _, _ = case()
    tree_of_dof = model.tree_root[dyn.kinematic_tree(model).dof_body]
    for _ in range(3):
        q, _ = random_state(model, rng)
        M = dyn.mass_matrix(model, q)
        across = tree_of_dof[:, None] != tree_of_dof[None, :]
        assert np.all(M[across] == 0.0)
        # each object's own block is its rigid-body inertia: mass on the linear diagonal
        for body in model.free_bodies:
            vi = int(model.v_index[body])
            if model.tree_root[body] == body and not np.any(model.parent == body):
                np.testing.assert_allclose(np.diag(M)[vi : vi + 3], model.mass[body], rtol=1e-12)
