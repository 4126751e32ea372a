"""Edge cases of ember.numpy where NumPy and JAX define a result and ember once gave another
(found by differential fuzzing against both): integer division by zero, bool operands,
signed zeros, unsigned negation, integer rounding, weak types. Oracle: NumPy, or JAX's
documented choice where the two differ."""

import numpy as np
import pytest

import ember
import ember.numpy as enp

I32 = np.array([5, -7, 3, 0, -8, 9], np.int32)
B = np.array([True, False, True, False])
C = np.array([True, True, False, False])


def test_integer_remainder_and_fmod_by_zero_are_zero():
    # JAX replaces a zero divisor by 1 (NumPy warns and gives 0); C leaves it undefined.
    z = np.array([0, 0, 2, 0, 3, -2], np.int32)
    r, m, f = ember.jit(lambda x, y: (x % y, enp.mod(x, y), enp.fmod(x, y)))(I32, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(r), np.remainder(I32, z))
        np.testing.assert_array_equal(np.asarray(m), np.remainder(I32, z))
        np.testing.assert_array_equal(np.asarray(f), np.fmod(I32, z))
    u = ember.jit(lambda x: x % np.uint8(0))(np.array([7, 200], np.uint8))
    np.testing.assert_array_equal(np.asarray(u), [0, 0])


def test_integer_floor_divide_by_zero_as_jax():
    """JAX's x // 0 for integers: the quotient -1, one less where x is not 0 (the signs of
    x and 0 differ and the remainder x is not 0): -2, and -1 for 0 // 0."""
    x = np.array([6, -6, 0, 7, -7, 7], np.int32)
    y = np.array([0, 0, 0, 2, 2, -2], np.int32)
    q, d = ember.jit(lambda a, b: (a // b, enp.divmod(a, b)[0]))(x, y)
    for got in (q, d):
        np.testing.assert_array_equal(np.asarray(got), [-2, -2, -1, 3, -4, -4])


def test_bool_remainder_fmod_and_products():
    r, f, d, m, q = ember.jit(lambda a, b: (a % b, enp.fmod(a, b), a @ b, enp.matmul(
        a[:, None], b[None]), a // b))(B, C)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(r), np.remainder(B, C))
        np.testing.assert_array_equal(np.asarray(f), np.fmod(B, C))
    # JAX's dtype: bools divide as numbers of the default integer type (NumPy's int8);
    # x // 0 as JAX's integer division (test_integer_floor_divide_by_zero_as_jax): -2 for
    # x != 0, -1 for 0 // 0.
    assert r.dtype == f.dtype == q.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(q), np.where(C, B, np.where(B, -2, -1)))
    assert d.dtype == np.bool_ and bool(d) == bool(B @ C)
    np.testing.assert_array_equal(np.asarray(m), np.matmul(B[:, None], C[None]))
    eye = np.eye(3, dtype=bool)
    np.testing.assert_array_equal(np.asarray(enp.dot(eye, eye[::-1])), np.dot(eye, eye[::-1]))


def test_floor_divide_keeps_the_sign_of_a_zero_quotient():
    x = np.array([0.0, -0.0, 0.0, -3.0, 3.0], np.float32)
    y = np.array([-1.0, 1.0, 1.0, 4.0, -4.0], np.float32)
    got = np.asarray(ember.jit(lambda a, b: a // b)(x, y))
    want = np.floor_divide(x, y)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
def test_unsigned_negation_wraps(dtype):
    x = np.array([0, 1, 200], dtype)
    a, b = ember.jit(lambda v: (-v, enp.negative(v)))(x)
    np.testing.assert_array_equal(np.asarray(a), -x)
    np.testing.assert_array_equal(np.asarray(b), np.negative(x))


@pytest.mark.parametrize("decimals", [-1, -2, -3, -12])
def test_integer_round_with_negative_decimals(decimals):
    # NumPy rounds to a multiple of 10^-decimals, half to even (JAX refuses).
    x = np.array([3, -7, 155, 1234, 25, 35, -25, -35, 123456789, -987654321], np.int32)
    got = ember.jit(lambda v: (enp.round(v, decimals), enp.around(v, decimals)))(x)
    for g in got:
        np.testing.assert_array_equal(np.asarray(g), np.round(x, decimals))
    np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: enp.round(v, 2))(x)), x)


def test_python_float_with_an_int_array_stays_weak():
    # i32 // 2.5 and heaviside(i32, 0.5) are weakly typed float32, as i32 + 2.5 is: a
    # float16 operand then keeps them float16 (JAX's promotion).
    h = np.ones(6, np.float16)
    outs = ember.jit(lambda i, h: (i // 2.5 + h, i % 2.5 + h, enp.heaviside(i, 0.5) + h,
                                   i + 2.5 + h))(I32, h)
    assert [o.dtype for o in outs] == [np.float16] * 4
    want = np.floor_divide(I32.astype(np.float32), np.float32(2.5)).astype(np.float16) + h
    np.testing.assert_array_equal(np.asarray(outs[0]), want)


def test_integer_power_with_negative_exponents():
    # NumPy refuses; JAX gives 1 ** -n = 1, (-1) ** -n = +-1 and 0 otherwise.
    x = np.array([1, -1, -1, 2, -2, 0, 5, 3], np.int32)
    y = np.array([-3, -3, -2, -1, -1, 2, 3, 0], np.int32)
    got = np.asarray(ember.jit(enp.power)(x, y))
    want = [1, -1, 1, 0, 0, 0, 125, 1]
    np.testing.assert_array_equal(got, want)


def test_float_functions_of_mixed_integer_kinds_convert_each_argument():
    """int8 with uint32 promotes to int32 without x64: the uint32 value must reach float
    directly, as in JAX (true_divide(42, 4294967295) was -42, the uint wrapped to -1)."""
    a, b = np.array([42], np.int8), np.array([4294967295], np.uint32)
    got = ember.jit(lambda a, b: (a / b, enp.hypot(a, b)))(a, b)
    np.testing.assert_allclose(np.asarray(got[0]), 42 / 4294967295, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), 4294967295.0, rtol=1e-6)


def test_integer_round_with_negative_decimals_does_not_overflow():
    for dt in (np.int8, np.uint8, np.int16):
        x = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1, dtype=dt)
        for d in (-1, -2):
            np.testing.assert_array_equal(np.asarray(enp.round(x, d)), np.round(x, d),
                                          err_msg=f"{dt.__name__} decimals={d}")


