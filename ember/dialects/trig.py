"""The trigonometric and hyperbolic family: sin, cos, tan, their inverses, atan2, and the
hyperbolic functions with theirs: declarations, scalar emitters (real and complex) and
derivatives.

sin, cos and tan have ember's own range reduction to [-pi/4, pi/4] and the quadrant. IREE's
expansions are wrong far from zero (sin(1e10) came out as -6e21, tan(3e38) NaN), tan lost
digits near it (tan(-1e-5) 3e-3 off), and float64 sin/cos/tan are libm calls IREE's CPU
backend cannot link. Arguments beyond pi/4 are reduced by Payne and Hanek's method: the bits
of 2/pi that matter at the argument's exponent are multiplied by its mantissa in integers,
so the reduced argument is accurate to about an ulp for every finite float, 3e38 included,
and near multiples of pi/2 too (Cody-Waite's subtraction of pi/2 in three parts, used
before, lost 120 ulps near multiples of pi from 1e3 and all digits from 1e15). IREE's
``math.sinh``/``asinh``/``atanh`` expansions lose accuracy near zero, so those are written
out too.
"""

from __future__ import annotations

import math

import numpy as np

from ember._mlir import arith, ir, math_d
from ember.dialects.math import log_abs_parts, sqrt_parts
from ember.rules.autodiff import add_tangents, const, jvp, primal, scale, unary_jvp
from ember.rules.base import Attr, define
from ember.rules.batching import batch_elementwise, batching
from ember.rules.complex import (
    Parts,
    complex_rule,
    computes_wide,
    ext,
    imag_part,
    make_complex,
    real_part,
    trunc,
)
from ember.rules.lowering import (
    LOWERINGS,
    SCALAR,
    cmpf,
    cmpi,
    float_unary,
    in_f32,
    lower_elementwise,
    poly,
    scalar,
    scalar_const,
    sign_bit,
)
from ember.rules.ranges import value_bound
from ember.rules.type_rules import FLOAT, INEXACT, binary_rule, unary_rule

# --- declarations ---------------------------------------------------------------------------

# name: (dtype class, what it computes, its ember.numpy functions). All are transcendental in
# cost and have no float64 form in IREE's SPIR-V lowering (f64_math: ember/backends/vulkan.py
# refuses them there).
UNARY = {
    "sin": (INEXACT, "sine", ("sin",)), "cos": (INEXACT, "cosine", ("cos",)),
    "tan": (INEXACT, "tangent", ("tan",)), "asin": (INEXACT, "arc sine", ("arcsin", "asin")),
    "acos": (INEXACT, "arc cosine", ("arccos", "acos")),
    "atan": (INEXACT, "arc tangent", ("arctan", "atan")),
    "sinh": (INEXACT, "hyperbolic sine", ("sinh",)),
    "cosh": (INEXACT, "hyperbolic cosine", ("cosh",)),
    "tanh": (INEXACT, "hyperbolic tangent", ("tanh",)),
    "asinh": (INEXACT, "inverse hyperbolic sine", ("arcsinh", "asinh")),
    "acosh": (INEXACT, "inverse hyperbolic cosine", ("arccosh", "acosh")),
    "atanh": (INEXACT, "inverse hyperbolic tangent", ("arctanh", "atanh")),
}
BINARY = {"atan2": (FLOAT, "arc tangent of x1 / x2, in the quadrant of (x2, x1)")}

# The largest |x| whose float32 argument Cody and Waite's subtraction of pi/2 in three parts
# (with fused multiply-adds, Norbert Juffa's constants) reduces to within an ulp of the true
# remainder, as Payne and Hanek's method does for every float; tests/test_trig_accuracy.py
# checks it at the floats nearest every multiple of pi/2 up to there.
SMALL_ARGUMENT = 105615.0
_SMALL = Attr("small_arguments", "bool", False)

for _name, (_cls, _what, _numpy) in UNARY.items():
    _small = _name in ("sin", "cos", "tan")
    define(_name, 1, unary_rule(_cls, None), family="elementwise", cost="transcendental",
           traits=("f64_math",), numpy=_numpy, attrs=(_SMALL,) if _small else (),
           doc=f"Elementwise {_what} of a floating-point or complex operand."
               + (f" ``small_arguments``: every finite operand is at most {SMALL_ARGUMENT:g} "
                  "in magnitude (ember-value-ranges proves it), so a float32 argument is "
                  "reduced the cheap way." if _small else ""))
for _name, (_cls, _what) in BINARY.items():
    define(_name, 2, binary_rule(_cls), family="elementwise", cost="transcendental",
           traits=("f64_math",),
           doc=f"Elementwise {_what}; floating-point operands of equal shape and dtype.")
