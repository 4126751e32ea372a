"""ember.random: bit-for-bit agreement with jax.random (threefry-2x32, partitionable counters),
reproducibility eagerly and under jit, ranges and distribution moments."""

import math

import numpy as np
import pytest

import ember
import ember.random as er

jax = pytest.importorskip("jax")
jr = pytest.importorskip("jax.random")

N = 100_000          # one sample size for every sampler: fewer programs to compile
SEED = 1234


@pytest.fixture(scope="module")
def keys():
    return er.PRNGKey(SEED), jr.PRNGKey(SEED)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_array_equal(a, b)


def test_jax_uses_the_partitionable_layout():
    """The counter layout implemented here is JAX's default one."""
    assert jax.config.jax_threefry_partitionable


@pytest.mark.parametrize("seed", [0, 42, -1, 2 ** 31 + 3, 2 ** 32 + 5, np.int32(-7),
                                  np.uint32(2 ** 32 - 1)])
def test_key_matches_jax(seed):
    _same(er.key(seed), jr.PRNGKey(seed))
    _same(er.PRNGKey(seed), jr.PRNGKey(seed))


def test_split_and_fold_in_match_jax(keys):
    k, jk = keys
    _same(er.split(k), jr.split(jk))
    _same(er.split(k, 5), jr.split(jk, 5))
    _same(er.split(k, (2, 3)), jr.split(jk, (2, 3)))
    for data in (0, 3, 2 ** 31 + 1):
        _same(er.fold_in(k, data), jr.fold_in(jk, data))
    k1, k2 = er.split(k)
    jk1, jk2 = jr.split(jk)
    _same(er.fold_in(k2, 7), jr.fold_in(jk2, 7))


def test_threefry_2x32_matches_jax(keys):
    k, jk = keys
    count = np.arange(7, dtype=np.uint32) * np.uint32(2654435761)
    from jax.extend.random import threefry_2x32
    _same(er.threefry_2x32(k, count), threefry_2x32(jk, count))
    _same(er.threefry_2x32(k, count[:6].reshape(2, 3)), threefry_2x32(jk, count[:6].reshape(2, 3)))


def test_bits_and_uniform_match_jax(keys):
    k, jk = keys
    _same(er.bits(k, (3, 4)), jr.bits(jk, (3, 4)))
    u = er.uniform(k, (N,))
    _same(u, jr.uniform(jk, (N,)))
    _same(er.uniform(k, (N,), minval=-2.0, maxval=3.5),
          jr.uniform(jk, (N,), minval=-2.0, maxval=3.5))


def test_randint_matches_jax(keys):
    k, jk = keys
    _same(er.randint(k, (N,), -3, 17), jr.randint(jk, (N,), -3, 17))
    _same(er.randint(k, (5, 7), 0, 256, np.uint8), jr.randint(jk, (5, 7), 0, 256, np.uint8))
    _same(er.randint(k, (5, 7), 10, 3), jr.randint(jk, (5, 7), 10, 3))     # empty range
    lo = np.array([0, -100, 5], np.int32)
    _same(er.randint(k, (4, 3), lo, 2 ** 31 - 1), jr.randint(jk, (4, 3), lo, 2 ** 31 - 1))


def test_normal_close_to_jax(keys):
    """normal is sqrt(2) erf_inv(u) of JAX's uniform. Past |z| = 3 JAX's erf_inv loses up to
    64 ulps to the rounding of u^2 (ember's is within 4: test_scipy_special)."""
    k, jk = keys
    got, want = np.asarray(er.normal(k, (N,))), np.asarray(jr.normal(jk, (N,)))
    body = np.abs(want) < 3
    np.testing.assert_allclose(got[body], want[body], rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got, want, rtol=2e-5)
    assert np.mean(got == want) > 0.8                # the same formula, rounded alike


