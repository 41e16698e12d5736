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
module and name). The kernels read ``record.field`` exactly as they read ``bundle.field``.
The records are built from the NamedTuples the Python side keeps, inside one cached compiled
call (step_data._make): the same arrays, no copy, so the Python side reads what the kernels
wrote.

A record's arrays are unowned views (``unowned_fields``): numba's views of the same memory
without a reference count of their own (``numba.carray`` of the array's address), so that
taking and dropping them costs no atomic operation either (a standing step of the humanoid,
~8 µs). Whoever builds the records keeps the NamedTuples, the arrays' owners, alive as long as
the records: step_data.StepData holds them in its field ``owners``. ``unowned`` makes the same
view of one array, for the arrays a compiled entry point is handed (the state, the efforts).

A record handed from helper to helper is itself counted: each call takes and drops a reference
to it, and so does each read of a record inside a record (``d.tables[k]``, ``d.solve``): ~1000
atomic operations in a step of the lying humanoid, ~11 µs. ``borrow(record)`` gives a
``Borrowed`` view of a record: the address of its fields, with no reference count, whose
records inside read as borrowed views too. A compiled entry point borrows the record it is
handed, which keeps the record alive for the call, and hands on only the borrowed view; a
borrowed view cannot leave compiled code (returned to Python, it raises TypeError).
"""

from __future__ import annotations

from numba import carray
from numba.core import cgutils, imputils, types
from numba.core.datamodel import models
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref
from numba.extending import box, infer_getattr, intrinsic, lower_getattr_generic, overload, register_model

__all__ = ["Borrowed", "borrow", "bundle_record", "unowned", "unowned_fields"]


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


@intrinsic
def _address_as_pointer(typingctx, address):
    """An integer address as a void pointer (for numba.carray)."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


def unowned(value):
    """In compiled code: a C-contiguous, writable array as an unowned view of its memory
    (module docstring), a NamedTuple as the same NamedTuple of such views (a bundle inside a
    bundle: a contact solve's scratch, the actuation's rule), anything else as it is; the
    caller keeps the arrays alive while the views are used."""


@overload(unowned)
def _unowned_overload(value):
    if isinstance(value, types.Array) and value.layout == "C" and value.mutable:

        def view(value):
            return carray(_address_as_pointer(value.ctypes.data), value.shape, value.dtype)

        return view
    if isinstance(value, types.NamedUniTuple | types.NamedTuple):  # a bundle inside a bundle: the same, within
        n = len(value.types)
        source = "def bundle(value):\n    return cls(" + "".join(f"unowned(value[{i}]), " for i in range(n)) + ")\n"
        namespace = {"unowned": unowned, "cls": value.instance_class}
        exec(source, namespace)  # the NamedTuple's class over its n fields, n known at compile time
        return namespace["bundle"]
    return lambda value: value


def unowned_fields(bundle):
    """In compiled code: the fields of a NamedTuple as a tuple, each as ``unowned`` makes it
    (its C-contiguous writable arrays, also those of the NamedTuples among its fields, as
    unowned views of their memory); the caller keeps ``bundle`` alive."""


@overload(unowned_fields)
def _unowned_fields_overload(bundle):
    n = len(bundle.types)
    source = "def fields(bundle):\n    return (" + "".join(f"unowned(bundle[{i}]), " for i in range(n)) + ")\n"
    namespace = {"unowned": unowned}
    exec(source, namespace)  # one tuple of n fields, n known at compile time
    return namespace["fields"]


class Borrowed(types.Type):
    """The numba type of a borrowed view of a StructRef record (module docstring): the
    address of the record's fields, without a reference count. Reading a field gives the
    field, a record field (or a homogeneous tuple of them) as a borrowed view in its turn."""

    def __init__(self, record: types.StructRef):
        self.record = record
        super().__init__(name=f"Borrowed({record})")


@register_model(Borrowed)
class _BorrowedModel(models.OpaqueModel):
    """A borrowed view is a bare pointer to the record's fields: nothing to count."""


def _borrowed_type(typ):
    """The type a field of type ``typ`` reads as from a borrowed view."""
    if isinstance(typ, types.StructRef):
        return Borrowed(typ)
    if isinstance(typ, types.UniTuple) and isinstance(typ.dtype, types.StructRef):
        return types.UniTuple(Borrowed(typ.dtype), typ.count)
    return typ


def _fields_pointer(context, builder, record_type, value):
    """The address of the fields of the StructRef ``value`` of ``record_type``, as i8*: its
    meminfo's data, read without taking a reference."""
    meminfo = cgutils.create_struct_proxy(record_type)(context, builder, value=value).meminfo
    return builder.bitcast(context.nrt.meminfo_data(builder, meminfo), cgutils.voidptr_t)


def _borrowed_value(context, builder, typ, value):
    """The field ``value`` of type ``typ`` as it reads from a borrowed view (_borrowed_type)."""
    if isinstance(typ, types.StructRef):
        return _fields_pointer(context, builder, typ, value)
    if isinstance(typ, types.UniTuple) and isinstance(typ.dtype, types.StructRef):
        items = [_fields_pointer(context, builder, typ.dtype, builder.extract_value(value, i))
                 for i in range(typ.count)]
        return context.make_tuple(builder, _borrowed_type(typ), items)
    return imputils.impl_ret_borrowed(context, builder, typ, value)


@intrinsic
def borrow(typingctx, record):
    """In compiled code: a borrowed view of the StructRef ``record`` (module docstring); the
    caller keeps ``record`` alive while the view is used. A borrowed view is returned as it is."""
    if isinstance(record, Borrowed):
        return record(record), lambda context, builder, signature, args: args[0]
    if not isinstance(record, types.StructRef):
        return None

    def codegen(context, builder, signature, args):
        return _fields_pointer(context, builder, record, args[0])

    return Borrowed(record)(record), codegen


@infer_getattr
class _BorrowedAttribute(AttributeTemplate):
    key = Borrowed

    def generic_resolve(self, typ, attr):
        if attr in typ.record.field_dict:
            return _borrowed_type(typ.record.field_dict[attr])


@lower_getattr_generic(Borrowed)
def _borrowed_getattr(context, builder, typ, value, attr):
    fields_type = typ.record.get_data_type()
    pointer = builder.bitcast(value, context.data_model_manager[fields_type].get_value_type().as_pointer())
    fields = cgutils.create_struct_proxy(fields_type)(context, builder, ref=pointer)
    return _borrowed_value(context, builder, typ.record.field_dict[attr], getattr(fields, attr))


@box(Borrowed)
def _box_borrowed(typ, value, c):
    """A borrowed view returned to Python: TypeError (it would outlive the record it points into)."""
    c.pyapi.err_set_string("PyExc_TypeError", f"a {typ} cannot leave compiled code: return the record itself")
    return cgutils.get_null_value(c.pyapi.pyobj)
