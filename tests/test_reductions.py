"""Reductions and statistics of ember.numpy against NumPy.

Many reductions share one jitted program per (axis, keepdims) case to keep compiles few.
"""

import warnings

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import EmberError

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
    # JAX's dtypes: bools and small ints accumulate as int32 (uint8 as uint32).
    sum_dt = {"bool": "int32", "uint8": "uint32", "int32": "int32", "float16": "float16"}[dtype]
    float_dt = "float16" if dtype == "float16" else "float32"
    close(got["sum"], np.sum(x, axis=0).astype(sum_dt), rtol, dtype=sum_dt)
    close(got["prod"], np.prod(x[:2], axis=1).astype(sum_dt), rtol, dtype=sum_dt)
    close(got["cumsum"], np.cumsum(x, axis=1).astype(sum_dt), rtol, dtype=sum_dt)
    close(got["cumprod"], np.cumprod(x[:, :3], axis=0).astype(sum_dt), rtol, dtype=sum_dt)
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
