"""ember.random's distributions against jax.random: the same key gives the same values (to a
few ulps; the rejection loops of gamma, poisson and binomial included), with JAX's shapes and
dtypes, eagerly and under jit; multivariate_normal's eigh/svd factors are checked by moments.

Compiles are shared: every sampler is called with the keys as dynamic arguments (one program
per sampler and signature, several seeds), and the narrow-dtype checks are one jitted program
per dtype."""

import numpy as np
import pytest
from scipy import stats

import ember
import ember.random as er
from ember.errors import ArgumentError, ConcretizationError

jax = pytest.importorskip("jax")
jr = pytest.importorskip("jax.random")

SEEDS = (0, 1234, 2 ** 31 + 7)
f32 = np.float32
P3 = np.array([0.5, 1.5, 3.0], f32)              # a parameter vector that broadcasts to (5, 3)
COL = np.array([[0.25], [2.0]], f32)             # a (2, 1) one: broadcasts with (3,) to (2, 3)
COV = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]], f32)
ALPHAS = np.array([0.05, 0.5, 1.0, 2.5, 30.0], f32)


def _tol(dtype):
    """A few ulps of ``dtype`` (float32: JAX's erf_inv/log/tan differ from IREE's by ulps)."""
    return 16 * float(ember.numpy.finfo(dtype).eps)


def _close(got, want, rtol=None, atol=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (got.shape, got.dtype, want.shape, want.dtype)
    if rtol is None:
        is_float = want.dtype.kind == "f" or want.dtype.name == "bfloat16"
        rtol = _tol(want.dtype) if is_float else 0
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol if atol is None else atol)


# Samplers that are transforms of uniform/normal bits: (module, key, dtype) -> sample.
TRANSFORMS = {
    "exponential": lambda r, k, dt: r.exponential(k, (5, 3), dt),
    "laplace": lambda r, k, dt: r.laplace(k, (5, 3), dt),
    "logistic": lambda r, k, dt: r.logistic(k, (5, 3), dt),
    "cauchy": lambda r, k, dt: r.cauchy(k, (5, 3), dt),
    "lognormal": lambda r, k, dt: r.lognormal(k, 0.5, (5, 3), dt),
    "pareto": lambda r, k, dt: r.pareto(k, 3.0, (5, 3), dt),
    "rayleigh": lambda r, k, dt: r.rayleigh(k, 2.0, (5, 3), dt),
    "maxwell": lambda r, k, dt: r.maxwell(k, (5, 3), dt),
    "double_sided_maxwell": lambda r, k, dt: r.double_sided_maxwell(k, 1.0, 2.0, (4,), dt),
    "weibull_min": lambda r, k, dt: r.weibull_min(k, 2.0, 1.5, (5, 3), dt),
    "wald": lambda r, k, dt: r.wald(k, 1.5, (5, 3), dt),
    "triangular": lambda r, k, dt: r.triangular(k, -1.0, 0.25, 2.0, (5, 3), dt),
    "rademacher": lambda r, k, dt: r.rademacher(k, (5, 3), dt),
    "geometric": lambda r, k, dt: r.geometric(k, 0.3, (5, 3)),
}

# The same with array parameters that broadcast (float32 only).
BROADCAST = {
    "lognormal": lambda r, k: r.lognormal(k, P3, (5, 3)),
    "pareto": lambda r, k: r.pareto(k, COL),
    "rayleigh": lambda r, k: r.rayleigh(k, P3, (5, 3)),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, P3, COL, (4,)),
    "weibull_min": lambda r, k: r.weibull_min(k, COL, P3),
    "wald": lambda r, k: r.wald(k, COL * P3),
    "triangular": lambda r, k: r.triangular(k, 0.0, P3 / 4, 1.0, (5, 3)),
    "geometric": lambda r, k: r.geometric(k, P3 / 4, (5, 3)),
    "orthogonal": lambda r, k: r.orthogonal(k, 3, (2,), m=4),
    "orthogonal#tall": lambda r, k: r.orthogonal(k, 4, m=2),
    "multivariate_normal": lambda r, k: r.multivariate_normal(k, P3, COV, (4,)),
    "multivariate_normal#batched": lambda r, k: r.multivariate_normal(
        k, np.zeros((2, 3), f32), COV),
}

