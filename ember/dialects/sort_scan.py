"""Sorting and cumulative ops: sort (multi-operand), cumulative sum/prod/max/min.

Lowering: ``ember.sort`` becomes a bitonic sorting network (``_bitonic``; O(n log^2 n)) or,
for small sorts, ``iree_linalg_ext.sort`` with a comparator region; both compare
lexicographically over the keys, NaN last, and are made stable by a position tiebreak where it
matters. The cumulative ops become ``iree_linalg_ext.scan`` (inclusive), reversed before and
after for ``reverse``. Neither iree_linalg_ext op has a Python builder: both are created
generically. ``network_sort``, ``sort_scratch_bytes`` and ``sorted_operands`` say what memory
a sort takes (``ember-liveness``, ``ember-plan-memory``).

Differentiation as JAX's: a sort's tangents follow the permutation (a sort with one more iota
operand); ``cumsum`` is linear; cumprod/cummax/cummin differentiate an associative scan.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, linalg, scf, tensor
from ember.core import ShapedArray
from ember.dialects.shape import lower_rev
from ember.rules.autodiff import (
    aval_of,
    balanced_eq,
    jvp,
    primal,
    primal_all,
    primal_emitter,
    same_op_jvp,
    transpose,
)
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.batching import batching, shift
from ember.rules.lowering import (
    SCALAR,
    LowerCall,
    cmpf,
    cmpi,
    convert_scalar,
    distinct_copy,
    distinct_flag,
    elem,
    empty,
    filled,
    generic,
    identity_map,
    index_of,
    lowering,
    reduce_init,
    scalar_const,
    sign_bit,
    ttype,
)
from ember.rules.type_rules import aval, check_axes, check_class, fmt

__all__: list[str] = ["CUMULATIVE", "network_sort", "sort_scratch_bytes", "sorted_operands",
                      "tiebreak_at_run_time"]


def _sort(avals, attrs):
    if not avals:
        raise OpTypeError("needs at least one operand")
    first = avals[0]
    for a in avals:
        if a.shape != first.shape:
            raise OpTypeError(f"operands must have equal shapes, got {fmt(avals)}")
    if first.ndim == 0:
        raise OpTypeError(f"cannot sort a rank-0 operand, got {fmt(avals)}")
    check_axes([attrs["dimension"]], first.ndim, "dimension")
    if not 1 <= attrs["num_keys"] <= len(avals):
        raise OpTypeError(f"num_keys={attrs['num_keys']} must be between 1 and the number of "
                          f"operands ({len(avals)})")
    check_class(avals[:attrs["num_keys"]], "real")     # complex keys have no order
    return [aval(a.shape, a.dtype) for a in avals]


define("sort", None, _sort,
       attrs=(Attr("dimension", "i64"), Attr("num_keys", "i64", 1)),
       family="sort_scan",
       doc="Stable sort of all operands along `dimension`, ordered lexicographically by the "
           "first `num_keys` operands (ascending; NaN after everything, -0.0 equal to 0.0; "
           "the others follow their keys).")

# name: (dtype class, combining elementwise op)
CUMULATIVE = {"cumsum": ("numeric", "add"), "cumprod": ("numeric", "mul"),
              "cummax": ("real", "max"), "cummin": ("real", "min")}


def _cumulative_rule(cls):
    def infer(avals, attrs):
        (x,) = avals
        check_class(avals, cls)
        if x.ndim == 0:
            raise OpTypeError(f"needs an operand of rank >= 1, got {fmt(avals)}")
        check_axes([attrs["axis"]], x.ndim)
        return [aval(x.shape, x.dtype)]
    return infer


for _name, (_cls, _combine) in CUMULATIVE.items():
    define(_name, 1, _cumulative_rule(_cls),
           attrs=(Attr("axis", "i64"), Attr("reverse", "bool", False)), family="sort_scan",
           doc=f"Inclusive cumulative {_combine} along `axis` (from the end if `reverse`); "
               "NaN propagates.")


# --- lowering -----------------------------------------------------------------------------

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
        a_nan, b_nan = cmpf("uno", a, a), cmpf("uno", b, b)
        lt = arith.OrIOp(cmpf("olt", a, b),
                         arith.AndIOp(b_nan, cmpf("ord", a, a)).result).result
        eq = arith.OrIOp(cmpf("oeq", a, b), arith.AndIOp(a_nan, b_nan).result).result
        return lt, eq
    pred = "ult" if dtypes.is_unsigned(dt) or dtypes.is_bool(dt) else "slt"
    return cmpi(pred, a, b), cmpi("eq", a, b)


# iree_linalg_ext.sort runs in O(n^2) per row on CPU (a 1e5-element sort takes 30 s); a
# bitonic network of O(n log^2 n) replaces it unless the quadratic work (size * n) is at most
# this: there the single dispatch of iree_linalg_ext.sort wins by ~0.1 ms (a 128-element row:
# 0.16 ms against 0.3 ms; 1000 elements: 1.4 ms against 0.4 ms; 4096 rows of 8: 1.6 ms
# against 0.65 ms).
EXT_SORT_MAX_WORK = 1 << 15


def _less(pairs, avals, num_keys, tiebreak):
    """``a < b`` in the sort order, over ``pairs[k] = (a_k, b_k)`` of every operand.

    Lexicographic over the keys: lt0 | (eq0 & (lt1 | (eq1 & ...))), built from the last key;
    the tiebreak (the last operand, a position counting down) compares with ``>``.
    """
    less = None
    if tiebreak:
        a, b = pairs[-1]
        less = cmpi("sgt", a, b)
    for k in reversed(range(num_keys)):
        a, b = pairs[k]
        if less is None:
            less = _key_compare(a, b, avals[k].dtype)[0]
            continue
        lt, eq = _key_compare(a, b, avals[k].dtype)
        less = arith.OrIOp(lt, arith.AndIOp(eq, less).result).result
    return less


def _position(shape, dim, n, dt, fresh: bool = False) -> ir.Value:
    """The tiebreak: ``n - 1 - i`` along ``dim`` (so negative on padding past ``n``);
    ``fresh``: a kernel no other merges with, for a sort to permute in place (as
    ``distinct_copy``)."""
    idx = ShapedArray(shape, dt)
    rank = idx.ndim

    def down(*args):
        pos = arith.SubIOp(scalar_const(n - 1, dt), index_of(dim, dt)).result
        return [pos if not fresh else arith.SelectOp(args[0], scalar_const(mark, dt), pos).result]
    if not fresh:
        return generic([], [], [empty(idx)], [identity_map(rank)], ["parallel"] * rank, down)[0]
    flag, mark = distinct_flag()
    return generic([flag], [ir.AffineMap.get(rank, 0, [])], [empty(idx)], [identity_map(rank)],
                   ["parallel"] * rank, down)[0]


def _sort_last(dt):
    """The value that sorts after (or with) every other of dtype ``dt``."""
    dt = np.dtype(dt)
    if dtypes.is_float(dt):
        return np.nan
    if dtypes.is_bool(dt):
        return True
    return np.iinfo(dt).max


def network_sort(aval, dim: int) -> bool:
    """Whether a sort of operands of ``aval`` along ``dim`` is a bitonic network (whose
    results an elementwise kernel unpacks) rather than an ``iree_linalg_ext.sort``."""
    return aval.size * aval.shape[dim] > EXT_SORT_MAX_WORK and aval.shape[dim] > 1


def sort_scratch_bytes(avals, num_keys: int, dim: int) -> int:
    """Bytes a sort of distinct operands ``avals`` holds besides its results while it runs:
    the bitonic network's packed operands and the stage writing them anew (a loop carry and
    its next value), or the position tiebreak of an ``iree_linalg_ext.sort``. Measured
    with IREE's statistics (``tests/test_memory.py``)."""
    n = avals[0].shape[dim]
    if avals[0].size == 0 or n <= 1:
        return 0
    if tiebreak_at_run_time(avals):
        # IREE holds the buffers of both sorts of the scf.if, and copies the result out.
        return _scratch(avals, dim, True) + _scratch(avals, dim, False) + avals[0].nbytes
    return _scratch(avals, dim, _tiebreak(avals, num_keys))


