"""Elementwise ember.numpy functions (ember/numpy/_ufuncs.py) against NumPy.

NumPy computes in float64 on the same inputs; its result rounded to the tested dtype is the
oracle. One jitted program per group of functions and dtype keeps compiles few.
"""

import ml_dtypes
import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp

BF16 = np.dtype(ml_dtypes.bfloat16)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# name -> (ember function, NumPy function, extra relative tolerance for f32)
UNARY = {
    "arcsin": (enp.arcsin, np.arcsin), "arccos": (enp.arccos, np.arccos),
    "arctan": (enp.arctan, np.arctan), "sinh": (enp.sinh, np.sinh),
    "cosh": (enp.cosh, np.cosh), "arcsinh": (enp.arcsinh, np.arcsinh),
    "arccosh": (enp.arccosh, np.arccosh), "arctanh": (enp.arctanh, np.arctanh),
    "cbrt": (enp.cbrt, np.cbrt), "exp2": (enp.exp2, np.exp2), "log2": (enp.log2, np.log2),
    "log10": (enp.log10, np.log10), "fabs": (enp.fabs, np.fabs),
    "deg2rad": (enp.deg2rad, np.deg2rad), "rad2deg": (enp.rad2deg, np.rad2deg),
    "degrees": (enp.degrees, np.degrees), "radians": (enp.radians, np.radians),
    "trunc": (enp.trunc, np.trunc), "fix": (enp.fix, np.fix), "isnan": (enp.isnan, np.isnan),
    "isinf": (enp.isinf, np.isinf), "isfinite": (enp.isfinite, np.isfinite),
    "isposinf": (enp.isposinf, np.isposinf), "isneginf": (enp.isneginf, np.isneginf),
    "signbit": (enp.signbit, np.signbit), "sinc": (enp.sinc, np.sinc), "i0": (enp.i0, np.i0),
    "nan_to_num": (enp.nan_to_num, None), "asin": (enp.asin, np.arcsin),
    "atanh": (enp.atanh, np.arctanh),
}
# NumPy's i0 rejects NaN/inf and has no signed zeros: compare it on finite inputs only.
_FINITE_ONLY = {"i0"}
_KEEPS_INTS = {"trunc", "fix", "nan_to_num"}
_BOOL_OUT = {"isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"}


def _unary_all(x):
    return {k: f(x) for k, (f, _) in UNARY.items()}


_jit_unary = ember.jit(_unary_all)

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-3, -1e-3, 3.0, 10.0, -10.0, 1.5,
           np.inf, -np.inf, np.nan, 0.999, -0.999, 1.001, 7.25, -7.75, 100.0, 700.0, -30.0]


def _inputs(dtype):
    rng = np.random.default_rng(1)
    x = np.concatenate([SPECIAL, rng.uniform(-1, 1, 40), rng.normal(size=40) * 4,
                        rng.uniform(-60, 60, 20)])
    if dtype == np.float32:
        x = np.concatenate([x, [1e30, -1e30, 80.0, 89.5, -89.5, 3e38, 1e-30, 2e19]])
    return x.astype(dtype)


def _np_ref(name, x64):
    if name == "nan_to_num":
        return None
    fn = UNARY[name][1]
    with np.errstate(all="ignore"):
        if name in _FINITE_ONLY:
            return np.where(np.isfinite(x64), fn(np.where(np.isfinite(x64), x64, 0.0)), np.nan)
        return fn(x64)


# float32 tolerances: atan2-based inverse trig functions are ~20 ulp
_RTOL32 = {"arctan": 1e-5, "arcsin": 1e-5, "arccos": 1e-5, "asin": 1e-5, "i0": 1e-5,
           "sinh": 3e-6, "cosh": 3e-6, "exp2": 3e-6, "sinc": 1e-5}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32],
                         ids=["f32", "f16", "bf16", "i32"])
