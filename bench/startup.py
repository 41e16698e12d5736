"""Benchmark: start-up of the simulation node as ``ros2 run humanoid_sim sim_node`` starts it.

Runs the installed executable (``<prefix>/lib/humanoid_sim/sim_node``, what ``ros2 run`` and
launch files execute; the venv of scripts/setup.sh by default) ``--runs`` times from a
directory outside the source tree, with its default parameters (realtime mode: the robot
moves as soon as the physics thread runs), and prints per run the wall time from process
start until (1) its first joint_states reaches this process over DDS and (2) the first
joint_states of a running simulation (stamp > 0: the robot moving), whether the installed
copy's numba kernels were cached before the run (scripts/setup.sh compiles them; a cold start
compiles for about a minute on 2 cores) and the load average (the machine may be shared: the
figures hold for that load). ``--source`` starts ``python -m humanoid_sim.ros.sim_node`` from
the source tree instead.

    source scripts/env.sh && python bench/startup.py [--runs 3] [--source]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

import rclpy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

KERNELS_CACHED = "import sys; from humanoid_sim.numba_cache import kernels_cached; print(kernels_cached())"


def start_command(source: bool, namespace: str) -> tuple[list[str], dict[str, str], str]:
    """(command, environment, working directory) of one start."""
    ros_args = ["--ros-args", "-r", f"__ns:={namespace}"]
    if source:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        return [sys.executable, "-m", "humanoid_sim.ros.sim_node", *ros_args], env, str(REPO)
    executable = Path(sys.prefix) / "lib" / "humanoid_sim" / "sim_node"
    if not executable.exists():
        raise SystemExit(f"{executable} not found: run scripts/setup.sh (or pass --source)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return [str(executable), *ros_args], env, tempfile.gettempdir()


def kernels_cached(env: dict[str, str], cwd: str) -> bool:
    """Whether the copy that the start imports has its kernels cached."""
    out = subprocess.run([sys.executable, "-c", KERNELS_CACHED], env=env, cwd=cwd, capture_output=True, text=True)
    return out.stdout.strip() == "True"


def start_seconds(node, source: bool, namespace: str, timeout: float) -> tuple[float, float]:
    """Start the node; wall seconds until its first joint_states, and until the first with a
    stamp > 0 (simulation running). NaN for what did not come within ``timeout``."""
    first: list[float] = []
    moving: list[float] = []

    def on_state(msg: JointState) -> None:
        now = time.monotonic()
        first.append(now)
        if msg.header.stamp.sec or msg.header.stamp.nanosec:
            moving.append(now)

    subscription = node.create_subscription(JointState, f"{namespace}/joint_states", on_state, 10)
    command, env, cwd = start_command(source, namespace)
    start = time.monotonic()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not moving and time.monotonic() - start < timeout and process.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        process.send_signal(2)
        process.wait(timeout=20)
        node.destroy_subscription(subscription)
    return (first[0] - start if first else float("nan"), moving[0] - start if moving else float("nan"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="per run [s]")
    parser.add_argument("--source", action="store_true", help="start the source tree's node instead of the installed one")
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("startup_bench")
    what = "python -m humanoid_sim.ros.sim_node (source tree)" if args.source else "the installed sim_node (as ros2 run starts it)"
    print(f"start-up of {what}, default parameters (realtime), target: robot moving within 5 s on an idle machine")
    try:
        for run in range(args.runs):
            _, env, cwd = start_command(args.source, "/unused")
            cached = kernels_cached(env, cwd)
            load = os.getloadavg()
            state, moving = start_seconds(node, args.source, f"/startup_bench_{os.getpid()}_{run}", args.timeout)
            print(f"run {run + 1}: first joint_states after {state:.2f} s, robot moving after {moving:.2f} s"
                  f" ({'warm: kernels cached' if cached else 'cold: kernels compiled'});"
                  f" load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min, {os.cpu_count()} cores)")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
