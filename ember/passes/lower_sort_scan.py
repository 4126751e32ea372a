"""Lowering rules of the ops in ember/dialects/sort_scan.py.

``ember.sort`` becomes ``iree_linalg_ext.sort`` with a comparator region (lexicographic over
the keys, NaN last, stable); the cumulative ops become ``iree_linalg_ext.scan`` (inclusive),
reversed before and after for ``reverse``. Neither op has a Python builder: both are created
generically.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir
from ember.core import ShapedArray
from ember.dialects.sort_scan import CUMULATIVE
from ember.passes.lowering import (
    SCALAR,
    LowerCall,
    _cmpf,
    _cmpi,
    _lower_rev,
    _reduce_init,
    convert_scalar,
    elem,
    empty,
    filled,
    generic,
    identity_map,
    index_of,
    lowering,
    scalar_const,
    ttype,
)

__all__: list[str] = []


def _i64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def _yield(values) -> None:
    ir.Operation.create("iree_linalg_ext.yield", results=[], operands=list(values))


def _key_compare(a, b, dt):
    """(a < b, a == b) in the sort order: NaN after everything, -0.0 == 0.0."""
    dt = np.dtype(dt)
    if dtypes.is_float(dt):
        if dt.itemsize < 4:      # compare halves in f32
            f32 = ir.F32Type.get()
            a, b = arith.ExtFOp(f32, a).result, arith.ExtFOp(f32, b).result
        a_nan, b_nan = _cmpf("uno", a, a), _cmpf("uno", b, b)
        lt = arith.OrIOp(_cmpf("olt", a, b),
                         arith.AndIOp(b_nan, _cmpf("ord", a, a)).result).result
        eq = arith.OrIOp(_cmpf("oeq", a, b), arith.AndIOp(a_nan, b_nan).result).result
        return lt, eq
    pred = "ult" if dtypes.is_unsigned(dt) or dtypes.is_bool(dt) else "slt"
    return _cmpi(pred, a, b), _cmpi("eq", a, b)


@lowering("sort")
def _lower_sort(c: LowerCall):
    avals, num_keys, dim = list(c.in_avals), c.attrs["num_keys"], c.attrs["dimension"]
    if avals[0].size == 0 or avals[0].shape[dim] <= 1:
        return list(c.operands)
    # One operand per distinct value: the same buffer twice in a sort's outs costs IREE a
    # stack copy.
    operands, where = [], []
    for k, v in enumerate(c.operands):
        same = [j for j, u in enumerate(operands) if u == v]
        if same and k >= num_keys:
            where.append(same[0])
            continue
        where.append(len(operands))
        operands.append(v)
    avals = [avals[where.index(j)] for j in range(len(operands))]
    # IREE's sort is not stable: break ties by the original position, unless equal keys
    # are indistinguishable (a single operand; -0.0 and 0.0 may swap). The position counts
    # down (n-1-i, compared with >), so that it is never merged with an iota operand.
    tiebreak = len(operands) > num_keys or num_keys > 1
    if tiebreak:
        n = avals[0].shape[dim]
        idx_dt = np.dtype(np.int32 if n < 2 ** 31 else np.int64)
        idx = ShapedArray(avals[0].shape, idx_dt)
        rank = idx.ndim

        def down(_o):
            return [arith.SubIOp(scalar_const(n - 1, idx_dt), index_of(dim, idx_dt)).result]
        operands.append(generic([], [], [empty(idx)], [identity_map(rank)],
                                ["parallel"] * rank, down)[0])
        avals.append(idx)
    keys = list(range(num_keys))
    types = [ttype(a) for a in avals]
    # The sort works in place on its operands, and IREE does not copy an operand that other
    # ops (another sort, say) also use: clone each one explicitly.
    operands = [ir.Operation.create("flow.tensor.clone", results=[t], operands=[v]).results[0]
                for v, t in zip(operands, types)]
    op = ir.Operation.create(
        "iree_linalg_ext.sort", results=types, operands=operands,
        attributes={"dimension": _i64(dim),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(avals)])},
        regions=1)
    arg_types = [t for a in avals for t in (elem(a.dtype), elem(a.dtype))]
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        # Lexicographic: lt0 | (eq0 & (lt1 | (eq1 & ...))), built from the last key.
        less = None
        if tiebreak:
            t = len(avals) - 1
            less = _cmpi("sgt", block.arguments[2 * t], block.arguments[2 * t + 1])
        for k in reversed(keys):
            a, b = block.arguments[2 * k], block.arguments[2 * k + 1]
            if less is None:
                less = _key_compare(a, b, avals[k].dtype)[0]
                continue
            lt, eq = _key_compare(a, b, avals[k].dtype)
            less = arith.OrIOp(lt, arith.AndIOp(eq, less).result).result
        _yield([less])
    # A barrier on the results: IREE gives unused results of the sort's dispatch stack
    # buffers, which overflow its 32 KiB stack limit for large arrays.
    results = _barrier(list(op.results), types)
    return [results[j] for j in where]


def _barrier(values, types):
    # One barrier per value: IREE's passes may later retype some values (its verifier then
    # rejects a barrier over several).
    return [ir.Operation.create("util.optimization_barrier", results=[t],
                                operands=[v]).results[0] for v, t in zip(values, types)]


def _map(x: ir.Value, xa: ShapedArray, out: ShapedArray, fn) -> ir.Value:
    rank = xa.ndim
    return generic([x], [identity_map(rank)], [empty(out)], [identity_map(rank)],
                   ["parallel"] * rank, lambda a, _o: [fn(a)])[0]


def _rev(x: ir.Value, aval: ShapedArray, axis: int) -> ir.Value:
    return _lower_rev(LowerCall(None, [x], [aval], [aval], {"dimensions": (axis,)}))[0]


@lowering(*CUMULATIVE)
def _lower_cumulative(c: LowerCall):
    name = c.op.name.split(".", 1)[1]
    combine = SCALAR[CUMULATIVE[name][1]]
    (x,), (xa,) = c.operands, c.in_avals
    axis, reverse = c.attrs["axis"], c.attrs["reverse"]
    if xa.size == 0 or xa.shape[axis] == 1:
        return [x]
    if dtypes.is_bool(xa.dtype):   # IREE's scan mishandles i1: scan bytes, or/and as max/min
        u8 = ShapedArray(xa.shape, np.dtype(np.uint8))
        x = _map(x, xa, u8, lambda v: convert_scalar(v, xa.dtype, u8.dtype))
        (out,) = _lower_cumulative(LowerCall(c.op, [x], [u8], [u8], c.attrs))
        return [_map(out, u8, xa, lambda v: convert_scalar(v, u8.dtype, xa.dtype))]
    if reverse:
        x = _rev(x, xa, axis)
    acc = ShapedArray(tuple(d for i, d in enumerate(xa.shape) if i != axis), xa.dtype)
    init = filled(acc, _reduce_init(name[3:], xa.dtype))
    op = ir.Operation.create(
        "iree_linalg_ext.scan", results=[ttype(xa), ttype(acc)],
        operands=[x, empty(xa), init],
        attributes={"dimension": _i64(axis), "inclusive": ir.BoolAttr.get(True)}, regions=1)
    t = elem(xa.dtype)
    block = op.regions[0].blocks.append(t, t)
    with ir.InsertionPoint(block):
        _yield([combine(list(block.arguments), xa.dtype, xa.dtype, {})])
    out = op.results[0]
    return [_rev(out, xa, axis) if reverse else out]
