"""sin, cos and tan, with ember's own range reduction to [-pi/4, pi/4] and the quadrant.

IREE's expansions are wrong far from zero (sin(1e10) came out as -6e21, tan(3e38) NaN), tan
lost digits near it (tan(-1e-5) 3e-3 off), and float64 sin/cos/tan are libm calls IREE's CPU
backend cannot link. Arguments beyond pi/4 are reduced by Payne and Hanek's method: the bits
of 2/pi that matter at the argument's exponent are multiplied by its mantissa in integers,
so the reduced argument is accurate to about an ulp for every finite float, 3e38 included,
and near multiples of pi/2 too (Cody-Waite's subtraction of pi/2 in three parts, used
before, lost 120 ulps near multiples of pi from 1e3 and all digits from 1e15).
"""

from __future__ import annotations

import numpy as np

from ember._mlir import arith, ir, math_d
from ember.rules.lowering import (
    LOWERINGS,
    SCALAR,
    _cmpf,
    _cmpi,
    _in_f32,
    _poly,
    lower_elementwise,
    scalar_const,
)

__all__: list[str] = []

# pi/2 as a float and its rounding error
_PIO2_SPLIT = {4: (float(np.float32(np.pi / 2)), np.pi / 2 - float(np.float32(np.pi / 2))),
               8: (np.pi / 2, 6.123233995736766e-17)}

# fdlibm's kernels of sin and cos on [-pi/4, pi/4] for float64, Cephes' sinf/cosf kernels for
# float32 (IREE's math.sin loses digits near zero: it gave sin(-1e-3) = -9.99978e-4).
_SIN64 = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
          2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS64 = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
          -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
_SIN32 = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS32 = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)


