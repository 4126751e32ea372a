"""The math family: exponentials, logarithms, powers and roots (exp, expm1, exp2, log, log1p,
log2, sqrt, rsqrt, cbrt, pow, logistic) and the float bit-level functions (copysign,
nextafter, signbit): declarations, scalar emitters (real and complex) and derivatives.

All take floating-point operands of equal shape and dtype (as ``lax``); f16 and bf16 are
computed in f32 except where bit patterns matter (nextafter, signbit).
"""

from __future__ import annotations

import math

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, math_d
from ember.rules.autodiff import (
    NOT_DIFFERENTIABLE,
    add_tangents,
    const,
    jvp,
    primal,
    scale,
    unary_jvp,
)
from ember.rules.base import define
from ember.rules.batching import batch_elementwise, batching
from ember.rules.complex import (
    Parts,
    complex_rule,
    computes_wide,
    div_parts,
    ext,
    hypot,
    imag_part,
    make_complex,
    real_part,
    trunc,
)
from ember.rules.lowering import (
    TRAITS,
    cmpf,
    elem,
    float_unary,
    in_f32,
    math_op,
    poly,
    scalar,
    scalar_const,
    sign_bit,
)
from ember.rules.ranges import value_bound
from ember.rules.type_rules import FLOAT, INEXACT, binary_rule, unary_rule

# --- declarations ---------------------------------------------------------------------------

# name: (dtype class, what it computes, its ember.numpy functions). Transcendental in cost,
# and no float64 form in IREE's SPIR-V lowering (f64_math: ember/backends/vulkan.py refuses
# them there), but for the roots. (NumPy's exp2 and log2 take complex numbers, which these
# ops do not: ember.numpy defines its own.)
UNARY = {
    "exp": (INEXACT, "e ** x", ("exp",)),
    "expm1": (INEXACT, "e ** x - 1, accurate near 0", ("expm1",)),
    "exp2": (FLOAT, "2 ** x", ()),
    "log": (INEXACT, "natural logarithm", ("log",)),
    "log1p": (INEXACT, "log(1 + x), accurate near 0", ("log1p",)),
    "log2": (FLOAT, "base-2 logarithm", ()),
    "sqrt": (INEXACT, "square root", ("sqrt",)),
    "rsqrt": (INEXACT, "1 / sqrt(x)", ()),
    "cbrt": (FLOAT, "cube root (real, signed)", ("cbrt",)),
    "logistic": (FLOAT, "1 / (1 + e ** -x)", ()),
}
BINARY = {"pow": (INEXACT, "x1 ** x2")}
# Bit-level: exact in bfloat16; copysign costs as an add.
BITWISE = {
    "nextafter": "the next representable value after x1 towards x2",
    "copysign": "the magnitude of x1 with the sign of x2",
}
_ROOTS = ("sqrt", "rsqrt")

for _name, (_cls, _what, _numpy) in UNARY.items():
    define(_name, 1, unary_rule(_cls, None), family="elementwise",
           cost="division" if _name in _ROOTS else "transcendental",
           traits=() if _name in _ROOTS else ("f64_math",), numpy=_numpy,
           doc=f"Elementwise {_what}, of a floating-point"
               f"{' or complex' if _cls == INEXACT else ''} operand.")
for _name, (_cls, _what) in BINARY.items():
    define(_name, 2, binary_rule(_cls), family="elementwise", cost="transcendental",
           traits=("f64_math",),
           doc=f"Elementwise {_what}; floating-point or complex operands of equal shape and "
               "dtype.")
for _name, _what in BITWISE.items():
    define(_name, 2, binary_rule(FLOAT), family="elementwise",
           cost="transcendental" if _name == "nextafter" else "cheap", traits=("exact_bf16",),
           doc=f"Elementwise {_what}; floating-point operands of equal shape and dtype.")
define("signbit", 1, unary_rule(FLOAT, dtypes.bool_), family="elementwise",
       doc="Elementwise sign bit of a float (True for -0.0 and negative NaNs), as bool.")
batching(*UNARY, *BINARY, *BITWISE, "signbit")(batch_elementwise)


# --- lowering -------------------------------------------------------------------------------


