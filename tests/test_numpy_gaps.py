"""Gaps between ember.numpy and jax.numpy: NumPy (and ember) arrays as shape, size and axis
arguments of eager calls, traced ``repeat`` counts with a static total, ``bincount`` of bools,
``trim_zeros``, ``angle``, JAX's index and bool dtypes under x64, and JAX's quantile formulas.
The oracle is JAX (NumPy where JAX agrees with it), run on the same inputs."""

from __future__ import annotations

import helpers
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import ConcretizationError

pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

rng = np.random.default_rng(23)
X = np.arange(6.0, dtype=np.float32)
X2 = rng.normal(size=(2, 3)).astype(np.float32)


def close(got, want, tol=1e-6):
    helpers.close(got, want, tol)


def typed(got, want):
    """``close``, and the same weak type."""
    close(got, want)
    assert got.weak_type == want.weak_type, (got.weak_type, want.weak_type)


# --- concrete arrays as shapes, sizes and axes -------------------------------------------------

SHAPE_CASES = {
    "repeat": lambda m, a: m.repeat(X[:3], a(np.array([1, 2, 3]))),
    "repeat_axis": lambda m, a: m.repeat(X2, a(np.array([2, 1])), axis=a(np.int64(0))),
    "reshape": lambda m, a: m.reshape(X, a(np.array([2, 3]))),
    "tile": lambda m, a: m.tile(X, a(np.array([2]))),
    "split": lambda m, a: m.split(X, a(np.array([1, 2]))),
    "hsplit": lambda m, a: m.hsplit(X2, a(np.array([1]))),
    "pad": lambda m, a: m.pad(X, a(np.array([[1, 2]]))),
    "transpose": lambda m, a: m.transpose(X2, a(np.array([1, 0]))),
    "zeros": lambda m, a: m.zeros(a(np.array([2, 3]))),
    "full": lambda m, a: m.full(a(np.array([2, 3])), 2.0),
    "broadcast_to": lambda m, a: m.broadcast_to(X, a(np.array([2, 6]))),
    "sum_0d_axis": lambda m, a: m.sum(X2, axis=a(np.array(1))),
    "mean_axes": lambda m, a: m.mean(X2, axis=a(np.array([0, 1]))),
    "moveaxis": lambda m, a: m.moveaxis(X2, a(np.array([0])), a(np.array([1]))),
    "unravel_index": lambda m, a: m.unravel_index(np.array([3, 4]), a(np.array([2, 3]))),
    "zeros_like": lambda m, a: m.zeros_like(X, shape=a(np.array([3, 1]))),
    "roll_vector": lambda m, a: m.roll(X2, a(np.array([1, 2])), axis=a(np.array([0, 1]))),
}


def _ember_array(v):
    return ember.device_put(v) if isinstance(v, np.ndarray) else v


@pytest.mark.parametrize("host", ["numpy", "ember"])
@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_concrete_arrays_as_shape_arguments(name, host):
    # An eager call traced every array argument, so one that gives a shape, a size or an
    # axis raised ConcretizationError; JAX takes concrete arrays there.
    case = SHAPE_CASES[name]
    close(case(enp, (lambda v: v) if host == "numpy" else _ember_array),
          case(jnp, lambda v: v))


def test_static_arrays_are_cached_by_value_and_data_stays_an_argument():
    for shape in ([2, 3], [3, 2], [6, 1]):
        close(enp.reshape(X, np.array(shape)), jnp.reshape(X, np.array(shape)))
    # The same signature once with a NumPy scalar axis, then a 0-d array: this recursed.
    close(enp.sum(X2, axis=np.int64(0)), jnp.sum(X2, axis=0))
    close(enp.sum(X2, axis=np.array(1)), jnp.sum(X2, axis=1))
    # The data of a call that also takes a static array keeps its own value per call.
    reps = np.array([1, 0, 2])
    for k in range(3):
        data = (X[:3] + k).astype(np.float32)
        close(enp.repeat(data, reps), jnp.repeat(data, reps))


def test_roll_by_traced_shifts_along_several_axes():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for shift, axis in [(np.array([1, -5], np.int32), (0, 2)), (np.int32(2), (1, 2)),
                        (np.array([3], np.int32), None), (np.array([1, 2], np.int32), 1)]:
        got = ember.jit(lambda x, s, ax=axis: enp.roll(x, s, axis=ax))(a, shift)
        close(got, jnp.roll(a, shift, axis=axis))


# --- repeat with traced counts -----------------------------------------------------------------

