"""Flat, contiguous array form of a RobotModel for the numba kernels.

``kinematic_tree(model)`` is built once per model (memoised with a
WeakKeyDictionary-like cache keyed on the model's identity) and passed to every
kernel in ``humanoid_sim.dynamics.kernels``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from humanoid_sim.dynamics.mass_factor import dof_parents
from humanoid_sim.dynamics.per_model_cache import PerModelCache
from humanoid_sim.model.robot_model import JointType, RobotModel

FREE = int(JointType.FREE)
REVOLUTE = int(JointType.REVOLUTE)
PRISMATIC = int(JointType.PRISMATIC)
FIXED_TO_WORLD = int(JointType.FIXED_TO_WORLD)

# Velocity DOF per joint type, indexed by the JointType value.
DOF_OF_JOINT_TYPE = np.array([6, 1, 1, 0], dtype=np.int64)


class KinematicTree(NamedTuple):
    """Contiguous arrays describing the tree (nb bodies, nv dofs); see RobotModel.

    parent: (nb,) int64, -1 for a root (one per tree); parent[i] < i.
    joint_type: (nb,) int64 JointType values.
    joint_axis: (nb, 3) unit joint axis in the body (= joint) frame.
    R_parent_joint, p_parent_joint: (nb, 3, 3), (nb, 3) the pose X_parent_joint of
        each joint frame in its parent body frame at zero joint position [m].
    mass: (nb,) [kg]; com: (nb, 3) in the body frame [m];
    inertia_com: (nb, 3, 3) about the COM, body axes [kg m^2].
    q_index, v_index: (nb,) first coordinate of each joint in q and v.
    ndof: (nb,) velocity DOF of each joint (6, 1 or 0).
    dof_body: (nv,) the body moved by each velocity coordinate.
    dof_parent: (nv,) each velocity coordinate's parent coordinate, -1 at a root
        (dynamics/mass_factor.py: the pattern of M and of its factor).
    gravity: (3,) gravity acceleration in the world frame [m/s^2].
    nb, nq, nv: sizes.
    The arrays are private copies of the model's; treat them as read-only.
    """

    parent: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray
    R_parent_joint: np.ndarray
    p_parent_joint: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia_com: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray
    ndof: np.ndarray
    dof_body: np.ndarray
    dof_parent: np.ndarray
    gravity: np.ndarray
    nb: int
    nq: int
    nv: int


# RobotModel is a frozen dataclass holding arrays, hence unhashable: key on id()
# and drop the entry when the model is garbage collected.


def _build(model: RobotModel) -> KinematicTree:
    nb = model.nb
    parent = np.array(model.parent, dtype=np.int64)
    joint_type = np.array(model.joint_type, dtype=np.int64)
    for i in range(nb):
        if parent[i] >= i:
            raise ValueError(
                f"body {model.body_names[i]!r} (index {i}) has parent {parent[i]}; "
                "bodies must be in depth-first order with parent[i] < i"
            )
        if joint_type[i] not in (FREE, REVOLUTE, PRISMATIC, FIXED_TO_WORLD):
            raise ValueError(
                f"body {model.body_names[i]!r} has unknown joint type {joint_type[i]}; "
                f"valid: {[t.name for t in JointType]}"
            )
        if (parent[i] >= 0) == (joint_type[i] in (FREE, FIXED_TO_WORLD)):
            raise ValueError(
                f"body {model.body_names[i]!r}: {JointType(joint_type[i]).name} joint with parent {parent[i]}; "
                "FREE and FIXED_TO_WORLD are for root bodies (parent -1) only, REVOLUTE and PRISMATIC for the others"
            )
    ndof = DOF_OF_JOINT_TYPE[joint_type]
    v_index = np.array(model.v_index, dtype=np.int64)
    dof_body = np.empty(model.nv, dtype=np.int64)
    for i in range(nb):
        dof_body[v_index[i] : v_index[i] + ndof[i]] = i
    X = np.asarray(model.X_parent_joint, dtype=float)
    arrays = KinematicTree(
        parent=parent,
        joint_type=joint_type,
        joint_axis=np.array(model.joint_axis, dtype=float),
        R_parent_joint=np.array(X[:, :3, :3], order="C"),
        p_parent_joint=np.array(X[:, :3, 3], order="C"),
        mass=np.array(model.mass, dtype=float),
        com=np.array(model.com, dtype=float),
        inertia_com=np.array(model.inertia_com, dtype=float),
        q_index=np.array(model.q_index, dtype=np.int64),
        v_index=v_index,
        ndof=np.array(ndof, dtype=np.int64),
        dof_body=dof_body,
        dof_parent=dof_parents(parent, v_index, ndof),
        gravity=np.array(model.gravity, dtype=float),
        nb=int(nb),
        nq=int(model.nq),
        nv=int(model.nv),
    )
    # Left writable on purpose (never written): numba dispatches calls with
    # read-only arrays about 2.5x slower (measured 12 µs vs 5 µs for 26 args).
    return arrays


def kinematic_tree(model: RobotModel) -> KinematicTree:
    """The flat array form of ``model``, built once per model object."""
    return _TREES.get(model)


_TREES: PerModelCache[KinematicTree] = PerModelCache(_build)