@float_unary("cbrt")
def _cbrt(f, x):
    # |x| ** (1/3) with a Newton step (y - (y - a / y^2) / 3, which does not overflow near
    # the largest floats as y^3 - a did: Vulkan's cbrt(FLT_MAX) was inf); zeros, infs and
    # NaNs pass.
    ax = f.abs(x)
    y = math_d.PowFOp(ax, f.c(1.0 / 3.0)).result
    y = f.sub(y, f.div(f.sub(y, f.div(ax, f.mul(y, y))), f.c(3.0)))
    special = f.or_(f.cmp("oeq", ax, f.c(0.0)), f.cmp("ueq", ax, f.c(np.inf)))
    return f.copysign(f.sel(special, ax, y), x)


@float_unary("exp2")
def _exp2(f, x):
    return math_d.Exp2Op(x).result


@float_unary("log2")
def _log2(f, x):
    """float64: e + log(m) / ln 2 with x = m 2^e, m in [sqrt(1/2), sqrt(2)) (exact at powers
    of two); IREE calls a libm log2 it cannot link for float64 ``math.log2``."""
    if np.dtype(f.dt).itemsize < 8:
        return math_d.Log2Op(x).result
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()

    def int_(v):
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v)).result
    bits = arith.BitcastOp(i64, x).result
    e = arith.SubIOp(arith.ShRUIOp(bits, int_(52)).result, int_(1023)).result
    m = arith.BitcastOp(f64, arith.OrIOp(arith.AndIOp(bits, int_((1 << 52) - 1)).result,
                                         int_(1023 << 52)).result).result
    big = f.cmp("ogt", m, f.c(math.sqrt(2.0)))
    m = f.sel(big, f.mul(m, f.c(0.5)), m)
    e = f.add(arith.SIToFPOp(f64, e).result, f.sel(big, f.c(1.0), f.c(0.0)))
    r = f.add(e, f.mul(f.log(m), f.c(1.0 / math.log(2.0))))
    # Zeros, subnormals (flushed to zero by the CPU's arithmetic), negatives, infinities and
    # NaNs: log's own answers, scaled.
    normal = f.and_(f.cmp("oge", x, f.c(2.0 ** -1022)), f.cmp("olt", x, f.c(np.inf)))
    return f.sel(normal, r, f.mul(f.log(x), f.c(1.0 / math.log(2.0))))


@scalar("signbit")
def _signbit_emit(args, dt, out_dt, attrs):
    return sign_bit(args[0], dt)


@scalar("copysign")
@in_f32
def _copysign(args, dt, attrs):
    return math_d.CopySignOp(*args).result


@scalar("nextafter")
def _nextafter(args, dt, out_dt, attrs):
    """Step the bit pattern of x one unit towards y, in x's own width (halves included)."""
    x, y = args
    bits = np.dtype(dt).itemsize * 8
    it = ir.IntegerType.get_signless(bits)
    if np.dtype(dt).itemsize < 4:      # compare in f32 (exact)
        f32 = ir.F32Type.get()
        xc, yc, cdt = arith.ExtFOp(f32, x).result, arith.ExtFOp(f32, y).result, np.float32
    else:
        xc, yc, cdt = x, y, dt
    zero = scalar_const(0.0, cdt)

    def ic(v):
        return arith.ConstantOp(it, ir.IntegerAttr.get(it, v)).result
    ix = arith.BitcastOp(it, x).result
    iy = arith.BitcastOp(it, y).result
    # Moving away from zero adds one to the magnitude's bits: x < y for positive x.
    away = arith.XOrIOp(cmpf("olt", xc, yc), sign_bit(x, dt)).result
    step = arith.SelectOp(away, ic(1), ic(-1)).result
    r = arith.BitcastOp(elem(dt), arith.AddIOp(ix, step).result).result
    # From +-0: the smallest subnormal with y's sign.
    sign_y = arith.AndIOp(iy, ic(-(1 << (bits - 1)))).result
    tiny = arith.BitcastOp(elem(dt), arith.OrIOp(sign_y, ic(1)).result).result
    r = arith.SelectOp(cmpf("oeq", xc, zero), tiny, r).result
    r = arith.SelectOp(cmpf("oeq", xc, yc), y, r).result
    unordered = cmpf("uno", xc, yc)
    nan = scalar_const(np.nan, dt)
    return arith.SelectOp(unordered, nan, r).result


