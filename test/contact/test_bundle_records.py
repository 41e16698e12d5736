"""The step's bundles as compiled records (contact/bundle_records.py): the same arrays (owned,
or unowned views of them), and a type numba's cache can store; a simulator's step record keeps
the arrays its views point into."""

import pickle
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit, typeof

from humanoid_sim.contact.bundle_records import Borrowed, borrow, bundle_record, unowned, unowned_fields
from humanoid_sim.contact.step_data import ContactTableRecord, ContactTableRecordType, allocate_contact_table


@njit
def _record(tab):
    return ContactTableRecord(*tab)


@njit
def _unowned_record(tab):
    return ContactTableRecord(*unowned_fields(tab))


@njit
def _owners_and_detection(step_data):
    """The number of bundles the record owns, and where the data of its detection record's idx
    and of the owned detection bundle's idx start (the owners tuple itself, returned, costs
    ~45 s of boxing code to compile)."""
    owners = step_data.owners
    return len(owners), step_data.detection.idx.ctypes.data, owners[4].idx.ctypes.data


@njit
def _write(rec, i, value):
    rec.min_gap[i] = value
    rec.G[i, 2, 1] = 2.0 * value
    return rec.body.shape[0] + rec.xy.shape[0]


@pytest.mark.parametrize("make", [_record, _unowned_record], ids=["owned", "unowned"])
def test_a_record_reads_and_writes_the_bundles_arrays(make):
    tab = allocate_contact_table(3, 5, 4)
    rec = make(tab)
    assert _write(rec, 1, 0.25) == 3 + 5
    assert tab.min_gap[1] == 0.25 and tab.G[1, 2, 1] == 0.5  # the kernel wrote the NamedTuple's memory
    assert np.count_nonzero(tab.min_gap) == 1 and np.count_nonzero(tab.G) == 1


class _Inner(NamedTuple):
    a: np.ndarray
    n: int


class _Outer(NamedTuple):
    x: np.ndarray
    inner: _Inner
    frozen: np.ndarray


@njit
def _write_unowned(outer):
    u = unowned(outer)
    u.x[0] = 1.5
    u.inner.a[1, 1] = 2.5
    return u


def test_a_bundle_inside_a_bundle_is_viewed_unowned_as_well():
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    outer = _Outer(np.zeros(3), _Inner(np.zeros((2, 2)), 7), frozen)
    u = _write_unowned(outer)
    assert outer.x[0] == 1.5 and outer.inner.a[1, 1] == 2.5  # the same memory, nested too
    assert type(u) is _Outer and type(u.inner) is _Inner and u.inner.n == 7
    assert typeof(u) == typeof(outer)  # the same numba type: a record's field takes either


def test_a_records_type_survives_pickling_as_numbas_cache_stores_it():
    rec = _record(allocate_contact_table(2, 4, 3))
    typ = typeof(rec)
    assert isinstance(typ, ContactTableRecordType)
    assert list(typ.field_dict) == list(allocate_contact_table(1, 1, 1)._fields)
    assert pickle.loads(pickle.dumps(typ)) == typ


def test_the_step_record_keeps_the_bundles_its_views_point_into():
    """The simulator hands make_step_data a detection bundle it keeps no reference to: the
    record's owners must hold it, or its unowned views would point into freed memory."""
    import gc
    from pathlib import Path

    from humanoid_sim.contact.step_data import Detection
    from humanoid_sim.model import load_urdf
    from humanoid_sim.simulator.simulator import Simulator

    sim = Simulator(load_urdf(Path(__file__).resolve().parents[2] / "urdf" / "humanoid.urdf"))
    sim.reset("stand")
    gc.collect()
    count, viewed, owned = _owners_and_detection(sim._data)
    assert count == 17  # the actuation, the state and the range of motion's StepLimits among them
    assert viewed == owned  # the record's detection views the arrays of the bundle it owns
    assert not any(isinstance(x, Detection) for x in vars(sim).values())  # only the record keeps it alive
    for _ in range(50):
        r = sim.step(None)
    assert r.contacts and np.all(np.isfinite(r.q))


class _Holder(NamedTuple):
    table: object
    pair: object
    scale: float
    weights: np.ndarray


_HolderRecordType, _HolderRecord = bundle_record(_Holder, __name__)


@njit
def _holder(tab, weights):
    rec = ContactTableRecord(*unowned_fields(tab))
    return _HolderRecord(rec, (rec, ContactTableRecord(*tab)), 3.0, weights)


@njit(inline="never")
def _write_borrowed(h, i, value):
    h.table.min_gap[i] = value  # a record inside a borrowed record
    h.pair[1].G[i, 0, 0] = h.scale * value  # a tuple of records inside it
    h.weights[i] += value  # an array field
    return h.pair[0].body.shape[0]


@njit
def _through_borrowed(holder, i, value):
    h = borrow(holder)
    return _write_borrowed(borrow(h), i, value)  # borrowing a borrowed view gives it back


def test_a_borrowed_record_reads_and_writes_the_same_arrays_its_records_too():
    tab, weights = allocate_contact_table(3, 5, 4), np.zeros(3)
    holder = _holder(tab, weights)
    assert _through_borrowed(holder, 2, 0.5) == 3
    assert tab.min_gap[2] == 0.5 and tab.G[2, 0, 0] == 1.5 and weights[2] == 0.5
    assert np.count_nonzero(tab.min_gap) == 1 and np.count_nonzero(tab.G) == 1 and np.count_nonzero(weights) == 1


def test_a_helper_handed_a_borrowed_view_is_compiled_for_the_view_not_the_record():
    holder = _holder(allocate_contact_table(1, 1, 1), np.zeros(1))
    _through_borrowed(holder, 0, 1.0)
    # a pointer, not a counted record: no reference taken on the way in or out
    assert [sig[0] for sig in _write_borrowed.signatures] == [Borrowed(typeof(holder))]


@njit
def _returned_borrowed(holder):
    return borrow(holder)


def test_a_borrowed_view_returned_to_python_raises_and_its_type_pickles():
    holder = _holder(allocate_contact_table(1, 1, 1), np.zeros(1))
    with pytest.raises(TypeError, match="cannot leave compiled code"):
        _returned_borrowed(holder)
    typ = Borrowed(typeof(holder))
    assert pickle.loads(pickle.dumps(typ)) == typ  # as numba's cache stores a helper's signature
