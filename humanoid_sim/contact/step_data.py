"""The named bundles of the compiled step (contact/step_kernel.py), allocated once per simulator.

Every array the step reads or writes lives in one of the NamedTuples below; they travel
together in one ``StepData`` record (a numba StructRef), so that a step is one compiled
call whose dispatch costs about a microsecond however many arrays it touches (a
NamedTuple argument costs ~0.2 µs per array to unbox: ~30 µs for the step's ~150).
Inside it each bundle is a record of its own over the same memory (``<Name>Record``,
contact/bundle_records.py: unowned views of the bundle's arrays, where a NamedTuple handed
from helper to helper takes and drops a reference to each of its arrays); the record keeps
the bundles themselves in ``owners``. The Python side keeps the NamedTuples and reads the
same memory the kernel wrote.

Shapes: nb bodies, nv velocity coordinates, nq configuration coordinates; C contacts,
P contact points, K hard constraint rows, N detected points (capacities: the simulator
grows them and rebuilds the record when a step reports that one was exceeded).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from humanoid_sim.contact.bounded_solve import BoundedWork, bounded_work
from humanoid_sim.contact.bundle_records import bundle_record, unowned, unowned_fields
from humanoid_sim.contact.convex_shapes import ShapeSet
from humanoid_sim.contact.narrow_phase import Manifold, NarrowScratch, manifold_buffers, narrow_scratch
from humanoid_sim.contact.pair_contacts import PairContacts, pair_contacts_buffers
from humanoid_sim.contact.penalty_volume import PenaltyVolumeData
from humanoid_sim.contact.relaxed_qp import RelaxedQpData
from humanoid_sim.dynamics.integrator import HeldWrenches, StageWork, held_wrenches
from humanoid_sim.dynamics.kinematic_tree import KinematicTree
from humanoid_sim.limits.step_limits import CompiledRows, StepLimitsRecord

if TYPE_CHECKING:
    from humanoid_sim.simulator.actuation import Actuation

__all__ = [
    "COUNTS_DTYPE",
    "REPORT_DTYPE",
    "REPORT_WORDS",
    "ResultParts",
    "BodyPairs",
    "ContactTable",
    "Detection",
    "Dynamics",
    "HardRowTable",
    "JointFriction",
    "MemoryTable",
    "StepCounts",
    "StepData",
    "StepOutput",
    "StepState",
    "StepParams",
    "StepStatics",
    "allocate_contact_table",
    "allocate_detection",
    "allocate_hard_rows",
    "allocate_memory",
    "allocate_output",
    "allocate_solve",
    "body_pairs",
    "joint_friction",
    "make_step_data",
    "read_counts",
    "result_head",
    "result_parts",
    "result_size",
]


class StepParams(NamedTuple):
    """Scalars of the step. dt [s]; ground_height [m]; has_ground; tolerance: contact band
    [m]; band: smallest speculative band beyond it [m]; separating, impact, bounce: velocity
    thresholds [m/s]; correction_rate: 2 kd [1/s]; kp [1/s^2], kd [1/s]: Eq. 20b gains;
    correction_cap: the largest |kp err| of a hard row [m/s^2, rad/s^2] (kd x
    Thresholds.max_correction);
    max_rounds: checked solves per phase; bounded_regularisation, bounded_sweeps,
    bounded_tolerance: the bounded solve's (contact/bounded_solve.py); method: the contact
    method (contact/methods.py: VIRTUAL_LINK, RELAXED_QP, PENALTY_VOLUME)."""

    dt: float
    ground_height: float
    has_ground: bool
    tolerance: float
    band: float
    separating: float
    impact: float
    bounce: float
    correction_rate: float
    kp: float
    kd: float
    correction_cap: float
    max_rounds: int
    bounded_regularisation: float
    bounded_sweeps: int
    bounded_tolerance: float
    method: int


class Dynamics(NamedTuple):
    """The dynamics workspace at (q, v) (dynamics/workspace.py): kinematics R (nb, 3, 3),
    p (nb, 3), S (nv, 6), V, A (nb, 6), world inertias Iw (nb, 6, 6), M (nv, nv) with the
    armature and implicit damping on its diagonal, b (nv,); RNEA scratch acc, f (nb, 6);
    a_gravity (6,); zero_nv (nv,); damping (nv,) [N m s/rad or N s/m]; composite
    inertias Ic (nb, 6, 6); diagonal (nv,): the armature plus dt x damping added to M's
    diagonal [kg m^2 or kg]."""

    R: np.ndarray
    p: np.ndarray
    S: np.ndarray
    V: np.ndarray
    A: np.ndarray
    Iw: np.ndarray
    M: np.ndarray
    b: np.ndarray
    acc: np.ndarray
    f: np.ndarray
    a_gravity: np.ndarray
    zero_nv: np.ndarray
    damping: np.ndarray
    Ic: np.ndarray
    diagonal: np.ndarray


class StepStatics(NamedTuple):
    """What does not change between steps: collision candidates (ContactGeometry: body,
    kind, local, axis, radius) and each body's reach [m] (nb,); static boxes for the point
    detection box_R (nbox, 3, 3), box_p (nbox, 3), box_half (nbox, 3) (the simulator gives
    none: its static boxes go to the narrow phase, BodyPairs); per element (the ground,
    the static boxes, then a row per pair of bodies of BodyPairs): mu_s, mu_d, restitution;
    robot (nb,) int64: 1 for the robot's bodies, whose ground contacts make the ZMP."""

    g_body: np.ndarray
    g_kind: np.ndarray
    g_local: np.ndarray
    g_axis: np.ndarray
    g_radius: np.ndarray
    reach: np.ndarray
    box_R: np.ndarray
    box_p: np.ndarray
    box_half: np.ndarray
    mu_s: np.ndarray
    mu_d: np.ndarray
    restitution: np.ndarray
    robot: np.ndarray