# IREE quirk: tests/test_iree_quirks.py::test_float64_expm1_log1p_lose_digits
@scalar("expm1")
@in_f32
def _expm1(args, dt, attrs):
    """float64: Kahan's (u - 1) x / log u with u = exp x (IREE's float64 expm1 kept only
    about 11 digits near zero: expm1(1e-5) was 1e-11 off, relatively)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8:
        return math_d.ExpM1Op(x).result
    one = scalar_const(1.0, dt)
    u = math_d.ExpOp(x).result
    um1 = arith.SubFOp(u, one).result
    r = arith.DivFOp(arith.MulFOp(um1, x).result, math_d.LogOp(u).result).result
    r = arith.SelectOp(cmpf("oeq", u, one), x, r).result      # |x| below half an ulp of 1
    # Past |x| = 1/2, exp(x) - 1 cancels little (and (u - 1) x would overflow first).
    return arith.SelectOp(cmpf("olt", math_d.AbsFOp(x).result, scalar_const(0.5, dt)), r,
                          um1).result


# IREE quirk: tests/test_iree_quirks.py::test_float64_expm1_log1p_lose_digits
@scalar("log1p")
@in_f32
def _log1p(args, dt, attrs):
    """float64: Kahan's log(u) x / (u - 1) with u = 1 + x (IREE's float64 log1p kept only
    about 11 digits near zero)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8 and not TRAITS.get().exact_rounding:
        return _log1p_series(x, dt)
    if np.dtype(dt).itemsize < 8:
        return math_d.Log1pOp(x).result
    one = scalar_const(1.0, dt)
    u = arith.AddFOp(one, x).result
    r = arith.DivFOp(arith.MulFOp(math_d.LogOp(u).result, x).result,
                     arith.SubFOp(u, one).result).result
    r = arith.SelectOp(cmpf("oeq", u, one), x, r).result
    # u = 0 (x = -1), u = inf, NaN and x < -1: log(u)'s own answers
    plain = arith.OrIOp(cmpf("ole", u, scalar_const(0.0, dt)),
                        cmpf("uge", u, scalar_const(np.inf, dt))).result
    return arith.SelectOp(plain, math_d.LogOp(u).result, r).result


def _log1p_series(x, dt):
    """float32 log1p without cancellation, for targets that reassociate (IREE's log1p is
    log(u) x / (u - 1), u = 1 + x, and Mesa folds u - 1 to x: log1p(1e-4) was 1.6e-8 off,
    asinh(5e-5) 1e-3 relatively): with s = x / (2 + x), log1p x = 2 atanh s, whose odd
    series to s^11 is within an ulp for |s| < 0.2 (x in (-1/3, 1/2)); log(1 + x) beyond
    (and for -1, infinities and NaN)."""
    two = scalar_const(2.0, dt)
    s = arith.DivFOp(x, arith.AddFOp(two, x).result).result
    z = arith.MulFOp(s, s).result
    series = arith.MulFOp(arith.MulFOp(two, s).result,
                          poly(z, (1.0, 1 / 3, 1 / 5, 1 / 7, 1 / 9, 1 / 11), dt)).result
    plain = math_d.LogOp(arith.AddFOp(scalar_const(1.0, dt), x).result).result
    small = cmpf("olt", math_d.AbsFOp(s).result, scalar_const(0.2, dt))
    return arith.SelectOp(small, series, plain).result