def test_unary_against_numpy(dtype):
    x = _inputs(dtype) if dtype != np.int32 else np.arange(-12, 13, dtype=np.int32)
    outs = _jit_unary(x)
    x64 = x.astype(np.float64)
    float_dt = np.dtype(np.float32) if dtype == np.int32 else np.dtype(dtype)
    for name in UNARY:
        got = outs[name]
        if name in _BOOL_OUT:
            assert got.dtype == np.bool_, name
            np.testing.assert_array_equal(np.asarray(got), UNARY[name][1](x), err_msg=name)
            continue
        want_dt = np.dtype(dtype) if name in _KEEPS_INTS else float_dt
        assert got.dtype == want_dt, (name, got.dtype, want_dt)
        if name == "nan_to_num":
            want = np.nan_to_num(x) if dtype != BF16 else np.nan_to_num(
                x64, posinf=float(ml_dtypes.finfo(BF16).max),
                neginf=float(ml_dtypes.finfo(BF16).min))
        else:
            want = _np_ref(name, x64)
        want = np.asarray(want).astype(want_dt).astype(np.float64)
        got = np.asarray(got).astype(np.float64)
        if name in _FINITE_ONLY:
            keep = np.isfinite(x64)
            got, want = got[keep], want[keep]
        if float_dt == np.float32:
            rtol, atol = _RTOL32.get(name, 2e-6), 1e-6
        elif float_dt == np.float16:
            rtol, atol = 2e-3, 1e-4
        else:
            rtol, atol = 1.6e-2, 1e-3
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        if name == "sinc":     # NumPy's zeros of sinc are rounding noise of either sign
            continue
        # signed zeros and infinities exactly
        exact = (want == 0) | np.isinf(want)
        np.testing.assert_array_equal(got[exact], want[exact], err_msg=name)
        np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]),
                                      err_msg=f"{name} sign of zero")


def _binary_all(x, y):
    q, r = enp.divmod(x, y)
    return {
        "copysign": enp.copysign(x, y), "nextafter": enp.nextafter(x, y),
        "logaddexp": enp.logaddexp(x, y), "logaddexp2": enp.logaddexp2(x, y),
        "hypot": enp.hypot(x, y), "fmax": enp.fmax(x, y), "fmin": enp.fmin(x, y),
        "heaviside": enp.heaviside(x, y), "arctan2": enp.arctan2(x, y),
        "float_power": enp.float_power(x, y), "floor_divide": q, "remainder": r,
    }


_jit_binary = ember.jit(_binary_all)
_NP_BINARY = {"copysign": np.copysign, "nextafter": np.nextafter, "logaddexp": np.logaddexp,
              "logaddexp2": np.logaddexp2, "hypot": np.hypot, "fmax": np.fmax,
              "fmin": np.fmin, "heaviside": np.heaviside, "arctan2": np.arctan2,
              "float_power": np.float_power, "floor_divide": np.floor_divide,
              "remainder": np.remainder}
_INT_KEEP = {"fmax", "fmin", "floor_divide", "remainder"}
PAIR_VALUES = [-np.inf, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan, 1e-3, 40.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
def test_binary_against_numpy(dtype):
    # (n, 1) against (n,): every pair of special values, broadcast
    x = np.array(PAIR_VALUES, dtype)[:, None]
    y = np.array(PAIR_VALUES, dtype)
    outs = _jit_binary(x, y)
    for name, fn in _NP_BINARY.items():
        got = outs[name]
        want_dt = dtype         # float_power keeps a float dtype, as JAX's
        assert got.dtype == want_dt, (name, got.dtype)
        assert got.shape == (len(PAIR_VALUES), len(PAIR_VALUES))
        if name == "nextafter":     # steps are in the dtype's own ulps: NumPy on the dtype
            want = np.nextafter(x.astype(np.float32), y.astype(np.float32)) \
                if dtype == BF16 else fn(x, y)
            if dtype == BF16:     # bf16 ulps: check the step from the bit patterns
                got_bits = np.asarray(got).view(np.uint16).astype(np.int32)
                xb = np.broadcast_to(x, got.shape).view(np.uint16).astype(np.int32)
                yb = np.broadcast_to(y, got.shape).astype(np.float32)
                xf = np.broadcast_to(x, got.shape).astype(np.float32)
                move = (xf != yb) & ~np.isnan(xf) & ~np.isnan(yb) & (xf != 0)
                assert np.all(np.abs(got_bits[move] - xb[move]) == 1)
                assert np.all(np.sign(np.asarray(got).astype(np.float32)[move] - xf[move])
                              == np.sign(yb[move] - xf[move]))
                continue
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
            continue
        with np.errstate(all="ignore"):
            want = fn(x.astype(np.float64), y.astype(np.float64)).astype(want_dt)
        got = np.asarray(got).astype(np.float64)
        want = want.astype(np.float64)
        tol = {np.float32: 1e-5, np.float16: 2e-3}.get(dtype, 1.6e-2)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-2, err_msg=name)
        exact = (want == 0) | np.isinf(want)
        np.testing.assert_array_equal(got[exact], want[exact], err_msg=name)
        if name not in ("fmax", "fmin", "floor_divide", "remainder", "arctan2"):
            np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]),
                                          err_msg=f"{name} sign of zero")


