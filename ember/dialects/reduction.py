"""The reduction family: ``reduce_sum``/``prod``/``max``/``min``/``and``/``or`` over a set of axes
and ``argmax``/``argmin`` along one: declarations, lowering, batching and differentiation rules.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith
from ember.rules.autodiff import (
    NOT_DIFFERENTIABLE,
    aval_of,
    jvp,
    primal,
    primal_emitter,
    same_op_jvp,
    transpose,
)
from ember.rules.base import Attr, OpTypeError, ShapedArray, define
from ember.rules.batching import batching, shift
from ember.rules.lowering import (
    COMBINE,
    SCALAR,
    LowerCall,
    cmpf,
    dims_map,
    filled,
    generic,
    identity_map,
    index_of,
    lowering,
    reduce_init,
    scalar_const,
)
from ember.rules.partition import partition
from ember.rules.type_rules import INTEGRAL, NUMERIC, REAL, aval, check_axes, check_class

REDUCE = {"reduce_sum": NUMERIC, "reduce_prod": NUMERIC, "reduce_max": REAL,
          "reduce_min": REAL, "reduce_and": INTEGRAL, "reduce_or": INTEGRAL}


def _reduce_rule(cls):
    def infer(avals, attrs):
        (x,), axes = avals, attrs["axes"]
        check_class(avals, cls)
        check_axes(axes, x.ndim)
        return [aval([d for i, d in enumerate(x.shape) if i not in axes], x.dtype)]
    return infer


for _name, _cls in REDUCE.items():
    define(_name, 1, _reduce_rule(_cls), attrs=(Attr("axes", "i64s"),), family="reduce",
           doc=f"{_name} over a set of axes (removed from the result).")


def _arg_reduce(avals, attrs):
    (x,), axis = avals, attrs["axis"]
    check_class(avals, REAL)
    check_axes([axis], x.ndim)
    if x.shape[axis] == 0:
        raise OpTypeError(f"cannot take an argmax/argmin over an empty axis {axis} of "
                          f"{x.str_short()}")
    if not dtypes.is_int(attrs["index_dtype"]):
        raise OpTypeError(f"index_dtype must be an integer dtype, got {attrs['index_dtype']}")
    return [aval([d for i, d in enumerate(x.shape) if i != axis], attrs["index_dtype"])]


for _name in ("argmax", "argmin"):
    define(_name, 1, _arg_reduce, attrs=(Attr("axis", "i64"), Attr("index_dtype", "dtype")),
           family="reduce",
           doc=f"Index of the first {_name[3:]}imum along `axis` (NaN counts as the extreme).")


@lowering("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
def _lower_reduce(c: LowerCall):
    kind = c.op.name.split("_", 1)[1]
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    axes = c.attrs["axes"]
    rank = xa.ndim
    out_map = dims_map(rank, [d for d in range(rank) if d not in axes])
    combine = SCALAR[COMBINE[kind]]
    iters = ["reduction" if d in axes else "parallel" for d in range(rank)]
    init = filled(out, reduce_init(kind, xa.dtype))
    return generic([x], [identity_map(rank)], [init], [out_map], iters,
                   lambda a, acc: [combine([acc, a], xa.dtype, xa.dtype, {})])


@lowering("argmax", "argmin")
def _lower_argreduce(c: LowerCall):
    """Two single-result reductions: the extreme value (NaN-propagating), then the first
    index holding it. (One two-result linalg.generic was shorter, but IREE's transpose
    propagation mis-compiles it when the result is transposed, as vmap often does.)"""
    is_max = c.op.name.endswith("argmax")
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    axis, rank = c.attrs["axis"], xa.ndim
    out_map = dims_map(rank, [d for d in range(rank) if d != axis])
    iters = ["reduction" if d == axis else "parallel" for d in range(rank)]
    kind = "max" if is_max else "min"
    combine = SCALAR[kind]
    (best,) = generic([x], [identity_map(rank)],
                      [filled(ShapedArray(out.shape, xa.dtype), reduce_init(kind, xa.dtype))],
                      [out_map], iters, lambda a, acc: [combine([acc, a], xa.dtype, xa.dtype, {})])
    first = np.iinfo(out.dtype).max

    def body(a, m, acc):
        hit = SCALAR["eq"]([a, m], xa.dtype, dtypes.bool_, {})
        if dtypes.is_float(xa.dtype):   # the max/min is NaN when any element is: find it
            hit = arith.OrIOp(hit, arith.AndIOp(cmpf("uno", a, a),
                                                cmpf("uno", m, m)).result).result
        i = index_of(axis, out.dtype)
        cand = arith.SelectOp(hit, i, scalar_const(first, out.dtype)).result
        low = arith.MinUIOp if dtypes.is_unsigned(out.dtype) else arith.MinSIOp
        return [low(acc, cand).result]

    return generic([x, best], [identity_map(rank), out_map], [filled(out, first)], [out_map],
                   iters, body)


@batching("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
def _batch_reduce(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    axes = shift(attrs["axes"], b)
    out_b = b - sum(1 for a in axes if a < b)
    return [(ctx.emit(op.name, [x], axes=axes)[0], out_b)]


@batching("argmax", "argmin")
def _batch_arg_reduce(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    (axis,) = shift((attrs["axis"],), b)
    return [(ctx.emit(op.name, [x], axis=axis, index_dtype=attrs["index_dtype"])[0],
             b - (axis < b))]


@jvp("reduce_max", "reduce_min")
def _jvp_reduce_chooser(ad, op, x, out, t, attrs):
    """The tangent of the maximal elements, averaged over ties (as JAX)."""
    operand, axes = x[0], attrs["axes"]
    shape = aval_of(operand).shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    back = primal(ad, "broadcast_in_dim", out[0], shape=shape, broadcast_dimensions=kept)
    where = primal(ad, "convert", primal(ad, "eq", operand, back), new_dtype=aval_of(operand).dtype)
    counts = primal(ad, "reduce_sum", where, axes=axes)
    picked = ad.linear("reduce_sum", [ad.linear("mul", [t[0], where])], axes=axes)
    return [ad.linear("div", [picked, counts])]


@transpose("reduce_sum")
def _transpose_reduce_sum(tc, op, cts, lin, attrs):
    shape = aval_of(op.operands[0]).shape
    kept = tuple(d for d in range(len(shape)) if d not in attrs["axes"])
    return [tc.emit("broadcast_in_dim", [cts[0]], shape=tuple(shape),
                    broadcast_dimensions=kept)]


@jvp("reduce_prod")
def _jvp_reduce_prod(ad, op, x, out, t, attrs):
    """JAX's ``_reduce_prod_jvp_rule``: the JVP of a tree of pairwise products over the
    reduced elements (exact with zeros, no division)."""
    x0, axes = x[0], tuple(attrs["axes"])
    shape = tuple(aval_of(x0).shape)
    rest = [d for d in range(len(shape)) if d not in axes]
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return [None]
    perm = axes + tuple(rest)
    flat = (n,) + tuple(shape[d] for d in rest)

    def arrange(v, em):
        if perm != tuple(range(len(shape))):
            v = em("transpose", [v], permutation=perm)
        return em("reshape", [v], new_sizes=flat) if tuple(aval_of(v).shape) != flat else v

    p = arrange(x0, primal_emitter(ad))
    tt = arrange(t[0], lambda name, ops, **a: ad.linear(name, list(ops), **a))
    while n > 1:
        n1 = (n + 1) // 2
        halves = []
        for v, lin in ((p, False), (tt, True)):
            emit_ = (lambda name, ops, **a: ad.linear(name, list(ops), **a)) if lin \
                else primal_emitter(ad)
            va = aval_of(v)
            lo = emit_("slice", [v], start_indices=(0,) * va.ndim,
                       limit_indices=(n1,) + tuple(va.shape[1:]), strides=(1,) * va.ndim)
            hi = emit_("slice", [v], start_indices=(n1,) + (0,) * (va.ndim - 1),
                       limit_indices=tuple(va.shape), strides=(1,) * va.ndim)
            if n - n1 != n1:
                fill = ad.primal("constant", [], value=np.asarray(0 if lin else 1, va.dtype))
                hi = emit_("pad", [hi, fill], low=(0,) * va.ndim,
                           high=(1,) + (0,) * (va.ndim - 1), interior=(0,) * va.ndim)
            halves.append((lo, hi))
        (p1, p2), (t1, t2) = halves
        tt = ad.linear("add", [ad.linear("mul", [t1, p2]), ad.linear("mul", [p1, t2])])
        p = primal(ad, "mul", p1, p2)
        n = n1
    return [ad.linear("reshape", [tt], new_sizes=tuple(shape[d] for d in rest))]


jvp("reduce_sum")(same_op_jvp)
NOT_DIFFERENTIABLE.update(("ember.argmax", "ember.argmin", "ember.reduce_and", "ember.reduce_or"))


# Partitioning (jit with shardings, ember/rules/partition.py): a reduction over the split
# dimension reduces each device's block, then combines the blocks across the devices.

_ACROSS_DEVICES = {"reduce_sum": "psum", "reduce_max": "pmax", "reduce_min": "pmin"}


@partition("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
def _partition_reduce(ctx, op, ins, attrs):
    ((x, split),) = ins
    axes = attrs["axes"]
    if split not in axes:
        return [(ctx.emit(op.name, [x], **attrs)[0], split - sum(a < split for a in axes))]
    across = _ACROSS_DEVICES.get(op.name.split(".")[1])
    if across is None:
        return None     # no collective combines the blocks: gathered
    block = ctx.emit(op.name, [x], **attrs)[0]
    return [(ctx.emit(f"ember.{across}", [block], axis_name=ctx.axis_name)[0], None)]
