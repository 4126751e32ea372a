"""Lowering of complex operands: complex64 and complex128 as (real, imaginary) pairs.

The ``complex`` dialect's add, sub, mul, neg, conj, re, im, create, eq and neq become plain
float arithmetic in IREE and give NumPy's values. Its other ops do not serve: IREE 3.13
cannot compile them for complex128 (they call float64 libm functions it cannot link), and
for complex64 they were far off (``complex.exp`` of 1e30j gave -inf - inf i, of 700j was
2e-5 off; ``complex.pow`` 1e-5) or wrong at special values (``complex.log`` of 0 gave
-inf + nan i, ``complex.sqrt`` of -1 - 0i gave +i, ``complex.div`` of 0 by inf + inf i gave
0). Those are formulas on the parts here, built on ember's accurate real emitters (its
range-reduced sin/cos/tan, exp, expm1, log1p, atan2, sinh, cosh, asinh), as NumPy computes
them: Smith's division, C99's special values (Annex G) for exp, log, sqrt, the hyperbolic
functions and tanh (Kahan's algorithm), Kahan's branch cuts for the inverse functions.
complex64 computes ``abs``, ``log`` and ``sqrt`` in float64 where the target has it (no
overflow, no scaling, about half an ulp).
"""

from __future__ import annotations

import math

import numpy as np

from ember import dtypes
from ember._mlir import arith, complex_d, ir, linalg, tensor, walk
from ember.passes.lower_math import _F
from ember.rules.lowering import (
    COMPLEX_SCALAR,
    LOWERINGS,
    SCALAR,
    TRAITS,
    _in_dispatch_region,
    elem,
    generic,
    identity_map,
    lower_elementwise,
    optimization_barrier,
    scalar_const,
)

__all__: list[str] = []


# --- parts ----------------------------------------------------------------------------------

def _re(z) -> ir.Value:
    return complex_d.ReOp(z).result


def _im(z) -> ir.Value:
    return complex_d.ImOp(z).result


def _make(re_, im_, dt) -> ir.Value:
    return complex_d.CreateOp(elem(dt), re_, im_).result


class _P(_F):
    """Float arithmetic on the parts' dtype, with the real functions ember lowers itself."""

    def fn(self, name, *args):
        return SCALAR[name](list(args), self.dt, self.dt, {})

    def isinf(self, a):
        return self.cmp("oeq", self.abs(a), self.c(np.inf))

    def isnan(self, a):
        return self.cmp("uno", a, a)

    def finite(self, a):
        return self.cmp("olt", self.abs(a), self.c(np.inf))

    def eq0(self, a):
        return self.cmp("oeq", a, self.c(0.0))

    def not_(self, a):
        return arith.XOrIOp(a, scalar_const(True, dtypes.bool_)).result

    @staticmethod
    def max(a, b):
        return arith.MaximumFOp(a, b).result

    @staticmethod
    def min(a, b):
        return arith.MinimumFOp(a, b).result

    def signbit(self, a):
        from ember.rules.lowering import _signbit
        return _signbit(a, self.dt)


def _complex(name):
    """Register ``fn(P, args, dt, out_dt)`` as the complex emitter of ``name``: operands
    are complex values, ``P`` the arithmetic of their parts."""
    def deco(fn):
        def emit(args, dt, out_dt, attrs):
            part = dtypes.real_dtype(dt if dtypes.is_complex(dt) else out_dt)
            return fn(_P(part), args, np.dtype(dt), np.dtype(out_dt))
        COMPLEX_SCALAR[name] = emit
        return fn
    return deco


def _complex_only(name):
    """Register an op that exists for complex operands only (real, imag, complex, conj)."""
    def deco(fn):
        def emit(args, dt, out_dt, attrs):
            part = dtypes.real_dtype(dt if dtypes.is_complex(dt) else out_dt)
            return fn(_P(part), args, np.dtype(dt), np.dtype(out_dt))
        SCALAR[name] = emit
        LOWERINGS[f"ember.{name}"] = lower_elementwise
        return fn
    return deco


