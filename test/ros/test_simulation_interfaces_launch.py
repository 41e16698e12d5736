"""launch_testing test of the simulation_interfaces services of the node started by
launch/sim.launch.py: features, pause, step, entity state, stop (pause and reset).

Runs on a ROS 2 install with the distribution's simulation_interfaces (``launch_test`` or
pytest with the launch_testing plugin). Skipped, with its reason, where launch_testing cannot
be imported; the same services are tested over DDS without launch in
test_simulation_interfaces_dds.py.
"""

import time
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not installed (no ROS 2 distribution on this machine)"
)
pytest.importorskip("launch_ros", reason="launch_ros is not installed (no ROS 2 distribution on this machine)")
pytest.importorskip("simulation_interfaces", reason="simulation_interfaces is not installed")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import rclpy  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures  # noqa: E402
from simulation_interfaces.srv import (  # noqa: E402
    GetEntityState,
    GetSimulationState,
    GetSimulatorFeatures,
    SetSimulationState,
    StepSimulation,
)

LAUNCH_FILE = Path(__file__).resolve().parents[2] / "launch" / "sim.launch.py"


@pytest.mark.launch_test
def generate_test_description():
    sim = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
        launch_arguments={"rviz": "false", "use_sim_time": "false"}.items(),
    )
    return launch.LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


class TestSimulationInterfaces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node("simulation_interfaces_launch_test")

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def call(self, srv_type, name, request=None, timeout=120.0):
        client = self.node.create_client(srv_type, f"/humanoid_sim/{name}")
        self.assertTrue(client.wait_for_service(timeout_sec=timeout), f"no service {name}")
        future = client.call_async(request or srv_type.Request())
        deadline = time.monotonic() + 30.0
        while not future.done() and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.1)
        self.assertTrue(future.done(), f"{name} did not answer")
        return future.result()

    def test_pause_step_and_read_the_robot(self):
        features = self.call(GetSimulatorFeatures, "get_simulator_features").features.features
        self.assertIn(SimulatorFeatures.STEP_SIMULATION_MULTIPLE, features)
        pause = SetSimulationState.Request()
        pause.state.state = SimulationState.STATE_PAUSED
        self.assertIn(self.call(SetSimulationState, "set_simulation_state", pause).result.result,
                      (Result.RESULT_OK, SetSimulationState.Response.ALREADY_IN_TARGET_STATE))
        self.assertEqual(self.call(GetSimulationState, "get_simulation_state").state.state,
                         SimulationState.STATE_PAUSED)
        self.assertEqual(self.call(StepSimulation, "step_simulation", StepSimulation.Request(steps=10)).result.result,
                         Result.RESULT_OK)
        stop = SetSimulationState.Request()
        stop.state.state = SimulationState.STATE_STOPPED
        self.assertEqual(self.call(SetSimulationState, "set_simulation_state", stop).result.result, Result.RESULT_OK)
        state = self.call(GetEntityState, "get_entity_state", GetEntityState.Request(entity="humanoid"))
        self.assertEqual(state.result.result, Result.RESULT_OK)
        self.assertTrue(0.6 < state.state.pose.position.z < 1.0)  # the stand pose, on the ground
