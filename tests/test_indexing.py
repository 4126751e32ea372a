"""Basic indexing (ints, slices, None, Ellipsis) on tracers and Arrays against NumPy."""

import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, EmberError, TracingError

X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)

INDICES = [
    0, -1, 2, (1, 2), (-1, -2, -3), (0, 1, 4), slice(None), slice(1, None), slice(None, 2),
    slice(None, None, 2), slice(None, None, -1), slice(-1, 0, -1), slice(2, None, -2),
    slice(5, -10, -1), slice(1, 1), slice(10, 20), (slice(None), 1), (slice(None), slice(1, 3)),
    (Ellipsis, 0), (Ellipsis, slice(None, None, -2)), (0, Ellipsis), (1, Ellipsis, 2),
    (None,), (None, 0), (0, None, slice(None), None), (Ellipsis, None),
    (slice(None, None, -1), None, Ellipsis, 3), (slice(0, 3, 2), -1, slice(4, 0, -3)),
    Ellipsis, (), (slice(-2, None), slice(None, None, 3), -5),
]


def _check(got, want):
    assert isinstance(got, ember.Array)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_strided_slices_then_transposed_and_gathered():
    """A strided slice is a generic reading x[start + stride * i]: as an extract_slice,
    transposed and then indexed with a traced index, IREE 3.13 failed to compile it ("LLVM
    Translation failed for operation: builtin.unrealized_conversion_cast")."""
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    i = np.int32(1)
    got = ember.jit(lambda x, i: (x[:, ::2].T[:, i], x[::2, 1::2, ::-2], x[1:, ::3] * 2,
                                  enp.take_along_axis(x[:, ::2].T, enp.zeros((5, 2, 1), np.int32),
                                                      axis=2)))(x, i)
    want = (x[:, ::2].T[:, 1], x[::2, 1::2, ::-2], x[1:, ::3] * 2,
            np.take_along_axis(x[:, ::2].T, np.zeros((5, 2, 1), np.int32), axis=2))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_indexing_under_jit():
    outs = ember.jit(lambda x: [x[i] for i in INDICES])(X)
    for idx, got in zip(INDICES, outs, strict=True):
        try:
            _check(got, X[idx])
        except AssertionError as e:
            raise AssertionError(f"index {idx!r}: {e}") from None


@pytest.mark.parametrize("idx", INDICES[:12], ids=repr)
def test_indexing_arrays(idx):
    _check(enp.asarray(X)[idx], X[idx])


def test_indexing_int_and_bool_dtypes_and_scalars():
    xi = np.arange(6, dtype=np.int8).reshape(2, 3)
    xb = xi % 2 == 0
    v = np.arange(4, dtype=np.int32)

    def f(xi, xb, v):
        return xi[1, ::-1], xb[:, 1], v[-1], v[::-3], v[None, 1:3], v[...]

    wants = (xi[1, ::-1], xb[:, 1], v[-1], v[::-3], v[None, 1:3], v[...])
    for outs in (ember.jit(f)(xi, xb, v), f(enp.asarray(xi), enp.asarray(xb), enp.asarray(v))):
        for got, want in zip(outs, wants, strict=True):
            _check(got, np.asarray(want))


@pytest.mark.parametrize("idx", [True, False, (True, 0), (0, True), (Ellipsis, True),
                                 (True, [0, 2]), (False, 1), (np.True_, slice(1, 3)),
                                 (None, True), np.array(True), ([0, 1], True, [1, 2])],
                         ids=str)