def _wide(p: _P) -> bool:
    """Whether float32 parts are computed in float64 (the target has it)."""
    return p.dt.itemsize == 4 and TRAITS.get().float64


def _ext(p: _P, *xs):
    f64 = ir.F64Type.get()
    return [arith.ExtFOp(f64, x).result for x in xs]


def _trunc(p: _P, *xs):
    return [arith.TruncFOp(elem(p.dt), x).result for x in xs]


# --- the complex dialect's exact ops ----------------------------------------------------------

@_complex("add")
def _add(p, args, dt, out_dt):
    return complex_d.AddOp(*args).result


@_complex("sub")
def _sub(p, args, dt, out_dt):
    return complex_d.SubOp(*args).result


@_complex("mul")
def _mul(p, args, dt, out_dt):
    return complex_d.MulOp(*args).result


@_complex("neg")
def _neg(p, args, dt, out_dt):
    return complex_d.NegOp(args[0]).result


@_complex("eq")
def _eq(p, args, dt, out_dt):
    return complex_d.EqualOp(*args).result


@_complex("ne")
def _ne(p, args, dt, out_dt):
    return complex_d.NotEqualOp(*args).result


@_complex_only("conj")
def _conj(p, args, dt, out_dt):
    return complex_d.ConjOp(args[0]).result


@_complex_only("real")
def _real(p, args, dt, out_dt):
    return _re(args[0])


@_complex_only("imag")
def _imag(p, args, dt, out_dt):
    return _im(args[0])


@_complex_only("complex")
def _create(p, args, dt, out_dt):
    return _make(args[0], args[1], out_dt)


# --- division, abs, sign ----------------------------------------------------------------------

def _div_parts(p: _P, a, b, c, d):
    """(a + bi) / (c + di) by Smith's algorithm, as NumPy's (the same operations, so the
    same values and the same infinities and NaNs)."""
    ac, ad = p.abs(c), p.abs(d)
    one = p.c(1.0)
    # |c| >= |d|: ratio d / c
    rat1 = p.div(d, c)
    scl1 = p.div(one, p.add(c, p.mul(d, rat1)))
    re1 = p.mul(p.add(a, p.mul(b, rat1)), scl1)
    im1 = p.mul(p.sub(b, p.mul(a, rat1)), scl1)
    # division by zero: a / |c|, b / |c| (a complex infinity or NaN)
    zero = p.and_(p.eq0(ac), p.eq0(ad))
    re1 = p.sel(zero, p.div(a, ac), re1)
    im1 = p.sel(zero, p.div(b, ac), im1)
    # |c| < |d| (or a NaN): ratio c / d
    rat2 = p.div(c, d)
    scl2 = p.div(one, p.add(d, p.mul(c, rat2)))
    re2 = p.mul(p.add(p.mul(a, rat2), b), scl2)
    im2 = p.mul(p.sub(p.mul(b, rat2), a), scl2)
    first = p.cmp("oge", ac, ad)
    return p.sel(first, re1, re2), p.sel(first, im1, im2)


@_complex("div")
def _div(p, args, dt, out_dt):
    (x, y) = args
    return _make(*_div_parts(p, _re(x), _im(x), _re(y), _im(y)), dt)


def _hypot(p: _P, x, y):
    """|x + yi| without overflow or underflow: inf where a part is infinite (NaN or not)."""
    ax, ay = p.abs(x), p.abs(y)
    if _wide(p):
        wx, wy = _ext(p, x, y)
        f = _F(np.dtype(np.float64))
        (r,) = _trunc(p, f.sqrt(f.add(f.mul(wx, wx), f.mul(wy, wy))))
    else:
        a, b = p.max(ax, ay), p.min(ax, ay)
        q = p.div(b, a)
        r = p.mul(a, p.sqrt(p.add(p.c(1.0), p.mul(q, q))))
        r = p.sel(p.eq0(a), p.c(0.0), r)
    return p.sel(p.or_(p.isinf(ax), p.isinf(ay)), p.c(np.inf), r)


