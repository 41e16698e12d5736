"""The simulation node's own services: reset, pause, step (std_srvs) and push (the
simulation_interfaces standard's are in simulation_interfaces_services).

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py), which owns the state they change
under its lock.
"""

from __future__ import annotations

import numpy as np
from std_srvs.srv import SetBool, Trigger

from humanoid_sim.errors import InvalidValueError, UnknownNameError

__all__ = ["SimServices"]


class SimServices:
    """Service callbacks of SimNode (a mixin: ``self`` is the node)."""

    def _reset_state(self) -> None:
        """Back to the initial state at rest (the time runs on); pushes and commands forgotten."""
        with self._lock:
            self.simulator.set_state(self.q_initial, self.v_initial)
            self.pushes.clear()
            with self._command_lock:
                self._command[:] = 0.0
                self._command_received = False
            self._failed = ""
            self._previous_result = self._last_result = None
            self._reschedule = True
            self._publish_state_now()

    def _set_paused(self, pause: bool) -> str:
        """Pause or resume; returns why it cannot resume ("" when done)."""
        with self._lock:
            if not pause and self._failed:
                return f"simulation failed ({self._failed}); call reset first"
            if self._paused and not pause:
                self._first_tick_wall = None  # real_time_factor_total counts from this resume
            self._paused = pause
            self._reschedule = True
            if not pause and self.params.loop_mode == "lockstep":
                # A lock-step simulator ticks on commands; commands that came while it was paused
                # answered states it no longer waits for. The state again: its answer is the next tick.
                self._publish_state_now()
        return ""

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self._reset_state()
        response.success, response.message = True, "reset to the initial state"
        return response

    def _on_pause(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        error = self._set_paused(bool(request.data))
        if error:
            response.success, response.message = False, error
            return response
        response.success, response.message = True, "paused" if request.data else "running"
        return response

    def _on_step(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            if not self._paused:
                response.success, response.message = False, "not paused: call pause with data=true first"
                return response
            if self._failed:
                response.success, response.message = False, f"simulation failed ({self._failed}); call reset first"
                return response
            result = self._do_tick(every_state=True)  # clock, joint_states, odometry, tf: once each
            if result is None:
                response.success, response.message = False, self._failed
                return response
        response.success, response.message = True, f"stepped to t = {self._tick * self._ns_per_tick / 1e9:.6f} s"
        return response

    def _on_push(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Push push_link with push_wrench (odom axes) at push_point (link frame) for push_duration,
        from the next tick on; refused with the reason for an unknown link or a bad value."""
        p = self.params
        with self._lock:
            try:
                push = self.pushes.add(p.push_link, p.push_wrench, p.push_duration, self.simulator.t, p.push_point)
            except (UnknownNameError, InvalidValueError) as exc:
                self.pushes_refused += 1
                response.success, response.message = False, f"push refused: {exc}"
                return response
        f, n = push.wrench[:3], push.wrench[3:]
        response.success = True
        response.message = (
            f"pushing {push.link!r} with force {np.round(f, 6).tolist()} N and moment {np.round(n, 6).tolist()} N m"
            f" for {push.end - push.start:g} s"
        )
        return response
