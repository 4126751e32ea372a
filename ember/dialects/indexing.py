"""Indexing ops: gather, scatter, dynamic_slice, dynamic_update_slice.

A simplified form of XLA's gather/scatter that covers NumPy's advanced indexing: ``indices``
has shape ``batch + (k,)`` and its last dimension holds one index into each operand dimension
of ``axes`` (XLA's ``start_index_map`` with ``collapsed_slice_dims == axes``, slice size 1
there and full elsewhere, ``index_vector_dim`` last). The other operand dimensions are kept
whole, after the batch dimensions.

Out-of-bounds indices follow JAX's documented semantics: ``gather`` clamps every index into
``[0, size - 1]`` and ``scatter`` drops an update whose index is outside ``[0, size - 1]``
(negative indices are out of bounds here: NumPy's wrap-around is the frontend's job).
``dynamic_slice`` and ``dynamic_update_slice`` clamp their start indices so that the slice
fits, as ``lax.dynamic_slice`` does.

Lowering:

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

Batching:

- ``gather``: a batched operand alone keeps its batch dimension as one more kept (non-indexed)
  dimension; batched indices alone keep theirs among the index batch dimensions. When both
  are batched, the vmapped axis becomes one more indexed axis: both go batch-first and an iota
  over the batch is concatenated in front of each index vector, so example ``n`` reads row
  ``n`` of the operand.
- ``scatter``: with unbatched indices the batch dimension of the operand is a kept dimension
  (the updates are moved or broadcast to the matching place); with batched indices, the iota
  formulation of ``gather`` (operand and updates materialized batch-first).
- ``dynamic_slice`` / ``dynamic_update_slice``: unbatched starts stay a dynamic slice with the
  batch dimension added (start 0, full size). Batched starts become a ``gather`` /
  ``scatter`` over the window: the starts are clamped as the op would (``[0, dim - size]``),
  and each index vector is ``(n, start_d + i_d, ...)`` for the dimensions the window does not
  cover whole (the others clamp to 0 and are kept).

Differentiation: gather and dynamic_slice are linear in the operand (transposed to a
scatter-add and a dynamic_update_slice); scatter follows JAX's JVPs per kind.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, linalg, tensor
from ember.core import ShapedArray
from ember.rules.autodiff import (
    add_tangents,
    aval_of,
    broadcast_to,
    full,
    jvp,
    primal_emitter,
    transpose,
)
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.batching import batching, shift
from ember.rules.lowering import (
    SCALAR,
    LowerCall,
    cmpi,
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
    result_value,
    scalar_const,
    to_index,
    ttype,
)
from ember.rules.type_rules import aval, check_axes, fmt

__all__: list[str] = ["clamp_index"]

SCATTER_KINDS = ("set", "add", "mul", "min", "max")


def _int_dtype(a, what):
    if not dtypes.is_int(a.dtype) or dtypes.is_bool(a.dtype):
        raise OpTypeError(f"{what} must have an integer dtype, got {a.str_short()}")


def _gather_shape(operand, indices, axes):
    _int_dtype(indices, "indices")
    if indices.ndim < 1 or indices.shape[-1] != len(axes):
        raise OpTypeError(f"indices must have shape batch + ({len(axes)},) for axes {axes}, "
                          f"got {fmt([operand, indices])}")
    check_axes(axes, operand.ndim)
    batch = indices.shape[:-1]
    if any(operand.shape[a] == 0 for a in axes) and 0 not in batch:
        raise OpTypeError(f"cannot index an empty dimension of {operand.str_short()} "
                          f"along axes {axes}")
    return tuple(batch) + tuple(d for i, d in enumerate(operand.shape) if i not in axes)


def _gather(avals, attrs):
    operand, indices = avals
    return [aval(_gather_shape(operand, indices, attrs["axes"]), operand.dtype)]


define("gather", 2, _gather, attrs=(Attr("axes", "i64s"),), family="indexing",
       doc="gather(operand, indices): result[b..., r...] = operand at index "
           "indices[b..., j] (clamped into range) along axes[j], and r along the other "
           "dimensions in order. Shape: indices.shape[:-1] + the non-indexed dimensions.")


def _scatter(avals, attrs):
    operand, indices, updates = avals
    shape = _gather_shape(operand, indices, attrs["axes"])
    if updates.shape != shape or updates.dtype != operand.dtype:
        raise OpTypeError(f"updates must have shape {shape} and the operand's dtype, got "
                          f"{fmt(avals)}")
    if attrs["kind"] in ("add", "mul") and dtypes.is_bool(operand.dtype):
        raise OpTypeError(f"scatter {attrs['kind']} needs a numeric dtype, got {fmt(avals)}")
    if attrs["kind"] in ("min", "max") and dtypes.is_complex(operand.dtype):
        raise OpTypeError(f"scatter {attrs['kind']} needs a real (ordered, non-complex) dtype, "
                          f"got {fmt(avals)}")
    return [operand]


define("scatter", 3, _scatter,
       attrs=(Attr("axes", "i64s"), Attr("kind", "str", "set", SCATTER_KINDS)),
       family="indexing",
       doc="scatter(operand, indices, updates): the operand with updates[b..., r...] combined "
           "(kind: set/add/mul/min/max) into the element gather would read. Updates at an "
           "out-of-bounds index are dropped; duplicate indices all apply (set: one wins).")


def _dynamic_slice(avals, attrs):
    operand, starts = avals[0], avals[1:]
    sizes = attrs["slice_sizes"]
    if len(starts) != operand.ndim or len(sizes) != operand.ndim:
        raise OpTypeError(f"needs one start index and one slice size per dimension of "
                          f"{operand.str_short()}, got {fmt(avals)} and sizes {sizes}")
    for s in starts:
        _int_dtype(s, "start indices")
        if s.shape != ():
            raise OpTypeError(f"start indices must be scalars, got {fmt(avals)}")
    if any(not 0 <= n <= d for n, d in zip(sizes, operand.shape)):
        raise OpTypeError(f"slice sizes {sizes} do not fit in {operand.str_short()}")
    return [aval(sizes, operand.dtype)]


define("dynamic_slice", None, _dynamic_slice, attrs=(Attr("slice_sizes", "i64s"),),
       family="indexing",
       doc="dynamic_slice(operand, *start_indices): a slice of static size at dynamic "
           "starts, each clamped into [0, dim - size].")


def _dynamic_update_slice(avals, attrs):
    if len(avals) < 2:
        raise OpTypeError("needs an operand and an update")
    operand, update, starts = avals[0], avals[1], avals[2:]
    if update.dtype != operand.dtype or update.ndim != operand.ndim or \
            any(u > d for u, d in zip(update.shape, operand.shape)):
        raise OpTypeError(f"update must fit in the operand and share its dtype, got "
                          f"{fmt(avals)}")
    if len(starts) != operand.ndim:
        raise OpTypeError(f"needs one start index per dimension of {operand.str_short()}, "
                          f"got {fmt(avals)}")
    for s in starts:
        _int_dtype(s, "start indices")
        if s.shape != ():
            raise OpTypeError(f"start indices must be scalars, got {fmt(avals)}")
    return [operand]


define("dynamic_update_slice", None, _dynamic_update_slice, family="indexing",
       doc="dynamic_update_slice(operand, update, *start_indices): the operand with `update` "
           "written at dynamic starts, each clamped into [0, dim - update size].")


# --- lowering -----------------------------------------------------------------------------

def _index_const(v: int) -> ir.Value:
    index = ir.IndexType.get()
    return arith.ConstantOp(index, ir.IntegerAttr.get(index, int(v))).result


def clamp_index(i: ir.Value, hi: int) -> ir.Value:
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
            coords[a] = clamp_index(to_index(v, ia.dtype), xa.shape[a] - 1)
        for d in range(xa.ndim):
            if coords[d] is None:
                coords[d] = next(rest)
        return [tensor.ExtractOp(x, coords).result]

    return generic([], [], [empty(out)], [identity_map(rank)], ["parallel"] * rank, body)


def _transpose(x: ir.Value, aval: ShapedArray, perm) -> tuple[ir.Value, ShapedArray]:
    if list(perm) == list(range(aval.ndim)):
        return x, aval
    out = ShapedArray(tuple(aval.shape[p] for p in perm), aval.dtype)
    return result_value(linalg.transpose(x, outs=[empty(out)], permutation=list(perm))), out


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


COMBINE = {"add": "add", "mul": "mul", "min": "min", "max": "max"}


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
            r = SCALAR[COMBINE[kind]]([old, new], dt, dt, {})
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
        return arith.AndIOp(cmpi("sge", i, _index_const(0)),
                            cmpi("slt", i, _index_const(size))).result

    def per_component(_o):
        row, col = linalg.IndexOp(0).result, linalg.IndexOp(1).result
        v = tensor.ExtractOp(idx2, [row, col]).result
        iv = to_index(v, ia.dtype)
        ok = None
        for j in range(k):                # this column's component against its own size
            ok_j = in_range(iv, int(sizes[j]))
            if k > 1:
                ok_j = arith.AndIOp(cmpi("eq", col, _index_const(j)), ok_j).result
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
        ok = arith.AndIOp(cmpi("sge", i, scalar_const(0, idx_dt)),
                          cmpi("slt", i, size)).result
        if dtypes.is_unsigned(ia.dtype) and ia.dtype.itemsize == idx_dt.itemsize:
            ok = cmpi("ult", i, size)
        return [arith.SelectOp(ok, i, size).result]

    (idx2,) = generic([idx2, sizes_c], [identity_map(2), dims_map(2, [1])],
                      [empty(ShapedArray((n, k), idx_dt))], [identity_map(2)],
                      ["parallel", "parallel"], fix)
    return padded_a, padded, idx2


def _clamped_starts(starts, avals, dims, sizes) -> list[ir.Value]:
    out = []
    for s, a, d, n in zip(starts, avals, dims, sizes):
        out.append(clamp_index(extract_index(s, a.dtype), d - n))
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


# --- batching -----------------------------------------------------------------------------

_IDX = np.dtype("int32")



def _const(ctx, value, dtype, shape=()):
    c = ctx.emit("ember.constant", [], value=np.array(value, dtype=dtype))[0]
    if shape:
        c = ctx.emit("ember.broadcast_in_dim", [c], shape=tuple(shape),
                     broadcast_dimensions=())[0]
    return c


def _iota(ctx, shape, dimension, dtype=_IDX):
    return ctx.emit("ember.iota", [], shape=tuple(shape), dimension=dimension,
                    dtype=np.dtype(dtype))[0]


def _kept_position(nbatch: int, bdim: int, axes) -> int:
    """Where dimension ``bdim`` of a gather operand (not indexed) lands in the result."""
    return nbatch + bdim - sum(1 for a in axes if a < bdim)


def _with_batch_index(ctx, idx):
    """Indices batched at 0, shape (N,) + B + (k,), with the batch position prepended to each
    index vector: (N,) + B + (k + 1,)."""
    a = aval_of(idx)
    if np.iinfo(a.dtype).max < ctx.size - 1:     # 8/16-bit indices cannot hold the batch
        idx = ctx.emit("ember.convert", [idx], new_dtype=_IDX)[0]
        a = aval_of(idx)
    ones = a.shape[:-1] + (1,)
    return ctx.emit("ember.concatenate", [_iota(ctx, ones, 0, a.dtype), idx],
                    dimension=a.ndim - 1)[0]


@batching("gather")
def _batch_gather(ctx, op, inputs, attrs):
    (x, bx), (idx, bi) = inputs
    axes = tuple(attrs["axes"])
    ia = aval_of(idx)
    if bi is None:
        axes2 = shift(axes, bx)
        out = ctx.emit(op.name, [x, idx], axes=axes2)[0]
        return [(out, _kept_position(ia.ndim - 1, bx, axes2))]
    if bx is None:
        if bi == ia.ndim - 1:                    # behind the index vector: bring it forward
            idx, bi = ctx.move(idx, bi, 0), 0
        return [(ctx.emit(op.name, [x, idx], axes=axes)[0], bi)]
    x, idx = ctx.move(x, bx, 0), ctx.move(idx, bi, 0)
    idx = _with_batch_index(ctx, idx)
    return [(ctx.emit(op.name, [x, idx], axes=(0,) + shift(axes, 0))[0], 0)]


@batching("scatter")
def _batch_scatter(ctx, op, inputs, attrs):
    (x, bx), (idx, bi), (u, bu) = inputs
    axes, kind = tuple(attrs["axes"]), attrs["kind"]
    if bi is None:
        if bx is None:
            x, bx = ctx.materialize(x, None, 0), 0
        axes2 = shift(axes, bx)
        u = ctx.materialize(u, bu, _kept_position(aval_of(idx).ndim - 1, bx, axes2))
        return [(ctx.emit(op.name, [x, idx, u], axes=axes2, kind=kind)[0], bx)]
    x, u = ctx.materialize(x, bx, 0), ctx.materialize(u, bu, 0)
    idx = _with_batch_index(ctx, ctx.move(idx, bi, 0))
    return [(ctx.emit(op.name, [x, idx, u], axes=(0,) + shift(axes, 0), kind=kind)[0], 0)]


# --- dynamic slices --------------------------------------------------------------------------

def _clamped_start(ctx, s, b, hi: int):
    """Start ``s`` (scalar, or (N,) when batched) clamped into [0, hi], as int32."""
    dt = aval_of(s).dtype
    hi = min(hi, int(np.iinfo(dt).max))
    shape = (ctx.size,) if b is not None else ()
    if b is not None:
        s = ctx.move(s, b, 0)
    if not dtypes.is_unsigned(dt):
        s = ctx.emit("ember.max", [s, _const(ctx, 0, dt, shape)])[0]
    s = ctx.emit("ember.min", [s, _const(ctx, hi, dt, shape)])[0]
    if dt != _IDX:
        s = ctx.emit("ember.convert", [s], new_dtype=_IDX)[0]
    return s


def _window_indices(ctx, starts, dims, window, shape, batch_index=True):
    """Gather/scatter indices of a window of size ``window`` at ``starts`` (clamped), for the
    per-example dimensions ``dims``: shape (N,) + window[dims] + (1 + len(dims),), each index
    vector (n, start_d + i_d for d in dims); without the leading n if not ``batch_index``."""
    grid = (ctx.size,) + tuple(window[d] for d in dims) + (1,)
    comps = [_iota(ctx, grid, 0)] if batch_index else []
    for j, d in enumerate(dims):
        s, b = starts[d]
        s = _clamped_start(ctx, s, b, shape[d] - window[d])
        s = ctx.emit("ember.broadcast_in_dim", [s], shape=grid,
                     broadcast_dimensions=(0,) if b is not None else ())[0]
        comps.append(ctx.emit("ember.add", [s, _iota(ctx, grid, 1 + j)])[0])
    if len(comps) == 1:
        return comps[0]
    return ctx.emit("ember.concatenate", comps, dimension=len(grid) - 1)[0]


def _start_zero(ctx, starts):
    dt = aval_of(starts[0][0]).dtype if starts else _IDX
    return _const(ctx, 0, dt)


@batching("dynamic_slice")
def _batch_dynamic_slice(ctx, op, inputs, attrs):
    (x, bx), starts = inputs[0], inputs[1:]
    sizes = list(attrs["slice_sizes"])
    if all(b is None for _, b in starts):
        operands = [s for s, _ in starts]
        operands.insert(bx, _start_zero(ctx, starts))
        sizes.insert(bx, ctx.size)
        return [(ctx.emit(op.name, [x] + operands, slice_sizes=tuple(sizes))[0], bx)]
    if bx is None:
        # Only the starts are batched: index the shared operand, batch first in the result.
        shape = aval_of(x).shape
        dims = [d for d in range(len(shape)) if sizes[d] < shape[d]]
        if not dims:                              # the window is the whole operand
            return [(x, None)]
        idx = _window_indices(ctx, starts, dims, sizes, shape, batch_index=False)
        out = ctx.emit("ember.gather", [x, idx], axes=tuple(dims))[0]
    else:
        x = ctx.move(x, bx, 0)
        shape = aval_of(x).shape[1:]
        dims = [d for d in range(len(shape)) if sizes[d] < shape[d]]
        if not dims:                              # the window is the whole operand
            return [(x, 0)]
        idx = _window_indices(ctx, starts, dims, sizes, shape)
        out = ctx.emit("ember.gather", [x, idx], axes=(0,) + tuple(d + 1 for d in dims))[0]
    # The result holds (batch, windowed dims, kept dims): put the dimensions back in order.
    order = dims + [d for d in range(len(shape)) if d not in dims]
    perm = (0,) + tuple(1 + order.index(d) for d in range(len(shape)))
    if perm != tuple(range(len(perm))):
        out = ctx.emit("ember.transpose", [out], permutation=perm)[0]
    return [(out, 0)]


@batching("dynamic_update_slice")
def _batch_dynamic_update_slice(ctx, op, inputs, attrs):
    (x, bx), (u, bu), starts = inputs[0], inputs[1], inputs[2:]
    if all(b is None for _, b in starts):
        b = bx if bx is not None else bu
        x, u = ctx.materialize(x, bx, b), ctx.materialize(u, bu, b)
        operands = [s for s, _ in starts]
        operands.insert(b, _start_zero(ctx, starts))
        return [(ctx.emit(op.name, [x, u] + operands)[0], b)]
    x, u = ctx.materialize(x, bx, 0), ctx.materialize(u, bu, 0)
    shape, window = aval_of(x).shape[1:], aval_of(u).shape[1:]
    dims = [d for d in range(len(shape)) if window[d] < shape[d]]
    if not dims:                                  # the update covers the whole operand
        return [(u, 0)]
    idx = _window_indices(ctx, starts, dims, window, shape)
    # Updates as (batch, windowed dims, kept dims), the layout scatter expects.
    order = dims + [d for d in range(len(shape)) if d not in dims]
    perm = (0,) + tuple(1 + d for d in order)
    if perm != tuple(range(len(perm))):
        u = ctx.emit("ember.transpose", [u], permutation=perm)[0]
    out = ctx.emit("ember.scatter", [x, idx, u], axes=(0,) + tuple(d + 1 for d in dims),
                   kind="set")[0]
    return [(out, 0)]


# --- differentiation ----------------------------------------------------------------------

def _in_bounds(em, indices, sizes):
    """Whether each index vector of ``indices`` (batch + (k,)) is inside ``sizes``: the
    updates a scatter applies (it drops the others)."""
    a = aval_of(indices)
    hi = em("broadcast_in_dim", [em("constant", [], value=np.asarray(sizes, a.dtype))],
            shape=a.shape, broadcast_dimensions=(a.ndim - 1,))
    ok = em("and", [em("ge", [indices, full(em, 0, a.shape, a.dtype)]),
                    em("lt", [indices, hi])])
    return em("reduce_and", [ok], axes=(a.ndim - 1,))


def _clamped(em, indices, sizes):
    """``indices`` clamped into ``[0, size - 1]``, as gather reads them."""
    a = aval_of(indices)
    hi = em("broadcast_in_dim", [em("constant", [], value=np.asarray(
        [max(s - 1, 0) for s in sizes], a.dtype))], shape=a.shape,
        broadcast_dimensions=(a.ndim - 1,))
    return em("max", [em("min", [indices, hi]), full(em, 0, a.shape, a.dtype)])


def _zeros_p(ad, like):
    """Zeros for a tangent that is zero, emitted with the primal ops (not ``linear=True``: a
    constant in the linear block would be transposed, and constants have no transpose)."""
    return ad.zeros(like)


@jvp("gather")
def _jvp_gather(ad, op, x, out, t, attrs):
    return [ad.linear("gather", [t[0], x[1]], axes=attrs["axes"])]


@transpose("gather")
def _t_gather(tc, op, cts, lin, attrs):
    operand, indices = op.operands
    a, axes = aval_of(operand), attrs["axes"]
    # gather clamps its indices and scatter drops those out of range: clamp them here.
    idx = _clamped(tc.emit, indices, [a.shape[ax] for ax in axes])
    return [tc.emit("scatter", [tc.zeros(a), idx, cts[0]], axes=axes, kind="add"), None]


def _scatter_add_t(ad, target, indices, updates, axes):
    return ad.linear("scatter", [target, indices, updates], axes=axes, kind="add")


@jvp("scatter")
def _jvp_scatter(ad, op, x, out, t, attrs):
    operand, indices, updates = x
    axes, kind = attrs["axes"], attrs["kind"]
    t_op = t[0] if t[0] is not None else _zeros_p(ad, operand)
    t_up = t[2] if t[2] is not None else _zeros_p(ad, updates)
    if kind == "add":
        return [_scatter_add_t(ad, t_op, indices, t_up, axes)]
    return {"set": _scatter_set, "mul": _scatter_mul, "min": _scatter_extremal,
            "max": _scatter_extremal}[kind](ad, op, x, out, t_op, t_up, t, axes)


def _scatter_set(ad, op, x, out, t_op, t_up, t, axes):
    """JAX's ``_scatter_jvp``: scatter an id per update to learn which update landed where
    (one of duplicates wins), then recompute the result as a scatter-add of the operand
    where nothing landed and the winning updates, and its tangent the same way."""
    operand, indices, updates = x
    em = primal_emitter(ad)
    ia, ua = aval_of(indices), aval_of(updates)
    batch = tuple(ia.shape[:-1])
    n = int(np.prod(batch, dtype=np.int64))
    i32 = np.dtype("int32")
    ids = em("add", [em("reshape", [em("iota", [], shape=(n,), dimension=0, dtype=i32)],
                        new_sizes=batch), full(em, 1, batch, i32)])
    ids = broadcast_to(em, ids, ua.shape)
    landed = em("scatter", [full(em, 0, aval_of(operand).shape, i32), indices, ids],
                axes=axes, kind="set")
    won = em("eq", [em("gather", [landed, indices], axes=axes), ids])
    kept = em("eq", [landed, full(em, 0, aval_of(operand).shape, i32)])
    value = em("scatter", [em("select", [kept, operand, ad.zeros(operand)]), indices,
                           em("select", [won, updates, ad.zeros(updates)])],
               axes=axes, kind="add")
    ad.replace(out[0], value)
    tangent = _scatter_add_t(ad, ad.linear("select", [kept, t_op, ad.zeros(operand)]),
                             indices, ad.linear("select", [won, t_up, ad.zeros(updates)]),
                             axes)
    op.erase()
    return [tangent]


def _scatter_mul(ad, op, x, out, t_op, t_up, t, axes):
    """out = x * prod(updates landing there): the operand's tangent scaled by that product,
    plus x times the scatter-add of each update's tangent times the product of the other
    updates landing with it (zero-safe: zeros counted, not divided by)."""
    operand, indices, updates = x
    em = primal_emitter(ad)
    oa, ua = aval_of(operand), aval_of(updates)
    is0 = em("eq", [updates, ad.zeros(updates)])
    nonzero = em("select", [is0, ad.const(1, updates), updates])
    # One scatter-mul of the nonzero updates and one count of the zeros (a second scatter
    # into the same constant made IREE fail: 'stream.yield' op used resource not listed).
    q_op = em("scatter", [ad.const(1, operand), indices, nonzero], axes=axes, kind="mul")
    i32 = np.dtype("int32")
    count_op = em("scatter", [full(em, 0, oa.shape, i32), indices,
                              em("convert", [is0], new_dtype=i32)], axes=axes, kind="add")
    prod = em("select", [em("eq", [count_op, full(em, 0, oa.shape, i32)]), q_op,
                         ad.zeros(operand)])
    tangent = None if t[0] is None else ad.linear("mul", [t_op, prod])
    if t[2] is None:
        return [tangent]
    q = em("gather", [q_op, indices], axes=axes)
    count = em("gather", [count_op, indices], axes=axes)
    zero_u = ad.zeros(updates)
    others = em("select", [is0,
                           em("select", [em("eq", [count, full(em, 1, ua.shape, i32)]), q,
                                         zero_u]),
                           em("select", [em("eq", [count, full(em, 0, ua.shape, i32)]),
                                         em("div", [q, nonzero]), zero_u])])
    spread = _scatter_add_t(ad, ad.zeros(operand), indices, ad.linear("mul", [t_up, others]),
                            axes)
    return [add_tangents(ad, tangent, ad.linear("mul", [spread, operand]))]


def _scatter_extremal(ad, op, x, out, t_op, t_up, t, axes):
    """JAX's ``_scatter_extremal_jvp``: the tangents of the values that won, averaged over
    ties (the operand's value counting as one of them)."""
    operand, indices, updates = x
    em = primal_emitter(ad)
    oa, ua = aval_of(operand), aval_of(updates)
    inb = broadcast_to(em, _in_bounds(em, indices, [oa.shape[a] for a in axes]), ua.shape)
    one_u, zero_u = ad.const(1, updates), ad.zeros(updates)
    initial = em("gather", [operand, indices], axes=axes)
    target = em("gather", [out[0], indices], axes=axes)
    success = em("eq", [updates, target])
    retained = em("eq", [initial, target])
    zeros_o = ad.zeros(operand)
    n_up = em("gather", [em("scatter", [zeros_o, indices, em("select", [success, one_u,
                                                                          zero_u])],
                            axes=axes, kind="add"), indices], axes=axes)
    n_ref = em("gather", [em("scatter", [zeros_o, indices, one_u], axes=axes, kind="add"),
                          indices], axes=axes)
    inv_up1 = em("div", [one_u, em("add", [n_up, one_u])])
    up_coef = em("select", [success, em("select", [retained, inv_up1,
                                                   em("div", [one_u, n_up])]), zero_u])
    op_coef = em("div", [em("sub", [em("select", [retained, inv_up1, zero_u]), one_u]),
                         n_ref])
    # Updates dropped out of range contribute nothing (and their coefficients may be inf).
    up_coef = em("select", [inb, up_coef, zero_u])
    op_coef = em("select", [inb, op_coef, zero_u])
    upd_t = add_tangents(
        ad, ad.linear("mul", [ad.linear("gather", [t_op, indices], axes=axes), op_coef]),
        ad.linear("mul", [t_up, up_coef]))
    return [_scatter_add_t(ad, t_op, indices, upd_t, axes)]


@transpose("scatter")
def _t_scatter(tc, op, cts, lin, attrs):
    assert attrs["kind"] == "add", "only scatter-add is linear"
    operand, indices, updates = op.operands
    oa = aval_of(operand)
    ct_up = None
    if lin[2]:
        # An update dropped out of range has a zero cotangent (gather would clamp it).
        inb = broadcast_to(tc.emit, _in_bounds(tc.emit, indices,
                                               [oa.shape[a] for a in attrs["axes"]]),
                           aval_of(updates).shape)
        ct_up = tc.emit("select", [inb, tc.emit("gather", [cts[0], indices],
                                                axes=attrs["axes"]),
                                   tc.zeros(aval_of(updates))])
    return [cts[0] if lin[0] else None, None, ct_up]


@jvp("dynamic_slice")
def _jvp_dynamic_slice(ad, op, x, out, t, attrs):
    return [ad.linear("dynamic_slice", [t[0], *x[1:]], **attrs)]


@transpose("dynamic_slice")
def _t_dynamic_slice(tc, op, cts, lin, attrs):
    operand, starts = op.operands[0], list(op.operands)[1:]
    return [tc.emit("dynamic_update_slice", [tc.zeros(aval_of(operand)), cts[0], *starts])] + \
        [None] * len(starts)


@jvp("dynamic_update_slice")
def _jvp_dynamic_update_slice(ad, op, x, out, t, attrs):
    a = t[0] if t[0] is not None else _zeros_p(ad, x[0])
    b = t[1] if t[1] is not None else _zeros_p(ad, x[1])
    return [ad.linear("dynamic_update_slice", [a, b, *x[2:]])]


@transpose("dynamic_update_slice")
def _t_dynamic_update_slice(tc, op, cts, lin, attrs):
    update, starts = op.operands[1], list(op.operands)[2:]
    ua = aval_of(update)
    ct_op = tc.emit("dynamic_update_slice", [cts[0], tc.zeros(ua), *starts]) if lin[0] \
        else None
    ct_up = tc.emit("dynamic_slice", [cts[0], *starts], slice_sizes=tuple(ua.shape)) \
        if lin[1] else None
    return [ct_op, ct_up] + [None] * len(starts)
