"""Math functions ember computes itself for accuracy: sin/cos/tan keep their accuracy far
from zero and near it (ember reduces the argument: IREE's expansions gave sin(1e10) = -6e21,
tan(3e38) NaN, and lost digits at sin(-1e-3) and tan(-1e-5)); float32 powers are computed in
float64 (2 ** 126 was 3e-6 off); float64 functions IREE calls libm for (which it cannot link
on the CPU) are built from others, or written out (erf, erfc)."""

import numpy as np
import pytest

import ember

SIN = ember.jit(lambda x: (ember.lax.sin(x), ember.lax.cos(x)))


def _float32_magnitudes(rng, n):
    """n float32s of each decimal exponent from 1e-3 to 1e38, and their negatives."""
    x = np.concatenate([10.0 ** e * (1 + 9 * rng.random(n)) for e in range(-3, 38)])
    x = x[x < np.finfo(np.float32).max].astype(np.float32)
    return np.concatenate([x, -x])


def test_float32_sin_cos_within_ulps_at_every_magnitude():
    """Arguments beyond pi/4 are reduced by Payne and Hanek's method: sin(1e15) had been
    0.06 for 0.99, and Cody-Waite's reduction lost 120 ulps near multiples of pi from 1e3."""
    x = _float32_magnitudes(np.random.default_rng(0), 400)
    x = np.concatenate([x, np.float32([np.finfo(np.float32).max, 1e15, 3e20, 1e30, 1414.0])])
    s, c = SIN(x)
    for got, fn in ((s, np.sin), (c, np.cos)):
        want = fn(x.astype(np.float64))
        ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        err = np.abs(np.asarray(got).astype(np.float64) - want) / ulp
        assert err.max() <= 2, x[np.argmax(err)]


def _near_multiples_of_half_pi(limit):
    """The float32s nearest each multiple of pi/2 up to ``limit`` and their neighbours two
    ulps either side, with both signs: where a reduction that loses digits shows it."""
    k = np.arange(0, int(limit / (np.pi / 2)) + 1)
    x = (k * (np.pi / 2)).astype(np.float32)
    x = np.concatenate([x, *(np.nextafter(x, np.float32(s * np.inf)) for s in (1, -1)),
                        *(np.nextafter(np.nextafter(x, np.float32(s * np.inf)),
                                       np.float32(s * np.inf)) for s in (1, -1))])
    x = x[np.abs(x) <= limit]
    return np.concatenate([x, -x])


def test_float32_small_arguments_reduced_the_cheap_way_as_accurately():
    """sin, cos and tan of float32 arguments known to be at most trig.SMALL_ARGUMENT (here
    constants, which ember-value-ranges bounds) are reduced by Cody and Waite's three-part
    subtraction: within 2 ulps of float64 NumPy at the floats nearest every multiple of
    pi/2 up to that bound and at random ones, as the exact reduction is (the same arguments
    given at run time with one huge one beside them, which the run-time check sends down
    the exact path)."""
    from ember.dialects.trig import SMALL_ARGUMENT
    limit = SMALL_ARGUMENT * 0.999      # (the pass leaves room for rounding below the bound)
    rng = np.random.default_rng(3)
    x = np.concatenate([_near_multiples_of_half_pi(limit), rng.uniform(-limit, limit, 100000),
                        np.float32([limit, -limit, 0.0, -0.0, 1e-30])])
    x = x.astype(np.float32)
    cheap = ember.jit(lambda: (ember.lax.sin(x), ember.lax.cos(x), ember.lax.tan(x)))
    text = cheap.lower().as_text("optimized")
    assert text.count("small_arguments = true") == 3 and "ember.cond" not in text
    # (Payne and Hanek's normalization counts leading zeros; Cody and Waite's does not)
    assert "math.ctlz" not in cheap.lower().as_text("linalg")
    exact = ember.jit(lambda v: (ember.lax.sin(v), ember.lax.cos(v), ember.lax.tan(v)))
    huge = np.append(x, np.float32(1e30))
    x64 = x.astype(np.float64)
    for got, ref, fn in zip(cheap(), exact(huge), (np.sin, np.cos, np.tan)):
        want = fn(x64)
        for g in (got, np.asarray(ref)[:-1]):
            g = np.asarray(g).astype(np.float64)
            if fn is np.tan:        # relative to tan's condition (see the test below)
                scale = np.minimum(np.abs(x64), 1.0) * (1 + want * want) * 2.0 ** -24 \
                    + np.abs(want) * 3e-7
                assert (np.abs(g - want) <= 2 * scale + 1e-30).all(), fn
            else:
                ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
                err = np.abs(g - want) / ulp
                assert err.max() <= 2, (fn, x[np.argmax(err)], err.max())
        assert np.signbit(np.asarray(got)[-2]) == (fn is not np.cos)   # f(-0.0)


