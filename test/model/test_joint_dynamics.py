"""URDF <dynamics> (damping, friction) and <safety_controller k_velocity> reach the RobotModel, validated."""

from __future__ import annotations

import dataclasses
import math
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.model import JointDynamics, JointLimits, UrdfError, load_urdf
from humanoid_sim.model.robot_model import VELOCITY_LIMIT_BAND, default_k_velocity
from humanoid_sim.model.urdf_builder import box_link_xml, chain_urdf

ROOT = Path(__file__).resolve().parents[2]


def joint_xml(name: str, parent: str, child: str, extra: str = "", jtype: str = "revolute") -> str:
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<axis xyz="0 1 0"/>{extra}</joint>'
    )


def two_joint_urdf(extra1: str = "", extra2: str = "") -> str:
    links = "".join(box_link_xml(n, 1.0, (0.1, 0.1, 0.1)) for n in ("base", "a", "b"))
    joints = joint_xml("j1", "base", "a", extra1) + joint_xml("j2", "a", "b", extra2)
    return f'<robot name="r">{links}{joints}</robot>'


def test_damping_and_friction_are_read_per_joint_and_default_to_zero() -> None:
    model = load_urdf(two_joint_urdf('<dynamics damping="0.5" friction="2"/>', '<dynamics friction="0.25"/>'))
    np.testing.assert_array_equal(model.joint_dynamics.damping, [0.5, 0.0])
    np.testing.assert_array_equal(model.joint_dynamics.friction, [2.0, 0.25])
    bare = load_urdf(two_joint_urdf())
    np.testing.assert_array_equal(bare.joint_dynamics.damping, [0.0, 0.0])
    np.testing.assert_array_equal(bare.joint_dynamics.friction, [0.0, 0.0])


def test_chain_builder_writes_dynamics_and_safety_controller() -> None:
    model = load_urdf(chain_urdf(2, damping=0.3, friction=0.7, effort=20.0, velocity=2.0, k_velocity=50.0))
    np.testing.assert_array_equal(model.joint_dynamics.damping, [0.3, 0.3])
    np.testing.assert_array_equal(model.joint_dynamics.friction, [0.7, 0.7])
    np.testing.assert_array_equal(model.limits.effort, [20.0, 20.0])
    np.testing.assert_array_equal(model.limits.velocity, [2.0, 2.0])
    np.testing.assert_array_equal(model.limits.k_velocity, [50.0, 50.0])


def test_k_velocity_from_the_safety_controller_else_the_default_rule() -> None:
    model = load_urdf(
        two_joint_urdf(
            '<limit effort="30" velocity="3"/><safety_controller k_position="20" k_velocity="20"'
            ' soft_lower_limit="-1" soft_upper_limit="1"/>',
            '<limit effort="30" velocity="3"/>',
        )
    )
    assert model.limits.k_velocity[0] == 20.0
    # default: the effort ramps to zero over the last VELOCITY_LIMIT_BAND of the velocity limit
    assert model.limits.k_velocity[1] == pytest.approx(30.0 / (VELOCITY_LIMIT_BAND * 3.0))


def test_default_k_velocity_is_zero_where_the_rule_is_undefined() -> None:
    effort = np.array([10.0, math.inf, 10.0, 10.0, 0.0])
    velocity = np.array([2.0, 2.0, math.inf, 0.0, 0.0])
    np.testing.assert_array_equal(
        default_k_velocity(effort, velocity), [10.0 / (VELOCITY_LIMIT_BAND * 2.0), 0.0, 0.0, 0.0, 0.0]
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        ('<dynamics damping="-0.1"/>', r"joint 'j2': negative <dynamics damping> -0.1"),
        ('<dynamics friction="-1"/>', r"joint 'j2': negative <dynamics friction> -1"),
        ('<dynamics damping="inf"/>', r"joint 'j2' <dynamics damping>: non-finite number"),
        ('<dynamics friction="nan"/>', r"joint 'j2' <dynamics friction>: non-finite number"),
        ('<dynamics damping="x"/>', r"joint 'j2' <dynamics damping>: malformed number"),
        (
            '<safety_controller k_velocity="0"/>',
            r"joint 'j2': <safety_controller k_velocity> 0.0; must be > 0",
        ),
        ('<safety_controller k_velocity="inf"/>', r"joint 'j2' <safety_controller k_velocity>: non-finite"),
    ],
)
def test_bad_joint_dynamics_raise_one_error_naming_the_joint(extra: str, message: str) -> None:
    with pytest.raises(UrdfError, match=message):
        load_urdf(two_joint_urdf("", extra))


