"""ember.numpy elementwise functions beyond the first cut.

NumPy's special cases (NaN, infinities, signed zeros) and JAX's dtype rules: functions with
a transcendental meaning make integer and bool inputs the default float dtype; ``trunc``,
``fix``, ``fmax`` ... keep integer dtypes. Also the parts of numbers: ``real``, ``imag``,
``angle``, the floating-point decomposition (``frexp``, ``ldexp``, ``modf``, ``spacing``), and
``gcd`` and ``lcm`` of integers.
"""

from __future__ import annotations

import math

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _broadcast,
    _const,
    _error,
    _float_args,
    _lift,
    _numeric,
    _promote,
    _promote_broadcast,
    _promote_inexact,
    _real_only,
    _to,
    _weak_as,
    bool_,
    floor_divide,
    full_like,
    power,
    remainder,
)
from ember.numpy._shape import _enp

__all__ = [
    "atan2", "arctan2", "exp2", "log2", "log10", "logaddexp", "logaddexp2", "fabs", "copysign",
    "hypot", "deg2rad", "rad2deg", "degrees", "radians", "trunc", "fix", "isnan", "isinf",
    "isfinite", "signbit", "nextafter", "fmax", "fmin", "nan_to_num", "heaviside", "sinc",
    "i0", "divmod", "float_power", "isposinf", "isneginf", "pow",
    "real", "imag", "angle", "frexp", "ldexp", "modf", "spacing", "gcd", "lcm",
]


@eager
def exp2(x):
    """NumPy's ``exp2``: 2 ** x, elementwise (integers become floats; complex: exp(x ln 2))."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        return lax.exp(lax.mul(x, _const(math.log(2.0), x)))
    return lax.exp2(x)


@eager
def log2(x):
    """NumPy's ``log2``: base-2 logarithm, elementwise (integers become floats; complex:
    log(x) / ln 2)."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        return lax.mul(lax.log(x), _const(1.0 / math.log(2.0), x))
    return lax.log2(x)


@eager
def fabs(x):
    """NumPy's ``fabs``: absolute value of real numbers, elementwise (integers become
    floats; complex numbers are refused, as NumPy's)."""
    (x,) = _float_args(x)
    _real_only("fabs", x)
    return lax.abs(x)


@eager
def log10(x):
    """NumPy's ``log10``, elementwise (log2(x) * log10(2); integers become floats; complex:
    log(x) / ln 10)."""
    (x,) = _float_args(x)
    if dtypes.is_complex(x.dtype):
        return lax.mul(lax.log(x), _const(1.0 / math.log(10.0), x))
    return lax.mul(lax.log2(x), _const(math.log10(2.0), x))


@eager
def atan2(x1, x2):
    """NumPy's ``arctan2``: the angle of (x2, x1), with C's signed zeros and infinities."""
    return lax.atan2(*_float_args(x1, x2, name="arctan2"))


arctan2 = atan2


@eager
def deg2rad(x):
    """Degrees to radians."""
    (x,) = _float_args(x)
    return lax.mul(x, _const(np.pi / 180.0, x))


@eager
def rad2deg(x):
    """Radians to degrees."""
    (x,) = _float_args(x)
    return lax.mul(x, _const(180.0 / np.pi, x))


radians, degrees = deg2rad, rad2deg


@eager
def copysign(x1, x2):
    """The magnitude of ``x1`` with the sign (bit) of ``x2``."""
    return lax.copysign(*_float_args(x1, x2, name="copysign"))


@eager
def nextafter(x1, x2):
    """The next float after ``x1`` towards ``x2``."""
    return lax.nextafter(*_float_args(x1, x2, name="nextafter"))


@eager
def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow; infinities and NaNs as NumPy."""
    x, y = _float_args(x1, x2, name="logaddexp")
    if x.dtype.itemsize < 4:    # in f32: the sum cancels against amax
        return _to(logaddexp(_to(x, np.float32), _to(y, np.float32)), x.dtype)
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    r = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.select(lax.ne(delta, delta), lax.add(x, y), r)


@eager
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2) without overflow."""
    x, y = _float_args(x1, x2, name="logaddexp2")
    if x.dtype.itemsize < 4:    # in f32: the sum cancels against amax
        return _to(logaddexp2(_to(x, np.float32), _to(y, np.float32)), x.dtype)
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    r = lax.add(amax, lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))),
                              _const(math.log(2.0), x)))
    return lax.select(lax.ne(delta, delta), lax.add(x, y), r)


