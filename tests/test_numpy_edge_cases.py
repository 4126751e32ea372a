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


def test_bool_remainder_fmod_and_products():
    r, f, d, m = ember.jit(lambda a, b: (a % b, enp.fmod(a, b), a @ b, enp.matmul(
        a[:, None], b[None])))(B, C)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(r), np.remainder(B, C))
        np.testing.assert_array_equal(np.asarray(f), np.fmod(B, C))
        assert r.dtype == np.remainder(B, C).dtype                   # int8, as NumPy
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
