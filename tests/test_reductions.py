"""Reductions and statistics of ember.numpy against NumPy.

Many reductions share one jitted program per (axis, keepdims) case to keep compiles few.
"""

import warnings

import helpers
import ml_dtypes
import numpy as np
import pytest
from helpers import eager_and_jit

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, ConcretizationError, EmberError, TracingError

RNG = np.random.default_rng(0)
X3 = RNG.uniform(-3, 3, (3, 4, 5)).astype(np.float32)
X3N = X3.copy()
X3N[0, 1, 2] = np.nan
X3N[2, :, 4] = np.nan


def close(got, want, rtol=2e-5, atol=1e-5, dtype=None):
    want = np.asarray(want)
    got_np = np.asarray(got)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if dtype is not None:
        assert got_np.dtype == np.dtype(dtype), (got_np.dtype, dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_np, want)
    else:
        np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


_STATS = {
    "sum": (enp.sum, np.sum), "prod": (enp.prod, np.prod), "max": (enp.max, np.max),
    "min": (enp.min, np.min), "mean": (enp.mean, np.mean), "var": (enp.var, np.var),
    "std": (enp.std, np.std), "ptp": (enp.ptp, np.ptp), "median": (enp.median, np.median),
    "count_nonzero": (lambda x, axis, keepdims: enp.count_nonzero(x > 0, axis=axis,
                                                                  keepdims=keepdims),
                      lambda x, axis, keepdims: np.count_nonzero(x > 0, axis=axis,
                                                                 keepdims=keepdims)),
    "all": (lambda x, axis, keepdims: enp.all(x > -2, axis=axis, keepdims=keepdims),
            lambda x, axis, keepdims: np.all(x > -2, axis=axis, keepdims=keepdims)),
    "any": (lambda x, axis, keepdims: enp.any(x > 2.5, axis=axis, keepdims=keepdims),
            lambda x, axis, keepdims: np.any(x > 2.5, axis=axis, keepdims=keepdims)),
}
_NAN_STATS = {"nansum": (enp.nansum, np.nansum), "nanmean": (enp.nanmean, np.nanmean),
              "nanmax": (enp.nanmax, np.nanmax), "nanmin": (enp.nanmin, np.nanmin),
              "nanvar": (enp.nanvar, np.nanvar), "nanstd": (enp.nanstd, np.nanstd),
              "nanmedian": (enp.nanmedian, np.nanmedian)}


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), (-1, False),
                                           ((0, 2), True)])