def test_binary_int_promotion():
    x = np.array([[-7], [0], [5], [9]], np.int32)
    y = np.array([-2, 3, 4], np.int32)
    outs = _jit_binary(x, y)
    for name, fn in _NP_BINARY.items():
        got = outs[name]
        if name in _INT_KEEP:
            assert got.dtype == np.int32, name
            np.testing.assert_array_equal(np.asarray(got), fn(x, y), err_msg=name)
        else:
            assert got.dtype == np.float32, (name, got.dtype)
            with np.errstate(all="ignore"):
                want = fn(x.astype(np.float64), y.astype(np.float64))
            if name == "nextafter":
                want = np.nextafter(x.astype(np.float32), y.astype(np.float32))
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, err_msg=name)


def test_nan_to_num_options_and_scalars():
    f = ember.jit(lambda a: enp.nan_to_num(a, nan=-1.0, posinf=5.0, neginf=-5.0))
    x = np.array([np.nan, np.inf, -np.inf, 2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)),
                                  np.nan_to_num(x, nan=-1.0, posinf=5.0, neginf=-5.0))
    # eager call on NumPy scalars and weak Python scalars
    assert float(enp.cbrt(np.float32(-27.0))) == -3.0
    got = enp.hypot(3.0, np.float32(4.0))
    assert got.dtype == np.float32 and float(got) == 5.0


def test_i0_large_and_shapes():
    x = np.array([0.0, 14.9, 15.0, 15.1, 20.0, 50.0, 85.0, -40.0], np.float32)
    got = np.asarray(ember.jit(enp.i0)(x))
    np.testing.assert_allclose(got, np.i0(x.astype(np.float64)), rtol=2e-5)
    empty = ember.jit(lambda a: (enp.sinh(a), enp.logaddexp(a, 1.0)))(np.zeros((0, 3),
                                                                               np.float32))
    assert [e.shape for e in empty] == [(0, 3), (0, 3)]


# --- isclose, real/imag, ldexp, frexp, modf, gcd, lcm (numpy/_ufuncs.py, _comparison.py) ------

_FPX = np.array([0.0, -0.0, 1.0, -1.5, 0.1, 3.75, -7.0, 1e-3, 6e4, -2.5e-3, 0.999, np.inf,
                 -np.inf, np.nan], np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_isclose_ldexp_frexp_modf(dtype):
    x = _FPX.astype(dtype)
    y = (x * np.asarray(1 + 2e-6, dtype)).astype(dtype)
    y[3], y[11], y[13] = 9.0, np.inf, np.nan
    e = np.array([3, -2, 0, 5, -20, 1, 7, -3, -8, 4, 0, 2, -1, 1], np.int32)
    big = np.array([100, -100, 1000, -1000], np.int32)

    def f(x, y, e, big):
        return (enp.isclose(x, y), enp.isclose(x, y, equal_nan=True),
                enp.isclose(x, y, rtol=0.0, atol=1e-6), enp.allclose(x[:3], y[:3]),
                enp.allclose(x, y, equal_nan=True, rtol=1.0), *enp.frexp(x),
                enp.ldexp(x, e), enp.ldexp(x[:4], big), *enp.modf(x), enp.real(x),
                enp.imag(x))

    with np.errstate(all="ignore"):
        wants = (np.isclose(x, y), np.isclose(x, y, equal_nan=True),
                 np.isclose(x, y, rtol=0.0, atol=1e-6), np.allclose(x[:3], y[:3]),
                 np.allclose(x, y, equal_nan=True, rtol=1.0), *np.frexp(x), np.ldexp(x, e),
                 np.ldexp(x[:4], big), *np.modf(x), np.real(x), np.imag(x))
    for k, (got, want) in enumerate(zip(ember.jit(f)(x, y, e, big), wants, strict=True)):
        want = np.asarray(want)
        assert np.asarray(got).dtype == want.dtype, (k, got.dtype, want.dtype)
        assert got.shape == want.shape, (k, got.shape, want.shape)
        # Exact: signs of zeros included.
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"output {k}")
        if want.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
    m, ex = enp.frexp(enp.asarray(x))       # eagerly, on an Array
    np.testing.assert_array_equal(np.asarray(m), np.frexp(x)[0])
    np.testing.assert_array_equal(np.asarray(ex), np.frexp(x)[1])