def test_unbounded_large_operand_checked_at_run_time():
    """ember-value-ranges checks a large operand it cannot bound at run time: the cheap
    reduction when every element is at most SMALL_ARGUMENT, the exact one when one is not
    (a huge value, an infinity, a NaN), each right; small operands are not checked."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-1e5, 1e5, 1 << 16).astype(np.float32)
    f = ember.jit(lambda v: ember.numpy.cos(v) * 2.0)
    # (counted as ops: the memory plan's peak_op may name one too)
    assert f.lower(x).as_text("optimized").count('"ember.cond"(') == 1
    assert '"ember.cond"(' not in f.lower(x[:1000]).as_text("optimized")
    loop = ember.jit(lambda v: ember.lax.fori_loop(0, 3, lambda i, c: ember.numpy.sin(c), v))
    assert '"ember.cond"(' not in loop.lower(x).as_text("optimized")     # (a check per step)
    for bad in (None, 3e20, np.inf, np.nan):
        v = x.copy()
        if bad is not None:
            v[7] = bad
        with np.errstate(invalid="ignore"):
            want = np.cos(v.astype(np.float64)) * 2
        got = np.asarray(f(v)).astype(np.float64)
        ok = np.isfinite(want)
        ulp = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
        assert (np.abs(got[ok] - want[ok]) / ulp).max() <= 4, bad
        assert np.isnan(got[~ok]).all()


def test_float32_special_values():
    x = np.array([-1e-3, 1e-30, -0.0, 0.0, np.inf, -np.inf, np.nan], np.float32)
    s, c = (np.asarray(v) for v in SIN(x))
    ref = np.sin(x[:4].astype(np.float64))
    np.testing.assert_allclose(s[:4], ref, rtol=2e-7)
    assert np.signbit(s[2]) and not np.signbit(s[3])
    assert np.isnan(s[4:]).all() and np.isnan(c[4:]).all()


def test_float32_inverse_trig_within_ulps():
    """float32 atan2 (and arctan, arcsin, arccos through it) is fdlibm's reduction and series
    in float32: IREE's math.atan2 polynomial was 40 ulps off near results of 0.58."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-1, 1, 20000), np.linspace(0.55, 0.75, 20000),
                        _float32_magnitudes(rng, 20), 1 / _float32_magnitudes(rng, 20)])
    x = x.astype(np.float32)
    x = x[np.abs(x) >= np.finfo(np.float32).tiny]      # IREE's CPU code flushes subnormals
    y = rng.uniform(-3, 3, x.size).astype(np.float32)
    c = np.clip(x, -1, 1)
    got = ember.jit(lambda x, y, c: (ember.numpy.arctan(x), ember.numpy.arctan2(y, x),
                                     ember.numpy.arcsin(c), ember.numpy.arccos(c)))(x, y, c)
    x, y, c = (v.astype(np.float64) for v in (x, y, c))
    for g, want in zip(got, (np.arctan(x), np.arctan2(y, x), np.arcsin(c), np.arccos(c))):
        ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        err = np.abs(np.asarray(g).astype(np.float64) - want) / ulp
        assert err[np.abs(want) >= np.finfo(np.float32).tiny].max() <= 3


def test_float64_sin_cos():
    ember.config.update("enable_x64", True)
    try:
        rng = np.random.default_rng(1)
        x = np.concatenate([rng.uniform(-1e8, 1e8, 2048), [0.0, -1e-9, 1e22, 1.7e308],
                            rng.standard_normal(2048) * 10.0 ** rng.uniform(0, 308, 2048)])
        s, c = ember.jit(lambda x: (ember.lax.sin(x), ember.lax.cos(x)))(x)
        assert s.dtype == np.float64
        np.testing.assert_allclose(np.asarray(s), np.sin(x), rtol=0, atol=3e-16)
        np.testing.assert_allclose(np.asarray(c), np.cos(x), rtol=0, atol=3e-16)
    finally:
        ember.config.update("enable_x64", False)


