"""The one place ember imports IREE's bundled MLIR Python bindings.

A change of binding version touches this file only. Everything else writes
``from ember._mlir import ir, arith, ...``.
"""

from __future__ import annotations

import sys
import threading
import types

import ml_dtypes
import numpy as np
from iree.compiler import ir
from iree.compiler.api import Output, Session
from iree.compiler.dialects import arith, flow, func, linalg, scf, tensor, util
from iree.compiler.dialects import math as math_d
from iree.compiler.passmanager import PassManager

from ember._quiet import quiet_compiler_bindings

quiet_compiler_bindings()      # no nanobind leak report at exit (see ember._quiet)

__all__ = [
    "ir", "arith", "flow", "func", "linalg", "math_d", "scf", "tensor", "util", "PassManager",
    "Session",
    "Output", "new_session", "element_type", "tensor_type", "dtype_of_element", "signless",
]

# The bindings look for a Python module of each op's dialect (``iree.compiler.dialects.NAME``)
# every time they wrap an op, and a failed import is not remembered: without this empty module
# walking ember IR spent about 40% of its time in failed imports.
sys.modules.setdefault("iree.compiler.dialects.ember",
                       types.ModuleType("iree.compiler.dialects.ember"))

_local = threading.local()


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
}
_MLIR_TO_DTYPE = {v: np.dtype(ml_dtypes.bfloat16 if k == "bfloat16" else k)
                  for k, v in _DTYPE_TO_MLIR.items()}


def element_type(dtype) -> ir.Type:
    """The MLIR element type of a NumPy dtype in the ember dialect (unsigned ints are ``ui``)."""
    return ir.Type.parse(_DTYPE_TO_MLIR[np.dtype(dtype).name])


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def dtype_of_element(t: ir.Type) -> np.dtype:
    """Inverse of :func:`element_type`; raises KeyError for a type ember does not know."""
    return _MLIR_TO_DTYPE[str(t)]


def signless(t: ir.Type) -> ir.Type:
    """The signless twin of an element or tensor type (IREE wants ``i32``, not ``ui32``)."""
    if isinstance(t, ir.RankedTensorType):
        t = ir.RankedTensorType(t)
        return ir.RankedTensorType.get(t.shape, signless(t.element_type))
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    return t


def walk(op):
    """Every operation nested in ``op`` (itself included), pre-order.

    A plain generator rather than ``Operation.walk``, whose callbacks cannot raise.
    """
    op = op.operation
    yield op
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield from walk(child)
