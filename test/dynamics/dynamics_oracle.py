"""Test helpers for the dynamics tests: models built in code and the Pinocchio oracle.

- ``random_tree_model``: a RobotModel built by hand (random tree, revolute and
  prismatic joints, free or welded root), independent of the URDF loader.
- ``pinocchio_model_from_robot_model``: the same tree built programmatically in
  Pinocchio, so the oracle does not share any of our code.
- ``PinocchioMap``: converts q, v, a between our layout and Pinocchio's (joint
  order matched by name, continuous joints (cos, sin) in Pinocchio).
- ``free_objects`` / ``add_free_objects``: free rigid objects of a world, appended as
  one-body FREE trees by ``assemble_world_model``; in Pinocchio free-flyer joints under
  the universe named after the object.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_sim.model.resource_paths import example_robot_data_share_dirs
from humanoid_sim.model.robot_model import Frame, JointLimits, JointType, RobotModel, ShapeKind, coordinate_indices
from humanoid_sim.world import FreeObject, Shape


def example_robot_urdf(relative: str) -> Path:
    """Path of a URDF in example-robot-data's ``robots/`` directory."""
    for share in example_robot_data_share_dirs():
        path = share / "example-robot-data" / "robots" / relative
        if path.is_file():
            return path
    raise FileNotFoundError(f"example-robot-data URDF {relative!r} not found")


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def _random_inertia(rng: np.random.Generator) -> np.ndarray:
    R = _random_rotation(rng)
    principal = rng.uniform(0.01, 0.2, size=3)
    # enforce the triangle inequality of physical inertias
    principal[2] = min(principal[2], principal[0] + principal[1] - 1e-3)
    return R @ np.diag(principal) @ R.T


def random_tree_model(
    rng: np.random.Generator,
    nb: int = 8,
    floating_base: bool = True,
    prismatic_fraction: float = 0.25,
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81),
) -> RobotModel:
    """A random kinematic tree of nb bodies, built without any URDF."""
    # depth-first order (subtrees contiguous, as the loader and Pinocchio need):
    # each new body hangs from a random body on the path from the root to the last one
    parent = np.full(nb, -1, dtype=np.int64)
    path = [0]
    for i in range(1, nb):
        depth = int(rng.integers(0, len(path)))
        parent[i] = path[depth]
        path = path[: depth + 1] + [i]
    joint_type = np.empty(nb, dtype=np.int64)
    joint_type[0] = JointType.FREE if floating_base else JointType.FIXED_TO_WORLD
    axes = np.zeros((nb, 3))
    X = np.tile(np.eye(4), (nb, 1, 1))
    for i in range(nb):
        if i > 0:
            prismatic = rng.uniform() < prismatic_fraction
            joint_type[i] = JointType.PRISMATIC if prismatic else JointType.REVOLUTE
            axis = rng.normal(size=3)
            axes[i] = axis / np.linalg.norm(axis)
        if i > 0 or not floating_base:
            X[i, :3, :3] = _random_rotation(rng)
            X[i, :3, 3] = rng.uniform(-0.3, 0.3, size=3)
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    body_names = tuple(f"link{i}" for i in range(nb))
    joint_names = tuple(f"joint{i}" for i in range(1, nb))
    nj = nb - 1
    frames = {
        name: Frame(name=name, body=i, X_body_frame=np.eye(4)) for i, name in enumerate(body_names)
    }
    for i in range(1, nb):  # an offset frame per body, like a tool or sole frame
        X_body_frame = np.eye(4)
        X_body_frame[:3, :3] = _random_rotation(rng)
        X_body_frame[:3, 3] = rng.uniform(-0.2, 0.2, size=3)
        frames[f"tip{i}"] = Frame(name=f"tip{i}", body=i, X_body_frame=X_body_frame)
    return RobotModel(
        name=f"random_tree_{nb}",
        body_names=body_names,
        parent=parent,
        joint_type=joint_type,
        joint_axis=axes,
        X_parent_joint=X,
        mass=rng.uniform(0.5, 3.0, size=nb),
        com=rng.uniform(-0.1, 0.1, size=(nb, 3)),
        inertia_com=np.array([_random_inertia(rng) for _ in range(nb)]),
        q_index=q_index,
        v_index=v_index,
        nq=nq,
        nv=nv,
        joint_names=joint_names,
        limits=JointLimits(
            lower=np.full(nj, -np.inf),
            upper=np.full(nj, np.inf),
            velocity=np.full(nj, np.inf),
            effort=np.full(nj, np.inf),
        ),
        frames=frames,
        gravity=np.array(gravity, dtype=float),
    )


