"""Records of the compiled step's bundles: a NamedTuple's fields behind one reference count.

numba counts the references to every array, with an atomic operation each time one is taken
or dropped. A NamedTuple of arrays handed to a compiled function takes a reference to each
of its arrays on the way in and drops them on the way out, and reading a NamedTuple field of
a record does the same. ContactTable's 39 arrays handed to every per-contact helper, and the
step's bundles read in every helper, made ~7000 such operations per standing step of the
bundled humanoid: ~40 % of the step's cost. A StructRef record keeps its fields behind one
count: handing a record on costs one operation, reading one of its arrays one more.

``bundle_record(cls, module)`` makes, for a NamedTuple class of the step's bundles, a StructRef
type with the same fields, ``<Name>RecordType``, and its Python proxy ``<Name>Record``, which
the module named binds by these names at its import (numba's cache pickles a record's type by
module and name). The kernels
read ``record.field`` exactly as they read ``bundle.field``. The records are built from the
NamedTuples the Python side keeps, inside one cached compiled call (step_data._make): the
same arrays, no copy, so the Python side reads what the kernels wrote.
"""

from __future__ import annotations

from numba.core import types
from numba.experimental import structref

__all__ = ["bundle_record"]


def _unliteral_fields(self, fields):
    """A record's field types as stored: literal ints (a tree's sizes) typed as int64."""
    return tuple((name, types.unliteral(typ)) for name, typ in fields)


def bundle_record(cls: type, module: str) -> tuple[type, type]:
    """(the StructRef type, its proxy class) of the NamedTuple class ``cls``, named
    ``<cls.__name__>RecordType`` and ``<cls.__name__>Record``, of ``module``: the name of the
    module that calls this at its import and binds both by these names."""
    name = cls.__name__
    record_type = type(f"{name}RecordType", (types.StructRef,), {
        "__module__": module, "__qualname__": f"{name}RecordType", "preprocess_fields": _unliteral_fields,
        "__doc__": f"The numba type of a {name}Record (contact/bundle_records.py).",
    })  # fmt: skip
    structref.register(record_type)
    proxy = type(f"{name}Record", (structref.StructRefProxy,), {
        "__module__": module, "__qualname__": f"{name}Record",
        "__doc__": f"A {name} as a compiled record: the same arrays behind one reference count.",
    })  # fmt: skip
    structref.define_proxy(proxy, record_type, list(cls._fields))
    return record_type, proxy
