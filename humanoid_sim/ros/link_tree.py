"""The URDF link tree as tf sees it: which transforms are static, which move, and their values.

REP 105 / robot_state_publisher layout: every URDF joint gives one transform, parent link ->
child link. Fixed joints give static transforms (published once on /tf_static); moving
joints give transforms that depend on one coordinate of q (published on /tf). The floating
base is ``odom`` -> root link, from q[0:7]; a base welded to the world is a static
``odom`` -> root link.

The values come from the RobotModel (so tf shows exactly what the simulator integrates);
the URDF text is read only for what the model does not keep: which frames are links (the
model's frames include joint frames) and each joint's parent link.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from humanoid_sim.dynamics.spatial import rot_to_quat_nb
from humanoid_sim.model.robot_model import JointType, RobotModel
from humanoid_sim.ros.conversions import rotation_from_quaternion
from humanoid_sim.world.assembly import RobotTree

WORLD_LINK = "world"


@dataclass(frozen=True)
class LinkTree:
    """Transforms of a robot's link tree for tf.

    odom_frame: the world frame's tf name (REP 105 ``odom``).
    root_link: the model's root link (the base link).
    floating: True when odom -> root_link moves (FREE base).
    static: (parent, child, X_parent_child (4, 4)) per fixed joint, and odom -> root when welded.
    moving_parent / moving_child: link names per moving joint, in model joint order (nj,).
    X_parent_joint: pose of each moving joint frame at zero position in its parent link
        frame, shape (nj, 4, 4).
    axis: joint axes in the joint frame, shape (nj, 3); revolute: (nj,) bool mask ``revolute``.
    q_joint: index in q of each moving joint's coordinate, shape (nj,).
    """

    odom_frame: str
    root_link: str
    floating: bool
    static: tuple[tuple[str, str, np.ndarray], ...]
    moving_parent: tuple[str, ...]
    moving_child: tuple[str, ...]
    X_parent_joint: np.ndarray
    axis: np.ndarray
    revolute: np.ndarray
    q_joint: np.ndarray

    @property
    def links(self) -> tuple[str, ...]:
        """Every link that appears in tf (children of some transform), root first."""
        children = [self.root_link, *self.moving_child, *(child for _, child, _ in self.static)]
        return tuple(dict.fromkeys(c for c in children if c != self.odom_frame))

    def moving_transforms(self, q: np.ndarray) -> np.ndarray:
        """X_parent_child of every moving joint at configuration q (nq,), shape (nj, 4, 4).

        Revolute: rotation by q about the axis (Rodrigues); prismatic: translation q * axis.
        """
        theta = np.asarray(q, dtype=float)[self.q_joint]
        a = self.axis
        n = len(theta)
        motion = np.zeros((n, 4, 4))
        motion[:, 3, 3] = 1.0
        # R = I + sin(t) K + (1 - cos(t)) K^2, K the cross-product matrix of the axis.
        s = np.where(self.revolute, np.sin(theta), 0.0)
        c1 = np.where(self.revolute, 1.0 - np.cos(theta), 0.0)
        K = np.zeros((n, 3, 3))
        K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
        K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
        motion[:, :3, :3] = np.eye(3) + s[:, None, None] * K + c1[:, None, None] * (K @ K)
        motion[:, :3, 3] = np.where(self.revolute, 0.0, theta)[:, None] * a
        return self.X_parent_joint @ motion

    def pose_rows(self, q: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Every tf transform that moves, as rows (x, y, z, qx, qy, qz, qw), into ``out``.

        Rows: odom -> root link first when the base floats (q[0:7], quaternion normalised), then one per
        moving joint in model order (the values of ``moving_transforms``, quaternion w >= 0).
        out: shape (nj + floating, 7), overwritten and returned. One compiled call, no
        allocation: the node's tf publish at 200 Hz or more.
        """
        _pose_rows_nb(np.asarray(q, dtype=float), self.floating, self.X_parent_joint, self.axis, self.revolute, self.q_joint, out)
        return out

    def prefixed(self, prefix: str) -> LinkTree:
        """The same tree with ``prefix`` before every link name (``odom_frame`` kept): a later
        robot of a world, whose links are ``<robot>/<link>`` (world/assembly.py). Its
        ``pose_rows`` and ``moving_transforms`` take that robot's own q (``q[tree.q]``)."""
        if not prefix:
            return self

        def name(link: str) -> str:
            return link if link == self.odom_frame else prefix + link

        return dataclasses.replace(
            self, root_link=name(self.root_link), static=tuple((name(a), name(b), X) for a, b, X in self.static),
            moving_parent=tuple(name(n) for n in self.moving_parent), moving_child=tuple(name(n) for n in self.moving_child),
        )  # fmt: skip

    def base_transform(self, q: np.ndarray) -> np.ndarray:
        """X_odom_root (4, 4) of a floating base from q[0:7] (position, quaternion x y z w)."""
        X = np.eye(4)
        X[:3, 3] = q[0:3]
        X[:3, :3] = rotation_from_quaternion(q[3:7])
        return X


def urdf_link_joint_names(urdf_xml: str) -> tuple[list[str], dict[str, tuple[str, str, str]]]:
    """Link names, and per joint (type, parent link, child link), of a URDF string."""
    root = ET.fromstring(urdf_xml)
    links = [el.get("name", "") for el in root.findall("link")]
    joints: dict[str, tuple[str, str, str]] = {}
    for el in root.findall("joint"):
        parent, child = el.find("parent"), el.find("child")
        joints[el.get("name", "")] = (
            el.get("type", ""),
            parent.get("link", "") if parent is not None else "",
            child.get("link", "") if child is not None else "",
        )
    return links, joints