class Detection(NamedTuple):
    """Detected points (N,): candidate index, element, surface, gap [m], point, normal,
    tangent (N, 3) (world), roll (N, 4) (kernels.detect_points_nb), sort keys and order,
    a selection buffer; body: the body the point is on, other: the body it touches (-1:
    the environment). A point between two bodies (BodyPairs) is on B's surface, its
    normal points from A (other) into B (body): B moves along it to separate. watch (N,),
    n_watch (1,): the points the contacts left out and the acceleration phase watches
    (step_kernel._watch_points). Scratch of a group's classification
    (kernels.classify_into): pts (N, 3) its points, uv (N, 2) their plane coordinates
    (later a contact's hull polygon: step_kernel._hull_polygon), hull_order (N,) and hull
    (2 N,) int64 its convex hull's (before the groups, hull_order is the hits' sort's scratch;
    after the solve, both are the support polygon's). frame (6, 3): kernels.detect_points_nb's
    scratch."""

    body: np.ndarray
    other: np.ndarray
    idx: np.ndarray
    elem: np.ndarray
    face: np.ndarray
    gap: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    tangent: np.ndarray
    roll: np.ndarray
    keys: np.ndarray
    order: np.ndarray
    sel: np.ndarray
    watch: np.ndarray
    n_watch: np.ndarray
    pts: np.ndarray
    uv: np.ndarray
    hull_order: np.ndarray
    hull: np.ndarray
    frame: np.ndarray


class ContactTable(NamedTuple):
    """Contacts of one build (C rows) and their points (P rows).

    Per contact: body, other (the second body, -1: the environment; the contact's
    velocities and Jacobian are body's less other's, its wrench acts on body and the
    opposite on other), element, face (surface of the element); kind (1 point, 2 line,
    3 surface: Table 1); point_start, point_count; hull_start, hull_count (positions into
    the contact's points, ccw; a line's two ends); memory_row (-1: none); sticking (0/1);
    spin (-1, 0, +1: spinning about z, Table 2); released (0/1); rolling (0/1); keep_anchor
    (0/1: the remembered anchor stays valid); stopping (0/1: a slip that would reverse within
    the step, stopped by the step's end: step_kernel._check); bounced (0/1: took an impulse and left);
    impulse_taken (0/1); guard (0/1: a frictionless point row that only keeps a point of the
    band from ending the step deeper: step_kernel._build_contacts); slip (C, 2): slip direction in the virtual-link x, y; origin
    (C, 3), R (C, 3, 3): the virtual link X_world_vl; min_gap [m]; arm: torsion arm d [m];
    G (C, 6, nv), drift, vel (C, 6): virtual-link Jacobian, J̇v and velocity; target (C, 6):
    desired row values of the current phase; wrench, impulse (C, 6): virtual-link frame
    [N, N m] / [N s, N m s]; wrench_world (C, 6): world axes at origin; pv (C, 3): Eq. 26.
    Points: xy (P, 2) in the virtual-link frame [m], gap (P,), hit (P,): the detected point,
    hull (P,), world (P, 3); point_force (P, 3): the force on body at each point, world axes
    [N] (step average), filled by the methods that have per-vertex forces."""

    body: np.ndarray
    other: np.ndarray
    element: np.ndarray
    face: np.ndarray
    kind: np.ndarray
    point_start: np.ndarray
    point_count: np.ndarray
    hull_start: np.ndarray
    hull_count: np.ndarray
    memory_row: np.ndarray
    sticking: np.ndarray
    spin: np.ndarray
    released: np.ndarray
    rolling: np.ndarray
    keep_anchor: np.ndarray
    stopping: np.ndarray
    bounced: np.ndarray
    impulse_taken: np.ndarray
    guard: np.ndarray
    row_start: np.ndarray
    slip: np.ndarray
    origin: np.ndarray
    R: np.ndarray
    min_gap: np.ndarray
    arm: np.ndarray
    G: np.ndarray
    drift: np.ndarray
    vel: np.ndarray
    target: np.ndarray
    wrench: np.ndarray
    impulse: np.ndarray
    wrench_world: np.ndarray
    pv: np.ndarray
    xy: np.ndarray
    gap: np.ndarray
    hit: np.ndarray
    hull: np.ndarray
    world: np.ndarray
    point_force: np.ndarray


