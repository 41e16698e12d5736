"""Pushes: a wrench on a named link for a duration, the first thing a balance controller is
tested with. A ``PushSchedule`` holds them and hands the simulator, at each step, the wrenches
acting then (``Simulator.step(tau, link_wrenches=schedule.at(sim.t))``); the node's push
service and a library user share it, so both give the same motion for the same push.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from humanoid_sim.errors import InvalidValueError
from humanoid_sim.model.robot_model import RobotModel
from humanoid_sim.simulator.link_wrenches import LinkWrench, check_link_wrench

__all__ = ["Push", "PushSchedule"]

# A push covers the steps whose start time t satisfies start <= t < end, within this slack [s],
# so that a duration of k dt covers exactly k steps despite rounding of the accumulated time.
TIME_SLACK_S = 1e-9


class Push(NamedTuple):
    """link: URDF link (or frame) name; wrench: (f, n) [N, N m], world axes, (6,);
    point: where f acts, link frame [m], (3,); start, end: simulation time [s]."""

    link: str
    wrench: np.ndarray
    point: np.ndarray
    start: float
    end: float


class PushSchedule:
    """The pushes of one simulation; at most one acts on a link at a time (a new push on a
    link replaces the one acting there). ``pushes_applied`` counts every push accepted."""

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self._pushes: dict[str, Push] = {}
        self.pushes_applied = 0

    def add(
        self, link: str, wrench: Sequence[float] | np.ndarray, duration: float, start: float,
        point: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
    ) -> Push:
        """Push ``link`` with ``wrench`` for ``duration`` [s] from time ``start`` [s].

        Raises UnknownNameError listing the links for an unknown link, InvalidValueError for a
        wrench or point that is not finite or a duration that is not finite and > 0; a refused
        push changes nothing."""
        checked = check_link_wrench(self.model, link, LinkWrench(wrench, point))
        if not (math.isfinite(duration) and duration > 0.0):
            raise InvalidValueError(f"push duration must be finite and > 0 [s], got {duration!r}")
        push = Push(link, checked.wrench, checked.point, float(start), float(start) + float(duration))
        self._pushes[link] = push
        self.pushes_applied += 1
        return push

    def at(self, t: float) -> dict[str, LinkWrench]:
        """Wrenches acting at time t [s] (link -> LinkWrench); forgets the pushes ended by then."""
        ended = [link for link, p in self._pushes.items() if t >= p.end - TIME_SLACK_S]
        for link in ended:
            del self._pushes[link]
        return {
            link: LinkWrench(p.wrench, p.point) for link, p in self._pushes.items() if t >= p.start - TIME_SLACK_S
        }

    @property
    def pending(self) -> bool:
        """Whether any push has not ended yet (as of the last ``at``): ``at`` is needed."""
        return bool(self._pushes)

    def active(self) -> tuple[Push, ...]:
        """The pushes not yet ended (as of the last ``at``)."""
        return tuple(self._pushes.values())

    def clear(self) -> None:
        """Forget every push (a reset)."""
        self._pushes.clear()
