"""The node with each contact method, over DDS: the ``contact_method`` parameter and the world
file's key choose it, a crate 3 m from the robot rests on the ground with its weight on its
contact topic, and an unknown method stops the node with one line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("simulation_interfaces.srv._step_simulation", reason="simulation_interfaces has no StepSimulation (run scripts/setup.sh)")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from simulation_interfaces.msg import Result  # noqa: E402
from simulation_interfaces.srv import GetEntityState, StepSimulation  # noqa: E402

from ros_node_process import Listener, start_node, stop_node, wait_exit  # noqa: E402

STARTUP_S = 300.0  # a start that compiles the kernels takes minutes on 2 busy cores
G = 9.81
CRATE_KG = 10.0
WORLD = """
robots:
  - {name: humanoid, urdf: urdf/humanoid.urdf, initial_pose: stand}
objects:
  - {name: crate, shape: box, size_m: [0.4, 0.6, 0.5], mass_kg: 10.0, position_m: [3.0, 0.0, 0.25],
     material: {mu_s: 0.6, mu_d: 0.5, restitution: 0.0}}
"""


def test_an_unknown_contact_method_stops_the_node_with_one_line():
    process = start_node(f"/hs_badmethod_{os.getpid()}", {"contact_method": "soft"})
    code, _, err = wait_exit(process, timeout=STARTUP_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert "contact_method" in lines[0] and "relaxed_qp" in lines[0] and "penalty_volume" in lines[0]


@pytest.mark.parametrize("method, from_world", [("virtual_link", False), ("relaxed_qp", False), ("penalty_volume", True)])
def test_the_crate_rests_with_its_weight_on_its_contact_topic(ros, method, from_world):
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "crate.yaml"
        parameters = {"loop_mode": "fast", "start_paused": True, "contact_rate": 100.0, "world": str(world)}
        if from_world:  # the world file's key
            world.write_text(f"contact_method: {method}\n" + WORLD)
        else:  # the node parameter
            world.write_text(WORLD)
            parameters["contact_method"] = method
        ns = f"/hs_{method}_{os.getpid()}"
        process = start_node(ns, parameters)
        listener = Listener(f"{method}_listener", ns)
        listener.subscribe(WrenchStamped, "contact/crate/wrench", keep=False)
        m = listener.messages
        try:
            answer = listener.call(StepSimulation, "humanoid_sim/step_simulation", StepSimulation.Request(steps=500),
                                   timeout=STARTUP_S)  # fmt: skip
            assert answer.result.result == Result.RESULT_OK, answer.result.error_message
            state = listener.call(GetEntityState, "humanoid_sim/get_entity_state", GetEntityState.Request(entity="crate"),
                                  timeout=20.0)  # fmt: skip
            assert state.result.result == Result.RESULT_OK
            p, t = state.state.pose.position, state.state.twist
            assert p.z == pytest.approx(0.25, abs=3e-3)  # resting on the ground (a penalty method sinks a little)
            assert np.abs([t.linear.x, t.linear.y, t.linear.z]).max() < 1e-2
            m["contact/crate/wrench"].clear()
            answer = listener.call(StepSimulation, "humanoid_sim/step_simulation", StepSimulation.Request(steps=20),
                                   timeout=60.0)  # fmt: skip
            assert answer.result.result == Result.RESULT_OK
            assert listener.spin_until(lambda: m["contact/crate/wrench"], 10.0, process)
            assert m["contact/crate/wrench"][-1].wrench.force.z == pytest.approx(CRATE_KG * G, rel=0.02)
        finally:
            listener.destroy()
            code, _, err = stop_node(process)
        assert code == 0, err
