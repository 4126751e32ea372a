"""Lowering rules of the ops in ember/dialects/indexing.py.

- ``gather``: a ``linalg.generic`` over the result whose body reads the indices and the
  operand with ``tensor.extract``, clamping each index into range.
- ``scatter``: ``iree_linalg_ext.scatter`` (duplicates combine through its region, so
  scatter-add accumulates), the indexed dimensions moved to the front. An out-of-bounds
  update is dropped: it goes to index 0 as one that changes nothing there (the combiner's
  identity; for ``set`` of a single update, the value there now), so the operand is updated
  in place. Several ``set`` updates (which one of duplicates lands is unspecified) pad each
  indexed dimension by one "trash" row instead; an out-of-bounds index is redirected there
  and the padding is cut off afterwards.
- ``dynamic_slice`` / ``dynamic_update_slice``: ``tensor.extract_slice`` / ``insert_slice``
  at clamped dynamic offsets.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, linalg, tensor
from ember.core import ShapedArray
from ember.rules.lowering import (
    SCALAR,
    LowerCall,
    _cmpi,
    _value,
    convert_scalar,
    dims_map,
    elem,
    empty,
    extract_index,
    filled,
    generic,
    identity_map,
    int_constant,
    lowering,
    reassociation,
    scalar_const,
    to_index,
    ttype,
)

__all__: list[str] = []


def _index_const(v: int) -> ir.Value:
    index = ir.IndexType.get()
    return arith.ConstantOp(index, ir.IntegerAttr.get(index, int(v))).result


def _clamp_index(i: ir.Value, hi: int) -> ir.Value:
    """i clamped into [0, hi] (index type, signed)."""
    i = arith.MaxSIOp(i, _index_const(0)).result
    return arith.MinSIOp(i, _index_const(hi)).result


@lowering("gather")
def _lower_gather(c: LowerCall):
    (x, idx), (xa, ia), out = c.operands, c.in_avals, c.out_avals[0]
    axes = c.attrs["axes"]
    if out.size == 0:
        return [empty(out)]
    nb = ia.ndim - 1
    rank = out.ndim

    def body(_o):
        loop = [linalg.IndexOp(d).result for d in range(rank)]
        coords, rest = [None] * xa.ndim, iter(loop[nb:])
        for j, a in enumerate(axes):
            v = tensor.ExtractOp(idx, loop[:nb] + [_index_const(j)]).result
            coords[a] = _clamp_index(to_index(v, ia.dtype), xa.shape[a] - 1)
        for d in range(xa.ndim):
            if coords[d] is None:
                coords[d] = next(rest)
        return [tensor.ExtractOp(x, coords).result]

    return generic([], [], [empty(out)], [identity_map(rank)], ["parallel"] * rank, body)


def _transpose(x: ir.Value, aval: ShapedArray, perm) -> tuple[ir.Value, ShapedArray]:
    if list(perm) == list(range(aval.ndim)):
        return x, aval
    out = ShapedArray(tuple(aval.shape[p] for p in perm), aval.dtype)
    return _value(linalg.transpose(x, outs=[empty(out)], permutation=list(perm))), out


def _reshape(x: ir.Value, aval: ShapedArray, shape) -> ir.Value:
    """Reshape by collapsing everything and expanding again (row-major)."""
    shape = tuple(shape)
    if aval.shape == shape:
        return x
    out = ShapedArray(shape, aval.dtype)
    if aval.ndim == 0:
        return tensor.ExpandShapeOp(ttype(out), x, reassociation([]), [], list(shape)).result
    flat = ShapedArray((aval.size,), aval.dtype)
    if aval.ndim != 1:
        x = tensor.CollapseShapeOp(ttype(flat), x, reassociation([list(range(aval.ndim))])).result
    if len(shape) != 1:
        x = tensor.ExpandShapeOp(ttype(out), x, reassociation([list(range(len(shape)))]), [],
                                 list(shape)).result
    return x


_COMBINE = {"add": "add", "mul": "mul", "min": "min", "max": "max"}


@lowering("scatter")
def _lower_scatter(c: LowerCall):
    (x, idx, upd), (xa, ia, ua) = c.operands, c.in_avals
    axes, kind = c.attrs["axes"], c.attrs["kind"]
    k = len(axes)
    n = int(np.prod(ia.shape[:-1], dtype=np.int64))
    if n == 0 or xa.size == 0 or ua.size == 0:
        return [x]
    rest = [d for d in range(xa.ndim) if d not in axes]
    perm = list(axes) + rest
    xt, xta = _transpose(x, xa, perm)
    idx_dt = np.dtype("int64") if ia.dtype.itemsize > 4 or \
        (dtypes.is_unsigned(ia.dtype) and ia.dtype.itemsize == 4) else np.dtype("int32")
    sizes = np.array([xa.shape[a] for a in axes], dtype=idx_dt)
    known = int_constant(idx)
    upd2 = _reshape(upd, ua, (n,) + tuple(xta.shape[k:]))
    if known is not None and ((known >= 0) & (known < sizes)).all():
        # Constant indices in bounds (x.at[0].add(row)): no trash rows, so the operand is
        # updated in place instead of copied into a padded buffer and back.
        padded_a, padded = xta, xt
        t = ir.RankedTensorType.get([n, k], elem(idx_dt))
        idx2 = idx if idx.type == t else arith.ConstantOp(
            t, ir.DenseElementsAttr.get(known.reshape(n, k).astype(idx_dt))).result
    elif kind != "set" or n == 1:
        padded_a, padded = xta, xt
        idx2, upd2 = _masked_scatter_operands(xt, xta, idx, ia, upd2, k, n, idx_dt, sizes,
                                              kind)
    else:
        padded_a, padded, idx2 = _padded_scatter_operands(xt, xta, idx, ia, k, n, idx_dt,
                                                          sizes)

    dt = xa.dtype
    op = ir.Operation.create(
        "iree_linalg_ext.scatter", results=[ttype(padded_a)], operands=[upd2, idx2, padded],
        attributes={"dimension_map": ir.DenseI64ArrayAttr.get(list(range(k))),
                    "unique_indices": ir.BoolAttr.get(False),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([2, 1])},
        regions=1)
    block = op.regions[0].blocks.append(elem(dt), elem(dt))
    with ir.InsertionPoint(block):
        new, old = block.arguments
        if kind == "set":
            r = new
        elif dtypes.is_bool(dt):
            r = (arith.OrIOp if kind == "max" else arith.AndIOp)(new, old).result
        else:
            r = SCALAR[_COMBINE[kind]]([old, new], dt, dt, {})
        ir.Operation.create("iree_linalg_ext.yield", operands=[r])
    res = op.results[0]
    if padded_a != xta:
        res = tensor.ExtractSliceOp(ttype(xta), res, [], [], [], [0] * xa.ndim,
                                    list(xta.shape), [1] * xa.ndim).result
    inv = [perm.index(d) for d in range(xa.ndim)]
    return [_transpose(res, xta, inv)[0]]


def _identity(kind: str, dt) -> ir.Value:
    """The value that the scatter's combiner for ``kind`` leaves the operand unchanged with
    (-0.0 for a float sum: x + -0.0 is x, also for x = -0.0)."""
    if dtypes.is_bool(dt):
        return scalar_const(kind != "max", dt)      # bools combine by max (or) or min (and)
    if kind == "add":
        return scalar_const(-0.0 if dtypes.is_float(dt) else 0, dt)
    if kind == "mul":
        return scalar_const(1, dt)
    if dtypes.is_float(dt):
        return scalar_const(np.inf if kind == "min" else -np.inf, dt)
    info = np.iinfo(dt)
    return scalar_const(info.max if kind == "min" else info.min, dt)


def _masked_scatter_operands(xt, xta, idx, ia, upd2, k, n, idx_dt, sizes, kind):
    """((n, k) indices, updates) in place of trash rows: an update at an out-of-bounds index
    goes to index 0 instead, as one that changes nothing there (the combiner's identity; for
    ``set``, which only takes one update here, the value there now). The operand is then
    updated in place, not copied into a padded buffer and back (``x.at[i].set(row)`` in a
    loop copied the whole buffer twice per step)."""
    idx2 = _reshape(idx, ia, (n, k))
    window = tuple(xta.shape[k:])

    def in_range(i, size):                # on index values: a negative one is out of range
        return arith.AndIOp(_cmpi("sge", i, _index_const(0)),
                            _cmpi("slt", i, _index_const(size))).result

    def per_component(_o):
        row, col = linalg.IndexOp(0).result, linalg.IndexOp(1).result
        v = tensor.ExtractOp(idx2, [row, col]).result
        iv = to_index(v, ia.dtype)
        ok = None
        for j in range(k):                # this column's component against its own size
            ok_j = in_range(iv, int(sizes[j]))
            if k > 1:
                ok_j = arith.AndIOp(_cmpi("eq", col, _index_const(j)), ok_j).result
            ok = ok_j if ok is None else arith.OrIOp(ok, ok_j).result
        return [arith.SelectOp(ok, convert_scalar(v, ia.dtype, idx_dt),
                               scalar_const(0, idx_dt)).result]

    (fixed,) = generic([], [], [empty(ShapedArray((n, k), idx_dt))], [identity_map(2)],
                       ["parallel", "parallel"], per_component)

    rank = 1 + len(window)

    def masked(u, _o):
        loop = [linalg.IndexOp(d).result for d in range(rank)]
        ok, coords = None, []
        for j in range(k):
            iv = to_index(tensor.ExtractOp(idx2, [loop[0], _index_const(j)]).result, ia.dtype)
            ok_j = in_range(iv, int(sizes[j]))
            ok = ok_j if ok is None else arith.AndIOp(ok, ok_j).result
            coords.append(arith.SelectOp(ok_j, iv, _index_const(0)).result)
        if kind == "set":
            keep = tensor.ExtractOp(xt, coords + loop[1:]).result
        else:
            keep = _identity(kind, xta.dtype)
        return [arith.SelectOp(ok, u, keep).result]

    (masked_upd,) = generic([upd2], [identity_map(rank)],
                            [empty(ShapedArray((n,) + window, xta.dtype))],
                            [identity_map(rank)], ["parallel"] * rank, masked)
    return fixed, masked_upd


def _padded_scatter_operands(xt, xta, idx, ia, k, n, idx_dt, sizes):
    """(padded aval, padded operand, (n, k) indices): one trash row at the end of each
    indexed dimension, and each out-of-bounds index component redirected to it."""
    padded_a = ShapedArray(tuple(d + 1 if i < k else d for i, d in enumerate(xta.shape)),
                           xta.dtype)
    padded = tensor.InsertSliceOp(xt, filled(padded_a, 0), [], [], [], [0] * xta.ndim,
                                  list(xta.shape), [1] * xta.ndim).result
    idx2 = _reshape(idx, ia, (n, k))
    sizes_c = arith.ConstantOp(ir.RankedTensorType.get([k], elem(idx_dt)),
                               ir.DenseElementsAttr.get(sizes)).result

    def fix(i, size, _o):
        i = convert_scalar(i, ia.dtype, idx_dt)
        ok = arith.AndIOp(_cmpi("sge", i, scalar_const(0, idx_dt)),
                          _cmpi("slt", i, size)).result
        if dtypes.is_unsigned(ia.dtype) and ia.dtype.itemsize == idx_dt.itemsize:
            ok = _cmpi("ult", i, size)
        return [arith.SelectOp(ok, i, size).result]

    (idx2,) = generic([idx2, sizes_c], [identity_map(2), dims_map(2, [1])],
                      [empty(ShapedArray((n, k), idx_dt))], [identity_map(2)],
                      ["parallel", "parallel"], fix)
    return padded_a, padded, idx2


def _clamped_starts(starts, avals, dims, sizes) -> list[ir.Value]:
    out = []
    for s, a, d, n in zip(starts, avals, dims, sizes):
        out.append(_clamp_index(extract_index(s, a.dtype), d - n))
    return out


_DYN = ir.ShapedType.get_dynamic_size() if hasattr(ir.ShapedType, "get_dynamic_size") \
    else -(2 ** 63)


@lowering("dynamic_slice")
def _lower_dynamic_slice(c: LowerCall):
    x, starts = c.operands[0], c.operands[1:]
    xa, out = c.in_avals[0], c.out_avals[0]
    if out.size == 0:
        return [empty(out)]
    offs = _clamped_starts(starts, c.in_avals[1:], xa.shape, out.shape)
    return [tensor.ExtractSliceOp(ttype(out), x, offs, [], [], [_DYN] * xa.ndim,
                                  list(out.shape), [1] * xa.ndim).result]


@lowering("dynamic_update_slice")
def _lower_dynamic_update_slice(c: LowerCall):
    x, u, starts = c.operands[0], c.operands[1], c.operands[2:]
    xa, ua = c.in_avals[0], c.in_avals[1]
    if ua.size == 0:
        return [x]
    offs = _clamped_starts(starts, c.in_avals[2:], xa.shape, ua.shape)
    return [tensor.InsertSliceOp(u, x, offs, [], [], [_DYN] * xa.ndim, list(ua.shape),
                                 [1] * xa.ndim).result]
