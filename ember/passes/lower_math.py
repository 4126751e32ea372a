"""Lowering rules of the ops in ember/dialects/math.py.

Each op has a scalar emitter (``lower_elementwise`` wraps it in a ``linalg.generic``). f16 and
bf16 are computed in f32 (``_in_f32``) except where bit patterns matter (nextafter,
signbit). IREE's CPU backend has no lowering for ``math.erfc`` and calls a missing
``log10f`` for ``math.log10``; its ``math.sinh``/``asinh``/``atanh`` expansions lose
accuracy near zero, so those are written out here.
"""

from __future__ import annotations

import math

import numpy as np

from ember._mlir import arith, ir, math_d
from ember.passes.lowering import SCALAR, _cmpf, _in_f32, _signbit, elem, scalar, scalar_const

__all__: list[str] = []


# --- scalar arithmetic helpers (floats) ----------------------------------------------------

class _F:
    """Float scalar arithmetic of one dtype, to write formulas compactly."""

    def __init__(self, dt):
        self.dt = dt

    def c(self, v):
        return scalar_const(v, self.dt)

    @staticmethod
    def add(a, b):
        return arith.AddFOp(a, b).result

    @staticmethod
    def sub(a, b):
        return arith.SubFOp(a, b).result

    @staticmethod
    def mul(a, b):
        return arith.MulFOp(a, b).result

    @staticmethod
    def div(a, b):
        return arith.DivFOp(a, b).result

    @staticmethod
    def neg(a):
        return arith.NegFOp(a).result

    @staticmethod
    def sel(p, a, b):
        return arith.SelectOp(p, a, b).result

    @staticmethod
    def abs(a):
        return math_d.AbsFOp(a).result

    @staticmethod
    def exp(a):
        return math_d.ExpOp(a).result

    def expm1(self, a):     # ember's (lowering._expm1): IREE's float64 one loses digits
        return SCALAR["expm1"]([a], self.dt, self.dt, {})

    @staticmethod
    def log(a):
        return math_d.LogOp(a).result

    def log1p(self, a):
        return SCALAR["log1p"]([a], self.dt, self.dt, {})

    @staticmethod
    def sqrt(a):
        return math_d.SqrtOp(a).result

    def sin(self, a):   # range-reduced (lowering._trig); IREE links no float64 libm sin
        return SCALAR["sin"]([a], self.dt, self.dt, {})

    def cos(self, a):
        return SCALAR["cos"]([a], self.dt, self.dt, {})

    @staticmethod
    def floor(a):
        return math_d.FloorOp(a).result

    @staticmethod
    def copysign(a, b):
        return math_d.CopySignOp(a, b).result

    @staticmethod
    def cmp(pred, a, b):
        return _cmpf(pred, a, b)

    @staticmethod
    def and_(a, b):
        return arith.AndIOp(a, b).result

    @staticmethod
    def or_(a, b):
        return arith.OrIOp(a, b).result

    def poly(self, x, coeffs):
        """Horner's rule, coefficients from the highest power down."""
        p = self.c(coeffs[0])
        for k in coeffs[1:]:
            p = self.add(self.mul(p, x), self.c(k))
        return p

    def atan2(self, y, x):
        from ember.passes.lowering import SCALAR
        return SCALAR["atan2"]([y, x], self.dt, self.dt, {})


def _unary(name):
    """Register ``fn(F, x)`` as the scalar emitter of ``name``, computed in f32 for halves."""
    def deco(fn):
        scalar(name)(_in_f32(lambda args, dt, attrs: fn(_F(dt), args[0])))
        return fn
    return deco


# --- inverse trigonometric ----------------------------------------------------------------

@_unary("asin")
def _asin(f, x):
    # asin(x) = atan2(x, sqrt((1 - x)(1 + x))): exact at 0 and +-1, NaN outside [-1, 1].
    one = f.c(1.0)
    return f.atan2(x, f.sqrt(f.mul(f.sub(one, x), f.add(one, x))))


@_unary("acos")
def _acos(f, x):
    # acos(x) = 2 atan2(sqrt((1 - x)(1 + x)), 1 + x), and pi at x == -1.
    one = f.c(1.0)
    r = f.mul(f.c(2.0), f.atan2(f.sqrt(f.mul(f.sub(one, x), f.add(one, x))), f.add(one, x)))
    return f.sel(f.cmp("oeq", x, f.c(-1.0)), f.c(np.pi), r)


@_unary("atan")
def _atan(f, x):
    return f.atan2(x, f.c(1.0))


# --- hyperbolic ---------------------------------------------------------------------------

_BIG = 88.0   # above this exp overflows in f32: go through exp(|x| / 2)


@_unary("sinh")
def _sinh(f, x):
    ax = f.abs(x)
    half = f.c(0.5)
    # |x| < 1: (e - 1/e) / 2 with e - 1 = expm1(|x|), exact for tiny x.
    em1 = f.expm1(ax)
    small = f.mul(half, f.add(em1, f.div(em1, f.add(em1, f.c(1.0)))))
    e = f.exp(ax)
    mid = f.sub(f.mul(half, e), f.div(half, e))
    h = f.exp(f.mul(half, ax))
    big = f.mul(h, f.mul(half, h))
    r = f.sel(f.cmp("olt", ax, f.c(1.0)), small,
              f.sel(f.cmp("olt", ax, f.c(_BIG)), mid, big))
    return f.copysign(r, x)