def _two_over_pi(bits: int) -> int:
    """floor(2/pi * 2**bits), from Machin's formula in integers (64 guard bits)."""
    g = bits + 64

    def atan_inv(n):                   # atan(1/n) * 2**g
        total, power, j = 0, (1 << g) // n, 0
        while power:
            total += (-1) ** j * (power // (2 * j + 1))
            power //= n * n
            j += 1
        return total

    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    return (1 << (bits + g + 1)) // pi


def _table(width: int, emax: int) -> list[int]:
    """2/pi as ``width``-bit words, after one zero word and two zero bits (so that a product
    with the window at bit ``e`` has the quadrant in its top two bits), long enough for
    four words from word ``emax // width``."""
    n = emax // width + 4
    whole = _two_over_pi(n * width - width - 2)
    return [(whole >> (width * (n - 1 - j))) & ((1 << width) - 1) for j in range(n)]


_TABLES = {4: _table(32, 128), 8: _table(64, 1024)}


class _U:
    """Unsigned integer scalar arithmetic of one width, to write the reduction compactly."""

    def __init__(self, width: int):
        self.w = width
        self.t = ir.IntegerType.get_signless(width)
        self.dt = np.dtype(f"uint{width}")

    def c(self, v):
        return scalar_const(v, self.dt)

    def add(self, a, b):
        return arith.AddIOp(a, b).result

    def sub(self, a, b):
        return arith.SubIOp(a, b).result

    def mul(self, a, b):
        return arith.MulIOp(a, b).result

    def and_(self, a, b):
        return arith.AndIOp(a, b).result

    def or_(self, a, b):
        return arith.OrIOp(a, b).result

    def shl(self, a, b):
        return arith.ShLIOp(a, b).result

    def shr(self, a, b):
        return arith.ShRUIOp(a, b).result

    def from_bool(self, b):
        return arith.ExtUIOp(self.t, b).result

    def wide_mul(self, a, b):
        """(low, high) words of the product, from half-word products (IREE's CPU backend
        failed to legalize ``arith.mului_extended`` of some vector shapes)."""
        h = self.c(self.w // 2)
        mask = self.c((1 << (self.w // 2)) - 1)
        a0, a1, b0, b1 = self.and_(a, mask), self.shr(a, h), self.and_(b, mask), self.shr(b, h)
        p00, p01, p10 = self.mul(a0, b0), self.mul(a0, b1), self.mul(a1, b0)
        mid = self.add(self.add(self.shr(p00, h), self.and_(p01, mask)), self.and_(p10, mask))
        low = self.or_(self.and_(p00, mask), self.shl(mid, h))
        high = self.add(self.add(self.mul(a1, b1), self.shr(p01, h)),
                        self.add(self.shr(p10, h), self.shr(mid, h)))
        return low, high

    def funnel(self, a, b, s):
        """The word at bit ``s`` (0 <= s < width) of the two words a, b."""
        inner = self.or_(self.shl(a, s), self.shr(b, self.sub(self.c(self.w), s)))
        return arith.SelectOp(_cmpi("eq", s, self.c(0)), a, inner).result


def _payne_hanek(ax, dt):
    """(r, q): |x| = r + (q + 4 n) pi/2 with |r| <= pi/4 and q in 0..3 (an integer of the
    float's width), for a finite
    ``ax`` = |x| >= 1/2 of float32 or float64, as Norbert Juffa's reduction for float32 does
    it, with words of the float's width: the 3-word window of 2/pi at the argument's exponent
    times its mantissa, modulo 4, is the quadrant and the fraction in fixed point."""
    size = np.dtype(dt).itemsize
    u = _U(8 * size)
    w, mant, bias = u.w, (23 if size == 4 else 52), (127 if size == 4 else 1023)
    table = _TABLES[size]
    ix = arith.BitcastOp(u.t, ax).result
    e = u.sub(u.shr(ix, u.c(mant)), u.c(bias - 1))             # frexp's exponent, >= 0
    e = arith.MinUIOp(e, u.c(bias + 1)).result
    ia = u.shl(u.or_(u.and_(ix, u.c((1 << mant) - 1)), u.c(1 << mant)), u.c(w - 1 - mant))
    i, s = u.shr(e, u.c(w.bit_length() - 1)), u.and_(e, u.c(w - 1))

    def word(j):                    # table[i + j], by selects: IREE's SPIR-V has no tables
        out = u.c(table[j])
        for k in range(1, len(table) - 3):
            out = arith.SelectOp(_cmpi("eq", i, u.c(k)), u.c(table[k + j]), out).result
        return out

    t = [word(j) for j in range(4)]
    hi, mid, lo = u.funnel(t[0], t[1], s), u.funnel(t[1], t[2], s), u.funnel(t[2], t[3], s)
    # the product's low 2w bits: p = ia hi 2^w + ia mid + (ia lo >> w), in 2.(2w-2) fixed point
    _, carry_in = u.wide_mul(ia, lo)
    pl, ph = u.wide_mul(ia, mid)
    pl = u.add(pl, carry_in)
    ph = u.add(u.add(ph, u.from_bool(_cmpi("ult", pl, carry_in))), u.mul(ia, hi))
    q = u.shr(ph, u.c(w - 2))
    ph = u.and_(ph, u.c((1 << (w - 2)) - 1))
    up = _cmpi("ne", u.and_(ph, u.c(1 << (w - 3))), u.c(0))     # a fraction >= 1/2: round up
    ph = arith.SelectOp(up, u.sub(ph, u.c(1 << (w - 2))), ph).result
    q = u.and_(u.add(q, u.from_bool(up)), u.c(3))
    neg = _cmpi("slt", ph, u.c(0))
    nh = u.add(arith.XOrIOp(ph, u.c(-1)).result, u.from_bool(_cmpi("eq", pl, u.c(0))))
    ph, pl = arith.SelectOp(neg, nh, ph).result, arith.SelectOp(neg, u.sub(u.c(0), pl), pl).result
    # the magnitude's leading w bits as a float, times 2^k
    zero_hi = _cmpi("eq", ph, u.c(0))
    top, rest = arith.SelectOp(zero_hi, pl, ph).result, \
        arith.SelectOp(zero_hi, u.c(0), pl).result
    n = arith.MinUIOp(math_d.CountLeadingZerosOp(top).result, u.c(w - 1)).result
    top = u.funnel(top, rest, n)
    k = u.sub(u.sub(u.c(bias + 2 - w), n), arith.SelectOp(zero_hi, u.c(w), u.c(0)).result)
    pow2 = arith.BitcastOp(ax.type, u.shl(k, u.c(mant))).result
    # top * pi/2 to about half an ulp: the float's mantissa times pi/2 exactly (an fma), the
    # bits that did not fit and pi/2's own rounding error added after
    cut = u.and_(top, u.c(-(1 << (w - mant - 1))))
    hi = arith.UIToFPOp(ax.type, cut).result
    lo = arith.UIToFPOp(ax.type, u.sub(top, cut)).result
    c_hi, c_lo = _PIO2_SPLIT[size]
    f = arith.MulFOp(hi, scalar_const(c_hi, dt)).result
    err = math_d.FmaOp(hi, scalar_const(c_hi, dt), arith.NegFOp(f).result).result
    tail = arith.AddFOp(math_d.FmaOp(hi, scalar_const(c_lo, dt), err).result,
                        arith.MulFOp(lo, scalar_const(c_hi, dt)).result).result
    f = arith.AddFOp(f, tail).result
    r = arith.MulFOp(f, pow2).result
    r = arith.SelectOp(neg, arith.NegFOp(r).result, r).result
    return r, q


def _reduce(x, dt, u: _U):
    """(r, q): x = r + (q + 4 n) pi/2 with |r| <= pi/4 and q in 0..3 (an integer)."""
    ax = math_d.AbsFOp(x).result
    r, q = _payne_hanek(ax, dt)
    neg = _cmpf("olt", x, scalar_const(0.0, dt))     # -(r + q pi/2) = -r + (4 - q) pi/2
    r = arith.SelectOp(neg, arith.NegFOp(r).result, r).result
    q = arith.SelectOp(neg, u.and_(u.sub(u.c(4), q), u.c(3)), q).result
    near = _cmpf("ule", ax, scalar_const(np.pi / 4, dt))      # NaN too
    return arith.SelectOp(near, x, r).result, arith.SelectOp(near, u.c(0), q).result


def _sin_cos_kernel(r, dt):
    """(sin r, cos r) for |r| <= pi/4."""
    mul, add, sub = (lambda a, b: arith.MulFOp(a, b).result), \
        (lambda a, b: arith.AddFOp(a, b).result), (lambda a, b: arith.SubFOp(a, b).result)
    z = mul(r, r)
    if np.dtype(dt).itemsize < 8:
        sin_r = add(r, mul(mul(r, z), _poly(z, _SIN32, dt)))
        cos_r = add(sub(scalar_const(1.0, dt), mul(scalar_const(0.5, dt), z)),
                    mul(mul(z, z), _poly(z, _COS32, dt)))
        return sin_r, cos_r
    sin_r = add(r, mul(mul(r, z), _poly(z, _SIN64, dt)))
    hz = mul(scalar_const(0.5, dt), z)
    w = sub(scalar_const(1.0, dt), hz)
    tail = add(sub(sub(scalar_const(1.0, dt), w), hz), mul(mul(z, z), _poly(z, _COS64, dt)))
    return sin_r, add(w, tail)


def _trig(kind: str):
    @_in_f32
    def emit(args, dt, attrs):
        x0 = args[0]
        u = _U(8 * np.dtype(dt).itemsize)
        r, q = _reduce(x0, dt, u)
        sin_r, cos_r = _sin_cos_kernel(r, dt)
        if kind == "tan":   # tan(r + q pi/2) is tan r for even q, -1 / tan r for odd q
            odd = _cmpi("ne", u.and_(q, u.c(1)), u.c(0))
            out = arith.SelectOp(odd, arith.NegFOp(arith.DivFOp(cos_r, sin_r).result).result,
                                 arith.DivFOp(sin_r, cos_r).result).result
        else:
            # sin(r + q pi/2) is sin, cos, -sin, -cos for q = 0..3; cos(...) one step later.
            table = [sin_r, cos_r, arith.NegFOp(sin_r).result, arith.NegFOp(cos_r).result]
            if kind == "cos":
                table = table[1:] + table[:1]
            out = table[3]
            for i in (2, 1, 0):
                out = arith.SelectOp(_cmpi("eq", q, u.c(i)), table[i], out).result
        if kind != "cos":   # sin(-0.0) and tan(-0.0) are -0.0
            out = arith.SelectOp(_cmpf("oeq", x0, scalar_const(0.0, dt)), x0, out).result
        infinite = _cmpf("oeq", math_d.AbsFOp(x0).result, scalar_const(np.inf, dt))
        return arith.SelectOp(infinite, scalar_const(np.nan, dt), out).result
    return emit


for _kind in ("sin", "cos", "tan"):
    SCALAR[_kind] = _trig(_kind)
    LOWERINGS[f"ember.{_kind}"] = lower_elementwise