def test_reductions_over_axes(axis, keepdims):
    def f(x, xn):
        out = {k: ef(x, axis=axis, keepdims=keepdims) for k, (ef, _) in _STATS.items()}
        out.update({k: ef(xn, axis=axis, keepdims=keepdims)
                    for k, (ef, _) in _NAN_STATS.items()})
        out["quantile"] = enp.quantile(x, [0.1, 0.5, 1.0], axis=axis, keepdims=keepdims)
        out["median_nan"] = enp.median(xn, axis=axis, keepdims=keepdims)
        return out
    got = ember.jit(f)(X3, X3N)
    for k, (_, nf) in _STATS.items():
        close(got[k], nf(X3, axis=axis, keepdims=keepdims), rtol=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for k, (_, nf) in _NAN_STATS.items():
            close(got[k], nf(X3N, axis=axis, keepdims=keepdims), rtol=1e-4)
    close(got["quantile"], np.quantile(X3, [0.1, 0.5, 1.0], axis=axis, keepdims=keepdims))
    close(got["median_nan"], np.median(X3N, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["int32", "bool", "float16", "uint8"])
def test_reduction_dtypes(dtype):
    x = (RNG.integers(0, 4, (4, 6)) if dtype != "float16" else
         RNG.uniform(-2, 2, (4, 6))).astype(dtype)

    def f(x):
        out = {"sum": enp.sum(x, axis=0), "prod": enp.prod(x[:2], axis=1),
               "max": enp.max(x, axis=1), "min": enp.min(x), "mean": enp.mean(x, axis=0),
               "cumsum": enp.cumsum(x, axis=1), "cumprod": enp.cumprod(x[:, :3], axis=0),
               "count": enp.count_nonzero(x, axis=1), "median": enp.median(x, axis=1)}
        if dtype != "bool":
            out["var"] = enp.var(x, axis=1)
            out["ptp"] = enp.ptp(x, axis=0)
        return out
    got = ember.jit(f)(x)
    rtol = 2e-3 if dtype == "float16" else 1e-5
    # JAX's dtypes: bools and small ints sum as int32 (uint8 as uint32); cumulative sums and
    # products keep a small int's dtype (bools count in int32).
    sum_dt = {"bool": "int32", "uint8": "uint32", "int32": "int32", "float16": "float16"}[dtype]
    cum_dt = "int32" if dtype == "bool" else dtype
    float_dt = "float16" if dtype == "float16" else "float32"
    close(got["sum"], np.sum(x, axis=0).astype(sum_dt), rtol, dtype=sum_dt)
    close(got["prod"], np.prod(x[:2], axis=1).astype(sum_dt), rtol, dtype=sum_dt)
    close(got["cumsum"], np.cumsum(x, axis=1).astype(cum_dt), rtol, dtype=cum_dt)
    close(got["cumprod"], np.cumprod(x[:, :3], axis=0).astype(cum_dt), rtol, dtype=cum_dt)
    close(got["max"], np.max(x, axis=1), dtype=dtype)
    close(got["min"], np.min(x), dtype=dtype)
    close(got["mean"], np.mean(x, axis=0), rtol, dtype=float_dt)
    close(got["count"], np.count_nonzero(x, axis=1), dtype="int32")
    close(got["median"], np.median(x, axis=1), rtol, dtype=float_dt)
    if dtype != "bool":
        close(got["var"], np.var(x.astype(np.float64), axis=1), rtol, 1e-3, dtype=float_dt)
        close(got["ptp"], np.ptp(x, axis=0), dtype=dtype)


def test_where_initial_dtype():
    x = X3[0]
    m = RNG.random((4, 5)) < 0.6
    m[1] = False
    row = np.array([True, False, True, True, False])

    def f(x, m, row):
        return {"sum": enp.sum(x, axis=1, where=m), "sum_init": enp.sum(x, initial=10.0),
                "prod": enp.prod(x, axis=0, where=m, keepdims=True),
                "max": enp.max(x, axis=1, where=m, initial=-1.0),
                "min": enp.min(x, axis=0, where=row, initial=0.5),
                "mean": enp.mean(x, axis=1, where=row), "all": enp.all(x > 0, where=m),
                "any": enp.any(x > 0, axis=0, where=m), "var": enp.var(x, axis=1, where=row),
                "nansum": enp.nansum(x, axis=0, where=m), "dtype": enp.sum(x, dtype=np.int32),
                "mean16": enp.mean(x, axis=0, dtype=np.float16)}
    got = ember.jit(f)(x, m, row)
    close(got["sum"], np.sum(x, axis=1, where=m))
    close(got["sum_init"], np.sum(x, initial=10.0))
    close(got["prod"], np.prod(x, axis=0, where=m, keepdims=True))
    close(got["max"], np.max(x, axis=1, where=m, initial=-1.0))
    close(got["min"], np.min(x, axis=0, where=row, initial=0.5))
    close(got["mean"], np.mean(x, axis=1, where=row))
    close(got["all"], np.all(x > 0, where=m))
    close(got["any"], np.any(x > 0, axis=0, where=m))
    close(got["var"], np.var(x, axis=1, where=row))
    close(got["nansum"], np.nansum(x, axis=0, where=m))
    close(got["dtype"], np.sum(x.astype(np.int32)), dtype="int32")
    close(got["mean16"], np.mean(x, axis=0, dtype=np.float16), rtol=2e-3, dtype="float16")


def test_zero_size():
    x = np.zeros((0, 3), np.float32)

    def f(x):
        return {"sum": enp.sum(x, axis=0), "prod": enp.prod(x, axis=0),
                "mean": enp.mean(x, axis=0), "max": enp.max(x, axis=0, initial=2.0),
                "any": enp.any(x), "all": enp.all(x, axis=0), "cumsum": enp.cumsum(x, axis=0),
                "count": enp.count_nonzero(x, axis=1), "sum1": enp.sum(x, axis=1),
                "var": enp.var(x, axis=0), "median": enp.median(x, axis=0)}
    got = ember.jit(f)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        close(got["sum"], np.sum(x, axis=0))
        close(got["prod"], np.prod(x, axis=0))
        close(got["mean"], np.mean(x, axis=0))
        close(got["max"], np.max(x, axis=0, initial=2.0))
        close(got["any"], np.any(x))
        close(got["all"], np.all(x, axis=0))
        close(got["cumsum"], np.cumsum(x, axis=0))
        close(got["count"], np.count_nonzero(x, axis=1))
        close(got["sum1"], np.sum(x, axis=1))
        close(got["var"], np.var(x, axis=0))
        close(got["median"], np.median(x, axis=0))


def test_quantile_methods_and_percentile():
    x = RNG.normal(size=(7, 6)).astype(np.float32)
    qs = [0.0, 0.25, 0.33, 0.5, 0.9, 1.0]

    def f(x, qt):
        out = {m: enp.quantile(x, qs, axis=1, method=m)
               for m in ("linear", "lower", "higher", "midpoint", "nearest")}
        out["pct"] = enp.percentile(x, 40, axis=0)
        out["traced_q"] = enp.quantile(x, qt, axis=0)
        out["median_even"] = enp.median(x, axis=1)
        out["median_odd"] = enp.median(x, axis=0, keepdims=True)
        out["nanq"] = enp.nanquantile(x, [0.2, 0.7], axis=1)
        return out
    qt = np.array([0.15, 0.6], np.float32)
    got = ember.jit(f)(x, qt)
    for m in ("linear", "lower", "higher", "midpoint", "nearest"):
        close(got[m], np.quantile(x, qs, axis=1, method=m), rtol=1e-5)
    close(got["pct"], np.percentile(x, 40, axis=0))
    close(got["traced_q"], np.quantile(x, qt.astype(np.float64), axis=0), rtol=1e-5)
    close(got["median_even"], np.median(x, axis=1))
    close(got["median_odd"], np.median(x, axis=0, keepdims=True))
    close(got["nanq"], np.nanquantile(x, [0.2, 0.7], axis=1))


def test_average():
    x = X3[..., :4]
    w1 = np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    w = RNG.uniform(0.1, 1, x.shape).astype(np.float32)

    def f(x, w1, w):
        return (enp.average(x), enp.average(x, axis=-1, weights=w1),
                enp.average(x, axis=(0, 1), weights=w, keepdims=True),
                enp.average(x, axis=1, weights=w1, returned=True),
                enp.average(x, axis=0, returned=True))
    a, b, c, (d, dw), (e, ew) = ember.jit(f)(x, w1, w)
    close(a, np.average(x))
    close(b, np.average(x, axis=-1, weights=w1))
    close(c, np.average(x, axis=(0, 1), weights=w, keepdims=True))
    nd, ndw = np.average(x, axis=1, weights=w1, returned=True)
    close(d, nd)
    close(dw, ndw)
    ne, new = np.average(x, axis=0, returned=True)
    close(e, ne)
    close(ew, new)
    xi = np.arange(6, dtype=np.int32)
    close(enp.average(xi, weights=np.arange(6, dtype=np.int32)),
          np.average(xi, weights=np.arange(6)), dtype="float32")


def test_cumulative_ops():
    x = X3N[:2]

    def f(x):
        return {"c0": enp.cumsum(x, axis=0), "c1": enp.cumsum(x, axis=-1),
                "cn": enp.cumsum(x), "cp": enp.cumprod(x, axis=1),
                "ncs": enp.nancumsum(x, axis=2), "ncp": enp.nancumprod(x, axis=1),
                "cs_int": enp.cumsum(x > 0, axis=1, dtype=np.int16),
                "inc": enp.cumulative_sum(x[0, 0], include_initial=True)}
    got = ember.jit(f)(x)
    close(got["c0"], np.cumsum(x, axis=0))
    close(got["c1"], np.cumsum(x, axis=-1))
    close(got["cn"], np.cumsum(x))
    close(got["cp"], np.cumprod(x, axis=1), rtol=1e-5)
    close(got["ncs"], np.nancumsum(x, axis=2))
    close(got["ncp"], np.nancumprod(x, axis=1), rtol=1e-5)
    close(got["cs_int"], np.cumsum(x > 0, axis=1, dtype=np.int16), dtype="int16")
    close(got["inc"], np.concatenate([[0], np.cumsum(x[0, 0])]))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_cumulative_sums_of_halves_accumulate_in_float32(dtype):
    # A running sum in bfloat16 stops growing at 32 when adding 0.1 (float16: at 256).
    x = np.full(4096, 0.1, dtype)
    y = (1 + np.arange(64, dtype=np.float32) / 1024).astype(dtype)
    got = ember.jit(lambda x, y: (enp.cumsum(x), enp.cumprod(y), ember.lax.cumsum(x)))(x, y)
    assert got[0].dtype == dtype and got[1].dtype == dtype
    exact = np.cumsum(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got[2]).astype(np.float64), exact, rtol=2 ** -8)
    np.testing.assert_allclose(np.asarray(got[0]).astype(np.float64), exact, rtol=2 ** -8)
    np.testing.assert_allclose(np.asarray(got[1]).astype(np.float64),
                               np.cumprod(y.astype(np.float64)), rtol=2 ** -8)


def test_eager_and_methods():
    x = X3[1]
    close(enp.var(x, axis=0, ddof=1), np.var(x, axis=0, ddof=1))
    close(enp.std(enp.asarray(x), ddof=1), np.std(x, ddof=1))
    close(enp.asarray(x).sum(axis=1, keepdims=True), x.sum(axis=1, keepdims=True))
    close(enp.asarray(x).max(0), x.max(0))


def test_errors():
    with pytest.raises(EmberError, match="initial"):
        ember.jit(lambda x: enp.max(x, where=x > 0))(X3)
    with pytest.raises(EmberError, match="zero-size"):
        ember.jit(lambda x: enp.min(x, axis=0))(np.zeros((0, 2), np.float32))
    with pytest.raises(EmberError, match="axis 3 is out of bounds"):
        ember.jit(lambda x: enp.var(x, axis=3))(X3)
    with pytest.raises(EmberError, match="range"):
        ember.jit(lambda x: enp.quantile(x, 1.5))(X3)
    with pytest.raises(EmberError, match="weights"):
        ember.jit(lambda x: enp.average(x, axis=0, weights=np.ones(7, np.float32)))(X3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_sums_accumulate_in_float32(dtype):
    # In float16 a running sum of ones stops at 2048 (2049 is not representable); JAX sums
    # halves in float32 and rounds once.
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.full((2, 5000), 0.1, dt)
    y = np.full((2, 8), 1.1, dt)
    s, p = ember.jit(lambda x, y: (x.sum(axis=1), enp.prod(y, axis=1)))(x, y)
    assert s.dtype == dt and p.dtype == dt
    np.testing.assert_array_equal(np.asarray(s), x.astype(np.float32).sum(axis=1).astype(dt))
    np.testing.assert_array_equal(np.asarray(p), y.astype(np.float32).prod(axis=1).astype(dt))


# --- differences, counting, statistics, interpolation, convolution ------------------------
# (ember/numpy/_calculus.py, _statistics.py)

_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.float32)}


