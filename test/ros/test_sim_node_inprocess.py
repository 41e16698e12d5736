"""The node's logic in-process (real rclpy node, no spinning): commands, timeout, parameters, errors.

Callbacks are called directly with messages, and parameters are set through rclpy's own
``set_parameters`` (which runs the node's validation callback), so these run in seconds.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from humanoid_sim.ros.conversions import nanoseconds_from_stamp  # noqa: E402
from humanoid_sim.ros.sim_node import SimNode, StartupError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def make_node(**overrides) -> SimNode:
    parameters = [Parameter(name, value=value) for name, value in overrides.items()]
    return SimNode(f"inprocess_{time.monotonic_ns()}", parameter_overrides=parameters)


def test_named_subset_and_array_commands(ros):
    node = make_node(loop_mode="fast", joint_order=["r_knee", "l_knee"])
    try:
        names = node.model.joint_names
        node._on_named_command(JointState(name=list(names), effort=[1.0] * len(names)))
        node._on_named_command(JointState(name=["l_knee"], effort=[5.0]))
        expected = np.ones(len(names))
        expected[names.index("l_knee")] = 5.0
        np.testing.assert_array_equal(node._command, expected)
        node._on_array_command(Float64MultiArray(data=[-2.0, -3.0]))  # r_knee, l_knee
        expected[names.index("r_knee")], expected[names.index("l_knee")] = -2.0, -3.0
        np.testing.assert_array_equal(node._command, expected)
        # a rejected command keeps the last valid one, and is counted
        node._on_array_command(Float64MultiArray(data=[1.0, float("nan")]))
        np.testing.assert_array_equal(node._command, expected)
        assert node.rejections.counts["non_finite"] == 1 and node.accepted_commands == 3
    finally:
        node.destroy_node()


@pytest.mark.parametrize("behaviour", ["zero_torque", "damping"])
def test_command_timeout_behaviour(ros, behaviour):
    node = make_node(loop_mode="fast", command_timeout=0.05, timeout_behaviour=behaviour, timeout_damping=7.0)
    try:
        nj = node.model.nj
        node.simulator.set_state(node.q_initial, np.linspace(-1.0, 1.0, node.model.nv))
        v_joints = node.simulator.v[6:]
        node._on_named_command(JointState(name=list(node.model.joint_names), effort=[3.0] * nj))
        np.testing.assert_array_equal(node._torque(), 3.0)  # fresh command
        time.sleep(0.1)
        expected = np.zeros(nj) if behaviour == "zero_torque" else -7.0 * v_joints
        np.testing.assert_array_equal(node._torque(), expected)
        assert node.timeout_ticks == 1
    finally:
        node.destroy_node()


def test_parameter_changes_validated(ros):
    node = make_node(loop_mode="fast")
    try:
        (bad,) = node.set_parameters([Parameter("tf_rate", value=-5.0)])
        assert not bad.successful and "tf_rate" in bad.reason
        (bad,) = node.set_parameters([Parameter("timeout_behaviour", value="explode")])
        assert not bad.successful and "zero_torque, damping" in bad.reason
        (read_only,) = node.set_parameters([Parameter("physics_dt", value=0.002)])
        assert not read_only.successful
        assert node.params.physics_dt == 0.001 and node.params.tf_rate == 200.0
        (ok,) = node.set_parameters([Parameter("tf_rate", value=50.0)])
        assert ok.successful and node.params.tf_rate == 50.0 and node._every["tf"] == 20
        (ok,) = node.set_parameters([Parameter("use_sim_time", value=True)])  # rclpy's own: not ours to refuse
        assert ok.successful
    finally:
        node.destroy_node()


def test_lockstep_one_tick_per_valid_command_and_services(ros):
    node = make_node(loop_mode="lockstep")
    try:
        nj = node.model.nj
        command = JointState(name=list(node.model.joint_names), effort=[0.0] * nj)
        for _ in range(3):
            node._on_named_command(command)
        assert node._tick == 3
        node._on_named_command(JointState(name=["nope"], effort=[1.0]))  # rejected: no tick
        assert node._tick == 3
        assert node._on_pause(SetBool.Request(data=True), SetBool.Response()).success
        node._on_named_command(command)  # paused: no tick
        assert node._tick == 3
        assert node._on_step(Trigger.Request(), Trigger.Response()).success
        assert node._tick == 4
        moved = node.simulator.q
        assert node._on_reset(Trigger.Request(), Trigger.Response()).success
        np.testing.assert_array_equal(node.simulator.q, node.q_initial)
        assert not np.array_equal(moved, node.q_initial)
        assert node._tick == 4  # time does not run backwards
        assert node._on_pause(SetBool.Request(data=False), SetBool.Response()).success
        answer = node._on_step(Trigger.Request(), Trigger.Response())
        assert not answer.success and "not paused" in answer.message
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"robot_description": "<robot name='r'><link name='a'/><link name='a'/></robot>"}, "defined twice"),
        ({"robot_description": "not xml"}, "robot_description parameter: not URDF XML"),
        ({"initial_pose": "crouch"}, "valid initial poses: stand, straight"),
        ({"joint_order": ["l_knee", "elbow"]}, "valid joints:"),
        ({"initial_joint_names": ["l_knee", "nope"], "initial_joint_positions": [0.1, 0.2]}, "unknown joint 'nope'"),
        ({"environment_config": "/no/such/file.yaml"}, "environment config"),
        ({"physics_dt": 1.0}, "physics_dt"),
    ],
)
def test_startup_errors_name_the_problem(ros, overrides, message):
    with pytest.raises(StartupError, match=message.replace("(", r"\(")):
        make_node(**overrides)


MIMIC_URDF = """<robot name="gripper">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger_a"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger_b"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="a" type="prismatic"><parent link="palm"/><child link="finger_a"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="1"/></joint>
  <joint name="b" type="prismatic"><parent link="palm"/><child link="finger_b"/><axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="1"/><mimic joint="a"/></joint>