class MemoryTable(NamedTuple):
    """What contacts remember between steps, two tables (read one, write the other; the
    first axis): key (2, cap, 3) (body, element, face); sticking (2, cap); anchor pose
    R (2, cap, 3, 3), p (2, cap, 3) (X_world_body when sticking began); slip (2, cap, 3):
    last slip direction in the world; force, moment (2, cap, 3): the solved wrench of the
    acceleration phase [N, N m] in world axes, the moment about ``origin`` (2, cap, 3) [m]
    (the contact's origin, world): the bounded solve's warm start; count (2,): rows in use;
    current (1,): the table read by the next step."""

    key: np.ndarray
    sticking: np.ndarray
    R: np.ndarray
    p: np.ndarray
    slip: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    origin: np.ndarray
    count: np.ndarray
    current: np.ndarray


class HardRowTable(NamedTuple):
    """Hard one-sided rows of the constraint providers (K rows): jacobian (K, nv), drift,
    violation, desired (acceleration), restitution (K,) (see contact/constraint_rows.py);
    active (K,) scratch; target (K,) the phase's desired values; force (K,): the
    acceleration phase's forces; impulse (K,): the impulse phase's impulses (the sum over its
    passes); earlier (K,): scratch, the impulses of the earlier passes; warm (K,): the same
    row's force in the previous step (0 for a new row), the bounded solve's warm start."""

    jacobian: np.ndarray
    drift: np.ndarray
    violation: np.ndarray
    desired: np.ndarray
    restitution: np.ndarray
    active: np.ndarray
    target: np.ndarray
    force: np.ndarray
    impulse: np.ndarray
    earlier: np.ndarray
    warm: np.ndarray


class JointFriction(NamedTuple):
    """Coulomb friction of the joints that have it (m joints): index (m,) their velocity
    coordinates; bound (m,) the friction torque or force F [N m or N]; stick (m,) 0/1 the
    joint held (a row v̇ = -v/dt with |λ| <= F) or slipping (the known torque F sign);
    sign (m,): the slipping torque's sign; torque (m,): the friction torque of the step
    (out); base (nv,): scratch."""

    index: np.ndarray
    bound: np.ndarray
    stick: np.ndarray
    sign: np.ndarray
    torque: np.ndarray
    base: np.ndarray


COUNTS_DTYPE = np.dtype(
    [
        ("contacts", np.int64),  # contacts reported
        ("hits", np.int64),  # detected points
        ("speculative", np.int64),  # speculative points kept by the last build
        ("rounds", np.int64),  # checked solves of the acceleration phase (its last pass)
        ("watched", np.int64),  # watched points the acceleration phase took in (step_kernel._watch_points)
        ("impulse", np.int64),  # the impulse phase ran (0/1)
        ("validated", np.int64),  # every integrated solve passed its checks (0/1)
        ("bounded", np.int64),  # a bounded solve replaced a checked one (0/1)
        ("sweeps", np.int64),  # Gauss-Seidel sweeps of the step's bounded solves (the most)
        ("stages", np.int64),  # Runge-Kutta stages evaluated beyond the first (0: a state at rest)
        ("ground_points", np.int64),  # points of the ZMP's support
        ("ground_hull", np.int64),  # their hull's size
        ("memory", np.int64),  # contacts remembered for the next step
        ("table", np.int64),  # which of StepData.tables holds the reported contacts
        ("report_points", np.int64),  # the reported contacts' points: rows 0.. of that table's world
        ("limit_rows", np.int64),  # rows of the range of motion evaluated in the step (limits/step_limits.py)
        ("max_penetration", np.float64),  # deepest detected point, reported or not [m] (>= 0)
    ]
)

