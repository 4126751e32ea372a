"""Lowering rules of the ops in ember/dialects/bits.py.

``arith.shli/shrui/shrsi`` are poison for amounts >= the bit width, so the amount is read as
unsigned, compared with the width and replaced by a safe one before shifting; the result is
then selected (0, or the sign fill for the arithmetic shift, which is a shift by width - 1).
"""

from __future__ import annotations

import numpy as np

from ember._mlir import arith, math_d
from ember.rules.lowering import _cmpi, elem, scalar, scalar_const

__all__: list[str] = []


def _width(dt) -> int:
    return np.dtype(dt).itemsize * 8


def _over(amount, dt):
    """amount >= bit width, reading amount as unsigned."""
    return _cmpi("uge", amount, scalar_const(_width(dt), dt))


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
