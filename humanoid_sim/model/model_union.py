"""Several models as one: names under a prefix, and trees joined into one RobotModel.

``prefixed_model(model, "r2/")`` is the same model with every link (body), joint, frame and
collision shape's link name written ``r2/<name>``. ``joined_models(name, models)`` is one
model holding the trees of ``models`` one after the other: body i of the k-th model is
body ``offset_k + i`` (offset_k: the bodies of the models before it), its coordinates
follow in the same order (each tree's q and v stay contiguous), its joints follow the joints
of the models before it in ``joint_names``. Frames and units are unchanged (every body
frame is its own model's); the gravity is the first model's unless given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from humanoid_sim.model.robot_model import CollisionShape, Frame, JointDynamics, JointLimits, RobotModel, coordinate_indices

__all__ = ["joined_models", "prefixed_model"]


def prefixed_model(model: RobotModel, prefix: str) -> RobotModel:
    """``model`` with ``prefix`` before every body, joint and frame name and every collision
    shape's link name (the arrays are shared: models are immutable)."""
    if not prefix:
        return model
    return dataclasses.replace(
        model,
        body_names=tuple(prefix + n for n in model.body_names),
        joint_names=tuple(prefix + n for n in model.joint_names),
        frames={prefix + n: Frame(prefix + n, f.body, f.X_body_frame) for n, f in model.frames.items()},
        collision_shapes=tuple(dataclasses.replace(s, link_name=prefix + s.link_name) for s in model.collision_shapes),
    )


def joined_models(name: str, models: Sequence[RobotModel], gravity: np.ndarray | None = None) -> RobotModel:
    """One model of the trees of ``models`` in order (module docstring). Raises ValueError
    naming a body, joint or frame name that two of the models share, or for no models."""
    if not models:
        raise ValueError("joined_models: no models to join")
    for kind, names in (
        ("body", [n for m in models for n in m.body_names]),
        ("joint", [n for m in models for n in m.joint_names]),
        ("frame", [n for m in models for n in m.frames]),
    ):
        seen: set[str] = set()
        twice = sorted({n for n in names if n in seen or seen.add(n)})
        if twice:
            raise ValueError(f"joined_models: {kind} names {twice} occur in two models; names must be unique")
    offsets = np.cumsum([0] + [m.nb for m in models])
    parent = np.concatenate([np.where(np.asarray(m.parent) < 0, -1, np.asarray(m.parent) + o)
                             for m, o in zip(models, offsets)]).astype(np.int64)  # fmt: skip
    joint_type = np.concatenate([np.asarray(m.joint_type) for m in models]).astype(np.int64)
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    frames: dict[str, Frame] = {}
    shapes: list[CollisionShape] = []
    for m, o in zip(models, offsets):
        frames.update({n: Frame(f.name, f.body + int(o), f.X_body_frame) for n, f in m.frames.items()})
        shapes += [dataclasses.replace(s, body=s.body + int(o)) for s in m.collision_shapes]

    def cat(get) -> np.ndarray:
        return np.concatenate([np.asarray(get(m)) for m in models])

    return RobotModel(
        name=name,
        body_names=tuple(n for m in models for n in m.body_names),
        parent=parent,
        joint_type=joint_type,
        joint_axis=cat(lambda m: m.joint_axis),
        X_parent_joint=cat(lambda m: m.X_parent_joint),
        mass=cat(lambda m: m.mass),
        com=cat(lambda m: m.com),
        inertia_com=cat(lambda m: m.inertia_com),
        q_index=q_index,
        v_index=v_index,
        nq=nq,
        nv=nv,
        joint_names=tuple(n for m in models for n in m.joint_names),
        limits=JointLimits(*(cat(lambda m, f=f.name: getattr(m.limits, f)) for f in dataclasses.fields(JointLimits))),
        frames=frames,
        collision_shapes=tuple(shapes),
        gravity=np.array(models[0].gravity if gravity is None else gravity, dtype=float),
        joint_dynamics=JointDynamics(cat(lambda m: m.joint_dynamics.damping), cat(lambda m: m.joint_dynamics.friction)),
    )