batching(*UNARY, *BINARY)(batch_elementwise)


# --- lowering: sin, cos and tan -------------------------------------------------------------


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
        return arith.SelectOp(cmpi("eq", s, self.c(0)), a, inner).result


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
            out = arith.SelectOp(cmpi("eq", i, u.c(k)), u.c(table[k + j]), out).result
        return out

    t = [word(j) for j in range(4)]
    hi, mid, lo = u.funnel(t[0], t[1], s), u.funnel(t[1], t[2], s), u.funnel(t[2], t[3], s)
    # the product's low 2w bits: p = ia hi 2^w + ia mid + (ia lo >> w), in 2.(2w-2) fixed point
    _, carry_in = u.wide_mul(ia, lo)
    pl, ph = u.wide_mul(ia, mid)
    pl = u.add(pl, carry_in)
    ph = u.add(u.add(ph, u.from_bool(cmpi("ult", pl, carry_in))), u.mul(ia, hi))
    q = u.shr(ph, u.c(w - 2))
    ph = u.and_(ph, u.c((1 << (w - 2)) - 1))
    up = cmpi("ne", u.and_(ph, u.c(1 << (w - 3))), u.c(0))     # a fraction >= 1/2: round up
    ph = arith.SelectOp(up, u.sub(ph, u.c(1 << (w - 2))), ph).result
    q = u.and_(u.add(q, u.from_bool(up)), u.c(3))
    neg = cmpi("slt", ph, u.c(0))
    nh = u.add(arith.XOrIOp(ph, u.c(-1)).result, u.from_bool(cmpi("eq", pl, u.c(0))))
    ph, pl = arith.SelectOp(neg, nh, ph).result, arith.SelectOp(neg, u.sub(u.c(0), pl), pl).result
    # the magnitude's leading w bits as a float, times 2^k
    zero_hi = cmpi("eq", ph, u.c(0))
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


# pi/2 in three float32 parts for Cody and Waite's reduction (Norbert Juffa's sinf), and 2/pi
_PIO2_F32 = (1.57079601e+00, 3.13916473e-07, 5.39030253e-15)
_TWO_OVER_PI_F32 = 0.636619747


def _cody_waite(x, dt, u: _U):
    """(r, q) as :func:`_reduce`'s for a float32 ``x`` of magnitude at most SMALL_ARGUMENT:
    j = rint(x 2/pi), r = x - j pi/2 in three fused multiply-adds, q = j mod 4."""
    j = math_d.RoundEvenOp(arith.MulFOp(x, scalar_const(_TWO_OVER_PI_F32, dt)).result).result
    r = x
    for part in _PIO2_F32:
        r = math_d.FmaOp(j, scalar_const(-part, dt), r).result
    q = u.and_(arith.FPToSIOp(u.t, j).result, u.c(3))
    return r, q


def _reduce(x, dt, u: _U, small: bool = False):
    """(r, q): x = r + (q + 4 n) pi/2 with |r| <= pi/4 and q in 0..3 (an integer); ``small``:
    |x| <= SMALL_ARGUMENT is known (the cheap reduction for float32)."""
    if small and np.dtype(dt) == np.float32:
        return _cody_waite(x, dt, u)
    ax = math_d.AbsFOp(x).result
    r, q = _payne_hanek(ax, dt)
    neg = cmpf("olt", x, scalar_const(0.0, dt))     # -(r + q pi/2) = -r + (4 - q) pi/2
    r = arith.SelectOp(neg, arith.NegFOp(r).result, r).result
    q = arith.SelectOp(neg, u.and_(u.sub(u.c(4), q), u.c(3)), q).result
    near = cmpf("ule", ax, scalar_const(np.pi / 4, dt))      # NaN too
    return arith.SelectOp(near, x, r).result, arith.SelectOp(near, u.c(0), q).result


def _sin_cos_kernel(r, dt):
    """(sin r, cos r) for |r| <= pi/4."""
    mul, add, sub = (lambda a, b: arith.MulFOp(a, b).result), \
        (lambda a, b: arith.AddFOp(a, b).result), (lambda a, b: arith.SubFOp(a, b).result)
    z = mul(r, r)
    if np.dtype(dt).itemsize < 8:
        sin_r = add(r, mul(mul(r, z), poly(z, _SIN32, dt)))
        cos_r = add(sub(scalar_const(1.0, dt), mul(scalar_const(0.5, dt), z)),
                    mul(mul(z, z), poly(z, _COS32, dt)))
        return sin_r, cos_r
    sin_r = add(r, mul(mul(r, z), poly(z, _SIN64, dt)))
    hz = mul(scalar_const(0.5, dt), z)
    w = sub(scalar_const(1.0, dt), hz)
    tail = add(sub(sub(scalar_const(1.0, dt), w), hz), mul(mul(z, z), poly(z, _COS64, dt)))
    return sin_r, add(w, tail)