@_unary("cosh")
def _cosh(f, x):
    ax = f.abs(x)
    half = f.c(0.5)
    e = f.exp(ax)
    mid = f.add(f.mul(half, e), f.div(half, e))
    h = f.exp(f.mul(half, ax))
    big = f.mul(h, f.mul(half, h))
    return f.sel(f.cmp("olt", ax, f.c(_BIG)), mid, big)


@_unary("asinh")
def _asinh(f, x):
    # asinh(|x|) = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) where x^2 overflows.
    ax = f.abs(x)
    one = f.c(1.0)
    x2 = f.mul(ax, ax)
    small = f.log1p(f.add(ax, f.div(x2, f.add(one, f.sqrt(f.add(one, x2))))))
    big = f.add(f.log(ax), f.c(math.log(2.0)))
    r = f.sel(f.cmp("olt", ax, f.c(1e18)), small, big)
    return f.copysign(r, x)


@_unary("acosh")
def _acosh(f, x):
    # t = x - 1: log1p(t + sqrt(2t + t^2)); log(2x) for huge x; NaN below 1.
    one = f.c(1.0)
    t = f.sub(x, one)
    small = f.log1p(f.add(t, f.sqrt(f.add(f.add(t, t), f.mul(t, t)))))
    big = f.add(f.log(x), f.c(math.log(2.0)))
    r = f.sel(f.cmp("olt", x, f.c(1e18)), small, big)
    return f.sel(f.cmp("olt", x, one), f.c(np.nan), r)


@_unary("atanh")
def _atanh(f, x):
    # atanh(|x|) = log1p(2|x| / (1 - |x|)) / 2: +-inf at +-1, NaN outside [-1, 1].
    ax = f.abs(x)
    one = f.c(1.0)
    r = f.mul(f.c(0.5), f.log1p(f.div(f.add(ax, ax), f.sub(one, ax))))
    r = f.sel(f.cmp("ogt", ax, one), f.c(np.nan), r)
    return f.copysign(r, x)


# --- roots, powers and logs of two ----------------------------------------------------------

@_unary("cbrt")
def _cbrt(f, x):
    # |x| ** (1/3) with a Newton step (y - (y^3 - a) / (3 y^2)); zeros, infs and NaNs pass.
    ax = f.abs(x)
    y = math_d.PowFOp(ax, f.c(1.0 / 3.0)).result
    y = f.sub(y, f.div(f.sub(f.mul(f.mul(y, y), y), ax), f.mul(f.c(3.0), f.mul(y, y))))
    special = f.or_(f.cmp("oeq", ax, f.c(0.0)), f.cmp("ueq", ax, f.c(np.inf)))
    return f.copysign(f.sel(special, ax, y), x)


@_unary("exp2")
def _exp2(f, x):
    return math_d.Exp2Op(x).result


@_unary("log2")
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


# --- error function -----------------------------------------------------------------------

# Cephes' f32 erfc, as XLA's ErfcImpl32: erfc(x) = exp(-x^2) / |x| * P(1/x^2) for
# 1 <= |x| < 2 and R(1/x^2) for |x| >= 2.
_ERFC_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
           -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
           3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)
_ERFC_R = (-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0,
           2.921019019210786e+0, -1.015265279202700e+0, 4.218463358204948e-1,
           -2.820767439740514e-1, 5.641895067754075e-1)


@_unary("erfc")
def _erfc(f, x):
    one = f.c(1.0)
    ax = f.abs(x)
    z = f.exp(f.neg(f.mul(x, x)))
    q = f.div(one, ax)
    y = f.mul(q, q)
    p = f.sel(f.cmp("olt", ax, f.c(2.0)), f.poly(y, _ERFC_P), f.poly(y, _ERFC_R))
    tail = f.mul(f.mul(z, q), p)
    tail = f.sel(f.cmp("oeq", z, f.c(0.0)), f.c(0.0), tail)
    tail = f.sel(f.cmp("olt", x, f.c(0.0)), f.sub(f.c(2.0), tail), tail)
    near = f.sub(one, math_d.ErfOp(x).result)
    return f.sel(f.cmp("ogt", ax, one), tail, near)


# Giles, "Approximating the erfinv function" (single precision), as XLA's ErfInv32.
_ERFINV_LT5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
               0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_GE5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@_unary("erf_inv")
def _erf_inv(f, x):
    w = f.neg(f.log1p(f.neg(f.mul(x, x))))
    lt = f.cmp("olt", w, f.c(5.0))
    p_small = f.poly(f.sub(w, f.c(2.5)), _ERFINV_LT5)
    p_big = f.poly(f.sub(f.sqrt(w), f.c(3.0)), _ERFINV_GE5)
    r = f.mul(f.sel(lt, p_small, p_big), x)
    ax = f.abs(x)
    r = f.sel(f.cmp("oeq", ax, f.c(1.0)), f.copysign(f.c(np.inf), x), r)
    return f.sel(f.cmp("ogt", ax, f.c(1.0)), f.c(np.nan), r)


