"""``ember.conv``: an N-d convolution (cross-correlation) in channels-last layout.

The lhs is ``(N, *spatial, C)``, already padded (and dilated, for a transposed convolution)
by the frontend, the kernel ``(*window, I, O)``; the result is ``(N, *out, O)`` with
``out[i] = (spatial[i] - span[i]) // stride[i] + 1``, ``span = (window - 1) * dilation + 1``.
With ``feature_group_count`` G, the C = G * I features and the O outputs form G groups, group
g reading features ``g*I .. g*I + I - 1`` and writing outputs ``g*O/G ..`` (XLA's order).

Lowering: without feature groups, 1-3 spatial dimensions become linalg's named convolutions
(``conv_1d_nwc_wcf``, ``conv_2d_nhwc_hwcf``, ``conv_3d_ndhwc_dhwcf``), which IREE's CPU and GPU
code generators know; any other convolution is one ``linalg.generic`` over
``(n, *out, q, *window, c)`` whose lhs index along the features is ``(q floordiv O/G) * I + c``
(the group of output feature q). float16/bfloat16 accumulate in float32, as dot_general.

Batching: a shared kernel folds the batch into N; per-example kernels become feature groups.
Differentiation: linear in each operand, transposed as JAX transposes
``conv_general_dilated``.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, linalg, tensor
from ember.core import ShapedArray
from ember.rules.autodiff import add_tangents, aval_of, jvp, transpose
from ember.rules.base import Attr, OpTypeError, aval_of_type, define
from ember.rules.batching import batching
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
    lowering,
    reassociation,
    ttype,
)
from ember.rules.type_rules import aval, fmt

__all__: list[str] = ["conv_output_shape"]


def conv_output_shape(lhs_shape, rhs_shape, strides, dilation) -> tuple[int, ...]:
    """The result shape of ``ember.conv`` (0 where the window does not fit)."""
    nd = len(lhs_shape) - 2
    out = [lhs_shape[0]]
    for n, k, s, d in zip(lhs_shape[1:1 + nd], rhs_shape[:nd], strides, dilation):
        span = (k - 1) * d + 1 if k else 0
        out.append((n - span) // s + 1 if n >= span else 0)
    return (*out, rhs_shape[-1])


def _conv(avals, attrs):
    lhs, rhs = avals
    if lhs.dtype != rhs.dtype or dtypes.is_bool(lhs.dtype):
        raise OpTypeError(f"operands must share a numeric dtype, got {fmt(avals)}")
    nd = lhs.ndim - 2
    if nd < 1 or rhs.ndim != lhs.ndim:
        raise OpTypeError(f"needs lhs (N, *spatial, C) and kernel (*window, I, O) of one rank "
                          f">= 3, got {fmt(avals)}")
    strides, dilation, g = attrs["window_strides"], attrs["rhs_dilation"], \
        attrs["feature_group_count"]
    if len(strides) != nd or len(dilation) != nd or min(strides + dilation) < 1:
        raise OpTypeError(f"window_strides {strides} and rhs_dilation {dilation} must be "
                          f"{nd} positive integers")
    c, i, o = lhs.shape[-1], rhs.shape[-2], rhs.shape[-1]
    if g < 1 or c != g * i or o % g:
        raise OpTypeError(f"feature_group_count={g}: the lhs's {c} features must be "
                          f"{g} groups of the kernel's {i}, and its {o} outputs a multiple "
                          f"of {g}; got {fmt(avals)}")
    return [aval(conv_output_shape(lhs.shape, rhs.shape, strides, dilation), lhs.dtype)]


define("conv", 2, _conv,
       attrs=(Attr("window_strides", "i64s"), Attr("rhs_dilation", "i64s"),
              Attr("feature_group_count", "i64", 1)),
       family="contraction",
       doc="N-d convolution of a padded channels-last lhs (N, *spatial, C) with a kernel "
           "(*window, I, O): strides, kernel dilation and feature groups, as XLA's.")


# --- lowering -----------------------------------------------------------------------------

_NAMED = {1: linalg.conv_1d_nwc_wcf, 2: linalg.conv_2d_nhwc_hwcf, 3: linalg.conv_3d_ndhwc_dhwcf}


@lowering("conv")
def _lower_conv(c: LowerCall):
    (lhs, rhs), (la, ra), out = c.operands, c.in_avals, c.out_avals[0]
    strides, dilation = c.attrs["window_strides"], c.attrs["rhs_dilation"]
    groups = c.attrs["feature_group_count"]
    nd, dt = la.ndim - 2, la.dtype
    acc_dt = np.dtype("float32") if dtypes.is_float(dt) and dt.itemsize < 4 else dt
    if out.size == 0:
        return [empty(out)]
    if la.shape[-1] == 0 or any(k == 0 for k in ra.shape[:nd]):     # an empty sum
        return [filled(out, 0)]
    init = filled(ShapedArray(out.shape, acc_dt), 0)
    if groups == 1 and nd in _NAMED:
        res = _NAMED[nd](lhs, rhs, outs=[init], strides=list(strides),
                         dilations=list(dilation))
    else:
        res = _generic_conv(lhs, rhs, init, la, ra, out, strides, dilation, groups, dt, acc_dt)
    if acc_dt == dt:
        return [res]
    rank = out.ndim
    return generic([res], [identity_map(rank)], [empty(out)], [identity_map(rank)],
                   ["parallel"] * rank, lambda a, _o: [convert_scalar(a, acc_dt, dt)])


def _generic_conv(lhs, rhs, init, la, ra, out, strides, dilation, groups, dt, acc_dt):
    nd = la.ndim - 2
    per_group_in, per_group_out = ra.shape[-2], out.shape[-1] // groups
    # Loop dims: n, out_1..out_nd, g (group), m (output feature in it), k_1..k_nd, c (input
    # feature in the group). The output features are split into (g, m) by reshapes rather
    # than read as q floordiv (O/G): IREE's CPU tiling refused that map ("tile size 2 ...
    # must divide or be divisible by the step 3") for some channel multipliers.
    n_dims = 1 + nd + 2 + nd + 1
    d = [ir.AffineDimExpr.get(i) for i in range(n_dims)]
    o, g, k, f = d[1:1 + nd], d[1 + nd], d[3 + nd:3 + 2 * nd], d[-1]

    def const(v):
        return ir.AffineConstantExpr.get(v)
    spatial = [oi * const(s) + ki * const(dl) for oi, ki, s, dl in zip(o, k, strides, dilation)]
    feature = g * const(per_group_in) + f
    lhs_map = ir.AffineMap.get(n_dims, 0, [d[0], *spatial, feature])
    rhs_map = dims_map(n_dims, [*range(3 + nd, 3 + 2 * nd), n_dims - 1, 1 + nd, 2 + nd])
    out_map = dims_map(n_dims, range(3 + nd))
    iters = ["parallel"] * (3 + nd) + ["reduction"] * (nd + 1)

    # The kernel and the output have rank nd + 2; their last dim is the one (un)split.
    last_split = reassociation([[i] for i in range(nd + 1)] + [[nd + 1, nd + 2]])

    def split(v, shape):        # (..., O) -> (..., G, O / G)
        full = ShapedArray((*shape[:-1], groups, per_group_out), aval_of_type(v.type).dtype)
        return tensor.ExpandShapeOp(ttype(full), v, last_split, [], list(full.shape)).result

    def body(a, b, acc):
        if acc_dt != dt:
            a, b = (arith.ExtFOp(elem(acc_dt), v).result for v in (a, b))
        return [SCALAR["add"]([acc, SCALAR["mul"]([a, b], acc_dt, acc_dt, {})], acc_dt,
                              acc_dt, {})]
    (res,) = generic([lhs, split(rhs, ra.shape)], [lhs_map, rhs_map],
                     [split(init, out.shape)], [out_map], iters, body)
    return tensor.CollapseShapeOp(ttype(ShapedArray(out.shape, acc_dt)), res, last_split).result


# --- batching -----------------------------------------------------------------------------

@batching("conv")
def _batch_conv(ctx, op, inputs, attrs):
    (lhs, lb), (rhs, rb) = inputs
    nd = aval_of_type(rhs.type).ndim - 2 - (rb is not None)
    if rb is None:
        # A shared kernel: the batch joins the lhs's leading (N) dimension.
        x = ctx.move(lhs, lb, 0)
        b, n, *rest = aval_of_type(x.type).shape
        x = ctx.emit("ember.reshape", [x], new_sizes=(b * n, *rest))[0]
        y = ctx.emit(op.name, [x, rhs], **attrs)[0]
        _, *out = aval_of_type(y.type).shape
        return [(ctx.emit("ember.reshape", [y], new_sizes=(b, n, *out))[0], 0)]
    # Per-example kernels: the batch becomes feature groups (group b*G + g), the batch of
    # each operand just before its feature dimension.
    x = ctx.materialize(lhs, lb, nd + 1)
    w = ctx.materialize(rhs, rb, nd + 1)
    xs, ws = aval_of_type(x.type).shape, aval_of_type(w.type).shape
    x = ctx.emit("ember.reshape", [x], new_sizes=(*xs[:-2], xs[-2] * xs[-1]))[0]
    w = ctx.emit("ember.reshape", [w], new_sizes=(*ws[:-2], ws[-2] * ws[-1]))[0]
    y = ctx.emit(op.name, [x, w], **dict(
        attrs, feature_group_count=ctx.size * attrs["feature_group_count"]))[0]
    ys = aval_of_type(y.type).shape
    y = ctx.emit("ember.reshape", [y], new_sizes=(*ys[:-1], ctx.size, ws[-1]))[0]
    return [(y, nd + 1)]


# --- differentiation ----------------------------------------------------------------------

@jvp("conv")
def _jvp_conv(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("conv", [t[0], x[1]], **attrs)
    b = None if t[1] is None else ad.linear("conv", [x[0], t[1]], **attrs)
    return [add_tangents(ad, a, b)]


def _conv_transpose_lhs(tc, ct, lhs_aval, rhs, attrs):
    """JAX's ``_conv_general_dilated_transpose_lhs`` for ember's conv: the cotangent dilated
    by the strides and padded by the kernel's span, convolved with the kernel flipped and
    its I/O swapped (per feature group)."""
    strides, dil, g = attrs["window_strides"], attrs["rhs_dilation"], \
        attrs["feature_group_count"]
    ra, ca = aval_of(rhs), aval_of(ct)
    nd = len(strides)
    window, i_, o = ra.shape[:nd], ra.shape[-2], ra.shape[-1]
    lo, hi = [0], [0]
    for d in range(nd):
        span = (window[d] - 1) * dil[d] + 1
        reach = (ca.shape[1 + d] - 1) * strides[d] + span
        lo.append(span - 1)
        hi.append(span - 1 + lhs_aval.shape[1 + d] - reach)
    zero = tc.zeros(ca._replace(shape=()))
    padded = tc.emit("pad", [ct, zero], low=tuple(lo) + (0,), high=tuple(hi) + (0,),
                     interior=(0,) + tuple(s - 1 for s in strides) + (0,))
    k = tc.emit("rev", [rhs], dimensions=tuple(range(nd)))
    k = tc.emit("reshape", [k], new_sizes=tuple(window) + (i_, g, o // g))
    k = tc.emit("transpose", [k], permutation=tuple(range(nd)) + (nd + 2, nd + 1, nd))
    k = tc.emit("reshape", [k], new_sizes=tuple(window) + (o // g, g * i_))
    return tc.emit("conv", [padded, k], window_strides=(1,) * nd, rhs_dilation=tuple(dil),
                   feature_group_count=g)


def _conv_transpose_rhs(tc, ct, lhs, rhs_aval, attrs):
    """JAX's ``_conv_general_dilated_transpose_rhs`` for ember's conv: the lhs, its features
    as the batch, correlated with the cotangent as the kernel (strides and dilation swap
    roles; feature groups stay groups of the batch), cut to the window."""
    strides, dil, g = attrs["window_strides"], attrs["rhs_dilation"], \
        attrs["feature_group_count"]
    la = aval_of(lhs)
    nd = len(strides)
    n, spatial, c = la.shape[0], la.shape[1:1 + nd], la.shape[-1]
    window, i_ = rhs_aval.shape[:nd], rhs_aval.shape[-2]
    x = tc.emit("reshape", [lhs], new_sizes=(n,) + tuple(spatial) + (g, i_))
    x = tc.emit("transpose", [x], permutation=(nd + 2,) + tuple(range(1, nd + 1)) +
                (nd + 1, 0))
    x = tc.emit("reshape", [x], new_sizes=(i_,) + tuple(spatial) + (g * n,))
    k = tc.emit("transpose", [ct], permutation=tuple(range(1, nd + 1)) + (0, nd + 1))
    r = tc.emit("conv", [x, k], window_strides=tuple(dil), rhs_dilation=tuple(strides),
                feature_group_count=g)       # (I, *out2, O), out2 >= window
    ra = aval_of(r)
    if tuple(ra.shape[1:1 + nd]) != tuple(window):
        r = tc.emit("slice", [r], start_indices=(0,) * ra.ndim,
                    limit_indices=(ra.shape[0],) + tuple(window) + (ra.shape[-1],),
                    strides=(1,) * ra.ndim)
    del c
    return tc.emit("transpose", [r], permutation=tuple(range(1, nd + 1)) + (0, nd + 1))


@transpose("conv")
def _t_conv(tc, op, cts, lin, attrs):
    lhs, rhs = op.operands
    if lin[0] and lin[1]:
        raise AssertionError("a convolution of two tangents is not linear")
    if lin[0]:
        return [_conv_transpose_lhs(tc, cts[0], aval_of(lhs), rhs, attrs), None]
    return [None, _conv_transpose_rhs(tc, cts[0], lhs, aval_of(rhs), attrs)]