# IREE quirks: tests/test_iree_quirks.py::test_float32_sin_tan_inaccurate
# and ::test_float64_libm_calls_do_not_link
def _trig(kind: str):
    @in_f32
    def emit(args, dt, attrs):
        x0 = args[0]
        u = _U(8 * np.dtype(dt).itemsize)
        r, q = _reduce(x0, dt, u, attrs.get("small_arguments", False))
        sin_r, cos_r = _sin_cos_kernel(r, dt)
        if kind == "tan":   # tan(r + q pi/2) is tan r for even q, -1 / tan r for odd q
            odd = cmpi("ne", u.and_(q, u.c(1)), u.c(0))
            out = arith.SelectOp(odd, arith.NegFOp(arith.DivFOp(cos_r, sin_r).result).result,
                                 arith.DivFOp(sin_r, cos_r).result).result
        else:
            # sin(r + q pi/2) is sin, cos, -sin, -cos for q = 0..3; cos(...) one step later.
            table = [sin_r, cos_r, arith.NegFOp(sin_r).result, arith.NegFOp(cos_r).result]
            if kind == "cos":
                table = table[1:] + table[:1]
            out = table[3]
            for i in (2, 1, 0):
                out = arith.SelectOp(cmpi("eq", q, u.c(i)), table[i], out).result
        if kind != "cos":   # sin(-0.0) and tan(-0.0) are -0.0
            out = arith.SelectOp(cmpf("oeq", x0, scalar_const(0.0, dt)), x0, out).result
        infinite = cmpf("oeq", math_d.AbsFOp(x0).result, scalar_const(np.inf, dt))
        return arith.SelectOp(infinite, scalar_const(np.nan, dt), out).result
    return emit


for _kind in ("sin", "cos", "tan"):
    SCALAR[_kind] = _trig(_kind)
    LOWERINGS[f"ember.{_kind}"] = lower_elementwise


@float_unary("asin")
def _asin(f, x):
    # asin(x) = atan2(x, sqrt((1 - x)(1 + x))): exact at 0 and +-1, NaN outside [-1, 1].
    one = f.c(1.0)
    return f.atan2(x, f.sqrt(f.mul(f.sub(one, x), f.add(one, x))))


@float_unary("acos")
def _acos(f, x):
    # acos(x) = 2 atan2(sqrt((1 - x)(1 + x)), 1 + x), and pi at x == -1.
    one = f.c(1.0)
    r = f.mul(f.c(2.0), f.atan2(f.sqrt(f.mul(f.sub(one, x), f.add(one, x))), f.add(one, x)))
    return f.sel(f.cmp("oeq", x, f.c(-1.0)), f.c(np.pi), r)


@float_unary("atan")
def _atan(f, x):
    return f.atan2(x, f.c(1.0))


_BIG = 88.0   # above this exp overflows in f32: go through exp(|x| / 2)


@float_unary("sinh")
def _sinh(f, x):
    # One transcendental per element: |x| < 1 by sinh's odd Taylor series (positive terms, to
    # below the dtype's precision: exact for tiny x); above, (e - 1/e) / 2 with e = exp(|x|),
    # or h * h / 2 with h = exp(|x| / 2) where exp(|x|) would overflow.
    ax = f.abs(x)
    half = f.c(0.5)
    terms = 7 if np.finfo(f.dt).bits <= 32 else 11
    series = f.mul(ax, f.poly(f.mul(x, x), [1.0 / math.factorial(2 * k + 1)
                                            for k in reversed(range(terms))]))
    low = f.cmp("olt", ax, f.c(_BIG))
    e = f.exp(f.sel(low, ax, f.mul(half, ax)))
    r = f.sel(low, f.sub(f.mul(half, e), f.div(half, e)), f.mul(e, f.mul(half, e)))
    return f.copysign(f.sel(f.cmp("olt", ax, f.c(1.0)), series, r), x)


@float_unary("cosh")
def _cosh(f, x):
    # One exp per element: e = exp(y) with y = |x|, or |x| / 2 where exp(|x|) would overflow.
    ax = f.abs(x)
    half = f.c(0.5)
    low = f.cmp("olt", ax, f.c(_BIG))
    e = f.exp(f.sel(low, ax, f.mul(half, ax)))
    return f.sel(low, f.add(f.mul(half, e), f.div(half, e)), f.mul(e, f.mul(half, e)))


