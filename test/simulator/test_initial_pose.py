"""The starting pose: named, the robot's "stand", or the neutral pose resting on the ground."""

import numpy as np
import pytest

from humanoid_sim.contact.detection import ContactDetector
from humanoid_sim.contact.environment import Environment, GroundPlane
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.errors import UnknownNameError
from humanoid_sim.model import load_urdf
from humanoid_sim.model.resource_paths import example_robot_data_share_dirs
from humanoid_sim.model.urdf_builder import free_box_urdf
from humanoid_sim.simulator.initial_pose import InitialPose, pose_configuration, starting_pose

STAND = InitialPose("stand", joints={"a": 0.1})
CROUCH = InitialPose("crouch", joints={"a": 0.5})


def lowest_point(model, q) -> float:
    """Lowest point of the collision geometry [m] at q."""
    ws = DynamicsWorkspace(model)
    ws.update(q, np.zeros(model.nv))
    detector = ContactDetector(model, Environment(ground=None, boxes=()))
    return detector.lowest_height(ws.R, ws.p)


def test_empty_name_is_stand_when_the_robot_has_it():
    assert starting_pose({"stand": STAND, "crouch": CROUCH}, "") is STAND
    assert starting_pose({"stand": STAND, "crouch": CROUCH}, "crouch") is CROUCH


def test_a_named_pose_the_robot_lacks_is_refused_listing_its_poses():
    with pytest.raises(UnknownNameError, match=r"unknown initial pose 'stand' for robot 'talos'; valid initial poses: crouch"):
        starting_pose({"crouch": CROUCH}, "stand", robot="talos")


def test_without_poses_the_neutral_pose_at_the_given_place():
    pose = starting_pose({}, "", base_position=(1.0, 2.0), base_rpy=(0.0, 0.0, 0.5), joints={"a": 0.2})
    assert pose == InitialPose("neutral", joints={"a": 0.2}, base_xy=(1.0, 2.0), base_rpy=(0.0, 0.0, 0.5), base_z=None)
    assert starting_pose({}, "", base_position=(0.0, 0.0, 1.5)).base_z == 1.5
    assert starting_pose({"stand": STAND}, "", joints={"b": 0.3}).joints == {"a": 0.1, "b": 0.3}
    with pytest.raises(ValueError, match=r"\(x, y\) or \(x, y, z\)"):
        starting_pose({}, "", base_position=(1.0,))


@pytest.mark.parametrize("ground_height", [0.0, 0.25])
def test_neutral_pose_rests_on_the_ground(ground_height):
    model = load_urdf(free_box_urdf(size=(0.2, 0.1, 0.05)))
    environment = Environment(ground=GroundPlane(height=ground_height))
    q = pose_configuration(model, starting_pose({}, ""), environment)
    assert lowest_point(model, q) == pytest.approx(ground_height, abs=1e-12)
    q = pose_configuration(model, starting_pose({}, "", base_position=(0.0, 0.0, 1.0)), environment)
    assert q[2] == 1.0


def test_talos_rests_on_the_ground_without_a_height():
    shares = [s / "example-robot-data" / "robots" for s in example_robot_data_share_dirs()]
    urdfs = [r / "talos_data" / "robots" / "talos_reduced.urdf" for r in shares if r.is_dir()]
    if not urdfs:
        pytest.skip("example-robot-data is not installed")
    model = load_urdf(urdfs[0], mimic="independent")
    q = pose_configuration(model, starting_pose({}, "", robot=model.name), Environment())
    assert lowest_point(model, q) == pytest.approx(0.0, abs=1e-9)
    assert 0.9 < q[2] < 1.2  # talos's pelvis, legs straight