# One reported contact (StepOutput.reports, rows 0..counts.contacts - 1), written by the step:
# its body, element (environment element or, between two bodies, the other's row), kind
# (POINT, LINE, SURFACE), sticking (0/1), spin [rad/s about the normal, 0: none], other body
# (-1: the environment), its points' rows in the table's world points; the virtual link's
# origin (world) [m] and axes R_world_vl (z the normal); the step's average wrench (f, n) in
# the virtual-link axes and in the world axes about the origin [N, N m]; the step's impulse
# (virtual-link axes) [N s, N m s]; p_v (Eq. 26, world) [m], NaN without a normal force.
REPORT_DTYPE = np.dtype(
    [
        ("body", np.int64),
        ("element", np.int64),
        ("kind", np.int64),
        ("sticking", np.int64),
        ("spin", np.float64),
        ("other", np.int64),
        ("point_start", np.int64),
        ("point_count", np.int64),
        ("origin", np.float64, (3,)),
        ("R", np.float64, (3, 3)),
        ("wrench", np.float64, (6,)),
        ("wrench_world", np.float64, (6,)),
        ("impulse", np.float64, (6,)),
        ("pv", np.float64, (3,)),
    ]
)
# a record's size in float64 words (StepOutput.report_words, StepOutput.result)
REPORT_WORDS = REPORT_DTYPE.itemsize // 8
if REPORT_WORDS * 8 != REPORT_DTYPE.itemsize:
    raise ImportError("REPORT_DTYPE is not a whole number of float64 words")


class StepCounts(NamedTuple):
    """One step's counts read back in one call (``read_counts``): the fields of COUNTS_DTYPE,
    in its order."""

    contacts: int
    hits: int
    speculative: int
    rounds: int
    watched: int
    impulse: int
    validated: int
    bounded: int
    sweeps: int
    stages: int
    ground_points: int
    ground_hull: int
    memory: int
    table: int
    report_points: int
    limit_rows: int
    max_penetration: float


if StepCounts._fields != COUNTS_DTYPE.names:  # one list of names, written twice: keep them equal
    raise ImportError("StepCounts and COUNTS_DTYPE list different fields")

# COUNTS_DTYPE's bytes as struct reads them (packed, native order): a step's counts read back in
# 0.3 µs (numpy's record .item() took 1.2 µs)
_COUNTS_STRUCT = struct.Struct("=" + "".join({"i": "q", "f": "d"}[COUNTS_DTYPE[name].kind]
                                              for name in COUNTS_DTYPE.names))
if _COUNTS_STRUCT.size != COUNTS_DTYPE.itemsize:
    raise ImportError("COUNTS_DTYPE has a field that is not int64 or float64")


def read_counts(counts_bytes: np.ndarray) -> StepCounts:
    """The StepCounts of StepOutput.counts, given as its bytes (``counts.view(np.uint8)``)."""
    return tuple.__new__(StepCounts, _COUNTS_STRUCT.unpack_from(counts_bytes))


class StepOutput(NamedTuple):
    """q_next (nq,), v_next (nv,): the state after the step; a (nv,): the solve's
    acceleration (first stage); applied (nj,): the applied efforts (Actuation.applied, copied
    at the step's end); v_plus (nv,): velocity after any impulse; v_pass (nv,): the
    velocity at the start of an impulse pass; a0 (nv,), tau_c (nv,): scratch; zmp (10,):
    point (3,), margin, force (3,), moment (3,); zmp_points (P, 2): the ground contacts' points
    (x, y) [m]; counts (1,) COUNTS_DTYPE; reports (C,) REPORT_DTYPE: the reported contacts,
    report_words (C REPORT_WORDS,): the same memory as float64 words; held: the contacts'
    wrenches held on their bodies' points over the integration (dynamics/integrator.py), room
    for two per contact.
    result: what a StepResult keeps of the step, in one array that it copies in one call
    (simulator/step_result.py): q_next, v_next, a, applied and zmp are its first slices (the
    head, ``result_head``); the step then writes after them the support polygon of the ZMP
    (counts.ground_hull rows (x, y), ccw), the reported contacts' points (counts.report_points
    rows (x, y, z) [m], then, under the methods with per-point forces, as many rows of their
    forces [N]) and the counts.contacts records' words (``result_size``)."""

    result: np.ndarray
    q_next: np.ndarray
    v_next: np.ndarray
    a: np.ndarray
    applied: np.ndarray
    v_plus: np.ndarray
    v_pass: np.ndarray
    a0: np.ndarray
    tau_c: np.ndarray
    zmp: np.ndarray
    zmp_points: np.ndarray
    counts: np.ndarray
    reports: np.ndarray
    report_words: np.ndarray
    held: HeldWrenches