def test_fixed_and_welded_mimic_joints_carry_no_dynamics() -> None:
    links = "".join(box_link_xml(n, 1.0, (0.1, 0.1, 0.1)) for n in ("palm", "f1", "f2", "cam"))
    dyn = '<dynamics damping="{}" friction="{}"/>'
    urdf = (
        f'<robot name="g">{links}'
        + joint_xml("j1", "palm", "f1", dyn.format(1, 2))
        + joint_xml("j2", "palm", "f2", '<mimic joint="j1"/>' + dyn.format(3, 4))
        + joint_xml("jc", "palm", "cam", dyn.format(5, 6), jtype="fixed")
        + "</robot>"
    )
    independent = load_urdf(urdf, mimic="independent")
    assert independent.joint_names == ("j1", "j2")
    np.testing.assert_array_equal(independent.joint_dynamics.damping, [1.0, 3.0])
    np.testing.assert_array_equal(independent.joint_dynamics.friction, [2.0, 4.0])
    fixed = load_urdf(urdf, mimic="fixed")
    assert fixed.joint_names == ("j1",)
    np.testing.assert_array_equal(fixed.joint_dynamics.damping, [1.0])
    np.testing.assert_array_equal(fixed.joint_dynamics.friction, [2.0])


def rebuilt(model, **changes):
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model) if f.init}
    fields.update(changes)
    return type(model)(**fields)


def test_a_model_built_in_code_has_no_dynamics_and_default_gains() -> None:
    model = load_urdf(chain_urdf(3, effort=40.0, velocity=4.0))
    limits = model.limits
    bare = rebuilt(
        model,
        joint_dynamics=None,
        limits=JointLimits(*(a.copy() for a in (limits.lower, limits.upper, limits.velocity, limits.effort))),
    )
    np.testing.assert_array_equal(bare.joint_dynamics.damping, np.zeros(3))
    np.testing.assert_array_equal(bare.joint_dynamics.friction, np.zeros(3))
    np.testing.assert_array_equal(bare.limits.k_velocity, np.full(3, 40.0 / (VELOCITY_LIMIT_BAND * 4.0)))
    with pytest.raises(ValueError):
        bare.joint_dynamics.damping[0] = 1.0
    with pytest.raises(ValueError):
        bare.limits.k_velocity[0] = 1.0


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            lambda m: {"joint_dynamics": JointDynamics(np.array([0.0, -1.0, 0.0]), np.zeros(3))},
            r"joint_dynamics.damping must be finite and >= 0; joints: joint2 \(-1.0\)",
        ),
        (
            lambda m: {"joint_dynamics": JointDynamics(np.zeros(3), np.array([0.0, 0.0, np.nan]))},
            r"joint_dynamics.friction must be finite and >= 0; joints: joint3 \(nan\)",
        ),
        (
            lambda m: {"joint_dynamics": JointDynamics(np.zeros(2), np.zeros(2))},
            r"joint_dynamics.damping must have shape \(3,\)",
        ),
        (
            lambda m: {"limits": dataclasses.replace(m.limits, k_velocity=np.array([1.0, np.inf, 1.0]))},
            r"limits.k_velocity must be finite and >= 0; joints: joint2 \(inf\)",
        ),
    ],
)
def test_inconsistent_joint_parameters_are_refused_naming_the_joint(changes, message) -> None:
    model = load_urdf(chain_urdf(3))
    with pytest.raises(ValueError, match=message):
        rebuilt(model, **changes(model))


def test_the_bundled_humanoid_has_no_damping_and_default_gains() -> None:
    model = load_urdf(ROOT / "urdf" / "humanoid.urdf")
    assert not np.any(model.joint_dynamics.damping) and not np.any(model.joint_dynamics.friction)
    np.testing.assert_allclose(
        model.limits.k_velocity, model.limits.effort / (VELOCITY_LIMIT_BAND * model.limits.velocity)
    )


PUBLIC = [
    "talos_data/robots/talos_reduced.urdf",
    "talos_data/robots/talos_full_v2.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "icub_description/robots/icub.urdf",
]


@pytest.mark.parametrize("relative", PUBLIC, ids=[Path(p).stem for p in PUBLIC])
def test_public_robots_keep_the_dynamics_their_urdf_writes(relative: str, robots_dir: Path) -> None:
    """Joint by joint, against the XML read independently (comments, e.g. talos's disabled
    safety controllers, are not elements)."""
    path = robots_dir / relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_urdf(path, mimic="independent", strict_inertia=False)
    written = {j.get("name"): j for j in ET.parse(path).getroot().findall("joint")}
    for i, name in enumerate(model.joint_names):
        dynamics = written[name].find("dynamics")
        expected = [float(dynamics.get(k, 0.0)) if dynamics is not None else 0.0 for k in ("damping", "friction")]
        assert [model.joint_dynamics.damping[i], model.joint_dynamics.friction[i]] == expected, name
        assert written[name].find("safety_controller") is None  # none of these robots enables one
    np.testing.assert_array_equal(
        model.limits.k_velocity, default_k_velocity(model.limits.effort, model.limits.velocity)
    )