@_complex("abs")
def _abs(p, args, dt, out_dt):
    (z,) = args
    return _hypot(p, _re(z), _im(z))


@_complex("sign")
def _sign(p, args, dt, out_dt):
    """z / |z| and 0 at 0 (NumPy 2's and JAX's), with NumPy's infinities: +-1 along an
    infinite part when the other is finite or NaN, NaN when both are infinite."""
    (z,) = args
    x, y = _re(z), _im(z)
    r = _hypot(p, x, y)
    zero = p.eq0(r)
    safe = p.sel(zero, p.c(1.0), r)
    re_, im_ = p.div(x, safe), p.div(y, safe)
    re_, im_ = p.sel(zero, p.c(0.0), re_), p.sel(zero, p.c(0.0), im_)
    one, nothing, nan = p.c(1.0), p.c(0.0), p.c(np.nan)
    unit_x = p.sel(p.cmp("ogt", x, nothing), one, p.c(-1.0))
    unit_y = p.sel(p.cmp("ogt", y, nothing), one, p.c(-1.0))
    x_inf, y_inf = p.isinf(x), p.isinf(y)
    inf_re = p.sel(x_inf, p.sel(y_inf, nan, unit_x), nothing)
    inf_im = p.sel(x_inf, p.sel(y_inf, nan, nothing), unit_y)
    infinite = p.isinf(r)
    return _make(p.sel(infinite, inf_re, re_), p.sel(infinite, inf_im, im_), dt)


# --- exp, log, sqrt, pow --------------------------------------------------------------------

def _exp_parts(p: _P, x, y):
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


@_complex("exp")
def _exp(p, args, dt, out_dt):
    (z,) = args
    return _make(*_exp_parts(p, _re(z), _im(z)), dt)


@_complex("expm1")
def _expm1(p, args, dt, out_dt):
    """NumPy's: (expm1(x) cos y - 2 sin^2(y / 2), exp(x) sin y), without cancellation near
    0; exp(z)'s parts (and their overflow handling) where exp(x) overflows; the imaginary
    part is y itself where y is 0."""
    (z,) = args
    x, y = _re(z), _im(z)
    h = p.sin(p.mul(y, p.c(0.5)))
    re_ = p.sub(p.mul(p.expm1(x), p.cos(y)), p.mul(p.c(2.0), p.mul(h, h)))
    big_re, im_ = _exp_parts(p, x, y)
    big = p.cmp("ogt", x, p.c(float(np.log(np.finfo(p.dt).max))))
    return _make(p.sel(big, big_re, re_), im_, dt)


def _log_abs(p: _P, x, y):
    """log|x + yi|: 0.5 log1p((a - 1)(a + 1) + b^2) (a = max(|x|, |y|), b the other) near
    |z| = 1, where log|z| cancels; log|z| elsewhere, scaled by 1/4 where |z| could
    overflow (complex64: 0.5 log(a^2 + b^2) in float64)."""
    ax, ay = p.abs(x), p.abs(y)
    a, b = p.max(ax, ay), p.min(ax, ay)
    inf = p.or_(p.isinf(ax), p.isinf(ay))
    if _wide(p):    # a^2 + b^2 neither overflows nor underflows in float64
        wa, wb = _ext(p, a, b)
        f = _P(np.dtype(np.float64))
        one, half = f.c(1.0), f.c(0.5)
        s = f.add(f.mul(f.sub(wa, one), f.add(wa, one)), f.mul(wb, wb))
        sq = f.add(f.mul(wa, wa), f.mul(wb, wb))
        is_near = f.and_(f.cmp("oge", sq, half), f.cmp("ole", sq, f.c(2.0)))
        (r,) = _trunc(p, f.mul(half, f.sel(is_near, f.log1p(s), f.log(sq))))
        return p.sel(inf, p.c(np.inf), r)
    one = p.c(1.0)
    near = p.mul(p.c(0.5), p.log1p(p.add(p.mul(p.sub(a, one), p.add(a, one)), p.mul(b, b))))
    huge = p.cmp("ogt", a, p.c(float(np.finfo(p.dt).max) / 4))
    quarter = p.c(0.25)
    h = _hypot(p, p.sel(huge, p.mul(x, quarter), x), p.sel(huge, p.mul(y, quarter), y))
    far = p.add(p.log(h), p.sel(huge, p.c(math.log(4.0)), p.c(0.0)))
    h1 = _hypot(p, x, y)
    is_near = p.and_(p.cmp("oge", h1, p.c(0.71)), p.cmp("ole", h1, p.c(1.73)))
    return p.sel(inf, p.c(np.inf), p.sel(is_near, near, far))


