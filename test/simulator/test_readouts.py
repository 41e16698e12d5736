"""Readouts of a step for sensors: link-frame contact wrenches, base acceleration (no ROS)."""

import numpy as np
import pytest

from humanoid_sim.contact.virtual_link import ContactKind
from humanoid_sim.dynamics.spatial import rotation_to_quaternion
from humanoid_sim.simulator.readouts import base_acceleration, link_contacts
from humanoid_sim.simulator.simulator import ContactReport


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def contact(link: str, body: int, origin, wrench_world, p_v) -> ContactReport:
    z3 = np.zeros(3)
    return ContactReport(link, body, "ground", ContactKind.SURFACE, True, False, np.zeros((1, 3)),
                         np.asarray(origin, float), np.eye(3), np.zeros(6), np.asarray(wrench_world, float),
                         np.zeros(6), np.asarray(p_v, float) if p_v is not None else z3)


def test_wrench_moves_to_the_link_origin_in_link_axes():
    R = np.stack([np.eye(3), rot_z(np.pi / 2)])
    p = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    # 100 N up at 0.1 m along world x from the foot origin: moment about the origin = r x f = (0, -10, 0) world
    c = contact("foot", 1, [1.1, 0.0, 0.0], [0.0, 0.0, 100.0, 0.0, 0.0, 2.0], [1.1, 0.0, 0.0])
    got = link_contacts([c], R, p)["foot"]
    # world -> foot axes (foot yawed 90 degrees): world x is foot -y, world y is foot x
    np.testing.assert_allclose(got.wrench, [0.0, 0.0, 100.0, -10.0, 0.0, 2.0], atol=1e-12)
    assert got.f_z == 100.0


def test_two_contacts_of_one_link_sum_and_keep_the_heavier_pv():
    R, p = np.stack([np.eye(3)]), np.zeros((1, 3))
    light = contact("foot", 0, [0.0, 0.0, 0.0], [1.0, 0.0, 10.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    heavy = contact("foot", 0, [0.0, 0.0, 0.0], [0.0, 2.0, 50.0, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0])
    for order in ([light, heavy], [heavy, light]):
        got = link_contacts(order, R, p)["foot"]
        np.testing.assert_allclose(got.wrench, [1.0, 2.0, 60.0, 0.0, 0.0, 0.0])
        np.testing.assert_array_equal(got.p_v, [0.2, 0.0, 0.0])
    assert link_contacts([], R, p) == {}


def test_a_contact_between_two_links_acts_on_both():
    """The hand pushes the torso: the wrench on the hand (link) and the opposite one on the
    torso (the contact's second body, named by element), each about its own origin."""
    R, p = np.stack([np.eye(3), np.eye(3)]), np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    c = ContactReport("hand", 1, "torso", ContactKind.POINT, True, False, np.zeros((1, 3)), np.array([0.2, 0.0, 0.0]),
                      np.eye(3), np.zeros(6), np.array([5.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.zeros(6), np.zeros(3),
                      other_body=0)  # fmt: skip
    got = link_contacts([c], R, p)
    np.testing.assert_allclose(got["hand"].wrench, [5.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # along x through the hand origin
    np.testing.assert_allclose(got["torso"].wrench, [-5.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    c2 = c._replace(origin=np.array([0.2, 0.1, 0.0]))
    got = link_contacts([c2], R, p)
    np.testing.assert_allclose(got["hand"].wrench[3:], [0.0, 0.0, -0.5])  # r x f = (−0.3, 0.1, 0) x (5, 0, 0)
    np.testing.assert_allclose(got["torso"].wrench[3:], [0.0, 0.0, 0.5])  # (0.2, 0.1, 0) x (−5, 0, 0)


def test_base_acceleration_is_the_world_velocity_difference():
    dt = 1e-3
    q0, q1 = np.zeros(7), np.zeros(7)
    q0[3:7] = rotation_to_quaternion(rot_z(0.3))
    q1[3:7] = rotation_to_quaternion(rot_z(0.3 + 1e-3))
    v0, v1 = np.zeros(6), np.zeros(6)
    v0[0:3] = rot_z(0.3).T @ [1.0, 0.0, 0.0]  # body-frame velocities of world (1, 0, 0) and (1, 0, 0.002)
    v1[0:3] = rot_z(0.3 + 1e-3).T @ [1.0, 0.0, 0.002]
    np.testing.assert_allclose(base_acceleration(q1, v1, q0, v0, dt), [0.0, 0.0, 2.0], atol=1e-9)
    assert not base_acceleration(q1, v1, None, None, dt).any()