def _checked(label, got, want, rtol=2e-5, atol=1e-5):
    """``got`` against NumPy's ``want``: its dtype (64-bit narrowed), shape and values."""
    want = np.asarray(want)
    dt = _NARROW.get(want.dtype, want.dtype)
    try:
        assert np.asarray(got).dtype == dt, (np.asarray(got).dtype, dt)
        close(got, want.astype(dt) if dt.kind in "biu" else want, rtol=rtol, atol=atol)
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from None


def _more_cases():
    """(label, fn(xp, x, i, v)): x (3, 4) float32, i (3, 4) int32, v (6,) increasing float32;
    fn(np, ...) is the oracle."""
    fw, aw = np.array([1, 2, 1, 3], np.int32), np.array([0.5, 1.0, 2.0, 1.0], np.float32)
    return [
        ("diff", lambda xp, x, i, v: xp.diff(x)),
        ("diff n=2 axis=0", lambda xp, x, i, v: xp.diff(i, 2, axis=0)),
        ("diff prepend append", lambda xp, x, i, v: xp.diff(x, axis=-2, prepend=0.5,
                                                             append=x[:1])),
        ("diff n=0", lambda xp, x, i, v: xp.diff(i, 0)),
        ("diff past length", lambda xp, x, i, v: xp.diff(v, 7)),
        ("diff bool", lambda xp, x, i, v: xp.diff(x > 0)),
        ("ediff1d", lambda xp, x, i, v: xp.ediff1d(i, to_begin=np.array([-1, -2], np.int32),
                                                        to_end=7)),
        ("ediff1d plain", lambda xp, x, i, v: xp.ediff1d(v)),
        ("digitize", lambda xp, x, i, v: xp.digitize(x, v)),
        ("digitize right", lambda xp, x, i, v: xp.digitize(i, np.array([-3, 0, 2, 5]),
                                                           right=True)),
        ("digitize decreasing", lambda xp, x, i, v: xp.digitize(x, v[::-1])),
        ("digitize decreasing right", lambda xp, x, i, v: xp.digitize(i, np.array([4, 1, 0]),
                                                                      right=True)),
        ("isin", lambda xp, x, i, v: xp.isin(i, np.array([0, 2, -3, 5]))),
        ("isin invert", lambda xp, x, i, v: xp.isin(x, v[:3], invert=True)),
        ("isin matrix", lambda xp, x, i, v: xp.isin(v, x)),
        ("cov", lambda xp, x, i, v: xp.cov(x)),
        ("cov rowvar ddof", lambda xp, x, i, v: xp.cov(x, rowvar=False, ddof=0)),
        ("cov y bias", lambda xp, x, i, v: xp.cov(x[0], x[1], bias=True)),
        ("cov int", lambda xp, x, i, v: xp.cov(i)),
        ("cov 1-D", lambda xp, x, i, v: xp.cov(v)),
        ("cov fweights", lambda xp, x, i, v: xp.cov(x, fweights=fw)),
        ("cov weights", lambda xp, x, i, v: xp.cov(x, fweights=fw, aweights=aw)),
        ("cov aweights ddof 0", lambda xp, x, i, v: xp.cov(x, aweights=aw, ddof=0)),
        ("corrcoef", lambda xp, x, i, v: xp.corrcoef(x)),
        ("corrcoef y", lambda xp, x, i, v: xp.corrcoef(x[0], x[2])),
        ("corrcoef cols", lambda xp, x, i, v: xp.corrcoef(i, rowvar=False)),
        ("trapezoid", lambda xp, x, i, v: xp.trapezoid(x)),
        ("trapezoid x", lambda xp, x, i, v: xp.trapezoid(x, v[:4])),
        ("trapezoid dx axis", lambda xp, x, i, v: xp.trapezoid(i, dx=0.5, axis=0)),
        ("trapezoid x nd", lambda xp, x, i, v: xp.trapezoid(x, x * 2 + v[:4], axis=0)),
        ("trapezoid empty", lambda xp, x, i, v: xp.trapezoid(x[:, :0])),
        ("polyval", lambda xp, x, i, v: xp.polyval(v[:3], x)),
        ("polyval int", lambda xp, x, i, v: xp.polyval(np.array([2, -1, 3]), i)),
        ("polyval scalar x", lambda xp, x, i, v: xp.polyval(v, 1.5)),
        ("interp", lambda xp, x, i, v: xp.interp(x, v, v * v)),
        ("interp left right", lambda xp, x, i, v: xp.interp(x, v, v * 2, left=-1.0,
                                                            right=9.0)),
        ("interp int", lambda xp, x, i, v: xp.interp(i, np.array([-4, 0, 3]),
                                                     np.array([1, 5, -2]))),
        ("interp one point", lambda xp, x, i, v: xp.interp(x, v[2:3], v[:1])),
        ("interp period", lambda xp, x, i, v: xp.interp(x, v[::-1] * 2, v, period=2.5)),
        ("interp period int", lambda xp, x, i, v: xp.interp(i, np.array([3, -4, 0]),
                                                            np.array([1, 5, -2]), period=-7)),
    ]