def test_float64_tanh():
    """IREE links no libm tanh for float64: ember builds it from expm1 and a series."""
    ember.config.update("enable_x64", True)
    try:
        x = np.concatenate([np.linspace(-30, 30, 601), np.logspace(-300, 1.5, 500),
                            -np.logspace(-20, 0, 100), [0.0, -0.0, np.inf, -np.inf, 710.0]])
        y = ember.jit(ember.lax.tanh)(x)
        assert y.dtype == np.float64
        np.testing.assert_allclose(np.asarray(y), np.tanh(x), rtol=4e-15, atol=0)
        assert np.signbit(np.asarray(y)[-4]) and np.isnan(np.asarray(ember.lax.tanh(np.nan)))
    finally:
        ember.config.update("enable_x64", False)


@pytest.mark.parametrize("bound", [1.0, 6e4, None])
def test_float32_tan_against_float64_numpy(bound):
    rng = np.random.default_rng(2)
    x = _float32_magnitudes(rng, 100) if bound is None else \
        rng.uniform(-bound, bound, 4096).astype(np.float32)
    x = np.concatenate([x, np.float32([1e-5, -1e-5, -0.0, 0.0, 1.5707964, -1.5707964])])
    t = np.asarray(ember.jit(ember.lax.tan)(x))
    want = np.tan(x.astype(np.float64))
    # relative to tan's condition: an argument error of 1 ulp moves tan by (1 + tan^2) ulps
    # (past 2^24 an ulp of the argument is more than pi: the reduction is exact there)
    arg = np.minimum(np.abs(x.astype(np.float64)), 1.0) * (1 + want * want) * 2.0 ** -24
    scale = arg + np.abs(want) * 3e-7
    assert (np.abs(t - want) <= 2 * scale + 1e-30).all()
    assert np.signbit(t[-4]) and not np.signbit(t[-3])       # tan(-0.0) is -0.0


def test_float64_tan():
    """float64 tan was a libm call IREE could not link; now range-reduced like sin/cos."""
    ember.config.update("enable_x64", True)
    try:
        rng = np.random.default_rng(3)
        x = np.concatenate([rng.uniform(-1e6, 1e6, 2048), [0.0, -1e-12, 1e-300],
                            rng.standard_normal(512) * 10.0 ** rng.uniform(6, 308, 512)])
        t = ember.jit(ember.lax.tan)(x)
        assert t.dtype == np.float64
        want = np.tan(x)
        scale = np.abs(x) * (1 + want * want) * 2.0 ** -52 + np.abs(want) * 2.0 ** -50
        assert (np.abs(np.asarray(t) - want) <= 4 * scale + 1e-300).all()
    finally:
        ember.config.update("enable_x64", False)