def test_frexp_ldexp_subnormals_and_ints():
    # Subnormal inputs decompose exactly (by bits) although the CPU flushes them in arithmetic.
    x = np.array([1e-40, -3e-42, 1.4e-45, 1e-38], np.float32)
    m, e = enp.frexp(x)
    np.testing.assert_array_equal(np.asarray(m), np.frexp(x)[0])
    np.testing.assert_array_equal(np.asarray(e), np.frexp(x)[1])
    got = enp.ldexp(x, np.array([100, 120, 140, 3], np.int32))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.ldexp(x, np.array([100, 120, 140, 3], np.int32)))
    # Integers become floats (as in JAX).
    m, e = enp.frexp(np.array([0, 6, -8], np.int32))
    assert m.dtype == np.float32 and e.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(m), [0.0, 0.75, -0.5])
    assert enp.ldexp(np.array([3, 1], np.int32), 2).dtype == np.float32
    frac, whole = enp.modf(np.array([7, -3], np.int32))
    np.testing.assert_array_equal(np.asarray(whole), [7.0, -3.0])
    # isclose on integers compares exactly (JAX; NumPy would call 10**8 and 10**8+1 close).
    got = enp.isclose(np.array([10**8, 3], np.int32), np.array([10**8 + 1, 3], np.int32))
    np.testing.assert_array_equal(np.asarray(got), [False, True])


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8], ids=lambda d: np.dtype(d).name)
def test_gcd_lcm(dtype):
    rng = np.random.default_rng(3)
    lo = 0 if np.dtype(dtype).kind == "u" else -12
    a = rng.integers(lo, 13, (4, 6)).astype(dtype)
    b = rng.integers(lo, 13, (6,)).astype(dtype)
    a[0, :3] = 0
    b[0] = 0
    g, lc, g0 = ember.jit(lambda a, b: (enp.gcd(a, b), enp.lcm(a, b), enp.gcd(a[:0], b)))(a, b)
    np.testing.assert_array_equal(np.asarray(g), np.gcd(a, b))
    np.testing.assert_array_equal(np.asarray(lc), np.lcm(a, b))
    assert g.dtype == dtype and lc.dtype == dtype and g0.shape == (0, 6)
    np.testing.assert_array_equal(np.asarray(enp.gcd(a, 6)), np.gcd(a, dtype(6)))
    np.testing.assert_array_equal(np.asarray(enp.lcm(enp.asarray(a), b)), np.lcm(a, b))
    # The type's extremes (the loop never ended on the signed minimum, whose |x| overflows)
    info = np.iinfo(dtype)
    ext = np.array([info.min, info.min, info.max, info.min, 0], dtype)
    other = np.array([3, info.min, info.max, 0, info.min], dtype)
    np.testing.assert_array_equal(np.asarray(enp.gcd(ext, other)), np.gcd(ext, other))
    # an lcm past the type's range wraps as NumPy's, sign included (|x| * (|y| / gcd))
    if dtype == np.int32:
        big, wide = np.array([46341, -7], dtype), np.array([46343, 5], dtype)
        np.testing.assert_array_equal(np.asarray(enp.lcm(big, wide)), np.lcm(big, wide))
        assert np.lcm(big, wide)[0] < 0


