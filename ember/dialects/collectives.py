"""Collectives over a named ``vmap`` axis: ``psum``, ``pmax``, ``pmin``, ``all_gather`` and
``axis_index``, as in JAX's ``vmap(..., axis_name=...)``.

Inside a mapped function they refer to the batch axis of an enclosing ``ember.vmap`` with the
same ``axis_name``; ``ember-batch`` resolves each one when it batches that vmap (a reduction
over the batch dimension, an iota for the index) and leaves those naming an outer axis as they
are, on batched operands.

Batching: a collective naming the axis being batched (``ctx.axis_name``) is resolved: a
reduction over the batch dimension (an unbatched operand is the same in every example:
``psum`` multiplies it by the axis size, ``pmax``/``pmin`` keep it), a gather that moves the
batch dimension to ``axis``, an iota for the index; its result is the same for every example,
so unbatched. A collective naming another (outer) axis stays, on the batched operand, for the
vmap of that axis to resolve. One that reaches ``ember-to-linalg`` names an axis no vmap binds:
its lowering is an error.

Differentiation: ``psum`` and ``all_gather`` are linear (``all_gather`` transposes to JAX's
``psum_scatter``); ``pmax``/``pmin`` as ``reduce_max``; ``axis_index`` has no derivative.
"""

from __future__ import annotations

import numpy as np

from ember._mlir import ir
from ember.errors import PassError
from ember.rules.autodiff import NOT_DIFFERENTIABLE, aval_of, jvp, primal, transpose
from ember.rules.base import Attr, OpTypeError, aval_of_type, define
from ember.rules.batching import batching
from ember.rules.lowering import lowering
from ember.rules.spmd import spmd
from ember.rules.type_rules import aval, check_axes, check_class

__all__: list[str] = ["AXIS_REDUCTIONS"]

# op name: (dtype class, the reduction over a batch dimension)
AXIS_REDUCTIONS = {"psum": ("numeric", "reduce_sum"), "pmax": ("real", "reduce_max"),
                   "pmin": ("real", "reduce_min")}


def _named(attrs):
    if not attrs["axis_name"]:
        raise OpTypeError("axis_name must not be empty")


def _axis_reduction(cls):
    def infer(avals, attrs):
        _named(attrs)
        check_class(avals, cls)
        return [aval(avals[0].shape, avals[0].dtype)]
    return infer


for _name, (_cls, _reduce) in AXIS_REDUCTIONS.items():
    define(_name, 1, _axis_reduction(_cls), attrs=(Attr("axis_name", "str"),),
           family="collective",
           doc=f"The {_reduce[7:]} of the operand over the examples of the named vmap axis "
               "`axis_name` (the same for every example).")


def _all_gather(avals, attrs):
    _named(attrs)
    (a,) = avals
    size, axis = attrs["axis_size"], attrs["axis"]
    if size < 1:
        raise OpTypeError(f"axis_size must be positive, got {size}")
    shape = list(a.shape)
    if attrs["tiled"]:
        check_axes([axis], a.ndim)
        shape[axis] *= size
    else:
        check_axes([axis], a.ndim + 1)
        shape.insert(axis, size)
    return [aval(shape, a.dtype)]


define("all_gather", 1, _all_gather,
       attrs=(Attr("axis_name", "str"), Attr("axis_size", "i64"), Attr("axis", "i64", 0),
              Attr("tiled", "bool", False)),
       family="collective",
       doc="The operands of all examples of the named vmap axis `axis_name` (of `axis_size` "
           "examples), stacked along a new `axis` (or concatenated along it when `tiled`).")


def _axis_index(avals, attrs):
    _named(attrs)
    return [aval((), np.int32)]


define("axis_index", 0, _axis_index, attrs=(Attr("axis_name", "str"),), family="collective",
       doc="The position (int32) of the example along the named vmap axis `axis_name`.")


# --- lowering: a collective no vmap resolved ----------------------------------------------

@lowering(*AXIS_REDUCTIONS, "all_gather", "axis_index")
def _lower_unbound_collective(c):
    name = ir.StringAttr(c.op.attributes["axis_name"]).value
    raise PassError(f"{c.op.location}: error: '{c.op.name}' names the axis {name!r}, which no "
                    "enclosing ember.vmap binds (vmap(..., axis_name=...)); ember-batch "
                    "resolves collectives of the vmaps it batches")


# --- batching -----------------------------------------------------------------------------