@pytest.mark.parametrize("total", [0, 3, 6, 7, 9])
def test_repeat_traced_counts_with_a_static_total(total):
    v = np.array([1, 2, 0, 3], np.int32)
    m = np.arange(8.0, dtype=np.float32).reshape(4, 2)

    def rep(mod, axis=None, t=total):
        return lambda a, r: mod.repeat(a, r, axis=axis, total_repeat_length=t)

    close(ember.jit(rep(enp))(v, v), jax.jit(rep(jnp))(v, v))
    close(ember.jit(rep(enp, 0))(m, v), rep(jnp, 0)(m, v))
    two = np.array([2], np.int32)
    close(ember.jit(rep(enp, 1))(m, two), rep(jnp, 1)(m, two))
    close(ember.jit(rep(enp))(np.float32(3), np.int32(2)), rep(jnp)(np.float32(3), 2))
    # Concrete counts whose sum is not the total: cut, or the last element repeated (JAX's).
    close(rep(enp, 0)(m, [1, 0, 2, 1]), rep(jnp, 0)(m, np.array([1, 0, 2, 1])))
    close(rep(enp, 1)(m, 2), rep(jnp, 1)(m, 2))


def test_repeat_traced_counts_need_a_total():
    with pytest.raises(ConcretizationError, match="repeat"):
        ember.jit(lambda a, r: enp.repeat(a, r))(X, np.ones(6, np.int32))


# --- bincount, trim_zeros, angle ---------------------------------------------------------------

def test_bincount_of_bools():
    b = np.array([True, False, True, True])
    w = np.arange(4.0, dtype=np.float32)
    close(enp.bincount(b), jnp.bincount(b))
    close(enp.bincount(b, weights=w, minlength=4), jnp.bincount(b, weights=w, minlength=4))
    close(ember.jit(lambda x: enp.bincount(x, length=3))(b), jnp.bincount(b, length=3))


def test_trim_zeros():
    a1 = np.array([0, 0, 2, 0, 1, 4, 3, 0, 0, 0], np.int32)
    a2 = np.zeros((4, 5), np.float32)
    a2[1:3, 1:4] = 1
    for a in (a1, a2, np.zeros(3, np.float32), np.zeros((2, 0), np.float32)):
        axes = [None, 0, -1] if a.ndim == 1 else [None, 0, 1, (0, 1)]
        for trim in ("fb", "f", "b", "B", "x"):
            for axis in axes:
                close(enp.trim_zeros(a, trim, axis), jnp.trim_zeros(a, trim, axis))
    close(enp.trim_zeros(ember.device_put(a1)), jnp.trim_zeros(a1))
    # The result's shape depends on the values: JAX also needs a concrete argument.
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(a1)
    with pytest.raises(ConcretizationError, match="trim_zeros"):
        ember.jit(enp.trim_zeros)(a1)