@njit(cache=True)
def result_head(nq: int, nv: int, nj: int) -> int:
    """The words of StepOutput.result before the support polygon: q_next, v_next, a, applied,
    zmp (the step's report and the Python side read the block by this)."""
    return nq + 2 * nv + nj + 10


def result_size(head: int, counts: StepCounts, point_forces: bool) -> int:
    """The words of StepOutput.result a step wrote (its docstring), head = result_head(...);
    point_forces: the contact method reports per-point forces."""
    point_rows = 2 * counts.report_points if point_forces else counts.report_points
    return head + 2 * counts.ground_hull + 3 * point_rows + REPORT_WORDS * counts.contacts


class ResultParts(NamedTuple):
    """A step's StepOutput.result block (or a copy of its first result_size words) as views:
    q (nq,), v (nv,): the new state; a (nv,): the acceleration; applied (nj,): the applied
    efforts; zmp (3,) [m], margin [m], force (3,) [N], moment (3,) [N m] about the world origin:
    the ZMP of the ground contacts; support (h, 2): its support polygon; points (m, 3) [m]:
    the reported contacts' points; point_forces (m, 3) [N] or None: theirs under the per-point
    methods; records (n,) REPORT_DTYPE: the reported contacts."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    applied: np.ndarray
    zmp: np.ndarray
    margin: float
    force: np.ndarray
    moment: np.ndarray
    support: np.ndarray
    points: np.ndarray
    point_forces: np.ndarray | None
    records: np.ndarray


def result_parts(block: np.ndarray, nq: int, nv: int, nj: int, counts: StepCounts, point_forces: bool) -> ResultParts:
    """The ResultParts of ``block`` (StepOutput.result or a copy of what a step wrote in it) for
    a model of nq, nv coordinates and nj actuated joints, the step's counts and whether its
    method reports per-point forces: the one reading of the block's layout."""
    q, v, a, applied, zmp, tail = np.split(block, np.cumsum((nq, nv, nv, nj, 10)))
    h, m, n = 2 * counts.ground_hull, 3 * counts.report_points, REPORT_WORDS * counts.contacts
    forces = m if point_forces else 0
    support, points, pf, records = np.split(tail[: h + m + forces + n], np.cumsum((h, m, forces)))
    return ResultParts(q, v, a, applied, zmp[:3], float(zmp[3]), zmp[4:7], zmp[7:10], support.reshape(-1, 2),
                       points.reshape(-1, 3), pf.reshape(-1, 3) if point_forces else None,
                       records.view(REPORT_DTYPE))  # fmt: skip


@structref.register
class StepDataType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class StepData(structref.StructRefProxy):
    """Everything one compiled step touches (fields: tree, stage, dyn, statics, params,
    detection, tables (two ContactTables: a phase's build and the next), memory, hard,
    friction (JointFriction), out, solve: SolveScratch, pairs: BodyPairs, relaxed: RelaxedQpData
    (contact/relaxed_qp.py), penalty: PenaltyVolumeData (contact/penalty_volume.py),
    actuation: the actuated joints' efforts and velocity-limit rule (simulator/actuation.py);
    state: StepState, the state a step starts from and leaves its new state in; limits,
    limit_work: a range of motion evaluated in the step, its StepLimits and LimitWork
    (limits/step_limits.py);
    owners: the bundles whose arrays the records view, kept alive with the record, never read)."""


class StepState(NamedTuple):
    """The state a step starts from, q (nq,) and v (nv,): the simulator keeps its state in these
    arrays (allocated once), and a step that succeeds leaves its new state in them (StepOutput's
    q_next, v_next), so that the state is not handed to the compiled step nor copied back."""

    q: np.ndarray
    v: np.ndarray


_FIELDS = ["tree", "stage", "dyn", "statics", "params", "detection", "tables", "memory", "hard", "friction", "out",
           "solve", "pairs", "relaxed", "penalty", "actuation", "state", "limits", "limit_work", "owners"]
