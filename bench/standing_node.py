"""Bench helper: the simulation node in its own process, real-time mode, the bundled humanoid in
its stand pose, held by a PD + contact-consistent gravity-compensation controller that runs in
this process over real DDS and answers every joint_states message with one command, like an
external ros2_control stack. Used by bench/node_realtime.py and bench/command_flood.py.

The controller must not steal the node's CPU (2 cores here): joint_states and tf arrive raw (no
message objects; joint_states read by their fixed layout) and the command goes out as one
Float64MultiArray on effort_controller/commands.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from humanoid_sim.contact.environment import load_environment  # noqa: E402
from humanoid_sim.dynamics import frame_jacobian, gravity_forces  # noqa: E402
from humanoid_sim.model import load_urdf  # noqa: E402
from humanoid_sim.ros.conversions import diagnostic_values  # noqa: E402
from humanoid_sim.ros.tf_serialization import SerializedJointState  # noqa: E402
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig  # noqa: E402

__all__ = ["StandingNode", "holding_feedforward", "load_line"]


def holding_feedforward(model, q0: np.ndarray) -> np.ndarray:
    """Joint torques [N m] holding q0 in double support: g = S^T tau + J_c^T f, min-norm f."""
    g = gravity_forces(model, q0)
    J = np.vstack([frame_jacobian(model, q0, foot) for foot in ("l_sole", "r_sole")])
    f = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    return g[6:] - J[:, 6:].T @ f


def load_line() -> str:
    """The load averages (1, 5, 15 min) as one phrase, printed beside every figure."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min, {os.cpu_count()} cores)"


class StandingNode:
    """The node process and the holding controller (an rclpy node of this process).

    namespace: the node's namespace; rate: joint_states_rate [Hz of simulation time], which is
    also the controller's rate; parameters: further node parameters (name -> value as text).
    ``start()`` waits for the node, connects the controller and resumes the (paused) node;
    ``spin_for()`` runs the controller; ``close()`` ends both.
    """

    def __init__(self, namespace: str, rate: float, rtf: float = 1.0, parameters: dict[str, str] | None = None) -> None:
        self.namespace = namespace
        self.model = model = load_urdf(REPO / "urdf" / "humanoid.urdf")
        environment = load_environment(REPO / "config" / "environment.yaml")
        self.q0 = Simulator(model, SimulatorConfig(environment=environment)).reset("stand")
        self.tau_ff = holding_feedforward(model, self.q0)
        # Legs stiffer than m g h (else the robot sags over its ankles), light joints soft:
        # gains that stay stable with the zero-order hold of the commands.
        leg = np.array([any(k in name for k in ("hip", "knee", "ankle")) for name in model.joint_names])
        self.kp, self.kd = np.where(leg, 1000.0, 100.0), np.where(leg, 10.0, 1.0)
        params = {"loop_mode": "realtime", "physics_dt": "0.001", "real_time_factor": str(rtf),
                  "joint_states_rate": str(rate), "tf_rate": "200.0", "diagnostics_rate": "1.0",
                  "initial_pose": "stand", "start_paused": "true", **(parameters or {})}
        args = [sys.executable, "-m", "humanoid_sim.ros.sim_node", "--ros-args", "-r", f"__ns:={namespace}"]
        for name, value in params.items():
            args += ["-p", f"{name}:={value}"]
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(args, env=env, stdout=self.log, stderr=self.log, text=True)

        self.node = rclpy.create_node(f"standing_controller_{os.getpid()}")
        self.command = self.node.create_publisher(Float64MultiArray, f"{namespace}/effort_controller/commands", 10)
        self.counts = {"joint_states": 0, "tf": 0}
        self.diagnostics: list[DiagnosticArray] = []
        self.diagnostics_wall: list[float] = []  # arrival [s, monotonic] of each diagnostics message
        self.base_height: list[float] = []
        self.trace: list[tuple[float, float, float]] = []  # (t [s of sim time], base x, base z)
        layout = SerializedJointState(list(model.joint_names))  # the node's joint_states layout
        q0_joints = self.q0[7:].copy()

        def on_state(data: bytes) -> None:
            self.counts["joint_states"] += 1
            position, velocity, _ = layout.read(data)
            tau = self.tau_ff - self.kp * (position - q0_joints) - self.kd * velocity  # model order
            self.command.publish(Float64MultiArray(data=tau.tolist()))

        def on_tf(data: bytes) -> None:
            self.counts["tf"] += 1

        def on_diagnostics(msg: DiagnosticArray) -> None:
            self.diagnostics_wall.append(time.monotonic())
            self.diagnostics.append(msg)

        def on_odom(msg: Odometry) -> None:
            p, stamp = msg.pose.pose.position, msg.header.stamp
            self.base_height.append(p.z)
            self.trace.append((stamp.sec + 1e-9 * stamp.nanosec, p.x, p.z))

        self.node.create_subscription(JointState, f"{namespace}/joint_states", on_state, 10, raw=True)
        self.node.create_subscription(TFMessage, f"{namespace}/tf", on_tf, 10, raw=True)
        self.node.create_subscription(DiagnosticArray, f"{namespace}/diagnostics", on_diagnostics, 10)
        self.node.create_subscription(Odometry, f"{namespace}/ground_truth/odom", on_odom, 10)

    def node_output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def start(self, timeout: float = 180.0) -> None:
        """Wait for the node's first diagnostics, connect the controller, send the holding
        torque, resume the node and wait for a diagnostics message of the running node.
        RuntimeError (with the node's output) when the node exits or does not come up."""
        deadline = time.monotonic() + timeout
        while not self.diagnostics:
            rclpy.spin_once(self.node, timeout_sec=0.05)
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the node did not come up:\n{self.node_output()}")
        while self.command.get_subscription_count() == 0 or self.node.count_publishers(f"{self.namespace}/joint_states") == 0:
            rclpy.spin_once(self.node, timeout_sec=0.05)
        self.command.publish(Float64MultiArray(data=self.tau_ff.tolist()))
        pause = self.node.create_client(SetBool, f"{self.namespace}/pause")
        pause.wait_for_service(timeout_sec=30.0)
        future = pause.call_async(SetBool.Request(data=False))
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=30.0)
        self.diagnostics.clear()
        while not self.diagnostics:
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def last_values(self) -> dict[str, str]:
        """The key/values of the newest diagnostics message."""
        return diagnostic_values(self.diagnostics[-1])

    def rss_mb(self) -> float:
        """Resident memory of the node process [MB] (VmRSS)."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def close(self) -> None:
        self.node.destroy_node()
        if self.process.poll() is None:
            self.process.send_signal(2)
        self.process.wait(timeout=30)
