"""Batching rules of the collectives (``ember.psum``, ``pmax``, ``pmin``, ``all_gather``,
``axis_index``).

A collective naming the axis being batched (``ctx.axis_name``) is resolved: a reduction over
the batch dimension (an unbatched operand is the same in every example: ``psum`` multiplies
it by the axis size, ``pmax``/``pmin`` keep it), a gather that moves the batch dimension to
``axis``, an iota for the index; its result is the same for every example, so unbatched. A
collective naming another (outer) axis stays, on the batched operand, for the vmap of that
axis to resolve.
"""

from __future__ import annotations

import numpy as np

from ember.dialects import aval_of_type
from ember.dialects.collectives import AXIS_REDUCTIONS
from ember.rules.batching import batching


@batching(*AXIS_REDUCTIONS)
def _axis_reduction(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    if attrs["axis_name"] != ctx.axis_name:
        return [(ctx.emit(op.name, [x], **attrs)[0], b)]
    short = op.name.split(".")[1]
    if b is not None:
        return [(ctx.emit(f"ember.{AXIS_REDUCTIONS[short][1]}", [x], axes=(b,))[0], None)]
    if short != "psum":
        return [(x, None)]
    aval = aval_of_type(x.type)
    size = ctx.emit("ember.constant", [], value=np.array(ctx.size, aval.dtype))[0]
    size = ctx.emit("ember.broadcast_in_dim", [size], shape=aval.shape,
                    broadcast_dimensions=())[0]
    return [(ctx.emit("ember.mul", [x, size])[0], None)]


@batching("all_gather")
def _all_gather(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    if attrs["axis_name"] != ctx.axis_name:
        x = ctx.move(x, b, 0)
        return [(ctx.emit(op.name, [x], **dict(attrs, axis=attrs["axis"] + 1))[0], 0)]
    axis = attrs["axis"]
    out = ctx.materialize(x, b, axis)
    if attrs["tiled"]:
        shape = list(aval_of_type(out.type).shape)
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        out = ctx.emit("ember.reshape", [out], new_sizes=tuple(shape))[0]
    return [(out, None)]


@batching("axis_index")
def _axis_index(ctx, op, inputs, attrs):
    # Only called for ctx.axis_name: ember-batch copies one naming another axis unchanged.
    return [(ctx.emit("ember.iota", [], shape=(ctx.size,), dimension=0,
                      dtype=np.dtype(np.int32))[0], 0)]