@eager
def hypot(x1, x2):
    """sqrt(x1**2 + x2**2) without overflow; inf if either is infinite (NaN or not)."""
    x, y = _float_args(x1, x2, name="hypot")
    ax, ay = lax.abs(x), lax.abs(y)
    a, b = lax.max(ax, ay), lax.min(ax, ay)
    zero = _const(0.0, a)
    safe = lax.select(lax.eq(a, zero), _const(1.0, a), a)
    q = lax.div(b, safe)
    r = lax.mul(a, lax.sqrt(lax.add(_const(1.0, a), lax.mul(q, q))))
    r = lax.select(lax.eq(a, zero), zero, r)
    inf = _const(np.inf, a)
    return lax.select(lax.bitwise_or(lax.eq(ax, inf), lax.eq(ay, inf)), inf, r)


@eager
def trunc(x):
    """Round towards zero (integers unchanged)."""
    (x,) = _promote(x)
    _real_only("trunc", x)
    if not dtypes.is_float(x.dtype):
        return x
    return lax.select(lax.signbit(x), lax.ceil(x), lax.floor(x))


fix = trunc


@eager
def isnan(x):
    """True where ``x`` is NaN (never for integers; complex: either part)."""
    (x,) = _promote(x)
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_or(isnan(lax.real(x)), isnan(lax.imag(x)))
    if not dtypes.is_float(x.dtype):
        return full_like(x, False, bool_)
    return lax.ne(x, x)


@eager
def isinf(x):
    """True where ``x`` is +inf or -inf (complex: either part)."""
    (x,) = _promote(x)
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if not dtypes.is_float(x.dtype):
        return full_like(x, False, bool_)
    return lax.eq(lax.abs(x), _const(np.inf, x))


@eager
def isposinf(x):
    (x,) = _promote(x)
    _real_only("isposinf", x)
    if not dtypes.is_float(x.dtype):
        return full_like(x, False, bool_)
    return lax.eq(x, _const(np.inf, x))


@eager
def isneginf(x):
    (x,) = _promote(x)
    _real_only("isneginf", x)
    if not dtypes.is_float(x.dtype):
        return full_like(x, False, bool_)
    return lax.eq(x, _const(-np.inf, x))


@eager
def isfinite(x):
    """True where ``x`` is neither infinite nor NaN (always for integers; complex: both
    parts finite)."""
    (x,) = _promote(x)
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if not dtypes.is_float(x.dtype):
        return full_like(x, True, bool_)
    return lax.is_finite(x)


@eager
def signbit(x):
    """True where the sign bit is set (-0.0 and negative NaNs included)."""
    (x,) = _promote(x)
    _real_only("signbit", x)
    if dtypes.is_float(x.dtype):
        return lax.signbit(x)
    if x.dtype == bool_ or dtypes.is_unsigned(x.dtype):
        return full_like(x, False, bool_)
    return lax.lt(x, _const(0, x))


