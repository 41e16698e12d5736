"""A range of motion evaluated inside the compiled step: its rows made, solved and reported there.

A provider whose rows come from compiled tables (the range-of-motion provider) hands the
simulator a ``CompiledRows``: its tables with rows of the step's own to write (``LimitWork``)
and a ``StepLimits``, each row code's law and what the step leaves for the provider. The
compiled step (simulator/actuation.advance_nb) then, in the same call:

1. evaluates the active rows at the step's (q, v) (limits.kernels.limit_rows_nb, with the
   provider's activation band and lookahead), checks the ball-joint groups' rows finite (a
   stop's row is ∓1 on one coordinate with drift 0, finite by construction);
2. puts each hard row into the step's hard-row table after the other providers' rows,
   warm-started from the same row's solved force in the last step (by row code; 0 for a row
   not active then): the bounded solve's first iterate;
3. adds each soft row's spring-damper force λ = max(0, k violation - d (J v)) at the start of
   the step (seed 003 Eq. 3.36-3.38, as contact/constraint_rows.py) to the step's soft force;
4. after a successful step, writes each row's force (a hard row's solved force plus its
   impulse / dt) and keeps the hard rows' solved forces by code for the next step.

A step with no active row costs the evaluation (~0.2 µs for the bundled humanoid's 28 stops)
and no Python: the Python side reads the rows' names and report only when they are asked for
(RangeOfMotionProvider.report). The provider's own ``rows``/``accept_forces`` (the general
provider protocol, contact/constraint_rows.py) make the same rows; the step's table and the
forces are the same bit for bit for hard rows.

Shapes: C row codes (2 per stop, 3 per group: limits.range_tables.LimitRows.code), K rows of
room, nv velocity coordinates; forces [N m or N].
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from humanoid_sim.contact.bundle_records import bundle_record
from humanoid_sim.limits.kernels import limit_rows_nb
from humanoid_sim.limits.range_tables import LimitWork, limit_rows, limit_work, range_tables

__all__ = [
    "NONFINITE_ROW",
    "CompiledRows",
    "StepLimits",
    "limit_forces_nb",
    "no_compiled_rows",
    "step_limits",
    "table_limit_rows_nb",
]

# what a group's row that is not finite says (after the provider's name)
NONFINITE_ROW = "a non-finite limit row at this state (a ball joint at its swing's singularity?)"


class StepLimits(NamedTuple):
    """A range of motion's laws and the step's results (module docstring).

    on (1,) int64: 1 when the step evaluates these limits (0: no such provider, the rest unused);
    band (2,): the provider's activation band [rad or m] and lookahead [s];
    hard (C,) int64: 1 for a hard row code, 0 for a soft one; law (C, 3): each code's stiffness
    [N m/rad or N/m], damping [N m s/rad or N s/m] (soft rows) and restitution (hard rows);
    first_group (1,) int64: the first group row's code (2 S for S stops);
    warm (C,): each hard row's solved force in the last step, 0 for a row not active then;
    warmed (1,) int64: the last step's rows (0: warm is all 0).
    Per step: count (1,) int64, the rows active at its start (limits.range_tables.LimitRows
    holds them: codes, gaps, Jacobian rows, drifts); table (K,) int64, each row's row of the
    hard-row table, -1 for a soft row; force (K,), each row's force (0 until the step succeeds);
    total (nv,): the step's soft generalized force, the other providers' and these rows' [N, N m].
    """

    on: np.ndarray
    band: np.ndarray
    hard: np.ndarray
    law: np.ndarray
    first_group: np.ndarray
    warm: np.ndarray
    warmed: np.ndarray
    count: np.ndarray
    table: np.ndarray
    force: np.ndarray
    total: np.ndarray


class CompiledRows(NamedTuple):
    """What a provider hands the compiled step (module docstring): work, its tables with the
    step's own rows to write (LimitWork); limits, its laws and the step's results (StepLimits);
    names, each row code's name (C,)."""

    work: LimitWork
    limits: StepLimits
    names: tuple[str, ...]