def free_objects() -> tuple[FreeObject, ...]:
    """A 10 kg box, a box of distinct principal moments with its centre of mass off its
    origin and a turned inertia, and a ball."""
    box = Shape(ShapeKind.BOX, [0.4, 0.3, 0.2])
    R = _random_rotation(np.random.default_rng(7))
    return (
        FreeObject("crate", box, 10.0, box.mass_properties(mass=10.0).inertia, position=[0.6, 0.0, 0.25]),
        FreeObject("odd_box", box, 2.5, R @ np.diag([0.03, 0.05, 0.07]) @ R.T, com=[0.05, -0.02, 0.01]),
        FreeObject("ball", Shape(ShapeKind.SPHERE, [0.11]), 0.43, np.eye(3) * 0.4 * 0.43 * 0.11**2),
    )


def add_free_objects(pin_model: pin.Model, model: RobotModel, first_object: int) -> None:
    """Our bodies first_object .. nb - 1 (free objects) as free-flyer joints under
    Pinocchio's universe, each with a frame of its name at its origin."""
    for body in range(first_object, model.nb):
        name = model.body_names[body]
        jid = pin_model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), name)
        pin_model.appendBodyToJoint(jid, _inertia(model, body), pin.SE3.Identity())
        pin_model.addFrame(pin.Frame(name, jid, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))


def _se3(X: np.ndarray) -> pin.SE3:
    return pin.SE3(np.array(X[:3, :3]), np.array(X[:3, 3]))