_MORE = _more_cases()


def test_more_statistics_jit_and_eager():
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, (3, 4)).astype(np.float32)
    i = rng.integers(-5, 6, (3, 4)).astype(np.int32)
    v = np.sort(rng.uniform(-3, 3, 6)).astype(np.float32)
    f = ember.jit(lambda x, i, v: [fn(enp, x, i, v) for _, fn in _MORE])
    for (label, fn), got in zip(_MORE, f(x, i, v), strict=True):
        with np.errstate(all="ignore"):
            want = fn(np, x, i, v)
        _checked(label, got, want, rtol=1e-4, atol=2e-5)
    for k in (0, 2, 6, 15, 23, 26, 34):      # a few eagerly, on NumPy values and Arrays
        label, fn = _MORE[k]
        want = fn(np, x, i, v)
        _checked(label, fn(enp, x, i, v), want, rtol=1e-4, atol=2e-5)
        _checked(label, fn(enp, *map(enp.asarray, (x, i, v))), want, rtol=1e-4, atol=2e-5)


def test_nanargmax_nanargmin():
    x = np.array([[np.nan, 1.0, 3.0, 3.0], [np.nan, np.nan, np.nan, np.nan],
                  [np.nan, -np.inf, 2.0, np.nan], [np.nan, -np.inf, np.nan, np.inf]], np.float32)
    ok = [0, 2, 3]
    n = np.array([[3, 1, 3], [0, -2, -2]], np.int32)

    def f(x, n):
        return (enp.nanargmax(x, axis=1), enp.nanargmin(x, axis=-1),
                enp.nanargmax(x, axis=1, keepdims=True), enp.nanargmax(x),
                enp.nanargmin(x[2:]), enp.nanargmax(x[::2, 1:], axis=0),
                enp.nanargmax(n, axis=1), enp.nanargmin(n), enp.nanargmin(n, keepdims=True))

    for outs in (ember.jit(f)(x, n), f(x, n)):
        amax, amin, keep, flat_max, flat_min, col, imax, imin, ikeep = outs
        # JAX: an all-NaN slice gives -1 (NumPy raises); the others are NumPy's answers.
        np.testing.assert_array_equal(np.asarray(amax)[ok], np.nanargmax(x[ok], axis=1))
        np.testing.assert_array_equal(np.asarray(amin)[ok], np.nanargmin(x[ok], axis=1))
        assert int(np.asarray(amax)[1]) == -1 and int(np.asarray(amin)[1]) == -1
        assert amax.dtype == np.int32 and keep.shape == (4, 1)
        assert int(flat_max) == np.nanargmax(x) and int(flat_min) == np.nanargmin(x[2:])
        np.testing.assert_array_equal(np.asarray(col), np.nanargmax(x[::2, 1:], axis=0))
        np.testing.assert_array_equal(np.asarray(imax), np.argmax(n, axis=1))
        assert int(imin) == np.argmin(n) and ikeep.shape == (1, 1)
    with pytest.raises(EmberError, match="empty sequence"):
        enp.nanargmax(np.zeros((2, 0), np.float32), axis=1)


