"""A step's result: StepResult, its ContactReports and ContactReport.

A StepResult is immutable and stays valid after later steps. The compiled step writes what a
result keeps into one array (contact/step_data.py, StepOutput.result: the new state, the
acceleration, the applied efforts, the ZMP and its support polygon, the contacts' points and
report records); the simulator copies the part of it the step wrote in one call, and the
result makes its arrays, ZmpReport and ContactReports from that copy when they are first
read: a step costs what is read of it. Each result's arrays are views of its own copy, not
the simulator's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from humanoid_sim.balance.zmp import ZmpReport
from humanoid_sim.contact.step_data import StepCounts, result_parts
from humanoid_sim.contact.virtual_link import ContactKind

__all__ = ["ContactReport", "ContactReports", "StepLayout", "StepResult"]

_KINDS = {int(k): k for k in ContactKind}


class ContactReport(NamedTuple):
    """One contact after a step.

    link: URDF link name of the body; body: its index; element: environment element name.
    kind: POINT / LINE / SURFACE; sticking: no slip (else slipping with friction μ_d f_z);
    spinning: rotating about the normal (Table 2).
    points: contact points (world) [m], shape (m, 3).
    origin: virtual-link origin (world) [m]; R_world_vl: its axes (3, 3) (z = normal).
    wrench_local: (f, n) in the virtual-link frame at origin [N, N m], average over the step
        (solved force + impulse / dt), shape (6,).
    wrench_world: the same in world axes, moment about origin, shape (6,).
    impulse_local: impulse of this step in the virtual-link frame [N s, N m s], shape (6,).
    p_v: centre of pressure of Eq. 26 (world) [m], shape (3,), NaN when f_z = 0.
    other_body: the second body of a contact between two bodies (its link's name is
    ``element``; it bears the opposite wrench), -1 for a contact with the environment.
    point_forces: the force on the body at each of ``points`` (world axes) [N], shape (m, 3),
    step average, from the methods that have per-vertex forces (relaxed_qp, penalty_volume);
    None under virtual_link (its unknowns are the virtual link's wrench).
    """

    link: str
    body: int
    element: str
    kind: ContactKind
    sticking: bool
    spinning: bool
    points: np.ndarray
    origin: np.ndarray
    R_world_vl: np.ndarray
    wrench_local: np.ndarray
    wrench_world: np.ndarray
    impulse_local: np.ndarray
    p_v: np.ndarray
    other_body: int = -1
    point_forces: np.ndarray | None = None


class ContactReports(Sequence):
    """A step's ContactReports (a read-only sequence) over the step's report records
    (REPORT_DTYPE, contact/step_data.py) and their points, as copied at the step; the
    ContactReport objects are made when the sequence is first read."""

    __slots__ = ("_rows", "_world", "_point_forces", "_names", "_elements", "_reports")

    def __init__(self, rows: np.ndarray, world: np.ndarray, point_forces: np.ndarray | None,
                 names: Sequence[str], elements: Sequence[str]) -> None:
        """rows (n,) REPORT_DTYPE, world (m, 3) [m] and point_forces (m, 3) [N] (or None): arrays
        that this object owns; names, elements: the body and element names."""
        self._rows, self._world, self._point_forces = rows, world, point_forces
        self._names, self._elements = names, elements
        self._reports: tuple[ContactReport, ...] | None = None

    def _all(self) -> tuple[ContactReport, ...]:
        if self._reports is None:
            rows, world, pf = self._rows, self._world, self._point_forces
            body, element, kind = rows["body"].tolist(), rows["element"].tolist(), rows["kind"].tolist()
            sticking, spin, other = rows["sticking"].tolist(), rows["spin"].tolist(), rows["other"].tolist()
            st, cnt = rows["point_start"].tolist(), rows["point_count"].tolist()
            origin, R, w, ww, imp, pv = (rows[f] for f in ("origin", "R", "wrench", "wrench_world", "impulse", "pv"))
            names, elements = self._names, self._elements
            self._reports = tuple(
                ContactReport(names[body[i]], body[i], elements[element[i]], _KINDS[kind[i]], bool(sticking[i]),
                              spin[i] != 0.0, world[st[i] : st[i] + cnt[i]], origin[i], R[i], w[i], ww[i], imp[i],
                              pv[i], other[i], None if pf is None else pf[st[i] : st[i] + cnt[i]])  # fmt: skip
                for i in range(len(body))
            )
        return self._reports

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


_NO_CONTACTS: tuple[ContactReport, ...] = ()


class StepLayout(NamedTuple):
    """What a simulator's step results need to read the copy of the step's result block
    (step_data.result_parts): nq, nv, nj the model's sizes; point_forces: the contact method
    reports per-point forces; body_names and element_names, the names of a contact's body and
    element."""

    nq: int
    nv: int
    nj: int
    point_forces: bool
    body_names: Sequence[str]
    element_names: Sequence[str]


class StepResult:
    """The result of one step (immutable; valid after later steps).

    t: time after the step [s]; q (nq,), v (nv,): the new state;
    tau_applied: joint torques applied: clamped to the effort limits and limited by the
    velocity-limit rule (limits/velocity_limits.py) [N m or N], shape (nj,);
    contacts: ContactReport per contact (a sequence: ContactReports); zmp: ZmpReport of the ground contacts;
    rounds: checked solves of the validity loop; validated: its last checked solve passed
    every check; solver: what was integrated: "checked" (seed 000's solve, every check
    passed) or "bounded" (the checked solve of the impulse or acceleration phase was rank
    deficient or still failed its checks after the rounds, and the bounded solve of
    contact/bounded_solve.py, valid by construction, replaced it); under the other contact
    methods their name ("relaxed_qp": seed 002's bounded QP, valid by construction;
    "penalty_volume": seed 004's penalty forces), or "bounded" when the joint-stop rows that
    penalty_volume leaves to seed 000's solve needed the bounded solve;
    impulse: an impulse phase ran this step; max_penetration: the deepest point of any body
    in the detection band at the start of the step, in a contact or not (released, moving
    out) [m] (>= 0);
    constraint_forces: per provider, lambda per row it returned [N m or N];
    acceleration: v̇ (nv,) of the constraint solve at the start of the step (after any
    impulse), consistent with the reported wrenches: the first Runge-Kutta stage
    [m/s^2, rad/s^2];
    sweeps: Gauss-Seidel sweeps of the step's iterative solves, 0 when none ran: under
    virtual_link the most of its bounded solves (BOUNDED_SWEEPS when one stopped at that cap
    before its tolerance: its forces are then the best multiple of its last iterate, valid but
    not converged), under relaxed_qp the total over its rounds, under penalty_volume those of
    the bounded solve of its joint-stop rows when it ran;
    watched: points out of every contact (beyond their groups' guards) that the acceleration
    phase's solve would have driven into the surface, and that it took in as guards before
    solving again (contact/step_kernel.py: _watch_points);
    stages: the Runge-Kutta stages evaluated beyond the first: 3; 7 for a fast step, taken in two
    halves; or 0 for a state at rest, which takes the constant-acceleration step the stages would
    give (dynamics/integrator.py).

    Built from its fields (``StepResult(t, q, v, ...)``, the defaults as below) or by the
    simulator from the step's copies (``of_step``), whose arrays, ZMP and contacts are made
    when first read. ``_fields``, ``_asdict()`` and iteration give the fields in this order.
    """

    _fields = (
        "t", "q", "v", "tau_applied", "contacts", "zmp", "rounds", "validated", "impulse", "max_penetration",
        "constraint_forces", "acceleration", "solver", "sweeps", "watched", "stages",
    )  # fmt: skip
    # the fields' values (read-only properties below), and a step's copies until first read
    __slots__ = tuple(f"_{name}" for name in _fields) + ("_copy", "_counts", "_layout")

    def __init__(
        self, t: float, q: np.ndarray, v: np.ndarray, tau_applied: np.ndarray, contacts: Sequence[ContactReport],
        zmp: ZmpReport, rounds: int, validated: bool, impulse: bool, max_penetration: float,
        constraint_forces: tuple[np.ndarray, ...], acceleration: np.ndarray, solver: str = "checked", sweeps: int = 0,
        watched: int = 0, stages: int = 3,
    ) -> None:
        self._t, self._q, self._v, self._tau_applied, self._contacts, self._zmp = t, q, v, tau_applied, contacts, zmp
        self._rounds, self._validated, self._impulse = rounds, validated, impulse
        self._max_penetration = max_penetration
        self._constraint_forces, self._acceleration, self._solver = constraint_forces, acceleration, solver
        self._sweeps, self._watched, self._stages = sweeps, watched, stages
        self._copy = self._counts = self._layout = None

    @classmethod
    def of_step(cls, t: float, copy: np.ndarray, counts: StepCounts, constraint_forces: tuple[np.ndarray, ...],
                solver: str, layout: StepLayout) -> "StepResult":
        """The result of a step at time t [s] from ``copy``, the words of its StepOutput.result
        block that it wrote (step_data.result_size), its counts, the providers' forces, what was
        integrated and the simulator's layout."""
        r = object.__new__(cls)
        r._t, r._copy, r._counts, r._layout = t, copy, counts, layout
        r._rounds, r._validated, r._impulse = counts.rounds, counts.validated != 0, counts.impulse != 0
        r._max_penetration, r._constraint_forces, r._solver = counts.max_penetration, constraint_forces, solver
        r._sweeps, r._watched, r._stages = counts.sweeps, counts.watched, counts.stages
        return r

    def _unpack(self) -> None:
        """The arrays, ZmpReport and ContactReports as views of the step's copy (step_data.result_parts)."""
        c, counts, layout = self._copy, self._counts, self._layout
        if c is None:  # unpacked meanwhile (by another thread)
            return
        p = result_parts(c, layout.nq, layout.nv, layout.nj, counts, layout.point_forces)
        contacts = _NO_CONTACTS
        if counts.contacts:
            contacts = ContactReports(p.records, p.points, p.point_forces, layout.body_names, layout.element_names)
        self._q, self._v, self._acceleration, self._tau_applied = p.q, p.v, p.a, p.applied
        self._zmp = tuple.__new__(ZmpReport, (p.zmp, p.support, p.margin, p.force, p.moment))
        self._contacts = contacts
        self._copy = None

    @property
    def t(self) -> float:
        return self._t

    @property
    def q(self) -> np.ndarray:
        if self._copy is not None:
            self._unpack()
        return self._q

    @property
    def v(self) -> np.ndarray:
        if self._copy is not None:
            self._unpack()
        return self._v

    @property
    def tau_applied(self) -> np.ndarray:
        if self._copy is not None:
            self._unpack()
        return self._tau_applied

    @property
    def contacts(self) -> Sequence[ContactReport]:
        if self._copy is not None:
            self._unpack()
        return self._contacts

    @property
    def zmp(self) -> ZmpReport:
        if self._copy is not None:
            self._unpack()
        return self._zmp

    @property
    def rounds(self) -> int:
        return self._rounds

    @property
    def validated(self) -> bool:
        return self._validated

    @property
    def impulse(self) -> bool:
        return self._impulse

    @property
    def max_penetration(self) -> float:
        return self._max_penetration

    @property
    def constraint_forces(self) -> tuple[np.ndarray, ...]:
        return self._constraint_forces

    @property
    def acceleration(self) -> np.ndarray:
        if self._copy is not None:
            self._unpack()
        return self._acceleration

    @property
    def solver(self) -> str:
        return self._solver

    @property
    def sweeps(self) -> int:
        return self._sweeps

    @property
    def watched(self) -> int:
        return self._watched

    @property
    def stages(self) -> int:
        return self._stages

    def _asdict(self) -> dict:
        """The fields by name, in order."""
        return {name: getattr(self, name) for name in self._fields}

    def __iter__(self):
        return iter(tuple(getattr(self, name) for name in self._fields))

    def __repr__(self) -> str:
        return "StepResult(" + ", ".join(f"{name}={value!r}" for name, value in self._asdict().items()) + ")"
