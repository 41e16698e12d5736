"""Benchmark: the simulation node in real-time mode, 1 kHz physics, joint_states and tf at 200 Hz.

Starts ``python -m humanoid_sim.ros.sim_node`` in its own process (loop_mode realtime,
physics_dt 1 ms, real_time_factor 1, start_paused) with the bundled humanoid in its stand
pose, resumes it once the controller is connected, and runs
in this process a 200 Hz holding controller (PD + a constant contact-consistent gravity
compensation, computed with numpy on each joint_states message) over real DDS, like an
external ros2_control stack. The controller must not steal the node's CPU (2 cores here):
joint_states and tf arrive raw (no message objects; joint_states read by their fixed layout)
and the command goes out as one Float64MultiArray on effort_controller/commands.
After ``--duration`` wall seconds it prints what the node's /diagnostics report: achieved
real-time factor, share of late ticks, mean step time, mean and p99 tick cost (step +
publishing); the joint_states / tf rates received here; the lowest base height (the robot
must stand for the whole run) and the load average.

    source scripts/env.sh && python bench/node_realtime.py [--duration 60]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
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


def holding_feedforward(model, q0: np.ndarray) -> np.ndarray:
    """Joint torques [N m] holding q0 in double support: g = S^T tau + J_c^T f, min-norm f."""
    g = gravity_forces(model, q0)
    J = np.vstack([frame_jacobian(model, q0, foot) for foot in ("l_sole", "r_sole")])
    f = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    return g[6:] - J[:, 6:].T @ f


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="wall seconds to run after start-up [s]")
    parser.add_argument("--rtf", type=float, default=1.0, help="target real-time factor")
    options = parser.parse_args()

    model = load_urdf(REPO / "urdf" / "humanoid.urdf")
    q0 = Simulator(model, SimulatorConfig(environment=load_environment(REPO / "config" / "environment.yaml"))).reset("stand")
    tau_ff = holding_feedforward(model, q0)
    # Legs stiffer than m g h (else the robot sags over its ankles), light joints soft:
    # gains that stay stable with the 200 Hz zero-order hold of the commands.
    leg = np.array([any(k in name for k in ("hip", "knee", "ankle")) for name in model.joint_names])
    kp, kd = np.where(leg, 1000.0, 100.0), np.where(leg, 10.0, 1.0)

    namespace = f"/bench_{os.getpid()}"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = tempfile.TemporaryFile(mode="w+")
    args = [sys.executable, "-m", "humanoid_sim.ros.sim_node", "--ros-args", "-r", f"__ns:={namespace}",
            "-p", "loop_mode:=realtime", "-p", "physics_dt:=0.001", "-p", f"real_time_factor:={options.rtf}",
            "-p", "joint_states_rate:=200.0", "-p", "tf_rate:=200.0", "-p", "diagnostics_rate:=1.0",
            "-p", "initial_pose:=stand", "-p", "start_paused:=true"]
    process = subprocess.Popen(args, env=env, stdout=log, stderr=log, text=True)

    rclpy.init()
    node = rclpy.create_node("node_realtime_bench")
    command = node.create_publisher(Float64MultiArray, f"{namespace}/effort_controller/commands", 10)
    counts = {"joint_states": 0, "tf": 0}
    last_diagnostics: list[DiagnosticArray] = []
    diagnostics_wall: list[float] = []  # arrival time [s, monotonic] of each diagnostics message

    def on_diagnostics(msg: DiagnosticArray) -> None:
        diagnostics_wall.append(time.monotonic())
        last_diagnostics.append(msg)
    names = list(model.joint_names)
    layout = SerializedJointState(names)  # the node's joint_states layout: read the raw bytes directly
    q0_joints = q0[7:].copy()

    def on_state(data: bytes) -> None:
        counts["joint_states"] += 1
        position, velocity, _ = layout.read(data)
        tau = tau_ff - kp * (position - q0_joints) - kd * velocity  # effort_controller order = model order
        command.publish(Float64MultiArray(data=tau.tolist()))

    def on_tf(data: bytes) -> None:
        counts["tf"] += 1

    node.create_subscription(JointState, f"{namespace}/joint_states", on_state, 10, raw=True)
    node.create_subscription(TFMessage, f"{namespace}/tf", on_tf, 10, raw=True)
    node.create_subscription(DiagnosticArray, f"{namespace}/diagnostics", on_diagnostics, 10)
    base_height: list[float] = []
    trace: list[tuple[float, float, float]] = []

    def on_odom(msg: Odometry) -> None:
        base_height.append(msg.pose.pose.position.z)
        trace.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, msg.pose.pose.position.x, msg.pose.pose.position.z))

    node.create_subscription(Odometry, f"{namespace}/ground_truth/odom", on_odom, 10)
    try:
        start_wait = time.monotonic()
        while not last_diagnostics and time.monotonic() - start_wait < 180.0:
            rclpy.spin_once(node, timeout_sec=0.05)
            if process.poll() is not None:
                log.seek(0)
                print(log.read(), file=sys.stderr)
                return 1
        # The node starts paused: connect the controller, send the holding torque, then resume.
        while command.get_subscription_count() == 0 or node.count_publishers(f"{namespace}/joint_states") == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        command.publish(Float64MultiArray(data=tau_ff.tolist()))
        pause = node.create_client(SetBool, f"{namespace}/pause")
        pause.wait_for_service(timeout_sec=30.0)
        future = pause.call_async(SetBool.Request(data=False))
        rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
        last_diagnostics.clear()
        while not last_diagnostics:
            rclpy.spin_once(node, timeout_sec=0.05)
        counts.update(joint_states=0, tf=0)
        base_height.clear()
        load_start = os.getloadavg()
        first = diagnostic_values(last_diagnostics[-1])
        first_wall = diagnostics_wall[-1]
        t0 = time.monotonic()
        while time.monotonic() - t0 < options.duration:
            rclpy.spin_once(node, timeout_sec=0.05)
        wall = time.monotonic() - t0
        last = diagnostic_values(last_diagnostics[-1])
        diagnostics_span = diagnostics_wall[-1] - first_wall  # the wall time the two messages bracket
        load_end = os.getloadavg()
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        process.send_signal(2)
        process.wait(timeout=30)

    ticks = int(last["ticks"]) - int(first["ticks"])
    late = int(last["late_ticks"]) - int(first["late_ticks"])
    sim_seconds = float(last["sim_time_s"]) - float(first["sim_time_s"])
    print(f"node realtime bench: physics_dt 1 ms, target RTF {options.rtf}, joint_states and tf at 200 Hz (sim time)")
    print(f"  measured over {diagnostics_span:.2f} s of wall time (between the arrivals of two diagnostics messages)")
    print(f"  ticks: {ticks}, simulated {sim_seconds:.3f} s -> real-time factor {sim_seconds / diagnostics_span:.3f}")
    print(f"  late ticks: {late} ({100.0 * late / max(ticks, 1):.1f} %), schedule resets: {last['schedule_resets']}")
    print(f"  mean step time {last['step_time_mean_ms']} ms, max {last['step_time_max_ms']} ms (whole run)")
    print(f"  tick cost (step + publishing) over the node's last 4096 ticks: "
          f"mean {last['tick_time_mean_ms']} ms, p99 {last['tick_time_p99_ms']} ms")
    print(f"  received here: joint_states {counts['joint_states'] / wall:.1f} Hz, tf {counts['tf'] / wall:.1f} Hz (wall)")
    print(f"  base height: start {q0[2]:.4f} m, min {min(base_height):.4f} m, end {base_height[-1]:.4f} m"
          f" ({'stood' if min(base_height) > q0[2] - 0.05 else 'FELL'} the whole run)")
    print(f"  contacts at the end: {last['contacts']}, ZMP margin {last['zmp_margin_m']} m, rejected commands {last['rejected_commands']}")
    print(f"  commands accepted {last['commands_accepted']}, ticks under the command-timeout behaviour {last['command_timeout_ticks']}")
    print(f"  load average (1 min) at start {load_start[0]:.2f}, at end {load_end[0]:.2f} (2 cores)")
    if os.environ.get("BENCH_TRACE"):
        for t, x, z in trace[::50]:
            print(f"    t {t:7.3f} s  base x {x:+.4f} m  z {z:.4f} m")
    return 0


if __name__ == "__main__":
    sys.exit(main())