def _scratch(avals, dim: int, tiebreak: bool) -> int:
    n = avals[0].shape[dim]
    if not network_sort(avals[0], dim):
        return tiebreak * avals[0].size * (4 if n < 2 ** 31 else 8)
    P = 1 << (n - 1).bit_length()
    word = 8 if max(np.dtype(a.dtype).itemsize for a in avals) == 8 else 4
    return 2 * (len(avals) + tiebreak) * (avals[0].size // n) * P * word


def tiebreak_at_run_time(avals) -> bool:
    """Whether the sort breaks ties by position only when the keys need it (see
    ``_lower_sort``): one float key and nothing else."""
    return len(avals) == 1 and dtypes.is_float(avals[0].dtype)


def _tiebreak(avals, num_keys: int) -> bool:
    # IREE's sort and the network are not stable: ties are broken by the original position
    # where equal keys are distinguishable: value operands, several keys, and float keys
    # (-0.0 and 0.0 compare equal, as NaNs of different payloads do; lax.sort is stable, so
    # [0., -0.] stays [0., -0.]).
    return len(avals) > num_keys or num_keys > 1 or dtypes.is_float(avals[0].dtype)


def sorted_operands(values, num_keys: int):
    """(the operands a sort of ``values`` sorts, the index of each value among them): one per
    distinct value operand, as the same buffer twice in a sort's outs costs IREE a stack copy
    (and the network reads it twice); keys are kept as they are."""
    operands, where = [], []
    for k, v in enumerate(values):
        same = [j for j, u in enumerate(operands) if u == v]
        if same and k >= num_keys:
            where.append(same[0])
            continue
        where.append(len(operands))
        operands.append(v)
    return operands, where


@lowering("sort")
def _lower_sort(c: LowerCall):
    avals, num_keys, dim = list(c.in_avals), c.attrs["num_keys"], c.attrs["dimension"]
    if avals[0].size == 0 or avals[0].shape[dim] <= 1:
        return list(c.operands)
    operands, where = sorted_operands(c.operands, num_keys)
    avals = [avals[where.index(j)] for j in range(len(operands))]
    sort = _bitonic if network_sort(avals[0], dim) else _linalg_ext_sort
    if tiebreak_at_run_time(avals):
        # One float key and nothing else: equal keys are equal bits, and any order of them is
        # the stable one, unless a -0.0 or a NaN is there. Only then does the position break
        # the ties (always, it made a sort of 1e6 floats 3.5x slower; this way IREE holds
        # both sorts' buffers: sort_scratch_bytes).
        op = ir.Operation.create("scf.if", results=[ttype(avals[0])],
                                 operands=[_signed_zeros_or_nans(operands[0], avals[0])],
                                 regions=2)
        for region, tiebreak in zip(op.regions, (True, False)):
            with ir.InsertionPoint(region.blocks.append()):
                scf.YieldOp(sort(operands, avals, num_keys, dim, tiebreak))
        results = list(op.results)
    else:
        results = sort(operands, avals, num_keys, dim, _tiebreak(avals, num_keys))
    return [results[j] for j in where]


def _signed_zeros_or_nans(x, a: ShapedArray) -> ir.Value:
    """An i1: whether ``x`` (floats) holds a -0.0 or a NaN, the equal keys a stable sort
    must keep in their order."""
    flag = ShapedArray((), np.dtype(bool))
    rank = len(a.shape)

    def body(v, acc):
        zero = scalar_const(0, a.dtype)
        negative_zero = arith.AndIOp(cmpf("oeq", v, zero), sign_bit(v, a.dtype)).result
        odd = arith.OrIOp(negative_zero, cmpf("uno", v, v)).result
        return [arith.OrIOp(acc, odd).result]
    (out,) = generic([x], [identity_map(rank)], [filled(flag, False)],
                     [ir.AffineMap.get(rank, 0, [])], ["reduction"] * rank, body)
    return tensor.ExtractOp(out, []).result


def _linalg_ext_sort(operands, avals, num_keys, dim, tiebreak: bool):
    # The position counts down (n-1-i, compared with >), so that it is never merged with an
    # iota operand.
    avals = list(avals)         # (the position is appended: the caller's list stays)
    n = avals[0].shape[dim]
    operands = [distinct_copy(v, a) for v, a in zip(operands, avals)]
    if tiebreak:
        idx_dt = np.dtype(np.int32 if n < 2 ** 31 else np.int64)
        operands.append(_position(avals[0].shape, dim, n, idx_dt, fresh=True))
        avals.append(ShapedArray(avals[0].shape, idx_dt))
    types = [ttype(a) for a in avals]
    # The sort works in place on its operands, and IREE does not copy an operand that other
    # ops (another sort, say) also use: each operand is a kernel of its own (``distinct_copy``,
    # the position made fresh), which no CSE merges with another sort's (the second then sorted
    # what the first had permuted) and IREE does not fold into a constant (the sort then
    # writes a global: "write affecting operations on global resources").
    op = ir.Operation.create(
        "iree_linalg_ext.sort", results=types, operands=operands,
        attributes={"dimension": _i64(dim),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(avals)])},
        regions=1)
    arg_types = [t for a in avals for t in (elem(a.dtype), elem(a.dtype))]
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        args = block.arguments
        _yield([_less([(args[2 * k], args[2 * k + 1]) for k in range(len(avals))],
                      avals, num_keys, tiebreak)])
    # A barrier on the results: IREE gives unused results of the sort's dispatch stack
    # buffers, which overflow its 32 KiB stack limit for large arrays.
    return _barrier(list(op.results), types)[:len(avals) - tiebreak]


