"""Run every code path of ``Simulator.step`` once before the real run starts.

numba compiles (or loads from its disk cache) a kernel the first time it is called: tens
of milliseconds from the cache, far longer after a fresh install. Every step is one
compiled call (contact/step_kernel.py), but the velocity-limit rule and the constraint
providers call kernels of their own; were they first loaded in the middle of a run, real
time would stall with the last torque held, long enough to drop a walking robot.
``warm_up`` runs a few throw-away steps from short scenarios built on a resting
configuration (resting, landing, sliding, a joint driven into its stop) and then puts the
simulator back exactly where it was.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from humanoid_sim.simulator.simulator import SimulationError, Simulator

STEPS_PER_SCENARIO = 3
LANDING_HEIGHT = 0.0005  # [m] the resting configuration raised by this, falling at LANDING_SPEED
LANDING_SPEED = 0.5  # [m/s] (an impact: above the restitution threshold)
SLIDING_SPEED = 0.1  # [m/s] horizontal base speed with the feet on the ground (faster: they lift)
STOP_SPEED = 1.0  # [rad/s or m/s] of the joint driven into its upper stop


class WarmUpReport(NamedTuple):
    """Wall time [s] per scenario (name -> seconds) and the scenarios whose steps failed
    (name -> the SimulationError's message; a failure only means that path stays cold)."""

    seconds: dict[str, float]
    failed: dict[str, str]


def warm_up_scenarios(simulator: Simulator, q_rest: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{name: (q (nq,), v (nv,))} starting states around q_rest (a configuration resting on the ground)."""
    model = simulator.model
    q_rest = np.asarray(q_rest, dtype=float)
    zero = np.zeros(model.nv)
    scenarios = {"resting": (q_rest, zero)}
    if model.floating_base:
        q, v = q_rest.copy(), zero.copy()
        q[2] += LANDING_HEIGHT
        v[2] = -LANDING_SPEED  # base-frame linear velocity; the base is upright at rest
        scenarios["landing"] = (q, v)
        v = zero.copy()
        v[0] = SLIDING_SPEED
        scenarios["sliding"] = (q_rest, v)
    upper = np.asarray(model.limits.upper, dtype=float)
    limited = np.flatnonzero(np.isfinite(upper))
    if simulator.providers and limited.size:
        j = int(limited[0])
        q, v = q_rest.copy(), zero.copy()
        q[model.joint_q_index[j]] = upper[j]
        v[model.joint_v_index[j]] = STOP_SPEED
        scenarios["joint stop"] = (q, v)
    return scenarios


def warm_up(simulator: Simulator, q_rest: np.ndarray) -> WarmUpReport:
    """A few zero-torque steps of each scenario of ``warm_up_scenarios``; afterwards the
    simulator's state (q, v, t, contact memory) is what it was before. Raises SimulationError
    when even the resting scenario fails (the configuration cannot be simulated)."""
    q0, v0, t0 = simulator.q, simulator.v, simulator.t
    tau = np.zeros(simulator.model.nj)
    seconds: dict[str, float] = {}
    failed: dict[str, str] = {}
    try:
        for name, (q, v) in warm_up_scenarios(simulator, q_rest).items():
            start = time.perf_counter()
            simulator.set_state(q, v)
            try:
                for _ in range(STEPS_PER_SCENARIO):
                    simulator.step(tau)
            except SimulationError as error:
                if name == "resting":
                    raise
                failed[name] = str(error)
            seconds[name] = time.perf_counter() - start
    finally:
        simulator.set_state(q0, v0, t0)
    return WarmUpReport(seconds, failed)
