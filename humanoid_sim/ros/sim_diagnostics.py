"""The simulation node's /diagnostics: real-time factor, late ticks, tick costs, solver rounds,
the solve integrated and its sweeps, active joint limits, command counts and ages, pushes.

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py), which owns the counters it reads.
Published at ``diagnostics_rate`` in wall time; first, what memory_watch decides: freed heap
memory handed back (process_tuning.release_free_memory) during and after a flood of rejected
commands or when the resident size grew, the command readers renewed after a flood that left
partly received huge samples in them (command_intake: the new readers take over once matched).
"""

from __future__ import annotations

import math
import time

import numpy as np
import rclpy

from humanoid_sim.ros import conversions as cv
from humanoid_sim.ros.memory_watch import MemoryAction
from humanoid_sim.ros.process_tuning import release_free_memory, resident_mb

__all__ = ["COMMAND_AGE_WINDOW", "TICK_COST_WINDOW", "NodeDiagnostics"]

# Stamped commands kept for the command-age statistics of /diagnostics.
COMMAND_AGE_WINDOW = 1024
# Ticks kept for the tick-cost statistics of /diagnostics (mean and 99th percentile).
TICK_COST_WINDOW = 4096


class NodeDiagnostics:
    """Diagnostics of SimNode (a mixin: ``self`` is the node)."""

    def diagnostics_values(self) -> tuple[dict[str, object], list[str], list[str]]:
        """(values, warnings, errors) for /diagnostics; also used by the bench script."""
        with self._lock:
            now = time.monotonic()
            wall0, tick0 = self._stats_window
            if now > wall0:
                self._rtf_window = (self._tick - tick0) * self.params.physics_dt / (now - wall0)
            self._stats_window = (now, self._tick)
            result = self._last_result
            report = self.limits.report()
            ticks = self._tick
            values: dict[str, object] = {
                "loop_mode": self.params.loop_mode,
                "paused": self._paused,
                "sim_time_s": ticks * self._ns_per_tick / 1e9,
                "ticks": ticks,
                "real_time_factor": self._rtf_window,
                "real_time_factor_total": (
                    (ticks - self._first_tick) * self.params.physics_dt / (now - self._first_tick_wall)
                    if self._first_tick_wall is not None and now > self._first_tick_wall else math.nan
                ),
                "real_time_factor_target": self.params.real_time_factor,
                "physics_thread_scheduling": self.thread_scheduling,
                "late_ticks": self.late_ticks,
                "late_tick_share": self.late_ticks / self.paced_ticks if self.paced_ticks else 0.0,
                "schedule_resets": self.schedule_resets,
                "step_time_mean_ms": 1e3 * self.step_seconds_sum / ticks if ticks else 0.0,
                "step_time_max_ms": 1e3 * self.step_seconds_max,
                **self._tick_cost_values(),
                "solver_rounds": result.rounds if result else 0,
                "solver_rounds_max": self.max_rounds_seen,
                "solve_validated": result.validated if result else True,
                "solver": result.solver if result else "none",
                "solver_sweeps": result.sweeps if result else 0,
                "contacts": len(result.contacts) if result else 0,
                "zmp_margin_m": float(result.zmp.margin) if result else math.nan,
                "active_limits": ", ".join(report.names) or "none",
                "limit_torques": ", ".join(
                    f"{name}={force:.3g}" for name, force in zip(report.names, report.force)
                ) or "none",
                "commands_accepted": self.accepted_commands,
                "rejected_commands": self.rejections.total,
                "command_reader_renewals": self.memory_watch.renewals,
                **{f"rejected_{kind}": count for kind, count in self.rejections.counts.items()},
                "command_timeout_ticks": self.timeout_ticks,
                "pushes_applied": self.pushes.pushes_applied,
                "pushes_refused": self.pushes_refused,
                "pushes_acting": ", ".join(push.link for push in self.pushes.active()) or "none",
                **self._command_age_values(),
            }
            warnings, errors = [], []
            if self.paced_ticks and self.late_ticks / self.paced_ticks > 0.05:
                warnings.append(f"{100.0 * self.late_ticks / self.paced_ticks:.1f}% late ticks")
            if result is not None and result.zmp.margin < 0.0:
                warnings.append("ZMP outside the support polygon")
            if self.rejections.total:
                warnings.append(f"{self.rejections.total} commands rejected")
            if self._failed:
                errors.append(f"simulation failed: {self._failed}")
            return values, warnings, errors

    def _tick_cost_values(self) -> dict[str, float]:
        """Mean and 99th percentile [ms] of the cost of a tick (step + publishing) over the last ticks."""
        costs = self._tick_costs[: min(self._tick_costs_seen, TICK_COST_WINDOW)]
        if not len(costs):
            return {"tick_time_mean_ms": 0.0, "tick_time_p99_ms": 0.0}
        return {"tick_time_mean_ms": 1e3 * float(costs.mean()), "tick_time_p99_ms": 1e3 * float(np.percentile(costs, 99.0))}

    def _command_age_values(self) -> dict[str, float]:
        """Mean and largest age [ms of sim time] of the last stamped commands when they came in
        (tick time minus header stamp: how stale the state was that the command answers)."""
        ages = self._command_ages[: min(self._command_ages_seen, COMMAND_AGE_WINDOW)]
        if not len(ages):
            return {"command_age_mean_ms": math.nan, "command_age_max_ms": math.nan}
        return {"command_age_mean_ms": float(ages.mean()), "command_age_max_ms": float(ages.max())}

    def _release_memory(self) -> None:
        """Hand freed memory back, and renew the command readers, as memory_watch decides."""
        if self._retiring_subscriptions and self._retire_command_readers():
            self.memory_watch.readers_retired()  # their memory is handed back next period
        action = self.memory_watch.period(self.rejections.total, resident_mb())
        if action is MemoryAction.NOTHING:
            return
        release_free_memory()
        if action is MemoryAction.RELEASE_AND_CHECK:
            held = resident_mb()
            if not self._retiring_subscriptions and self.memory_watch.renew_readers(held):
                self._make_command_subscriptions()
                self.get_logger().info(
                    f"renewing the command readers after {self.rejections.total} rejected commands, the node"
                    f" holding {held - self.memory_watch.calm_mb:.1f} MB more than before them (partly received"
                    " samples of huge commands)"
                )
        self.memory_watch.released(resident_mb())

    def _publish_diagnostics(self) -> None:
        self._release_memory()
        values, warnings, errors = self.diagnostics_values()
        ns = self._tick * self._ns_per_tick
        message = cv.diagnostic_message(ns, f"{self.get_name()}: simulation", self.model.name, values, warnings, errors)
        try:
            self.pub_diagnostics.publish(message)
        except Exception:  # noqa: BLE001 - the timer fired while a signal shut rclpy down: nothing to report
            if rclpy.ok(context=self.context):
                raise
