"""The one place ember imports IREE's bundled MLIR Python bindings.

A change of binding version touches this file only. Everything else writes
``from ember._mlir import ir, arith, ...``.
"""

from __future__ import annotations

import functools
import sys
import threading
import types

import numpy as np
from iree.compiler import ir
from iree.compiler.api import Output, Session
from iree.compiler.dialects import arith, flow, func, linalg, scf, tensor, util
from iree.compiler.dialects import complex as complex_d
from iree.compiler.dialects import math as math_d
from iree.compiler.passmanager import PassManager

from ember._quiet import quiet_compiler_bindings

quiet_compiler_bindings()      # no nanobind leak report at exit (see ember._quiet)

__all__ = [
    "ir", "arith", "complex_d", "flow", "func", "linalg", "math_d", "scf", "tensor", "util",
    "PassManager", "Session",
    "Output", "new_session", "element_type", "tensor_type", "dtype_of_element", "signless",
    "element_bits",
]

# The bindings look for a Python module of each op's dialect (``iree.compiler.dialects.NAME``)
# every time they wrap an op, and a failed import is not remembered: without this empty module
# walking ember IR spent about 40% of its time in failed imports.
sys.modules.setdefault("iree.compiler.dialects.ember",
                       types.ModuleType("iree.compiler.dialects.ember"))

_local = threading.local()


def _cast_dense(attr):
    """The bindings' class of a dense elements attribute, by element type: they have none
    for complex elements, and reading such an attribute from an op (``op.attributes[...]``)
    raised TypeError, or aborted the process through ``NamedAttribute.attr``."""
    et = ir.ShapedType(attr.type).element_type
    if isinstance(et, ir.IntegerType | ir.IndexType):
        return ir.DenseIntElementsAttr(attr)
    if isinstance(et, ir.FloatType):
        return ir.DenseFPElementsAttr(attr)
    return ir.DenseElementsAttr(attr)


def _register_dense_caster() -> None:
    from iree.compiler._mlir_libs import _mlir
    with ir.Context(), ir.Location.unknown():
        typeid = ir.DenseElementsAttr.get(np.zeros(1, np.int32)).typeid
    _mlir.register_type_caster(typeid, replace=True)(_cast_dense)


_register_dense_caster()


def new_session() -> Session:
    """A compiler Session whose context knows every dialect and accepts ember ops."""
    session = Session()
    ctx = session.context
    ctx.allow_unregistered_dialects = True
    ctx.load_all_available_dialects()
    return session


def default_session() -> Session:
    """The per-thread Session the frontend traces into (contexts are not thread-safe)."""
    session = getattr(_local, "session", None)
    if session is None:
        session = _local.session = new_session()
    return session


_DTYPE_TO_MLIR = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}


@functools.cache
def _mlir_to_dtype() -> dict:
    # ml_dtypes imported at first use: the compile worker, which never needs it, starts
    # without its import, which took most of the worker's start.
    import ml_dtypes
    return {v: np.dtype(ml_dtypes.bfloat16 if k == "bfloat16" else k)
            for k, v in _DTYPE_TO_MLIR.items()}


def element_type(dtype) -> ir.Type:
    """The MLIR element type of a NumPy dtype in the ember dialect (unsigned ints are ``ui``)."""
    return ir.Type.parse(_DTYPE_TO_MLIR[np.dtype(dtype).name])


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def dtype_of_element(t: ir.Type) -> np.dtype:
    """Inverse of :func:`element_type`; raises KeyError for a type ember does not know."""
    return _mlir_to_dtype()[str(t)]


def element_bits(t: ir.Type) -> int:
    """Bits of an element type as stored: a complex number holds two parts; 32 for a type
    without a width (``index``)."""
    if isinstance(t, ir.ComplexType):
        return 2 * element_bits(ir.ComplexType(t).element_type)
    return getattr(t, "width", 32)


def signless(t: ir.Type) -> ir.Type:
    """The signless twin of an element or tensor type (IREE wants ``i32``, not ``ui32``)."""
    if isinstance(t, ir.RankedTensorType):
        t = ir.RankedTensorType(t)
        return ir.RankedTensorType.get(t.shape, signless(t.element_type))
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    return t


def walk(op, stop: tuple[str, ...] = ()):
    """Every operation nested in ``op`` (itself included), pre-order; the regions of ops
    named in ``stop`` are not entered.

    A plain generator rather than ``Operation.walk``, whose callbacks cannot raise.
    """
    op = op.operation
    yield op
    if op.name in stop:
        return
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield from walk(child, stop)


def captured(op) -> list:
    """The values defined outside region op ``op`` that the ops nested in it read, in order
    of first use (a closure's free values).

    Example:
        >>> captured(scan_op)       # e.g. a weight the scan's step multiplies by
        [<BlockArgument ...>]
    """
    nested = list(walk(op))[1:]
    inside = {a for inner in [op.operation, *nested] for region in inner.regions
              for b in region.blocks for a in b.arguments}
    inside.update(r for inner in nested for r in inner.results)
    return list(dict.fromkeys(v for inner in nested for v in inner.operands
                              if v not in inside))


def rewire(ops, mapping: dict) -> None:
    """Point every use of a key of ``mapping`` in ``ops`` and the ops nested in them at its
    value (uses elsewhere stay).

    Example:
        >>> rewire(block.operations, {old: new})
    """
    for top in ops:
        for o in walk(top):
            for i, v in enumerate(o.operands):
                if v in mapping:
                    o.operands[i] = mapping[v]


def walk_host(op):
    """As :func:`walk`, but not inside ``flow.dispatch.region`` ops: the ops the host runs
    or records (a loop in a dispatch region is a kernel's own)."""
    return walk(op, ("flow.dispatch.region",))
