"""The step's bundles as compiled records (contact/bundle_records.py): the same arrays, and a
type numba's cache can store."""

import pickle

import numpy as np
from numba import njit, typeof

from humanoid_sim.contact.step_data import ContactTableRecord, ContactTableRecordType, allocate_contact_table


@njit
def _record(tab):
    return ContactTableRecord(*tab)


@njit
def _write(rec, i, value):
    rec.min_gap[i] = value
    rec.G[i, 2, 1] = 2.0 * value
    return rec.body.shape[0] + rec.xy.shape[0]


def test_a_record_reads_and_writes_the_bundles_arrays():
    tab = allocate_contact_table(3, 5, 4)
    rec = _record(tab)
    assert _write(rec, 1, 0.25) == 3 + 5
    assert tab.min_gap[1] == 0.25 and tab.G[1, 2, 1] == 0.5  # the kernel wrote the NamedTuple's memory
    assert np.count_nonzero(tab.min_gap) == 1 and np.count_nonzero(tab.G) == 1


def test_a_records_type_survives_pickling_as_numbas_cache_stores_it():
    rec = _record(allocate_contact_table(2, 4, 3))
    typ = typeof(rec)
    assert isinstance(typ, ContactTableRecordType)
    assert list(typ.field_dict) == list(allocate_contact_table(1, 1, 1)._fields)
    assert pickle.loads(pickle.dumps(typ)) == typ
