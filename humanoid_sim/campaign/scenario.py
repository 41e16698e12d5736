"""One run's scenario: the values of every parameter a campaign can vary.

A campaign file gives fixed values (``parameters:``) and varied ones (``vary:``); every run
gets one Scenario with all of them. Units are in the names; frames are the world's (z up,
docs/conventions.md), which on a slope is the slope's frame (see ``slope_deg``).

Parameters (name: default, meaning):
  push_link: "pelvis"        link pushed; the force acts at the origin of its frame
  push_force_n: 0.0          horizontal force magnitude [N] (>= 0); 0 = no push
  push_direction_deg: 0.0    direction of the force in the world xy plane [deg]:
                             0 pushes towards +x (forward), 90 towards +y (left)
  push_start_s: 1.0          simulated time the push starts [s] (>= 0)
  push_duration_s: 0.1       how long it lasts [s] (>= 0); impulse = force x duration
  friction: 1.0              ground and box static friction mu_s (> 0); the dynamic
                             friction keeps the default ratio mu_d = 0.8 mu_s
  restitution: 0.0           Newton's restitution of the ground and boxes, in [0, 1]
  slope_deg: 0.0             the ground tilted by this angle [deg] in [0, 45): uphill towards
                             slope_direction_deg; simulated by tilting gravity, which is the
                             same physics written in the slope's frame (the controller is not
                             told: its model keeps vertical gravity)
  slope_direction_deg: 0.0   uphill direction in the ground plane [deg] (0 = +x)
  terrain: ""                name of a box set of the campaign's ``world.terrains`` ("" = none)
  mass_scale: 1.0            every body's mass and rotational inertia scaled by this (> 0)
  inertia_scale: 1.0         every body's rotational inertia scaled by this on top (> 0)
  joint_damping: 0.0         viscous joint friction [N m s/rad] (>= 0): -d qdot_j is added to
                             the commanded torques before the simulator clamps them
  latency_s: 0.0             command latency [s] (>= 0): the torques computed at t reach the
                             joints at t + latency (rounded to physics steps)
  sensor_noise_q: 0.0        std of white noise on the measured joint positions [rad] (>= 0)
  sensor_noise_v: 0.0        std of white noise on the measured velocities (base twist and
                             joints) [m/s, rad/s] (>= 0)
  controller.<name>:         a controller parameter (see the campaign file's ``controller``)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

__all__ = ["CONTROLLER_PREFIX", "SCENARIO_PARAMETERS", "Scenario", "ScenarioError", "scenario_from_values"]

CONTROLLER_PREFIX = "controller."


class ScenarioError(ValueError):
    """A bad scenario parameter; the message names it and lists the valid names."""


@dataclass(frozen=True)
class Scenario:
    """The parameter values of one run (module docstring: names, units, defaults).

    controller: controller parameters as sorted (name, value) pairs; a dotted name sets a
    nested parameter (``com.kp``)."""

    push_link: str = "pelvis"
    push_force_n: float = 0.0
    push_direction_deg: float = 0.0
    push_start_s: float = 1.0
    push_duration_s: float = 0.1
    friction: float = 1.0
    restitution: float = 0.0
    slope_deg: float = 0.0
    slope_direction_deg: float = 0.0
    terrain: str = ""
    mass_scale: float = 1.0
    inertia_scale: float = 1.0
    joint_damping: float = 0.0
    latency_s: float = 0.0
    sensor_noise_q: float = 0.0
    sensor_noise_v: float = 0.0
    controller: tuple[tuple[str, Any], ...] = field(default=())

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name in ("push_link", "terrain", "controller"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ScenarioError(f"scenario parameter {f.name} = {value!r}: must be a finite number")
            object.__setattr__(self, f.name, float(value))
        if not isinstance(self.push_link, str) or not self.push_link:
            raise ScenarioError(f"scenario parameter push_link = {self.push_link!r}: must be a link name")
        if not isinstance(self.terrain, str):
            raise ScenarioError(f"scenario parameter terrain = {self.terrain!r}: must be a terrain name or ''")
        for name in ("push_force_n", "push_start_s", "push_duration_s", "joint_damping", "latency_s",
                     "sensor_noise_q", "sensor_noise_v"):
            if getattr(self, name) < 0.0:
                raise ScenarioError(f"scenario parameter {name} = {getattr(self, name)!r}: must be >= 0")
        for name in ("friction", "mass_scale", "inertia_scale"):
            if getattr(self, name) <= 0.0:
                raise ScenarioError(f"scenario parameter {name} = {getattr(self, name)!r}: must be > 0")
        if not 0.0 <= self.restitution <= 1.0:
            raise ScenarioError(f"scenario parameter restitution = {self.restitution!r}: must lie in [0, 1]")
        if not 0.0 <= self.slope_deg < 45.0:
            raise ScenarioError(f"scenario parameter slope_deg = {self.slope_deg!r}: must lie in [0, 45)")
        object.__setattr__(self, "controller", tuple(sorted((str(k), v) for k, v in dict(self.controller).items())))

    @property
    def push_impulse_ns(self) -> float:
        """Impulse of the push [N s]."""
        return self.push_force_n * self.push_duration_s

    def as_row(self) -> dict[str, Any]:
        """Flat {name: value}: the scenario columns of a results row (controller.<name> keys)."""
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "controller"}
        row.update({CONTROLLER_PREFIX + k: v for k, v in self.controller})
        return row


SCENARIO_PARAMETERS: tuple[str, ...] = tuple(f.name for f in fields(Scenario) if f.name != "controller")


def scenario_from_values(values: Mapping[str, Any], where: str = "parameters") -> Scenario:
    """A Scenario from {name: value}, names as in SCENARIO_PARAMETERS or ``controller.<name>``.

    Raises ScenarioError naming `where` and the bad name, listing the valid names."""
    plain: dict[str, Any] = {}
    controller: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(name, str) and name.startswith(CONTROLLER_PREFIX) and len(name) > len(CONTROLLER_PREFIX):
            controller[name[len(CONTROLLER_PREFIX):]] = value
        elif name in SCENARIO_PARAMETERS:
            plain[name] = value
        else:
            raise ScenarioError(
                f"{where}: unknown parameter {name!r}; valid parameters: {', '.join(SCENARIO_PARAMETERS)}, "
                f"{CONTROLLER_PREFIX}<name>"
            )
    try:
        return Scenario(**plain, controller=tuple(controller.items()))
    except ScenarioError as exc:
        raise ScenarioError(f"{where}: {exc}") from None
