"""The simulation node's physics thread: one tick after another, paced to real time (realtime
mode) or as fast as possible (fast mode); lockstep mode has no thread (commands tick).

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py): ``_do_tick`` and the lock are the
node's. In realtime mode a tick that ends after its wall-time slot is counted late and the
next ticks run without sleeping until the schedule is met again (a backlog over
MAX_BACKLOG_S is dropped and counted as a schedule reset). The thread may run under
SCHED_FIFO (``thread_priority``).
"""

from __future__ import annotations

import os
import threading
import time

import rclpy

__all__ = ["FIFO_CALM_GAP_S", "FIFO_RECOVERY_S", "FIFO_SATURATED_S", "MAX_BACKLOG_S", "PhysicsLoop"]

# A backlog longer than this [s of wall time] is dropped in realtime mode: the loop restarts
# its schedule instead of running a burst of catch-up ticks (counted as a schedule reset).
# Long enough to absorb the moments when another process holds the CPU for a few ms (on 2
# cores with the controller and a recorder: stalls of 5-15 ms several times a second); short,
# because during a burst simulated time outruns the controller, whose torques then apply to
# states up to this much newer than the ones they answer (the walking controller tolerates
# 20 ms; 100 ms of held torque drops it). Dropped backlog is simulated time lost: RTF < 1.
MAX_BACKLOG_S = 0.02
# A SCHED_FIFO physics thread that has not slept for this long [s of wall time] cannot hold
# real_time_factor; it goes back to normal scheduling rather than keep a CPU from every other
# thread of the machine (the controller's among them).
FIFO_SATURATED_S = 0.5
# Once the overrun has passed, the thread returns to SCHED_FIFO: after it has slept at least
# every FIFO_CALM_GAP_S for FIFO_RECOVERY_S [s of wall time], doubled at each further drop
# (so a machine that cannot hold real time does not flip the thread back and forth).
FIFO_CALM_GAP_S = 0.1
FIFO_RECOVERY_S = 2.0

class PhysicsLoop:
    """The physics thread of SimNode (a mixin: ``self`` is the node). ``start()`` publishes the
    initial state and starts the thread (not in lockstep mode); ``stop()`` joins it."""

    def start(self) -> None:
        """Publish the initial state; start the physics thread (not in lockstep mode)."""
        with self._lock:
            self._publish_state_now()
        if self.params.loop_mode == "lockstep":
            return
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="humanoid_sim_physics", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None

    def _loop(self) -> None:
        fifo = False
        if self.params.loop_mode == "realtime":
            self.thread_scheduling = self._raise_thread_priority(self.params.thread_priority)
            fifo = self.thread_scheduling.startswith("SCHED_FIFO")
        fifo_granted = fifo  # whether SCHED_FIFO may be taken again after leaving it
        drops = 0
        calm_since = 0.0
        self._reschedule = True
        deadline = 0.0
        last_sleep = time.perf_counter()
        while self._running.is_set():
            if self._paused:
                time.sleep(0.005)
                self._reschedule = True
                last_sleep = time.perf_counter()
                continue
            realtime = self.params.loop_mode == "realtime"
            if realtime:
                now = time.perf_counter()
                if self._reschedule:
                    self._reschedule = False
                    deadline = now
                period = self._wall_period
                if deadline - now > 0.0:
                    if not fifo and fifo_granted:
                        if now - last_sleep > FIFO_CALM_GAP_S:
                            calm_since = now  # still overrunning: the calm starts again
                        elif now - calm_since >= FIFO_RECOVERY_S * 2**(drops - 1):
                            fifo = True
                            self.thread_scheduling = self._restore_thread_priority(now - calm_since)
                    time.sleep(deadline - now)
                    last_sleep = now
                elif fifo and now - last_sleep > FIFO_SATURATED_S:
                    fifo = False
                    drops += 1
                    calm_since = now
                    self.thread_scheduling = self._lower_thread_priority(now - last_sleep)
            with self._lock:
                if self._paused:
                    continue
                try:
                    ticked = self._do_tick() is not None
                except Exception:  # noqa: BLE001 - publishing after rclpy shut down (SIGINT/SIGTERM)
                    if not rclpy.ok(context=self.context):
                        return
                    raise
            if realtime and ticked:
                self.paced_ticks += 1  # the ticks late_ticks counts among (late_tick_share <= 1)
                deadline += period
                finished = time.perf_counter()
                if finished > deadline:
                    self.late_ticks += 1  # the tick ended after the end of its wall-time slot
                    if finished - deadline > MAX_BACKLOG_S:
                        self.schedule_resets += 1
                        deadline = finished
            else:
                time.sleep(0)  # let the executor thread take the GIL for commands and services

    def _lower_thread_priority(self, busy_s: float) -> str:
        """Back to normal scheduling for the calling (physics) thread, which has run for
        ``busy_s`` [s] without sleeping. Returns how it is scheduled, for /diagnostics."""
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        self.get_logger().warning(
            f"the physics thread ran {busy_s:.2f} s without sleeping: it cannot hold real_time_factor"
            f" {self.params.real_time_factor:g} here, and under SCHED_FIFO it would keep a CPU from every other"
            " thread; it runs at normal priority until the overrun has passed"
        )
        return "normal (SCHED_FIFO left: real time not held)"

    def _restore_thread_priority(self, calm_s: float) -> str:
        """Back to SCHED_FIFO at thread_priority for the calling (physics) thread, whose overrun
        passed ``calm_s`` [s] ago. Returns how it is scheduled, for /diagnostics."""
        priority = self.params.thread_priority
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except OSError as exc:
            return f"normal (SCHED_FIFO not restored: {exc.strerror or exc})"
        self.get_logger().info(f"the physics thread holds real time again ({calm_s:.1f} s): back to SCHED_FIFO {priority}")
        return f"SCHED_FIFO {priority} (restored)"

    def _raise_thread_priority(self, priority: int) -> str:
        """Put the calling (physics) thread under SCHED_FIFO at ``priority`` (0: leave it).
        Returns how it is scheduled, for /diagnostics.

        Under normal scheduling every DDS, executor and controller thread that wakes up may
        preempt a tick (measured here on 2 cores: two preemptions per tick, ticks stretched by
        up to 10 ms); a FIFO thread runs until it sleeps. It sleeps between ticks, so the rest
        of the machine keeps the CPU time it needs."""
        if priority <= 0:
            return "normal"
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except (OSError, AttributeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.get_logger().warning(
                f"could not give the physics thread SCHED_FIFO priority {priority} ({reason}): it runs at normal"
                " priority, where other threads may preempt its ticks (late ticks, real-time factor below target)."
                " Allow it with an rtprio limit (e.g. '@realtime - rtprio 98' in /etc/security/limits.conf, as"
                " for ros2_control) or set thread_priority to 0 to silence this"
            )
            return "normal (SCHED_FIFO refused)"
        return f"SCHED_FIFO {priority}"
