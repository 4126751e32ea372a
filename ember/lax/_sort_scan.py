"""lax functions of the ops in ember/dialects/sort_scan.py: sorts and cumulative scans."""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, bind, current_trace
from ember.lax._core import convert_element_type

__all__ = ["sort", "sort_key_val", "cumsum", "cumprod", "cummax", "cummin"]


@eager
def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort ``operand`` (an array, or a sequence of arrays of one shape) along ``dimension``.

    The first ``num_keys`` operands are the keys, compared lexicographically; the others are
    permuted along. Ascending, stable (``is_stable`` is accepted for JAX compatibility), NaN
    after every number, -0.0 equal to 0.0. A sequence in gives a tuple out.

    Example:
        >>> keys, perm = ember.lax.sort((x, ember.lax.iota(np.int32, 4)), num_keys=1)
    """
    single = not isinstance(operand, list | tuple)
    lift = current_trace().lift
    xs = [lift(operand)] if single else [lift(x) for x in operand]
    if not xs:
        raise ValueError("sort needs at least one operand")
    ndim = xs[0].ndim
    dim = dimension + ndim if dimension < 0 and ndim else dimension
    # A complex value operand travels as its two parts (the sort moves words of at most 64
    # bits); complex keys have no order, which the op's rule reports.
    parts = [i >= num_keys and dtypes.is_complex(x.dtype) for i, x in enumerate(xs)]
    flat = []
    for x, split in zip(xs, parts):
        flat += [bind("ember.real", x)[0], bind("ember.imag", x)[0]] if split else [x]
    sorted_ = iter(bind("ember.sort", *flat, dimension=dim, num_keys=num_keys))
    outs = [bind("ember.complex", next(sorted_), next(sorted_))[0] if split
            else next(sorted_) for split in parts]
    outs = [o if not x.weak_type else _weak(o) for o, x in zip(outs, xs)]
    return outs[0] if single else tuple(outs)


def _weak(x):
    return Tracer(x._trace, x.value, x.aval._replace(weak_type=True), x.origin)


def sort_key_val(keys, values, dimension: int = -1):
    """Sort ``keys`` along ``dimension`` and permute ``values`` with them."""
    return sort((keys, values), dimension=dimension, num_keys=1)


def _cumulative(name):
    def f(operand, axis: int = 0, reverse: bool = False):
        x = current_trace().lift(operand)
        ax = axis + x.ndim if axis < 0 else axis
        # Sums and products of halves accumulate in float32, as XLA's (in bfloat16 a running
        # sum of 0.1 stalls at 32), rounded once.
        half = name in ("cumsum", "cumprod") and dtypes.is_float(x.dtype) and \
            x.dtype.itemsize < 4
        if half:
            x32 = convert_element_type(x, np.float32)
            out = bind(f"ember.{name}", x32, axis=ax, reverse=bool(reverse))[0]
            return convert_element_type(out, x.dtype, x.weak_type)
        return bind(f"ember.{name}", x, axis=ax, reverse=bool(reverse),
                    _weak=x.weak_type)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Inclusive cumulative ``{name[3:]}`` of ``operand`` along ``axis`` (from the "
                 "end when ``reverse``); the ``ember.{name}`` op.".replace("{name}", name))
    return eager(f)


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")
cummax = _cumulative("cummax")
cummin = _cumulative("cummin")