structref.define_proxy(StepData, StepDataType, _FIELDS)


class SolveScratch(NamedTuple):
    """Scratch of the checked and bounded solves for R rows: H, H_hat (R, nv); rhs, lam
    (R,); ZhT (nv R,): L^-T Ĥᵀ of a checked solve with Ĥ != H, used as (nv, k), and ZT (nv R,):
    its L^-T Hᵀ; B, LB (R R,): its B = H A^-1 Ĥᵀ and B's factors, used as (k, k); r (R,): its
    right side; x (nv,); L (nv, nv): M's tree factor, M = Lᵀ L (dynamics/mass_factor.py);
    J (6, nv); block_start, hull_start (R + 1,); block_kind (R,); mu, arm, bound (R,); hull_xy
    (P, 2); slip (R, 2): sliding directions of the bounded solve's blocks; G_other (6, nv), drift_other, vel_other (6,): the second body's share of a
    contact between two bodies; hat (R,) int64: 1 for a row of Ĥ that is not H's (Ĥ_Cfz of
    a slipping or spinning contact: only these rows of H_hat are written), zh (nv,): scratch
    of its L^-T ĥᵀ; bounded: the bounded solve's scratch (BoundedWork), whose ZT and B are ZT
    and B here: gram (1,) int64 is k while they hold L^-T Hᵀ and the Gram H A^-1 Hᵀ of H's
    first k rows at the step's L (a checked solve with Ĥ = H, or a bounded solve), 0 when not;
    a bounded solve of the same rows then forms neither again."""

    H: np.ndarray
    H_hat: np.ndarray
    rhs: np.ndarray
    lam: np.ndarray
    ZhT: np.ndarray
    B: np.ndarray
    LB: np.ndarray
    x: np.ndarray
    L: np.ndarray
    J: np.ndarray
    block_start: np.ndarray
    block_kind: np.ndarray
    mu: np.ndarray
    arm: np.ndarray
    bound: np.ndarray
    hull_xy: np.ndarray
    hull_start: np.ndarray
    slip: np.ndarray
    G_other: np.ndarray
    drift_other: np.ndarray
    vel_other: np.ndarray
    ZT: np.ndarray
    r: np.ndarray
    hat: np.ndarray
    zh: np.ndarray
    bounded: BoundedWork
    gram: np.ndarray


def allocate_detection(N: int) -> Detection:
    return Detection(
        np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N), np.zeros((N, 3)),
        np.zeros((N, 3)), np.zeros((N, 3)), np.zeros((N, 4)), np.zeros(N, np.int64), np.zeros(N, np.int64),
        np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(1, np.int64), np.zeros((N, 3)), np.zeros((N, 2)),
        np.zeros(N, np.int64), np.zeros(2 * N, np.int64), np.zeros((6, 3)),
    )  # fmt: skip


def allocate_contact_table(C: int, P: int, nv: int) -> ContactTable:
    i = lambda: np.zeros(C, np.int64)  # noqa: E731
    return ContactTable(
        i(), i(), i(), i(), i(), i(), i(), i(), i(), i(), i(), np.zeros(C), i(), i(), i(), i(), i(), i(), i(), i(),
        np.zeros((C, 2)), np.zeros((C, 3)), np.zeros((C, 3, 3)), np.zeros(C), np.zeros(C), np.zeros((C, 6, nv)),
        np.zeros((C, 6)), np.zeros((C, 6)), np.zeros((C, 6)), np.zeros((C, 6)), np.zeros((C, 6)), np.zeros((C, 6)),
        np.zeros((C, 3)), np.zeros((P, 2)), np.zeros(P), np.zeros(P, np.int64), np.zeros(P, np.int64), np.zeros((P, 3)),
        np.zeros((P, 3)),
    )  # fmt: skip


def allocate_memory(cap: int) -> MemoryTable:
    return MemoryTable(
        np.zeros((2, cap, 3), np.int64), np.zeros((2, cap), np.int64), np.zeros((2, cap, 3, 3)),
        np.zeros((2, cap, 3)), np.zeros((2, cap, 3)), np.zeros((2, cap, 3)), np.zeros((2, cap, 3)),
        np.zeros((2, cap, 3)), np.zeros(2, np.int64), np.zeros(1, np.int64),
    )  # fmt: skip


