"""Bit ops (shifts, bitcast_convert_type, population_count, clz) against NumPy oracles."""

import numpy as np
import pytest
from helpers import close, eager_and_jit
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

import ember
import ember.lax as lax
import ember.numpy
import ember.numpy as enp
from ember.errors import ArgumentError, TracingError
from ember.numpy import _bits as enb

DTYPES = ["int8", "int32", "uint16", "uint32"]


def _unsigned(dt):
    return np.dtype(f"uint{np.dtype(dt).itemsize * 8}")


def np_shift_left(x, s):
    u, su = x.view(_unsigned(x.dtype)), s.view(_unsigned(x.dtype))
    width = x.dtype.itemsize * 8
    out = np.where(su >= width, 0, u << np.minimum(su, width - 1))
    return out.astype(u.dtype).view(x.dtype)


def np_shift_right_logical(x, s):
    u, su = x.view(_unsigned(x.dtype)), s.view(_unsigned(x.dtype))
    width = x.dtype.itemsize * 8
    out = np.where(su >= width, 0, u >> np.minimum(su, width - 1))
    return out.astype(u.dtype).view(x.dtype)


def np_shift_right_arithmetic(x, s):
    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    xs, su = x.view(signed), s.view(_unsigned(x.dtype))
    width = x.dtype.itemsize * 8
    return (xs >> np.minimum(su, width - 1).astype(signed)).view(x.dtype)


def np_popcount(x):
    u = x.view(_unsigned(x.dtype))
    return np.array([bin(int(v)).count("1") for v in u.ravel()]).reshape(x.shape).astype(x.dtype)


def np_clz(x):
    u = x.view(_unsigned(x.dtype))
    width = x.dtype.itemsize * 8
    return np.array([width - int(v).bit_length() for v in u.ravel()]).reshape(
        x.shape).astype(x.dtype)


@ember.jit
def all_bits(x, s):
    return (lax.shift_left(x, s), lax.shift_right_logical(x, s),
            lax.shift_right_arithmetic(x, s), lax.population_count(x), lax.clz(x))


def _inputs(dt, n=64, seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    width = np.dtype(dt).itemsize * 8
    x = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
    x[:6] = np.array([0, 1, info.max, info.min, info.max // 3, info.min + 1], dtype=dt)
    # amounts: in range, exactly the width, over-wide, and negative (huge as unsigned)
    s = rng.integers(0, width, size=n).astype(dt)
    s[:8] = np.array([0, width - 1, width, width + 1, min(2 * width, info.max), 1, 3,
                      info.max], dtype=dt)
    if info.min < 0:
        s[8:12] = np.array([-1, -width, info.min, -2], dtype=dt)
    return x, s


@pytest.mark.parametrize("dt", DTYPES)
def test_bit_ops_match_numpy(dt):
    x, s = _inputs(dt)
    shl, shrl, shra, pop, clz = (np.asarray(v) for v in all_bits(x, s))
    for got, want in ((shl, np_shift_left(x, s)), (shrl, np_shift_right_logical(x, s)),
                      (shra, np_shift_right_arithmetic(x, s)), (pop, np_popcount(x)),
                      (clz, np_clz(x))):
        assert got.dtype == np.dtype(dt)
        np.testing.assert_array_equal(got, want)


@settings(max_examples=25, deadline=None)
@given(x=hnp.arrays(np.int32, (64,)), s=hnp.arrays(np.int32, (64,)))
def test_bit_ops_hypothesis(x, s):
    shl, shrl, shra, pop, clz = (np.asarray(v) for v in all_bits(x, s))
    np.testing.assert_array_equal(shl, np_shift_left(x, s))
    np.testing.assert_array_equal(shrl, np_shift_right_logical(x, s))
    np.testing.assert_array_equal(shra, np_shift_right_arithmetic(x, s))
    np.testing.assert_array_equal(pop, np_popcount(x))
    np.testing.assert_array_equal(clz, np_clz(x))


def test_shifts_agree_with_numpy_functions():
    """NumPy's own left_shift/right_shift define over-wide and negative amounts the same."""
    x, s = _inputs("int32")
    np.testing.assert_array_equal(np.asarray(enb.left_shift(x, s)), np.left_shift(x, s))
    np.testing.assert_array_equal(np.asarray(enb.right_shift(x, s)), np.right_shift(x, s))
    xu, su = _inputs("uint16", seed=1)
    np.testing.assert_array_equal(np.asarray(enb.right_shift(xu, su)), np.right_shift(xu, su))


def test_numpy_level_broadcasting_and_promotion():
    x = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    s = np.array([0, 1, 7, 9], np.int8)
    got = enb.left_shift(x, s)
    assert got.dtype == np.int8 and got.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(got), np.left_shift(x, s))
    got = enb.right_shift(x, 2)          # a Python int keeps int8
    assert got.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(got), np.right_shift(x, 2))
    got = enb.left_shift(np.uint8(3), np.int8(2))
    assert got.dtype == np.int16 and int(np.asarray(got)) == 12


def test_bitwise_count():
    x = np.array([0, 1, -1, -8, 255, -(2 ** 31), 2 ** 31 - 1], np.int32)
    got = enb.bitwise_count(x)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(got), np.bitwise_count(x))
    xb = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(enb.bitwise_count(xb)), np.bitwise_count(xb))


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("float32", "uint32"),
                                      ("int32", "float32"), ("float16", "uint16"),
                                      ("uint32", "int32")])
