"""Bit-level ops: shifts, bitcast_convert_type, population_count, clz.

Shifts have ``lax`` semantics, never undefined behaviour: the shift amount is read as an
unsigned number, and an amount of at least the bit width gives 0 (``shift_left``,
``shift_right_logical``) or the sign fill (``shift_right_arithmetic``: 0 or -1).

Lowering: ``arith.shli/shrui/shrsi`` are poison for amounts >= the bit width, so the amount
is read as unsigned, compared with the width and replaced by a safe one before shifting; the
result is then selected (0, or the sign fill for the arithmetic shift, which is a shift by
width - 1). All are elementwise: batched as such, and not differentiable (integer results,
or a reinterpretation of bits).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, math_d
from ember.rules.autodiff import NOT_DIFFERENTIABLE
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.batching import batch_elementwise, batching
from ember.rules.lowering import cmpi, elem, scalar, scalar_const
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


# --- lowering -----------------------------------------------------------------------------

def _width(dt) -> int:
    return np.dtype(dt).itemsize * 8


def _over(amount, dt):
    """amount >= bit width, reading amount as unsigned."""
    return cmpi("uge", amount, scalar_const(_width(dt), dt))


def _zero_past_width(shift_op):
    """Logical shifts: by the bit width or more (or a negative amount) the result is 0."""
    def emit(args, dt, out_dt, attrs):
        x, y = args
        zero = scalar_const(0, dt)
        over = _over(y, dt)
        safe = arith.SelectOp(over, zero, y).result
        return arith.SelectOp(over, zero, shift_op(x, safe).result).result
    return emit


scalar("shift_left")(_zero_past_width(arith.ShLIOp))
scalar("shift_right_logical")(_zero_past_width(arith.ShRUIOp))


@scalar("shift_right_arithmetic")
def _shift_right_arithmetic(args, dt, out_dt, attrs):
    x, y = args
    # A shift by width - 1 is the sign fill: 0 or -1.
    safe = arith.SelectOp(_over(y, dt), scalar_const(_width(dt) - 1, dt), y).result
    return arith.ShRSIOp(x, safe).result


@scalar("population_count")
def _population_count(args, dt, out_dt, attrs):
    return math_d.CtPopOp(args[0]).result


# IREE quirk: tests/test_iree_quirks.py::test_vulkan_narrow_ctlz_fails
@scalar("clz")
def _clz(args, dt, out_dt, attrs):
    (x,) = args
    w = _width(dt)
    if w >= 32:
        return math_d.CountLeadingZerosOp(x).result
    # Counted in 32 bits, less the extension's 32 - w leading zeros: IREE 3.13 cannot
    # legalize math.ctlz on i8/i16 for Vulkan (SPIR-V counts 32-bit words).
    i32 = np.dtype(np.int32)
    n = math_d.CountLeadingZerosOp(arith.ExtUIOp(elem(i32), x).result).result
    n = arith.SubIOp(n, scalar_const(32 - w, i32)).result
    return arith.TruncIOp(x.type, n).result


@scalar("bitcast_convert_type")
def _bitcast_convert_type(args, dt, out_dt, attrs):
    (x,) = args
    t = elem(out_dt)
    if t == x.type:          # signedness only (int32 <-> uint32): the same signless type
        return x
    return arith.BitcastOp(t, x).result


# --- batching and differentiation ---------------------------------------------------------

batching(*SHIFTS, *BIT_UNARY, "bitcast_convert_type")(batch_elementwise)

NOT_DIFFERENTIABLE.update(f"ember.{n}" for n in (*SHIFTS, *BIT_UNARY, "bitcast_convert_type"))
