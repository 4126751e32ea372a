"""lax functions of the ops in ember/dialects/indexing.py: gather, scatter, dynamic slices."""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.errors import IndexingError
from ember.frontend.eager import eager
from ember.frontend.tracing import bind, current_trace, user_where
from ember.lax import _core as lax

__all__ = ["gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
           "dynamic_slice", "dynamic_update_slice", "dynamic_index_in_dim"]


@eager
def gather(operand, indices, axes):
    """``ember.gather``: ``result[b..., r...] = operand`` at ``indices[b..., j]`` along
    ``axes[j]`` and ``r`` along the other dimensions. Out-of-bounds indices are clamped
    into ``[0, size - 1]`` (JAX's ``clip`` mode); negative indices do not wrap here."""
    lift = current_trace().lift
    x = lift(operand)
    return bind("ember.gather", x, lift(indices), axes=tuple(axes), _weak=x.weak_type)[0]


@eager
def scatter(operand, indices, updates, axes, kind: str = "set"):
    """``ember.scatter``: ``operand`` with ``updates[b..., r...]`` combined (``kind``: set,
    add, mul, min, max) into the element ``gather(operand, indices, axes)`` reads. Updates
    at an out-of-bounds (or negative) index are dropped, as in JAX; duplicates all apply."""
    lift = current_trace().lift
    x = lift(operand)
    return bind("ember.scatter", x, lift(indices), lift(updates), axes=tuple(axes),
                kind=kind, _weak=x.weak_type)[0]


def scatter_add(operand, indices, updates, axes):
    """``scatter`` with ``kind="add"``: duplicate indices accumulate."""
    return scatter(operand, indices, updates, axes, "add")


def scatter_mul(operand, indices, updates, axes):
    """``scatter`` with ``kind="mul"``."""
    return scatter(operand, indices, updates, axes, "mul")


def scatter_min(operand, indices, updates, axes):
    """``scatter`` with ``kind="min"``."""
    return scatter(operand, indices, updates, axes, "min")


def scatter_max(operand, indices, updates, axes):
    """``scatter`` with ``kind="max"``."""
    return scatter(operand, indices, updates, axes, "max")


def _starts(starts, shape, allow_negative_indices=True):
    """Start indices as scalar arrays; a negative one counts from the end of its dimension
    where ``allow_negative_indices`` (a bool, or one per dimension) says so, as in JAX, and
    is out of bounds elsewhere (then the op clamps it to 0)."""
    lift = current_trace().lift
    if isinstance(allow_negative_indices, bool | np.bool_):
        allow = [bool(allow_negative_indices)] * len(shape)
    else:
        allow = [bool(a) for a in allow_negative_indices]
        if len(allow) != len(shape):
            raise TypeError(f"allow_negative_indices must be a bool or one bool per dimension "
                            f"({len(shape)}), got {allow_negative_indices!r}")
    out = []
    for s, d, negative in zip(starts, shape, allow):
        known = isinstance(s, int | np.integer) and not isinstance(s, bool)
        if known:
            if s < 0 and not negative:
                raise IndexingError(f"start index {s} is out of bounds for a dimension of size "
                                    f"{d} with allow_negative_indices=False (as in JAX)\n  at "
                                    f"{user_where()}")
            s = int(s) + d if s < 0 else int(s)
        s = lift(s if hasattr(s, "dtype") and not isinstance(s, np.generic)
                 else np.asarray(s, dtype=np.int32))
        if s.shape != ():
            raise TypeError(f"start indices must be scalars, got shape {s.shape}")
        if negative and not known and dtypes.is_int(s.dtype) and \
                not dtypes.is_unsigned(s.dtype):
            if np.iinfo(s.dtype).max < d:     # s + d would wrap (an int8 start, d > 127)
                s = lax.convert_element_type(s, np.int32)
            zero = lax.convert_element_type(0, s.dtype)
            s = lax.select(lax.lt(s, zero), lax.add(s, lax.convert_element_type(d, s.dtype)), s)
        out.append(s)
    return out


@eager
def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """``lax.dynamic_slice``: a static-size slice at dynamic starts, each clamped so that
    the slice fits (``[0, dim - size]``); a negative start counts from the end, as in JAX,
    unless ``allow_negative_indices`` (a bool, or one per dimension) is False: then it is
    out of bounds, clamped to 0."""
    x = current_trace().lift(operand)
    starts = _starts(start_indices, x.shape, allow_negative_indices)
    return bind("ember.dynamic_slice", x, *starts,
                slice_sizes=tuple(int(s) for s in slice_sizes), _weak=x.weak_type)[0]


@eager
def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``lax.dynamic_update_slice``: ``operand`` with ``update`` written at dynamic starts,
    each clamped so that the update fits; negative starts as in :func:`dynamic_slice`."""
    lift = current_trace().lift
    x = lift(operand)
    u = lift(update)
    starts = _starts(start_indices, x.shape, allow_negative_indices)
    return bind("ember.dynamic_update_slice", x, u, *starts, _weak=x.weak_type)[0]


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """``operand``'s slice at dynamic ``index`` along ``axis`` (clamped; a negative index
    counts from the end unless ``allow_negative_indices`` is False)."""
    x = current_trace().lift(operand) if current_trace() else operand
    axis = axis % x.ndim
    starts = [0] * x.ndim
    starts[axis] = index
    sizes = list(x.shape)
    sizes[axis] = 1
    y = dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)
    if keepdims:
        return y
    return lax.reshape(y, tuple(d for i, d in enumerate(y.shape) if i != axis))