def test_bernoulli_matches_jax(keys):
    k, jk = keys
    _same(er.bernoulli(k, 0.3, (N,)), jr.bernoulli(jk, 0.3, (N,)))
    p = np.array([0.0, 0.25, 1.0], np.float32)
    _same(er.bernoulli(k, p), jr.bernoulli(jk, p))


def test_other_samplers_close_to_jax(keys):
    k, jk = keys
    np.testing.assert_allclose(np.asarray(er.gumbel(k, (1000,))),
                               np.asarray(jr.gumbel(jk, (1000,))), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(er.truncated_normal(k, -1.0, 2.0, (1000,))),
                               np.asarray(jr.truncated_normal(jk, -1.0, 2.0, (1000,))),
                               rtol=1e-5, atol=1e-5)
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
    _same(er.categorical(k, logits, shape=(50, 2)), jr.categorical(jk, logits, shape=(50, 2)))
    _same(er.choice(k, 10, (20,)), jr.choice(jk, 10, (20,)))
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    _same(er.choice(k, 4, (50,), p=p), jr.choice(jk, 4, (50,), p=p))


# --- reproducibility: eager and jit -----------------------------------------------------------

@ember.jit
def _draw(key):
    k1, k2 = er.split(key)
    k3 = er.fold_in(k2, 11)
    return (er.uniform(k1, (N,)), er.normal(k2, (N,)), er.randint(k3, (N,), -3, 17),
            er.bernoulli(k3, 0.3, (N,)))


def test_jit_matches_eager_and_is_reproducible(keys):
    k, _ = keys
    k1, k2 = er.split(k)
    k3 = er.fold_in(k2, 11)
    eager = (er.uniform(k1, (N,)), er.normal(k2, (N,)), er.randint(k3, (N,), -3, 17),
             er.bernoulli(k3, 0.3, (N,)))
    first, second = _draw(k), _draw(er.PRNGKey(SEED))
    for e, a, b in zip(eager, first, second):
        _same(a, b)
        _same(a, e)
    other = _draw(er.PRNGKey(SEED + 1))
    assert not np.array_equal(np.asarray(other[0]), np.asarray(first[0]))


def test_traced_seed_and_fold_in_data():
    f = ember.jit(lambda seed, i: er.fold_in(er.key(seed), i))
    for seed, i in ((np.int32(42), np.int32(5)), (np.int32(-3), np.int32(-1))):
        _same(f(seed, i), jr.fold_in(jr.PRNGKey(int(seed)), int(i) & 0xFFFFFFFF))


# --- ranges and moments -----------------------------------------------------------------------

def test_uniform_range_and_moments(keys):
    k, _ = keys
    u = np.asarray(er.uniform(k, (N,), minval=-2.0, maxval=3.5))
    assert u.min() >= -2.0 and u.max() < 3.5
    assert abs(u.mean() - 0.75) < 0.02
    assert abs(u.var() - 5.5 ** 2 / 12) < 0.05


def test_normal_moments(keys):
    k, _ = keys
    z = np.asarray(er.normal(k, (N,)))
    assert abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.02
    assert np.isfinite(z).all()
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01


def test_randint_bounds_and_frequencies(keys):
    k, _ = keys
    r = np.asarray(er.randint(k, (N,), -3, 17))
    assert r.min() == -3 and r.max() == 16
    counts = np.bincount(r + 3, minlength=20)
    assert np.all(np.abs(counts / N - 1 / 20) < 0.005)


