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
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)}
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