def step_limits(
    work: LimitWork, capacity: int, names: tuple[str, ...], hard: np.ndarray, law: np.ndarray, first_group: int,
    band: float, lookahead: float, nv: int,
) -> CompiledRows:  # fmt: skip
    """The CompiledRows of ``work`` (rows of room ``capacity``) whose row codes have the names
    ``names`` and the laws hard (C,) bool and law (C, 3) (StepLimits), groups from code
    first_group on; band [rad or m] and lookahead [s] as the provider's; nv velocity
    coordinates."""
    K = max(int(capacity), 1)
    limits = StepLimits(
        np.ones(1, np.int64), np.array([band, lookahead], dtype=float), np.asarray(hard, dtype=np.int64).copy(),
        np.ascontiguousarray(law, dtype=float).reshape(-1, 3).copy(), np.array([first_group], np.int64),
        np.zeros(len(hard)), np.zeros(1, np.int64), np.zeros(1, np.int64), np.full(K, -1, np.int64), np.zeros(K),
        np.zeros(nv),
    )  # fmt: skip
    return CompiledRows(work, limits, tuple(names))


def no_compiled_rows(nv: int) -> CompiledRows:
    """The CompiledRows of a step without such a provider (StepLimits.on 0): no stops, no groups."""
    empty = np.zeros(0, np.int64)
    work = limit_work(range_tables(empty, empty, np.zeros(0), np.zeros(0), ()), limit_rows(0, nv))
    rows = step_limits(work, 0, (), np.zeros(0, bool), np.zeros((0, 3)), 0, 0.0, 0.0, nv)
    rows.limits.on[0] = 0
    return rows


@njit(cache=True, inline="always")
def _finite_row(rows, r, nv) -> bool:  # pragma: no cover - compiled
    """Whether row r of rows (LimitRows) has a finite drift and Jacobian row."""
    if not math.isfinite(rows.drift[r]):
        return False
    for c in range(nv):
        if not math.isfinite(rows.jacobian[r, c]):
            return False
    return True


@njit(cache=True)
def table_limit_rows_nb(lim, work, q, v, soft, hard, n_hard) -> int:  # pragma: no cover - compiled
    """Steps 1-3 of the module docstring at (q (nq,), v (nv,)): lim (StepLimits), work
    (LimitWork); soft (nv,): the other providers' soft force [N, N m], which lim.total starts
    from; hard: the step's HardRowTable, whose first n_hard rows are the other providers' and
    which has room for every hard row after them. Returns the hard rows in use (n_hard plus
    these), or -1 for a group row that is not finite (lim.count then 0: nothing to report)."""
    total = lim.total
    for c in range(total.shape[0]):
        total[c] = soft[c]
    if lim.on[0] == 0:
        return n_hard
    count = limit_rows_nb(work, q, v, lim.band[0], lim.band[1], True)
    lim.count[0] = count
    rows = work.rows
    nv = v.shape[0]
    for r in range(count):  # the groups' rows come after the stops' (row codes in order)
        lim.force[r] = 0.0
        if rows.code[r] >= lim.first_group[0] and not _finite_row(rows, r, nv):
            lim.count[0] = 0  # nothing to report of a step that was not made
            return -1
    n = n_hard
    for r in range(count):
        code = rows.code[r]
        if lim.hard[code]:
            for c in range(nv):
                hard.jacobian[n, c] = rows.jacobian[r, c]
            hard.drift[n] = rows.drift[r]
            hard.violation[n] = -rows.gap[r]
            hard.desired[n] = 0.0
            hard.restitution[n] = lim.law[code, 2]
            hard.warm[n] = lim.warm[code]
            lim.table[r] = n
            n += 1
        else:  # Eq. 3.36-3.38, seed 003: a spring-damper pushing out, never pulling in
            lim.table[r] = -1
            rate = 0.0
            for c in range(nv):
                rate += rows.jacobian[r, c] * v[c]
            lam = max(0.0, lim.law[code, 0] * -rows.gap[r] - lim.law[code, 1] * rate)
            lim.force[r] = lam
            for c in range(nv):
                total[c] += rows.jacobian[r, c] * lam
    return n


@njit(cache=True)
def limit_forces_nb(lim, work, hard, dt) -> None:  # pragma: no cover - compiled
    """Step 4 of the module docstring, after a successful step of dt [s]: each hard row's force
    (its solved force plus its impulse / dt) into lim.force, and its solved force by code into
    lim.warm for the next step (every other code 0)."""
    if lim.on[0] == 0:
        return
    count = lim.count[0]
    if count == 0 and lim.warmed[0] == 0:
        return
    lim.warm[:] = 0.0
    for r in range(count):
        j = lim.table[r]
        if j >= 0:
            lim.force[r] = hard.force[j] + hard.impulse[j] / dt
            lim.warm[work.rows.code[r]] = hard.force[j]
    lim.warmed[0] = count


# the record of the bundle (contact/bundle_records.py): numba's cache finds its type here
StepLimitsRecordType, StepLimitsRecord = bundle_record(StepLimits, __name__)
