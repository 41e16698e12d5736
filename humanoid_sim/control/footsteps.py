"""Footstep plan from a walking velocity command.

A plan is a timeline of support phases on flat ground (world frame, z up):

    [initial double support] -> (single support, double support) x n_steps
    -> closing step (swing foot placed beside the support foot) -> final double support

Every footstep is a planar foot pose ``(x, y, yaw)`` of the sole frame centre [m, m, rad].
Successive footsteps follow a *walking frame* (between the feet; it starts half a step width
from the first support foot) that moves by the commanded velocity over one step period
``T = single_support + double_support``:
its yaw advances by ``yaw_rate * T`` and its origin by ``R(yaw) (vx, vy) T``; each foot lands
at ``±step_width / 2`` to the side of that frame, so turning rotates successive footsteps.

The ZMP reference (Kajita et al. 2003) lies at the support foot centre during single support
and moves linearly from one support foot to the next during double support; the initial
double support shifts it from the centre of the feet to the first support foot, the final one
back to the centre of the feet.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

import numpy as np

Side = Literal["left", "right"]
SIDES: tuple[str, str] = ("left", "right")


def other_side(side: str) -> str:
    """'left' <-> 'right'."""
    return "right" if side == "left" else "left"


@dataclass(frozen=True)
class FootstepParams:
    """Step timing and geometry (validated on construction).

    single_support: swing time of one step [s].
    double_support: time with both feet down between two steps [s].
    initial_double_support: time to shift the ZMP onto the first support foot [s].
    final_double_support: time to bring the ZMP back between the feet when stopping [s].
    step_width: lateral distance between the two sole centres [m].
    max_step_length: |forward/backward advance of the walking frame per step| limit [m].
    max_step_lateral: |lateral advance of the walking frame per step| limit [m].
    max_step_yaw: |yaw change of the walking frame per step| limit [rad].
    """

    single_support: float = 0.7
    double_support: float = 0.2
    initial_double_support: float = 1.0
    final_double_support: float = 1.0
    step_width: float = 0.2
    max_step_length: float = 0.25
    max_step_lateral: float = 0.1
    max_step_yaw: float = 0.3

    def __post_init__(self) -> None:
        for name in (
            "single_support",
            "double_support",
            "initial_double_support",
            "final_double_support",
            "step_width",
            "max_step_length",
            "max_step_lateral",
            "max_step_yaw",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"FootstepParams.{name} must be finite and > 0, got {value!r}")

    @property
    def step_period(self) -> float:
        """single_support + double_support [s]."""
        return self.single_support + self.double_support


class Footstep(NamedTuple):
    """A planar sole pose in the world: side, x [m], y [m], yaw [rad]."""

    side: str
    x: float
    y: float
    yaw: float

    @property
    def position(self) -> np.ndarray:
        """(x, y), shape (2,) [m]."""
        return np.array([self.x, self.y])


class SupportPhase(NamedTuple):
    """One phase of the plan on [t_start, t_end) [s].

    support: 'double', 'left' or 'right' (the foot on the ground in single support).
    swing_side: the moving foot in single support, else None.
    swing_from, swing_to: lift-off and touch-down footsteps of the swing foot (single support).
    zmp_start, zmp_end: ZMP reference at the phase ends [m], shape (2,); linear in between.
    left, right: the foot poses on the ground at the phase start.
    """

    t_start: float
    t_end: float
    support: str
    swing_side: str | None
    swing_from: Footstep | None
    swing_to: Footstep | None
    zmp_start: np.ndarray
    zmp_end: np.ndarray
    left: Footstep
    right: Footstep


@dataclass(frozen=True)
class FootstepPlan:
    """A timeline of support phases; ``footsteps`` are the touch-downs in order."""

    phases: tuple[SupportPhase, ...]
    footsteps: tuple[Footstep, ...]

    @property
    def t_start(self) -> float:
        return self.phases[0].t_start

    @property
    def t_end(self) -> float:
        return self.phases[-1].t_end

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Phase start and end times (n,), ZMP at the phase starts and ends (n, 2)."""
        return (np.array([p.t_start for p in self.phases]), np.array([p.t_end for p in self.phases]),
                np.array([p.zmp_start for p in self.phases]), np.array([p.zmp_end for p in self.phases]))

    @cached_property
    def _start_list(self) -> list[float]:
        return [p.t_start for p in self.phases]

    def phase_index(self, t: float) -> int:
        """Index of the phase containing time t (clamped to the first/last phase)."""
        # bisect_right == searchsorted(side="right"), without numpy's per-call overhead
        return min(max(bisect.bisect_right(self._start_list, t) - 1, 0), len(self.phases) - 1)

    def phase_at(self, t: float) -> SupportPhase:
        return self.phases[self.phase_index(t)]

    def zmp_reference(self, t: np.ndarray | float) -> np.ndarray:
        """ZMP reference [m] at time(s) t [s]: shape (2,) or (len(t), 2).

        Before the plan: the first phase's start value; after it: the last phase's end value.
        """
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        starts, ends, z0, z1 = self._arrays
        idx = np.clip(np.searchsorted(starts, ts, side="right") - 1, 0, len(self.phases) - 1)
        s = np.clip((ts - starts[idx]) / (ends[idx] - starts[idx]), 0.0, 1.0)[:, None]
        out = z0[idx] * (1.0 - s) + z1[idx] * s
        return out[0] if np.ndim(t) == 0 else out


