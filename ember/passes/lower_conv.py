"""Lowering of ``ember.conv`` to linalg.

Without feature groups, 1-3 spatial dimensions become linalg's named convolutions
(``conv_1d_nwc_wcf``, ``conv_2d_nhwc_hwcf``, ``conv_3d_ndhwc_dhwcf``), which IREE's CPU and GPU
code generators know; any other convolution is one ``linalg.generic`` over
``(n, *out, q, *window, c)`` whose lhs index along the features is ``(q floordiv O/G) * I + c``
(the group of output feature q). float16/bfloat16 accumulate in float32, as dot_general.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, linalg, tensor
from ember.core import ShapedArray
from ember.rules.base import aval_of_type
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

__all__: list[str] = []

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