def link_tree(model: RobotModel, urdf_xml: str, odom_frame: str = "odom") -> LinkTree:
    """The LinkTree of ``model``, loaded from ``urdf_xml`` (the same URDF text).

    Raises ValueError if the URDF does not match the model (a moving joint of the model
    missing from the URDF).
    """
    links, joints = urdf_link_joint_names(urdf_xml)
    root_link = model.body_names[0]
    floating = int(model.joint_type[0]) == JointType.FREE

    def X_body(link: str) -> tuple[int, np.ndarray]:
        frame = model.frame(link)
        return frame.body, np.asarray(frame.X_body_frame)

    nj = model.nj
    parents, children = [], []
    X_parent_joint = np.zeros((nj, 4, 4))
    for j, joint_name in enumerate(model.joint_names):
        if joint_name not in joints:
            raise ValueError(f"joint {joint_name!r} of model {model.name!r} is not in the URDF text")
        _, parent_link, child_link = joints[joint_name]
        body = j + 1  # body 0 is the root; every other body has one moving joint, in order
        parent_body, X_body_parent = X_body(parent_link)
        if parent_body != int(model.parent[body]):
            raise ValueError(f"joint {joint_name!r}: parent link {parent_link!r} is not on the model's parent body")
        # X_parent_joint[body] is in the parent *body* frame; tf wants the parent *link* frame.
        X_parent_joint[j] = np.linalg.inv(X_body_parent) @ model.X_parent_joint[body]
        parents.append(parent_link)
        children.append(child_link)

    static: list[tuple[str, str, np.ndarray]] = []
    if not floating:
        static.append((odom_frame, root_link, np.asarray(model.X_parent_joint[0], dtype=float).copy()))
    for joint_name, (jtype, parent_link, child_link) in joints.items():
        if jtype != "fixed" or WORLD_LINK in (parent_link, child_link) or parent_link not in links:
            continue
        parent_body, X_body_parent = X_body(parent_link)
        child_body, X_body_child = X_body(child_link)
        if parent_body != child_body:
            continue  # a fixed joint the loader did not merge (e.g. a mimic policy): not static
        static.append((parent_link, child_link, np.linalg.inv(X_body_parent) @ X_body_child))

    revolute = np.array([int(model.joint_type[j + 1]) == JointType.REVOLUTE for j in range(nj)], dtype=bool)
    q_joint = np.array([int(model.q_index[j + 1]) for j in range(nj)], dtype=np.int64)
    axis = np.array([model.joint_axis[j + 1] for j in range(nj)], dtype=float).reshape(nj, 3)
    return LinkTree(
        odom_frame=odom_frame,
        root_link=root_link,
        floating=floating,
        static=tuple(static),
        moving_parent=tuple(parents),
        moving_child=tuple(children),
        X_parent_joint=X_parent_joint,
        axis=axis,
        revolute=revolute,
        q_joint=q_joint,
    )


def later_link_trees(
    robots: Sequence[RobotTree], urdfs: Sequence[str], odom_frame: str = "odom"
) -> tuple[tuple[LinkTree, slice], ...]:
    """Per later robot of a world (``WorldModel.robots[1:]``) with its URDF text: its
    LinkTree with its links prefixed (``LinkTree.prefixed``; its base a child of
    ``odom_frame``) and its coordinates in the world's q (``RobotTree.q``), whose slice
    ``pose_rows`` takes. Raises ValueError as ``link_tree``."""
    return tuple((link_tree(t.model, xml, odom_frame).prefixed(t.prefix), t.q) for t, xml in zip(robots, urdfs))


@njit(cache=True)
def _pose_rows_nb(q, floating, X_parent_joint, axis, revolute, q_joint, out):
    row = 0
    if floating:
        # odom -> root: q[0:7], the quaternion normalised with w >= 0 like every other row
        norm = np.sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6])
        sign = -1.0 if q[6] < 0.0 else 1.0
        for i in range(3):
            out[0, i] = q[i]
        for i in range(3, 7):
            out[0, i] = sign * q[i] / norm
        row = 1
    R = np.empty((3, 3))
    for j in range(len(q_joint)):
        theta = q[q_joint[j]]
        a = axis[j]
        X = X_parent_joint[j]
        if revolute[j]:
            # Rodrigues: R_motion = I + sin(t) K + (1 - cos(t)) K^2, K = [a]x; R = R_pj R_motion
            s, c1 = np.sin(theta), 1.0 - np.cos(theta)
            K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
            M = np.eye(3) + s * K + c1 * (K @ K)
            for r in range(3):
                for col in range(3):
                    R[r, col] = X[r, 0] * M[0, col] + X[r, 1] * M[1, col] + X[r, 2] * M[2, col]
                out[row, r] = X[r, 3]
        else:
            # prismatic: translation theta * axis in the joint frame
            for r in range(3):
                for col in range(3):
                    R[r, col] = X[r, col]
                out[row, r] = X[r, 3] + theta * (X[r, 0] * a[0] + X[r, 1] * a[1] + X[r, 2] * a[2])
        rot_to_quat_nb(R, out[row, 3:7])
        row += 1
