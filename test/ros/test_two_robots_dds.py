"""The node with a world of two humanoids, over DDS: both robots' joints on joint_states (the
second's prefixed), both link trees in tf under odom, their contacts on the contact topics,
both robots in the entity services, and torque commands by name reaching the named robot."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("simulation_interfaces.srv._spawn_entity", reason="simulation_interfaces has no SpawnEntity (run scripts/setup.sh)")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from simulation_interfaces.msg import EntityCategory, Result  # noqa: E402
from simulation_interfaces.srv import GetEntities, GetEntityState, SpawnEntity  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from ros_node_process import LATCHED, Listener, sim_call, sim_step, start_node, stop_node  # noqa: E402

STARTUP_S = 300.0  # a start that compiles the kernels takes minutes on 2 busy cores
OK = Result.RESULT_OK
JOINTS = 28  # the bundled humanoid's moving joints


def _frames(messages: list[TFMessage]) -> dict[str, object]:
    """The newest transform per child frame."""
    return {t.child_frame_id: t for msg in messages for t in msg.transforms}


def test_two_humanoids_in_joint_states_tf_contacts_entities_and_commands(ros):
    ns = f"/hs_two_{os.getpid()}"
    process = start_node(ns, {
        "world": "config/worlds/two_humanoids.yaml", "loop_mode": "fast", "start_paused": True, "contact_rate": 1000.0,
    })  # fmt: skip
    listener = Listener("two_robots_listener", ns, process)
    listener.subscribe(TFMessage, "tf", qos=1000)
    listener.subscribe(JointState, "joint_states")
    listener.subscribe(WrenchStamped, "contact/partner_l_foot/wrench")
    listener.node.create_subscription(String, listener.topic("partner/robot_description"),
                                      listener.messages["partner/robot_description"].append, LATCHED)  # fmt: skip
    commands = listener.publisher(JointState, "joint_commands")
    m = listener.messages

    def call(srv_type, name, request=None, timeout=20.0):
        return sim_call(listener, srv_type, name, request, timeout)

    def step(n):
        sim_step(listener, n)

    def position(name):
        answer = call(GetEntityState, "get_entity_state", GetEntityState.Request(entity=name))
        assert answer.result.result == OK, answer.result.error_message
        p = answer.state.pose.position
        return np.array([p.x, p.y, p.z])

    try:
        request = GetEntities.Request()
        request.filters.categories = [EntityCategory(category=EntityCategory.CATEGORY_ROBOT)]
        answer = call(GetEntities, "get_entities", request, timeout=STARTUP_S)
        assert list(answer.entities) == ["humanoid", "partner"]
        assert position("humanoid")[:2] == pytest.approx([-0.5, 0.0], abs=1e-6)
        assert position("partner")[:2] == pytest.approx([0.5, 0.0], abs=1e-6)

        step(1)
        assert listener.spin_until(lambda: m["joint_states"] and "partner/pelvis" in _frames(m["tf"]), 10.0, process)
        names = list(m["joint_states"][-1].name)
        assert len(names) == 2 * JOINTS and names[JOINTS:] == [f"partner/{n}" for n in names[:JOINTS]]
        frames = _frames(m["tf"])
        for link in ("pelvis", "partner/pelvis"):
            assert frames[link].header.frame_id == "odom"
        assert frames["pelvis"].transform.translation.x == pytest.approx(-0.5, abs=1e-3)
        assert frames["partner/pelvis"].transform.translation.x == pytest.approx(0.5, abs=1e-3)
        assert frames["partner/l_thigh"].header.frame_id.startswith("partner/")
        # its URDF as written, for RViz's RobotModel with TF Prefix "partner"
        assert listener.spin_until(lambda: m["partner/robot_description"], 10.0, process)
        assert '<link name="l_thigh">' in m["partner/robot_description"][-1].data
        # the second robot's foot carries weight, on its own contact topic
        assert listener.spin_until(lambda: m["contact/partner_l_foot/wrench"], 10.0, process)
        assert m["contact/partner_l_foot/wrench"][-1].wrench.force.z > 50.0

        # a torque command by name reaches the named robot only
        def applied():
            last = m["joint_states"][-1]
            return dict(zip(last.name, last.effort))

        deadline_steps = 50
        while deadline_steps:
            commands.publish(JointState(name=["partner/neck_yaw"], effort=[1.5]))
            listener.spin_for(0.05)
            m["joint_states"].clear()
            step(1)
            assert listener.spin_until(lambda: m["joint_states"], 10.0, process)
            if applied()["partner/neck_yaw"] != 0.0:
                break
            deadline_steps -= 1
        efforts = applied()
        assert efforts["partner/neck_yaw"] == pytest.approx(1.5) and efforts["neck_yaw"] == 0.0

        # a spawned object rebuilds the world: both robots keep their state
        before = position("partner"), position("humanoid")
        spawn = SpawnEntity.Request(name="block")
        spawn.entity_resource.resource_string = "{shape: box, size_m: [0.2, 0.2, 0.2], mass_kg: 1.0, position_m: [0, 2, 0.5]}"
        assert call(SpawnEntity, "spawn_entity", spawn).result.result == OK
        np.testing.assert_allclose(position("partner"), before[0], atol=1e-12)
        np.testing.assert_allclose(position("humanoid"), before[1], atol=1e-12)
    finally:
        listener.destroy()
        code, _, err = stop_node(process)
    assert code == 0, err


def test_the_walking_controller_holds_the_first_robot_of_a_two_robot_world(ros, tmp_path):
    """The controller of the bundled humanoid (stand mode, lock-step) reads its own joints out
    of the joint states of both robots and holds the first robot up: its feet carry its weight.
    The second robot, 3 m away and uncommanded, collapses without touching it."""
    from humanoid_sim.model import load_urdf
    from humanoid_sim.package_data import package_file

    world = tmp_path / "two.yaml"
    world.write_text(
        "robots:\n  - {name: humanoid, urdf: urdf/humanoid.urdf, initial_pose: stand}\n"
        "  - {name: partner, urdf: urdf/humanoid.urdf, initial_pose: stand, base_position_m: [3.0, 0.0]}\n"
    )
    weight = load_urdf(package_file("urdf/humanoid.urdf")).total_mass * 9.81
    ns = f"/hs_two_walk_{os.getpid()}"
    controller = start_node(ns, {"mode": "stand"}, module="humanoid_sim.ros.walking_controller_node")
    listener = Listener("two_robots_walk_listener", ns)
    listener.subscribe(Odometry, "ground_truth/odom")
    for link in ("l_foot", "r_foot"):
        listener.subscribe(WrenchStamped, f"contact/{link}/wrench", keep=False)
    m = listener.messages
    simulator = None

    def sim_time() -> float:
        stamp = m["ground_truth/odom"][-1].header.stamp if m["ground_truth/odom"] else None
        return stamp.sec + 1e-9 * stamp.nanosec if stamp is not None else 0.0

    try:
        # the controller first (it warms up before subscribing), then the lock-step simulator
        assert listener.spin_until(lambda: listener.node.count_subscribers(listener.topic("joint_states")) > 0,
                                   STARTUP_S, controller)  # fmt: skip
        simulator = start_node(ns, {"world": str(world), "loop_mode": "lockstep", "odometry_rate": 1000.0,
                                    "contact_rate": 100.0})  # fmt: skip
        start = time.monotonic()
        while sim_time() < 0.5:
            listener.spin_until(lambda: False, 0.05, simulator)
            assert controller.poll() is None, "the controller process died"
            assert time.monotonic() - start < STARTUP_S, f"sim time reached only {sim_time()} s"
        # the wrench topics (100 Hz) may match later than odometry on a loaded machine
        feet_heard = lambda: all(m[f"contact/{link}/wrench"] for link in ("l_foot", "r_foot"))  # noqa: E731
        assert listener.spin_until(feet_heard, STARTUP_S, simulator), "no contact wrench of the feet arrived"
        heights = [o.pose.pose.position.z for o in m["ground_truth/odom"][-200:]]
        fz = sum(m[f"contact/{link}/wrench"][-1].wrench.force.z for link in ("l_foot", "r_foot"))
    finally:
        listener.destroy()
        stop_node(controller)
        if simulator is not None:
            stop_node(simulator)
    assert fz == pytest.approx(weight, rel=0.01)
    assert np.ptp(heights) < 2e-3
