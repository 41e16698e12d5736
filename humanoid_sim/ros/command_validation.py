"""Validation of incoming torque commands, as plain functions (no node needed to test them).

Two command formats reach the simulator:
- by joint name: ``sensor_msgs/JointState`` with ``name`` and ``effort`` (what
  topic_based_ros2_control sends); a command may name a subset of the joints, the others
  keep their last commanded torque;
- as an ordered array: ``std_msgs/Float64MultiArray`` (ros2_control's
  JointGroupEffortController); ``data[k]`` is the torque of ``joint_order[k]``, the order
  being a node parameter.

Each check returns a ``CommandCheck``: accepted commands carry the joint indices (into
``RobotModel.joint_names``) and torques [N m or N]; rejected ones a reason and a kind
(one of ``REJECTION_KINDS``) for the diagnostics counters. Magnitudes up to MAX_EFFORT are
not checked here: the simulator clamps torques to the URDF effort limits and reports what it
applied; a magnitude beyond MAX_EFFORT is no saturating command but garbage (uninitialised
memory, a unit error) and is refused. Lengths are checked first, before any conversion of
the values, so that a command of a million values costs no more to refuse than a short one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

WRONG_LENGTH = "wrong_length"
NON_FINITE = "non_finite"
UNKNOWN_JOINT = "unknown_joint"
EFFORT_MISSING = "effort_missing"
DUPLICATE_JOINT = "duplicate_joint"
OUT_OF_RANGE = "out_of_range"
REJECTION_KINDS = (WRONG_LENGTH, NON_FINITE, UNKNOWN_JOINT, EFFORT_MISSING, DUPLICATE_JOINT, OUT_OF_RANGE)

# Largest torque magnitude taken as a command [N m or N]: far beyond any actuator (the command
# is then clamped to the joint's effort limit); a larger one is refused as out of range.
MAX_EFFORT = 1e6

_EMPTY_INDEX = np.zeros(0, dtype=np.int64)
_EMPTY = np.zeros(0)


class CommandCheck(NamedTuple):
    """Outcome of validating one command.

    ok: accepted.
    reason: why it was rejected ("" when accepted).
    kind: one of REJECTION_KINDS ("" when accepted).
    joint_index: indices into the model's joint_names of the commanded joints, shape (k,).
    effort: their torques [N m or N], shape (k,).
    """

    ok: bool
    reason: str
    kind: str
    joint_index: np.ndarray
    effort: np.ndarray


def rejection(kind: str, reason: str) -> CommandCheck:
    """A rejected command's CommandCheck: kind (one of REJECTION_KINDS) and reason."""
    return CommandCheck(False, reason, kind, _EMPTY_INDEX, _EMPTY)


# A rejection's log line shows at most this many names, each cut to this many characters.
SHOWN_NAMES = 5
SHOWN_NAME_CHARS = 64


def shown_name(name: str) -> str:
    """A name as a log line shows it: repr, cut to SHOWN_NAME_CHARS with its full length said."""
    if len(name) <= SHOWN_NAME_CHARS:
        return repr(name)
    return f"{name[:SHOWN_NAME_CHARS]!r}... ({len(name)} characters)"