def allocate_hard_rows(K: int, nv: int) -> HardRowTable:
    z = lambda: np.zeros(K)  # noqa: E731
    return HardRowTable(np.zeros((K, nv)), z(), z(), z(), z(), np.zeros(K, np.int64), z(), z(), z(), z(), z())


def allocate_output(nq: int, nv: int, nj: int, P: int, C: int) -> StepOutput:
    """The StepOutput of a model of nq, nv coordinates and nj actuated joints, for P points and
    C contacts; its result block's head is its q_next, v_next, a, applied and zmp, with room
    after it for P support rows, P points and their forces and C records."""
    sizes = (nq, nv, nv, nj, 10)
    result = np.zeros(sum(sizes) + 2 * P + 6 * P + REPORT_WORDS * C)
    q_next, v_next, a, applied, zmp, _ = np.split(result, np.cumsum(sizes))
    reports = np.zeros(C, REPORT_DTYPE)
    return StepOutput(
        result, q_next, v_next, a, applied, np.zeros(nv), np.zeros(nv), np.zeros(nv), np.zeros(nv), zmp,
        np.zeros((P, 2)), np.zeros(1, COUNTS_DTYPE), reports, reports.view(np.float64), held_wrenches(2 * C),
    )  # fmt: skip


def allocate_solve(rows: int, nv: int, P: int) -> SolveScratch:
    R = rows
    bounded = bounded_work(R, nv, P)
    return SolveScratch(
        np.zeros((R, nv)), np.zeros((R, nv)), np.zeros(R), np.zeros(R), np.zeros(nv * R), bounded.B,
        np.zeros(R * R), np.zeros(nv), np.zeros((nv, nv)), np.zeros((6, nv)), np.zeros(R + 1, np.int64),
        np.zeros(R, np.int64), np.zeros(R), np.zeros(R), np.zeros(R), np.zeros((P, 2)), np.zeros(R + 1, np.int64),
        np.zeros((R, 2)), np.zeros((6, nv)), np.zeros(6), np.zeros(6), bounded.ZT, np.zeros(R),
        np.zeros(R, np.int64), np.zeros(nv), bounded, np.zeros(1, np.int64),
    )  # fmt: skip


def joint_friction(index: np.ndarray, bound: np.ndarray, nv: int) -> JointFriction:
    m = len(index)
    return JointFriction(np.asarray(index, np.int64), np.asarray(bound, float), np.zeros(m, np.int64), np.zeros(m),
                         np.zeros(m), np.zeros(nv))  # fmt: skip


@njit(cache=True)
def _make(tree, stage, dyn, statics, params, detection, tables, memory, hard, friction, out, solve, pairs, relaxed,
          penalty, actuation, state, limit_work, limits):
    """The StepData of the bundles, each as its record (bundle_records.py) of unowned views of
    the same arrays (the actuation as the same NamedTuple of such views), the bundles
    themselves kept in ``owners``."""
    u = unowned_fields
    return StepData(KinematicTreeRecord(*u(tree)), StageWorkRecord(*u(stage)), DynamicsRecord(*u(dyn)),
                    StepStaticsRecord(*u(statics)), params, DetectionRecord(*u(detection)),
                    (ContactTableRecord(*u(tables[0])), ContactTableRecord(*u(tables[1]))), MemoryTableRecord(*u(memory)),
                    HardRowTableRecord(*u(hard)), JointFrictionRecord(*u(friction)), StepOutputRecord(*u(out)),
                    SolveScratchRecord(*u(solve)), BodyPairsRecord(*u(pairs)), RelaxedQpDataRecord(*u(relaxed)),
                    PenaltyVolumeDataRecord(*u(penalty)), unowned(actuation), unowned(state),
                    StepLimitsRecord(*u(limits)), limit_work,
                    (tree, stage, dyn, statics, detection, tables, memory, hard, friction, out, solve, pairs, relaxed,
                     penalty, actuation, state, limits))  # fmt: skip


def make_step_data(
    tree: KinematicTree, stage: StageWork, dyn: Dynamics, statics: StepStatics, params: StepParams,
    detection: Detection, tables: tuple[ContactTable, ContactTable], memory: MemoryTable, hard: HardRowTable,
    friction: JointFriction, out: StepOutput, solve: SolveScratch, pairs: "BodyPairs", relaxed: RelaxedQpData,
    penalty: PenaltyVolumeData, actuation: "Actuation", state: StepState, limits: CompiledRows,
) -> StepData:
    """One StepData over the given bundles, as records (the arrays are shared, not copied)."""
    return _make(tree, stage, dyn, statics, params, detection, tables, memory, hard, friction, out, solve, pairs, relaxed,
                 penalty, actuation, state, limits.work, limits.limits)


