"""The node with a world, over DDS: free objects in tf, on the objects and contact topics, and
in the simulation_interfaces entity services (spawn a box, it falls and rests; delete it)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("simulation_interfaces.srv._spawn_entity", reason="simulation_interfaces has no SpawnEntity (run scripts/setup.sh)")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from simulation_interfaces.msg import EntityCategory, Result, SimulatorFeatures  # noqa: E402
from simulation_interfaces.srv import (  # noqa: E402
    DeleteEntity,
    GetEntities,
    GetEntityState,
    GetSimulatorFeatures,
    SetEntityState,
    SpawnEntity,
    StepSimulation,
)
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from ros_node_process import Listener, start_node, stop_node, wait_exit  # noqa: E402

STARTUP_S = 300.0  # a start that compiles the kernels takes minutes on 2 busy cores
OK = Result.RESULT_OK
G = 9.81
BOX = "{shape: box, size_m: [0.3, 0.3, 0.3], mass_kg: 2.0, material: {mu_s: 0.8, mu_d: 0.6, restitution: 0.0}}"


def _frames(messages: list[TFMessage]) -> dict[str, object]:
    """The newest transform per child frame."""
    return {t.child_frame_id: t for msg in messages for t in msg.transforms}


def test_bad_world_file_stops_with_one_line():
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "mine.yaml"
        bad.write_text("objects:\n  - {name: crate, shape: box, sise_m: [1, 1, 1], mass_kg: 1}\n")
        process = start_node(f"/hs_badworld_{os.getpid()}", {"world": str(bad)})
        code, _, err = wait_exit(process, timeout=STARTUP_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert "cannot start" in lines[0] and str(bad) in lines[0] and "unknown key 'sise_m'" in lines[0]


def test_world_objects_in_tf_markers_contacts_and_entity_services(ros):
    ns = f"/hs_world_{os.getpid()}"
    process = start_node(ns, {
        "world": "config/worlds/box_push.yaml", "loop_mode": "fast", "start_paused": True,
        "contact_rate": 100.0, "markers_rate": 50.0,
    })  # fmt: skip
    listener = Listener("world_listener", ns, process)
    listener.subscribe(TFMessage, "tf", qos=1000)
    listener.subscribe(MarkerArray, "objects", keep=False)
    listener.subscribe(WrenchStamped, "contact/block/wrench", keep=False)
    m = listener.messages

    def call(srv_type, name, request=None, timeout=20.0):
        return listener.call(srv_type, f"humanoid_sim/{name}", request or srv_type.Request(), timeout=timeout)

    def step(n):
        # STARTUP_S: the first steps of a rebuilt world (after a spawn) may compile kernels for it
        answer = call(StepSimulation, "step_simulation", StepSimulation.Request(steps=n), timeout=STARTUP_S)
        assert answer.result.result == OK, answer.result.error_message

    def state(name):
        answer = call(GetEntityState, "get_entity_state", GetEntityState.Request(entity=name))
        assert answer.result.result == OK, answer.result.error_message
        p, t = answer.state.pose.position, answer.state.twist
        return np.array([p.x, p.y, p.z]), np.array([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z])

    def entities(category=None):
        request = GetEntities.Request()
        if category is not None:
            request.filters.categories = [EntityCategory(category=category)]
        answer = call(GetEntities, "get_entities", request)
        assert answer.result.result == OK
        return list(answer.entities)

    try:
        features = call(GetSimulatorFeatures, "get_simulator_features", timeout=STARTUP_S).features
        assert {SimulatorFeatures.SPAWNING, SimulatorFeatures.DELETING, SimulatorFeatures.SPAWNING_RESOURCE_STRING} <= set(features.features)
        assert "yaml" in features.spawn_formats
        assert entities(EntityCategory.CATEGORY_DYNAMIC_OBJECT) == ["crate"]
        assert "ground" in entities(EntityCategory.CATEGORY_STATIC_OBJECT)
        step(1)
        assert listener.spin_until(lambda: "crate" in _frames(m["tf"]), 10.0, process)
        crate_tf = _frames(m["tf"])["crate"]
        assert crate_tf.header.frame_id == "odom"
        assert crate_tf.transform.translation.x == pytest.approx(0.6, abs=1e-3)
        position, _ = state("crate")
        assert position == pytest.approx([0.6, 0.0, 0.25], abs=2e-3)

        # spawn a 2 kg box 1 m up, 1.5 m behind the robot: it falls, lands and rests on the ground
        spawn = SpawnEntity.Request(name="block")
        spawn.entity_resource.resource_string = BOX
        spawn.initial_pose.pose.position.x, spawn.initial_pose.pose.position.z = -1.5, 1.0
        crate_before, crate_twist_before = state("crate")
        robot_before, robot_twist_before = state("humanoid")
        answer = call(SpawnEntity, "spawn_entity", spawn)
        assert answer.result.result == OK, answer.result.error_message
        assert answer.entity_name == "block"
        crate_after, crate_twist_after = state("crate")  # the rebuilt simulator carried the crate's state over
        np.testing.assert_allclose(crate_after, crate_before, atol=1e-12)
        np.testing.assert_allclose(crate_twist_after, crate_twist_before, atol=1e-12)
        robot_after, robot_twist_after = state("humanoid")  # and the robot's
        np.testing.assert_allclose(robot_after, robot_before, atol=1e-12)
        np.testing.assert_allclose(robot_twist_after, robot_twist_before, atol=1e-12)
        again = call(SpawnEntity, "spawn_entity", spawn)
        assert again.result.result == SpawnEntity.Response.NAME_NOT_UNIQUE and "taken" in again.result.error_message
        assert entities(EntityCategory.CATEGORY_DYNAMIC_OBJECT) == ["crate", "block"]
        step(1500)  # 1.5 s: a 0.85 m fall takes 0.42 s
        position, twist = state("block")
        assert position == pytest.approx([-1.5, 0.0, 0.15], abs=5e-3)
        assert np.abs(twist).max() < 1e-2
        m["tf"].clear()
        step(1)
        assert listener.spin_until(lambda: "block" in _frames(m["tf"]), 10.0, process)
        assert _frames(m["tf"])["block"].transform.translation.z == pytest.approx(0.15, abs=5e-3)
        # its weight on the ground, in its own frame, on its own contact topic
        assert listener.spin_until(lambda: m["contact/block/wrench"], 10.0, process)
        assert m["contact/block/wrench"][-1].wrench.force.z == pytest.approx(2.0 * G, rel=0.02)
        # both objects drawn
        assert listener.spin_until(lambda: m["objects"] and len(m["objects"][-1].markers) == 3, 10.0, process)
        shapes = {mk.text: mk for mk in m["objects"][-1].markers if mk.action == Marker.ADD}
        assert set(shapes) == {"crate", "block"} and shapes["block"].type == Marker.CUBE
        assert shapes["block"].pose.position.z == pytest.approx(0.15, abs=5e-3)

        # set its state: lift it and throw it sideways
        request = SetEntityState.Request(entity="block", set_pose=True, set_twist=True)
        request.state.pose.position.x, request.state.pose.position.z = -1.5, 0.5
        request.state.pose.orientation.w = 1.0
        request.state.twist.linear.y = 1.0
        assert call(SetEntityState, "set_entity_state", request).result.result == OK
        position, twist = state("block")
        assert position == pytest.approx([-1.5, 0.0, 0.5], abs=1e-9) and twist[1] == pytest.approx(1.0)
        step(100)
        position, _ = state("block")
        assert position[1] == pytest.approx(0.1, abs=2e-3)  # 0.1 s at 1 m/s, still in the air
        assert position[2] == pytest.approx(0.5 - 0.5 * G * 0.1**2, abs=2e-3)

        # delete it: gone from the entities; the crate stays
        answer = call(DeleteEntity, "delete_entity", DeleteEntity.Request(entity="block"))
        assert answer.result.result == OK, answer.result.error_message
        assert entities(EntityCategory.CATEGORY_DYNAMIC_OBJECT) == ["crate"]
        assert call(GetEntityState, "get_entity_state", GetEntityState.Request(entity="block")).result.result == Result.RESULT_NOT_FOUND
        assert call(DeleteEntity, "delete_entity", DeleteEntity.Request(entity="ground")).result.result == Result.RESULT_OPERATION_FAILED
        step(10)
        m["tf"].clear()
        step(1)
        assert listener.spin_until(lambda: "crate" in _frames(m["tf"]), 10.0, process)
        assert "block" not in _frames(m["tf"])
    finally:
        listener.destroy()
        code, _, err = stop_node(process)
    assert code == 0, err