def _pow64_magnitude(ax, y) -> ir.Value:
    """|x| ** y for float64 as exp(y log|x|) with log|x| in two parts and the product y log|x|
    kept exactly (FMA): exp of the rounded product lost |y log x| ulps (1.2e-13 relative at
    10 ** 300.3). log|x| = e ln2 + 2 atanh(s), s = f / (2 + f), f = m - 1 (exact) for
    x = m 2^e, m in [sqrt(1/2), sqrt(2)); 2s is carried in two parts, the rest of the series
    (under 1% of it) in one. Zeros, subnormals, infinities and NaNs: IREE's powf."""
    dt = np.dtype("float64")
    f64, i64 = ir.F64Type.get(), ir.IntegerType.get_signless(64)

    def c(v):
        return scalar_const(v, dt)

    def int_(v):
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v)).result
    add, sub, mul, div = (lambda a, b, op=op: op(a, b).result
                          for op in (arith.AddFOp, arith.SubFOp, arith.MulFOp, arith.DivFOp))

    def fma(a, b, d):
        return math_d.FmaOp(a, b, d).result
    bits = arith.BitcastOp(i64, ax).result
    e = arith.SubIOp(arith.ShRUIOp(bits, int_(52)).result, int_(1023)).result
    m = arith.BitcastOp(f64, arith.OrIOp(arith.AndIOp(bits, int_((1 << 52) - 1)).result,
                                         int_(1023 << 52)).result).result
    big = cmpf("ogt", m, c(np.sqrt(2.0)))
    m = arith.SelectOp(big, mul(m, c(0.5)), m).result
    e = add(arith.SIToFPOp(f64, e).result, arith.SelectOp(big, c(1.0), c(0.0)).result)
    fr = sub(m, c(1.0))
    u = add(c(2.0), fr)
    u_lo = add(sub(c(2.0), u), fr)                  # 2 + f = u + u_lo exactly
    s_hi = div(fr, u)
    s_lo = div(sub(fma(arith.NegFOp(s_hi).result, u, fr), mul(s_hi, u_lo)), u)
    z = mul(s_hi, s_hi)
    # 2 atanh(s) - 2s = 2s sum_k z^k / (2k + 1); 13 terms reach 2^-66 at s = 0.1716
    tail = mul(mul(c(2.0), s_hi), mul(z, poly(z, [1.0 / (2 * k + 1) for k in range(1, 14)],
                                                 dt)))
    # e ln2 (ln2_hi has 32 bits: e * ln2_hi is exact) + 2 s_hi, then the small parts
    a = mul(e, c(6.93147180369123816490e-01))
    b = mul(c(2.0), s_hi)
    h = add(a, b)
    bb = sub(h, a)
    err = add(sub(a, sub(h, bb)), sub(b, bb))       # Knuth's two-sum
    # 2 s_lo (1 + z): the series' derivative, 2 / (1 - z), applied to s_lo
    s_part = mul(mul(c(2.0), s_lo), add(c(1.0), z))
    lo = add(err, add(mul(e, c(1.90821492927058770002e-10)), add(s_part, tail)))
    hl = add(h, lo)
    ll = sub(lo, sub(hl, h))
    p = mul(y, hl)
    p_lo = fma(y, hl, arith.NegFOp(p).result)
    p_lo = fma(y, ll, p_lo)
    big_exp = math_d.ExpOp(p).result
    r = fma(big_exp, p_lo, big_exp)                 # exp(p) (1 + p_lo), |p_lo| <= 2^-43
    # exp(p) alone where it overflows or underflows (p_lo may be NaN where y log|x| did)
    inside = arith.AndIOp(cmpf("olt", p, c(709.78)), cmpf("ogt", p, c(-708.3))).result
    r = arith.SelectOp(inside, r, big_exp).result
    normal = arith.AndIOp(cmpf("oge", ax, c(2.0 ** -1022)),
                          cmpf("olt", ax, c(np.inf))).result
    return arith.SelectOp(normal, r, math_d.PowFOp(ax, y).result).result