# --- gamma family -------------------------------------------------------------------------

# Lanczos' approximation with g = 7, n = 9 (as XLA's Lgamma and Digamma).
_LANCZOS_G = 7.0
_LANCZOS_C0 = 0.99999999999980993227684700473478
_LANCZOS_C = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
              771.3234287776530788486528258894, -176.61502916214059906584551354,
              12.507343278686904814458936853, -0.13857109526572011689554707,
              9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _reflect_z(f, x):
    """(needs reflection, z): lgamma/digamma(x) are computed from z + 1 = 1 - x or x."""
    need = f.cmp("olt", x, f.c(0.5))
    return need, f.sel(need, f.neg(x), f.sub(x, f.c(1.0)))


def _sin_pi_frac(f, x):
    """|sin(pi x)| computed from the fractional part of |x| (exact zeros at integers)."""
    ax = f.abs(x)
    frac = f.sub(ax, f.floor(ax))
    frac = f.sel(f.cmp("ogt", frac, f.c(0.5)), f.sub(f.c(1.0), frac), frac)
    return f.abs(f.sin(f.mul(f.c(np.pi), frac)))


@_unary("lgamma")
def _lgamma(f, x):
    need, z = _reflect_z(f, x)
    a = f.c(_LANCZOS_C0)
    for i, ci in enumerate(_LANCZOS_C):
        a = f.add(a, f.div(f.c(ci), f.add(z, f.c(i + 1.0))))
    gh = _LANCZOS_G + 0.5
    t = f.add(f.c(gh), z)
    log_t = f.add(f.c(math.log(gh)), f.log1p(f.div(z, f.c(gh))))
    log_y = f.add(f.add(f.c(0.5 * math.log(2 * math.pi)),
                        f.mul(f.sub(f.add(z, f.c(0.5)), f.div(t, log_t)), log_t)), f.log(a))
    reflected = f.sub(f.sub(f.c(math.log(math.pi)), log_y), f.log(_sin_pi_frac(f, x)))
    r = f.sel(need, reflected, log_y)
    inf = f.c(np.inf)
    return f.sel(f.cmp("oeq", f.abs(x), inf), inf, r)


@_unary("digamma")
def _digamma(f, x):
    # d/dz lgamma(z + 1) = log(t) - g / t + A'(z) / A(z), t = z + g + 1/2; reflection:
    # digamma(x) = digamma(1 - x) - pi / tan(pi x).
    need, z = _reflect_z(f, x)
    a, da = f.c(_LANCZOS_C0), f.c(0.0)
    for i, ci in enumerate(_LANCZOS_C):
        d = f.add(z, f.c(i + 1.0))
        a = f.add(a, f.div(f.c(ci), d))
        da = f.sub(da, f.div(f.c(ci), f.mul(d, d)))
    gh = _LANCZOS_G + 0.5
    t = f.add(f.c(gh), z)
    log_t = f.add(f.c(math.log(gh)), f.log1p(f.div(z, f.c(gh))))
    y = f.add(f.sub(log_t, f.div(f.c(_LANCZOS_G), t)), f.div(da, a))
    frac = f.sub(x, f.floor(x))
    pix = f.mul(f.c(np.pi), frac)
    reflected = f.sub(y, f.div(f.mul(f.c(np.pi), f.cos(pix)), f.sin(pix)))
    r = f.sel(need, reflected, y)
    pole = f.and_(f.cmp("ole", x, f.c(0.0)), f.cmp("oeq", x, f.floor(x)))
    r = f.sel(pole, f.c(np.nan), r)
    return f.sel(f.cmp("oeq", x, f.c(np.inf)), x, r)


# --- bits: signbit, copysign, nextafter -----------------------------------------------------

@scalar("signbit")
def _signbit_emit(args, dt, out_dt, attrs):
    return _signbit(args[0], dt)


@scalar("copysign")
@_in_f32
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
    away = arith.XOrIOp(_cmpf("olt", xc, yc), _signbit(x, dt)).result
    step = arith.SelectOp(away, ic(1), ic(-1)).result
    r = arith.BitcastOp(elem(dt), arith.AddIOp(ix, step).result).result
    # From +-0: the smallest subnormal with y's sign.
    sign_y = arith.AndIOp(iy, ic(-(1 << (bits - 1)))).result
    tiny = arith.BitcastOp(elem(dt), arith.OrIOp(sign_y, ic(1)).result).result
    r = arith.SelectOp(_cmpf("oeq", xc, zero), tiny, r).result
    r = arith.SelectOp(_cmpf("oeq", xc, yc), y, r).result
    unordered = _cmpf("uno", xc, yc)
    nan = scalar_const(np.nan, dt)
    return arith.SelectOp(unordered, nan, r).result