class BodyPairs(NamedTuple):
    """Contacts by the narrow phase: collision shapes (n) and their candidate pairs.

    shapes: the shapes packed for the narrow phase (convex_shapes.ShapeSet, shape frames);
    body (n,) int64: the body each shape moves with, -1 for a static shape of the
    environment (a static box; static shapes come first); R_local (n, 3, 3), p_local
    (n, 3): X_body_shape (X_world_shape for a static one); pair_id (n, n) int64,
    symmetric: 1 + the candidate index of the pair (i, j), 0 for a pair that never
    collides (two static shapes, same body, adjacent links, an SRDF's disabled pair:
    contact/self_collision.py), so that a pair keeps its index (and its contact memory)
    from step to step; element (candidates,) int64: the element (material row of
    StepStatics, name) of each candidate: a static box's own, or a row of its own for two
    bodies. Work: R (n, 3, 3), p (n, 3) the shapes' world poses; lo, hi (n, 3) their
    AABBs; order (n,) the broad phase's
    sort (kept between steps); pairs (cap, 2) the overlapping candidates of a step;
    contacts (pair_contacts.PairContacts), manifold, scratch: the narrow phase's buffers."""

    shapes: ShapeSet
    body: np.ndarray
    R_local: np.ndarray
    p_local: np.ndarray
    pair_id: np.ndarray
    element: np.ndarray
    R: np.ndarray
    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    order: np.ndarray
    pairs: np.ndarray
    contacts: PairContacts
    manifold: Manifold
    scratch: NarrowScratch


def body_pairs(
    shapes: ShapeSet, body: np.ndarray, X_body_shape: np.ndarray, pair_id: np.ndarray, element: np.ndarray,
    capacity: int,
) -> BodyPairs:
    """A BodyPairs over n shapes (X_body_shape (n, 4, 4)) with room for ``capacity``
    overlapping pairs and contact points per step (the simulator grows it with its tables)."""
    n = len(body)
    X = np.asarray(X_body_shape, dtype=float).reshape(n, 4, 4)
    cap = max(int(capacity), 1)
    R_local, p_local = np.ascontiguousarray(X[:, :3, :3]), np.ascontiguousarray(X[:, :3, 3])
    static = np.asarray(body) < 0
    R, p = np.zeros((n, 3, 3)), np.zeros((n, 3))
    R[static], p[static] = R_local[static], p_local[static]  # a static shape's pose never changes
    return BodyPairs(
        shapes, np.asarray(body, np.int64).copy(), R_local, p_local, np.ascontiguousarray(pair_id, dtype=np.int64),
        np.asarray(element, np.int64).copy(), R, p, np.zeros((n, 3)), np.zeros((n, 3)), np.arange(n, dtype=np.int64),
        np.zeros((cap, 2), np.int64), pair_contacts_buffers(cap), manifold_buffers(shapes), narrow_scratch(shapes),
    )  # fmt: skip


# the compiled step's records of its bundles (bundle_records.py): numba's cache finds their types here
KinematicTreeRecordType, KinematicTreeRecord = bundle_record(KinematicTree, __name__)
StageWorkRecordType, StageWorkRecord = bundle_record(StageWork, __name__)
DynamicsRecordType, DynamicsRecord = bundle_record(Dynamics, __name__)
StepStaticsRecordType, StepStaticsRecord = bundle_record(StepStatics, __name__)
DetectionRecordType, DetectionRecord = bundle_record(Detection, __name__)
ContactTableRecordType, ContactTableRecord = bundle_record(ContactTable, __name__)
MemoryTableRecordType, MemoryTableRecord = bundle_record(MemoryTable, __name__)
HardRowTableRecordType, HardRowTableRecord = bundle_record(HardRowTable, __name__)
JointFrictionRecordType, JointFrictionRecord = bundle_record(JointFriction, __name__)
StepOutputRecordType, StepOutputRecord = bundle_record(StepOutput, __name__)
SolveScratchRecordType, SolveScratchRecord = bundle_record(SolveScratch, __name__)
BodyPairsRecordType, BodyPairsRecord = bundle_record(BodyPairs, __name__)
RelaxedQpDataRecordType, RelaxedQpDataRecord = bundle_record(RelaxedQpData, __name__)
PenaltyVolumeDataRecordType, PenaltyVolumeDataRecord = bundle_record(PenaltyVolumeData, __name__)
