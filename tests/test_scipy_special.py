"""ember.scipy.special against scipy.special (float64 oracle rounded to the tested dtype)."""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.scipy.special as ess

sp = pytest.importorskip("scipy.special")
BF16 = np.dtype(ml_dtypes.bfloat16)


def _all(x, p):
    return {
        "erf": ess.erf(x), "erfc": ess.erfc(x), "erfinv": ess.erfinv(p),
        "logit": ess.logit(p), "expit": ess.expit(x), "gammaln": ess.gammaln(x),
        "digamma": ess.digamma(x), "xlogy": ess.xlogy(p, x),
        "lse": ess.logsumexp(x), "lse0": ess.logsumexp(x[:20], axis=0, keepdims=True),
        "lse_b": ess.logsumexp(x[:20], b=p[:20]),
    }


def _wants(x, p):
    with np.errstate(all="ignore"):
        return {
            "erf": sp.erf(x), "erfc": sp.erfc(x), "erfinv": sp.erfinv(p),
            "logit": sp.logit(p), "expit": sp.expit(x),
            # lgamma(-inf) = +inf as math.lgamma and JAX (scipy says -inf)
            "gammaln": np.where(x == -np.inf, np.inf, sp.gammaln(x)),
            # XLA's digamma (and ours) is NaN at the poles, scipy's is -inf or NaN
            "digamma": np.where((x <= 0) & (x == np.floor(x)), np.nan, sp.digamma(x)),
            "xlogy": sp.xlogy(p, x),
            "lse": sp.logsumexp(x), "lse0": sp.logsumexp(x[:20], axis=0, keepdims=True),
            "lse_b": sp.logsumexp(x[:20], b=p[:20]),
        }


_jit_all = ember.jit(_all)

# name -> (rtol, atol) for float32: lgamma and digamma follow XLA's Lanczos approximation,
# accurate in absolute terms near their zeros.
_TOL32 = {"gammaln": (1e-5, 2e-6), "digamma": (1e-4, 1e-5), "erfinv": (1e-5, 1e-6),
          "erfc": (2e-5, 1e-30), "lse_b": (1e-5, 1e-6)}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
def test_special_against_scipy(dtype):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=40) * 3, rng.uniform(-9, 9, 30),
                        [0.0, -0.0, 1.0, 2.0, -1.0, -2.5, 0.5, 3.0, 9.0, -9.0, 30.0, -30.0,
                         np.inf, -np.inf, np.nan, 0.001, -0.001, 1.5, 10.0, 4.0]])
    p = np.concatenate([rng.uniform(0, 1, 60), rng.uniform(-1, 1, 20),
                        [0.0, 1.0, -1.0, 0.5, 0.999, 1e-4, -0.999, 1.5, -2.0, np.nan]])
    if dtype == np.float32:
        x = np.concatenate([x, [80.0, 1e10, -5.5, -100.25, 0.1, 26.0, 1e-6]])
        p = np.concatenate([p, [0.25, 0.75, 1e-6, 0.3, 0.6, 0.9999, 0.12]])
    x, p = x.astype(dtype), p.astype(dtype)
    outs = _jit_all(x, p)
    wants = _wants(x.astype(np.float64), p.astype(np.float64))
    for name, want in wants.items():
        got = outs[name]
        assert got.dtype == dtype, (name, got.dtype)
        want = np.asarray(want).astype(dtype).astype(np.float64)
        got = np.asarray(got).astype(np.float64)
        assert got.shape == want.shape, name
        if dtype == np.float32:
            rtol, atol = _TOL32.get(name, (3e-6, 1e-6))
        elif dtype == np.float16:
            rtol, atol = 3e-3, 1e-3
        else:
            rtol, atol = 2e-2, 1e-2
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def test_int_inputs_promote():
    got = ess.gammaln(np.arange(1, 8, dtype=np.int32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), sp.gammaln(np.arange(1, 8)), atol=2e-6)


@pytest.mark.parametrize("dtype, ulps", [(np.float32, 4), (np.float64, 6)])
def test_erfinv_within_ulps_up_to_one(dtype, ulps):
    """w = -log((1 - x)(1 + x)) from its exact factors, and Giles' double-precision
    polynomials for float64: float64 erfinv had float32 accuracy, and -log1p(-x^2) put it
    64 ulps off at 0.99983 in float32 and 7e14 ulps off at 1 - 2^-53 in float64."""
    eps = np.finfo(dtype).eps
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-1, 1, 20000), 1 - np.logspace(np.log10(eps / 2), -1, 4000),
                        -np.logspace(np.log10(np.finfo(dtype).tiny) + 1, -1, 2000)]).astype(dtype)
    ember.config.update("enable_x64", dtype == np.float64)
    try:
        got = np.asarray(ember.jit(ess.erfinv)(x)).astype(np.float64)
    finally:
        ember.config.update("enable_x64", False)
    want = sp.erfinv(x.astype(np.float64))
    err = np.abs(got - want) / np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    assert err.max() <= ulps, x[np.argmax(err)]


def test_float64_erfcx_within_ulps():
    """exp(x^2) erfc(x) with x^2 split exactly (hi^2 + lo (hi + x)): exp of the rounded x^2
    had put float64 erfcx 400 ulps off at 22.7. Oracle: mpmath, 40 digits."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-6, 27, 1500), 20.75 + rng.uniform(-0.5, 0.5, 500)])
    ember.config.update("enable_x64", True)
    try:
        got = np.asarray(ember.jit(ess.erfcx)(x))
        special = np.asarray(ember.jit(ess.erfcx)(np.array([-30.0, -np.inf, np.inf, np.nan])))
    finally:
        ember.config.update("enable_x64", False)
    with mpmath.workdps(40):
        want = np.array([float(mpmath.exp(mpmath.mpf(v) ** 2) * mpmath.erfc(v)) for v in x])
    err = np.abs(got - want) / np.spacing(np.abs(want))
    assert err.max() <= 4, x[np.argmax(err)]
    assert special[0] == special[1] == np.inf and special[2] == 0 and np.isnan(special[3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gammaln_is_inf_at_every_pole(dtype):
    """Poles (non-positive integers) are +inf, as JAX's and scipy's: from -4e36 in float32
    log_y overflowed in the reflection and lgamma was inf - inf = NaN."""
    big = np.finfo(dtype).max
    x = np.array([-4e36, -1e37, -3e38, -big, -1.0, -2.0, -0.0, 0.0, -2.5, -1e30], dtype)
    ember.config.update("enable_x64", dtype == np.float64)
    try:
        got = np.asarray(ember.jit(ess.gammaln)(x))
    finally:
        ember.config.update("enable_x64", False)
    np.testing.assert_allclose(got, sp.gammaln(x.astype(np.float64)).astype(dtype),
                               rtol=1e-6, atol=1e-6)


def test_float32_erf_keeps_the_sign_of_zero():
    """erf is odd: IREE's float32 erf gave +0.0 for -0.0 (NumPy, JAX: -0.0)."""
    for dt in (np.float32, np.float16):
        x = np.array([-0.0, 0.0, -1e-30 if dt == np.float32 else -1e-7], dt)
        got = np.asarray(ember.jit(ess.erf)(x))
        np.testing.assert_array_equal(np.signbit(got), [True, False, True])
        assert (got == 0).tolist()[:2] == [True, True]