# IREE quirk: tests/test_iree_quirks.py::test_powf_is_nan_for_negative_base
@scalar("pow")
@in_f32
def _pow(args, dt, attrs):
    """C's ``pow``: IREE expands ``math.powf`` as exp(y * log(x)), which is NaN for every
    negative base and for pow(x, 0), pow(1, y) with a NaN; mend the magnitude's sign and the
    exact cases around it. In float32 the product y * log(x) loses |y log x| ulps (2^126
    was 3e-6 off, FLT_MAX ** 1 overflowed): float32 powers are computed in float64 where
    the target has it (``TRAITS``), float64 ones with log|x| in two parts
    (``_pow64_magnitude``)."""
    x, y = args
    zero, one, half = (scalar_const(v, dt) for v in (0.0, 1.0, 0.5))
    inf, nan = scalar_const(np.inf, dt), scalar_const(np.nan, dt)
    ax, ay = math_d.AbsFOp(x).result, math_d.AbsFOp(y).result
    if np.dtype(dt).itemsize == 4 and TRAITS.get().float64:
        f64 = ir.F64Type.get()
        wide = math_d.PowFOp(arith.ExtFOp(f64, ax).result, arith.ExtFOp(f64, y).result).result
        mag = arith.TruncFOp(elem(dt), wide).result
    elif np.dtype(dt).itemsize == 8:
        mag = _pow64_magnitude(ax, y)
    else:
        mag = math_d.PowFOp(ax, y).result
    y_finite = cmpf("one", ay, inf)
    y_int = arith.AndIOp(cmpf("oeq", math_d.FloorOp(y).result, y), y_finite).result
    yh = arith.MulFOp(y, half).result
    y_odd = arith.AndIOp(y_int, cmpf("une", math_d.FloorOp(yh).result, yh)).result
    r = arith.SelectOp(arith.AndIOp(sign_bit(x, dt), y_odd).result, arith.NegFOp(mag).result,
                       mag).result
    # a finite negative base to a finite non-integral power
    x_neg_finite = arith.AndIOp(cmpf("olt", x, zero),
                                cmpf("ogt", x, scalar_const(-np.inf, dt))).result
    not_int = arith.XOrIOp(y_int, scalar_const(True, dtypes.bool_)).result
    r = arith.SelectOp(arith.AndIOp(x_neg_finite, arith.AndIOp(not_int, y_finite).result).result,
                       nan, r).result
    # pow(+-1, +-inf) == 1, pow(1, y) == 1, pow(x, +-0) == 1, NaNs included
    unit_inf = arith.AndIOp(cmpf("oeq", ax, one), cmpf("oeq", ay, inf)).result
    exact_one = arith.OrIOp(arith.OrIOp(unit_inf, cmpf("oeq", x, one)).result,
                            cmpf("oeq", y, zero)).result
    return arith.SelectOp(exact_one, one, r).result


@scalar("logistic")
@in_f32
def _logistic(args, dt, attrs):
    (x,) = args
    one = scalar_const(1.0, dt)
    e = math_d.ExpOp(arith.NegFOp(x).result).result
    return arith.DivFOp(one, arith.AddFOp(one, e).result).result


for _name, _op in {"exp": math_d.ExpOp, "log": math_d.LogOp, "sqrt": math_d.SqrtOp,
                   "rsqrt": math_d.RsqrtOp}.items():
    scalar(_name)(math_op(_op))


def _exp_parts(p: Parts, x, y):
    """exp(x) (cos y, sin y): through exp(x / 2) twice where exp(x) alone overflows; the
    imaginary part is y itself where y is 0 (exp of a real number is real, inf too);
    NumPy's values where x is infinite and y is not finite."""
    c, s = p.cos(y), p.sin(y)
    e = p.exp(x)
    big = p.cmp("ogt", x, p.c(float(np.log(np.finfo(p.dt).max))))
    h = p.exp(p.mul(x, p.c(0.5)))
    re_ = p.sel(big, p.mul(p.mul(h, c), h), p.mul(e, c))
    im_ = p.sel(big, p.mul(p.mul(h, s), h), p.mul(e, s))
    im_ = p.sel(p.eq0(y), y, im_)
    # exp(-inf + yi), y infinite or NaN: (0, copysign(0, y)); exp(inf + yi): (inf, NaN)
    y_bad = p.not_(p.finite(y))
    vanish = p.and_(p.eq0(e), y_bad)
    re_ = p.sel(vanish, p.c(0.0), re_)
    im_ = p.sel(vanish, p.copysign(p.c(0.0), y), im_)
    blow = p.and_(p.cmp("oeq", x, p.c(np.inf)), y_bad)
    return p.sel(blow, p.c(np.inf), re_), p.sel(blow, p.c(np.nan), im_)


