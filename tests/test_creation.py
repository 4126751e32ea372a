"""ember.numpy creation functions (full, arange, eye, empty, linspace, logspace, identity, tri,
tril, triu, meshgrid, indices) against NumPy, under jit (one shared program) and eagerly."""

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import ConcretizationError, EmberError, TracingError

_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32)}


def check(got, want, dtype=None, rtol=2e-6, atol=1e-6):
    assert isinstance(got, ember.Array), type(got)
    want = np.asarray(want)
    dtype = np.dtype(dtype if dtype is not None else _NARROW.get(want.dtype, want.dtype))
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g = np.asarray(got)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(g, want.astype(dtype))
    else:
        np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol)


def _static_cases():
    """(label, fn(xp)): creation from static arguments only; fn(np) is the oracle."""
    return [
        ("arange neg", lambda xp: xp.arange(5, -4, -3)),
        ("arange float step", lambda xp: xp.arange(0.0, 1.0, 0.1)),
        ("arange float neg", lambda xp: xp.arange(2.0, -1.0, -0.7)),
        ("arange empty", lambda xp: xp.arange(3, 1)),
        ("arange int dtype", lambda xp: xp.arange(2, 9, 2, dtype=np.int8)),
        ("arange frac len", lambda xp: xp.arange(1, 2.01, 0.5)),
        ("full", lambda xp: xp.full((2, 3), 7, dtype=np.int16)),
        ("full zero", lambda xp: xp.full((0, 3), 1.5)),
        ("eye k", lambda xp: xp.eye(3, 5, 2, dtype=np.int32)),
        ("eye -k", lambda xp: xp.eye(4, 2, -1)),
        ("eye far", lambda xp: xp.eye(2, 2, 5)),
        ("empty shape", lambda xp: xp.empty((2, 0)) * 0),
        ("identity", lambda xp: xp.identity(3)),
        ("identity int", lambda xp: xp.identity(2, dtype=np.int8)),
        ("linspace", lambda xp: xp.linspace(0.0, 1.0, 7)),
        ("linspace noend", lambda xp: xp.linspace(-2, 3, 4, endpoint=False)),
        ("linspace 0", lambda xp: xp.linspace(0, 1, 0)),
        ("linspace 1", lambda xp: xp.linspace(2, 5, 1)),
        ("linspace 1 noend", lambda xp: xp.linspace(2, 5, 1, endpoint=False)),
        ("linspace down", lambda xp: xp.linspace(5, -5, 11)),
        ("linspace int", lambda xp: xp.linspace(0, 10, 4, dtype=np.int32)),
        ("linspace step", lambda xp: xp.linspace(0, 6, 4, retstep=True)[1]),
        ("linspace step noend", lambda xp: xp.linspace(0, 6, 4, endpoint=False,
                                                       retstep=True)[1]),
        ("logspace", lambda xp: xp.logspace(0, 3, 4)),
        ("logspace base", lambda xp: xp.logspace(1, 4, 3, base=2.0, endpoint=False)),
        ("tri", lambda xp: xp.tri(3, 4, 1)),
        ("tri int", lambda xp: xp.tri(4, 2, -1, dtype=np.int32)),
        ("indices", lambda xp: xp.indices((2, 3))),
        ("indices 3", lambda xp: xp.indices((2, 0, 3), dtype=np.int8)),
        *[(f"indices sparse {i}", lambda xp, i=i: xp.indices((2, 3, 4), sparse=True)[i])
          for i in range(3)],
    ]


_STATIC = _static_cases()


def _oracle(label, fn):
    with np.errstate(all="ignore"):
        return fn(np)


def test_static_creation_jit_and_eager():
    f = ember.jit(lambda: [fn(enp) for _, fn in _STATIC])
    for (label, fn), got in zip(_STATIC, f(), strict=True):
        want = _oracle(label, fn)
        try:
            check(got, want)
            check(fn(enp), want)
        except AssertionError as e:
            raise AssertionError(f"{label}: {e}") from None


def _array_cases():
    """(label, fn(xp, a, b, m)): creation from array arguments."""
    return [
        ("linspace arrays", lambda xp, a, b, m: xp.linspace(a, b, 5)),
        ("linspace arrays axis", lambda xp, a, b, m: xp.linspace(a, b, 3, axis=-1)),
        ("linspace arrays noend", lambda xp, a, b, m: xp.linspace(a, b, 4, endpoint=False,
                                                                  axis=1)),
        ("linspace step", lambda xp, a, b, m: xp.linspace(a, b, 5, retstep=True)[1]),
        ("linspace 1 step", lambda xp, a, b, m: xp.linspace(a, b, 1, retstep=True)[0]),
        ("logspace arrays", lambda xp, a, b, m: xp.logspace(a, b, 3)),
        ("tril", lambda xp, a, b, m: xp.tril(m)),
        ("tril k", lambda xp, a, b, m: xp.tril(m, 1)),
        ("triu", lambda xp, a, b, m: xp.triu(m)),
        ("triu -k", lambda xp, a, b, m: xp.triu(m, -1)),
        ("triu far", lambda xp, a, b, m: xp.triu(m, 9)),
        *[(f"meshgrid xy {i}", lambda xp, a, b, m, i=i: xp.meshgrid(a, b[:2], m[0, 0])[i])
          for i in range(3)],
        *[(f"meshgrid ij {i}", lambda xp, a, b, m, i=i: xp.meshgrid(a, b[:2], indexing="ij")[i])
          for i in range(2)],
        *[(f"meshgrid sparse {i}", lambda xp, a, b, m, i=i: xp.meshgrid(a, b[:2],
                                                                        sparse=True)[i])
          for i in range(2)],
        ("meshgrid one", lambda xp, a, b, m: xp.meshgrid(a)[0]),
        ("full array", lambda xp, a, b, m: xp.full((2, 3), a)),
        ("full array dtype", lambda xp, a, b, m: xp.full((4, 3), b, dtype=np.int32)),
    ]


