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
from ember.rules.lowering import SCALAR, _cmpf, _in_f32, _signbit, elem, scalar, scalar_const

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

    def sin(self, a):   # range-reduced (lower_trig); IREE links no float64 libm sin
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
        from ember.rules.lowering import SCALAR
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
    # |x| ** (1/3) with a Newton step (y - (y - a / y^2) / 3, which does not overflow near
    # the largest floats as y^3 - a did: Vulkan's cbrt(FLT_MAX) was inf); zeros, infs and
    # NaNs pass.
    ax = f.abs(x)
    y = math_d.PowFOp(ax, f.c(1.0 / 3.0)).result
    y = f.sub(y, f.div(f.sub(y, f.div(ax, f.mul(y, y))), f.c(3.0)))
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


# float64: fdlibm's s_erf.c (Sun, 1993), rational approximations on |x| < 0.84375,
# < 1.25, < 1/0.35 and beyond (erfc(x) = exp(-x^2 - 0.5625 + R/S) / x), under 1 ulp.
# Coefficients from the highest power down.
_ERF_PP = (-2.37630166566501626084e-05, -5.77027029648944159157e-03,
           -2.84817495755985104766e-02, -3.25042107247001499370e-01, 1.28379167095512558561e-01)
_ERF_QQ = (-3.96022827877536812320e-06, 1.32494738004321644526e-04, 5.08130628187576562776e-03,
           6.50222499887672944485e-02, 3.97917223959155352819e-01, 1.0)
_ERF_PA = (-2.16637559486879084300e-03, 3.54783043256182359371e-02, -1.10894694282396677476e-01,
           3.18346619901161753674e-01, -3.72207876035701323847e-01, 4.14856118683748331666e-01,
           -2.36211856075265944077e-03)
_ERF_QA = (1.19844998467991074170e-02, 1.36370839120290507362e-02, 1.26171219808761642112e-01,
           7.18286544141962662868e-02, 5.40397917702171048937e-01, 1.06420880400844228286e-01,
           1.0)
_ERF_RA = (-9.81432934416914548592e+00, -8.12874355063065934246e+01, -1.84605092906711035994e+02,
           -1.62396669462573470355e+02, -6.23753324503260060396e+01, -1.05586262253232909814e+01,
           -6.93858572707181764372e-01, -9.86494403484714822705e-03)
_ERF_SA = (-6.04244152148580987438e-02, 6.57024977031928170135e+00, 1.08635005541779435134e+02,
           4.29008140027567833386e+02, 6.45387271733267880336e+02, 4.34565877475229228821e+02,
           1.37657754143519042600e+02, 1.96512716674392571292e+01, 1.0)
_ERF_RB = (-4.83519191608651397019e+02, -1.02509513161107724954e+03, -6.37566443368389627722e+02,
           -1.60636384855821916062e+02, -1.77579549177547519889e+01, -7.99283237680523006574e-01,
           -9.86494292470009928597e-03)
_ERF_SB = (-2.24409524465858183362e+01, 4.74528541206955367215e+02, 2.55305040643316442583e+03,
           3.19985821950859553908e+03, 1.53672958608443695994e+03, 3.25792512996573918826e+02,
           3.03380607434824582924e+01, 1.0)
_ERX = 8.45062911510467529297e-01       # erf(1) rounded to float32


def _erf64(f, x, complement: bool):
    """erf(x), or erfc(x) when ``complement``, for float64 (IREE links no libm erf): each
    interval's formula computed, the one for |x| selected."""
    one, ax = f.c(1.0), f.abs(x)
    neg = f.cmp("olt", x, f.c(0.0))
    # |x| < 0.84375: erf = x + x R(x^2)
    z = f.mul(x, x)
    y = f.div(f.poly(z, _ERF_PP), f.poly(z, _ERF_QQ))
    erf1 = f.add(x, f.mul(x, y))
    erfc1 = f.sel(f.cmp("olt", x, f.c(0.25)), f.sub(one, erf1),
                  f.sub(f.c(0.5), f.add(f.mul(x, y), f.sub(x, f.c(0.5)))))
    # |x| < 1.25: erf(1 + s) = erx + P(s)/Q(s)
    s = f.sub(ax, one)
    pq = f.div(f.poly(s, _ERF_PA), f.poly(s, _ERF_QA))
    erf2 = f.copysign(f.add(f.c(_ERX), pq), x)
    erfc2 = f.sel(neg, f.add(one, f.add(f.c(_ERX), pq)), f.sub(f.c(1.0 - _ERX), pq))
    # beyond: erfc(|x|) = exp(-z^2 - 0.5625) exp((z - x)(z + x) + R/S) / |x|, z = |x| with
    # its low 32 bits cleared so that z^2 is exact
    t = f.div(one, f.mul(ax, ax))
    near = f.cmp("olt", ax, f.c(1 / 0.35))
    rs = f.sel(near, f.div(f.poly(t, _ERF_RA), f.poly(t, _ERF_SA)),
               f.div(f.poly(t, _ERF_RB), f.poly(t, _ERF_SB)))
    i64 = elem(np.dtype("int64"))
    hi = arith.BitcastOp(f.c(0.0).type, arith.AndIOp(
        arith.BitcastOp(i64, ax).result,
        scalar_const(-(1 << 32), np.dtype("int64"))).result).result
    r = f.mul(f.exp(f.sub(f.neg(f.mul(hi, hi)), f.c(0.5625))),
              f.exp(f.add(f.mul(f.sub(hi, ax), f.add(hi, ax)), rs)))
    tail = f.div(r, ax)                                   # erfc(|x|); 0 past about 27
    tail = f.sel(f.cmp("olt", ax, f.c(28.0)), tail, f.c(0.0))
    if complement:
        far = f.sel(neg, f.sub(f.c(2.0), tail), tail)
        out = f.sel(f.cmp("olt", ax, f.c(1.25)), erfc2, far)
        out = f.sel(f.cmp("olt", ax, f.c(0.84375)), erfc1, out)
    else:
        far = f.copysign(f.sub(one, tail), x)
        out = f.sel(f.cmp("olt", ax, f.c(1.25)), erf2, far)
        out = f.sel(f.cmp("olt", ax, f.c(0.84375)), erf1, out)
    return f.sel(f.cmp("uno", x, x), x, out)      # NaN; infinities come out of `far`