def pinocchio_model_from_robot_model(model: RobotModel) -> pin.Model:
    """The same tree in Pinocchio, built joint by joint (no URDF involved)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    # where each of our bodies lives in Pinocchio: (joint id, X_joint_body)
    attach: list[tuple[int, np.ndarray]] = []
    names = iter(model.joint_names)
    for i in range(model.nb):
        jt = int(model.joint_type[i])
        k = int(model.parent[i])
        parent_joint, X_pj_pb = (0, np.eye(4)) if k < 0 else attach[k]
        placement = X_pj_pb @ model.X_parent_joint[i]
        if jt == JointType.FIXED_TO_WORLD:
            attach.append((0, placement))
            pm.appendBodyToJoint(0, _inertia(model, i), _se3(placement))
            continue
        if jt == JointType.FREE:  # body 0's is the URDF loader's "root_joint"; other roots by body name
            joint, name = pin.JointModelFreeFlyer(), "root_joint" if i == 0 else model.body_names[i]
        elif jt == JointType.REVOLUTE:
            joint, name = pin.JointModelRevoluteUnaligned(np.array(model.joint_axis[i])), next(names)
        else:
            joint, name = pin.JointModelPrismaticUnaligned(np.array(model.joint_axis[i])), next(names)
        jid = pm.addJoint(parent_joint, joint, _se3(placement), name)
        pm.appendBodyToJoint(jid, _inertia(model, i), pin.SE3.Identity())
        attach.append((jid, np.eye(4)))
    for name, frame in model.frames.items():
        jid, X_joint_body = attach[frame.body]
        pm.addFrame(pin.Frame(name, jid, 0, _se3(X_joint_body @ frame.X_body_frame), pin.FrameType.OP_FRAME))
    return pm


def _inertia(model: RobotModel, i: int) -> pin.Inertia:
    return pin.Inertia(float(model.mass[i]), np.array(model.com[i]), np.array(model.inertia_com[i]))


class PinocchioMap:
    """Converts q, v between our layout and a Pinocchio model's (joints matched by name).

    A free root other than body 0 (a free object of a world) is the Pinocchio free-flyer
    joint named after its body; body 0's free base is Pinocchio's first joint."""

    def __init__(self, model: RobotModel, pin_model: pin.Model) -> None:
        self.model = model
        self.pin_model = pin_model
        self.perm = np.zeros(model.nv, dtype=int)  # ours[k] = pin[perm[k]]
        self.q_slots: list[tuple[int, int, int]] = []  # (our q index, pin idx_q, pin nq)
        for body in model.free_bodies:
            joint = pin_model.joints[1 if body == 0 else pin_model.getJointId(model.body_names[body])]
            assert joint.nv == 6, model.body_names[body]
            vi = int(model.v_index[body])
            self.perm[vi : vi + 6] = joint.idx_v + np.arange(6)
            self.q_slots.append((int(model.q_index[body]), joint.idx_q, 7))
        for j, name in enumerate(model.joint_names):
            jid = pin_model.getJointId(name)
            assert jid < pin_model.njoints, f"joint {name} missing in Pinocchio model"
            joint = pin_model.joints[jid]
            assert joint.nv == 1, name
            self.perm[model.joint_v_index[j]] = joint.idx_v
            self.q_slots.append((int(model.joint_q_index[j]), joint.idx_q, joint.nq))

    def q(self, q: np.ndarray) -> np.ndarray:
        qp = pin.neutral(self.pin_model)
        for ours, idx, nq in self.q_slots:
            if nq == 1:
                qp[idx] = q[ours]
            elif nq == 7:  # free flyer: position, quaternion (x, y, z, w) as ours
                qp[idx : idx + 7] = q[ours : ours + 7]
            else:  # continuous joint: (cos, sin)
                qp[idx : idx + 2] = np.cos(q[ours]), np.sin(q[ours])
        return qp

    def v(self, v: np.ndarray) -> np.ndarray:
        vp = np.zeros(self.pin_model.nv)
        vp[self.perm] = v
        return vp

    def v_ours(self, vp: np.ndarray) -> np.ndarray:
        return np.asarray(vp)[self.perm]

    def matrix_ours(self, Mp: np.ndarray) -> np.ndarray:
        """A (nv, nv) joint-space matrix of Pinocchio in our coordinate order."""
        return np.asarray(Mp)[np.ix_(self.perm, self.perm)]

    def columns_ours(self, Jp: np.ndarray) -> np.ndarray:
        return np.asarray(Jp)[:, self.perm]


def random_state(
    model: RobotModel, rng: np.random.Generator, joint_range: float = np.pi
) -> tuple[np.ndarray, np.ndarray]:
    """A random (q, v): every free body within 1 m of the origin with a random unit
    quaternion, joints uniform in [-joint_range, joint_range] (limits ignored on purpose),
    v ~ N(0, 1)."""
    q = rng.uniform(-joint_range, joint_range, size=model.nq)
    for body in model.free_bodies:
        first = int(model.q_index[body])
        q[first : first + 3] = rng.uniform(-1.0, 1.0, size=3)
        quat = rng.normal(size=4)
        q[first + 3 : first + 7] = quat / np.linalg.norm(quat)
    return q, rng.normal(size=model.nv)


def assert_relative_close(actual: np.ndarray, expected: np.ndarray, rel: float = 1e-9, what: str = "") -> None:
    """max |actual - expected| <= rel * max(1, max |expected|)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    assert err <= rel * scale, f"{what}: max error {err:.3e} > {rel:.1e} * {scale:.3e}"