def _log_parts(p: _P, x, y):
    return _log_abs(p, x, y), p.atan2(y, x)


@_complex("log")
def _log(p, args, dt, out_dt):
    (z,) = args
    return _make(*_log_parts(p, _re(z), _im(z)), dt)


@_complex("log1p")
def _log1p(p, args, dt, out_dt):
    """log(1 + z) without cancellation near 0 (NumPy's is the plain log(1 + z)):
    0.5 log1p(x (2 + x) + y^2) while |1 + z|^2 is within [1/2, 3/2], log|1 + z| beyond
    (complex64: both in float64)."""
    (z,) = args
    x, y = _re(z), _im(z)
    one = p.c(1.0)
    u = p.add(one, x)
    im_ = p.atan2(y, u)
    inf = p.or_(p.isinf(x), p.isinf(y))
    if _wide(p):    # (1 + x)^2 + y^2 neither overflows nor underflows in float64
        wx, wy = _ext(p, x, y)
        f = _P(np.dtype(np.float64))
        s = f.add(f.mul(wx, f.add(f.c(2.0), wx)), f.mul(wy, wy))
        wu = f.add(f.c(1.0), wx)
        sq = f.add(f.mul(wu, wu), f.mul(wy, wy))
        half = f.c(0.5)
        is_near = f.cmp("olt", f.abs(s), half)
        (re_,) = _trunc(p, f.mul(half, f.sel(is_near, f.log1p(s), f.log(sq))))
        return _make(p.sel(inf, p.c(np.inf), re_), im_, dt)
    s = p.add(p.mul(x, p.add(p.c(2.0), x)), p.mul(y, y))
    near = p.mul(p.c(0.5), p.log1p(s))
    is_near = p.cmp("olt", p.abs(s), p.c(0.5))
    re_ = p.sel(is_near, near, _log_abs(p, u, y))
    return _make(p.sel(inf, p.c(np.inf), re_), im_, dt)


def _sqrt_parts(p: _P, x, y):
    """NumPy's csqrt (C99's): t = sqrt((|x| + |z|) / 2), then (t, y / 2t) for x >= 0 and
    (|y| / 2t, copysign(t, y)) for x < 0, scaled by 1/4 near overflow (complex64: in
    float64); special values as C99."""
    wide = _wide(p)
    f = _P(np.dtype(np.float64)) if wide else p
    wx, wy = _ext(p, x, y) if wide else (x, y)
    huge = f.or_(f.cmp("oge", f.abs(wx), f.c(0.7453 * float(np.finfo(f.dt).max))),
                 f.cmp("oge", f.abs(wy), f.c(0.7453 * float(np.finfo(f.dt).max))))
    quarter = f.c(0.25)
    sx, sy = f.sel(huge, f.mul(wx, quarter), wx), f.sel(huge, f.mul(wy, quarter), wy)
    t = f.sqrt(f.mul(f.add(f.abs(sx), _hypot(f, sx, sy)), f.c(0.5)))
    two_t = f.add(t, t)
    pos_re, pos_im = t, f.div(sy, two_t)
    neg_re, neg_im = f.div(f.abs(sy), two_t), f.copysign(t, sy)
    neg = f.cmp("olt", sx, f.c(0.0))
    re_, im_ = f.sel(neg, neg_re, pos_re), f.sel(neg, neg_im, pos_im)
    scale = f.sel(huge, f.c(2.0), f.c(1.0))
    re_, im_ = f.mul(re_, scale), f.mul(im_, scale)
    if wide:
        re_, im_ = _trunc(p, re_, im_)
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


