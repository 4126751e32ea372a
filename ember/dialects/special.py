"""The special-function family: erf, erfc, erf_inv, lgamma and digamma: declarations,
scalar emitters and derivatives.

IREE has no accurate ``math`` dialect lowering of them (its CPU backend has none for
``math.erfc``), so they are rational approximations as XLA's: Cephes for erfc, Giles for
erf_inv, Lanczos for lgamma and digamma; float64 erf/erfc are fdlibm's. f16 and bf16 are
computed in f32.
"""

from __future__ import annotations

import math

import numpy as np

from ember._mlir import arith, math_d
from ember.rules.autodiff import const, jvp, primal, unary_jvp
from ember.rules.base import define
from ember.rules.batching import batch_elementwise, batching
from ember.rules.lowering import elem, float_unary, scalar_const
from ember.rules.type_rules import FLOAT, unary_rule

# --- declarations ---------------------------------------------------------------------------

# name: what it computes, of a floating-point operand. All are transcendental in cost (a long
# polynomial) and have no float64 form in IREE's SPIR-V lowering (f64_math).
UNARY = {
    "erf": "error function",
    "erfc": "complementary error function 1 - erf(x), accurate for large x",
    "erf_inv": "inverse error function on [-1, 1] (+-inf at +-1, NaN outside)",
    "lgamma": "log of the absolute value of the gamma function",
    "digamma": "digamma function (NaN at the non-positive integers, as XLA)",
}

for _name, _what in UNARY.items():
    define(_name, 1, unary_rule(FLOAT, None), family="elementwise", cost="transcendental",
           traits=("f64_math",), doc=f"Elementwise {_what}, of a floating-point operand.")
batching(*UNARY)(batch_elementwise)


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


# IREE quirk: tests/test_iree_quirks.py::test_erf_loses_sign_of_negative_zero
@float_unary("erf")
def _erf(f, x):
    if np.dtype(f.dt).itemsize == 8:
        return _erf64(f, x, complement=False)
    # erf is odd: IREE's expansion gave erf(-0.0) = +0.0 (NumPy, JAX: -0.0)
    return f.copysign(math_d.ErfOp(x).result, x)


# IREE quirk: tests/test_iree_quirks.py::test_float32_erfc_has_no_cpu_lowering
@float_unary("erfc")
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


@float_unary("erf_inv")
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


@float_unary("lgamma")
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


@float_unary("digamma")
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


# --- differentiation -----------------------------------------------------------------------

def _gaussian(ad, x, scale_):
    """``scale_ * exp(-x**2)``."""
    return primal(ad, "mul", const(ad, scale_, x),
                  primal(ad, "exp", primal(ad, "neg", primal(ad, "mul", x, x))))


# d/dx of each function, from x and its result y (JAX's rules).
_DERIVATIVES = {
    "erf": lambda ad, x, y: _gaussian(ad, x, 2 / math.sqrt(math.pi)),
    "erfc": lambda ad, x, y: _gaussian(ad, x, -2 / math.sqrt(math.pi)),
    "erf_inv": lambda ad, x, y: primal(ad, "mul", const(ad, math.sqrt(math.pi) / 2, y),
                                       primal(ad, "exp", primal(ad, "mul", y, y))),
    "lgamma": lambda ad, x, y: primal(ad, "digamma", x),
}
for _name, _derivative in _DERIVATIVES.items():
    jvp(_name)(unary_jvp(_derivative))


def _trigamma(ad, x):
    """polygamma(1, x) (the derivative of digamma), with ember ops: the reflection
    pi^2 / sin^2(pi x) - psi1(1 - x) below 1/2, the recurrence psi1(z) = psi1(z + 1) + 1/z^2
    up to z + 8, then the asymptotic series (relative error below 1e-13 from 8.5 up)."""
    c = lambda v: ad.const(v, x)      # noqa: E731
    reflect = primal(ad, "lt", x, c(0.5))
    z = primal(ad, "select", reflect, primal(ad, "sub", c(1), x), x)
    acc = ad.zeros(x)
    for k in range(8):
        zk = primal(ad, "add", z, c(k))
        acc = primal(ad, "add", acc, primal(ad, "div", c(1), primal(ad, "mul", zk, zk)))
    w = primal(ad, "add", z, c(8))
    r = primal(ad, "div", c(1), w)
    r2 = primal(ad, "mul", r, r)
    # 1/w + 1/(2w^2) + sum B_2k / w^(2k+1), by Horner in 1/w^2.
    series = c(7 / 6)
    for b in (-691 / 2730, 5 / 66, -1 / 30, 1 / 42, -1 / 30, 1 / 6):
        series = primal(ad, "add", primal(ad, "mul", series, r2), c(b))
    tail = primal(ad, "mul", primal(ad, "mul", series, r2), r)
    head = primal(ad, "add", r, primal(ad, "mul", c(0.5), r2))
    psi1 = primal(ad, "add", acc, primal(ad, "add", head, tail))
    s = primal(ad, "sin", primal(ad, "mul", c(math.pi), x))
    mirror = primal(ad, "sub", primal(ad, "div", c(math.pi ** 2), primal(ad, "mul", s, s)), psi1)
    return primal(ad, "select", reflect, mirror, psi1)


jvp("digamma")(unary_jvp(lambda ad, x, y: _trigamma(ad, x)))