def test_more_ufunc_errors():
    from ember.errors import TracingError

    x = np.ones(3, np.float32)
    with pytest.raises(TracingError, match="ldexp.*integer"):
        enp.ldexp(x, x)
    with pytest.raises(TracingError, match="gcd.*integers"):
        enp.gcd(x, x)
    with pytest.raises(TracingError, match="lcm.*integers"):
        ember.jit(lambda a: enp.lcm(a, 2))(x)
    # (complex numbers are there now: tests/test_complex.py)
    assert np.asarray(enp.real(np.full(2, 3 - 1j, np.complex64))).tolist() == [3.0, 3.0]
    assert float(enp.imag(1 + 2j)) == 2.0
    with pytest.raises(TracingError, match="isclose.*shapes"):
        enp.isclose(x, np.ones(2, np.float32))



def test_fmax_fmin_of_signed_zeros_follow_jax():
    """fmax/fmin pick x where it wins or y is NaN, else y, as JAX's: fmax(0.0, -0.0) is -0.0
    (NumPy's gives its first operand); NaN only when both are."""
    jnp = pytest.importorskip("jax.numpy")
    a = np.float32([0.0, -0.0, 0.0, -0.0, np.nan, -0.0, np.nan, 1.0, 2.0])
    b = np.float32([-0.0, 0.0, 0.0, -0.0, -0.0, np.nan, np.nan, 2.0, 1.0])
    for name in ("fmax", "fmin"):
        got = np.asarray(ember.jit(getattr(enp, name))(a, b))
        want = np.asarray(getattr(jnp, name)(a, b))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    ints = np.int32([1, 5]), np.int32([3, 2])
    np.testing.assert_array_equal(np.asarray(enp.fmax(*ints)), np.fmax(*ints))


# --- angle, and the dtypes and weak types of arithmetic on bools and Python scalars as JAX's ---

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")


def typed(got, want):
    """``close`` (to 1e-6), and the same weak type."""
    close(got, want, 1e-6)
    assert got.weak_type == want.weak_type, (got.weak_type, want.weak_type)


@_ignore_narrowing
@pytest.mark.parametrize("x64", [False, True])
def test_angle(x64, jax, jnp):
    ember.config.update("enable_x64", x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        special = [1.0, -2.0, -0.0, 0.0, np.nan, -np.inf, np.inf]
        for v in [3, -3.0, np.float16(-1), np.array(special, np.float16),
                  np.array(special, ml_dtypes.bfloat16),
                  np.array(special, np.float32), np.array([1, -2, 0]), np.array([True, False])]:
            for deg in (False, True):
                typed(enp.angle(v, deg=deg), jnp.angle(v, deg=deg))
                close(ember.jit(lambda x, d=deg: enp.angle(x, deg=d))(v), jnp.angle(v, deg=deg),
                      1e-6)
    finally:
        ember.config.update("enable_x64", False)
        jax.config.update("jax_enable_x64", False)


BOOL_OPS = ["floor_divide", "remainder", "fmod", "power", "left_shift", "right_shift",
            "divmod"]


@_ignore_narrowing
@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("op", BOOL_OPS)
def test_bool_arithmetic_dtypes_follow_jax(op, x64, jax, jnp):
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


@_ignore_narrowing
def test_x64_power_by_a_numpy_integer_and_rint(both_x64, jnp):
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
    close(enp.ldexp(f, b), jnp.ldexp(f, b), 1e-6)


@_ignore_narrowing
@pytest.mark.parametrize("base, n", [(2, 3), (2.0, -1), (2.0, 0), (2, 0), (-3, 3), (2.5, 2),
                                     (np.float32(2), -2)])
def test_power_of_python_scalars_as_jax(base, n, jnp):
    """A Python scalar base to a static integer power: exact and weakly typed as JAX's (it
    took the general path: 2 ** 3 was strong, 2 ** -1 was 0 where JAX raises)."""
    typed(enp.power(base, n), jnp.power(base, n))


@_ignore_narrowing
def test_python_int_to_a_negative_power_raises_as_jax(jnp):
    with pytest.raises(TypeError):
        jnp.power(2, -1)
    with pytest.raises(ember.errors.TracingError, match="negative integer powers"):
        enp.power(2, -1)
