"""Benchmark: start-up of the simulation node, from process start to the first joint_states.

Starts ``python -m humanoid_sim.ros.sim_node`` (lock-step, the bundled humanoid) ``--runs``
times and prints, per run, the wall time until its first joint_states reaches this process
over DDS, and whether the numba kernels were in the cache before the run (a first start after
an install or a change compiles them: about a minute on 2 cores; a warm start should be a few
seconds). Prints the load average beside the figures: the machine may be shared.

    source scripts/env.sh && python bench/startup.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import rclpy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from humanoid_sim.numba_cache import kernels_cached  # noqa: E402


def first_state_seconds(node, namespace: str, timeout: float) -> float:
    """Start the node; wall seconds until its first joint_states arrives (lock-step re-publishes it)."""
    received: list[float] = []
    subscription = node.create_subscription(
        JointState, f"{namespace}/joint_states", lambda msg: received.append(time.monotonic()), 10
    )
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "humanoid_sim.ros.sim_node", "--ros-args", "-r", f"__ns:={namespace}",
         "-p", "loop_mode:=lockstep"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        while not received and time.monotonic() - start < timeout and process.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        process.send_signal(2)
        process.wait(timeout=20)
        node.destroy_subscription(subscription)
    return received[0] - start if received else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0, help="per run [s]")
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("startup_bench")
    try:
        for run in range(args.runs):
            cached = kernels_cached()
            seconds = first_state_seconds(node, f"/startup_bench_{os.getpid()}_{run}", args.timeout)
            print(f"run {run + 1}: first joint_states after {seconds:.2f} s"
                  f" ({'warm: kernels cached' if cached else 'cold: kernels compiled'}); load {os.getloadavg()}")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
