"""Range-of-motion YAML: loading, units, and one clear error per mistake."""

import numpy as np
import pytest

from humanoid_sim.limits.range_config import default_range_of_motion_path, load_range_of_motion
from humanoid_sim.limits.range_of_motion_provider import RangeOfMotionProvider
from humanoid_sim.model import load_urdf


def test_shoulder_yaml_loads_in_radians(make_shoulder_yaml):
    cfg = load_range_of_motion(make_shoulder_yaml())
    (g,) = cfg.ball_joints
    assert g.joints == ("shoulder_pitch", "shoulder_roll", "shoulder_yaw")
    assert g.boundary.theta[0] == pytest.approx(np.radians(150))
    assert g.boundary.twist_upper[4] == pytest.approx(np.radians(50))
    assert g.boundary.centre_twist == pytest.approx((np.radians(-60), np.radians(60)))
    np.testing.assert_allclose(g.azimuth_axis_2, [0, -1, 0], atol=1e-15)
    assert g.law.hard


def test_soft_law_is_read(make_shoulder_yaml):
    cfg = load_range_of_motion(make_shoulder_yaml("{type: soft, stiffness: 300, damping: 4}"))
    law = cfg.ball_joints[0].law
    assert (law.hard, law.stiffness, law.damping) == (False, 300.0, 4.0)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda y: y.split("      - {phi_deg: 90")[0] + "\n", "at least 3 control points"),
        (lambda y: y.replace("phi_deg: 90,  theta_deg: 120", "phi_deg: 270, theta_deg: 120"), "crosses itself"),
        (lambda y: y.replace("twist_deg: [-50, 50]}", "twist_deg: [50, -50]}", 1), "twist min .* > twist max"),
        (lambda y: y.replace("centre_twist_deg: [-60, 60]", "centre_twist_deg: [60, -60]"), "centre twist min"),
        (lambda y: y.replace("limit: {type: hard}", "limit: {type: soft}"), "stiffness > 0"),
        (lambda y: y.replace("limit: {type: hard}", "limit: {type: springy}"), "'hard' or 'soft'"),
        (lambda y: y.replace("    twist_axis: [0, 0, -1]\n", ""), "missing key 'twist_axis'"),
        (lambda y: y.replace("[shoulder_pitch, shoulder_roll, shoulder_yaw]", "[a, b]"), "exactly 3 joint names"),
    ],
)
def test_invalid_config_raises_one_clear_error(make_shoulder_yaml, edit, message):
    with pytest.raises(ValueError, match=message) as err:
        load_range_of_motion(edit(make_shoulder_yaml()))
    assert "shoulder" in str(err.value) or "limit" in str(err.value)


def test_unknown_joint_lists_valid_names(make_shoulder_yaml, make_shoulder_urdf):
    model = load_urdf(make_shoulder_urdf())
    cfg = load_range_of_motion(make_shoulder_yaml().replace("shoulder_roll,", "shoulder_rol,"))
    with pytest.raises(ValueError, match="unknown joint 'shoulder_rol'; valid joints: shoulder_pitch, shoulder_roll, shoulder_yaw"):
        RangeOfMotionProvider(model, cfg)


def test_joints_out_of_chain_order_are_rejected(make_shoulder_yaml, make_shoulder_urdf):
    model = load_urdf(make_shoulder_urdf())
    cfg = load_range_of_motion(
        make_shoulder_yaml().replace("[shoulder_pitch, shoulder_roll, shoulder_yaw]", "[shoulder_roll, shoulder_pitch, shoulder_yaw]")
    )
    with pytest.raises(ValueError, match="not the child of"):
        RangeOfMotionProvider(model, cfg)


def test_bundled_config_fits_the_bundled_humanoid():
    cfg = load_range_of_motion(default_range_of_motion_path())
    model = load_urdf(str(default_range_of_motion_path().parents[1] / "urdf" / "humanoid.urdf"))
    provider = RangeOfMotionProvider(model, cfg)
    assert {g.name for g in cfg.ball_joints} == {"l_shoulder", "r_shoulder", "l_hip", "r_hip"}
    # the swing-twist groups replace the per-axis stops of their joints
    assert not any("shoulder" in j or "hip" in j for j in provider.stop_joints)
    assert "l_knee" in provider.stop_joints
    by_name = {k.group.name: k for k in provider.groups}
    # shoulder pitch +1.2 rad swings the hanging arm backward (outside), -1.2 forward (inside)
    for side in ("l_shoulder", "r_shoulder"):
        kin = by_name[side]
        back = kin.state(np.array([1.2, 0.0, 0.0])).angles.swing_point
        front = kin.state(np.array([-1.2, 0.0, 0.0])).angles.swing_point
        assert not kin.group.boundary.contains(back) and kin.group.boundary.contains(front)
    # roll that swings the right arm outward is allowed, the same roll on the left arm goes into the torso
    out_r = by_name["r_shoulder"].state(np.array([0.0, -0.6, 0.0])).angles.swing_point
    in_l = by_name["l_shoulder"].state(np.array([0.0, -0.6, 0.0])).angles.swing_point
    assert by_name["r_shoulder"].group.boundary.contains(out_r)
    assert not by_name["l_shoulder"].group.boundary.contains(in_l)


def test_bundled_initial_poses_start_inside_the_ranges():
    from humanoid_sim.contact.environment import Environment
    from humanoid_sim.simulator.initial_pose import load_initial_poses, pose_configuration

    model = load_urdf(str(default_range_of_motion_path().parents[1] / "urdf" / "humanoid.urdf"))
    provider = RangeOfMotionProvider(model, load_range_of_motion(default_range_of_motion_path()))
    poses = load_initial_poses(None, model.name)
    assert poses
    for name, pose in poses.items():
        q = pose_configuration(model, pose, Environment())
        rows = provider.evaluate(q, np.zeros(model.nv))
        group_rows = [n for n in rows.names if n.split()[0] in {g.name for g in provider.config.ball_joints}]
        assert group_rows == [], f"pose {name!r} starts against {group_rows}"
        assert np.all(rows.violation <= 1e-12), f"pose {name!r} starts beyond a stop: {rows.names}"