def _wrap_angle(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def _foot_from_frame(side: str, frame: tuple[float, float, float], width: float) -> Footstep:
    x, y, yaw = frame
    offset = 0.5 * width if side == "left" else -0.5 * width
    return Footstep(side, x - math.sin(yaw) * offset, y + math.cos(yaw) * offset, yaw)


def _frame_beside(support: Footstep, width: float) -> tuple[float, float, float]:
    """The walking frame whose foot on the support side is ``support``."""
    offset = -0.5 * width if support.side == "left" else 0.5 * width  # towards the other foot
    return (support.x - math.sin(support.yaw) * offset, support.y + math.cos(support.yaw) * offset,
            support.yaw)


def _mid(a: Footstep, b: Footstep) -> np.ndarray:
    return 0.5 * (a.position + b.position)


def first_swing_side(vy: float, yaw_rate: float) -> str:
    """The foot to lift first: the one on the side we move or turn towards (left if both 0)."""
    if vy < 0.0 or (vy == 0.0 and yaw_rate < 0.0):
        return "right"
    return "left"


def plan_footsteps(
    left: Footstep,
    right: Footstep,
    command: tuple[float, float, float],
    n_steps: int,
    params: FootstepParams,
    t_start: float = 0.0,
    first_swing: str | None = None,
    initial_double_support: float | None = None,
    zmp_start: np.ndarray | None = None,
) -> FootstepPlan:
    """Plan ``n_steps`` steps for the command, then a closing step and a stop.

    left, right: current sole poses on the ground (side fields must match).
    command: (vx [m/s], vy [m/s], yaw_rate [rad/s]) in the walking frame (x forward, y left);
        the per-step advance is clamped to the params limits.
    n_steps: number of walking steps (>= 0); a closing step that puts the swing foot beside
        the support foot at ``step_width`` follows them (none when n_steps == 0: stand still).
    first_swing: 'left'/'right'; default by ``first_swing_side``.
    initial_double_support: duration of the first double support [s]; default
        params.initial_double_support.
    zmp_start: ZMP at t_start [m], shape (2,); default the centre of the feet.
    Returns the FootstepPlan; every phase time is in [s] from the same clock as t_start.
    """
    if left.side != "left" or right.side != "right":
        raise ValueError(f"feet sides must be ('left', 'right'), got ({left.side!r}, {right.side!r})")
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    vx, vy, wz = (float(c) for c in command)
    if not all(math.isfinite(c) for c in (vx, vy, wz)):
        raise ValueError(f"command must be finite, got {command!r}")
    period = params.step_period
    dx = float(np.clip(vx * period, -params.max_step_length, params.max_step_length))
    dy = float(np.clip(vy * period, -params.max_step_lateral, params.max_step_lateral))
    dyaw = float(np.clip(wz * period, -params.max_step_yaw, params.max_step_yaw))
    swing = first_swing if first_swing is not None else first_swing_side(vy, wz)
    if swing not in SIDES:
        raise ValueError(f"first_swing must be one of {SIDES}, got {swing!r}")

    feet = {"left": left, "right": right}
    # Walking frame: half a step width from the support foot (the foot that stays down
    # first) towards the swing foot, heading the support foot's yaw. For feet side by side
    # this is their mid-point; when replanning during a walk it is the frame the last
    # footstep was placed from, so replanning does not change the stride.
    frame = _frame_beside(feet[other_side(swing)], params.step_width)

    phases: list[SupportPhase] = []
    footsteps: list[Footstep] = []
    t = float(t_start)
    zmp = np.asarray(zmp_start, dtype=float) if zmp_start is not None else _mid(left, right)
    t_ds0 = params.initial_double_support if initial_double_support is None else initial_double_support

    def add_step(target: Footstep, ds_before: float) -> None:
        nonlocal t, zmp
        support = other_side(target.side)
        support_foot = feet[support]
        # Double support: ZMP moves onto the coming support foot.
        if ds_before > 0.0:
            phases.append(
                SupportPhase(t, t + ds_before, "double", None, None, None, zmp.copy(),
                             support_foot.position, feet["left"], feet["right"])
            )
            t += ds_before
        zmp = support_foot.position
        phases.append(
            SupportPhase(t, t + params.single_support, support, target.side, feet[target.side],
                         target, zmp.copy(), zmp.copy(), feet["left"], feet["right"])
        )
        t += params.single_support
        feet[target.side] = target
        footsteps.append(target)

    for k in range(n_steps):
        x, y, yaw = frame
        yaw_new = yaw + dyaw
        c, s = math.cos(yaw_new), math.sin(yaw_new)
        frame = (x + c * dx - s * dy, y + s * dx + c * dy, yaw_new)
        add_step(_foot_from_frame(swing, frame, params.step_width), t_ds0 if k == 0 else params.double_support)
        swing = other_side(swing)
    if n_steps > 0:
        # Closing step: the swing foot lands beside the last support foot.
        frame_mid = _frame_beside(feet[other_side(swing)], params.step_width)
        add_step(_foot_from_frame(swing, frame_mid, params.step_width), params.double_support)
    end = _mid(feet["left"], feet["right"])
    final = params.final_double_support if n_steps > 0 else max(t_ds0, 1e-3)
    phases.append(SupportPhase(t, t + final, "double", None, None, None, zmp.copy(), end,
                               feet["left"], feet["right"]))
    return FootstepPlan(tuple(phases), tuple(footsteps))