@_complex("sqrt")
def _sqrt(p, args, dt, out_dt):
    (z,) = args
    return _make(*_sqrt_parts(p, _re(z), _im(z)), dt)


@_complex("rsqrt")
def _rsqrt(p, args, dt, out_dt):
    (z,) = args
    re_, im_ = _sqrt_parts(p, _re(z), _im(z))
    return _make(*_div_parts(p, p.c(1.0), p.c(0.0), re_, im_), dt)


@_complex("pow")
def _pow(p, args, dt, out_dt):
    """exp(y log x), with NumPy's special cases: x ** 0 is 1 (NaN x too); 0 ** y is 0 where
    Re y > 0 and NaN elsewhere."""
    x, y = args
    a, b = _re(x), _im(x)
    c, d = _re(y), _im(y)
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
    return _make(re_, im_, dt)


# --- trigonometric and hyperbolic -----------------------------------------------------------

def _hyperbolic(p: _P, x, y, even: bool):
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


def _sinh_parts(p: _P, x, y):
    """(sinh x cos y, cosh x sin y); the imaginary part is y where y is 0, the real part x
    where x is 0 and y is not finite; (inf, NaN) for an infinite x and a y infinite or NaN
    (C99 leaves the sign open; NumPy's is +)."""
    re_, im_ = _hyperbolic(p, x, y, even=False)
    re_ = p.sel(p.and_(p.eq0(x), p.not_(p.finite(y))), x, re_)
    im_ = p.sel(p.eq0(y), y, im_)
    inf_nan = p.and_(p.isinf(x), p.not_(p.finite(y)))
    return p.sel(inf_nan, p.c(np.inf), re_), p.sel(inf_nan, p.c(np.nan), im_)


def _cosh_parts(p: _P, x, y):
    """(cosh x cos y, sinh x sin y); a zero imaginary part where y is 0 (its sign that of
    the product) and where x is 0 and y is not finite; (inf, NaN) for an infinite x and a y
    infinite or NaN (C99)."""
    re_, im_ = _hyperbolic(p, x, y, even=True)
    im_ = p.sel(p.and_(p.eq0(x), p.not_(p.finite(y))), p.c(0.0), im_)
    im_ = p.sel(p.eq0(y), p.mul(y, p.copysign(p.c(1.0), x)), im_)
    inf_nan = p.and_(p.isinf(x), p.not_(p.finite(y)))
    return p.sel(inf_nan, p.c(np.inf), re_), p.sel(inf_nan, p.c(np.nan), im_)


def _tanh_parts(p: _P, x, y):
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
    @_complex(name)
    def emit(p, args, dt, out_dt):
        (z,) = args
        return _make(*parts(p, _re(z), _im(z)), dt)
    return emit


def _cos_parts(p: _P, x, y):
    return _cosh_parts(p, p.neg(y), x)        # cos z = cosh(iz)


for _name, _parts in {"sinh": _sinh_parts, "cosh": _cosh_parts, "tanh": _tanh_parts,
                      "sin": _rotated(_sinh_parts), "cos": _cos_parts,
                      "tan": _rotated(_tanh_parts)}.items():
    _register_parts(_name, _parts)


# --- inverse trigonometric and hyperbolic (Kahan's formulas) --------------------------------