def test_out_of_range_python_ints_wrap_as_jax():
    u = np.array([0, 1], np.uint8)
    i = np.array([1, -2], np.int8)
    add, eq, mul = ember.jit(lambda u, i: (u + (-1), u == -1, i * 200))(u, i)
    np.testing.assert_array_equal(np.asarray(add), [255, 0])
    np.testing.assert_array_equal(np.asarray(eq), [False, False])
    np.testing.assert_array_equal(np.asarray(mul), (i.astype(np.int32) * -56).astype(np.int8))
    with pytest.raises(OverflowError):
        enp.asarray(u) + 2 ** 40


def test_nanquantile_with_an_array_of_quantiles_and_a_zero_d_index():
    x = np.array([[1.0, np.nan, 3.0, 4.0], [2.0, 5.0, np.nan, np.nan]], np.float32)
    q = np.array([0.25, 0.75], np.float32)
    for got in (enp.nanquantile(x, q, axis=1), ember.jit(lambda x, q: enp.nanquantile(
            x, q, axis=1))(x, q), enp.nanpercentile(x, q * 100, axis=1)):
        np.testing.assert_allclose(np.asarray(got), np.nanquantile(x, q, axis=1), rtol=1e-6)
    v = np.arange(5.0, dtype=np.float32)
    assert float(enp.asarray(v)[np.array(1)]) == 1.0