@_unary("erf")
def _erf(f, x):
    if np.dtype(f.dt).itemsize == 8:
        return _erf64(f, x, complement=False)
    # erf is odd: IREE's expansion gave erf(-0.0) = +0.0 (NumPy, JAX: -0.0)
    return f.copysign(math_d.ErfOp(x).result, x)


@_unary("erfc")
def _erfc(f, x):
    if np.dtype(f.dt).itemsize == 8:
        return _erf64(f, x, complement=True)
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


# Giles' double-precision polynomials, in w < 6.25, w < 16 and beyond (as XLA's ErfInv64).
_ERFINV64 = (
    (6.25, 3.125, (-3.6444120640178196996e-21, -1.685059138182016589e-19,
                   1.2858480715256400167e-18, 1.115787767802518096e-17,
                   -1.333171662854620906e-16, 2.0972767875968561637e-17,
                   6.6376381343583238325e-15, -4.0545662729752068639e-14,
                   -8.1519341976054721522e-14, 2.6335093153082322977e-12,
                   -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                   1.051212273321532285e-09, -4.1126339803469836976e-09,
                   -2.9070369957882005086e-08, 4.2347877827932403518e-07,
                   -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                   0.0001867342080340571352, -0.00074070253416626697512,
                   -0.0060336708714301490533, 0.24015818242558961693,
                   1.6536545626831027356)),
    (16.0, 3.25, (2.2137376921775787049e-09, 9.0756561938885390979e-08,
                  -2.7517406297064545428e-07, 1.8239629214389227755e-08,
                  1.5027403968909827627e-06, -4.013867526981545969e-06,
                  2.9234449089955446044e-06, 1.2475304481671778723e-05,
                  -4.7318229009055733981e-05, 6.8284851459573175448e-05,
                  2.4031110387097893999e-05, -0.0003550375203628474796,
                  0.00095328937973738049703, -0.0016882755560235047313,
                  0.0024914420961078508066, -0.0037512085075692412107,
                  0.005370914553590063617, 1.0052589676941592334,
                  3.0838856104922207635)),
    (np.inf, 5.0, (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
                   1.5076572693500548083e-09, -3.7894654401267369937e-09,
                   7.6157012080783393804e-09, -1.4960026627149240478e-08,
                   2.9147953450901080826e-08, -6.7711997758452339498e-08,
                   2.2900482228026654717e-07, -9.9298272942317002539e-07,
                   4.5260625972231537039e-06, -1.9681778105531670567e-05,
                   7.5995277030017761139e-05, -0.00021503011930044477347,
                   -0.00013871931833623122026, 1.0103004648645343977,
                   4.8499064014085844221)))


@_unary("erf_inv")
def _erf_inv(f, x):
    ax = f.abs(x)
    # w = -log((1 - x)(1 + x)), whose first factor is exact: -log1p(-x^2) (XLA's) rounded
    # x^2, 64 ulps off at 0.99983 in float32 and 7e14 at 1 - 2^-53 in float64
    one = f.c(1.0)
    w = f.neg(f.log(f.mul(f.sub(one, ax), f.add(one, ax))))
    if np.dtype(f.dt).itemsize == 8:
        p = None                     # the first polynomial is in w, the others in sqrt(w)
        for i, (bound, centre, coeffs) in reversed(list(enumerate(_ERFINV64))):
            q = f.poly(f.sub(f.sqrt(w) if i else w, f.c(centre)), coeffs)
            p = q if p is None else f.sel(f.cmp("olt", w, f.c(bound)), q, p)
    else:
        p = f.sel(f.cmp("olt", w, f.c(5.0)), f.poly(f.sub(w, f.c(2.5)), _ERFINV_LT5),
                  f.poly(f.sub(f.sqrt(w), f.c(3.0)), _ERFINV_GE5))
    r = f.mul(p, x)
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
    # Poles are +inf, as JAX's: below -4e36 in float32 (-1e306 in float64; every such x is
    # an integer) log_y overflowed and log(pi) - inf - log(0) was NaN.
    pole = f.and_(f.cmp("ole", x, f.c(0.0)), f.cmp("oeq", x, f.floor(x)))
    return f.sel(f.or_(pole, f.cmp("oeq", f.abs(x), inf)), inf, r)


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
    # pi / tan(pi x) has period 1: reduce x by its nearest integer, exactly (x - floor(x)
    # rounded 1 - 1e-8 to 1, and digamma(-1e-8) came out -3.6e7, not 1e8).
    frac = f.sub(x, f.floor(f.add(x, f.c(0.5))))
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