@pytest.mark.parametrize("x64", [False, True])
def test_angle(x64):
    ember.config.update("enable_x64", x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        special = [1.0, -2.0, -0.0, 0.0, np.nan, -np.inf, np.inf]
        for v in [3, -3.0, np.float16(-1), np.array(special, np.float16),
                  np.array(special, ml_dtypes.bfloat16),
                  np.array(special, np.float32), np.array([1, -2, 0]), np.array([True, False])]:
            for deg in (False, True):
                typed(enp.angle(v, deg=deg), jnp.angle(v, deg=deg))
                close(ember.jit(lambda x, d=deg: enp.angle(x, deg=d))(v), jnp.angle(v, deg=deg))
    finally:
        ember.config.update("enable_x64", False)
        jax.config.update("jax_enable_x64", False)


# --- JAX's dtypes under x64 --------------------------------------------------------------------

def test_x64_index_results_are_int32(both_x64):
    # JAX's searchsorted indices are int32 for any axis that fits (digitize's too), and
    # argpartition's come from lax.top_k (int32); ember gave the default int (int64).
    a = np.array([1.0, 3.0, 5.0, 7.0])
    v = np.array([2.0, 6.0, 7.0])
    for f in [lambda m: m.searchsorted(a, v), lambda m: m.searchsorted(a, v, side="right"),
              lambda m: m.searchsorted(a, v, sorter=np.arange(4)),
              lambda m: m.searchsorted(a.astype(np.int32), np.int32(3)),
              lambda m: m.digitize(v, a), lambda m: m.digitize(v, a[::-1], right=True),
              lambda m: m.digitize(v, np.array([]))]:
        close(f(enp), f(jnp))
        close(ember.jit(lambda f=f: f(enp))(), f(jnp))
    # argpartition: JAX's dtype; its order past kth differs (ember's matches partition's).
    p = np.array([5.0, 2.0, 9.0, 1.0])
    for got in (enp.argpartition(p, 1), ember.jit(lambda: enp.argpartition(p, 1))()):
        assert got.dtype == jnp.argpartition(p, 1).dtype
        close(p[np.asarray(got)], jnp.partition(p, 1))


BOOL_OPS = ["floor_divide", "remainder", "fmod", "power", "left_shift", "right_shift",
            "divmod"]


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("op", BOOL_OPS)
def test_bool_arithmetic_dtypes_follow_jax(op, x64):
    # JAX makes bools int32 numbers here (promote_dtypes_numeric), under x64 too, and keeps
    # a Python int operand's weak type; ember gave the default int, strongly typed.
    ember.config.update("enable_x64", x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        b = np.array([True, False, True])
        t = np.array([True, True, True])
        others = [t, 1, np.int8(1), np.array([1, 2, 1], np.int8), np.array([1, 1, 2], np.uint8)]
        if op not in ("left_shift", "right_shift"):
            others.append(2.0)
        for o in others:
            for args in ((b, o), (o, b)):
                if op == "fmod" and o is t and args[1] is b:
                    continue    # JAX's bool x fmod False is x (XLA's rem by 0); ember's 0
                want = getattr(jnp, op)(*args)
                got = getattr(enp, op)(*args)
                if op == "divmod":
                    for g, w in zip(got, want):
                        typed(g, w)
                else:
                    typed(got, want)
        typed(enp.square(b), jnp.square(b))
    finally:
        ember.config.update("enable_x64", False)
        jax.config.update("jax_enable_x64", False)


def test_x64_power_by_a_numpy_integer_and_rint(both_x64):
    # A concrete integer exponent keeps the base's dtype in JAX (integer_pow), a NumPy
    # scalar or 0-d array included; rint makes integers and bools the default float.
    b = np.array([True, False])
    i8 = np.array([2, -3], np.int8)
    for x1, x2 in [(b, np.int8(2)), (i8, np.int32(3)), (i8, np.array(3)),
                   (np.array([1.5], np.float16), np.int64(3)), (i8, np.uint8(0)),
                   (i8, np.True_), (b, np.array(True))]:
        typed(enp.power(x1, x2), jnp.power(x1, x2))
    for v in (b, i8, np.array([1, 2], np.uint32), 3, 2.5, np.array([0.5, 1.5], np.float32)):
        typed(enp.rint(v), jnp.rint(v))
    f = np.array([1.5, 2.0], np.float32)
    close(enp.ldexp(f, b), jnp.ldexp(f, b))


# --- quantiles ---------------------------------------------------------------------------------

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]
QS = np.array([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
INF = np.inf


@pytest.mark.parametrize("method", METHODS)
def test_quantile_of_infinities_follows_jax(method):
    # JAX's formulas, lo * (1 - g) + hi * g for linear and (lo + hi) / 2 for midpoint, give
    # inf where NumPy's lerp gives inf - inf = NaN; JAX's nearest takes the lower value at a
    # tie (NumPy the even index).
    for a in [[1.0, INF], [-INF, INF], [1.0, 2.0, INF, INF], [-INF, -INF, 1.0],
              [-INF, 0.0, INF], [4.0, 1.0, 3.0, 2.0]]:
        a = np.array(a, np.float32)
        close(enp.quantile(a, QS, method=method), jnp.quantile(a, QS, method=method))
        close(enp.percentile(a, QS * 100, method=method),
              jnp.percentile(a, QS * 100, method=method))
    x = rng.normal(size=(3, 8)).astype(np.float32)
    x[0, 3], x[1, :2] = INF, -INF
    q = QS.astype(np.float32)
    got = ember.jit(lambda x, q: enp.quantile(x, q, axis=1, method=method))(x, q)
    close(got, jnp.quantile(x, q, axis=1, method=method))


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_methods(method):
    x = rng.normal(size=(5, 8)).astype(np.float32)
    x[0, 3], x[1, :2] = INF, -INF
    x[2, 1], x[3, :], x[4, ::2] = np.nan, np.nan, np.nan
    for axis in (0, 1, None):
        close(enp.nanquantile(x, QS, axis=axis, method=method),
              jnp.nanquantile(x, QS, axis=axis, method=method))
        close(enp.nanpercentile(x, 30.0, axis=axis, method=method, keepdims=True),
              jnp.nanpercentile(x, 30.0, axis=axis, method=method, keepdims=True))
    q = QS.astype(np.float32)
    got = ember.jit(lambda x, q: enp.nanquantile(x, q, axis=1, method=method))(x, q)
    close(got, jnp.nanquantile(x, q, axis=1, method=method))


@pytest.mark.parametrize("base, n", [(2, 3), (2.0, -1), (2.0, 0), (2, 0), (-3, 3), (2.5, 2),
                                     (np.float32(2), -2)])
def test_power_of_python_scalars_as_jax(base, n):
    """A Python scalar base to a static integer power: exact and weakly typed as JAX's (it
    took the general path: 2 ** 3 was strong, 2 ** -1 was 0 where JAX raises)."""
    typed(enp.power(base, n), jnp.power(base, n))


def test_python_int_to_a_negative_power_raises_as_jax():
    with pytest.raises(TypeError):
        jnp.power(2, -1)
    with pytest.raises(ember.errors.TracingError, match="negative integer powers"):
        enp.power(2, -1)
