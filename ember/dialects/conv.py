"""``ember.conv``: an N-d convolution (cross-correlation) in channels-last layout.

The lhs is ``(N, *spatial, C)``, already padded (and dilated, for a transposed convolution)
by the frontend, the kernel ``(*window, I, O)``; the result is ``(N, *out, O)`` with
``out[i] = (spatial[i] - span[i]) // stride[i] + 1``, ``span = (window - 1) * dilation + 1``.
With ``feature_group_count`` G, the C = G * I features and the O outputs form G groups, group
g reading features ``g*I .. g*I + I - 1`` and writing outputs ``g*O/G ..`` (XLA's order).
"""

from __future__ import annotations

from ember import dtypes
from ember.rules.base import Attr, OpTypeError, define
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