def _nan_aware(name, pick):
    def f(x1, x2):
        x, y = _promote_broadcast(x1, x2, name=name)
        if not dtypes.is_float(x.dtype):
            return pick(x, y)
        # x where it wins or y is NaN, else y (so NaN only when both are, and y of equal
        # operands: fmax(0.0, -0.0) is -0.0, as JAX's; NumPy's gives x)
        wins = lax.gt(x, y) if name == "fmax" else lax.lt(x, y)
        return lax.select(lax.bitwise_or(wins, lax.ne(y, y)), x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: elementwise {name[1:]}imum ignoring NaNs."
    return eager(f)


fmax = _nan_aware("fmax", lax.max)
fmin = _nan_aware("fmin", lax.min)


@eager
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to ``nan``, +-inf to ``posinf``/``neginf`` (default: the dtype's largest);
    complex numbers part by part, as NumPy's."""
    (x,) = _promote(x)
    if dtypes.is_complex(x.dtype):
        parts = (nan_to_num(p, copy, nan, posinf, neginf) for p in (lax.real(x), lax.imag(x)))
        return lax.complex(*parts)
    if not dtypes.is_float(x.dtype):
        return x
    info = dtypes.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    r = lax.select(lax.ne(x, x), _const(nan, x), x)
    r = lax.select(lax.eq(x, _const(np.inf, x)), _const(posinf, x), r)
    return lax.select(lax.eq(x, _const(-np.inf, x)), _const(neginf, x), r)


@eager
def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is NaN)."""
    x, h0 = _float_args(x1, x2, name="heaviside")
    zero = _const(0.0, x)
    r = lax.select(lax.lt(x, zero), zero, _const(1.0, x))
    r = lax.select(lax.eq(x, zero), h0, r)
    return _weak_as(lax.select(lax.ne(x, x), x, r), x, h0)


@eager
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (a Taylor polynomial near 0; sinc is even).

    f16 and bf16 are computed in f32: pi x rounded to 16 bits is far from the integers.
    """
    (x,) = _float_args(x)
    dt = x.dtype
    if dt.itemsize < 4:
        return _to(sinc(_to(x, np.float32)), dt)
    ax = lax.abs(x)
    px = lax.mul(_const(np.pi, x), ax)
    safe = lax.select(lax.eq(ax, _const(0.0, x)), _const(1.0, x), px)
    r = lax.div(lax.sin(safe), safe)
    u2 = lax.mul(px, px)
    taylor = _const(1.0 / 362880.0, x)
    for c in (-1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0):
        taylor = lax.add(lax.mul(taylor, u2), _const(c, x))
    r = lax.select(lax.lt(ax, _const(0.1, x)), taylor, r)
    # Floats from 2**nmant up are integers: sin(pi x) is 0 there (and inf stays NaN).
    big = float(2.0 ** dtypes.finfo(x.dtype).nmant)
    huge = lax.bitwise_and(lax.ge(ax, _const(big, x)), lax.is_finite(x))
    return lax.select(huge, _const(0.0, x), r)


@eager
def i0(x):
    """The modified Bessel function of the first kind, order 0: ``ember.scipy.special.i0``
    (Cephes' Chebyshev expansions of exp(-|x|) I0(x)); f16/bf16 in f32.

    Example:
        >>> enp.i0(np.array([0.0, 1.0], np.float32))
        Array([1.       , 1.2660658], dtype=float32)
    """
    from ember.scipy import special
    return special.i0(x)


@eager
def divmod(x1, x2):  # noqa: A001
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


@eager
def float_power(x1, x2):
    """``x1 ** x2`` in floating point: floats keep their dtype, integers and bools become the
    default float dtype (JAX's rule; NumPy's goes to float64)."""
    x, y = _float_args(x1, x2, name="float_power")
    return lax.pow(x, y)


@eager
def pow(x1, x2):  # noqa: A001
    """NumPy 2's alias of ``power``."""
    return power(x1, x2)


# --- real and imaginary parts, angle ---------------------------------------------------------

@eager
def real(val):
    """The real part of ``val`` (float32 of complex64; real arrays are their own real part).

    Example:
        >>> enp.real(enp.array([1 + 2j, 3 - 1j]))
        Array([1., 3.], dtype=float32)
    """
    x = _lift(val)
    return lax.real(x) if dtypes.is_complex(x.dtype) else x


@eager
def imag(val):
    """The imaginary part of ``val`` (float32 of complex64; zeros for real arrays).

    Example:
        >>> enp.imag(enp.array([1 + 2j, 3 - 1j]))
        Array([ 2., -1.], dtype=float32)
    """
    x = _lift(val)
    return lax.imag(x) if dtypes.is_complex(x.dtype) else _enp().zeros_like(x)


@eager
def angle(z, deg=False):
    """The counterclockwise angle of ``z`` from the positive real axis, atan2(imag, real),
    in radians (degrees with ``deg``). As in JAX, the result of real input is the default
    float dtype unless ``z`` is a floating array (of 1 or more dimensions), which keeps its
    dtype; complex64 gives float32.

    Example:
        >>> enp.angle(enp.array([-2.0, 1j, 3.0]))
        Array([3.1415927, 1.5707964, 0.       ], dtype=float32)
    """
    enp = _enp()
    x = _lift(z)
    if dtypes.is_complex(x.dtype):
        out = enp.arctan2(lax.imag(x), lax.real(x))
        return enp.degrees(out) if deg else out
    dt = np.dtype(x.dtype)
    if not dtypes.is_float(dt) or x.ndim == 0:
        dt = dtypes.default_float()
    re = lax.convert_element_type(x, dt)
    out = enp.arctan2(lax.broadcast_in_dim(_to(0, re.dtype), re.shape, ()), re)
    return enp.degrees(out) if deg else out


# --- floating-point decomposition, spacing ---------------------------------------------------

_UINT = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _fparams(dt):
    info = dtypes.finfo(dt)
    nmant, minexp, maxexp = int(info.nmant), int(info.minexp), int(info.maxexp)
    nexp = np.dtype(dt).itemsize * 8 - 1 - nmant
    return nmant, minexp, maxexp, nexp, 1 - minexp


def _uconst(v, like):
    return lax.broadcast_in_dim(_lift(np.asarray(v, like.dtype)), like.shape, ())


def _frexp(x):
    """(mantissa, int32 exponent, mask of 0/inf/NaN) of ``x`` by its bits, so that subnormal
    inputs decompose exactly even where the backend flushes them to zero in arithmetic."""
    dt = x.dtype
    nmant, minexp, _, nexp, bias = _fparams(dt)
    ut = _UINT[np.dtype(dt).itemsize]
    width = 8 * ut.itemsize
    b = lax.bitcast_convert_type(x, ut)
    sign = lax.bitwise_and(b, _uconst(1 << (width - 1), b))
    mag = lax.bitwise_and(b, _uconst((1 << (width - 1)) - 1, b))
    frac_mask = (1 << nmant) - 1
    ef = lax.shift_right_logical(mag, _uconst(nmant, mag))
    f = lax.bitwise_and(mag, _uconst(frac_mask, mag))
    i32 = np.dtype(np.int32)
    e_normal = lax.sub(_to(ef, i32), _const(bias - 1, _to(ef, i32)))
    # A subnormal: f = 2**p * 1.xxx with p the position of its highest set bit (counted in
    # 32 bits at least: IREE's SPIR-V lowering has no 16-bit ctlz).
    wide = _to(f, np.dtype(np.uint32)) if width < 32 else f
    p = lax.sub(_const(max(width, 32) - 1, _to(ef, i32)), _to(lax.clz(wide), i32))
    e_sub = lax.add(p, _const(minexp - nmant + 1, p))
    shift = _to(lax.max(lax.sub(_const(nmant, p), p), _const(0, p)), ut)
    f_sub = lax.bitwise_and(lax.shift_left(f, shift), _uconst(frac_mask, f))
    is_sub = lax.eq(ef, _uconst(0, ef))
    e = lax.select(is_sub, e_sub, e_normal)
    fm = lax.select(is_sub, f_sub, f)
    mb = lax.bitwise_or(lax.bitwise_or(sign, fm), _uconst((bias - 1) << nmant, b))
    m = lax.bitcast_convert_type(mb, dt)
    special = lax.bitwise_or(lax.eq(mag, _uconst(0, mag)),
                             lax.eq(ef, _uconst((1 << nexp) - 1, ef)))
    return lax.select(special, x, m), lax.select(special, _const(0, e), e), special


@eager
def frexp(x):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``, ``0.5 <= |mantissa| <
    1`` (0, inf and NaN keep ``x`` and exponent 0); the exponent is int32."""
    (x,) = _promote_inexact(x)
    m, e, special = _frexp(x)
    # JAX's derivative of the mantissa, t * 2**-e, through a term that is +0 in value (the
    # bits carry none; see ldexp); 0, inf and NaN are their own mantissas already.
    _, minexp, maxexp, _, _ = _fparams(x.dtype)
    k = lax.max(lax.min(lax.neg(e), _const(maxexp - 1, e)), _const(minexp, e))
    slope = lax.mul(lax.sub(lax.stop_gradient(x), x), _pow2(k, x.dtype))
    return lax.select(special, m, lax.sub(m, slope)), e


def _pow2(k, dt):
    """2**k for int32 ``k`` within the normal exponent range of ``dt``, exactly (by bits)."""
    nmant, _, _, _, bias = _fparams(dt)
    ut = _UINT[np.dtype(dt).itemsize]
    biased = _to(lax.add(k, _const(bias, k)), ut)
    return lax.bitcast_convert_type(lax.shift_left(biased, _uconst(nmant, biased)), dt)


@eager
def ldexp(x1, x2):
    """``x1 * 2**x2`` elementwise (``x2`` integer): exact, overflowing to infinity; a subnormal
    result is rounded once, or flushed to zero where the backend flushes subnormals (the
    CPU does)."""
    (x,) = _promote_inexact(x1)
    (n,) = _numeric(*_promote(x2))      # a bool exponent is 0 or 1, as in JAX
    if not dtypes.is_int(n.dtype):
        _error(f"ldexp: x2 must be an integer array, got {n.dtype}")
    x, n = _broadcast(x, n, name="ldexp")
    dt = x.dtype
    _, minexp, maxexp, _, _ = _fparams(dt)
    big = 4096
    if dtypes.is_unsigned(n.dtype):
        n = lax.min(n, _const(big, n))
    elif n.dtype.itemsize > 2:
        n = lax.max(lax.min(n, _const(big, n)), _const(-big, n))
    n = _to(n, np.int32)
    m, e, special = _frexp(x)
    total = lax.add(lax.add(e, n), _const(-1, e))        # x == (2 m) * 2**total
    lo, hi = _const(minexp, total), _const(maxexp - 1, total)
    s1 = lax.max(lax.min(total, hi), lo)
    s2 = lax.max(lax.min(lax.sub(total, s1), hi), lo)
    r = lax.mul(lax.mul(lax.mul(m, _const(2, m)), _pow2(s2, dt)), _pow2(s1, dt))
    # The mantissa comes from the bits, which carry no derivative: x enters once more through
    # a term that is +0 in value (stop_gradient(x) - x, times 2**n) and has JAX's slope 2**n
    # (its ldexp is x1 * 2**x2). Subtracting +0 keeps r's value, -0.0 included.
    scale = _pow2(lax.max(lax.min(n, hi), lo), dt)
    r = lax.sub(r, lax.mul(lax.sub(lax.stop_gradient(x), x), scale))
    return lax.select(special, x, r)


@eager
def modf(x):
    """``(fractional, integral)`` parts of ``x``, both with ``x``'s sign (NumPy's values for
    infinities: fractional part 0)."""
    enp = _enp()
    (x,) = _promote_inexact(x)
    whole = enp.trunc(x)
    frac = lax.sub(x, whole)
    frac = lax.select(lax.eq(lax.abs(x), _const(np.inf, x)), _const(0, x), frac)
    return enp.copysign(frac, x), whole


@eager
def spacing(x, /):
    """The distance from ``x`` to the next representable number away from zero (the
    smallest subnormal, signed, where that distance rounds to 0).

    Example:
        >>> enp.spacing(enp.float32(1.0))
        Array(1.1920929e-07, dtype=float32)
    """
    enp = _enp()
    (a,) = _promote_inexact(x)
    inf = _const(np.inf, a)
    if a.dtype == np.float16:
        return lax.sub(enp.nextafter(a, inf), a)
    r = lax.sub(enp.nextafter(a, enp.copysign(inf, a)), a)
    tiny = _const(float(np.finfo(a.dtype).smallest_subnormal), a)
    return enp.where(r == 0, enp.copysign(tiny, a), r)


# --- gcd, lcm --------------------------------------------------------------------------------

def _int_pair(name, x1, x2):
    x, y = _promote_broadcast(x1, x2, name=name)
    if not dtypes.is_int(x.dtype):
        _error(f"{name}: arguments must be integers, got {x.dtype}")
    return x, y


def _gcd(x, y):
    """Euclid's algorithm, elementwise. Signed integers run on -|x| and -|y|, which never
    overflow (|INT_MIN| does, and the loop never ended on it); the result is negated back
    (gcd(INT_MIN, 0) wraps to INT_MIN, as NumPy's)."""
    enp = _enp()
    signed = not dtypes.is_unsigned(x.dtype)

    def cond(c):
        return enp.any(lax.ne(c[1], _const(0, c[1])))

    def body(c):
        a, b = c
        nz = lax.ne(b, _const(0, b))
        safe = lax.select(nz, b, _const(1, b))
        a, b = lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe), _const(0, b))
        swap = lax.gt(a, b) if signed else lax.lt(a, b)      # the larger magnitude first
        return lax.select(swap, b, a), lax.select(swap, a, b)

    if signed:
        x, y = (lax.neg(enp.abs(v)) for v in (x, y))
        return lax.neg(lax.while_loop(cond, body, (x, y))[0])
    return lax.while_loop(cond, body, (x, y))[0]


@eager
def gcd(x1, x2):
    """Greatest common divisor of ``|x1|`` and ``|x2|``, elementwise (integers; gcd(0, 0) is
    0)."""
    return _gcd(*_int_pair("gcd", x1, x2))


@eager
def lcm(x1, x2):
    """Least common multiple of ``|x1|`` and ``|x2|``, elementwise (integers; 0 if either is
    0)."""
    enp = _enp()
    x, y = _int_pair("lcm", x1, x2)
    d = _gcd(x, y)
    zero = lax.eq(d, _const(0, d))
    safe = lax.select(zero, _const(1, d), d)
    # |x| * (|y| / gcd), wrapping on overflow as NumPy's and JAX's (the sign of the wrap too)
    return lax.select(zero, _const(0, d), lax.mul(enp.abs(x), enp.abs(lax.div(y, safe))))
