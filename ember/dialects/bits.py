"""Bit-level ops: shifts, bitcast_convert_type, population_count, clz.

Shifts have ``lax`` semantics, never undefined behaviour: the shift amount is read as an
unsigned number, and an amount of at least the bit width gives 0 (``shift_left``,
``shift_right_logical``) or the sign fill (``shift_right_arithmetic``: 0 or -1).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.type_rules import aval, check_class, fmt, same_shapes_and_dtypes

__all__: list[str] = []

SHIFTS = ("shift_left", "shift_right_logical", "shift_right_arithmetic")
BIT_UNARY = ("population_count", "clz")


def _is_integer(d) -> bool:
    return dtypes.is_int(d)      # int or unsigned, not bool


def _shift(avals, attrs):
    same_shapes_and_dtypes(avals)
    if not _is_integer(avals[0].dtype):
        raise OpTypeError(f"needs integer (not bool) operands, got {fmt(avals)}")
    return [avals[0]]


_SHIFT_DOCS = {
    "shift_left": "Elementwise x << y; amounts >= the bit width (as unsigned) give 0.",
    "shift_right_logical": "Elementwise logical x >> y (zero fill, on the bit pattern); "
                           "amounts >= the bit width (as unsigned) give 0.",
    "shift_right_arithmetic": "Elementwise arithmetic x >> y (sign fill, on the bit pattern); "
                              "amounts >= the bit width (as unsigned) give 0 or -1.",
}

for _name in SHIFTS:
    define(_name, 2, _shift, family="elementwise", doc=_SHIFT_DOCS[_name])


def _bit_unary(avals, attrs):
    if not _is_integer(avals[0].dtype):
        raise OpTypeError(f"needs an integer (not bool) operand, got {fmt(avals)}")
    return [aval(avals[0].shape, avals[0].dtype)]


define("population_count", 1, _bit_unary, family="elementwise",
       doc="Elementwise number of set bits, in the operand's dtype.")
define("clz", 1, _bit_unary, family="elementwise",
       doc="Elementwise number of leading zero bits (the bit width for 0), in the operand's "
           "dtype.")


def _bitcast(avals, attrs):
    (x,), new = avals, np.dtype(attrs["new_dtype"])
    check_class(avals, "real")
    if dtypes.is_bool(x.dtype) or dtypes.is_bool(new):
        raise OpTypeError(f"cannot bitcast to or from bool: {x.str_short()} to {new}")
    if x.dtype.itemsize != new.itemsize:
        raise OpTypeError(f"bitcast_convert_type needs equal bit widths: {x.str_short()} "
                          f"({x.dtype.itemsize * 8} bits) to {new} ({new.itemsize * 8} bits)")
    return [aval(x.shape, new)]


define("bitcast_convert_type", 1, _bitcast, attrs=(Attr("new_dtype", "dtype"),),
       family="elementwise", traits=("exact_bf16",),
       doc="Reinterpret the bits of each element as `new_dtype`, of the same bit width.")