</robot>"""


@pytest.mark.parametrize(("mimic", "joints"), [("independent", ("a", "b")), ("fixed", ("a",))])
def test_mimic_joints_load_as_the_parameter_says(ros, mimic, joints):
    with pytest.raises(StartupError, match="mimic"):
        make_node(robot_description=MIMIC_URDF, initial_pose="", range_of_motion_config="none")
    node = make_node(robot_description=MIMIC_URDF, initial_pose="", range_of_motion_config="none", mimic_joints=mimic)
    try:
        assert node.model.joint_names == joints
    finally:
        node.destroy_node()


def test_a_pose_the_robot_lacks_is_refused_and_the_default_rests_it_on_the_ground(ros):
    with pytest.raises(StartupError, match=r"initial_pose: unknown initial pose 'stand' for robot 'gripper'; valid initial poses: \(none\)"):
        make_node(robot_description=MIMIC_URDF, initial_pose="stand", range_of_motion_config="none", mimic_joints="fixed")


def test_default_start_is_the_stand_pose(ros):
    node = make_node()
    try:
        np.testing.assert_array_equal(node.q_initial, node.simulator.reset("stand"))
    finally:
        node.destroy_node()


def test_initial_joint_positions_on_top_of_pose(ros):
    node = make_node(initial_pose="stand", initial_joint_names=["neck_yaw"], initial_joint_positions=[0.3])
    try:
        assert node.q_initial[7 + node.model.joint_index("neck_yaw")] == 0.3
        assert node.q_initial[7 + node.model.joint_index("l_knee")] == 0.5  # from the stand pose
    finally:
        node.destroy_node()


@pytest.mark.parametrize("loop_mode", ["lockstep", "fast"])
def test_step_service_publishes_the_state_once(ros, loop_mode):
    node = make_node(loop_mode=loop_mode, start_paused=True, joint_states_rate=1.0, tf_rate=1.0)
    sent = {"joint_states": 0, "tf": 0, "clock": 0}
    for topic, publisher in (("joint_states", node.pub_joint_states), ("tf", node.pub_tf), ("clock", node.pub_clock)):
        original = publisher.publish
        publisher.publish = lambda data, topic=topic, original=original: (sent.__setitem__(topic, sent[topic] + 1),
                                                                          original(data))
    try:
        answer = node._on_step(Trigger.Request(), Trigger.Response())
        assert answer.success, answer.message
        assert sent == {"joint_states": 1, "tf": 1, "clock": 1}
    finally:
        node.destroy_node()


def test_a_paused_node_publishes_its_clock_again_and_a_running_one_does_not(ros):
    node = make_node(loop_mode="fast", start_paused=True)
    stamps = []
    original = node.pub_clock.publish
    node.pub_clock.publish = lambda data: (stamps.append(deserialize_message(data, Clock).clock), original(data))
    try:
        assert node._on_step(Trigger.Request(), Trigger.Response()).success
        node._republish_clock_while_paused()
        node._republish_clock_while_paused()
        assert [nanoseconds_from_stamp(s) for s in stamps] == [1_000_000] * 3  # the step's, then the same time
        node._paused = False  # as resume does; the physics thread is not started here
        node._republish_clock_while_paused()
        assert len(stamps) == 3
    finally:
        node.destroy_node()


def test_robot_description_parameter_holds_the_urdf_read_from_urdf_path(ros):
    urdf = REPO / "urdf" / "humanoid.urdf"
    node = make_node(urdf_path=str(urdf))
    try:
        assert node.get_parameter("robot_description").value == urdf.read_text()
        assert node.describe_parameter("robot_description").read_only
    finally:
        node.destroy_node()


def test_late_tick_share_counts_only_paced_ticks(ros, monkeypatch):
    from humanoid_sim.simulator.simulator import SimulationError

    node = make_node(loop_mode="realtime", real_time_factor=100.0, thread_priority=0, diagnostics_rate=0.0)
    try:
        node.start()  # 10 us a tick: nearly every tick is late
        deadline = time.monotonic() + 10.0
        while node.paced_ticks < 50 and time.monotonic() < deadline:
            time.sleep(0.02)
        node.stop()
        values, _, _ = node.diagnostics_values()
        assert node.late_ticks > 0 and 0.0 < values["late_tick_share"] <= 1.0
        assert values["late_tick_share"] == node.late_ticks / node.paced_ticks

        def fail(*args, **kwargs):
            raise SimulationError("mass matrix is not positive definite")

        monkeypatch.setattr(node.simulator, "step", fail)
        late, paced = node.late_ticks, node.paced_ticks
        node.start()  # the first step fails and pauses: nothing counted, late or not
        time.sleep(0.3)
        node.stop()
        assert node._failed and (node.late_ticks, node.paced_ticks) == (late, paced)
    finally:
        node.stop()
        node.destroy_node()


def test_topic_token():
    from humanoid_sim.ros.sim_node import topic_token

    assert topic_token("l_foot") == "l_foot"
    assert topic_token("base-link.v2") == "base_link_v2"
    assert topic_token("3rd") == "_3rd"


def test_imu_reads_gravity_reaction_when_standing_still(ros):
    from ros_holding_controller import HoldingController

    from humanoid_sim.ros import conversions as cv

    node = make_node(loop_mode="lockstep", initial_pose="stand")
    try:
        controller = HoldingController(node.model, node.q_initial)
        q_j, v_j = node.q_initial[7:], np.zeros(node.model.nj)
        for _ in range(3):
            tau = controller.torque(q_j, v_j)
            node._on_named_command(JointState(name=list(node.model.joint_names), effort=tau.tolist()))
            q_j, v_j = node.simulator.q[7:], node.simulator.v[6:]
        result = node._last_result
        imu = cv.imu_message(0, "pelvis", result.q[3:7], result.v[3:6], node._base_acceleration(result), node.model.gravity)
        a = imu.linear_acceleration
        np.testing.assert_allclose([a.x, a.y, a.z], [0.0, 0.0, 9.81], atol=1e-6)
    finally:
        node.destroy_node()


def _in_a_thread(function):
    """function()'s result, called in a thread of its own (scheduling changes stay there: a
    FIFO test runner would be no good)."""
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(function()))
    thread.start()
    thread.join()
    return out[0]


def _scheduling_of_a_thread(node: SimNode, priority: int) -> tuple[str, int]:
    """(what _raise_thread_priority reports, the policy the thread then has)."""
    import os

    return _in_a_thread(lambda: (node._raise_thread_priority(priority), os.sched_getscheduler(0)))


def test_physics_thread_priority_granted_or_refused_with_one_warning(ros, monkeypatch):
    import os

    node = make_node(loop_mode="realtime", start_paused=True)
    try:
        assert node.params.thread_priority == 50  # the default, as ros2_control's loop
        assert _scheduling_of_a_thread(node, 0) == ("normal", os.SCHED_OTHER)
        warnings = []
        monkeypatch.setattr(node.get_logger(), "warning", lambda text, **_: warnings.append(text), raising=False)

        def refuse(*_args):
            raise PermissionError(1, "Operation not permitted")

        with monkeypatch.context() as patch:
            patch.setattr(os, "sched_setscheduler", refuse)
            assert _scheduling_of_a_thread(node, 50) == ("normal (SCHED_FIFO refused)", os.SCHED_OTHER)
        assert len(warnings) == 1 and "Operation not permitted" in warnings[0] and "rtprio" in warnings[0]
        if _probe_fifo_permitted():  # granted where this process may (root, CAP_SYS_NICE, an rtprio limit)
            assert _scheduling_of_a_thread(node, 50) == ("SCHED_FIFO 50", os.SCHED_FIFO)
        values, _, _ = node.diagnostics_values()
        assert values["physics_thread_scheduling"] == "normal"  # the loop has not started
    finally:
        node.destroy_node()


def _probe_fifo_permitted() -> bool:
    """Whether this process may put a thread under SCHED_FIFO."""
    import os

    def probe() -> bool:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except OSError:
            return False
        return True

    return _in_a_thread(probe)


def test_a_physics_thread_that_cannot_hold_real_time_leaves_sched_fifo(ros, monkeypatch):
    """real_time_factor 100 gives a tick 10 us of wall time: the loop never sleeps. Under
    SCHED_FIFO that would keep a CPU from every other thread, so after FIFO_SATURATED_S it
    goes back to normal scheduling, once, with one warning, and goes on running."""
    from humanoid_sim.ros.physics_loop import FIFO_SATURATED_S

    if not _probe_fifo_permitted():
        pytest.skip("this process may not use SCHED_FIFO (needs root, CAP_SYS_NICE or an rtprio limit)")
    node = make_node(loop_mode="realtime", real_time_factor=100.0, diagnostics_rate=0.0)
    warnings = []
    monkeypatch.setattr(node.get_logger(), "warning", lambda text, **_: warnings.append(text), raising=False)
    try:
        node.start()
        deadline = time.monotonic() + 10.0 * FIFO_SATURATED_S + 5.0
        while not node.thread_scheduling.startswith("normal (") and time.monotonic() < deadline:
            time.sleep(0.05)
        ticks = node._tick
        time.sleep(0.2)
        assert node._tick > ticks  # still stepping
    finally:
        node.stop()
        node.destroy_node()
    assert node.thread_scheduling == "normal (SCHED_FIFO left: real time not held)"
    assert len(warnings) == 1 and "cannot hold real_time_factor 100" in warnings[0]


def test_sched_fifo_comes_back_when_the_overrun_passes(ros, monkeypatch):
    """After leaving SCHED_FIFO (real_time_factor 100), real_time_factor 0.2 gives the thread
    slack again: after FIFO_RECOVERY_S of sleeping it is back under SCHED_FIFO."""
    from humanoid_sim.ros.physics_loop import FIFO_RECOVERY_S, FIFO_SATURATED_S

    if not _probe_fifo_permitted():
        pytest.skip("this process may not use SCHED_FIFO (needs root, CAP_SYS_NICE or an rtprio limit)")
    from humanoid_sim.model.urdf_builder import free_box_urdf

    # a box resting on the ground: ticks cost ~0.1 ms (a humanoid falling under zero torque costs ms)
    node = make_node(robot_description=free_box_urdf(), range_of_motion_config="none", loop_mode="realtime",
                     real_time_factor=100.0, diagnostics_rate=0.0, command_timeout=0.0)
    infos = []
    monkeypatch.setattr(node.get_logger(), "warning", lambda text, **_: None, raising=False)
    monkeypatch.setattr(node.get_logger(), "info", lambda text, **_: infos.append(text), raising=False)
    try:
        node.start()
        deadline = time.monotonic() + 10.0 * FIFO_SATURATED_S + 5.0
        while not node.thread_scheduling.startswith("normal (") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert node.thread_scheduling.startswith("normal (SCHED_FIFO left")
        assert node.set_parameters([Parameter("real_time_factor", value=0.2)])[0].successful  # 5 ms a tick: slack
        deadline = time.monotonic() + 3.0 * FIFO_RECOVERY_S + 5.0
        while node.thread_scheduling.startswith("normal (") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        node.stop()
        node.destroy_node()
    assert node.thread_scheduling == f"SCHED_FIFO {node.params.thread_priority} (restored)"
    assert any("back to SCHED_FIFO" in text for text in infos)
