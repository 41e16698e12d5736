"""The compiled tables of a range of motion, and the rows the compiled evaluation writes.

``RangeTables`` holds, as arrays, everything constant about a robot's joint stops and
ball-joint groups (``range_config``, ``ball_joint_rows``, ``swing_boundary``): the input of
``limits.kernels.limit_rows_nb``, which finds the active rows of all of them in one call, and
of ``rows_screen_nb``. ``LimitRows`` is where that call writes them (allocated once).
``limit_work`` hands both to the kernels as one record (``LimitWork``, of
contact/bundle_records.py's records): a call unboxes one object instead of 44 arrays (~6 µs).

Groups are padded to the largest control-point and sample counts; ``n_points`` and
``n_samples`` hold each group's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from humanoid_sim.contact.bundle_records import bundle_record, unowned, unowned_fields

if TYPE_CHECKING:
    from humanoid_sim.limits.ball_joint_rows import BallJointKinematics

__all__ = [
    "GroupScratch",
    "LimitRows",
    "LimitWork",
    "RangeTables",
    "group_scratch",
    "limit_rows",
    "limit_work",
    "range_tables",
]


class RangeTables(NamedTuple):
    """S joint stops and G ball-joint groups as arrays (angles [rad], lengths [m]).

    stop_q, stop_v (S,) int64: each stop's joint's q and v index; stop_lower, stop_upper (S,):
    its limits (±inf where the URDF gives none).
    g_q, g_v (G, 3) int64: each group's three joints' q and v indices (in a world of several
    trees they differ by more than nq - nv).
    R_zero (G, 3, 3, 3): each joint's frame in its parent's; axes (G, 3, 3): each joint's axis
    in its own frame; R_reference (G, 3, 3): the last body in the group's parent at the all-zero
    posture; twist_axis, azimuth_axis_1, azimuth_axis_2 (G, 3): the swing-twist frame
    (swing_twist).
    n_points, n_samples (G,) int64: each boundary's control points n and dense samples m per
    segment; coefficients (G, N, 4, 2), samples (G, N, M, 2), boxes (G, N, 6): its cubic
    segments, their dense samples and the samples' bounding boxes with how far the curve
    moves between neighbours (swing_boundary);
    twist_lower, twist_upper (G, N): twist limits at the control points; centre_twist (G, 2):
    at θ = 0; orientation (G,): +1 counter-clockwise, -1 clockwise.
    reach (G,): bound on half the longest arc between neighbouring samples; lo_max, hi_min
    (G,): the twist range every swing point's limits contain (the screen, group_clear_nb);
    inner (G,): radius of a disc about the swing plane's origin inside the boundary and clear
    of it (0: none, the origin is not inside), so that a swing point s in it is at least
    inner - |s| inside (the screen's first test).
    """

    stop_q: np.ndarray
    stop_v: np.ndarray
    stop_lower: np.ndarray
    stop_upper: np.ndarray
    g_q: np.ndarray
    g_v: np.ndarray
    R_zero: np.ndarray
    axes: np.ndarray
    R_reference: np.ndarray
    twist_axis: np.ndarray
    azimuth_axis_1: np.ndarray
    azimuth_axis_2: np.ndarray
    n_points: np.ndarray
    n_samples: np.ndarray
    coefficients: np.ndarray
    samples: np.ndarray
    boxes: np.ndarray
    twist_lower: np.ndarray
    twist_upper: np.ndarray
    centre_twist: np.ndarray
    orientation: np.ndarray
    reach: np.ndarray
    lo_max: np.ndarray
    hi_min: np.ndarray
    inner: np.ndarray


class GroupScratch(NamedTuple):
    """One group's evaluation (limits.kernels.group_rows_with_drift_nb), allocated once.

    q_group, v_group (3,): its joints' angles [rad] and rates [rad/s]; gap (3,), row (3, 3),
    drift (3,), active (3,) bool: its swing, twist upper and twist lower rows (LimitRows);
    R_rel, J (3, 3), work (3, 3, 3), G_swing (2, 3), g_twist (3,), grad (2, 2): the geometry's
    scratch; q_shift (3,), gap_pm (2, 3), row_pm (2, 3, 3), active_pm (2, 3) bool: the drift's
    central difference.
    """

    q_group: np.ndarray
    v_group: np.ndarray
    gap: np.ndarray
    row: np.ndarray
    drift: np.ndarray
    active: np.ndarray
    R_rel: np.ndarray
    J: np.ndarray
    work: np.ndarray
    G_swing: np.ndarray
    g_twist: np.ndarray
    grad: np.ndarray
    q_shift: np.ndarray
    gap_pm: np.ndarray
    row_pm: np.ndarray
    active_pm: np.ndarray


def group_scratch() -> GroupScratch:
    """A GroupScratch."""
    return GroupScratch(
        np.zeros(3), np.zeros(3), np.zeros(3), np.zeros((3, 3)), np.zeros(3), np.zeros(3, dtype=np.bool_),
        np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((2, 3)), np.zeros(3), np.zeros((2, 2)),
        np.zeros(3), np.zeros((2, 3)), np.zeros((2, 3, 3)), np.zeros((2, 3), dtype=np.bool_),
    )  # fmt: skip


class LimitRows(NamedTuple):
    """The rows limit_rows_nb writes (K rows of room, nv velocity coordinates).

    code (K,) int64: which limit (stop i upper 2 i, lower 2 i + 1; group g's kind k
    2 S + 3 g + k, kinds swing, twist upper, twist lower); gap (K,): distance inside the limit
    (< 0 violated) [rad or m]; jacobian (K, nv): d gap/dt per v; drift (K,): d/dt(row) · v.
    group: GroupScratch, one group's evaluation at a time.
    """

    code: np.ndarray
    gap: np.ndarray
    jacobian: np.ndarray
    drift: np.ndarray
    group: GroupScratch


def limit_rows(capacity: int, nv: int) -> LimitRows:
    """Room for ``capacity`` rows of a system with nv velocity coordinates."""
    K = max(int(capacity), 1)
    return LimitRows(np.zeros(K, np.int64), np.zeros(K), np.zeros((K, nv)), np.zeros(K), group_scratch())


def _arc_reach(coefficients: np.ndarray, m: int) -> float:
    """Bound on the distance from any point of the curve to the nearer of its two neighbouring
    dense samples (m per segment): half the longest arc between neighbours, the arcs bounded by
    fine chord sums (+1 % for their shortfall)."""
    sub = 16
    t = np.linspace(0.0, 1.0, (m - 1) * sub + 1)
    P = np.einsum("tk,nkd->ntd", np.stack([t**3, t**2, t, np.ones_like(t)], axis=-1), coefficients)
    chords = np.linalg.norm(np.diff(P, axis=1), axis=2).reshape(len(coefficients), m - 1, sub).sum(axis=2)
    return 0.505 * float(chords.max()) + 1e-12


def _inner_radius(boundary, reach: float) -> float:
    """RangeTables.inner of one boundary: the samples' least distance from the origin less
    ``reach`` (every point of the curve lies within reach of a sample, so the open disc of that
    radius holds none), when the origin is inside the boundary (then so is the whole disc);
    else 0."""
    r = float(np.min(np.hypot(boundary.samples[..., 0], boundary.samples[..., 1]))) - reach
    return r if r > 0.0 and boundary.contains(np.zeros(2)) else 0.0


def range_tables(
    stop_q: np.ndarray, stop_v: np.ndarray, stop_lower: np.ndarray, stop_upper: np.ndarray,
    groups: Sequence["BallJointKinematics"],
) -> RangeTables:  # fmt: skip
    """The tables of stops (their joints' q and v indices and limits, each (S,)) and groups."""
    G = len(groups)
    N = max([k.group.boundary.coefficients.shape[0] for k in groups], default=1)
    M = max([k.group.boundary.samples.shape[1] for k in groups], default=2)
    g_q, g_v = np.zeros((G, 3), np.int64), np.zeros((G, 3), np.int64)
    R_zero, axes, R_ref = np.zeros((G, 3, 3, 3)), np.zeros((G, 3, 3)), np.zeros((G, 3, 3))
    a, e1, e2 = np.zeros((G, 3)), np.zeros((G, 3)), np.zeros((G, 3))
    n_points, n_samples = np.zeros(G, np.int64), np.zeros(G, np.int64)
    coefficients, samples, boxes = np.zeros((G, N, 4, 2)), np.zeros((G, N, M, 2)), np.zeros((G, N, 6))
    tw_lo, tw_hi, centre, orientation = np.zeros((G, N)), np.zeros((G, N)), np.zeros((G, 2)), np.zeros(G)
    reach, lo_max, hi_min, inner = np.zeros(G), np.zeros(G), np.zeros(G), np.zeros(G)
    for i, kin in enumerate(groups):
        grp, bnd = kin.group, kin.group.boundary
        n, m = bnd.samples.shape[0], bnd.samples.shape[1]
        g_q[i], g_v[i] = kin.q_index, kin.v_index
        R_zero[i], axes[i], R_ref[i] = kin.R_zero, kin.axes, kin.R_reference
        a[i], e1[i], e2[i] = grp.twist_axis, grp.zero_azimuth_axis, grp.azimuth_axis_2
        n_points[i], n_samples[i] = n, m
        coefficients[i, :n], samples[i, :n, :m], boxes[i, :n] = bnd.coefficients, bnd.samples, bnd.boxes
        tw_lo[i, :n], tw_hi[i, :n] = bnd.twist_lower, bnd.twist_upper
        centre[i] = bnd.centre_twist
        orientation[i] = bnd.orientation
        reach[i] = _arc_reach(bnd.coefficients, m)
        lo_max[i] = max(float(np.max(bnd.twist_lower)), float(bnd.centre_twist[0]))
        hi_min[i] = min(float(np.min(bnd.twist_upper)), float(bnd.centre_twist[1]))
        inner[i] = _inner_radius(bnd, reach[i])
    return RangeTables(
        np.array(stop_q, dtype=np.int64), np.array(stop_v, dtype=np.int64), np.array(stop_lower, dtype=float),
        np.array(stop_upper, dtype=float), g_q, g_v,
        R_zero, axes, R_ref, a, e1, e2, n_points, n_samples, coefficients, samples, boxes, tw_lo, tw_hi, centre,
        orientation, reach, lo_max, hi_min, inner,
    )  # fmt: skip


@structref.register
class LimitWorkType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class LimitWork(structref.StructRefProxy):
    """A RangeTables and a LimitRows as one compiled record (fields: tables, rows, each the
    record of its NamedTuple over the same memory, rows.group a GroupScratch's record; owners:
    the NamedTuples, kept alive with the record, never read)."""


structref.define_proxy(LimitWork, LimitWorkType, ["tables", "rows", "owners"])


@njit(cache=True)
def _make(tables, rows):
    u = unowned_fields
    group = GroupScratchRecord(*u(rows.group))
    out = LimitRowsRecord(unowned(rows.code), unowned(rows.gap), unowned(rows.jacobian), unowned(rows.drift), group)
    return LimitWork(RangeTablesRecord(*u(tables)), out, (tables, rows))


def limit_work(tables: RangeTables, rows: LimitRows) -> LimitWork:
    """One LimitWork over ``tables`` and ``rows`` (the arrays are shared, not copied: read the
    results in ``rows``)."""
    return _make(tables, rows)


# the records of the bundles (contact/bundle_records.py): numba's cache finds their types here
RangeTablesRecordType, RangeTablesRecord = bundle_record(RangeTables, __name__)
GroupScratchRecordType, GroupScratchRecord = bundle_record(GroupScratch, __name__)
LimitRowsRecordType, LimitRowsRecord = bundle_record(LimitRows, __name__)
