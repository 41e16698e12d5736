"""The simulation node's command intake: torque commands in, validated, held for the ticks.

A mixin of ``SimNode`` (humanoid_sim/ros/sim_node.py). A joint_commands message naming every
joint in the model's order with only effort set is read from its raw bytes; any other is
deserialized and checked by name (command_validation), unless its bytes already say it names
more joints than the robot has (refused undeserialized: a flood of huge commands costs little).
An effort_controller/commands message is read from its bytes too (command_bytes): its length
first, then its values as a view of the bytes.
A rejected command is counted by kind, logged (throttled) and changes nothing; in lockstep
mode an accepted one runs a tick. The command readers can be renewed (memory_watch: after a
flood that left partly received huge samples in them).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_sim.ros import conversions as cv
from humanoid_sim.ros.command_bytes import multi_array_values
from humanoid_sim.ros.command_validation import (
    MAX_EFFORT,
    WRONG_LENGTH,
    CommandCheck,
    check_array_command,
    check_named_command,
    rejection,
)
from humanoid_sim.ros.sim_diagnostics import COMMAND_AGE_WINDOW

__all__ = ["COMMAND_QUEUE", "NEWEST_COMMANDS", "CommandIntake"]

# Commands queued (reliable) in lockstep mode, where each one runs a tick: a lock-step client
# sends one and waits for the state. The DDS reader holds samples of whatever size comes (a
# command of a million values is 8-20 MB), so the queue is no deeper than a client needs.
COMMAND_QUEUE = 10
# Commands kept (best effort, newest first) in realtime and fast modes, where a tick applies
# the newest valid command: a burst between two executor wake-ups (a flood of malformed
# commands with the controller's among them) is taken in order, so the valid one still lands.
NEWEST_COMMANDS = 10


class CommandIntake:
    """Command callbacks and the torque of a tick, of SimNode (a mixin: ``self`` is the node)."""

    def _make_command_subscriptions(self) -> None:
        """Subscribe to both command topics; when subscribed already, make new subscriptions
        (new DDS readers, without the samples the old ones hold) that take over once they are
        matched to the publishers the old ones have (``_retire_command_readers``): the commands
        keep coming meanwhile, through the old ones.

        joint_commands is taken raw: a command naming every joint in the model's order with only
        effort filled (what a controller usually sends, the bundled one included) is read
        straight from its bytes. In realtime and fast modes each tick applies the newest command,
        so only the newest few are kept (a long queue would hand the executor old commands first
        whenever it falls behind), best effort (reliable publishers match it too): a lost command
        is superseded by the next one anyway, and a reliable reader kept the repair buffers of a
        flood of huge commands (+350 MB for good). Lockstep runs one tick per command: every
        command is queued (reliable) and counted."""
        if self.params.loop_mode == "lockstep":
            qos = QoSProfile(depth=COMMAND_QUEUE, reliability=ReliabilityPolicy.RELIABLE)
        else:
            qos = QoSProfile(depth=NEWEST_COMMANDS, reliability=ReliabilityPolicy.BEST_EFFORT)
        generation = self._command_generation + 1
        if not self._command_subscriptions:
            self._command_generation = generation  # the first ones take commands at once

        def taken_by(handler: Callable[[bytes], None]) -> Callable[[bytes], None]:
            def take(data: bytes) -> None:
                if self._command_generation == generation:  # else: not yet, or no longer, current
                    handler(data)
            return take

        self._retiring_subscriptions = self._command_subscriptions
        self._command_subscriptions = [
            self.create_subscription(JointState, "joint_commands", taken_by(self._on_named_command_bytes), qos, raw=True),
            self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                     taken_by(self._on_array_command_bytes), qos, raw=True),
        ]
        self._renewal_periods = 0

    def _retire_command_readers(self, patience: int = 3) -> bool:
        """Called once per diagnostics period while new command subscriptions wait to take over:
        they take over, and the old ones are destroyed, once each is matched to as many
        publishers as the one it replaces, or after ``patience`` periods. Returns whether they did."""
        self._renewal_periods += 1
        matched = all(new.get_publisher_count() >= old.get_publisher_count()
                      for new, old in zip(self._command_subscriptions, self._retiring_subscriptions))
        if not matched and self._renewal_periods < patience:
            return False
        self._command_generation += 1
        for subscription in self._retiring_subscriptions:
            self.destroy_subscription(subscription)
        self._retiring_subscriptions = []
        return True

    def _on_named_command_bytes(self, data: bytes) -> None:
        known = self._command_layout.read(data)
        if known is None:
            try:
                names = cv.joint_state_name_count(data)
            except ValueError:
                names = 0  # too short: deserialization says what is wrong
            if names > self.model.nj:
                reason = f"{names} names: the robot has {self.model.nj} joints"
                self._apply_command(rejection(WRONG_LENGTH, reason), "joint_commands")
                return
            self._on_named_command(deserialize_message(data, JointState))
            return
        stamp_ns, effort = known
        if np.all(np.abs(effort) <= MAX_EFFORT):  # finite and in range (NaN compares False)
            check = CommandCheck(True, "", "", self._all_joints, effort.copy())
        else:
            check = check_named_command(self.model.joint_names, effort, self.model.joint_names)
        self._apply_command(check, "joint_commands", stamp_ns)

    def _on_named_command(self, msg: JointState) -> None:
        self._apply_command(check_named_command(msg.name, msg.effort, self.model.joint_names), "joint_commands",
                            cv.nanoseconds_from_stamp(msg.header.stamp))

    def _on_array_command_bytes(self, data: bytes) -> None:
        try:
            count, values = multi_array_values(data)
        except ValueError:  # big endian, many layout dimensions: rclpy reads it
            self._on_array_command(deserialize_message(data, Float64MultiArray))
            return
        if values is None:
            check = rejection(WRONG_LENGTH, f"{count} values announced in {len(data)} bytes")
        else:  # the length is checked before any value is read
            check = check_array_command(values, self.joint_order, self.joint_order_names)
        self._apply_command(check, "effort_controller/commands")

    def _on_array_command(self, msg: Float64MultiArray) -> None:
        self._apply_command(check_array_command(msg.data, self.joint_order, self.joint_order_names), "effort_controller/commands")

    def _apply_command(self, check: CommandCheck, topic: str, stamp_ns: int | None = None) -> None:
        """stamp_ns: the command's header stamp [ns of sim time] (None: no header); its age
        against the current tick goes to the command-age statistics of /diagnostics."""
        if check.ok and stamp_ns:
            age = self._tick * self._ns_per_tick - stamp_ns
            self._command_ages[self._command_ages_seen % COMMAND_AGE_WINDOW] = age * 1e-6
            self._command_ages_seen += 1
        with self._command_lock:
            if not check.ok:
                if self.rejections.record(check.kind, time.monotonic()):
                    more = f" ({self.rejections.total} rejected so far)" if self.rejections.total > 1 else ""
                    self.get_logger().warning(f"rejected command on {topic}: {check.reason}; keeping the last valid command{more}")
                return
            self._command[check.joint_index] = check.effort
            self._command_received = True
            self._last_command_wall = time.monotonic()
            self.accepted_commands += 1
        if self.params.loop_mode == "lockstep":
            with self._lock:
                if not self._paused and not self._failed:
                    self._do_tick()

    def _torque(self) -> np.ndarray:
        """The torque for this tick: the last valid command, or the timeout behaviour."""
        p = self.params
        with self._command_lock:
            received = self._command_received
            silent = time.monotonic() - self._last_command_wall
            self._tick_command[:] = self._command
        if p.loop_mode == "lockstep" and received:
            return self._tick_command
        if received and not (p.command_timeout > 0.0 and silent > p.command_timeout):
            return self._tick_command
        self.timeout_ticks += 1
        if p.timeout_behaviour == "damping":
            return -p.timeout_damping * self.simulator.v[self.model.joint_v_index]
        return np.zeros(self.model.nj)