def test_bincount():
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    w = np.linspace(0, 1, 7).astype(np.float32)

    def f(x, w):
        return (enp.bincount(x, length=8), enp.bincount(x, w, length=9),
                enp.bincount(x, length=3), enp.bincount(x, minlength=20, length=8),
                enp.bincount(x[:0], length=2))

    c, cw, short, ignored, empty = ember.jit(f)(x, w)
    close(c, np.bincount(x), dtype=np.int32)
    close(cw, np.bincount(x, w, minlength=9), dtype=np.float32)
    close(short, np.bincount(x)[:3])          # values >= length are dropped (JAX)
    close(ignored, np.bincount(x))            # length overrides minlength (JAX)
    close(empty, np.zeros(2, np.int32))
    # Outside jit the length comes from the data, as in NumPy.
    close(enp.bincount(x), np.bincount(x), dtype=np.int32)
    close(enp.bincount(enp.asarray(x), minlength=10), np.bincount(x, minlength=10))
    close(enp.bincount(x, weights=w), np.bincount(x, w), dtype=np.float32)
    close(enp.bincount(np.zeros(0, np.int32)), np.zeros(0, np.int32))
    # JAX's documented example: negative values count in bin 0, values past the end drop.
    close(enp.bincount(np.array([-1, -1, 1, 3, 10], np.int32), length=5), [2, 1, 0, 1, 0])
    with pytest.raises(EmberError, match="length="):
        ember.jit(lambda x: enp.bincount(x))(x)
    with pytest.raises(EmberError, match="integer"):
        enp.bincount(w)
    with pytest.raises(EmberError, match="1-dimensional"):
        enp.bincount(np.ones((2, 2), np.int32))
    with pytest.raises(EmberError, match="shape of weights"):
        enp.bincount(x, np.ones(3, np.float32))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(mode):
    rng = np.random.default_rng(7)
    vecs = [rng.uniform(-2, 2, n).astype(np.float32) for n in (5, 3, 4, 1, 6)]
    ints = [np.array([1, -2, 3], np.int32), np.array([2, 0, 1, 4], np.int32)]
    pairs = [(0, 1), (1, 0), (2, 2), (3, 0), (0, 3), (1, 4), (4, 2)]

    def f(vs, iv):
        out = []
        for a, b in pairs:
            out += [enp.convolve(vs[a], vs[b], mode), enp.correlate(vs[a], vs[b], mode)]
        out += [enp.convolve(iv[0], iv[1], mode), enp.correlate(iv[1], iv[0], mode)]
        return out

    wants = []
    for a, b in pairs:
        wants += [np.convolve(vecs[a], vecs[b], mode), np.correlate(vecs[a], vecs[b], mode)]
    # JAX computes integers in floating point (NumPy keeps integers).
    wants += [np.convolve(*ints, mode).astype(np.float32),
              np.correlate(ints[1], ints[0], mode).astype(np.float32)]
    for k, (got, want) in enumerate(zip(ember.jit(f)(vecs, ints), wants, strict=True)):
        _checked(f"{mode} #{k}", got, want, rtol=1e-5, atol=1e-5)
    _checked("eager", enp.convolve(vecs[0], vecs[1], mode), np.convolve(vecs[0], vecs[1], mode))
    if mode == "full":
        got = enp.convolve(ints[0], ints[1], preferred_element_type=np.int32)
        _checked("preferred int", got, np.convolve(*ints).astype(np.int32))
        with pytest.raises(EmberError, match="1-dimensional"):
            enp.convolve(np.ones((2, 2), np.float32), vecs[0])
        with pytest.raises(EmberError, match="empty"):
            enp.correlate(np.ones(0, np.float32), vecs[0])
        with pytest.raises(EmberError, match="mode"):
            enp.convolve(vecs[0], vecs[1], mode="circular")