def _bitonic(operands, avals, num_keys, dim, tiebreak: bool):
    """Bitonic sorting network over the operands padded along ``dim`` to a power of two P.

    Stage (k, j) (k = 2, 4, .., P; j = k/2, .., 1) compare-exchanges the elements i and
    i ^ j, ascending where i & k == 0. All log2(P) (log2(P) + 1) / 2 stages are one
    linalg.generic inside two scf.for loops (k and j are loop values): element i reads its
    partner with tensor.extract and keeps the smaller of the two iff (i & k == 0) ==
    (i & j == 0). One small dispatch, compiled once for any P, and faster at run time than
    unrolled stages over [P/2k, 2, k/2j, 2, j] views (those also take ~0.1 s of compile time
    each). Padding sorts last: its keys hold the largest value of the order and its
    position tiebreak is negative.

    The loop carries one tensor: the operands' bits widened to one integer type, stacked
    along a new leading dimension. With several loop-carried tensors, IREE 3.13 packs them
    into one allocation and copies them apart in each iteration, and its runtime rejects
    some of these copies ("indirect buffer reference slot 0 is out range of the declared
    binding capacity of the command buffer 0").
    """
    shape, n = avals[0].shape, avals[0].shape[dim]
    P = 1 << (n - 1).bit_length()
    padded = shape[:dim] + (P,) + shape[dim + 1:]
    out_avals = list(avals)
    dts = [np.dtype(a.dtype) for a in avals]
    if tiebreak:
        dts.append(np.dtype(np.int32 if P < 2 ** 31 else np.int64))
    word = np.dtype(np.int64 if max(d.itemsize for d in dts) == 8 else np.int32)
    m, rank = len(dts), len(shape)
    packed_aval = ShapedArray((m,) + padded, word)
    index = ir.IndexType.get()

    def cidx(v):
        return arith.ConstantOp(index, ir.IntegerAttr.get(index, v)).result

    def decode(w, dt):
        """A word of the packed tensor back to a scalar of dtype ``dt``."""
        bits = 1 if dtypes.is_bool(dt) else dt.itemsize * 8
        if bits < word.itemsize * 8:
            w = arith.TruncIOp(ir.IntegerType.get_signless(bits), w).result
        if dtypes.is_float(dt):
            w = arith.BitcastOp(elem(dt), w).result
        return w

    def encode(x, dt):
        bits = 1 if dtypes.is_bool(dt) else dt.itemsize * 8
        if dtypes.is_float(dt):
            x = arith.BitcastOp(ir.IntegerType.get_signless(bits), x).result
        if bits < word.itemsize * 8:
            x = arith.ExtUIOp(elem(word), x).result
        return x

    # Pack (and pad): row t of the packed tensor is operand t (or the tiebreak n - 1 - i).
    def pack(_o):
        t, *ids = [linalg.IndexOp(d).result for d in range(rank + 1)]
        i = ids[dim]
        last = cidx(n - 1)
        inside = cmpi("ule", i, last)
        ids[dim] = arith.MinUIOp(i, last).result
        rows = []
        for k, (v, dt) in enumerate(zip(operands, dts)):
            x = tensor.ExtractOp(v, ids).result
            if P != n:
                fill = scalar_const(_sort_last(dt) if k < num_keys else 0, dt)
                x = arith.SelectOp(inside, x, fill).result
            rows.append(encode(x, dt))
        if tiebreak:
            pos = arith.SubIOp(scalar_const(n - 1, word), arith.IndexCastOp(elem(word), i).result)
            rows.append(pos.result)
        out = rows[-1]
        for k in reversed(range(m - 1)):
            out = arith.SelectOp(cmpi("eq", t, cidx(k)), rows[k], out).result
        return [out]

    ident = identity_map(rank + 1)
    (packed,) = generic([], [], [empty(packed_aval)], [ident], ["parallel"] * (rank + 1), pack)
    key_rows = list(range(num_keys)) + ([m - 1] if tiebreak else [])
    key_avals = [ShapedArray(padded, dts[r]) for r in key_rows]

    one = cidx(1)
    outer = scf.ForOp(one, cidx(P.bit_length()), one, [packed])        # k = 1 << p
    with ir.InsertionPoint(outer.body):
        p = outer.induction_variable
        k = arith.ShLIOp(one, p).result
        inner = scf.ForOp(cidx(0), p, one, list(outer.inner_iter_args))   # j = k/2 .. 1
        with ir.InsertionPoint(inner.body):
            q = arith.SubIOp(arith.SubIOp(p, one).result, inner.induction_variable).result
            j = arith.ShLIOp(one, q).result
            (cur,) = inner.inner_iter_args

            def body(_o):
                t, *ids = [linalg.IndexOp(d).result for d in range(rank + 1)]
                i = ids[dim]
                partner = arith.XOrIOp(i, j).result
                pids = ids[:dim] + [partner] + ids[dim + 1:]
                pairs = []
                for r, a in zip(key_rows, key_avals):
                    row = cidx(r)
                    pairs.append((decode(tensor.ExtractOp(cur, [row] + pids).result, a.dtype),
                                  decode(tensor.ExtractOp(cur, [row] + ids).result, a.dtype)))
                zero = cidx(0)
                asc = cmpi("eq", arith.AndIOp(i, k).result, zero)
                lower = cmpi("eq", arith.AndIOp(i, j).result, zero)
                want_min = cmpi("eq", asc, lower)
                # partner < own: take it iff we want the minimum (equal elements, with no
                # tiebreak, are interchangeable)
                take = cmpi("eq", want_min, _less(pairs, key_avals, num_keys, tiebreak))
                src = arith.SelectOp(take, partner, i).result
                return [tensor.ExtractOp(cur, [t] + ids[:dim] + [src] + ids[dim + 1:]).result]

            scf.YieldOp(generic([], [], [empty(packed_aval)], [ident],
                                ["parallel"] * (rank + 1), body))
        scf.YieldOp(list(inner.results))
    (packed,) = outer.results

    def unpack(*_o):
        ids = [linalg.IndexOp(d).result for d in range(rank)]
        return [decode(tensor.ExtractOp(packed, [cidx(t)] + ids).result, a.dtype)
                for t, a in enumerate(out_avals)]
    return generic([], [], [empty(a) for a in out_avals], [identity_map(rank)] * len(out_avals),
                   ["parallel"] * rank, unpack)


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
    return lower_rev(LowerCall(None, [x], [aval], [aval], {"dimensions": (axis,)}))[0]


