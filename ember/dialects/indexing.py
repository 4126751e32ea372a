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
"""

from __future__ import annotations

from ember import dtypes
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.type_rules import aval, check_axes, fmt

__all__: list[str] = []

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
