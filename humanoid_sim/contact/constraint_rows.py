"""The row interface between constraint providers and the constrained solve.

The simulator step (seed 000, Eq. 20/20b) solves for generalized accelerations
and constraint forces together. Besides the contacts (virtual links, built by
this package) any number of *constraint providers* may hand it extra
one-sided rows: joint position stops, swing-twist ranges of motion (limits/,
seed 003 Eq. 3.34-3.38), anything else with the same shape. A provider never
needs to know about contacts, and the simulator never needs to know what a
provider models.

Sign convention of one row i (all arrays indexed by row):

    gap_i(q) >= 0 is the admissible side, ``violation_i = -gap_i`` (> 0 when
    the limit is exceeded, e.g. ``q_j - upper_j`` [rad or m]).
    ``jacobian[i] @ v`` = d gap_i / dt  (positive = moving back to the admissible
    side), shape (nv,), in the simulator's v layout (docs/conventions.md).
    ``drift[i]`` = d/dt(jacobian[i]) @ v  (the "Hdot v" of seed 000 Eq. 7),
    [rad/s^2 or m/s^2]; 0 for a row that is a constant selector of v.
    The row force lambda_i >= 0 acts on the system as the generalized force
    ``jacobian[i] * lambda_i`` (seed 000 Eq. 9: tau_G = H_C^T tau_C) [N m or N].

Hard rows (``hard[i] = True``; seed 003 Eq. 3.34-3.35) join the solve as
unilateral constraints exactly like the normal direction of a contact:

* approaching (``jacobian[i] @ v < 0``) while violated or touching: an impulse
  (seed 000 Eq. 18-19) with post-impact velocity ``-restitution[i] * v_i``;
* held with gap acceleration ``desired_acceleration[i]
  - Kp * (-violation) - Kd * (J v)`` (Eq. 20b; Kp, Kd chosen by the simulator
  from dt), solved together with the contact rows;
* released when the solve gives lambda_i < 0 (the body moves away by itself).

Soft rows (``hard[i] = False``; seed 003 Eq. 3.36-3.38) do not enter the solve:
the simulator applies the spring-damper force
``lambda_i = max(0, stiffness[i] * violation[i] - damping[i] * (J v)_i)``
as the known generalized force ``jacobian[i] * lambda_i``.

A provider returns only the rows that are *active* (violated, or within its
own small tolerance band); ``OneSidedRows.empty(nv)`` when none are.
After every step the simulator calls ``provider.accept_forces(forces)`` with
lambda per returned row (hard: solved force [N m or N] including the impulse
divided by dt; soft: the spring-damper force), so the provider can report stop
torques per joint. The order of rows is the provider's order.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from humanoid_sim.contact.kernels import all_finite, all_within


class OneSidedRows(NamedTuple):
    """A batch of k one-sided constraint rows (see the module docstring).

    jacobian: d gap / dt = jacobian @ v, shape (k, nv).
    drift: jacobian_dot @ v, shape (k,).
    violation: -gap, > 0 when violated [rad or m], shape (k,).
    desired_acceleration: extra desired gap acceleration, usually 0, shape (k,).
    hard: True = rigid unilateral row in the solve, False = spring-damper, shape (k,) bool.
    stiffness: soft rows only [N m/rad or N/m], shape (k,).
    damping: soft rows only [N m s/rad or N s/m], shape (k,).
    restitution: hard rows, coefficient of restitution in [0, 1], shape (k,).
    names: one label per row for reports (e.g. "l_knee upper"), length k.
    """

    jacobian: np.ndarray
    drift: np.ndarray
    violation: np.ndarray
    desired_acceleration: np.ndarray
    hard: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    restitution: np.ndarray
    names: tuple[str, ...]

    @staticmethod
    def empty(nv: int) -> "OneSidedRows":
        """No active rows for a system with nv velocity coordinates."""
        z = np.zeros(0)
        return OneSidedRows(np.zeros((0, nv)), z, z, z, np.zeros(0, dtype=bool), z, z, z, ())

    @property
    def count(self) -> int:
        return int(self.jacobian.shape[0])

    def validate(self, nv: int) -> None:
        """Raise ValueError naming the field whose shape or value is wrong."""
        k = self.count
        if self.jacobian.shape != (k, nv):
            raise ValueError(f"OneSidedRows.jacobian has shape {self.jacobian.shape}, expected ({k}, {nv})")
        for name in ("drift", "violation", "desired_acceleration", "hard", "stiffness", "damping", "restitution"):
            arr = getattr(self, name)
            if np.shape(arr) != (k,):
                raise ValueError(f"OneSidedRows.{name} has shape {np.shape(arr)}, expected ({k},)")
        if len(self.names) != k:
            raise ValueError(f"OneSidedRows.names has {len(self.names)} labels, expected {k}")
        finite = all_finite(np.asarray(self.jacobian, dtype=float)) and all_finite(np.asarray(self.drift, dtype=float))
        if not finite:
            raise ValueError("OneSidedRows: non-finite jacobian or drift")
        if not all_within(np.asarray(self.restitution, dtype=float), 0.0, 1.0):
            raise ValueError("OneSidedRows.restitution must lie in [0, 1]")


@runtime_checkable
class ConstraintProvider(Protocol):
    """Anything that hands one-sided rows to the simulator each step.

    rows(q, v): the active rows at this state; q shape (nq,), v shape (nv,).
    accept_forces(forces): lambda per row returned by the last rows() call,
        shape (k,) [N m or N], after the step's solve.
    rows_checked (optional class attribute): True for a provider whose rows are valid by
        construction (the shapes, finite Jacobian and drift, restitution in [0, 1] that
        OneSidedRows.validate checks), as the range-of-motion provider's compiled rows are;
        the simulator then does not validate each step's rows again. Absent or False: it
        validates them.
    compiled_rows (optional attribute): a ``limits.step_limits.CompiledRows``, rows the
        simulator's compiled step makes, solves and keeps itself (the range-of-motion
        provider's); the simulator then calls neither rows() nor accept_forces() (the first such
        provider of a simulator; any other goes through them). The provider replaces the
        attribute's value when its rows change (a new one is taken up at the next step).
    """

    name: str

    def rows(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows: ...

    def accept_forces(self, forces: np.ndarray) -> None: ...