def test_float32_power_is_correctly_rounded_where_it_is_normal():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(0, 30, 20000), [3.4028235e38, 1.1754944e-38, 0.5, 2.0,
                                                    10.0, 1e30, 1.0]]).astype(np.float32)
    y = np.concatenate([rng.uniform(-20, 20, 20000), [1, 1, 100, 126, 10, 1, 1e30]]).astype(
        np.float32)
    got = np.asarray(ember.jit(ember.numpy.power)(x, y))
    with np.errstate(over="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float32).tiny)
    ulps = np.abs(got[normal].view(np.int32).astype(np.int64)
                  - want[normal].view(np.int32).astype(np.int64))
    assert ulps.max() <= 1
    np.testing.assert_array_equal(got[-7:], want[-7:])     # x ** 1 == x at the range's ends


def test_float64_functions_iree_links_no_libm_for():
    """log2/log10, atan2 (arcsin, arccos, arctan), fmod (remainder, floor_divide) and
    lgamma's reflection called libm functions IREE cannot link for float64; ember computes
    them itself: fdlibm's atan, an exact fmod (a scalar loop for large quotients), log2 from
    log of the mantissa."""
    import scipy.special

    import ember.numpy as enp
    from ember.scipy import special
    ember.config.update("enable_x64", True)
    try:
        rng = np.random.default_rng(5)
        x = rng.standard_normal(3000) * 10.0 ** rng.uniform(-300, 300, 3000)
        y = rng.standard_normal(3000) * 10.0 ** rng.uniform(-300, 300, 3000)
        x = np.concatenate([x, [5.5, -5.5, 1e300, -0.0, np.inf, 3.0, np.nan, 1.0, 8.0, 0.0]])
        y = np.concatenate([y, [2.0, 2.0, 1e-300, 1.0, 1.0, np.inf, 1.0, 0.0, -np.inf, -1.0]])
        t = np.linspace(-1, 1, 301)
        g = np.linspace(-9.5, 30, 400)
        outs = ember.jit(lambda x, y, t, g: (
            enp.fmod(x, y), x % y, x // y, enp.arctan2(y, x), enp.arcsin(t), enp.arccos(t),
            enp.arctan(x), enp.log2(enp.abs(x)), enp.log10(enp.abs(x)), special.gammaln(g),
            special.digamma(g)))(x, y, t, g)
        assert all(o.dtype == np.float64 for o in outs)
        fmod, rem, fdiv, atan2, asin, acos, atan, log2, log10, lgamma, digamma = (
            np.asarray(o) for o in outs)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(fmod, np.fmod(x, y))          # exact, NaNs included
            np.testing.assert_array_equal(rem, np.remainder(x, y))
            np.testing.assert_array_equal(fdiv, np.floor_divide(x, y))
            assert np.signbit(fmod[-7]) and fmod[-5] == 3.0          # fmod(-0, 1), fmod(3, inf)
            for got, want in ((atan2, np.arctan2(y, x)), (atan, np.arctan(x)),
                              (log2, np.log2(np.abs(x))), (log10, np.log10(np.abs(x)))):
                # subnormal results are flushed to zero (as all of IREE's CPU arithmetic)
                np.testing.assert_allclose(got, want, rtol=5e-16, atol=np.finfo(float).tiny)
        np.testing.assert_allclose(asin, np.arcsin(t), rtol=0, atol=5e-16)
        np.testing.assert_allclose(acos, np.arccos(t), rtol=0, atol=1e-15)
        np.testing.assert_allclose(lgamma, scipy.special.gammaln(g), rtol=0, atol=1e-13)
        np.testing.assert_allclose(digamma, scipy.special.digamma(g), rtol=1e-13, atol=1e-13)
    finally:
        ember.config.update("enable_x64", False)


def test_float64_erf_and_erfc_within_ulps_of_libm():
    """IREE links no float64 erf: ember computes erf and erfc with fdlibm's rational
    approximations, within 4 ulps of C's (Python's math.erf/erfc) on normal results."""
    import math

    from ember.scipy import special
    ember.config.update("enable_x64", True)
    try:
        rng = np.random.default_rng(7)
        x = np.concatenate([rng.standard_normal(3000) * 3, rng.uniform(-27, 27, 3000),
                            [0.0, -0.0, 1e-300, 0.25, 0.84375, -0.84375, 1.25, -1.25,
                             1 / 0.35, 6.0, -6.0, 28.0, 40.0, -40.0, np.inf, -np.inf, np.nan]])
        erf, erfc = (np.asarray(v) for v in ember.jit(
            lambda x: (special.erf(x), special.erfc(x)))(x))
        assert erf.dtype == erfc.dtype == np.float64
        for got, fn in ((erf, math.erf), (erfc, math.erfc)):
            want = np.array([fn(v) for v in x])
            normal = np.abs(want) >= np.finfo(float).tiny
            err = np.abs(got - want)[normal] / np.spacing(np.abs(want[normal]))
            assert err.max() <= 4, x[normal][np.argmax(err)]
            assert (got[~normal & ~np.isnan(want)] == 0).all()   # subnormals flushed (CPU)
            assert np.isnan(got[-1])
        assert np.signbit(erf[-16]) and erf[-3] == 1 and erf[-2] == -1
        assert erfc[-3] == 0 and erfc[-2] == 2
    finally:
        ember.config.update("enable_x64", False)


def test_float64_expm1_log1p_and_their_users_keep_all_digits_near_zero():
    """IREE's float64 expm1/log1p kept about 11 digits near zero (expm1(1e-5) 1e-11 off);
    ember uses Kahan's forms, and sinh/asinh/atanh through them."""
    import ember.numpy as enp
    ember.config.update("enable_x64", True)
    try:
        x = np.concatenate([np.logspace(-300, 2.8, 1500), -np.logspace(-300, 2.8, 1500),
                            [0.0, np.inf, -np.inf, -1.0, 709.0, -800.0]])
        outs = ember.jit(lambda x: (enp.expm1(x), enp.log1p(x), enp.sinh(x), enp.arcsinh(x),
                                    enp.arctanh(x / 1000)))(x)
        with np.errstate(all="ignore"):
            wants = (np.expm1(x), np.log1p(x), np.sinh(x), np.arcsinh(x), np.arctanh(x / 1000))
        for got, want in zip(outs, wants):
            np.testing.assert_allclose(np.asarray(got), want, rtol=5e-16, atol=1e-307)
    finally:
        ember.config.update("enable_x64", False)


@pytest.mark.parametrize("dtype, limit", [(np.float32, 89.4), (np.float64, 710.0)])
def test_sinh_cosh_within_ulps(dtype, limit, config_value):
    """sinh and cosh take one exp per element (sinh's Taylor series below 1, h * h / 2 with
    h = exp(|x| / 2) where exp(|x|) overflows): within 3 ulps of the long-double values
    over the whole range, across both switches, overflowing where NumPy does."""
    import ember.numpy as enp
    config_value("enable_x64", dtype == np.float64)
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-limit, limit, 100_000), rng.uniform(-2, 2, 50_000),
                        rng.standard_normal(10_000) * 1e-4, np.nextafter(1.0, [0, 2]),
                        np.nextafter(88.0, [0, 200]), [0.0, 1e-30, limit]]).astype(dtype)
    x = np.concatenate([x, -x])
    s, c = (np.asarray(v) for v in ember.jit(lambda v: (enp.sinh(v), enp.cosh(v)))(x))
    wide = x.astype(np.longdouble)
    for got, want in ((s, np.sinh(wide)), (c, np.cosh(wide))):
        finite = np.abs(want) <= np.finfo(dtype).max
        ulp = np.spacing(np.abs(want[finite]).astype(dtype)).astype(np.longdouble)
        assert (np.abs(got[finite] - want[finite]) / ulp).max() <= 3
        assert np.isinf(got[~finite]).all()
    assert np.signbit(s[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


def test_float64_power_keeps_the_digits_of_y_log_x():
    """float64 |x| ** y is exp(y log|x|) with log|x| in two parts and y log|x| kept exactly
    (FMA): exp of the rounded product lost |y log x| ulps (10 ** 300.3 was 1.2e-13 off).
    Oracle: mpmath, 50 digits."""
    mpmath = pytest.importorskip("mpmath")
    import ember.numpy as enp
    rng = np.random.default_rng(11)
    n = 600
    x = np.concatenate([10 ** rng.uniform(-300, 300, n), rng.uniform(0, 3, n),
                        1 + rng.uniform(-1e-3, 1e-3, n), [10 ** 300.3, 2.0, 10.0, 10.0]])
    y = np.concatenate([rng.uniform(-1, 1, n), rng.uniform(-600, 600, n),
                        rng.uniform(-5e5, 5e5, n), [1.0, 1023.0, 308.0, 309.0]])
    ember.config.update("enable_x64", True)
    try:
        got = np.asarray(ember.jit(enp.power)(x, y))
    finally:
        ember.config.update("enable_x64", False)
    with mpmath.workdps(50):
        want = np.array([float(mpmath.mpf(a) ** b) for a, b in zip(x, y)])
    ok = (want >= np.finfo(float).tiny) & np.isfinite(want)
    err = np.abs(got[ok] - want[ok]) / np.spacing(want[ok])
    assert err.max() <= 4, (x[ok][np.argmax(err)], y[ok][np.argmax(err)])
    assert got[-1] == np.inf and got[-3] == 2.0 ** 1023