@float_unary("asinh")
def _asinh(f, x):
    # asinh(|x|) = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) where x^2 overflows.
    ax = f.abs(x)
    one = f.c(1.0)
    x2 = f.mul(ax, ax)
    small = f.log1p(f.add(ax, f.div(x2, f.add(one, f.sqrt(f.add(one, x2))))))
    big = f.add(f.log(ax), f.c(math.log(2.0)))
    r = f.sel(f.cmp("olt", ax, f.c(1e18)), small, big)
    return f.copysign(r, x)


@float_unary("acosh")
def _acosh(f, x):
    # t = x - 1: log1p(t + sqrt(2t + t^2)); log(2x) for huge x; NaN below 1.
    one = f.c(1.0)
    t = f.sub(x, one)
    small = f.log1p(f.add(t, f.sqrt(f.add(f.add(t, t), f.mul(t, t)))))
    big = f.add(f.log(x), f.c(math.log(2.0)))
    r = f.sel(f.cmp("olt", x, f.c(1e18)), small, big)
    return f.sel(f.cmp("olt", x, one), f.c(np.nan), r)


@float_unary("atanh")
def _atanh(f, x):
    # atanh(|x|) = log1p(2|x| / (1 - |x|)) / 2: +-inf at +-1, NaN outside [-1, 1].
    ax = f.abs(x)
    one = f.c(1.0)
    r = f.mul(f.c(0.5), f.log1p(f.div(f.add(ax, ax), f.sub(one, ax))))
    r = f.sel(f.cmp("ogt", ax, one), f.c(np.nan), r)
    return f.copysign(r, x)


# IREE quirks: tests/test_iree_quirks.py::test_atan2_loses_sign_of_zero
# and ::test_float64_libm_calls_do_not_link
@scalar("atan2")
@in_f32
def _atan2(args, dt, attrs):
    # The result has the sign of y, -0.0 included (atan2(-0.0, -1.0) == -pi); IREE's
    # expansion of math.atan2 loses the sign of a zero y.
    # It also gives NaN where y and x are both zeros or both infinities; C's atan2 does not.
    y, x = args
    zero, inf = scalar_const(0.0, dt), scalar_const(np.inf, dt)
    x_neg = sign_bit(x, dt)
    r = _atan2_abs_y(y, x, x_neg, dt)
    both_zero = arith.AndIOp(cmpf("oeq", y, zero), cmpf("oeq", x, zero)).result
    r = arith.SelectOp(both_zero, arith.SelectOp(x_neg, scalar_const(np.pi, dt),
                                                 zero).result, r).result
    both_inf = arith.AndIOp(cmpf("oeq", math_d.AbsFOp(y).result, inf),
                            cmpf("oeq", math_d.AbsFOp(x).result, inf)).result
    r = arith.SelectOp(both_inf, arith.SelectOp(x_neg, scalar_const(3 * np.pi / 4, dt),
                                                scalar_const(np.pi / 4, dt)).result, r).result
    # an infinite y over a finite x is pi/2 rounded once (pi - pi/2 for a negative x was an
    # ulp below it)
    y_inf = arith.AndIOp(cmpf("oeq", math_d.AbsFOp(y).result, inf),
                         cmpf("olt", math_d.AbsFOp(x).result, inf)).result
    r = arith.SelectOp(y_inf, scalar_const(np.pi / 2, dt), r).result
    return math_d.CopySignOp(r, y).result


# fdlibm's atan (IREE calls a libm atan2 it cannot link for float64, and its float32
# polynomial was 40 ulps off near 0.58): |x| is reduced to [0, 7/16) around atan(1/2),
# atan(1), atan(3/2) or atan(inf), then a degree-22 odd series (float32 rounds the same
# coefficients; the atan(c) are split into a high part and the rest in either type).
_ATAN_T = (3.33333333333329318027e-01, -1.99999999998764832476e-01,
           1.42857142725034663711e-01, -1.11111104054623557880e-01,
           9.09088713343650656196e-02, -7.69187620504482999495e-02,
           6.66107313738753120669e-02, -5.83357013379057348645e-02,
           4.97687799461593236017e-02, -3.65315727442169155270e-02,
           1.62858201153657823623e-02)


_ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01,
            9.82793723247329054082e-01, 1.57079632679489655800e+00)


_ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17,
            1.39033110312309984516e-17, 6.12323399573676603587e-17)


def _split(hi: float, lo: float, dt) -> tuple[float, float]:
    """hi + lo (a float64 pair) as dt's nearest value and the rest."""
    head = float(np.asarray(hi, dt))
    return head, float(np.asarray((hi - head) + lo, dt))


