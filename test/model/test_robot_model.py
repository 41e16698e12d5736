"""RobotModel validates its structure where it is built and is read-only afterwards."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from humanoid_sim.model import JointType, load_urdf
from humanoid_sim.model.urdf_builder import chain_urdf


@pytest.fixture
def chain():
    return load_urdf(chain_urdf(3, fixed_base=False))


def rebuilt(model, **changes):
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model) if f.init}
    fields = {k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in fields.items()}
    fields.update(changes)
    return type(model)(**fields)


def test_a_consistent_copy_is_accepted(chain) -> None:
    copy = rebuilt(chain)
    assert copy.nv == chain.nv == 9 and copy.nj == 3


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: {"parent": np.array([-1, 0, 2, 2])}, "parent must be"),
        (lambda m: {"mass": np.array([1.0, -1.0, 1.0, 1.0])}, "masses must be finite"),
        (lambda m: {"com": np.zeros((3, 3))}, r"com has shape \(3, 3\), expected \(4, 3\)"),
        (lambda m: {"nv": 8}, "nq, nv = 10, 8"),
        (lambda m: {"joint_names": ("joint1", "joint2")}, "2 joint_names for 3 moving joints"),
        (lambda m: {"joint_type": np.array([JointType.REVOLUTE] * 4)}, "must be FREE or FIXED_TO_WORLD"),
        (
            lambda m: {"joint_type": np.array([JointType.FREE, JointType.FREE, 1, 1])},
            "need a REVOLUTE or PRISMATIC",
        ),
        (lambda m: {"body_names": ()}, "no bodies"),
    ],
)
def test_inconsistent_models_are_refused(chain, change, message) -> None:
    with pytest.raises(ValueError, match=message):
        rebuilt(chain, **change(chain))


def test_nested_arrays_are_read_only(chain) -> None:
    with pytest.raises(ValueError):
        chain.limits.lower[0] = 0.0
    with pytest.raises(ValueError):
        chain.frame("link1").X_body_frame[0, 3] = 1.0
    with pytest.raises(KeyError, match="valid frames: base, joint1"):
        chain.frame("nope")


def _with_free_objects(model, count: int):
    """``model`` with ``count`` one-body FREE trees appended (as a world's free objects)."""
    from humanoid_sim.model.robot_model import coordinate_indices

    nb = model.nb + count
    joint_type = np.concatenate([model.joint_type, np.full(count, int(JointType.FREE))])
    q_index, v_index, nq, nv = coordinate_indices(joint_type)
    return rebuilt(
        model,
        body_names=model.body_names + tuple(f"object{k}" for k in range(count)),
        parent=np.concatenate([model.parent, np.full(count, -1)]),
        joint_type=joint_type,
        joint_axis=np.zeros((nb, 3)),
        X_parent_joint=np.concatenate([model.X_parent_joint, np.tile(np.eye(4), (count, 1, 1))]),
        mass=np.concatenate([model.mass, np.ones(count)]),
        com=np.zeros((nb, 3)),
        inertia_com=np.concatenate([model.inertia_com, np.tile(np.eye(3), (count, 1, 1))]),
        q_index=q_index,
        v_index=v_index,
        nq=nq,
        nv=nv,
    )


def test_free_trees_after_the_robot_are_accepted_and_told_apart(chain) -> None:
    model = _with_free_objects(chain, 2)
    assert (model.nb, model.nq, model.nv, model.nj) == (6, 24, 21, 3)
    np.testing.assert_array_equal(model.tree_root, [0, 0, 0, 0, 4, 5])
    np.testing.assert_array_equal(model.roots, [0, 4, 5])
    np.testing.assert_array_equal(model.free_bodies, [0, 4, 5])
    np.testing.assert_array_equal(model.joint_body, [1, 2, 3])
    np.testing.assert_array_equal(model.joint_q_index, [7, 8, 9])
    np.testing.assert_array_equal(model.joint_v_index, [6, 7, 8])
    assert model.joint_q_slice == slice(7, 10) and model.joint_v_slice == slice(6, 9)
    assert model.tree_mass(0) == pytest.approx(chain.total_mass)
    assert model.tree_mass(4) == 1.0 and model.total_mass == pytest.approx(chain.total_mass + 2.0)
    with pytest.raises(ValueError):
        model.tree_root[0] = 1  # read-only like every array of the model


def test_a_robot_alone_has_its_joints_last(chain) -> None:
    assert chain.joint_v_slice == slice(chain.nv - chain.nj, chain.nv)
    assert chain.joint_q_slice == slice(chain.nq - chain.nj, chain.nq)
    np.testing.assert_array_equal(chain.tree_root, 0)


@pytest.mark.parametrize(
    "change, message",
    [
        # a free body must be a root; a root needs FREE or FIXED_TO_WORLD
        (lambda m: {"parent": np.array([-1, 0, 1, 2, 3, -1])}, "need a REVOLUTE or PRISMATIC"),
        (lambda m: {"joint_type": np.array([0, 1, 1, 1, 0, 1])}, "root bodies .*'object1'.* must be FREE"),
        (lambda m: {"q_index": np.array(m.q_index)[::-1].copy()}, "q_index, v_index must follow body order"),
    ],
)
def test_inconsistent_several_tree_models_are_refused(chain, change, message) -> None:
    model = _with_free_objects(chain, 2)
    with pytest.raises(ValueError, match=message):
        rebuilt(model, **change(model))