@complex_rule("exp")
def _complex_exp(p, args, dt, out_dt):
    (z,) = args
    return make_complex(*_exp_parts(p, real_part(z), imag_part(z)), dt)


@complex_rule("expm1")
def _complex_expm1(p, args, dt, out_dt):
    """NumPy's: (expm1(x) cos y - 2 sin^2(y / 2), exp(x) sin y), without cancellation near
    0; exp(z)'s parts (and their overflow handling) where exp(x) overflows; the imaginary
    part is y itself where y is 0."""
    (z,) = args
    x, y = real_part(z), imag_part(z)
    h = p.sin(p.mul(y, p.c(0.5)))
    re_ = p.sub(p.mul(p.expm1(x), p.cos(y)), p.mul(p.c(2.0), p.mul(h, h)))
    big_re, im_ = _exp_parts(p, x, y)
    big = p.cmp("ogt", x, p.c(float(np.log(np.finfo(p.dt).max))))
    return make_complex(p.sel(big, big_re, re_), im_, dt)


def log_abs_parts(p: Parts, x, y):
    """log|x + yi|: 0.5 log1p((a - 1)(a + 1) + b^2) (a = max(|x|, |y|), b the other) near
    |z| = 1, where log|z| cancels; log|z| elsewhere, scaled by 1/4 where |z| could
    overflow (complex64: 0.5 log(a^2 + b^2) in float64)."""
    ax, ay = p.abs(x), p.abs(y)
    a, b = p.max(ax, ay), p.min(ax, ay)
    inf = p.or_(p.isinf(ax), p.isinf(ay))
    if computes_wide(p):    # a^2 + b^2 neither overflows nor underflows in float64
        wa, wb = ext(p, a, b)
        f = Parts(np.dtype(np.float64))
        one, half = f.c(1.0), f.c(0.5)
        s = f.add(f.mul(f.sub(wa, one), f.add(wa, one)), f.mul(wb, wb))
        sq = f.add(f.mul(wa, wa), f.mul(wb, wb))
        is_near = f.and_(f.cmp("oge", sq, half), f.cmp("ole", sq, f.c(2.0)))
        (r,) = trunc(p, f.mul(half, f.sel(is_near, f.log1p(s), f.log(sq))))
        return p.sel(inf, p.c(np.inf), r)
    one = p.c(1.0)
    near = p.mul(p.c(0.5), p.log1p(p.add(p.mul(p.sub(a, one), p.add(a, one)), p.mul(b, b))))
    huge = p.cmp("ogt", a, p.c(float(np.finfo(p.dt).max) / 4))
    quarter = p.c(0.25)
    h = hypot(p, p.sel(huge, p.mul(x, quarter), x), p.sel(huge, p.mul(y, quarter), y))
    far = p.add(p.log(h), p.sel(huge, p.c(math.log(4.0)), p.c(0.0)))
    h1 = hypot(p, x, y)
    is_near = p.and_(p.cmp("oge", h1, p.c(0.71)), p.cmp("ole", h1, p.c(1.73)))
    return p.sel(inf, p.c(np.inf), p.sel(is_near, near, far))


def _log_parts(p: Parts, x, y):
    return log_abs_parts(p, x, y), p.atan2(y, x)


@complex_rule("log")
def _complex_log(p, args, dt, out_dt):
    (z,) = args
    return make_complex(*_log_parts(p, real_part(z), imag_part(z)), dt)