def _atan_positive(t, dt) -> ir.Value:
    """atan(t) for t >= 0 (inf included), as fdlibm's atan."""
    c = lambda v: scalar_const(v, dt)  # noqa: E731
    mul, add, sub, div = (lambda a, b: arith.MulFOp(a, b).result), \
        (lambda a, b: arith.AddFOp(a, b).result), (lambda a, b: arith.SubFOp(a, b).result), \
        (lambda a, b: arith.DivFOp(a, b).result)
    sel = lambda p, a, b: arith.SelectOp(p, a, b).result  # noqa: E731
    # each interval's reduced argument is num / den: one division, after the selects
    reduced = [(sub(mul(c(2.0), t), c(1.0)), add(c(2.0), t)), (sub(t, c(1.0)), add(t, c(1.0))),
               (sub(t, c(1.5)), add(c(1.0), mul(c(1.5), t))), (c(-1.0), t)]
    his, los = zip(*(_split(h, lo, dt) for h, lo in zip(_ATAN_HI, _ATAN_LO)))
    (num, den), hi, lo = reduced[3], c(his[3]), c(los[3])
    for i, bound in reversed(list(enumerate((0.6875, 1.1875, 2.4375)))):
        below = cmpf("olt", t, c(bound))
        num, den = sel(below, reduced[i][0], num), sel(below, reduced[i][1], den)
        hi, lo = sel(below, c(his[i]), hi), sel(below, c(los[i]), lo)
    small = cmpf("olt", t, c(0.4375))
    tr = div(sel(small, t, num), sel(small, c(1.0), den))
    z = mul(tr, tr)
    w = mul(z, z)
    s1 = mul(z, poly(w, _ATAN_T[0::2], dt))
    s2 = mul(w, poly(w, _ATAN_T[1::2], dt))
    s = mul(tr, add(s1, s2))
    return sel(small, sub(tr, s), sub(hi, sub(sub(s, lo), tr)))


def _atan2_abs_y(y, x, x_neg, dt) -> ir.Value:
    """atan2(|y|, x), as fdlibm's (the caller copies y's sign)."""
    z = _atan_positive(arith.DivFOp(math_d.AbsFOp(y).result, math_d.AbsFOp(x).result).result,
                       dt)
    pi, pi_lo = (scalar_const(v, dt)
                 for v in _split(3.1415926535897931160e+00, 1.2246467991473531772e-16, dt))
    left = arith.SubFOp(pi, arith.SubFOp(z, pi_lo).result).result
    return arith.SelectOp(x_neg, left, z).result


