"""The parameter space of a campaign: a grid or seeded random samples, expanded into runs.

Each varied parameter is an Axis: explicit ``values``, ``linspace: [low, high, n]`` (values
too) or ``uniform: [low, high]`` (random samples only). A grid runs every combination (the
cartesian product, axes in the order of the file, the last one varying fastest); random
samples draw every axis for each of ``samples`` runs (values: uniform choice).

Determinism: run i's draws come from numpy's generator seeded with (campaign seed, i), so
run i is the same whatever the number of samples, the order runs finish in or the process
that runs it; its own seed (sensor noise) is derived from the same pair.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from humanoid_sim.campaign.scenario import Scenario, ScenarioError, scenario_from_values

__all__ = ["AXIS_KINDS", "Axis", "ParameterSpace", "RunSpec", "axis_from_yaml", "check_names"]

AXIS_KINDS = ("values", "linspace", "uniform")
MODES = ("grid", "random")


class RunSpec(NamedTuple):
    """One run of a campaign: run_id (0-based index in the space), seed (its own noise seed),
    varied: the varied parameters' values as (name, value) pairs, scenario: all values, key:
    digest of everything the run's row depends on (the results table keeps rows by key)."""

    run_id: int
    seed: int
    varied: tuple[tuple[str, Any], ...]
    scenario: Scenario
    key: str


@dataclass(frozen=True)
class Axis:
    """One varied parameter: values (explicit or linspace), or a uniform range (low, high)."""

    name: str
    values: tuple[Any, ...] = ()
    uniform: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if (len(self.values) > 0) == (self.uniform is not None):
            raise ScenarioError(f"vary.{self.name}: give exactly one of {', '.join(AXIS_KINDS)}")
        if self.uniform is not None:
            low, high = self.uniform
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ScenarioError(f"vary.{self.name}: uniform: [low, high] needs finite low <= high, got {self.uniform}")

    def draw(self, rng: np.random.Generator) -> Any:
        """One random sample: uniform in [low, high) or a uniform choice of the values."""
        if self.uniform is not None:
            return float(rng.uniform(*self.uniform))
        return self.values[int(rng.integers(len(self.values)))]


def _number_list(raw: Any, where: str, length: int | None = None) -> list[float]:
    if not isinstance(raw, (list, tuple)) or (length is not None and len(raw) != length):
        raise ScenarioError(f"{where}: expected a list of {length or 'some'} numbers, got {raw!r}")
    try:
        return [float(x) for x in raw]
    except (TypeError, ValueError):
        raise ScenarioError(f"{where}: expected numbers, got {raw!r}") from None


def _plain(value: Any) -> Any:
    """A YAML scalar as a plain Python value (floats for numbers, so rows compare equal)."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise ScenarioError(f"parameter values must be numbers, strings or booleans, got {value!r}")


def axis_from_yaml(name: str, raw: Any) -> Axis:
    """An Axis from a campaign file entry: a list (values) or a mapping with one key of
    AXIS_KINDS. Raises ScenarioError naming the parameter and the valid keys."""
    where = f"vary.{name}"
    if isinstance(raw, (list, tuple)):
        raw = {"values": list(raw)}
    if not isinstance(raw, Mapping) or len(raw) != 1 or next(iter(raw)) not in AXIS_KINDS:
        raise ScenarioError(f"{where}: must be a list of values or a mapping with one key of {', '.join(AXIS_KINDS)}; "
                            f"got {raw!r}")
    kind, spec = next(iter(raw.items()))
    if kind == "values":
        if not isinstance(spec, (list, tuple)) or not spec:
            raise ScenarioError(f"{where}.values: must be a non-empty list")
        return Axis(name, values=tuple(_plain(v) for v in spec))
    if kind == "linspace":
        low, high, n = _number_list(spec, f"{where}.linspace: [low, high, n]", 3)
        if n < 1 or n != int(n):
            raise ScenarioError(f"{where}.linspace: n must be a positive integer, got {n}")
        return Axis(name, values=tuple(float(v) for v in np.linspace(low, high, int(n))))
    low, high = _number_list(spec, f"{where}.uniform: [low, high]", 2)
    return Axis(name, uniform=(low, high))


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ParameterSpace:
    """mode: "grid" (every combination of the axes' values) or "random" (``samples`` draws);
    seed: the campaign's seed; axes: the varied parameters (none: one run of the base)."""

    mode: str = "grid"
    axes: tuple[Axis, ...] = ()
    samples: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ScenarioError(f"vary.mode = {self.mode!r}; valid modes: {', '.join(MODES)}")
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ScenarioError(f"vary: a parameter is listed twice in {names}")
        if self.mode == "grid":
            ranged = [a.name for a in self.axes if a.uniform is not None]
            if ranged:
                raise ScenarioError(f"vary: uniform ranges need mode random; in a grid give values or linspace "
                                    f"({', '.join(ranged)})")
        elif isinstance(self.samples, bool) or not isinstance(self.samples, int) or self.samples < 1:
            raise ScenarioError(f"vary.samples = {self.samples!r}: must be a positive integer")

    def __len__(self) -> int:
        if self.mode == "random":
            return self.samples
        return math.prod(len(a.values) for a in self.axes)

    def varied_values(self) -> list[tuple[tuple[str, Any], ...]]:
        """The varied values of every run, in run order."""
        names = tuple(a.name for a in self.axes)
        if self.mode == "grid":
            return [tuple(zip(names, combo)) for combo in itertools.product(*(a.values for a in self.axes))]
        out = []
        for run_id in range(self.samples):
            rng = np.random.default_rng([self.seed, run_id])
            out.append(tuple((a.name, a.draw(rng)) for a in self.axes))
        return out

    def runs(self, base: Mapping[str, Any], fingerprint: str = "") -> list[RunSpec]:
        """Every run: the base values overridden by the varied ones. fingerprint: digest of the
        campaign settings that are not parameters (robot, controller, duration ...), part of
        each run's key. Raises ScenarioError naming the run of a bad combination."""
        specs = []
        for run_id, varied in enumerate(self.varied_values()):
            values = dict(base)
            values.update(varied)
            scenario = scenario_from_values(values, where=f"run {run_id}")
            seed = int(np.random.SeedSequence([self.seed, run_id]).generate_state(1)[0])
            key = _digest({"campaign": fingerprint, "seed": seed, "scenario": scenario.as_row()})
            specs.append(RunSpec(run_id, seed, varied, scenario, key))
        return specs


def check_names(axes: Sequence[Axis], valid: Sequence[str]) -> None:
    """Raise ScenarioError when an axis names no parameter of `valid` (or controller.<name>)."""
    for axis in axes:
        if axis.name not in valid and not axis.name.startswith("controller."):
            raise ScenarioError(f"vary: unknown parameter {axis.name!r}; valid parameters: {', '.join(valid)}, "
                                "controller.<name>")
