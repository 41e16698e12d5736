"""The push service over DDS: a 200 N, 0.1 s push on the pelvis of the standing robot moves
the base exactly as the library's PushSchedule does for the same push (lock-step node, same
torques, same start); refusals give the reason; diagnostics count the pushes."""

from __future__ import annotations

import os

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from node_twin import node_twin_simulator  # noqa: E402
from ros_node_process import Listener, start_node, stop_node  # noqa: E402

from humanoid_sim import PushSchedule, load_robot  # noqa: E402
from humanoid_sim.ros.conversions import diagnostic_values, nanoseconds_from_stamp  # noqa: E402

STARTUP_S = 90.0
TICKS = 200  # the push covers the first 100 (0.1 s at dt = 1 ms), then 0.1 s of its aftermath
PUSH = {"push_link": "pelvis", "push_wrench": [200.0, 0.0, 0.0, 0.0, 0.0, 0.0], "push_duration": 0.1}


def library_base_position(push: bool) -> np.ndarray:
    """The bundled robot as the node builds it (environment, range of motion), from its stand
    pose under zero torques for TICKS steps, with or without the push from t = 0."""
    sim = node_twin_simulator("stand")
    model = sim.model
    schedule = PushSchedule(model)
    if push:
        schedule.add(PUSH["push_link"], PUSH["push_wrench"], PUSH["push_duration"], start=sim.t)
    for _ in range(TICKS):
        sim.step(np.zeros(model.nj), link_wrenches=schedule.at(sim.t))
    return sim.q[0:3]


def set_parameters(listener: Listener, values: dict) -> list:
    request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
    return list(listener.call(SetParameters, "humanoid_sim/set_parameters", request).results)


def test_push_through_the_service_moves_the_base_as_the_library_does(ros):
    ns = f"/hs_push_{os.getpid()}"
    process = start_node(ns, {"loop_mode": "lockstep", "diagnostics_rate": 20.0, **PUSH})
    listener = Listener("push_listener", ns)
    listener.subscribe(Odometry, "ground_truth/odom", keep=False)
    listener.subscribe(DiagnosticArray, "diagnostics", keep=False)
    command = listener.publisher(Float64MultiArray, "effort_controller/commands", depth=10)
    m = listener.messages
    try:
        # refusals first: an unknown link (listing the links), then nothing has been pushed
        results = set_parameters(listener, {"push_link": "pelvs"})
        assert results[0].successful
        answer = listener.call(Trigger, "push", Trigger.Request(), timeout=STARTUP_S)
        assert not answer.success and "unknown link 'pelvs'" in answer.message and "pelvis" in answer.message
        results = set_parameters(listener, {"push_wrench": [float("nan"), 0.0, 0.0, 0.0, 0.0, 0.0]})
        assert not results[0].successful and "not finite" in results[0].reason
        assert set_parameters(listener, {"push_link": "pelvis"})[0].successful

        answer = listener.call(Trigger, "push", Trigger.Request())
        assert answer.success and "pushing 'pelvis'" in answer.message, answer.message
        nj = load_robot().nj
        topic = listener.topic("effort_controller/commands")
        assert listener.spin_until(lambda: listener.node.count_subscribers(topic) > 0, 10.0)
        for tick in range(1, TICKS + 1):  # lock-step: one zero-torque command, one tick, one state
            command.publish(Float64MultiArray(data=[0.0] * nj))
            assert listener.spin_until(
                lambda: m["ground_truth/odom"] and nanoseconds_from_stamp(m["ground_truth/odom"][-1].header.stamp)
                >= tick * 1_000_000, 30.0, process,
            ), f"no state for tick {tick}"
        position = m["ground_truth/odom"][-1].pose.pose.position
        node_base = np.array([position.x, position.y, position.z])
        assert listener.spin_until(
            lambda: m["diagnostics"] and diagnostic_values(m["diagnostics"][-1]).get("pushes_applied") == "1", 10.0
        )
        values = diagnostic_values(m["diagnostics"][-1])
        assert values["pushes_refused"] == "1"
    finally:
        code, _, err = stop_node(process)
        listener.destroy()
    assert code == 0, err
    pushed, unpushed = library_base_position(True), library_base_position(False)
    assert pushed[0] - unpushed[0] > 0.01  # the push moved the base forward by centimetres
    np.testing.assert_allclose(node_base, pushed, atol=1e-9)