def shown_names(names: Sequence[str]) -> str:
    """At most SHOWN_NAMES names (shown_name), then how many more."""
    shown = ", ".join(shown_name(n) for n in names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")


def _value_check(names: Sequence[str], effort: np.ndarray) -> CommandCheck | None:
    """The rejection of non-finite values or magnitudes over MAX_EFFORT (names: one per value),
    or None when every value is a usable torque."""
    finite = np.isfinite(effort)
    if finite.all() and not (np.abs(effort) > MAX_EFFORT).any():
        return None
    kind, what = (NON_FINITE, "non-finite effort") if not finite.all() else (OUT_OF_RANGE, f"effort beyond {MAX_EFFORT:g}")
    bad = np.flatnonzero(~finite if kind == NON_FINITE else np.abs(effort) > MAX_EFFORT)
    shown = ", ".join(f"{shown_name(names[k])}={effort[k]}" for k in bad[:SHOWN_NAMES])
    more = f" and {len(bad) - SHOWN_NAMES} more" if len(bad) > SHOWN_NAMES else ""
    return rejection(kind, f"{what} for {shown}{more}")


def check_named_command(
    names: Sequence[str], effort: Sequence[float], joint_names: Sequence[str]
) -> CommandCheck:
    """Validate a JointState torque command (``msg.name``, ``msg.effort``).

    joint_names: the model's joint names (``RobotModel.joint_names``).
    Rejected: empty effort field, effort and name of different lengths, more names than
    joints, a name twice, a name that is not a joint (the reason lists the valid ones), NaN
    or infinite values, magnitudes over MAX_EFFORT.
    """
    if len(effort) == 0:
        return rejection(EFFORT_MISSING, f"effort field is empty (names: {len(names)}); a torque command needs effort")
    if len(names) != len(effort):
        return rejection(WRONG_LENGTH, f"{len(names)} names but {len(effort)} efforts")
    if len(names) > len(joint_names):
        return rejection(WRONG_LENGTH, f"{len(names)} names: the robot has {len(joint_names)} joints")
    if len(set(names)) != len(names):
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        return rejection(DUPLICATE_JOINT, f"joint(s) named twice: {shown_names(duplicates)}")
    index = {name: k for k, name in enumerate(joint_names)}
    unknown = [name for name in names if name not in index]
    if unknown:
        return rejection(
            UNKNOWN_JOINT,
            f"unknown joint(s) {shown_names(unknown)}; valid joints: {', '.join(joint_names)}",
        )
    effort_array = np.asarray(effort, dtype=float).reshape(-1)
    rejected = _value_check(names, effort_array)
    if rejected is not None:
        return rejected
    joint_index = np.array([index[name] for name in names], dtype=np.int64)
    return CommandCheck(True, "", "", joint_index, effort_array.copy())


def check_array_command(data: Sequence[float], joint_order_index: np.ndarray, joint_order: Sequence[str]) -> CommandCheck:
    """Validate a Float64MultiArray torque command (``msg.data``).

    joint_order_index: indices into the model's joint names of ``joint_order``, shape (n,)
        (from ``joint_order_indices``).
    joint_order: the names, for messages.
    Rejected: a length other than n (an empty array included), NaN or infinite values,
    magnitudes over MAX_EFFORT.
    """
    n = len(joint_order_index)
    if len(data) != n:
        return rejection(WRONG_LENGTH, f"{len(data)} values, expected {n} (one per joint of joint_order)")
    data_array = np.asarray(data, dtype=float).reshape(-1)
    rejected = _value_check(joint_order, data_array)
    if rejected is not None:
        return rejected
    return CommandCheck(True, "", "", np.asarray(joint_order_index, dtype=np.int64), data_array.copy())


def joint_order_indices(joint_order: Sequence[str], joint_names: Sequence[str]) -> np.ndarray:
    """Indices into ``joint_names`` of each name of ``joint_order``, shape (n,).

    An empty ``joint_order`` means the model's order (all joints). Raises ValueError for
    an unknown or repeated name (listing the valid ones).
    """
    if len(joint_order) == 0:
        return np.arange(len(joint_names), dtype=np.int64)
    index = {name: k for k, name in enumerate(joint_names)}
    unknown = [name for name in joint_order if name not in index]
    if unknown:
        raise ValueError(
            f"joint_order names unknown joint(s) {', '.join(map(repr, unknown))}; valid joints: {', '.join(joint_names)}"
        )
    if len(set(joint_order)) != len(joint_order):
        duplicates = sorted({name for name in joint_order if list(joint_order).count(name) > 1})
        raise ValueError(f"joint_order names joint(s) twice: {', '.join(duplicates)}")
    return np.array([index[name] for name in joint_order], dtype=np.int64)


class RejectionCounter:
    """Counts rejected commands per kind and decides when to log (throttled).

    ``record(kind)`` returns True when a log line should be written: the first rejection,
    then at most one per ``log_period_s`` seconds of the caller's clock.
    """

    def __init__(self, log_period_s: float = 2.0) -> None:
        self.log_period_s = float(log_period_s)
        self.counts: dict[str, int] = {kind: 0 for kind in REJECTION_KINDS}
        self._last_log: float | None = None
        self.suppressed = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def record(self, kind: str, now_s: float) -> bool:
        """Count one rejection of ``kind`` at time ``now_s`` [s]; True if it should be logged."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self._last_log is None or now_s - self._last_log >= self.log_period_s:
            self._last_log = now_s
            return True
        self.suppressed += 1
        return False