_ARRAYS = _array_cases()


def test_array_creation():
    rng = np.random.default_rng(0)
    a = rng.uniform(-3, 3, (3,)).astype(np.float32)
    b = rng.uniform(-3, 3, (3,)).astype(np.float32)
    m = rng.integers(1, 9, (2, 3, 4)).astype(np.int16)
    f = ember.jit(lambda a, b, m: [fn(enp, a, b, m) for _, fn in _ARRAYS])
    for (label, fn), got in zip(_ARRAYS, f(a, b, m), strict=True):
        want = fn(np, a, b, m)
        if label.startswith("full array dtype"):
            want = np.full((4, 3), b).astype(np.int32)
        try:
            check(got, want, rtol=2e-5, atol=2e-5)
        except AssertionError as e:
            raise AssertionError(f"{label}: {e}") from None
    # eagerly on ember Arrays: a few
    check(enp.tril(enp.asarray(m), -1), np.tril(m, -1))
    check(enp.linspace(enp.asarray(a), 1.0, 4), np.linspace(a, 1.0, 4), rtol=2e-5, atol=2e-5)
    check(enp.linspace(a, b, 3), np.linspace(a, b, 3), rtol=2e-5, atol=2e-5)


def test_dtypes_of_creation():
    check(enp.linspace(np.float16(0), np.float16(1), 3), np.linspace(0, 1, 3, dtype=np.float16),
          np.float16)
    assert enp.arange(3.0).dtype == np.float32
    assert enp.arange(np.int8(3)).dtype == np.int8
    assert enp.tri(2).dtype == np.float32
    assert enp.indices((2,)).dtype == np.int32


def test_creation_errors():
    with pytest.raises(TracingError, match=r"linspace.*-1.*non-negative"):
        enp.linspace(0, 1, -1)
    with pytest.raises(TracingError, match=r"tril.*2-D.*\(3,\)"):
        enp.tril(np.ones(3, np.float32))
    with pytest.raises(TracingError, match=r"arange.*zero"):
        enp.arange(0, 5, 0)
    with pytest.raises(TracingError, match=r"meshgrid.*indexing"):
        enp.meshgrid(np.ones(2, np.float32), indexing="xx")
    with pytest.raises(TracingError, match=r"full.*negative"):
        enp.full((-1, 2), 0.0)
    with pytest.raises(TracingError, match=r"full.*\(3,\).*\(2, 2\)"):
        enp.full((2, 2), np.ones(3, np.float32))
    with pytest.raises(ConcretizationError):
        ember.jit(lambda n: enp.linspace(0, 1, n))(3)
    with pytest.raises(TracingError, match=r"linspace.*\(2,\).*\(3,\)"):
        enp.linspace(np.ones(2, np.float32), np.ones(3, np.float32), 3)


# --- empty_like, geomspace, tril_indices, triu_indices, vander -----------------------------
# (ember/numpy/_creation.py, _index_tricks.py, _polynomial.py)