# IREE quirk: tests/test_iree_quirks.py::test_float64_libm_calls_do_not_link
@scalar("tanh")
@in_f32
def _tanh(args, dt, attrs):
    """float64 tanh from expm1 (IREE links no libm tanh for float64): with t = expm1(-2|x|),
    tanh|x| = -t / (2 + t), accurate near zero too; the sign is copied back (-0.0 too)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8:
        return math_d.TanhOp(x).result
    ax = math_d.AbsFOp(x).result
    t = math_d.ExpM1Op(arith.MulFOp(scalar_const(-2.0, dt), ax).result).result
    mag = arith.DivFOp(arith.NegFOp(t).result,
                       arith.AddFOp(scalar_const(2.0, dt), t).result).result
    # Near zero IREE's float64 expm1 loses digits: tanh's series is exact to 1 ulp there.
    z = arith.MulFOp(ax, ax).result
    series = arith.MulFOp(ax, poly(z, (1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835,
                                        -1382 / 155925), dt)).result
    small = cmpf("olt", ax, scalar_const(0.02, dt))
    mag = arith.SelectOp(small, series, mag).result
    return math_d.CopySignOp(mag, x).result


def _hyperbolic(p: Parts, x, y, even: bool):
    """(cosh x cos y, sinh x sin y) (``even``) or (sinh x cos y, cosh x sin y), through
    exp(|x| / 2) twice where cosh x alone overflows (the product may not)."""
    c, s = p.cos(y), p.sin(y)
    sh, ch = p.fn("sinh", x), p.fn("cosh", x)
    re_ = p.mul(ch if even else sh, c)
    im_ = p.mul(sh if even else ch, s)
    ax = p.abs(x)
    big = p.cmp("ogt", ax, p.c(float(np.log(np.finfo(p.dt).max))))
    h = p.exp(p.mul(ax, p.c(0.5)))
    half_h = p.mul(p.c(0.5), h)
    sign = p.copysign(p.c(1.0), x)
    big_re = p.mul(p.mul(half_h, c), h)
    big_im = p.mul(p.mul(half_h, s), h)
    if even:
        big_im = p.mul(big_im, sign)
    else:
        big_re = p.mul(big_re, sign)
    return p.sel(big, big_re, re_), p.sel(big, big_im, im_)


def _sinh_parts(p: Parts, x, y):
    """(sinh x cos y, cosh x sin y); the imaginary part is y where y is 0, the real part x
    where x is 0 and y is not finite; (inf, NaN) for an infinite x and a y infinite or NaN
    (C99 leaves the sign open; NumPy's is +)."""
    re_, im_ = _hyperbolic(p, x, y, even=False)
    re_ = p.sel(p.and_(p.eq0(x), p.not_(p.finite(y))), x, re_)
    im_ = p.sel(p.eq0(y), y, im_)
    inf_nan = p.and_(p.isinf(x), p.not_(p.finite(y)))
    return p.sel(inf_nan, p.c(np.inf), re_), p.sel(inf_nan, p.c(np.nan), im_)


def _cosh_parts(p: Parts, x, y):
    """(cosh x cos y, sinh x sin y); a zero imaginary part where y is 0 (its sign that of
    the product) and where x is 0 and y is not finite; (inf, NaN) for an infinite x and a y
    infinite or NaN (C99)."""
    re_, im_ = _hyperbolic(p, x, y, even=True)
    im_ = p.sel(p.and_(p.eq0(x), p.not_(p.finite(y))), p.c(0.0), im_)
    im_ = p.sel(p.eq0(y), p.mul(y, p.copysign(p.c(1.0), x)), im_)
    inf_nan = p.and_(p.isinf(x), p.not_(p.finite(y)))
    return p.sel(inf_nan, p.c(np.inf), re_), p.sel(inf_nan, p.c(np.nan), im_)


def _tanh_parts(p: Parts, x, y):
    """Kahan's algorithm, as NumPy's ctanh: with t = tan y, beta = 1 + t^2, s = sinh x,
    rho = sqrt(1 + s^2): (beta rho s, t) / (1 + beta s^2); +-1 and a vanishing imaginary
    part for large |x|; special values as C99."""
    one = p.c(1.0)
    t = p.fn("tan", y)
    beta = p.add(one, p.mul(t, t))
    s = p.fn("sinh", x)
    rho = p.sqrt(p.add(one, p.mul(s, s)))
    denom = p.add(one, p.mul(beta, p.mul(s, s)))
    re_ = p.div(p.mul(p.mul(beta, rho), s), denom)
    im_ = p.div(t, denom)
    # |x| large: (copysign(1, x), 4 sin y cos y exp(-2|x|))
    sc = p.mul(p.sin(y), p.cos(y))
    em = p.exp(p.neg(p.abs(x)))
    big = p.cmp("oge", p.abs(x), p.c(22.0 if p.dt.itemsize == 8 else 11.0))
    sign_x = p.copysign(one, x)
    re_ = p.sel(big, sign_x, re_)
    im_ = p.sel(big, p.mul(p.mul(p.c(4.0), sc), p.mul(em, em)), im_)
    # y infinite or NaN (x finite): NaN, NaN
    y_bad = p.not_(p.finite(y))
    nan = p.c(np.nan)
    re_, im_ = p.sel(y_bad, nan, re_), p.sel(y_bad, nan, im_)
    # x infinite: (copysign(1, x), copysign(0, y infinite ? y : sin y cos y))
    x_inf = p.isinf(x)
    re_ = p.sel(x_inf, sign_x, re_)
    im_ = p.sel(x_inf, p.copysign(p.c(0.0), p.sel(p.isinf(y), y, sc)), im_)
    # x NaN: (NaN, y where y is 0 else NaN)
    x_nan = p.isnan(x)
    re_ = p.sel(x_nan, x, re_)
    im_ = p.sel(x_nan, p.sel(p.eq0(y), y, nan), im_)
    # x zero, y infinite or NaN: (x, NaN)
    return p.sel(p.and_(p.eq0(x), y_bad), x, re_), im_


def _rotated(parts):
    """f(z) = -i g(iz) from g on the parts: iz = (-y, x), and -i (a + bi) = (b, -a)."""
    def fn(p, x, y):
        a, b = parts(p, p.neg(y), x)
        return b, p.neg(a)
    return fn


def _register_parts(name, parts):
    @complex_rule(name)
    def emit(p, args, dt, out_dt):
        (z,) = args
        return make_complex(*parts(p, real_part(z), imag_part(z)), dt)
    return emit


def _cos_parts(p: Parts, x, y):
    return _cosh_parts(p, p.neg(y), x)        # cos z = cosh(iz)


for _name, _parts in {"sinh": _sinh_parts, "cosh": _cosh_parts, "tanh": _tanh_parts,
                      "sin": _rotated(_sinh_parts), "cos": _cos_parts,
                      "tan": _rotated(_tanh_parts)}.items():
    _register_parts(_name, _parts)


def _big(p: Parts, x, y):
    """Where |z| is so large that log(2z) is the inverse functions' asymptote within an
    ulp (and 1 +- z would lose z's digits or be infinite)."""
    bound = p.c(1e9 if p.dt.itemsize == 8 else 1e5)
    return p.or_(p.cmp("ogt", p.abs(x), bound), p.cmp("ogt", p.abs(y), bound))


def _log2z(p: Parts, x, y):
    """log|2z| = log|z| + log 2."""
    return p.add(log_abs_parts(p, x, y), p.c(math.log(2.0)))


def _csqrt(p: Parts, x, y):
    return sqrt_parts(p, x, y)


def _asin_parts(p: Parts, x, y):
    """Kahan: with s1 = sqrt(1 - z), s2 = sqrt(1 + z): (atan2(x, Re(s1 s2)),
    asinh(Im(conj(s1) s2))); for a large |z|, (atan2(x, |y|), copysign(log|2z|, y))."""
    one = p.c(1.0)
    s1r, s1i = _csqrt(p, p.sub(one, x), p.neg(y))
    s2r, s2i = _csqrt(p, p.add(one, x), y)
    re_ = p.atan2(x, p.sub(p.mul(s1r, s2r), p.mul(s1i, s2i)))
    im_ = p.fn("asinh", p.sub(p.mul(s1r, s2i), p.mul(s1i, s2r)))
    big = _big(p, x, y)
    re_ = p.sel(big, p.atan2(x, p.abs(y)), re_)
    im_ = p.sel(big, p.copysign(_log2z(p, x, y), y), im_)
    return p.sel(p.eq0(x), x, re_), im_       # asin(iy) = i asinh(y), NaN y too


def _acos_parts(p: Parts, x, y):
    """Kahan: (2 atan2(Re(s1), Re(s2)), asinh(Im(conj(s2) s1))); for a large |z|,
    (atan2(|y|, x), -copysign(log|2z|, y))."""
    one = p.c(1.0)
    s1r, s1i = _csqrt(p, p.sub(one, x), p.neg(y))
    s2r, s2i = _csqrt(p, p.add(one, x), y)
    re_ = p.mul(p.c(2.0), p.atan2(s1r, s2r))
    im_ = p.fn("asinh", p.sub(p.mul(s2r, s1i), p.mul(s2i, s1r)))
    big = _big(p, x, y)
    re_ = p.sel(big, p.atan2(p.abs(y), x), re_)
    im_ = p.sel(big, p.neg(p.copysign(_log2z(p, x, y), y)), im_)
    # acos(iy) = pi/2 - i asinh(y), NaN y too
    return p.sel(p.eq0(x), p.c(math.pi / 2), re_), im_


def _acosh_parts(p: Parts, x, y):
    """Kahan: with s1 = sqrt(z - 1), s2 = sqrt(z + 1): (asinh(Re(conj(s1) s2)),
    2 atan2(Im(s1), Re(s2))); for a large |z|, (log|2z|, atan2(y, x))."""
    one = p.c(1.0)
    s1r, s1i = _csqrt(p, p.sub(x, one), y)
    s2r, s2i = _csqrt(p, p.add(x, one), y)
    re_ = p.fn("asinh", p.add(p.mul(s1r, s2r), p.mul(s1i, s2i)))
    im_ = p.mul(p.c(2.0), p.atan2(s1i, s2r))
    big = _big(p, x, y)
    re_, im_ = p.sel(big, _log2z(p, x, y), re_), p.sel(big, p.atan2(y, x), im_)
    # acosh(iy) = asinh|y| + i copysign(pi/2, y); pi/2 for a NaN y (C99)
    half_pi = p.c(math.pi / 2)
    axis = p.sel(p.isnan(y), half_pi, p.copysign(half_pi, y))
    return re_, p.sel(p.eq0(x), axis, im_)


def _atanh_parts(p: Parts, x, y):
    """NumPy's catanh away from infinities: (copysign(log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4,
    x), atan2(2y, (1 - x)(1 + x) - y^2) / 2) (the real part in float64 for complex64); for
    a large |z|, atanh(1/z) + i copysign(pi/2, y) with atanh(1/z) = 1/z within an ulp."""
    one = p.c(1.0)
    ax = p.abs(x)
    in_f64 = computes_wide(p)
    f = Parts(np.dtype(np.float64)) if in_f64 else p
    wx, wy = ext(p, ax, y) if in_f64 else (ax, y)
    omx = f.sub(f.c(1.0), wx)
    re_ = f.mul(f.c(0.25), f.log1p(f.div(f.mul(f.c(4.0), wx),
                                         f.add(f.mul(omx, omx), f.mul(wy, wy)))))
    if in_f64:
        (re_,) = trunc(p, re_)
    re_ = p.copysign(re_, x)
    omx = p.sub(one, x)
    im_ = p.mul(p.c(0.5), p.atan2(p.add(y, y), p.sub(p.mul(omx, p.add(one, x)),
                                                      p.mul(y, y))))
    # 1/z = (x - yi) / |z|^2, scaled by a = max(|x|, |y|): 0 at infinity
    a = p.max(ax, p.abs(y))
    inf = p.or_(p.isinf(x), p.isinf(y))
    safe = p.sel(inf, one, a)
    q = p.div(p.min(ax, p.abs(y)), safe)
    inv = p.div(one, p.mul(safe, p.add(one, p.mul(q, q))))        # 1 / (|z|^2 / a)
    inv_re = p.sel(inf, p.copysign(p.c(0.0), x), p.mul(p.div(x, safe), inv))
    inv_im = p.sel(inf, p.c(0.0), p.mul(p.div(y, safe), inv))
    big_im = p.sel(p.isnan(y), y, p.sub(p.copysign(p.c(math.pi / 2), y), inv_im))
    big = _big(p, x, y)
    re_ = p.sel(p.eq0(x), x, re_)             # atanh(iy) = i atan(y): (x, ...), NaN y too
    return p.sel(big, inv_re, re_), p.sel(big, big_im, im_)


for _name, _parts in {"asin": _asin_parts, "acos": _acos_parts, "acosh": _acosh_parts,
                      "atanh": _atanh_parts, "asinh": _rotated(_asin_parts),
                      "atan": _rotated(_atanh_parts)}.items():
    _register_parts(_name, _parts)


# --- value bounds (ember-value-ranges, ember/rules/ranges.py) ------------------------------

@value_bound("sin", "cos", "tanh")
def _unit_bound(bounds, attrs):
    return 1.0


@value_bound("atan", "atan2")
def _angle_bound(bounds, attrs):
    return math.pi


# --- differentiation -----------------------------------------------------------------------

def _one_minus_square(ad, v):
    return primal(ad, "sub", const(ad, 1, v), primal(ad, "mul", v, v))


def _one_plus_square(ad, v):
    return primal(ad, "add", const(ad, 1, v), primal(ad, "mul", v, v))


# d/dx of each function, from x and its result y (JAX's rules).
_DERIVATIVES = {
    "sin": lambda ad, x, y: primal(ad, "cos", x),
    "cos": lambda ad, x, y: primal(ad, "neg", primal(ad, "sin", x)),
    "tan": lambda ad, x, y: _one_plus_square(ad, y),
    "tanh": lambda ad, x, y: _one_minus_square(ad, y),
    "asin": lambda ad, x, y: primal(ad, "rsqrt", _one_minus_square(ad, x)),
    "acos": lambda ad, x, y: primal(ad, "neg", primal(ad, "rsqrt", _one_minus_square(ad, x))),
    "atan": lambda ad, x, y: primal(ad, "div", const(ad, 1, x), _one_plus_square(ad, x)),
    "sinh": lambda ad, x, y: primal(ad, "cosh", x),
    "cosh": lambda ad, x, y: primal(ad, "sinh", x),
    "asinh": lambda ad, x, y: primal(ad, "rsqrt", primal(ad, "add", primal(ad, "mul", x, x),
                                                         const(ad, 1, x))),
    "acosh": lambda ad, x, y: primal(ad, "rsqrt", primal(
        ad, "mul", primal(ad, "sub", x, const(ad, 1, x)), primal(ad, "add", x, const(ad, 1, x)))),
    "atanh": lambda ad, x, y: primal(ad, "div", const(ad, 1, x), _one_minus_square(ad, x)),
}
for _name, _derivative in _DERIVATIVES.items():
    jvp(_name)(unary_jvp(_derivative))


@jvp("atan2")
def _jvp_atan2(ad, op, x, out, t, attrs):
    y_, x_ = x     # atan2(y, x)
    denom = primal(ad, "add", primal(ad, "mul", x_, x_), primal(ad, "mul", y_, y_))
    a = None if t[0] is None else scale(ad, t[0], primal(ad, "div", x_, denom))
    b = None if t[1] is None else scale(ad, t[1], primal(ad, "div", primal(ad, "neg", y_), denom))
    return [add_tangents(ad, a, b)]