def test_more_statistics_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(EmberError, match="diff.*non-negative"):
        enp.diff(x, -1)
    with pytest.raises(EmberError, match="diff.*one dimensional"):
        ember.jit(lambda a: enp.diff(a))(np.float32(1))
    with pytest.raises(EmberError, match="digitize.*1-dimensional"):
        enp.digitize(x, x)
    with pytest.raises(EmberError, match="cov.*more than 2"):
        enp.cov(np.ones((2, 2, 2), np.float32))
    with pytest.raises(EmberError, match="fweights"):
        enp.cov(x, fweights=np.ones(2, np.int32))
    with pytest.raises(EmberError, match="interp.*equal size"):
        enp.interp(x, np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(EmberError, match="polyval.*1-D"):
        enp.polyval(np.float32(2), x)
    with pytest.raises(EmberError, match="trapezoid.*x of shape"):
        enp.trapezoid(x, np.ones(5, np.float32))
    with pytest.raises(EmberError, match="ediff1d.*boolean"):
        enp.ediff1d(x > 0)


@pytest.mark.parametrize("shape", [(5, 1000), (2, 4097), (7, 33)])
def test_column_sum_mean_var_together(shape):
    # IREE 3.13's O3 aggressive fusion computed these wrong together on the CPU (the sum came
    # out 5x for 5 rows); ember turns that fusion off (ember/backends/cpu.py).
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    s, m, v, z = ember.jit(lambda x: (enp.sum(x, 0), enp.mean(x, 0), enp.var(x, 0),
                                      (x - x.mean(0)) / x.std(0)))(x)
    np.testing.assert_allclose(np.asarray(s), x.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(m), x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(v), x.var(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(z), (x - x.mean(0)) / x.std(0), rtol=1e-4, atol=1e-4)


def test_variance_without_degrees_of_freedom_is_nan():
    # ddof >= n: JAX gives NaN (ember had inf, from dividing by a clamped zero).
    x = np.ones((4, 5), np.float32) * np.arange(5, dtype=np.float32)
    got = ember.jit(lambda x: (enp.var(x, axis=1, ddof=5), enp.std(x, axis=1, ddof=7),
                               enp.nanvar(x, axis=0, ddof=4), enp.var(x, axis=1, ddof=4)))(x)
    for g in got[:3]:
        assert np.isnan(np.asarray(g)).all()
    np.testing.assert_allclose(np.asarray(got[3]), np.var(x, axis=1, ddof=4), rtol=1e-6)


def test_cumulative_sum_promotes_small_ints_as_sum():
    x = np.array([100, 100, 100], np.int8)
    got = enp.cumulative_sum(x)
    assert got.dtype == np.int32          # jax.numpy's; cumsum keeps int8, as JAX's
    np.testing.assert_array_equal(np.asarray(got), np.cumsum(x, dtype=np.int32))
    assert enp.cumsum(x).dtype == np.int8


def test_x64_sums_of_narrower_ints_widen_to_64_bits():
    old = ember.config.enable_x64
    ember.config.update("enable_x64", True)
    try:
        x = np.full(3, 2**30, np.int32)
        got = enp.sum(x)
        assert got.dtype == np.int64 and int(got) == 3 * 2**30     # had wrapped in int32
        assert enp.sum(np.ones(3, np.uint8)).dtype == np.uint64
        assert enp.prod(np.ones(3, np.int16)).dtype == np.int64
    finally:
        ember.config.update("enable_x64", old)


def test_long_float_sums_do_not_stall():
    """ember-tree-reductions: a float32 running total stops growing at 2^24, and IREE sums a
    column serially: ones((2**24 + 2**20, 1)).sum(0) was 16777216 and its mean 0.94."""
    n = 2**24 + 2**20
    x = np.ones((n, 1), np.float32)
    assert float(enp.sum(x, 0)[0]) == n
    got = ember.jit(lambda v: (v.sum(0) * 0.5, enp.mean(v, 0), enp.var(v, 0)))(x)
    np.testing.assert_array_equal([np.asarray(g)[0] for g in got], [n / 2, 1.0, 0.0])
    assert float(ember.jit(lambda: enp.ones(2**25).sum())()) == 2**25


def test_mean_over_a_million_rows_keeps_its_digits():
    """Means over 2^20 rows were 4e-5 off (serial sums); as sums of block sums 1e-6."""
    x = np.random.default_rng(0).standard_normal((2**20, 8)).astype(np.float32) + 3
    want = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(enp.mean(x, 0)), want.mean(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(enp.sum(x)), want.sum(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(enp.std(x[:, :3], 0)), want[:, :3].std(0), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_lax_sums_and_einsum_reductions_of_halves_accumulate_in_float32(dtype):
    """lax.reduce_sum (and einsum's pure reductions, built on it) of float16/bfloat16 sum in
    float32, as XLA's do: the oracle is the float64 sum rounded once to the dtype."""
    import ember.lax as elax

    x = np.random.default_rng(3).uniform(0.5, 1.5, (3, 20000)).astype(dtype)
    want = x.astype(np.float64).sum(1).astype(dtype).astype(np.float64)
    for got in (elax.reduce_sum(x, (1,)), enp.einsum("ij->i", x)):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=1e-2)


@pytest.mark.parametrize("decimals", [1, 2, -1])
def test_round_of_float16_with_decimals_as_jax(decimals):
    """float16 values scaled in float16 (25.02 * 10 = 250.1) rounded wrongly for 15-35% of
    all float16 values, and 65504 * 10 overflowed: JAX scales in float32."""
    jnp = pytest.importorskip("jax.numpy")
    x = np.arange(0, 2 ** 16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    got = np.asarray(enp.round(x, decimals))
    want = np.asarray(jnp.round(x, decimals))
    np.testing.assert_array_equal(got, want)


# --- histograms (against JAX) -----------------------------------------------------------

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_HRNG = np.random.default_rng(17)
X = _HRNG.normal(size=(4, 6)).astype(np.float32)
V = _HRNG.normal(size=(6,)).astype(np.float32)
N = _HRNG.integers(-5, 6, size=(4, 6)).astype(np.int32)
S = _HRNG.normal(size=(40, 3)).astype(np.float32)


@_ignore_narrowing
@pytest.mark.parametrize("data", [X, N, np.full((5,), 2.0, np.float32)])
def test_histogram(data, jnp):
    for bins, rng_, density in [(10, None, None), (3, (-1.0, 2.0), True),
                                (np.array([-3.0, -1.0, 0.0, 5.0]), None, False)]:
        helpers.close(enp.histogram_bin_edges(data, bins, rng_),
                      jnp.histogram_bin_edges(data, bins, rng_))
        helpers.close(enp.histogram(data, bins, rng_, density=density),
                      jnp.histogram(data, bins, rng_, density=density))
    w = np.abs(X).ravel()[:data.size].reshape(data.shape)
    helpers.close(enp.histogram(data, 4, weights=w, density=True),
                  jnp.histogram(data, 4, weights=w, density=True))


@_ignore_narrowing
def test_histogram_jit(jnp):
    eager_and_jit(lambda x: enp.histogram(x, 6), lambda x: jnp.histogram(x, 6), X)
    eager_and_jit(lambda x, w: enp.histogram(x, 3, (0.0, 1.0), w, True),
                  lambda x, w: jnp.histogram(x, 3, (0.0, 1.0), w, True), X, X * X)


@_ignore_narrowing
def test_histogramdd_and_2d(jnp):
    for bins, rng_, w, density in [(3, None, None, None), ((2, 3, 4), None, S[:, 0], True),
                                   ([2, np.array([-1.0, 0.0, 1.0]), 3],
                                    [None, (-2.0, 2.0), (0.0, 1.0)], None, False)]:
        helpers.close(enp.histogramdd(S, bins, rng_, w, density),
                      list(jnp.histogramdd(S, bins, rng_, w, density)), tol=1e-4)
    x, y = S[:, 0], S[:, 1]
    for bins in [4, [2, 5], np.array([-1.0, 0.0, 1.0]), [np.array([-1.0, 1.0]), 3]]:
        helpers.close(enp.histogram2d(x, y, bins), jnp.histogram2d(x, y, bins))
    helpers.close(enp.histogram2d(x, y, 3, [(-1, 1), (0, 2)], weights=np.abs(x), density=True),
                  jnp.histogram2d(x, y, 3, [(-1, 1), (0, 2)], weights=np.abs(x), density=True))
    eager_and_jit(lambda s: enp.histogramdd(s, 2), lambda s: list(jnp.histogramdd(s, 2)), S)


HISTOGRAM_ERRORS = [
    (lambda: enp.histogram(X, "auto"), ArgumentError, "string"),
    (lambda: enp.histogram(X, 0), TracingError, "positive"),
    (lambda: enp.histogram(X, 3, weights=V), TracingError, "weights"),
    (lambda: enp.histogram(X, 3, range=(1.0,)), TracingError, "range"),
    (lambda: ember.jit(lambda b: enp.histogram(X, b))(np.int32(3)), ConcretizationError,
     "bins"),
    (lambda: enp.histogramdd(V), TracingError, "2-D"),
    (lambda: enp.histogramdd(S, [2, 3]), TracingError, "per dimension"),
]


@pytest.mark.parametrize("call, error, match", HISTOGRAM_ERRORS)
def test_histogram_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- bincount of bools, quantiles of infinities (against JAX) ------------------------------

@_ignore_narrowing
def test_bincount_of_bools(jnp):
    b = np.array([True, False, True, True])
    w = np.arange(4.0, dtype=np.float32)
    helpers.close(enp.bincount(b), jnp.bincount(b), 1e-6)
    helpers.close(enp.bincount(b, weights=w, minlength=4),
                  jnp.bincount(b, weights=w, minlength=4), 1e-6)
    helpers.close(ember.jit(lambda x: enp.bincount(x, length=3))(b), jnp.bincount(b, length=3),
                  1e-6)


METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]
QS = np.array([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])


@_ignore_narrowing
@pytest.mark.parametrize("method", METHODS)
def test_quantile_of_infinities_follows_jax(method, jnp):
    rng = np.random.default_rng(24)
    # JAX's formulas, lo * (1 - g) + hi * g for linear and (lo + hi) / 2 for midpoint, give
    # inf where NumPy's lerp gives inf - inf = NaN; JAX's nearest takes the lower value at a
    # tie (NumPy the even index).
    for a in [[1.0, np.inf], [-np.inf, np.inf], [1.0, 2.0, np.inf, np.inf], [-np.inf, -np.inf, 1.0],
              [-np.inf, 0.0, np.inf], [4.0, 1.0, 3.0, 2.0]]:
        a = np.array(a, np.float32)
        helpers.close(enp.quantile(a, QS, method=method), jnp.quantile(a, QS, method=method), 1e-6)
        helpers.close(enp.percentile(a, QS * 100, method=method),
                      jnp.percentile(a, QS * 100, method=method), 1e-6)
    x = rng.normal(size=(3, 8)).astype(np.float32)
    x[0, 3], x[1, :2] = np.inf, -np.inf
    q = QS.astype(np.float32)
    got = ember.jit(lambda x, q: enp.quantile(x, q, axis=1, method=method))(x, q)
    helpers.close(got, jnp.quantile(x, q, axis=1, method=method), 1e-6)


@_ignore_narrowing
@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_methods(method, jnp):
    rng = np.random.default_rng(25)
    x = rng.normal(size=(5, 8)).astype(np.float32)
    x[0, 3], x[1, :2] = np.inf, -np.inf
    x[2, 1], x[3, :], x[4, ::2] = np.nan, np.nan, np.nan
    for axis in (0, 1, None):
        helpers.close(enp.nanquantile(x, QS, axis=axis, method=method),
                      jnp.nanquantile(x, QS, axis=axis, method=method), 1e-6)
        helpers.close(enp.nanpercentile(x, 30.0, axis=axis, method=method, keepdims=True),
                      jnp.nanpercentile(x, 30.0, axis=axis, method=method, keepdims=True), 1e-6)
    q = QS.astype(np.float32)
    got = ember.jit(lambda x, q: enp.nanquantile(x, q, axis=1, method=method))(x, q)
    helpers.close(got, jnp.nanquantile(x, q, axis=1, method=method), 1e-6)
