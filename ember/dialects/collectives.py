"""Collectives over a named ``vmap`` axis: ``psum``, ``pmax``, ``pmin``, ``all_gather`` and
``axis_index``, as in JAX's ``vmap(..., axis_name=...)``.

Inside a mapped function they refer to the batch axis of an enclosing ``ember.vmap`` with the
same ``axis_name``; ``ember-batch`` resolves each one when it batches that vmap (a reduction
over the batch dimension, an iota for the index) and leaves those naming an outer axis as they
are, on batched operands.
"""

from __future__ import annotations

import numpy as np

from ember.rules.base import Attr, OpTypeError, define
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