# Rejection samplers (one vmapped gamma loop, or poisson's/binomial's whole-array loops).
LOOPS = {
    "gamma": lambda r, k: r.gamma(k, ALPHAS, (4, 5)),
    "loggamma": lambda r, k: r.loggamma(k, ALPHAS, (4, 5)),
    "beta": lambda r, k: r.beta(k, P3, COL),
    "t": lambda r, k: r.t(k, P3, (2, 3)),
    "chisquare": lambda r, k: r.chisquare(k, COL * P3),
    "f": lambda r, k: r.f(k, COL * P3, 4.0),      # JAX's f needs full-rank parameters
    "dirichlet": lambda r, k: r.dirichlet(k, np.stack([P3, P3[::-1]]), (3, 2)),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, (2, 3)),
    "ball": lambda r, k: r.ball(k, 3, 1.5, (2,)),
    "poisson": lambda r, k: r.poisson(k, np.array([0.0, 0.5, 4.0, 15.0, 200.0], f32), (3, 5)),
    "binomial": lambda r, k: r.binomial(k, np.array([0.0, 5., 40., 200., 1000.], f32),
                                        np.array([.3, 1.0, .7, .5, .05], f32), (3, 5)),
    "multinomial": lambda r, k: r.multinomial(k, np.array([20.0, 300.0], f32),
                                              np.array([0.2, 0.5, 0.3], f32), shape=(2, 3)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_match_jax(name):
    fn = TRANSFORMS[name]
    # wald's cancellation magnifies its normal's tails, where JAX's erf_inv is up to 64 ulps
    # off (test_random.py::test_normal_close_to_jax)
    rtol = 1e-5 if name == "wald" else None
    for seed in SEEDS:
        _close(fn(er, er.PRNGKey(seed), None), fn(jr, jr.PRNGKey(seed), None), rtol=rtol)


@pytest.mark.parametrize("name", sorted(BROADCAST))
def test_broadcast_parameters_match_jax(name):
    fn = BROADCAST[name]
    atol = 2e-5 if name.startswith(("orthogonal", "multivariate")) else None   # QR, einsum
    for seed in SEEDS[:2]:
        _close(fn(er, er.PRNGKey(seed)), fn(jr, jr.PRNGKey(seed)), atol=atol)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_rejection_samplers_match_jax(name):
    fn = LOOPS[name]
    for seed in SEEDS[:2]:
        _close(fn(er, er.PRNGKey(seed)), fn(jr, jr.PRNGKey(seed)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_dtypes_match_jax_under_jit(dtype):
    names = sorted(n for n in TRANSFORMS if n not in ("rademacher", "geometric"))
    names.append("gamma")
    fns = dict(TRANSFORMS, gamma=lambda r, k, dt: r.gamma(k, 2.5, (6,), dt))
    run = ember.jit(lambda k: {n: fns[n](er, k, dtype) for n in names})
    got = run(er.PRNGKey(SEEDS[1]))
    jk = jr.PRNGKey(SEEDS[1])
    for n in names:
        want = np.asarray(fns[n](jr, jk, dtype))
        # XLA keeps f32 intermediates between fused narrow ops; IREE rounds each op.
        rtol = 8 * float(ember.numpy.finfo(dtype).eps)
        _close(got[n], want, rtol=rtol, atol=rtol)


def test_jit_with_traced_parameters_matches_eager_and_jax():
    @ember.jit
    def draw(key, b, p):
        k1, k2, k3 = er.split(key, 3)
        return (er.pareto(k1, b, (5, 3)), er.binomial(k2, b * 10, p),
                er.gamma(k3, b, (2, 3)), er.clone(k3), er.generalized_normal(k1, b[2], (3,)))
    b = P3
    p = np.array([0.1, 0.5, 0.9], f32)
    got = draw(er.PRNGKey(5), b, p)
    k1, k2, k3 = jr.split(jr.PRNGKey(5), 3)
    _close(got[0], jr.pareto(k1, b, (5, 3)))
    _close(got[1], jr.binomial(k2, b * 10, p))
    _close(got[2], jr.gamma(k3, b, (2, 3)), rtol=1e-5)
    _close(got[3], jr.clone(k3))
    _close(got[4], jr.generalized_normal(k1, b[2], (3,)), rtol=1e-5)
    _close(got[0], er.pareto(er.split(er.PRNGKey(5), 3)[0], b, (5, 3)), rtol=0, atol=0)


# --- edge cases --------------------------------------------------------------------------------

def test_edge_values_match_jax():
    k, jk = er.PRNGKey(3), jr.PRNGKey(3)
    lam = np.array([np.nan, 0.0, 1e-3, 9.99, 10.0], f32)
    _close(er.poisson(k, lam, dtype=np.int16), jr.poisson(jk, lam, dtype=np.int16))
    n = np.array([np.nan, -1.0, np.inf, 0.0, 7.5, 7.0], f32)
    p = np.array([0.5, 0.5, 0.5, 0.3, 0.0, np.nan], f32)
    _close(er.binomial(k, n, p), jr.binomial(jk, n, p))
    tiny = np.array([1e-3, 1e-2], f32)
    _close(er.loggamma(k, tiny), jr.loggamma(jk, tiny), rtol=1e-5)
    _close(er.geometric(k, np.array([1.0, 1e-3], f32)), jr.geometric(jk, np.array([1.0, 1e-3],
                                                                                   f32)))


def test_scalar_and_empty_shapes():
    k, jk = er.PRNGKey(9), jr.PRNGKey(9)
    _close(er.exponential(k), jr.exponential(jk))
    _close(er.gamma(k, 2.0), jr.gamma(jk, 2.0), rtol=1e-5)
    _close(er.poisson(k, 3.0), jr.poisson(jk, 3.0))
    for fn in (lambda r, kk: r.laplace(kk, (0, 3)), lambda r, kk: r.gamma(kk, 1.0, (0,)),
               lambda r, kk: r.beta(kk, 1.0, 2.0, (2, 0)),
               lambda r, kk: r.poisson(kk, 3.0, (0,))):
        _close(fn(er, k), fn(jr, jk))


def test_keys_helpers():
    k = er.PRNGKey(4)
    _close(er.clone(k), jr.clone(jr.PRNGKey(4)))
    _close(er.wrap_key_data(np.asarray(k)), jr.key_data(jr.wrap_key_data(np.asarray(k))))
    _close(er.wrap_key_data(er.split(k, 3), impl="threefry2x32"), er.split(k, 3))


# --- statistics where the factorization is not JAX's ---------------------------------------------

@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_multivariate_normal_eigh_svd_moments(method):
    """eigh/svd eigenvector signs are not LAPACK's, so the values differ from JAX's; the
    distribution must not: sample mean and covariance, and a KS test of a projection."""
    n = 20_000
    x = np.asarray(er.multivariate_normal(er.PRNGKey(11), P3, COV, (n,), method=method))
    assert x.shape == (n, 3) and x.dtype == np.float32
    np.testing.assert_allclose(x.mean(0), P3, atol=0.04)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.06)
    w = np.array([1.0, -2.0, 0.5])
    sd = np.sqrt(w @ COV @ w)
    assert stats.kstest((x @ w - w @ P3) / sd, "norm").pvalue > 1e-3


def test_samplers_follow_their_distributions():
    """KS tests against SciPy (fixed keys): a wrong transform fails these by far."""
    k = er.PRNGKey(21)
    n = 4000
    checks = [(er.gamma(k, 0.7, (n,)), stats.gamma(0.7).cdf),
              (er.wald(k, 1.5, (n,)), stats.invgauss(1.5).cdf),
              (er.cauchy(k, (n,)), stats.cauchy.cdf)]
    for x, cdf in checks:
        assert stats.kstest(np.asarray(x, np.float64), cdf).pvalue > 1e-3
    c = np.asarray(er.poisson(k, 25.0, (n,)))
    assert abs(c.mean() - 25.0) < 0.4 and abs(c.var() - 25.0) < 2.5


# --- errors ------------------------------------------------------------------------------------

def test_bad_arguments():
    k = er.PRNGKey(0)
    with pytest.raises(ArgumentError, match="exponential.*dtype"):
        er.exponential(k, (2,), np.int32)
    with pytest.raises(ArgumentError, match="poisson.*integer"):
        er.poisson(k, 2.0, dtype=np.float32)
    with pytest.raises(ArgumentError, match="pareto.*broadcast"):
        er.pareto(k, P3, (4,))
    with pytest.raises(ArgumentError, match="safely cast"):
        er.pareto(k, P3, dtype=np.float16)
    with pytest.raises(ArgumentError, match="method"):
        er.multivariate_normal(k, P3, COV, method="qr")
    with pytest.raises(ArgumentError, match="cov"):
        er.multivariate_normal(k, P3, COV[:2, :2])
    with pytest.raises(ArgumentError, match="alpha"):
        er.dirichlet(k, 1.0)
    with pytest.raises(ArgumentError, match="threefry"):
        er.wrap_key_data(np.asarray(k), impl="rbg")
    with pytest.raises(ArgumentError, match="uint32"):
        er.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(ArgumentError, match="ball.*int"):
        er.ball(k, 2.5)
    with pytest.raises(ConcretizationError, match="orthogonal"):
        ember.jit(lambda kk, n: er.orthogonal(kk, n))(k, np.int32(3))