def test_scalar_bool_indices_as_numpy(idx):
    """A scalar boolean is a new axis indexed by [0] (True) or [] (False), an advanced index
    broadcast with the others (NumPy's rule; ember refused them)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = x[idx]
    for got in (enp.asarray(x)[idx], ember.jit(lambda a: a[idx])(x)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
    got = enp.asarray(x)[enp.asarray(True), 1]              # a 0-d bool Array too
    np.testing.assert_array_equal(np.asarray(got), x[True, 1])
    with pytest.raises(IndexError, match="not supported by .at"):
        enp.asarray(x).at[True].set(0)


def test_zero_size_dims():
    e = np.zeros((0, 3), np.float32)
    outs = ember.jit(lambda x: (x[:, 1], x[::-1], x[..., :0], x[None, :, 2:]))(e)
    for got, want in zip(outs, (e[:, 1], e[::-1], e[..., :0], e[None, :, 2:]), strict=True):
        _check(got, want)


def test_iteration_and_len():
    a = enp.asarray(X)
    assert len(a) == 3
    rows = list(a)
    for got, want in zip(rows, X, strict=True):
        _check(got, want)
    outs = ember.jit(lambda x: [r.sum() for r in x])(X[0])
    for got, want in zip(outs, X[0], strict=True):
        np.testing.assert_allclose(np.asarray(got), want.sum())


def test_out_of_bounds_int_raises_index_error():
    # An ember IndexingError (also NumPy's IndexError) at the user's line.
    with pytest.raises(ember.errors.IndexingError, match=r"out of bounds.*\n  at .*test_indexing"):
        ember.jit(lambda x: x[3])(X)
    with pytest.raises(IndexError, match="out of bounds"):
        ember.jit(lambda x: x[0, -5])(X)
    with pytest.raises(IndexError, match="out of bounds"):
        enp.asarray(X)[:, 4]


def test_too_many_indices_raises():
    with pytest.raises(EmberError, match="too many indices"):
        ember.jit(lambda x: x[0, 0, 0, 0])(X)
    with pytest.raises(EmberError, match="too many indices"):
        enp.asarray(X)[0, 0, 0, None, 0]
    with pytest.raises(EmberError, match="single ellipsis"):
        ember.jit(lambda x: x[..., 0, ...])(X)


def test_invalid_index_type_raises():
    with pytest.raises(EmberError, match="invalid index"):
        ember.jit(lambda x: x["a"])(X)
    with pytest.raises(EmberError, match="invalid index"):
        ember.jit(lambda x: x[1.5])(X)


def test_eager_int_indices_share_one_program(monkeypatch):
    """``x[i]`` outside jit compiled a program per value of ``i`` (0.24 s each): the ints
    are now arguments of one program per index pattern."""
    from ember.frontend import api
    compiled = []
    real = api.compile_mlir
    monkeypatch.setattr(api, "compile_mlir", lambda *a, **k: compiled.append(1) or real(*a, **k))
    xn = np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 + 7
    x = ember.device_put(xn)
    for i in range(-3, 3):
        for j in range(4):
            assert float(x[i, j, 2]) == xn[i, j, 2]
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(x[i]), xn[i])
    for idx in [(1, None, slice(None, None, -1)), (..., 3), (slice(None), 2, slice(1, 4, 2))]:
        np.testing.assert_array_equal(np.asarray(x[idx]), xn[idx])
    assert len(compiled) <= 2 + 2 * 3, len(compiled)    # per pattern, not per value
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        x[0, -5]


def test_concrete_0d_arrays_as_slice_bounds():
    """NumPy and JAX take a 0-d integer array as a slice bound (the Array API suite does)."""
    xn = np.arange(10, dtype=np.float32)
    x = ember.device_put(xn)
    for bound in (enp.asarray(2), np.asarray(2), np.int64(2)):
        np.testing.assert_array_equal(np.asarray(x[0:bound]), xn[0:2])
        np.testing.assert_array_equal(np.asarray(x[bound::enp.asarray(3)]), xn[2::3])
    with pytest.raises(EmberError, match="slice bounds must be static"):
        ember.jit(lambda x, n: x[:n])(xn, 3)
    with pytest.raises(TypeError, match="slice bounds must be integers"):
        x[:np.asarray(2.0)]


# --- index helpers, grids and concatenators (ember/numpy/_index_tricks.py) against JAX --------

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(17)
X46 = _RNG.normal(size=(4, 6)).astype(np.float32)
V6 = _RNG.normal(size=(6,)).astype(np.float32)


@_ignore_narrowing
def test_index_helpers(jnp):
    close(enp.diag_indices(3), jnp.diag_indices(3))
    close(enp.diag_indices(2, 4), jnp.diag_indices(2, 4))
    close(enp.diag_indices_from(np.ones((3, 3, 3))), jnp.diag_indices_from(np.ones((3, 3, 3))))
    for k in [-1, 0, 2]:
        close(enp.tril_indices_from(X46, k), jnp.tril_indices_from(X46, k))
        close(enp.triu_indices_from(X46, k), jnp.triu_indices_from(X46, k))
    rows, cols = np.array([0, 3]), np.array([5, 1, 2])
    close(enp.ix_(rows, cols), jnp.ix_(rows, cols))
    close(enp.asarray(X46)[enp.ix_(rows, cols)], X46[np.ix_(rows, cols)])
    close(ember.jit(lambda x, r, c: x[enp.ix_(r, c)])(X46, rows, cols), X46[np.ix_(rows, cols)])
    close(ember.jit(lambda x: x[enp.tril_indices_from(x)])(X46), X46[np.tril_indices_from(X46)])


@_ignore_narrowing
def test_grids_and_concatenators(jnp):
    for key in [slice(0, 5), (slice(0, 3), slice(-1, 1, 0.5)), (slice(0, 1, 5j), slice(2))]:
        close(enp.mgrid[key], jnp.mgrid[key])
        close(enp.ogrid[key], jnp.ogrid[key])
    close(enp.r_[1:4, 0, V6[:2], [7, 8]], jnp.r_[1:4, 0, V6[:2], [7, 8]])
    close(enp.r_[-1:1:5j], jnp.r_[-1:1:5j])
    close(enp.r_["0,2", [1, 2], [3, 4]], jnp.r_["0,2", [1, 2], [3, 4]])
    close(enp.r_["1,2,0", [1, 2], [3, 4]], jnp.r_["1,2,0", [1, 2], [3, 4]])
    close(enp.r_["r", [1, 2]], jnp.r_["r", [1, 2]])
    close(enp.r_["c", 1:3], jnp.r_["c", 1:3])
    close(enp.r_[X46, X46], jnp.r_[X46, X46])
    close(enp.c_[V6, V6], jnp.c_[V6, V6])
    close(enp.c_[X46, X46], jnp.c_[X46, X46])
    close(enp.c_[np.array([[1, 2]]), 0, 0, np.array([[4, 5]])],
          jnp.c_[np.array([[1, 2]]), 0, 0, np.array([[4, 5]])])
    assert enp.s_[1:2, ::3] == np.s_[1:2, ::3] and enp.index_exp[2] == np.index_exp[2]
    close(ember.jit(lambda x: enp.r_[x, 0.0, x])(V6), jnp.r_[V6, 0.0, V6])


INDEX_TRICK_ERRORS = [
    (lambda: enp.diag_indices_from(X46), TracingError, "equal length"),
    (lambda: enp.tril_indices_from(V6), TracingError, "2-D"),
    (lambda: enp.ix_(X46), TracingError, "1-D"),
    (lambda: enp.mgrid[1], ArgumentError, "slices"),
    (lambda: enp.r_["bad", V6], ArgumentError, "directive"),
]


@pytest.mark.parametrize("call, error, match", INDEX_TRICK_ERRORS)
def test_index_trick_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