def _big(p: _P, x, y):
    """Where |z| is so large that log(2z) is the inverse functions' asymptote within an
    ulp (and 1 +- z would lose z's digits or be infinite)."""
    bound = p.c(1e9 if p.dt.itemsize == 8 else 1e5)
    return p.or_(p.cmp("ogt", p.abs(x), bound), p.cmp("ogt", p.abs(y), bound))


def _log2z(p: _P, x, y):
    """log|2z| = log|z| + log 2."""
    return p.add(_log_abs(p, x, y), p.c(math.log(2.0)))


def _csqrt(p: _P, x, y):
    return _sqrt_parts(p, x, y)


def _asin_parts(p: _P, x, y):
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


def _acos_parts(p: _P, x, y):
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


def _acosh_parts(p: _P, x, y):
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


def _atanh_parts(p: _P, x, y):
    """NumPy's catanh away from infinities: (copysign(log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4,
    x), atan2(2y, (1 - x)(1 + x) - y^2) / 2) (the real part in float64 for complex64); for
    a large |z|, atanh(1/z) + i copysign(pi/2, y) with atanh(1/z) = 1/z within an ulp."""
    one = p.c(1.0)
    ax = p.abs(x)
    wide = _wide(p)
    f = _P(np.dtype(np.float64)) if wide else p
    wx, wy = _ext(p, ax, y) if wide else (ax, y)
    omx = f.sub(f.c(1.0), wx)
    re_ = f.mul(f.c(0.25), f.log1p(f.div(f.mul(f.c(4.0), wx),
                                         f.add(f.mul(omx, omx), f.mul(wy, wy)))))
    if wide:
        (re_,) = _trunc(p, re_)
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


# --- complex splats IREE cannot materialize -------------------------------------------------

def materialize_complex_splats(module: ir.Module) -> None:
    """Rewrite each complex splat tensor (a splat ``arith.constant`` or a ``linalg.fill``)
    that IREE would keep as a buffer of its own (one read by anything but a linalg op: a
    return, ``tensor.insert_slice``, a scatter, a loop) as ``complex.create`` of two float
    fills, one behind ``util.optimization_barrier`` (else IREE folds them into one splat). IREE
    3.13 splats buffers with integers of at most 64 bits (complex128 failed: "stream.async.
    splat ... but got 'i128'") and made an invalid ``arith.constant`` of a complex64 splat
    that a slice is inserted into ("failed to satisfy constraint: TypedAttr")."""
    for op in list(walk(module.operation)):
        if op.name not in ("arith.constant", "linalg.fill") or len(op.results) != 1:
            continue
        t = op.results[0].type
        if not isinstance(t, ir.RankedTensorType) or \
                not isinstance(ir.RankedTensorType(t).element_type, ir.ComplexType):
            continue
        if op.name == "arith.constant":
            attr = op.attributes["value"]
            if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
                continue
        if _in_dispatch_region(op) or all(u.owner.name.startswith("linalg.")
                                          for u in op.results[0].uses):
            continue
        t = ir.RankedTensorType(t)
        with ir.InsertionPoint(op), op.location:
            if op.name == "arith.constant":
                value = complex_d.ConstantOp(t.element_type,
                                             ir.ArrayAttr(attr.get_splat_value())).result
            else:
                value = op.operands[0]
            part_t = ir.RankedTensorType.get(t.shape, ir.ComplexType(t.element_type).element_type)
            re_, im_ = (linalg.fill(f, outs=[tensor.EmptyOp(t.shape, part_t.element_type)
                                             .result])
                        for f in (_re(value), _im(value)))
            re_ = optimization_barrier(re_)
            rank = len(t.shape)
            (new,) = generic([re_, im_], [identity_map(rank)] * 2,
                             [tensor.EmptyOp(t.shape, t.element_type).result],
                             [identity_map(rank)], ["parallel"] * rank,
                             lambda a, b, _o, et=t.element_type: [
                                 complex_d.CreateOp(et, a, b).result])
        op.results[0].replace_all_uses_with(new)
        op.erase()
