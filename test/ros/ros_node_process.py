"""Test helpers: run the simulation node in its own process; listen to it over real DDS."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from package_under_test import REPO, python_command, subprocess_env

# How long a new service client lets discovery run before its first call (Listener.client).
CLIENT_DISCOVERY_S = 0.5
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


def parameter_argument(name: str, value: Any) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in value) + "]"
    else:
        text = str(value)
    return f"{name}:={text}"


def start_node(namespace: str, parameters: dict[str, Any], module: str = "humanoid_sim.ros.sim_node") -> subprocess.Popen:
    """``python -m <module>`` of the copy under test in its own process, in ``namespace``."""
    env = subprocess_env()
    args = python_command("-m", module, "--ros-args", "-r", f"__ns:={namespace}")
    for name, value in parameters.items():
        args += ["-p", parameter_argument(name, value)]
    # Output to files, not pipes: a pipe nobody drains would block a chatty node.
    out = tempfile.TemporaryFile(mode="w+")
    err = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(args, env=env, stdout=out, stderr=err, text=True)
    process.out_file, process.err_file = out, err  # type: ignore[attr-defined]
    return process


def _output(process: subprocess.Popen) -> tuple[str, str]:
    texts = []
    for f in (process.out_file, process.err_file):  # type: ignore[attr-defined]
        f.seek(0)
        texts.append(f.read())
    return texts[0], texts[1]


def stop_node(process: subprocess.Popen, timeout: float = 15.0) -> tuple[int, str, str]:
    """SIGINT (as ros2 launch does), wait; returns (exit code, stdout, stderr)."""
    if process.poll() is None:
        process.send_signal(2)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return (process.returncode, *_output(process))


class Listener:
    """An rclpy node in the test process that records messages per topic."""

    def __init__(self, name: str, namespace: str, process: subprocess.Popen | None = None) -> None:
        """process: the node under test, if any: waits then stop with its output when it exits,
        and a service that does not answer is reported with the node's last words."""
        self.node = rclpy.create_node(name)
        self.namespace = namespace
        self.process = process
        self.messages: dict[str, list] = defaultdict(list)
        self.arrival: dict[str, list[float]] = defaultdict(list)
        self._clients: dict[tuple[type, str], Any] = {}

    def topic(self, relative: str) -> str:
        return f"{self.namespace}/{relative}"

    def subscribe(self, msg_type: type, relative: str, qos: Any = 100, keep: bool = True) -> None:
        def callback(msg: Any) -> None:
            self.arrival[relative].append(time.monotonic())
            if keep:
                self.messages[relative].append(msg)
            else:
                self.messages[relative][:] = [msg]

        self.node.create_subscription(msg_type, self.topic(relative), callback, qos)

    def publisher(self, msg_type: type, relative: str, depth: int = 1000):
        return self.node.create_publisher(msg_type, self.topic(relative), depth)

    def spin_until(self, done: Callable[[], bool], timeout: float, process: subprocess.Popen | None = None) -> bool:
        process = process or self.process
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
            if process is not None and process.poll() is not None:
                raise AssertionError(f"the node process exited with {process.returncode}: {_output(process)[1]}")
        return done()

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def client(self, srv_type: type, relative: str, timeout: float = 20.0) -> Any:
        """One client per service for the life of the listener, ready to be answered.

        wait_for_service says that the node's request reader has matched this client, not that
        the node has matched the client's response reader: rmw_fastrtps drops a response to a
        client it has not matched within the response writer's blocking time, and a client
        created for each call loses an answer now and then on a loaded machine. A new client
        therefore waits a moment after the service appears; later calls reuse it."""
        key = (srv_type, relative)
        if key not in self._clients:
            client = self.node.create_client(srv_type, self.topic(relative))
            assert client.wait_for_service(timeout_sec=timeout), f"service {relative} not available"
            self.spin_for(CLIENT_DISCOVERY_S)
            self._clients[key] = client
        return self._clients[key]

    def call(self, srv_type: type, relative: str, request: Any, timeout: float = 20.0) -> Any:
        future = self.client(srv_type, relative, timeout).call_async(request)
        if not self.spin_until(future.done, timeout):
            raise AssertionError(f"service {relative} did not answer in {timeout:g} s{self.node_tail()}")
        return future.result()

    def node_tail(self, characters: int = 3000) -> str:
        """"; the node is running/exited; its output ends: ..." for a failure message ("" without a node)."""
        if self.process is None:
            return ""
        state = "running" if self.process.poll() is None else f"exited with {self.process.returncode}"
        out, err = _output(self.process)
        return f"; the node is {state}; its output ends:\n{(out + err)[-characters:]}"

    def destroy(self) -> None:
        self.node.destroy_node()


def wait_exit(process: subprocess.Popen, timeout: float) -> tuple[int, str, str]:
    """Wait for the process to exit by itself; (exit code, stdout, stderr)."""
    process.wait(timeout=timeout)
    return (process.returncode, *_output(process))


def sim_call(listener: Listener, srv_type: type, name: str, request: Any = None, timeout: float = 20.0) -> Any:
    """Call the node's service ``humanoid_sim/<name>`` (the default node name) and wait for the answer."""
    return listener.call(srv_type, f"humanoid_sim/{name}", request or srv_type.Request(), timeout=timeout)


def sim_step(listener: Listener, steps: int, timeout: float = 60.0) -> None:
    """``steps`` ticks of the paused node through simulation_interfaces' step_simulation; asserts they ran."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation

    answer = sim_call(listener, StepSimulation, "step_simulation", StepSimulation.Request(steps=steps), timeout)
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message