@complex_rule("log1p")
def _complex_log1p(p, args, dt, out_dt):
    """log(1 + z) without cancellation near 0 (NumPy's is the plain log(1 + z)):
    0.5 log1p(x (2 + x) + y^2) while |1 + z|^2 is within [1/2, 3/2], log|1 + z| beyond
    (complex64: both in float64)."""
    (z,) = args
    x, y = real_part(z), imag_part(z)
    one = p.c(1.0)
    u = p.add(one, x)
    im_ = p.atan2(y, u)
    inf = p.or_(p.isinf(x), p.isinf(y))
    if computes_wide(p):    # (1 + x)^2 + y^2 neither overflows nor underflows in float64
        wx, wy = ext(p, x, y)
        f = Parts(np.dtype(np.float64))
        s = f.add(f.mul(wx, f.add(f.c(2.0), wx)), f.mul(wy, wy))
        wu = f.add(f.c(1.0), wx)
        sq = f.add(f.mul(wu, wu), f.mul(wy, wy))
        half = f.c(0.5)
        is_near = f.cmp("olt", f.abs(s), half)
        (re_,) = trunc(p, f.mul(half, f.sel(is_near, f.log1p(s), f.log(sq))))
        return make_complex(p.sel(inf, p.c(np.inf), re_), im_, dt)
    s = p.add(p.mul(x, p.add(p.c(2.0), x)), p.mul(y, y))
    near = p.mul(p.c(0.5), p.log1p(s))
    is_near = p.cmp("olt", p.abs(s), p.c(0.5))
    re_ = p.sel(is_near, near, log_abs_parts(p, u, y))
    return make_complex(p.sel(inf, p.c(np.inf), re_), im_, dt)


def sqrt_parts(p: Parts, x, y):
    """NumPy's csqrt (C99's): t = sqrt((|x| + |z|) / 2), then (t, y / 2t) for x >= 0 and
    (|y| / 2t, copysign(t, y)) for x < 0, scaled by 1/4 near overflow (complex64: in
    float64); special values as C99."""
    in_f64 = computes_wide(p)
    f = Parts(np.dtype(np.float64)) if in_f64 else p
    wx, wy = ext(p, x, y) if in_f64 else (x, y)
    huge = f.or_(f.cmp("oge", f.abs(wx), f.c(0.7453 * float(np.finfo(f.dt).max))),
                 f.cmp("oge", f.abs(wy), f.c(0.7453 * float(np.finfo(f.dt).max))))
    quarter = f.c(0.25)
    sx, sy = f.sel(huge, f.mul(wx, quarter), wx), f.sel(huge, f.mul(wy, quarter), wy)
    t = f.sqrt(f.mul(f.add(f.abs(sx), hypot(f, sx, sy)), f.c(0.5)))
    two_t = f.add(t, t)
    pos_re, pos_im = t, f.div(sy, two_t)
    neg_re, neg_im = f.div(f.abs(sy), two_t), f.copysign(t, sy)
    neg = f.cmp("olt", sx, f.c(0.0))
    re_, im_ = f.sel(neg, neg_re, pos_re), f.sel(neg, neg_im, pos_im)
    scale = f.sel(huge, f.c(2.0), f.c(1.0))
    re_, im_ = f.mul(re_, scale), f.mul(im_, scale)
    if in_f64:
        re_, im_ = trunc(p, re_, im_)
    inf, nan = p.c(np.inf), p.c(np.nan)
    # y - y: 0, or NaN for an infinite or NaN y (selected: Mesa folds y - y to 0)
    y_minus_y = p.sel(p.finite(y), p.c(0.0), nan)
    # x = +-inf: (inf, copysign(y - y, y)) or (|y - y|, copysign(inf, y))
    x_inf = p.isinf(x)
    x_neg = p.signbit(x)
    re_ = p.sel(x_inf, p.sel(x_neg, p.abs(y_minus_y), inf), re_)
    im_ = p.sel(x_inf, p.sel(x_neg, p.copysign(inf, y), p.copysign(y_minus_y, y)), im_)
    # a NaN x: NaN, NaN (before the infinite x; after an infinite y)
    x_nan = p.isnan(x)
    re_, im_ = p.sel(x_nan, x, re_), p.sel(x_nan, nan, im_)
    # an infinite y: (inf, y), whatever x is
    y_inf = p.isinf(y)
    re_, im_ = p.sel(y_inf, inf, re_), p.sel(y_inf, y, im_)
    # zero: (0, y)
    zero = p.and_(p.eq0(x), p.eq0(y))
    return p.sel(zero, p.c(0.0), re_), p.sel(zero, y, im_)


@complex_rule("sqrt")
def _complex_sqrt(p, args, dt, out_dt):
    (z,) = args
    return make_complex(*sqrt_parts(p, real_part(z), imag_part(z)), dt)


@complex_rule("rsqrt")
def _complex_rsqrt(p, args, dt, out_dt):
    (z,) = args
    re_, im_ = sqrt_parts(p, real_part(z), imag_part(z))
    return make_complex(*div_parts(p, p.c(1.0), p.c(0.0), re_, im_), dt)