# IREE quirk: tests/test_iree_quirks.py::test_bool_scan_fails
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
    init = filled(acc, reduce_init(name[3:], xa.dtype))
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


# --- batching -----------------------------------------------------------------------------

@batching("cumsum", "cumprod", "cummax", "cummin")
def _batch_cumulative(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    new = dict(attrs, axis=shift((attrs["axis"],), b)[0])
    return [(ctx.emit(op.name, [x], **new)[0], b)]


@batching("sort")
def _batch_sort(ctx, op, inputs, attrs):
    operands = [ctx.materialize(v, b, 0) for v, b in inputs]
    new = dict(attrs, dimension=attrs["dimension"] + 1)
    return [(r, 0) for r in ctx.emit(op.name, operands, **new)]


# --- differentiation ----------------------------------------------------------------------

def _along_indices(em, index, axis):
    """Full gather indices (shape + (ndim,)) reading position ``index`` (an int array of the
    result's shape) along ``axis`` and the same position along the others
    (``take_along_axis``)."""
    a = aval_of(index)
    cols = []
    for d in range(a.ndim):
        c = index if d == axis else em("iota", [], shape=tuple(a.shape), dimension=d,
                                       dtype=a.dtype)
        cols.append(em("reshape", [c], new_sizes=tuple(a.shape) + (1,)))
    return cols[0] if len(cols) == 1 else em("concatenate", cols, dimension=a.ndim)


def _take_along(ad, t, index, axis):
    """The tangent ``t`` read at ``index`` along ``axis`` (a gather, linear in ``t``)."""
    idx = _along_indices(primal_emitter(ad), index, axis)
    return ad.linear("gather", [t, idx], axes=tuple(range(aval_of(t).ndim)))


@jvp("sort")
def _jvp_sort(ad, op, x, out, t, attrs):
    """As JAX: sort once more with an iota operand, whose result is the permutation that the
    tangents go through; that sort's other results replace the primal ones."""
    dim = attrs["dimension"]
    shape = tuple(aval_of(x[0]).shape)
    iota = ad.primal("iota", [], shape=shape, dimension=dim, dtype=np.dtype("int32"))
    res = primal_all(ad, "sort", list(x) + [iota], **attrs)
    for old, new in zip(out, res):
        ad.replace(old, new)
    tangents = [None if ti is None else _take_along(ad, ti, res[-1], dim) for ti in t]
    op.erase()
    return tangents


jvp("cumsum")(same_op_jvp)


@transpose("cumsum")
def _t_cumsum(tc, op, cts, lin, attrs):
    return [tc.emit("cumsum", [cts[0]], axis=attrs["axis"], reverse=not attrs["reverse"])]


def _scan_jvp(ad, x, t, axis, reverse, combine):
    """The tangent of an inclusive scan of ``x`` along ``axis``: JAX's JVP of its
    ``associative_scan`` (pairs combined, the half-size scan recursively, the rest
    interleaved), ``combine(p1, t1, p2, t2) -> (p, t)`` emitting the primal and the linear
    ops of one combination. As JAX differentiates cumprod, cummax and cummin, ties and
    zeros included."""
    prim = primal_emitter(ad)

    def lin(name, ops, **a):
        return ad.linear(name, list(ops), **a)

    def cut(em, v, start, stop, stride=1):
        a = aval_of(v)
        lo, hi, st = [0] * a.ndim, list(a.shape), [1] * a.ndim
        lo[axis], hi[axis], st[axis] = start, a.shape[axis] + stop if stop < 0 else stop, stride
        return em("slice", [v], start_indices=tuple(lo), limit_indices=tuple(hi),
                  strides=tuple(st))

    def interleave(em, a, b):
        """a at the even positions, b at the odd ones (JAX's _interleave)."""
        na, nb, nd = aval_of(a).shape[axis], aval_of(b).shape[axis], aval_of(a).ndim
        zero = ad.primal("constant", [], value=np.zeros((), aval_of(a).dtype))

        def spread(v, low, high):
            lo, hi, mid = [0] * nd, [0] * nd, [0] * nd
            lo[axis], hi[axis], mid[axis] = low, high, 1
            return em("pad", [v, zero], low=tuple(lo), high=tuple(hi), interior=tuple(mid))
        return em("add", [spread(a, 0, 1 if na == nb else 0),
                          spread(b, 1, 0 if na == nb else 1)])

    def scan(p, tt):
        n = aval_of(p).shape[axis]
        if n < 2:
            return p, tt
        rp, rt = combine(cut(prim, p, 0, n - 1, 2), cut(lin, tt, 0, n - 1, 2),
                         cut(prim, p, 1, n, 2), cut(lin, tt, 1, n, 2))
        odd_p, odd_t = scan(rp, rt)
        even_p, even_t = cut(prim, p, 0, 1), cut(lin, tt, 0, 1)
        if n > 2:
            m = aval_of(odd_p).shape[axis]
            ep, et = (cut(prim, odd_p, 0, m - 1), cut(lin, odd_t, 0, m - 1)) \
                if n % 2 == 0 else (odd_p, odd_t)
            ep, et = combine(ep, et, cut(prim, p, 2, n, 2), cut(lin, tt, 2, n, 2))
            even_p = prim("concatenate", [even_p, ep], dimension=axis)
            even_t = lin("concatenate", [even_t, et], dimension=axis)
        return interleave(prim, even_p, odd_p), interleave(lin, even_t, odd_t)

    if reverse:
        x, t = prim("rev", [x], dimensions=(axis,)), lin("rev", [t], dimensions=(axis,))
    _, out = scan(x, t)
    return lin("rev", [out], dimensions=(axis,)) if reverse else out


def _combine_mul(ad):
    def combine(p1, t1, p2, t2):
        return primal(ad, "mul", p1, p2), ad.linear("add", [ad.linear("mul", [t1, p2]),
                                                        ad.linear("mul", [p1, t2])])
    return combine


def _combine_chooser(ad, name):
    """max/min's JVP: the tangent of the chosen operand, halves at a tie (as JAX)."""
    def combine(p1, t1, p2, t2):
        out = primal(ad, name, p1, p2)
        return out, ad.linear("add", [
            ad.linear("mul", [t1, balanced_eq(ad, p1, out, p2)]),
            ad.linear("mul", [t2, balanced_eq(ad, p2, out, p1)])])
    return combine


@jvp("cumprod", "cummax", "cummin")
def _jvp_cumulative(ad, op, x, out, t, attrs):
    name = op.name.split(".")[1]
    combine = _combine_mul(ad) if name == "cumprod" else _combine_chooser(ad, name[3:])
    return [_scan_jvp(ad, x[0], t[0], attrs["axis"], attrs["reverse"], combine)]