def test_bitcast_convert_type(src, dst):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16).astype(src) if np.dtype(src).kind == "f" else \
        rng.integers(np.iinfo(src).min, np.iinfo(src).max, 16, dtype=src)
    if np.dtype(src).kind == "f":
        x[:4] = np.array([0.0, -0.0, np.inf, -np.inf], src)
    else:       # keep clear of NaN patterns, whose payload may be quieted by moves
        x = x & np.array(0x3FFFFFFF, src)
    got = lax.bitcast_convert_type(x, dst)
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), x.view(np.uint8))


def test_bitcast_round_trip_under_jit():
    f = ember.jit(lambda x: lax.bitcast_convert_type(
        ember.numpy.add(lax.bitcast_convert_type(x, np.int32), 1), np.float32))
    x = np.array([1.0, -2.5, 0.0], np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), (x.view(np.int32) + 1).view(np.float32))


def test_bad_inputs_raise():
    with pytest.raises(TracingError, match="shift_left"):
        lax.shift_left(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(TracingError, match="bit width"):
        lax.bitcast_convert_type(np.ones(3, np.float32), np.int16)
    with pytest.raises(TracingError, match="left_shift"):
        enb.left_shift(np.ones(3, np.float32), 1)


# --- bitwise_invert, packbits, unpackbits against JAX ------------------------------------

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(91)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)


@_ignore_narrowing
def test_bitwise_invert(jnp):
    for a in [np.array([0, 7, 255], np.uint8), N, np.array([True, False])]:
        eager_and_jit(enp.bitwise_invert, jnp.bitwise_invert, a)


@_ignore_narrowing
def test_packbits_unpackbits(jnp):
    rng = np.random.default_rng(92)
    bits = rng.integers(0, 2, size=(3, 11)).astype(np.int32)
    for a, axis, order in [(bits, None, "big"), (bits, 1, "little"), (bits > 0, 0, "big"),
                           (bits[:, :8], -1, "big"), (np.zeros(0, np.uint8), None, "big")]:
        close(enp.packbits(a, axis, order), jnp.packbits(a, axis, order))
    u = rng.integers(0, 256, size=(2, 3)).astype(np.uint8)
    for axis, count, order in [(None, None, "big"), (0, 5, "little"), (1, 30, "big"),
                               (1, -3, "big"), (-1, 0, "little")]:
        close(enp.unpackbits(u, axis, count, order), jnp.unpackbits(u, axis, count, order))
    close(ember.jit(lambda u: enp.packbits(enp.unpackbits(u, axis=1), axis=1))(u), u)


PACK_ERRORS = [
    (lambda: enp.packbits(X), TracingError, "integer or boolean"),
    (lambda: enp.packbits(N, bitorder="middle"), ArgumentError, "bitorder"),
    (lambda: enp.unpackbits(N), TracingError, "uint8"),
]


@pytest.mark.parametrize("call, error, match", PACK_ERRORS)
def test_pack_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