def test_bernoulli_and_truncated_normal_moments(keys):
    k, _ = keys
    b = np.asarray(er.bernoulli(k, 0.3, (N,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.01
    t = np.asarray(er.truncated_normal(k, -1.0, 2.0, (N,)))
    assert t.min() > -1.0 and t.max() < 2.0

    def pdf(x):
        return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)

    def cdf(x):
        return 0.5 * (1 + math.erf(x / math.sqrt(2)))
    mean = (pdf(-1.0) - pdf(2.0)) / (cdf(2.0) - cdf(-1.0))
    assert abs(t.mean() - mean) < 0.02


def test_categorical_and_choice_frequencies(keys):
    k, _ = keys
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    c = np.asarray(er.categorical(k, np.log(p), shape=(20_000,)))
    np.testing.assert_allclose(np.bincount(c, minlength=4) / c.size, p, atol=0.015)
    c = np.asarray(er.choice(k, 4, (20_000,), p=p))
    np.testing.assert_allclose(np.bincount(c, minlength=4) / c.size, p, atol=0.015)


# --- sort-based: permutation, choice without replacement ------------------------------------

def test_permutation_matches_jax(keys):
    k, jk = keys
    _same(er.permutation(k, 10), jr.permutation(jk, 10))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    _same(er.permutation(k, x), jr.permutation(jk, x))
    _same(er.permutation(k, x, axis=1, independent=True),
          jr.permutation(jk, x, axis=1, independent=True))
    p = np.asarray(er.permutation(k, 100))
    assert sorted(p.tolist()) == list(range(100))


def test_choice_without_replacement(keys):
    k, jk = keys
    _same(er.choice(k, 10, (4,), replace=False), jr.choice(jk, 10, (4,), replace=False))
    # a 0-d array (an ember Array too) is arange(a), as a Python int
    _same(er.choice(k, ember.numpy.asarray(10), (4,)), jr.choice(jk, np.array(10), (4,)))
    a = np.arange(20, dtype=np.int32) * 3
    got = np.asarray(er.choice(k, a, (8,), replace=False))
    assert len(set(got.tolist())) == 8 and set(got.tolist()) <= set(a.tolist())
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    got = np.asarray(er.choice(k, 4, (3,), replace=False, p=p))
    assert len(set(got.tolist())) == 3
    np.testing.assert_array_equal(got, np.asarray(jr.choice(jk, 4, (3,), replace=False, p=p)))
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
    _same(er.categorical(k, logits, axis=1, shape=(2, 2), replace=False),
          jr.categorical(jk, logits, axis=1, shape=(2, 2), replace=False))


# --- errors -----------------------------------------------------------------------------------

def test_bad_arguments():
    k = er.PRNGKey(0)
    with pytest.raises(TypeError, match="key"):
        er.uniform(np.zeros(3, np.uint32), (2,))
    with pytest.raises(ValueError, match="float"):
        er.uniform(k, (2,), dtype=np.int32)
    with pytest.raises(TypeError, match="integer"):
        er.randint(k, (2,), 0, 5, dtype=np.float32)
    with pytest.raises(ValueError, match="larger sample"):
        er.choice(k, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="scalar"):
        er.key(np.arange(2))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_uniform_matches_jax(keys, dtype):
    k, jk = keys
    _same(er.uniform(k, (64,), dtype=dtype), jr.uniform(jk, (64,), dtype=dtype))


def test_narrow_int_randint_matches_jax(keys):
    k, jk = keys
    _same(er.randint(k, (64,), -100, 100, np.int8), jr.randint(jk, (64,), -100, 100, np.int8))


def test_zero_size_and_scalar_shapes(keys):
    k, jk = keys
    assert er.uniform(k, (0, 3)).shape == (0, 3)
    _same(er.uniform(k, ()), jr.uniform(jk, ()))


def test_a_bad_key_is_reported_under_the_function_called():
    """Every sampler checks its key first: ``normal`` of a bad key says ``normal``, not the
    ``uniform`` it draws from."""
    import inspect
    samplers = [(name, fun) for name, fun in vars(er).items()
                if inspect.isfunction(fun) and not name.startswith("_")
                and list(inspect.signature(fun).parameters)[:1] == ["key"]]
    assert len(samplers) > 30
    for bad in (np.zeros(3, np.uint32), np.zeros(2, np.int32), np.zeros((4, 2), np.uint32)):
        for name, fun in samplers:
            with pytest.raises(ember.errors.RandomArgumentError,
                               match=rf"ember\.random\.{name}: expected a key"):
                fun(bad)