@complex_rule("pow")
def _complex_pow(p, args, dt, out_dt):
    """exp(y log x), with NumPy's special cases: x ** 0 is 1 (NaN x too); 0 ** y is 0 where
    Re y > 0 and NaN elsewhere."""
    x, y = args
    a, b = real_part(x), imag_part(x)
    c, d = real_part(y), imag_part(y)
    lr, li = _log_parts(p, a, b)
    # (c + di)(lr + li i)
    er = p.sub(p.mul(c, lr), p.mul(d, li))
    ei = p.add(p.mul(c, li), p.mul(d, lr))
    re_, im_ = _exp_parts(p, er, ei)
    zero_y = p.and_(p.eq0(c), p.eq0(d))
    zero_x = p.and_(p.eq0(a), p.eq0(b))
    zx_re = p.sel(p.cmp("ogt", c, p.c(0.0)), p.c(0.0), p.c(np.nan))
    re_ = p.sel(zero_x, zx_re, re_)
    im_ = p.sel(zero_x, zx_re, im_)
    re_ = p.sel(zero_y, p.c(1.0), re_)
    im_ = p.sel(zero_y, p.c(0.0), im_)
    return make_complex(re_, im_, dt)


# --- value bounds (ember-value-ranges, ember/rules/ranges.py) ------------------------------

@value_bound("logistic")
def _logistic_bound(bounds, attrs):
    return 1.0


# --- differentiation -----------------------------------------------------------------------

# d/dx of each function, from x and its result y (JAX's rules).
_DERIVATIVES = {
    "exp": lambda ad, x, y: y,
    "expm1": lambda ad, x, y: primal(ad, "add", y, const(ad, 1, y)),
    "exp2": lambda ad, x, y: primal(ad, "mul", y, const(ad, math.log(2), y)),
    "log": lambda ad, x, y: primal(ad, "div", const(ad, 1, x), x),
    "log1p": lambda ad, x, y: primal(ad, "div", const(ad, 1, x),
                                     primal(ad, "add", x, const(ad, 1, x))),
    "log2": lambda ad, x, y: primal(ad, "div", const(ad, 1 / math.log(2), x), x),
    "sqrt": lambda ad, x, y: primal(ad, "div", const(ad, 0.5, y), y),
    "rsqrt": lambda ad, x, y: primal(ad, "mul", primal(ad, "div", y, x), const(ad, -0.5, y)),
    "cbrt": lambda ad, x, y: primal(ad, "div", const(ad, 1 / 3, y), primal(ad, "mul", y, y)),
    "logistic": lambda ad, x, y: primal(ad, "mul", y, primal(ad, "sub", const(ad, 1, y), y)),
}
for _name, _derivative in _DERIVATIVES.items():
    jvp(_name)(unary_jvp(_derivative))


@jvp("pow")
def _jvp_pow(ad, op, x, out, t, attrs):
    base, e = x
    a = b = None
    if t[0] is not None:     # y * x**(y-1): JAX's rule for a float exponent (nan at 0**0)
        d = primal(ad, "mul", e, primal(ad, "pow", base, primal(ad, "sub", e, const(ad, 1, e))))
        b = scale(ad, t[0], d)
    if t[1] is not None:     # log(x) * out, with log(1) at x == 0 (as JAX)
        zero = primal(ad, "eq", base, const(ad, 0, base))
        safe = primal(ad, "select", zero, const(ad, 1, base), base)
        a = scale(ad, t[1], primal(ad, "mul", primal(ad, "log", safe), out[0]))
    return [add_tangents(ad, b, a)]


@jvp("copysign")
def _jvp_copysign(ad, op, x, out, t, attrs):
    if t[0] is None:
        return [None]
    same = primal(ad, "eq", primal(ad, "signbit", x[0]), primal(ad, "signbit", x[1]))
    return [scale(ad, t[0], primal(ad, "select", same, const(ad, 1, x[0]), const(ad, -1, x[0])))]


NOT_DIFFERENTIABLE.update(("ember.signbit", "ember.nextafter"))
