"""Windowed ops: convolutions and ``reduce_window``, as in ``jax.lax``.

A convolution is one ``ember.conv`` op (channels last; linalg's named convolutions below it)
on the input padded and dilated by ``lax.pad``; batch groups become feature groups.
``reduce_window`` is composed: each window offset is one strided ``lax.slice`` of the padded
input, and the slices are folded with the reduction's computation.

Example:
    >>> x = np.ones((1, 3, 8, 8), np.float32)           # NCHW
    >>> w = np.ones((4, 3, 3, 3), np.float32)           # OIHW
    >>> ember.lax.conv(x, w, (1, 1), "SAME").shape
    (1, 4, 8, 8)
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

from ember import dtypes, tree_util
from ember.errors import TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import bind, current_trace, user_where
from ember.lax import _core as lax

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "padtype_to_pads", "conv_general_dilated", "conv", "conv_with_general_padding",
           "conv_transpose", "conv_general_dilated_patches", "reduce_window"]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch/feature/spatial dimensions of a convolution's operands and result are:
    each spec is ``(batch or out-feature, feature or in-feature, *spatial)`` positions."""
    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def _error(fun: str, msg: str):
    raise TracingError(f"{fun}: {msg}\n  at {user_where()}")


def conv_general_permutations(dimension_numbers):
    """The positions of ``('N', 'C', *spatial)``, ``('O', 'I', *spatial)`` and
    ``('N', 'C', *spatial)`` in the three layout strings; spatial dimensions in the order
    of the kernel's string.

    Example:
        >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
        ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    specs = tuple(dimension_numbers)
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(specs, pairs)):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TracingError(f"conv dimension_numbers[{i}] must contain '{a}' and '{b}' "
                               f"exactly once, got {spec!r}")
        if len(set(spec)) != len(spec):
            raise TracingError(f"conv dimension_numbers[{i}] repeats a character: {spec!r}")
    spatial = [set(s) - set(p) for s, p in zip(specs, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TracingError("conv dimension_numbers must name the same spatial dimensions in "
                           f"all three strings, got {specs}")
    rhs_spec = specs[1]

    def perm(spec, pair):
        rest = sorted((i for i, c in enumerate(spec) if c not in pair),
                      key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *rest)
    return tuple(perm(s, p) for s, p in zip(specs, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None: ``NC...``/``OI...``/``NC...``; three layout strings such
    as ``("NHWC", "HWIO", "NHWC")``; or a ConvDimensionNumbers) as a ConvDimensionNumbers.

    Example:
        >>> conv_dimension_numbers((1, 8, 8, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"))
        ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TracingError(f"conv needs lhs and rhs of one rank, got shapes {tuple(lhs_shape)}"
                           f" and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, list | tuple) and len(dimension_numbers) == 3:
        if all(isinstance(s, str) for s in dimension_numbers):
            for s in dimension_numbers:
                if len(s) != len(lhs_shape):
                    raise TracingError(f"conv dimension_numbers {tuple(dimension_numbers)} "
                                       f"do not match operands of rank {len(lhs_shape)}")
            return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
        if all(isinstance(s, list | tuple) for s in dimension_numbers):
            return ConvDimensionNumbers(*(tuple(s) for s in dimension_numbers))
    raise TracingError("conv dimension_numbers must be None, three layout strings such as "
                       f"('NHWC', 'HWIO', 'NHWC') or a ConvDimensionNumbers, got "
                       f"{dimension_numbers!r}")


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list[tuple[int, int]]:
    """``'VALID'``, ``'SAME'`` or ``'SAME_LOWER'`` as ``(low, high)`` pads per dimension
    (SAME: the output is ``ceil(in / stride)``; an odd total goes high, SAME_LOWER: low).

    Example:
        >>> padtype_to_pads((8,), (3,), (2,), "SAME")
        [(0, 1)]
    """
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise TracingError(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
                           f"(low, high) pairs, got {padding!r}")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if mode == "SAME" else (big, small))
    return pads


def _dilate(k: int, d: int) -> int:
    return 0 if k == 0 else 1 + d * (k - 1)


def _pairs(fun, padding, nd):
    try:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    except (TypeError, ValueError):
        pads = None
    if pads is None or len(pads) != nd:
        _error(fun, f"padding must be a string or {nd} (low, high) pairs, got {padding!r}")
    return pads


def _windows(x, fill, window, strides, pads, base_dilation, window_dilation):
    """The strided slices of ``x`` (padded with ``fill``, base-dilated) that window offset
    ``(j_1, ..., j_n)`` reads, one per offset in row-major order, and the output's shape."""
    xp = lax.pad(x, fill, [(lo, hi, d - 1) for (lo, hi), d in zip(pads, base_dilation)])
    out = []
    for n, k, s, d in zip(xp.shape, window, strides, window_dilation):
        span = _dilate(k, d)
        out.append((n - span) // s + 1 if n >= span else 0)
    slices = []
    for offset in itertools.product(*(range(k) for k in window)):
        start = [j * d for j, d in zip(offset, window_dilation)]
        limit = [b + (o - 1) * s + 1 if o else b for b, o, s in zip(start, out, strides)]
        slices.append(lax.slice(xp, start, limit, strides))
    return slices, tuple(out)


def _reads_real(shape, offset, out, strides, pads, base_dilation, window_dilation):
    """Where window offset ``offset`` reads an element of the operand (not padding, not a
    hole of the base dilation): a bool array of the output's shape."""
    mask = np.ones(out, bool)
    for i, (n, j, o, s, (lo, _), b, d) in enumerate(zip(shape, offset, out, strides, pads,
                                                        base_dilation, window_dilation)):
        q = np.arange(o) * s + j * d - lo        # position in the dilated operand
        real = (q >= 0) & (q % b == 0) & (q // b < n)
        mask &= real.reshape((-1,) + (1,) * (len(out) - i - 1))
    return mask


def _positive(fun, name, values, nd):
    values = (1,) * nd if values is None else tuple(int(v) for v in values)
    if len(values) != nd or any(v < 1 for v in values):
        _error(fun, f"{name} must be {nd} positive integers, got {values}")
    return values


@eager
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """``lax.conv_general_dilated``: an N-d convolution (cross-correlation, as in XLA) with
    strides, padding (``'SAME'``, ``'VALID'``, ``'SAME_LOWER'`` or (low, high) pairs), input
    (``lhs_dilation``, a transposed convolution) and kernel (``rhs_dilation``, atrous)
    dilation, any layout, and feature or batch groups. ``precision`` is accepted and ignored
    (ember computes in the operands' dtype); ``preferred_element_type`` is the result's
    dtype, the operands are converted to it first.

    Example:
        >>> y = ember.lax.conv_general_dilated(x, w, (1, 1), "SAME",
        ...                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    """
    fun = "conv_general_dilated"
    trace = current_trace()
    lhs, rhs = trace.lift(lhs), trace.lift(rhs)
    if lhs.dtype != rhs.dtype:
        _error(fun, f"lhs and rhs must have one dtype, got {lhs.dtype} and {rhs.dtype}")
    if lhs.ndim < 3 or lhs.dtype == np.bool_:
        _error(fun, f"operands must be numeric, with a batch, a feature and at least one "
                    f"spatial dimension, got {lhs.aval.str_short()}")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nd = lhs.ndim - 2
    # ember.conv's layouts: channels last (N, *spatial, C), the kernel (*window, I, O).
    x = lax.transpose(lhs, (dn.lhs_spec[0], *dn.lhs_spec[2:], dn.lhs_spec[1]))
    w = lax.transpose(rhs, (*dn.rhs_spec[2:], dn.rhs_spec[1], dn.rhs_spec[0]))
    if preferred_element_type is not None:
        x = lax.convert_element_type(x, preferred_element_type)
        w = lax.convert_element_type(w, preferred_element_type)
    n, c, window, i, o = x.shape[0], x.shape[-1], w.shape[:nd], w.shape[-2], w.shape[-1]
    strides = _positive(fun, "window_strides", window_strides, nd)
    lhs_dil = _positive(fun, "lhs_dilation", lhs_dilation, nd)
    rhs_dil = _positive(fun, "rhs_dilation", rhs_dilation, nd)
    fg, bg = int(feature_group_count), int(batch_group_count)
    if fg < 1 or bg < 1 or (fg > 1 and bg > 1):
        _error(fun, f"feature_group_count ({fg}) and batch_group_count ({bg}) must be "
                    "positive, and at most one of them above 1")
    if c % fg or c // fg != i:
        _error(fun, f"the lhs has {c} features, which feature_group_count={fg} must divide "
                    f"into groups of the rhs's {i} input features")
    if o % fg or o % bg or n % bg:
        _error(fun, f"the rhs's {o} output features must be a multiple of the group count "
                    f"(feature_group_count={fg}, batch_group_count={bg}); batch_group_count "
                    f"must divide the batch size {n}")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            _error(fun, "string padding is not supported with lhs_dilation; give (low, high) "
                        "pairs or use conv_transpose")
        pads = padtype_to_pads(x.shape[1:-1], [_dilate(k, d) for k, d in zip(window, rhs_dil)],
                               strides, padding)
    else:
        pads = _pairs(fun, padding, nd)
    # Padding (negative: cropping) and the lhs dilation in one pad; batch groups become
    # feature groups (group g: the g-th block of the batch, and of the output features).
    config = [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, lhs_dil)] + [(0, 0, 0)]
    if any(p != (0, 0, 0) for p in config):
        x = lax.pad(x, lax.convert_element_type(0, x.dtype), config)
    if bg > 1:
        spatial = x.shape[1:-1]
        x = lax.reshape(x, (bg, n // bg, *spatial, c))
        x = lax.transpose(x, (1, *range(2, nd + 2), 0, nd + 2))
        x = lax.reshape(x, (n // bg, *spatial, bg * c))
    y = bind("ember.conv", x, w, window_strides=strides, rhs_dilation=rhs_dil,
             feature_group_count=fg * bg)[0]
    # y is (N, *spatial, O); canonical dimension j goes to dn.out_spec[j].
    where = (0, nd + 1, *range(1, nd + 1))
    perm = [0] * y.ndim
    for j, d in enumerate(dn.out_spec):
        perm[d] = where[j]
    return lax.transpose(y, tuple(perm))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``lax.conv``: conv_general_dilated with NC.../OI... layouts and no dilation.

    Example:
        >>> ember.lax.conv(x, w, (1, 1), "VALID")     # x (N, C, H, W), w (O, C, kh, kw)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``lax.conv_with_general_padding``: conv_general_dilated with NC.../OI... layouts.

    Example:
        >>> ember.lax.conv_with_general_padding(x, w, (1, 1), [(1, 1), (1, 1)], None, (2, 2))
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(k, s, padding):
    """Pads of the lhs-dilated convolution that transposes a forward one (JAX's rule)."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        lo, hi = padding
        low, total = k - lo - 1, 2 * k - lo - hi - 2
    return low, total - low


@eager
def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """``lax.conv_transpose``: the gradient-style "deconvolution", a convolution of the
    stride-dilated input (default layouts NHWC/HWIO/NHWC for rank 4, likewise for 2-5).

    Example:
        >>> ember.lax.conv_transpose(x, w, (2, 2), "SAME")    # x (N, H, W, C)
    """
    nd = len(np.shape(lhs)) - 2
    if dimension_numbers is None:
        spatial = "HWD"[:nd]
        if not 0 <= nd <= 3:
            raise TracingError(f"conv_transpose has no default layout for rank {nd + 2}; "
                               "give dimension_numbers")
        dimension_numbers = (f"N{spatial}C", f"{spatial}IO", f"N{spatial}C")
    dn = conv_dimension_numbers(np.shape(lhs), np.shape(rhs), dimension_numbers)
    window = [np.shape(rhs)[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * nd if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        each = [padding] * nd if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = [_transpose_pads(_dilate(k, d), s, p)
                for k, d, s, p in zip(window, rhs_dilation, strides, each)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(rhs.ndim))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = i, o        # the kernel's in and out features swapped
        rhs = lax.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * nd, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


@eager
def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """``lax.conv_general_dilated_patches``: the image patches a convolution with a kernel of
    spatial shape ``filter_shape`` reads, flattened into the feature dimension as
    ``(C, *filter_shape)``.

    Example:
        >>> ember.lax.conv_general_dilated_patches(x, (3, 3), (1, 1), "SAME").shape
        (1, 27, 8, 8)                                    # x (1, 3, 8, 8)
    """
    x = current_trace().lift(lhs)
    filter_shape = tuple(filter_shape)
    dn = conv_dimension_numbers(x.shape, (1, 1) + filter_shape, dimension_numbers)
    c, k = x.shape[dn.lhs_spec[1]], math.prod(filter_shape)
    # A one-hot kernel per (feature, offset), one feature group per input feature (JAX's).
    eye = np.eye(k, dtype=np.dtype(x.dtype)).reshape(k, 1, *filter_shape)
    kernel = np.moveaxis(np.tile(eye, (c, 1) + (1,) * len(filter_shape)), (0, 1),
                         (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=c,
                                preferred_element_type=preferred_element_type)


# The computations reduce_window knows as a sum (its halves then accumulate in float32); the
# layers above add theirs (ember.numpy registers its ``add``).
SUM_COMPUTATIONS = {lax.add, operator.add}


def _is_add(computation) -> bool:
    return computation in SUM_COMPUTATIONS


@eager
def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """``lax.reduce_window``: ``computation`` folded over each window of ``operand`` (a pytree
    of arrays with ``init_value`` a matching pytree of scalars), starting from
    ``init_value``; padding is filled with ``init_value``. ``computation`` takes and returns
    values like ``init_value`` and must be elementwise (built from lax/numpy ops), as XLA's.

    Example:
        >>> ember.lax.reduce_window(x, -np.inf, ember.lax.max, (1, 1, 2, 2), (1, 1, 2, 2))
    """
    fun = "reduce_window"
    trace = current_trace()
    xs, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        _error(fun, "operand and init_value must have the same structure")
    xs = [trace.lift(x) for x in xs]
    inits = [lax.convert_element_type(trace.lift(v), x.dtype) for v, x in zip(inits, xs)]
    half = xs[0].dtype
    if len(xs) == 1 and dtypes.is_float(half) and half.itemsize < 4 and _is_add(computation):
        # sums of halves accumulate in float32, as ember's other sums (in bfloat16 a window
        # of 4096 0.1s summed to 32)
        wide = reduce_window(lax.convert_element_type(xs[0], np.float32),
                             lax.convert_element_type(inits[0], np.float32), lax.add,
                             window_dimensions, window_strides, padding, base_dilation,
                             window_dilation)
        return tree_util.tree_unflatten(tree, [lax.convert_element_type(wide, half)])
    nd = xs[0].ndim
    if any(x.shape != xs[0].shape for x in xs) or any(v.ndim for v in inits):
        _error(fun, "the operands must have one shape and each init_value must be a scalar")
    window = tuple(int(k) for k in window_dimensions)
    if len(window) != nd:
        _error(fun, f"window_dimensions {window} must have one entry per operand dimension "
                    f"({nd})")
    strides = _positive(fun, "window_strides", window_strides, nd)
    base = _positive(fun, "base_dilation", base_dilation, nd)
    wdil = _positive(fun, "window_dilation", window_dilation, nd)
    if isinstance(padding, str):
        dilated = [_dilate(n, b) for n, b in zip(xs[0].shape, base)]
        pads = padtype_to_pads(dilated, [_dilate(k, d) for k, d in zip(window, wdil)],
                               strides, padding)
    else:
        pads = _pairs(fun, padding, nd)
    per_operand = [_windows(x, v, window, strides, pads, base, wdil)
                   for x, v in zip(xs, inits)]
    out = per_operand[0][1]
    # As XLA: padding and the holes of a base dilation are not part of a window, and the
    # init value enters each window once. A static mask per window offset says where it
    # reads a real element.
    acc = [lax.broadcast_in_dim(v, out, ()) for v in inits]
    offsets = itertools.product(*(range(k) for k in window))
    for j, offset in enumerate(offsets):
        mask = _reads_real(xs[0].shape, offset, out, strides, pads, base, wdil)
        step = [slices[j] for slices, _ in per_operand]
        new = tree_util.tree_leaves(computation(tree_util.tree_unflatten(tree, acc),
                                                tree_util.tree_unflatten(tree, step)))
        if any(a.shape != out for a in new):
            _error(fun, "computation must be elementwise: it returned shapes "
                        f"{[a.shape for a in new]} for windows of shape {out}")
        new = [lax.convert_element_type(a, x.dtype) for a, x in zip(new, xs)]
        if not mask.all():
            keep = trace.lift(mask)
            new = [lax.select(keep, a, b) for a, b in zip(new, acc)]
        acc = new
    return tree_util.tree_unflatten(tree, acc)