@batching(*AXIS_REDUCTIONS)
def _batch_axis_reduction(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    if attrs["axis_name"] != ctx.axis_name:
        return [(ctx.emit(op.name, [x], **attrs)[0], b)]
    short = op.name.split(".")[1]
    if b is not None:
        return [(ctx.emit(f"ember.{AXIS_REDUCTIONS[short][1]}", [x], axes=(b,))[0], None)]
    if short != "psum":
        return [(x, None)]
    xa = aval_of_type(x.type)
    size = ctx.emit("ember.constant", [], value=np.array(ctx.size, xa.dtype))[0]
    size = ctx.emit("ember.broadcast_in_dim", [size], shape=xa.shape,
                    broadcast_dimensions=())[0]
    return [(ctx.emit("ember.mul", [x, size])[0], None)]


@batching("all_gather")
def _batch_all_gather(ctx, op, inputs, attrs):
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
def _batch_axis_index(ctx, op, inputs, attrs):
    # Only called for ctx.axis_name: ember-batch copies one naming another axis unchanged.
    return [(ctx.emit("ember.iota", [], shape=(ctx.size,), dimension=0,
                      dtype=np.dtype(np.int32))[0], 0)]


# --- across devices (ember-spmd): every device's operand moved to where it is combined ------

_COMBINE = {"psum": "add", "pmax": "max", "pmin": "min"}


@spmd(*AXIS_REDUCTIONS)
def _spmd_axis_reduction(ctx, op, per_device, attrs):
    """Combined on the group's first device, then sent back to each of the others."""
    combine = f"ember.{_COMBINE[op.name.split('.')[1]]}"
    out = [None] * ctx.n
    for group in ctx.groups(attrs["axis_name"]):
        total = per_device[group[0]][0]
        for d in group[1:]:
            total = ctx.emit(combine, [total, ctx.transfer(per_device[d][0], group[0])])[0]
        for d in group:
            out[d] = [total if d == group[0] else ctx.transfer(total, d)]
    return out


@spmd("all_gather")
def _spmd_all_gather(ctx, op, per_device, attrs):
    axis = attrs["axis"]
    out = [None] * ctx.n
    for group in ctx.groups(attrs["axis_name"]):
        parts = [per_device[d][0] for d in group]
        if not attrs["tiled"]:
            shape = list(aval_of_type(parts[0].type).shape)
            shape.insert(axis, 1)
            parts = [ctx.emit("ember.reshape", [p], new_sizes=tuple(shape))[0] for p in parts]
        for d in group:
            out[d] = ctx.emit("ember.concatenate", [ctx.transfer(p, d) for p in parts],
                              dimension=axis)
    return out


@spmd("axis_index")
def _spmd_axis_index(ctx, op, per_device, attrs):
    return [ctx.emit("ember.constant", [], value=np.array(
        ctx.index_in_group(attrs["axis_name"], d), np.int32)) for d in range(ctx.n)]


# --- differentiation ----------------------------------------------------------------------

NOT_DIFFERENTIABLE.add("ember.axis_index")


@jvp("psum")
def _jvp_psum(ad, op, x, out, t, attrs):
    return [ad.linear("psum", [t[0]], **attrs)]


@transpose("psum")
def _t_psum(tc, op, cts, lin, attrs):
    # Each example's result is the sum over all examples: an example's operand reaches every
    # example's result, so its cotangent is the sum of theirs (JAX's psum transpose).
    return [tc.emit("psum", [cts[0]], **attrs)]


@jvp("pmax", "pmin")
def _jvp_pmax_pmin(ad, op, x, out, t, attrs):
    """As reduce_max over the examples: the tangent of the extremal examples, averaged over
    ties (JAX has no rule; this is what its reduce_max does)."""
    x0, y = x[0], out[0]
    where = primal(ad, "convert", primal(ad, "eq", x0, y), new_dtype=aval_of(x0).dtype)
    counts = primal(ad, "psum", where, axis_name=attrs["axis_name"])
    picked = ad.linear("psum", [ad.linear("mul", [t[0], where])],
                       axis_name=attrs["axis_name"])
    return [ad.linear("div", [picked, counts])]


@jvp("all_gather")
def _jvp_all_gather(ad, op, x, out, t, attrs):
    return [ad.linear("all_gather", [t[0]], **attrs)]


@transpose("all_gather")
def _t_all_gather(tc, op, cts, lin, attrs):
    """JAX's psum_scatter: sum the cotangents over the examples and keep this example's
    part."""
    a = aval_of(op.operands[0])
    axis, tiled = attrs["axis"], attrs["tiled"]
    total = tc.emit("psum", [cts[0]], axis_name=attrs["axis_name"])
    me = tc.emit("axis_index", [], axis_name=attrs["axis_name"])
    zero = tc.emit("constant", [], value=np.zeros((), np.int32))
    ta = aval_of(total)
    if tiled:
        start = tc.emit("mul", [me, tc.emit("constant", [], value=np.asarray(
            a.shape[axis], np.int32))])
        starts = [start if d == axis else zero for d in range(ta.ndim)]
        return [tc.emit("dynamic_slice", [total, *starts], slice_sizes=tuple(a.shape))]
    starts = [me if d == axis else zero for d in range(ta.ndim)]
    sizes = tuple(1 if d == axis else s for d, s in enumerate(ta.shape))
    part = tc.emit("dynamic_slice", [total, *starts], slice_sizes=sizes)
    return [tc.emit("reshape", [part], new_sizes=tuple(a.shape))]
