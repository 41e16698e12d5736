"""Process settings for nodes with a real-time loop in CPython: garbage collector, executor.

Python's cyclic garbage collector pauses the whole process while it scans every tracked
object; after the imports of rclpy, numpy, scipy and numba a node holds ~10^5 of them, and
a full collection takes 40 ms or more here. A 1 kHz loop cannot absorb that: a controller
that stalls for 100 ms in single support lets the robot fall. The objects made at start-up
live as long as the process, so they are collected once and then frozen (``gc.freeze``:
moved to a permanent generation the collector no longer scans); what the loop allocates
afterwards is still collected as usual, in pauses of microseconds.
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys
from collections.abc import Callable

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

# Environment variable: "single" makes make_executor return rclpy's SingleThreadedExecutor.
EXECUTOR_VARIABLE = "HUMANOID_SIM_EXECUTOR"


def freeze_startup_objects() -> None:
    """Collect once, then exempt every object alive now from later collections. Call after
    the node is built (and its kernels compiled), before spinning."""
    gc.collect()
    gc.freeze()


def release_free_memory() -> bool:
    """Give the heap memory freed since the last call back to the system (glibc
    ``malloc_trim(0)``: ~0.2 ms here). Large messages received and dropped (a flood of commands
    of a million values) otherwise leave the process's resident size grown for good, since
    glibc keeps large freed blocks in its arenas. Returns whether it ran (False off glibc)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def resident_mb() -> float:
    """This process's resident memory [MB] (Linux ``/proc/self/statm``; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, IndexError, ValueError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def exit_with_parent(sig: int = signal.SIGINT) -> bool:
    """Ask Linux to send ``sig`` to this process when the process that started it ends
    (``prctl(PR_SET_PDEATHSIG)``), so that a node whose ``ros2 launch`` dies abnormally shuts
    down (SIGINT: rclpy's clean shutdown) instead of running on as an orphan. Returns whether it
    is set (False off Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return True


def quiet_interrupt_in_finalizer(unraisable) -> None:
    """A ``sys.unraisablehook``: a Ctrl-C / SIGINT that lands while a finalizer runs (a
    ``__del__``, e.g. llvmlite's while the kernels load) cannot propagate and is dropped
    without a traceback -- rclpy has already shut its context down, so the starting node stops
    there as it would have; anything else goes to the default hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def run_node_main(run: Callable[[list[str] | None], int], argv: list[str] | None) -> int:
    """A node executable's main: ``run(argv)`` (init, spin, shutdown; returns the exit code),
    asking for SIGINT when the starting process dies (exit_with_parent); a Ctrl-C / SIGINT
    that comes while the node starts (compiles) or stops ends it with exit code 0 and no
    traceback, also one that lands in a finalizer (quiet_interrupt_in_finalizer)."""
    exit_with_parent()
    sys.unraisablehook = quiet_interrupt_in_finalizer
    try:
        return run(argv)
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    except Exception:
        # after rclpy.init, SIGINT shuts the context down instead of raising: whatever the
        # starting node was creating then fails ("context is invalid"); that is a Ctrl-C too
        if not rclpy.ok():
            return 0
        raise


def lower_priority(niceness: int = 10) -> None:
    """Raise this process's nice value by ``niceness`` for every thread it has now (Linux keeps
    one per thread; threads started later inherit their creator's), so that an observer such
    as the demo's recorder gives way to the simulator and the controller when they need the CPU.
    Raising it needs no privilege; where the threads cannot be listed, only the calling thread
    changes."""
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + niceness))
        except OSError:
            pass  # a thread that ended meanwhile


def make_executor(context: Context | None = None) -> Executor:
    """An executor for a node with high-rate topics: rclpy's EventsExecutor when this rclpy
    has it (and HUMANOID_SIM_EXECUTOR is not ``single``), else the SingleThreadedExecutor.

    The SingleThreadedExecutor rebuilds its wait set over every subscription, timer and
    service for each callback it runs; the EventsExecutor dispatches callbacks from events
    queued in C++. Measured here with 20 subscriptions receiving 2.8 kHz of JointState and
    WrenchStamped messages: 105 % of a core (and messages dropped) against 29 %.
    Use it through ``spin_once``: its ``spin()`` (rclpy 9.1, experimental) busy-waits at 100 %
    of a core and starves timers; ``spin_once`` with a timeout runs timers, services and
    clients and idles at < 1 %.
    """
    if os.environ.get(EXECUTOR_VARIABLE, "") != "single":
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def spin(node: Node) -> None:
    """Run ``node``'s callbacks on ``make_executor()`` until its context shuts down (like
    ``rclpy.spin``, but a shutdown from elsewhere, e.g. SIGINT, simply ends it)."""
    executor = make_executor(node.context)
    executor.add_node(node)
    try:
        while rclpy.ok(context=node.context):
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        executor.remove_node(node)
