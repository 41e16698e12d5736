"""The contacts topic: a step's contacts as humanoid_sim_interfaces/Contacts.

The conversion is checked without spinning (against hand-made contacts and a real step of the
standing robot); over DDS a lock-step node publishes one Contacts message per tick, equal to the
library's step for the same torques.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
pytest.importorskip("humanoid_sim_interfaces.msg", reason="humanoid_sim_interfaces is not built (run scripts/setup.sh)")
from humanoid_sim_interfaces.msg import Contacts, ContactState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from node_twin import node_twin_simulator  # noqa: E402
from ros_node_process import Listener, start_node, stop_node  # noqa: E402

from humanoid_sim.contact.virtual_link import ContactKind  # noqa: E402
from humanoid_sim.ros.contact_states import CONTACT_KIND_CONSTANTS, contacts_message, contacts_message_type  # noqa: E402
from humanoid_sim.ros.conversions import nanoseconds_from_stamp, rotation_from_quaternion  # noqa: E402
from humanoid_sim.simulator.simulator import ContactReport  # noqa: E402

TYPES = (Contacts, ContactState)
STARTUP_S = 300.0  # a start that compiles the kernels (after a change to them) takes ~2 min on 2 cores
TICKS = 30


def xyz(point) -> np.ndarray:
    return np.array([point.x, point.y, point.z])


def assert_state_matches(state, report: ContactReport, atol: float = 0.0) -> None:
    """Every field of one ContactState against the ContactReport it was made of."""
    assert state.body_a == report.link and state.body_b == report.element
    assert state.kind == int(report.kind)
    assert state.sticking == bool(report.sticking) and state.slipping == (not report.sticking)
    assert state.spinning == bool(report.spinning)
    np.testing.assert_allclose(xyz(state.virtual_link.position), report.origin, atol=atol)
    o = state.virtual_link.orientation
    np.testing.assert_allclose(rotation_from_quaternion(np.array([o.x, o.y, o.z, o.w])), report.R_world_vl, atol=1e-12 + atol)
    wrench = np.array([state.wrench.force.x, state.wrench.force.y, state.wrench.force.z,
                       state.wrench.torque.x, state.wrench.torque.y, state.wrench.torque.z])
    np.testing.assert_allclose(wrench, report.wrench_world, atol=atol)
    np.testing.assert_allclose(xyz(state.p_v), report.p_v, atol=atol)  # NaN where the report has NaN
    np.testing.assert_allclose(np.array([xyz(p) for p in state.points]).reshape(-1, 3), report.points, atol=atol)


def made_contact(kind: ContactKind, sticking: bool, p_v: np.ndarray) -> ContactReport:
    c, s = math.cos(0.3), math.sin(0.3)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])  # 0.3 rad about the normal
    points = np.array([[0.1, 0.2, 0.0], [0.3, 0.2, 0.0], [0.3, 0.25, 0.0]])[: int(kind)]
    return ContactReport(
        link="l_foot", body=3, element="ground", kind=kind, sticking=sticking, spinning=not sticking,
        points=points, origin=points.mean(axis=0), R_world_vl=R, wrench_local=np.zeros(6),
        wrench_world=np.array([1.5, -2.0, 300.0, 0.1, -0.2, 0.03]), impulse_local=np.zeros(6), p_v=p_v,
    )


def test_kind_constants_are_the_simulators_contact_kinds():
    for kind in ContactKind:
        assert getattr(ContactState, CONTACT_KIND_CONSTANTS[int(kind)]) == int(kind)


def test_message_carries_every_field_of_hand_made_contacts():
    reports = [
        made_contact(ContactKind.POINT, True, np.array([0.1, 0.2, 0.0])),
        made_contact(ContactKind.LINE, False, np.array([0.2, 0.2, 0.0])),
        made_contact(ContactKind.SURFACE, True, np.full(3, np.nan)),  # no normal force: p_v undefined
    ]
    msg = contacts_message(TYPES, 2_345_000_000, "odom", reports)
    assert isinstance(msg, Contacts)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == (2, 345_000_000, "odom")
    assert len(msg.contacts) == 3
    for state, report in zip(msg.contacts, reports):
        assert state.header == msg.header
        assert_state_matches(state, report)
    assert [s.kind for s in msg.contacts] == [ContactState.KIND_POINT, ContactState.KIND_LINE, ContactState.KIND_SURFACE]
    assert math.isnan(msg.contacts[2].p_v.z)


def test_no_contact_gives_an_empty_message():
    msg = contacts_message(TYPES, 0, "world", ())
    assert list(msg.contacts) == [] and msg.header.frame_id == "world"


def test_message_of_a_real_step_of_the_standing_robot():
    sim = node_twin_simulator("stand")
    result = sim.step(np.zeros(sim.model.nj))
    assert {c.link for c in result.contacts} == {"l_foot", "r_foot"}
    msg = contacts_message(TYPES, 1_000_000, "odom", result.contacts)
    for state, report in zip(msg.contacts, result.contacts):
        assert_state_matches(state, report)
        assert state.kind == ContactState.KIND_SURFACE and state.body_b == "ground"
        assert state.wrench.force.z > 0.0 and len(state.points) >= 3  # the ground pushes each sole up


def test_message_types_are_importable_here():
    assert contacts_message_type() == TYPES


def test_lockstep_node_publishes_the_librarys_contacts_every_tick(ros):
    ns = f"/hs_contacts_{os.getpid()}"
    process = start_node(ns, {"loop_mode": "lockstep", "contact_rate": 1000.0, "tf_rate": 0.0, "markers_rate": 0.0})
    listener = Listener("contacts_listener", ns)
    listener.subscribe(Contacts, "contacts", qos=1000)
    command = listener.publisher(Float64MultiArray, "effort_controller/commands", depth=10)
    m = listener.messages
    sim = node_twin_simulator("stand")
    nj = sim.model.nj
    expected = []
    try:
        assert listener.spin_until(
            lambda: command.get_subscription_count() > 0
            and listener.node.count_publishers(listener.topic("contacts")) > 0,
            STARTUP_S, process,
        ), "the node did not come up"
        listener.spin_for(1.0)  # the node publishes contacts only to matched subscribers: let it see this one
        for tick in range(1, TICKS + 1):  # one zero-torque command: one tick, one Contacts message
            command.publish(Float64MultiArray(data=[0.0] * nj))
            expected.append(sim.step(np.zeros(nj)).contacts)
            assert listener.spin_until(lambda: len(m["contacts"]) >= tick, 30.0, process), f"no contacts for tick {tick}"
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    received = m["contacts"]
    assert [nanoseconds_from_stamp(msg.header.stamp) for msg in received] == [k * 1_000_000 for k in range(1, TICKS + 1)]
    for msg, reports in zip(received, expected):
        assert msg.header.frame_id == "odom"
        assert len(msg.contacts) == len(reports) and len(reports) >= 2
        for state, report in zip(msg.contacts, reports):
            assert_state_matches(state, report, atol=1e-9)