def test_more_creation():
    x = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
    i = np.array([2, -1, 3], np.int8)

    def f(x, i):
        return (enp.geomspace(1, 1000, 4), enp.geomspace(-2.0, -32.0, 5, endpoint=False),
                enp.geomspace(x[:2] + 3, 100.0, 3, axis=-1), enp.geomspace(2, 8, 1),
                enp.geomspace(x[3], 0.5, 6, dtype=np.float16),
                *enp.tril_indices(3), *enp.triu_indices(4, 1, 2), *enp.tril_indices(2, -3),
                enp.vander(x), enp.vander(i, 4, increasing=True), enp.vander(x, 0),
                enp.vander(x[:0], 2), enp.empty_like(x), enp.empty_like(i, np.float32, (2, 2)),
                enp.zeros_like(x, shape=3), enp.ones_like(i, np.float32, (2, 1)),
                enp.full_like(i, 7, shape=(1, 2)), enp.concatenate([x, i], dtype=np.int16),
                enp.stack([i, i], dtype=np.float16), enp.hstack([x, i], dtype=np.int32),
                enp.vstack([i, i], dtype=np.uint8), enp.clip(x, min=0.0), enp.clip(i, max=2))

    wants = (np.geomspace(1, 1000, 4), np.geomspace(-2.0, -32.0, 5, endpoint=False),
             np.geomspace(x[:2] + 3, 100.0, 3, axis=-1), np.geomspace(2, 8, 1),
             np.geomspace(x[3], 0.5, 6, dtype=np.float16),
             *np.tril_indices(3), *np.triu_indices(4, 1, 2), *np.tril_indices(2, -3),
             np.vander(x), np.vander(i, 4, increasing=True), np.vander(x, 0),
             np.vander(x[:0], 2), np.zeros_like(x), np.zeros((2, 2), np.float32),
             np.zeros_like(x, shape=3), np.ones_like(i, np.float32, shape=(2, 1)),
             np.full_like(i, 7, shape=(1, 2)), np.concatenate([x, i], dtype=np.int16,
                                                              casting="unsafe"),
             np.stack([i, i], dtype=np.float16), np.hstack([x, i], dtype=np.int32,
                                                           casting="unsafe"),
             np.vstack([i, i], dtype=np.uint8, casting="unsafe"), np.clip(x, min=0.0),
             np.clip(i, max=2))
    for k, (got, want) in enumerate(zip(f(x, i), wants, strict=True)):
        try:
            check(got, want, rtol=3e-3 if want.dtype == np.float16 else 2e-6)
        except AssertionError as e:
            raise AssertionError(f"eager output {k}: {e}") from None
    for k, (got, want) in enumerate(zip(ember.jit(f)(x, i), wants, strict=True)):
        try:
            check(got, want, rtol=3e-3 if want.dtype == np.float16 else 2e-6)
        except AssertionError as e:
            raise AssertionError(f"jit output {k}: {e}") from None
    # Weak types as JAX: empty_like keeps the prototype's dtype and weak type.
    assert enp.empty_like(2.0, shape=(3,)).weak_type
    assert not enp.empty_like(x, shape=3).weak_type


def test_more_creation_errors():
    with pytest.raises(TracingError, match="geomspace.*zero"):
        enp.geomspace(0, 10, 3)
    with pytest.raises(TracingError, match="geomspace.*opposite signs"):
        enp.geomspace(-1, 10, 3)
    with pytest.raises(TracingError, match="geomspace.*non-negative"):
        enp.geomspace(1, 10, -2)
    with pytest.raises(ConcretizationError):
        ember.jit(lambda n: enp.tril_indices(n))(3)
    with pytest.raises(TracingError, match="triu_indices.*non-negative"):
        enp.triu_indices(-2)
    with pytest.raises(TracingError, match="vander.*one-dimensional"):
        enp.vander(np.ones((2, 2), np.float32))
    with pytest.raises(TracingError, match="vander.*non-negative"):
        enp.vander(np.ones(2, np.float32), -1)


def test_array_of_python_data_takes_jax_dtypes_and_refuses_overflow():
    # The dtype of a list is the promotion of its elements, NumPy scalars strongly typed and
    # Python numbers weakly (jax.numpy's rule); a Python int out of range raises, as in JAX
    # (it had wrapped: [2**31] gave [-2**31]).
    for data, want in [([np.float16(1), 2], np.float16), ([np.uint8(1), 2], np.uint8),
                       ([np.int8(1), np.uint8(2)], np.int16), ([True, 1], np.int32),
                       ([1, 2.5], np.float32), ([], np.float32),
                       ([np.ones(2, np.float16)], np.float16)]:
        got = enp.array(data)
        assert got.dtype == want, (data, got.dtype)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(data, dtype=want))
    for data, dtype in [([2**31], None), ([1, 2**40], None), ([-2**31 - 1], None),
                        ([256, -1], np.uint8), (300, np.uint8)]:
        with pytest.raises(OverflowError, match="out of bounds"):
            enp.array(data, dtype=dtype)
    with pytest.raises(OverflowError):
        enp.uint8(300)
    with pytest.raises(OverflowError):
        ember.jit(lambda x: x + enp.asarray([300], np.uint8))(np.uint8(1))
    assert enp.array([2**31 - 1]).tolist() == [2**31 - 1]


@pytest.mark.parametrize("args", [(0, np.inf), (np.inf,), (0, -np.inf), (np.nan,),
                                  (0.0, 1.0, np.nan), (np.float32(0), np.float32(np.inf))])
def test_arange_of_a_non_finite_length(args):
    """NumPy raises ValueError for these, JAX OverflowError for infinity and ValueError for
    NaN; ember's error (it was an incidental OverflowError from int()) is both, and says
    why."""
    import jax.numpy as jnp
    with pytest.raises(ValueError):
        np.arange(*args)
    with pytest.raises((ValueError, OverflowError)):
        jnp.arange(*args)
    with pytest.raises(ValueError, match=r"arange: the length .* is not finite") as info:
        enp.arange(*args)
    assert isinstance(info.value, OverflowError) and isinstance(info.value, EmberError)
    assert __file__ in str(info.value)          # the user's line
