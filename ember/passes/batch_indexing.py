"""Batching rules of the indexing ops (``ember/dialects/indexing.py``).

- ``gather``: a batched operand alone keeps its batch dimension as one more kept (non-indexed)
  dimension; batched indices alone keep theirs among the index batch dimensions. When both
  are batched, the vmapped axis becomes one more indexed axis: both go batch-first and an iota
  over the batch is concatenated in front of each index vector, so example ``n`` reads row
  ``n`` of the operand.
- ``scatter``: with unbatched indices the batch dimension of the operand is a kept dimension
  (the updates are moved or broadcast to the matching place); with batched indices, the iota
  formulation of ``gather`` (operand and updates materialized batch-first).
- ``dynamic_slice`` / ``dynamic_update_slice``: unbatched starts stay a dynamic slice with the
  batch dimension added (start 0, full size). Batched starts become a ``gather`` /
  ``scatter`` over the window: the starts are clamped as the op would (``[0, dim - size]``),
  and each index vector is ``(n, start_d + i_d, ...)`` for the dimensions the window does not
  cover whole (the others clamp to 0 and are kept).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.dialects import aval_of_type
from ember.rules.batching import _shift, batching

__all__: list[str] = []

_IDX = np.dtype("int32")


def _aval(v):
    return aval_of_type(v.type)


def _const(ctx, value, dtype, shape=()):
    c = ctx.emit("ember.constant", [], value=np.array(value, dtype=dtype))[0]
    if shape:
        c = ctx.emit("ember.broadcast_in_dim", [c], shape=tuple(shape),
                     broadcast_dimensions=())[0]
    return c


def _iota(ctx, shape, dimension, dtype=_IDX):
    return ctx.emit("ember.iota", [], shape=tuple(shape), dimension=dimension,
                    dtype=np.dtype(dtype))[0]


def _kept_position(nbatch: int, bdim: int, axes) -> int:
    """Where dimension ``bdim`` of a gather operand (not indexed) lands in the result."""
    return nbatch + bdim - sum(1 for a in axes if a < bdim)


def _with_batch_index(ctx, idx):
    """Indices batched at 0, shape (N,) + B + (k,), with the batch position prepended to each
    index vector: (N,) + B + (k + 1,)."""
    a = _aval(idx)
    if np.iinfo(a.dtype).max < ctx.size - 1:     # 8/16-bit indices cannot hold the batch
        idx = ctx.emit("ember.convert", [idx], new_dtype=_IDX)[0]
        a = _aval(idx)
    ones = a.shape[:-1] + (1,)
    return ctx.emit("ember.concatenate", [_iota(ctx, ones, 0, a.dtype), idx],
                    dimension=a.ndim - 1)[0]


@batching("gather")
def _gather(ctx, op, inputs, attrs):
    (x, bx), (idx, bi) = inputs
    axes = tuple(attrs["axes"])
    ia = _aval(idx)
    if bi is None:
        axes2 = _shift(axes, bx)
        out = ctx.emit(op.name, [x, idx], axes=axes2)[0]
        return [(out, _kept_position(ia.ndim - 1, bx, axes2))]
    if bx is None:
        if bi == ia.ndim - 1:                    # behind the index vector: bring it forward
            idx, bi = ctx.move(idx, bi, 0), 0
        return [(ctx.emit(op.name, [x, idx], axes=axes)[0], bi)]
    x, idx = ctx.move(x, bx, 0), ctx.move(idx, bi, 0)
    idx = _with_batch_index(ctx, idx)
    return [(ctx.emit(op.name, [x, idx], axes=(0,) + _shift(axes, 0))[0], 0)]


@batching("scatter")
def _scatter(ctx, op, inputs, attrs):
    (x, bx), (idx, bi), (u, bu) = inputs
    axes, kind = tuple(attrs["axes"]), attrs["kind"]
    if bi is None:
        if bx is None:
            x, bx = ctx.materialize(x, None, 0), 0
        axes2 = _shift(axes, bx)
        u = ctx.materialize(u, bu, _kept_position(_aval(idx).ndim - 1, bx, axes2))
        return [(ctx.emit(op.name, [x, idx, u], axes=axes2, kind=kind)[0], bx)]
    x, u = ctx.materialize(x, bx, 0), ctx.materialize(u, bu, 0)
    idx = _with_batch_index(ctx, ctx.move(idx, bi, 0))
    return [(ctx.emit(op.name, [x, idx, u], axes=(0,) + _shift(axes, 0), kind=kind)[0], 0)]


# --- dynamic slices --------------------------------------------------------------------------

def _clamped_start(ctx, s, b, hi: int):
    """Start ``s`` (scalar, or (N,) when batched) clamped into [0, hi], as int32."""
    dt = _aval(s).dtype
    hi = min(hi, int(np.iinfo(dt).max))
    shape = (ctx.size,) if b is not None else ()
    if b is not None:
        s = ctx.move(s, b, 0)
    if not dtypes.is_unsigned(dt):
        s = ctx.emit("ember.max", [s, _const(ctx, 0, dt, shape)])[0]
    s = ctx.emit("ember.min", [s, _const(ctx, hi, dt, shape)])[0]
    if dt != _IDX:
        s = ctx.emit("ember.convert", [s], new_dtype=_IDX)[0]
    return s


def _window_indices(ctx, starts, dims, window, shape, batch_index=True):
    """Gather/scatter indices of a window of size ``window`` at ``starts`` (clamped), for the
    per-example dimensions ``dims``: shape (N,) + window[dims] + (1 + len(dims),), each index
    vector (n, start_d + i_d for d in dims); without the leading n if not ``batch_index``."""
    grid = (ctx.size,) + tuple(window[d] for d in dims) + (1,)
    comps = [_iota(ctx, grid, 0)] if batch_index else []
    for j, d in enumerate(dims):
        s, b = starts[d]
        s = _clamped_start(ctx, s, b, shape[d] - window[d])
        s = ctx.emit("ember.broadcast_in_dim", [s], shape=grid,
                     broadcast_dimensions=(0,) if b is not None else ())[0]
        comps.append(ctx.emit("ember.add", [s, _iota(ctx, grid, 1 + j)])[0])
    if len(comps) == 1:
        return comps[0]
    return ctx.emit("ember.concatenate", comps, dimension=len(grid) - 1)[0]


def _start_zero(ctx, starts):
    dt = _aval(starts[0][0]).dtype if starts else _IDX
    return _const(ctx, 0, dt)


@batching("dynamic_slice")
def _dynamic_slice(ctx, op, inputs, attrs):
    (x, bx), starts = inputs[0], inputs[1:]
    sizes = list(attrs["slice_sizes"])
    if all(b is None for _, b in starts):
        operands = [s for s, _ in starts]
        operands.insert(bx, _start_zero(ctx, starts))
        sizes.insert(bx, ctx.size)
        return [(ctx.emit(op.name, [x] + operands, slice_sizes=tuple(sizes))[0], bx)]
    if bx is None:
        # Only the starts are batched: index the shared operand, batch first in the result.
        shape = _aval(x).shape
        dims = [d for d in range(len(shape)) if sizes[d] < shape[d]]
        if not dims:                              # the window is the whole operand
            return [(x, None)]
        idx = _window_indices(ctx, starts, dims, sizes, shape, batch_index=False)
        out = ctx.emit("ember.gather", [x, idx], axes=tuple(dims))[0]
    else:
        x = ctx.move(x, bx, 0)
        shape = _aval(x).shape[1:]
        dims = [d for d in range(len(shape)) if sizes[d] < shape[d]]
        if not dims:                              # the window is the whole operand
            return [(x, 0)]
        idx = _window_indices(ctx, starts, dims, sizes, shape)
        out = ctx.emit("ember.gather", [x, idx], axes=(0,) + tuple(d + 1 for d in dims))[0]
    # The result holds (batch, windowed dims, kept dims): put the dimensions back in order.
    order = dims + [d for d in range(len(shape)) if d not in dims]
    perm = (0,) + tuple(1 + order.index(d) for d in range(len(shape)))
    if perm != tuple(range(len(perm))):
        out = ctx.emit("ember.transpose", [out], permutation=perm)[0]
    return [(out, 0)]


@batching("dynamic_update_slice")
def _dynamic_update_slice(ctx, op, inputs, attrs):
    (x, bx), (u, bu), starts = inputs[0], inputs[1], inputs[2:]
    if all(b is None for _, b in starts):
        b = bx if bx is not None else bu
        x, u = ctx.materialize(x, bx, b), ctx.materialize(u, bu, b)
        operands = [s for s, _ in starts]
        operands.insert(b, _start_zero(ctx, starts))
        return [(ctx.emit(op.name, [x, u] + operands)[0], b)]
    x, u = ctx.materialize(x, bx, 0), ctx.materialize(u, bu, 0)
    shape, window = _aval(x).shape[1:], _aval(u).shape[1:]
    dims = [d for d in range(len(shape)) if window[d] < shape[d]]
    if not dims:                                  # the update covers the whole operand
        return [(u, 0)]
    idx = _window_indices(ctx, starts, dims, window, shape)
    # Updates as (batch, windowed dims, kept dims), the layout scatter expects.
    order = dims + [d for d in range(len(shape)) if d not in dims]
    perm = (0,) + tuple(1 + d for d in order)
    if perm != tuple(range(len(perm))):
        u = ctx.emit("ember.transpose", [u], permutation=perm)[0]
    out = ctx.emit("ember.scatter", [x, idx, u], axes=(0,) + tuple(d + 1 for d in dims),
                   kind="set")[0]
    return [(out, 0)]
