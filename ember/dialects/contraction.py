"""The contraction family: ``dot_general`` (lax's dimension numbers, batch and contracting
dimensions): its declaration, lowering, batching and differentiation rules.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, complex_d, ir, linalg
from ember.rules.autodiff import add_tangents, aval_of, jvp, transpose
from ember.rules.base import Attr, OpTypeError, ShapedArray, aval_of_type, define
from ember.rules.batching import batching, shift
from ember.rules.lowering import (
    SCALAR,
    LowerCall,
    convert_scalar,
    dims_map,
    elem,
    empty,
    filled,
    generic,
    identity_map,
    in_dispatch_region,
    lowering,
    optimization_barrier,
)
from ember.rules.partition import partition
from ember.rules.type_rules import aval, check_axes, fmt


def _dot_general(avals, attrs):
    lhs, rhs = avals
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    if lhs.dtype != rhs.dtype or dtypes.is_bool(lhs.dtype):
        raise OpTypeError(f"operands must share a numeric dtype, got {fmt(avals)}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise OpTypeError("contracting and batch dimension lists must pair up")
    check_axes(tuple(lc) + tuple(lb), lhs.ndim, "lhs dimension")
    check_axes(tuple(rc) + tuple(rb), rhs.ndim, "rhs dimension")
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise OpTypeError(f"dimension {a} of lhs ({lhs.shape[a]}) does not match dimension "
                              f"{b} of rhs ({rhs.shape[b]}) in {fmt(avals)}")
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    return [aval([lhs.shape[i] for i in lb] + lfree + rfree, lhs.dtype)]


define("dot_general", 2, _dot_general,
       attrs=(Attr("lhs_contracting", "i64s"), Attr("rhs_contracting", "i64s"),
              Attr("lhs_batch", "i64s", ()), Attr("rhs_batch", "i64s", ())),
       family="contraction",
       doc="General dot: result dims are batch, lhs free, rhs free (lax.dot_general).")


def _uniform_along(v: ir.Value, dims) -> bool:
    """Whether ``v`` is the result of a ``linalg.generic`` that reads no input along one of
    ``dims`` but reads some along another (a broadcast row or column, not a splat)."""
    op = v.owner
    if isinstance(op, ir.Block) or op.name != "linalg.generic" or len(op.results) != 1:
        return False
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims):
        return False
    used = {ir.AffineDimExpr(e).position for m in maps[:-1] for e in m.results
            if isinstance(e, ir.AffineDimExpr)}
    return bool(used) and any(d not in used for d in dims)


def _contraction_operand(v: ir.Value, free) -> ir.Value:
    """IREE 3.13 crashes (a segfault in MaterializeDeviceEncoding, at O3 with data tiling)
    on a contraction whose operand is a broadcast along one of its free dims (a row as the
    left operand, a column as the right): a barrier keeps the broadcast out of the packing."""
    if free and _uniform_along(v, free):
        return optimization_barrier(v)
    return v


# Ops IREE fuses with the packing of a contraction operand they compute, walked through.
_ELEMENTWISE = ("linalg.generic", "linalg.transpose", "linalg.broadcast", "tensor.expand_shape",
                "tensor.collapse_shape")


def _batched_lhs(v: ir.Value, rows: int) -> ir.Value:
    """IREE 3.13's data tiling packs a batched contraction's left operand in the kernel that
    computes it, with batch and rows collapsed into one dim, and miscompiles that kernel
    when it reads a value broadcast along the rows' elements and the rows need padding to
    the tile: (x * s[..., None]) @ w and softmax(x) @ w had their second batch's rows shifted
    by one (batch 2, rows mod 8 in 5..7 and 3; tests/test_linalg.py). A barrier keeps the
    packing out of such a kernel; row counts a multiple of 16 (every CPU tile divides it)
    need none (attention over 128 positions keeps its fused packing; with a barrier it ran
    17% slower)."""
    if rows % 16 == 0 or not isinstance(v, ir.OpResult) or in_dispatch_region(v.owner):
        return v                            # (IREE rejects a barrier in a dispatch region)
    for use in v.uses:                      # one barrier for all the products reading v
        if use.owner.name == "util.optimization_barrier":
            return use.owner.results[0]
    seen, stack = set(), [v]
    while stack:
        x = stack.pop()
        if not isinstance(x, ir.OpResult) or x in seen:
            continue
        seen.add(x)
        op = x.owner
        if op.name == "linalg.generic":
            maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
            if "reduction" in str(op.attributes["iterator_types"]) or any(
                    not m.is_permutation for m in maps[:len(op.operands) - len(op.results)]):
                with ir.InsertionPoint(v.owner):
                    barrier = optimization_barrier(v)
                barrier.owner.move_after(v.owner)
                return barrier
        if op.name in _ELEMENTWISE:
            stack.extend(op.operands)
    return v


@lowering("dot_general")
def _lower_dot_general(c: LowerCall):
    if dtypes.is_complex(c.in_avals[0].dtype):
        return [_complex_dot(c)]
    return _real_dot(c)


def _complex_dot(c: LowerCall) -> ir.Value:
    """A complex product as four real ones, (ar br - ai bi) + (ar bi + ai br) i: IREE's
    matmul of complex elements is scalar code (256 x 256 complex64: 110 ms, the four
    float32 products 16-21 ms on the loaded 2-core machine)."""
    (lhs, rhs), (la, ra), out = c.operands, c.in_avals, c.out_avals[0]
    part = dtypes.real_dtype(la.dtype)

    def parts(x, aval):
        rank = aval.ndim
        real = ShapedArray(aval.shape, part)
        return [generic([x], [identity_map(rank)], [empty(real)], [identity_map(rank)],
                        ["parallel"] * rank, lambda v, _o, f=f: [f(v).result])[0]
                for f in (complex_d.ReOp, complex_d.ImOp)]

    (ar, ai), (br, bi) = parts(lhs, la), parts(rhs, ra)
    pa, pb, po = (ShapedArray(a.shape, part) for a in (la, ra, out))

    def dot(x, y):
        return _real_dot(LowerCall(c.op, [x, y], [pa, pb], [po], c.attrs, c.options))[0]

    products = [dot(ar, br), dot(ai, bi), dot(ar, bi), dot(ai, br)]
    rank = out.ndim

    def combine(rr, ii, ri, ir_, _o):
        return [complex_d.CreateOp(elem(out.dtype), arith.SubFOp(rr, ii).result,
                                   arith.AddFOp(ri, ir_).result).result]
    return generic(products, [identity_map(rank)] * 4, [empty(out)], [identity_map(rank)],
                   ["parallel"] * rank, combine)[0]


# IREE quirk: tests/test_iree_quirks.py::test_matmul_with_empty_contraction_crashes
def _real_dot(c: LowerCall) -> list[ir.Value]:
    (lhs, rhs), (la, ra), out = c.operands, c.in_avals, c.out_avals[0]
    lc, rc = c.attrs["lhs_contracting"], c.attrs["rhs_contracting"]
    lb, rb = c.attrs["lhs_batch"], c.attrs["rhs_batch"]
    if lb:
        lhs = _batched_lhs(lhs, int(np.prod([la.shape[d] for d in range(la.ndim)
                                            if d not in lc + lb])))
    lhs = _contraction_operand(lhs, [d for d in range(la.ndim) if d not in lc + lb])
    rhs = _contraction_operand(rhs, [d for d in range(ra.ndim) if d not in rc + rb])
    dt = la.dtype
    acc_dt = np.dtype("float32") if dtypes.is_float(dt) and dt.itemsize < 4 else dt
    if any(la.shape[d] == 0 for d in lc):   # an empty sum: zeros (IREE's matmul traps on K=0)
        return [filled(out, 0)]
    acc_aval = ShapedArray(out.shape, acc_dt)
    init = filled(acc_aval, 0)
    if acc_dt == dt and not lb and la.ndim == ra.ndim == 2 and lc == (1,) and rc == (0,):
        return [linalg.matmul(lhs, rhs, outs=[init])]
    if acc_dt == dt and la.ndim == ra.ndim == 3 and lb == rb == (0,) and lc == (2,) \
            and rc == (1,):
        return [linalg.batch_matmul(lhs, rhs, outs=[init])]
    lfree = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    nb, nl, nr = len(lb), len(lfree), len(rfree)
    n = nb + nl + nr + len(lc)
    lmap, rmap = [0] * la.ndim, [0] * ra.ndim
    for i, (a, b) in enumerate(zip(lb, rb)):
        lmap[a], rmap[b] = i, i
    for i, a in enumerate(lfree):
        lmap[a] = nb + i
    for i, b in enumerate(rfree):
        rmap[b] = nb + nl + i
    for i, (a, b) in enumerate(zip(lc, rc)):
        lmap[a], rmap[b] = nb + nl + nr + i, nb + nl + nr + i
    iters = ["parallel"] * (nb + nl + nr) + ["reduction"] * len(lc)

    def body(a, b, acc):
        if acc_dt != dt:
            a, b = (arith.ExtFOp(elem(acc_dt), v).result for v in (a, b))
        return [SCALAR["add"]([acc, SCALAR["mul"]([a, b], acc_dt, acc_dt, {})], acc_dt,
                              acc_dt, {})]

    (res,) = generic([lhs, rhs], [dims_map(n, lmap), dims_map(n, rmap)], [init],
                     [dims_map(n, range(nb + nl + nr))], iters, body)
    if acc_dt != dt:
        rank = len(out.shape)
        (res,) = generic([res], [identity_map(rank)], [empty(out)], [identity_map(rank)],
                         ["parallel"] * rank, lambda a, _o: [convert_scalar(a, acc_dt, dt)])
    return [res]


@batching("dot_general")
def _batch_dot_general(ctx, op, inputs, attrs):
    (lhs, lb), (rhs, rb) = inputs
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lbatch, rbatch = attrs["lhs_batch"], attrs["rhs_batch"]
    if lb is not None and rb is not None:
        # Both batched: the vmapped axis becomes one more batch dimension (the first).
        lhs, rhs = ctx.move(lhs, lb, 0), ctx.move(rhs, rb, 0)
        out = ctx.emit(op.name, [lhs, rhs], lhs_contracting=shift(lc, 0),
                       rhs_contracting=shift(rc, 0), lhs_batch=(0,) + shift(lbatch, 0),
                       rhs_batch=(0,) + shift(rbatch, 0))[0]
        return [(out, 0)]
    # One side batched: its batch dimension is a free dimension of the contraction.
    lhs_nd, rhs_nd = aval_of_type(lhs.type).ndim, aval_of_type(rhs.type).ndim
    if lb is not None:
        lc2, lbatch2 = shift(lc, lb), shift(lbatch, lb)
        free = [d for d in range(lhs_nd) if d not in lc2 and d not in lbatch2]
        out_b = len(lbatch) + free.index(lb)
        out = ctx.emit(op.name, [lhs, rhs], lhs_contracting=lc2, rhs_contracting=rc,
                       lhs_batch=lbatch2, rhs_batch=rbatch)[0]
        return [(out, out_b)]
    rc2, rbatch2 = shift(rc, rb), shift(rbatch, rb)
    free = [d for d in range(rhs_nd) if d not in rc2 and d not in rbatch2]
    lhs_free = lhs_nd - len(lc) - len(lbatch)
    out_b = len(lbatch) + lhs_free + free.index(rb)
    out = ctx.emit(op.name, [lhs, rhs], lhs_contracting=lc, rhs_contracting=rc2,
                   lhs_batch=lbatch, rhs_batch=rbatch2)[0]
    return [(out, out_b)]


@jvp("dot_general")
def _jvp_dot_general(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("dot_general", [t[0], x[1]], **attrs)
    b = None if t[1] is None else ad.linear("dot_general", [x[0], t[1]], **attrs)
    return [add_tangents(ad, a, b)]


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_lhs(tc, ct, x_aval, y, lc, rc, lb, rb, swap=False):
    """JAX's ``_dot_general_transpose_lhs``: the cotangent of the lhs of a dot_general."""
    y_ndim = aval_of(y).ndim
    x_kept = [d for d in range(x_aval.ndim) if d not in lc and d not in lb]
    y_kept = [d for d in range(y_ndim) if d not in rc and d not in rb]
    if swap:
        ans_batch, ans_y, _ = _ranges_like(lb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(lb, x_kept, y_kept)
    out = tc.emit("dot_general", [ct, y], lhs_contracting=tuple(ans_y),
                  rhs_contracting=tuple(y_kept), lhs_batch=tuple(ans_batch),
                  rhs_batch=tuple(rb))
    x_contract_sorted_by_y = [lc[i] for i in np.argsort(rc)]
    unsorted = list(lb) + x_kept + x_contract_sorted_by_y
    perm = tuple(int(i) for i in np.argsort(unsorted))
    if perm != tuple(range(len(perm))):
        out = tc.emit("transpose", [out], permutation=perm)
    return out


@transpose("dot_general")
def _transpose_dot_general(tc, op, cts, lin, attrs):
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    x, y = op.operands
    if lin[0] and lin[1]:
        raise AssertionError("a product of two tangents is not linear")
    if lin[0]:
        return [_dot_transpose_lhs(tc, cts[0], aval_of(x), y, lc, rc, lb, rb), None]
    return [None, _dot_transpose_rhs(tc, cts[0], x, aval_of(y), lc, rc, lb, rb)]


def _dot_transpose_rhs(tc, ct, x, y_aval, lc, rc, lb, rb):
    """The cotangent of the rhs of a dot_general, as ``dot_general(x, ct)``: its dimensions
    come out as (batch, rhs contracting in lhs order, rhs free), which is the rhs's own
    order for a plain ``x @ w`` (JAX computes ``dot_general(ct, x)`` and transposes: one
    more kernel per product, per step of a scan)."""
    x_ndim = aval_of(x).ndim
    x_kept = [d for d in range(x_ndim) if d not in lc and d not in lb]
    y_kept = [d for d in range(y_aval.ndim) if d not in rc and d not in rb]
    ans_batch, ans_x, _ = _ranges_like(lb, x_kept, y_kept)
    out = tc.emit("dot_general", [x, ct], lhs_contracting=tuple(x_kept),
                  rhs_contracting=tuple(ans_x), lhs_batch=tuple(lb),
                  rhs_batch=tuple(ans_batch))
    # ``out``'s dimensions, as rhs dimensions: batch, the contracting ones paired with lc
    # (in lc's increasing order, as dot_general keeps the lhs's free dims), then y_kept.
    pairs = sorted(zip(lc, rc))
    order = list(rb) + [r for _, r in pairs] + y_kept
    perm = tuple(int(i) for i in np.argsort(order))
    if perm != tuple(range(len(perm))):
        out = tc.emit("transpose", [out], permutation=perm)
    return out


# Partitioning (jit with shardings, ember/rules/partition.py): the split operand decides; the
# other is cut to the matching block (or gathered whole, for a free dimension). A split
# contracting dimension gives each device a partial product, summed across the devices.

@partition("dot_general")
def _partition_dot_general(ctx, op, ins, attrs):
    (lhs, ls), (rhs, rs) = ins
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    la, ra = aval_of_type(lhs.type), aval_of_type(rhs.type)
    lfree = [d for d in range(la.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(ra.ndim) if d not in rb and d not in rc]
    if ls is None:      # the rhs is split: the same with the roles swapped
        if rs in rb:
            lhs, out = ctx.as_split(lhs, None, lb[rb.index(rs)]), rb.index(rs)
        elif rs in rc:
            lhs, out = ctx.as_split(lhs, None, lc[rc.index(rs)]), None
        else:
            out = len(lb) + len(lfree) + rfree.index(rs)
    elif ls in lb:
        rhs, out = ctx.as_split(rhs, rs, rb[lb.index(ls)]), lb.index(ls)
    elif ls in lc:
        rhs, out = ctx.as_split(rhs, rs, rc[lc.index(ls)]), None
    else:
        rhs, out = ctx.gather(rhs, rs), len(lb) + lfree.index(ls)
    if lhs is None or rhs is None:
        return None     # split along dimensions that do not pair: gathered
    product = ctx.emit(op.name, [lhs, rhs], **attrs)[0]
    if out is None:
        return [(ctx.emit("ember.psum", [product], axis_name=ctx.axis_name)[0], None)]
    return [(product, out)]
