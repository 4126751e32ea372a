"""JAX's API rules beyond the values: result dtypes under x64, weak types of created arrays,
products' ``precision`` and ``preferred_element_type``, and what ``asarray``/``array``/``copy``
accept. The oracle is JAX itself (a test dependency), run on the same inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ember
import ember.numpy as enp

INEXACT = {
    "true_divide": lambda m, x: x / x,
    "exp": lambda m, x: m.exp(x),
    "arctan2": lambda m, x: m.arctan2(x, x),
    "mean": lambda m, x: m.mean(x),
    "var": lambda m, x: m.var(x),
    "std": lambda m, x: m.std(x),
    "median": lambda m, x: m.median(x),
    "average": lambda m, x: m.average(x, weights=x),
    "quantile": lambda m, x: m.quantile(x, 0.5),
    "linspace": lambda m, x: m.linspace(0, x[1], 3),
    "corrcoef": lambda m, x: m.corrcoef(x),
    "norm": lambda m, x: m.linalg.norm(x),
    "gradient": lambda m, x: m.gradient(x),
}


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "uint32", "int64"])
def test_x64_makes_integers_of_up_to_32_bits_float32(both_x64, dtype):
    """JAX's to_inexact_dtype: bools and integers of up to 32 bits become float32 even under
    x64 (ember gave float64), 64-bit integers float64."""
    x = np.arange(1, 5).astype(dtype)
    for name, f in INEXACT.items():
        if dtype == "bool" and name == "gradient":
            continue                        # JAX refuses booleans there
        got, want = f(enp, enp.asarray(x)), f(jnp, jnp.asarray(x))
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)


def test_x64_one_hot_is_the_default_float(both_x64):
    import ember.nn as enn
    jnn = pytest.importorskip("jax.nn")
    assert enn.one_hot(np.arange(3), 4).dtype == jnn.one_hot(np.arange(3), 4).dtype


def test_lax_round_takes_jax_rounding_methods():
    x = np.float32([0.5, 1.5, 2.5, -2.5, -0.5])
    for method in (0, 1, jax.lax.RoundingMethod.TO_NEAREST_EVEN):
        want = np.asarray(jax.lax.round(x, method))
        for m in (method, ember.lax.RoundingMethod(int(method))):
            np.testing.assert_array_equal(np.asarray(ember.lax.round(x, m)), want)
    with pytest.raises(ember.errors.TracingError, match="rounding_method"):
        ember.lax.round(x, 3)


def test_created_python_scalars_are_weakly_typed():
    """``jnp.asarray(1.0)`` is weakly typed, so it takes a float16 operand's dtype; lists and
    NumPy scalars are not."""
    h = np.ones(2, np.float16)
    cases = [lambda m: m.asarray(1.0), lambda m: m.array(2.5), lambda m: m.asarray(3),
             lambda m: m.array([1.0]), lambda m: m.asarray(np.float32(1)),
             lambda m: m.array(True), lambda m: m.array(1.0, dtype=np.float32),
             lambda m: m.array(1.0, ndmin=2), lambda m: m.asarray(m.asarray(1.0))]
    for make in cases:
        got, want = make(enp), make(jnp)
        assert got.weak_type == want.weak_type and got.shape == want.shape
        assert (got + h).dtype == (want + h).dtype
        assert repr(got) == repr(want)
    assert ember.jit(lambda x: enp.asarray(2.0) * x)(h).dtype == np.float16


def test_array_copies_and_asarray_does_not():
    """``array`` (``copy=True``) and ``copy`` give an Array a buffer of its own: donating the
    copy leaves the original as it is."""
    a = enp.arange(4.0)
    assert enp.asarray(a) is a and enp.array(a, copy=False) is a
    b, c = enp.array(a), enp.copy(a)
    assert b is not a and c is not a
    ember.jit(lambda x: x * 2, donate_argnums=0)(c)
    assert c.is_deleted() and not a.is_deleted()
    np.testing.assert_array_equal(np.asarray(a), np.arange(4.0))
    on = enp.asarray(np.ones(3), device=ember.devices("cpu")[0])
    assert on.device == ember.devices("cpu")[0]
    with pytest.raises(ember.errors.TracingError, match="order='F'"):
        enp.array([1, 2], order="F")


def test_repr_of_empty_arrays_shows_the_shape():
    for shape in [(0,), (0, 3), (2, 0, 1)]:
        assert repr(enp.zeros(shape)) == repr(jnp.zeros(shape))


def test_shape_dtype_struct_refuses_a_non_integer_shape():
    assert ember.ShapeDtypeStruct((2, np.int64(3)), np.float32).shape == (2, 3)
    with pytest.raises(TypeError, match=r"tuple of ints, got \(2.5,\)"):
        ember.ShapeDtypeStruct((2.5,), np.float32)


PRODUCTS = {
    "matmul": lambda m, a, b, **k: m.matmul(a, b, **k),
    "dot": lambda m, a, b, **k: m.dot(a, b, **k),
    "inner": lambda m, a, b, **k: m.inner(a, b, **k),
    "vdot": lambda m, a, b, **k: m.vdot(a, b, **k),
    "tensordot": lambda m, a, b, **k: m.tensordot(a, b, axes=1, **k),
    "linalg.matmul": lambda m, a, b, **k: m.linalg.matmul(a, b, **k),
    "vecdot": lambda m, a, b, **k: m.vecdot(a, b, **k),
    "einsum": lambda m, a, b, **k: m.einsum("ij,jk->ik", a, b, **k),
    "lax.dot_general": lambda m, a, b, **k: (ember.lax if m is enp else jax.lax).dot_general(
        a, b, (((1,), (0,)), ((), ())), **k),
    "lax.dot": lambda m, a, b, **k: (ember.lax if m is enp else jax.lax).dot(a, b, **k),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_preferred_element_type_accumulates_in_it(name):
    """int8 products summed in int32, not wrapped in int8 (100 * 100 * 3 = 30000)."""
    a = np.full((3, 3), 100, np.int8)
    f = PRODUCTS[name]
    got = f(enp, a, a, preferred_element_type=np.int32, precision=ember.lax.Precision.HIGHEST)
    want = f(jnp, a, a, preferred_element_type=np.int32, precision=jax.lax.Precision.HIGHEST)
    assert got.dtype == want.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_precision_names_and_refusals():
    P = ember.lax.Precision
    assert [P(n) for n in ("default", "high", "highest", "bfloat16", "tensorfloat32",
                           "float32")] == [P.DEFAULT, P.HIGH, P.HIGHEST, P.DEFAULT, P.HIGH,
                                           P.HIGHEST]
    x = np.ones((2, 2), np.float32)
    for ok in (None, "highest", P.HIGH, ("high", P.DEFAULT)):
        np.testing.assert_array_equal(np.asarray(enp.matmul(x, x, precision=ok)), x @ x)
    with pytest.raises(ember.errors.TracingError, match="matmul: precision must be"):
        enp.matmul(x, x, precision="ultra")
    with pytest.raises(ember.errors.TracingError, match="dot_general: precision must be"):
        ember.lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=3)


def test_fori_loop_accepts_unroll():
    # Static bounds: unrolled, JAX's value. A traced bound: refused, as JAX refuses it.
    got = ember.jit(lambda x: ember.lax.fori_loop(0, 5, lambda i, c: c + i, x, unroll=2))(0)
    assert int(got) == jax.lax.fori_loop(0, 5, lambda i, c: c + i, 0, unroll=2) == 10
    with pytest.raises(ValueError, match="statically known"):
        jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c + i, 0, unroll=2))(5)
    with pytest.raises(ember.errors.TracingError, match="unroll needs a trip count"):
        ember.jit(lambda n: ember.lax.fori_loop(0, n, lambda i, c: c + i, 0, unroll=2))(5)
