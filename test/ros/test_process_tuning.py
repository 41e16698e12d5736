"""The executor choice, the spin loop and the priority of the nodes' processes."""

import gc
import os
import subprocess
import sys
import threading

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run scripts/setup.sh)")
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from humanoid_sim.ros.process_tuning import EXECUTOR_VARIABLE, freeze_startup_objects, make_executor, spin  # noqa: E402


def test_single_threaded_executor_on_request(monkeypatch):
    monkeypatch.setenv(EXECUTOR_VARIABLE, "single")
    rclpy.init()
    try:
        assert isinstance(make_executor(), SingleThreadedExecutor)
    finally:
        rclpy.shutdown()


@pytest.mark.parametrize("variant", ["", "single"])
def test_spin_runs_callbacks_and_timers_and_returns_at_shutdown(monkeypatch, variant):
    monkeypatch.setenv(EXECUTOR_VARIABLE, variant)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("process_tuning_spin", context=context)
    received, ticks = [], []
    node.create_subscription(String, "process_tuning_topic", received.append, 10)
    node.create_timer(0.02, lambda: ticks.append(1))
    publisher = node.create_publisher(String, "process_tuning_topic", 10)
    node.create_timer(0.02, lambda: publisher.publish(String(data="x")))
    worker = threading.Thread(target=spin, args=(node,), daemon=True)
    worker.start()
    try:
        for _ in range(200):
            if len(received) >= 3 and len(ticks) >= 3:
                break
            threading.Event().wait(0.02)
    finally:
        rclpy.shutdown(context=context)
    worker.join(timeout=5.0)
    assert not worker.is_alive(), "spin did not return after shutdown"
    assert len(received) >= 3 and len(ticks) >= 3
    node.destroy_node()


def test_freeze_moves_the_startup_objects_out_of_collection():
    freeze_startup_objects()
    assert gc.get_freeze_count() > 0
    gc.unfreeze()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are listed from /proc (Linux)")
def test_lower_priority_raises_the_nice_value_of_every_thread_of_the_process():
    # In a child process: the test runner's own priority stays as it is.
    script = (
        "import os, threading, time\n"
        "from humanoid_sim.ros.process_tuning import lower_priority\n"
        "stop = threading.Event()\n"
        "worker = threading.Thread(target=stop.wait); worker.start()\n"
        "before = {int(t): os.getpriority(os.PRIO_PROCESS, int(t)) for t in os.listdir('/proc/self/task')}\n"
        "lower_priority(5)\n"
        "after = {t: os.getpriority(os.PRIO_PROCESS, t) for t in before}\n"
        "stop.set(); worker.join()\n"
        "print(len(before), all(after[t] == min(19, before[t] + 5) for t in before))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert int(out[0]) >= 2 and out[1] == "True"


_FINALIZER_INTERRUPTED = """
import os, signal, sys
from humanoid_sim.ros.process_tuning import quiet_interrupt_in_finalizer
if sys.argv[1] == "hook":
    sys.unraisablehook = quiet_interrupt_in_finalizer
class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while a finalizer runs
        for _ in range(1000):  # the handler runs between these bytecodes, inside __del__
            pass
Finalized()
class Failing:
    def __del__(self):
        raise ValueError("a finalizer's own error")
Failing()
print("went on")
"""


@pytest.mark.parametrize("hook", ["hook", "default"])
def test_a_ctrl_c_in_a_finalizer_is_dropped_quietly_and_other_errors_are_not(hook):
    """A node's start can be interrupted while llvmlite runs a finalizer: the KeyboardInterrupt
    cannot propagate from there and Python prints it as an ignored exception with its
    traceback. With the nodes' hook it is dropped; a finalizer's own error is still printed."""
    done = subprocess.run([sys.executable, "-c", _FINALIZER_INTERRUPTED, hook], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0 and "went on" in done.stdout, done.stderr
    assert "ValueError: a finalizer's own error" in done.stderr
    assert ("KeyboardInterrupt" in done.stderr) == (hook == "default"), done.stderr
