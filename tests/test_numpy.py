"""ember.numpy against NumPy: eagerly (NumPy inputs and ember Arrays) and under ember.jit.

Values come from NumPy; result dtypes follow JAX's promotion rules (64-bit narrowed to 32-bit),
written out below from JAX's documented lattice where they differ from NumPy's. To keep the
suite fast, many functions share one jitted program.
"""

import re
import warnings

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import EmberError, TracingError

bf16 = np.dtype(ml_dtypes.bfloat16)
_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32)}


def narrow(dt):
    dt = np.dtype(dt)
    return _NARROW.get(dt, dt)


def check(got, want, dtype=None, rtol=None, atol=0.0):
    """``got`` (an ember Array) equals NumPy's ``want``; its dtype is ``dtype`` (default:
    ``want``'s, 64-bit narrowed)."""
    assert isinstance(got, ember.Array), type(got)
    want = np.asarray(want)
    dtype = narrow(want.dtype if dtype is None else dtype)
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g = np.asarray(got)
    assert g.dtype == dtype
    if dtype.kind in "biu":
        np.testing.assert_array_equal(g, want.astype(dtype))
    else:
        if rtol is None:
            rtol = {2: 2e-3, 4: 2e-6}.get(dtype.itemsize, 1e-12)
        np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


def three_ways(fn, np_fn, *args, dtype=None, rtol=None, atol=0.0):
    """fn eagerly on NumPy values, eagerly on ember Arrays and under jit, against np_fn."""
    want = np_fn(*args)
    check(fn(*args), want, dtype, rtol, atol)
    check(fn(*[enp.asarray(a) for a in args]), want, dtype, rtol, atol)
    check(ember.jit(fn)(*args), want, dtype, rtol, atol)


def rand(shape, dtype, seed=0, lo=-5, hi=5, nonzero=False):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        lo = max(lo, 0)
    if dtype.kind in "iu":
        x = rng.integers(lo, hi + 1, shape).astype(dtype)
    else:
        x = rng.uniform(lo, hi, shape).astype(dtype)
    if nonzero:
        x = np.where(x == 0, np.ones((), dtype), x).astype(dtype)
    return x


# --- creation -----------------------------------------------------------------------------

def _creation_np():
    return [np.array([[1, 2], [3, 4]], np.int32), np.asarray([1.5, 2.5], np.float32),
            np.zeros((2, 3), np.float32), np.ones((0, 2), np.int8), np.full((2, 2), 7, np.int32),
            np.full((3,), 2.5, np.float32), np.full((), 3.0, np.float16),
            np.arange(5, dtype=np.int32), np.arange(2, 11, 3, dtype=np.int32),
            np.arange(1.0, 2.0, 0.25, dtype=np.float32), np.arange(5, 0, -2, dtype=np.int32),
            np.arange(3, 1, dtype=np.int32), np.eye(3, dtype=np.float32),
            np.eye(3, 4, 1, dtype=np.int32), np.eye(4, 3, -2, dtype=np.float32)]


def _creation_enp():
    return [enp.array([[1, 2], [3, 4]]), enp.asarray([1.5, 2.5]), enp.zeros((2, 3)),
            enp.ones((0, 2), np.int8), enp.full((2, 2), 7), enp.full(3, 2.5),
            enp.full((), 3.0, enp.float16), enp.arange(5), enp.arange(2, 11, 3),
            enp.arange(1.0, 2.0, 0.25), enp.arange(5, 0, -2), enp.arange(3, 1),
            enp.eye(3), enp.eye(3, 4, k=1, dtype=np.int32), enp.eye(4, 3, k=-2)]


def test_creation_eager_and_jit():
    wants = _creation_np()
    for got, want in zip(_creation_enp(), wants, strict=True):
        check(got, want)
    for got, want in zip(ember.jit(_creation_enp)(), wants, strict=True):
        check(got, want)


def test_like_creation():
    x16 = rand((2, 3), np.float16)
    xi = rand((4,), np.int8)

    def f(a, b):
        return (enp.zeros_like(a), enp.ones_like(b), enp.full_like(a, 2.5),
                enp.full_like(b, 3, dtype=np.float32), enp.zeros_like(b, dtype=bool))

    wants = (np.zeros_like(x16), np.ones_like(xi), np.full_like(x16, 2.5),
             np.full_like(xi, 3, dtype=np.float32), np.zeros_like(xi, dtype=bool))
    for outs in (f(x16, xi), f(enp.asarray(x16), enp.asarray(xi)), ember.jit(f)(x16, xi)):
        for got, want in zip(outs, wants, strict=True):
            check(got, want)


def test_array_of_arrays_stacks():
    x = np.array([1.0, 2.0], np.float32)
    want = np.array([x, x * 2, [3.0, 4.0]])
    check(ember.jit(lambda a: enp.array([a, a * 2, [3.0, 4.0]]))(x), want, np.float32)
    xa = enp.asarray(x)
    check(enp.array([xa, xa * 2, [3.0, 4.0]]), want, np.float32)


def test_asarray_dtype_and_narrowing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(enp.asarray(np.arange(3, dtype=np.int64)), np.arange(3, dtype=np.int32))
        check(enp.asarray([1.0, 2.0]), np.array([1.0, 2.0], np.float32))
    check(enp.asarray([1, 2], dtype=np.uint8), np.array([1, 2], np.uint8))
    check(enp.asarray(np.float16(1.5)), np.float16(1.5))
    a = enp.asarray(np.ones(3, np.float32))
    assert enp.asarray(a) is a
    check(ember.jit(lambda x: enp.asarray(x, dtype=np.int32))(np.array([1.7, -2.2], np.float32)),
          np.array([1, -2], np.int32))


# --- elementwise ----------------------------------------------------------------------------

def _np_power(x, y):
    if np.dtype(x.dtype).kind in "iu":
        return np.power(x, y)
    return np.power(x.astype(np.float64), y.astype(np.float64)).astype(x.dtype)


# name: (ember fn, NumPy fn, dtype kinds it is tested on, "safe" divisor needed)
BINARY = {
    "add": (enp.add, np.add, "fiub"),
    "subtract": (enp.subtract, np.subtract, "fiu"),
    "multiply": (enp.multiply, np.multiply, "fiub"),
    "divide": (enp.divide, np.divide, "fi"),
    "floor_divide": (enp.floor_divide, np.floor_divide, "fiu"),
    "remainder": (enp.remainder, np.remainder, "fiu"),
    "mod": (enp.mod, np.mod, "fi"),
    "power": (enp.power, _np_power, "fiu"),
    "maximum": (enp.maximum, np.maximum, "fiub"),
    "minimum": (enp.minimum, np.minimum, "fiub"),
    "equal": (enp.equal, np.equal, "fiub"),
    "not_equal": (enp.not_equal, np.not_equal, "fiub"),
    "less": (enp.less, np.less, "fiu"),
    "less_equal": (enp.less_equal, np.less_equal, "fiu"),
    "greater": (enp.greater, np.greater, "fiu"),
    "greater_equal": (enp.greater_equal, np.greater_equal, "fiu"),
    "logical_and": (enp.logical_and, np.logical_and, "fib"),
    "logical_or": (enp.logical_or, np.logical_or, "fib"),
    "logical_xor": (enp.logical_xor, np.logical_xor, "fib"),
}


def _binary_inputs(name, dtype, s1, s2):
    dtype = np.dtype(dtype)
    x = rand(s1, dtype, seed=1, lo=-9, hi=9)
    y = rand(s2, dtype, seed=2, lo=-4, hi=4, nonzero=True)
    if name == "power":
        if dtype.kind in "iu":
            x, y = rand(s1, dtype, 1, -3, 3), rand(s2, dtype, 2, 0, 4)
        else:
            x, y = np.abs(x) + np.ones((), dtype), rand(s2, dtype, 2, -2, 2)
    return x, y


def _expected_dtype(name, dtype):
    dtype = np.dtype(dtype)
    if name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal") or \
            name.startswith("logical"):
        return np.dtype(bool)
    if name == "divide" and dtype.kind in "iub":
        return np.dtype(np.float32)
    return dtype


def _want(name, np_fn, x, y):
    with np.errstate(all="ignore"):
        out = np_fn(x, y)
    return np.asarray(out)


DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.float16, np.bool_]
SHAPES = [((4, 1), (3,)), ((), (2,)), ((0, 3), (1, 3))]


def _ops_for(dtype):
    kind = np.dtype(dtype).kind
    return [n for n, (_, _, kinds) in BINARY.items() if kind in kinds]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_binary_jit(dtype, shapes):
    names = _ops_for(dtype)
    x, y = _binary_inputs("add", dtype, *shapes)
    px, py = _binary_inputs("power", dtype, *shapes)

    @ember.jit
    def f(x, y, px, py):
        return {n: BINARY[n][0](px, py) if n == "power" else BINARY[n][0](x, y) for n in names}

    outs = f(x, y, px, py)
    for n in names:
        a, b = (px, py) if n == "power" else (x, y)
        rtol = 1e-2 if n == "power" and np.dtype(dtype) == np.float16 else None
        check(outs[n], _want(n, BINARY[n][1], a, b), _expected_dtype(n, dtype), rtol=rtol,
              atol=1e-6 if n in ("remainder", "mod") else 0)


@pytest.mark.parametrize("name,dtype", [(n, np.float32) for n in BINARY] + [
    (n, np.int32) for n in ("floor_divide", "remainder", "power", "maximum")],
    ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_binary_eager(name, dtype):
    fn, np_fn, kinds = BINARY[name]
    if np.dtype(dtype).kind not in kinds:
        pytest.skip("dtype not meaningful for this op")
    x, y = _binary_inputs(name, dtype, (3, 1), (4,))
    want = _want(name, np_fn, x, y)
    dt = _expected_dtype(name, dtype)
    check(fn(x, y), want, dt, atol=1e-6)
    check(fn(enp.asarray(x), enp.asarray(y)), want, dt, atol=1e-6)


def test_division_sign_semantics():
    """floor_divide and remainder follow NumPy's signs (the divisor's), for ints and floats."""
    xi = np.array([7, -7, 7, -7, 0, 6, -6, 1, -128], np.int32)
    yi = np.array([2, 2, -2, -2, 3, -3, 3, -5, 3], np.int32)
    xf = np.array([7.5, -7.5, 7.5, -7.5, 0.0, 6.0, -6.0, 1.0, -0.5], np.float32)
    yf = np.array([2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 3.0, -5.0, 0.25], np.float32)

    def f(xi, yi, xf, yf):
        return (enp.floor_divide(xi, yi), enp.remainder(xi, yi), enp.mod(xf, yf),
                enp.floor_divide(xf, yf), xi // 3, xi % -3, xf // -2.0, xf % 2.0,
                enp.fmod(xi, yi))

    wants = (xi // yi, xi % yi, xf % yf, xf // yf, xi // 3, xi % -3, xf // -2.0, xf % 2.0,
             np.fmod(xi, yi))
    for got, want in zip(ember.jit(f)(xi, yi, xf, yf), wants, strict=True):
        check(got, want)
    check(enp.asarray(xf) // enp.asarray(yf), wants[3])   # eagerly, on Arrays
    check(enp.remainder(xi, yi), wants[1])


def test_int8_floor_divide_and_remainder_exhaustive_signs():
    x = np.arange(-128, 128, dtype=np.int8)
    y = np.array([-128, -7, -3, -1, 1, 2, 5, 127], np.int8)[:, None]
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(x, y), np.remainder(x, y)
    q, r = ember.jit(lambda a, b: (a // b, a % b))(x, y)
    check(q, want_q)
    check(r, want_r)


def test_power_cases():
    xi = np.array([-3, -2, -1, 0, 1, 2, 3, 7], np.int32)
    ei = np.array([0, 1, 2, 3, 4, 5, 10, 7], np.int32)
    xf = np.array([0.5, 1.0, 2.0, 3.5, 10.0], np.float32)

    def f(xi, ei, xf):
        return (enp.power(xi, ei), xi ** 3, xi ** 0, xf ** 2, xf ** -2, xf ** 0.5,
                enp.power(xf, xf), 2 ** ei, 2.0 ** xf, enp.power(xi.astype(np.uint8), 2),
                xf ** np.int32(3))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wants = (np.power(xi, ei), xi ** 3, xi ** 0, xf ** 2, xf ** np.float32(-2),
                 xf ** np.float32(0.5), xf.astype(np.float64) ** xf, (2 ** ei).astype(np.int32),
                 np.float32(2.0) ** xf, np.power(xi.astype(np.uint8), 2), xf ** np.float32(3))
    dts = [None] * 7 + [np.int32, None, None, np.float32]
    for got, want, dt in zip(ember.jit(f)(xi, ei, xf), wants, dts, strict=True):
        check(got, want, dt, rtol=1e-5)
    xia, eia, xfa = enp.asarray(xi), enp.asarray(ei), enp.asarray(xf)
    for k, got in {0: enp.power(xia, eia), 1: xia ** 3, 4: xfa ** -2, 6: enp.power(xfa, xfa),
                   7: 2 ** eia}.items():
        check(got, wants[k], dts[k], rtol=1e-5)
    # int ** int is exact (no float round trip): 3**19 does not fit in a float32's mantissa.
    check(ember.jit(lambda a: a ** 19)(np.array([3, -3], np.int32)),
          np.array([3, -3], np.int32) ** 19)


def test_integer_to_negative_power_raises():
    with pytest.raises(EmberError, match="negative"):
        ember.jit(lambda a: a ** -1)(np.array([2], np.int32))


UNARY = {
    "exp": (enp.exp, np.exp, (-3, 3)), "log": (enp.log, np.log, (0.1, 9)),
    "sqrt": (enp.sqrt, np.sqrt, (0, 9)), "sin": (enp.sin, np.sin, (-4, 4)),
    "cos": (enp.cos, np.cos, (-4, 4)), "tanh": (enp.tanh, np.tanh, (-4, 4)),
    "abs": (enp.abs, np.abs, (-4, 4)), "sign": (enp.sign, np.sign, (-2, 2)),
    "floor": (enp.floor, np.floor, (-4, 4)), "ceil": (enp.ceil, np.ceil, (-4, 4)),
    "round": (enp.round, np.round, (-4, 4)), "negative": (enp.negative, np.negative, (-4, 4)),
    "isfinite": (enp.isfinite, np.isfinite, (-4, 4)),
    "logical_not": (enp.logical_not, np.logical_not, (-1, 1)),
    "square": (enp.square, np.square, (-4, 4)),
}
_FLOAT_ONLY = ("exp", "log", "sqrt", "sin", "cos", "tanh")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(2, 5), (), (0,)], ids=str)
def test_unary_jit(dtype, shape):
    dtype = np.dtype(dtype)
    inputs = {}
    for n, (_, _, (lo, hi)) in UNARY.items():
        x = rand(shape, dtype, seed=3, lo=lo, hi=hi)
        if dtype.kind == "f" and n in ("round", "floor", "ceil", "sign"):
            # exact halves (round half to even) and signed zeros
            x = (np.round(x * 2) / 2).astype(dtype)
        if n == "log" and dtype.kind == "i":
            x = np.maximum(x, 1).astype(dtype)
        inputs[n] = x
    f = ember.jit(lambda xs: {n: UNARY[n][0](v) for n, v in xs.items()})
    outs = f(inputs)
    for n, x in inputs.items():
        want = UNARY[n][1](x.astype(np.float32) if n in _FLOAT_ONLY and dtype.kind == "i"
                           else x)
        check(outs[n], want, rtol=1e-2 if dtype == np.float16 else 2e-6)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_eager(name):
    fn, np_fn, (lo, hi) = UNARY[name]
    x = rand((3, 2), np.float32, seed=4, lo=lo, hi=hi)
    check(fn(x), np_fn(x))
    check(fn(enp.asarray(x)), np_fn(x))


def test_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -2.5, 2.5, 0.5, 1.5], np.float32)

    def f(x):
        return (enp.isfinite(x), enp.sign(x), enp.round(x), enp.abs(x), enp.exp(x),
                enp.maximum(x, 0.0), enp.minimum(x, 0.0), enp.floor(x), enp.ceil(x))

    with np.errstate(all="ignore"):
        wants = (np.isfinite(x), np.sign(x), np.round(x), np.abs(x), np.exp(x),
                 np.maximum(x, np.float32(0)), np.minimum(x, np.float32(0)), np.floor(x),
                 np.ceil(x))
    for got, want in zip(ember.jit(f)(x), wants, strict=True):
        check(got, want)
    check(enp.round(x), wants[2])
    check(enp.sign(enp.asarray(x)), wants[1])


def test_round_decimals():
    x = np.array([1.234, -5.678, 12.5, 0.045], np.float32)
    three_ways(lambda a: enp.round(a, 2), lambda a: np.round(a, 2), x, rtol=1e-6)
    three_ways(lambda a: enp.round(a, 1), lambda a: np.round(a, 1), x, rtol=1e-6)


def test_where_and_clip():
    c = rand((3, 1), np.bool_, seed=5)
    x = rand((1, 4), np.float32, seed=6)
    y = rand((4,), np.int8, seed=7)

    def f(c, x, y):
        return (enp.where(c, x, y), enp.where(c, x, 0.5), enp.where(x > 0, 1, y),
                enp.clip(x, -1.0, 2.0), enp.clip(y, 0, None), enp.clip(y, None, 1),
                enp.clip(x, y, 3))

    wants = (np.where(c, x, y), np.where(c, x, np.float32(0.5)),
             np.where(x > 0, np.int8(1), y), np.clip(x, -1.0, 2.0).astype(np.float32),
             np.clip(y, 0, None).astype(np.int8), np.clip(y, None, 1).astype(np.int8),
             np.minimum(np.maximum(x, y), np.float32(3)))
    dts = [np.float32, np.float32, np.int8, np.float32, np.int8, np.int8, np.float32]
    for outs in (ember.jit(f)(c, x, y), f(c, x, y),
                 f(enp.asarray(c), enp.asarray(x), enp.asarray(y))):
        for got, want, dt in zip(outs, wants, dts, strict=True):
            check(got, want, dt)


# --- type promotion -------------------------------------------------------------------------

# (lhs, rhs, JAX's result dtype with 64-bit types off). Strings name strongly typed arrays;
# Python scalars are weak. From JAX's type promotion lattice
# (b1 -> i* -> u8/i8 -> ..., i* -> f* -> bf16/f16 -> f32, uint32 + int32 -> int64).
PROMOTION = [
    ("float16", 1.0, "float16"), ("int8", 1, "int8"), ("uint8", 1, "uint8"),
    ("int8", "uint8", "int16"), ("int32", "float16", "float16"),
    ("uint8", "int32", "int32"), ("uint16", "int8", "int32"), ("uint32", "int32", "int32"),
    ("int16", "uint32", "int32"), ("bfloat16", "float16", "float32"),
    ("bfloat16", "int32", "bfloat16"), ("int8", 1.5, "float32"), ("bool", 1, "int32"),
    ("bool", 1.0, "float32"), ("float32", 2, "float32"), ("uint8", "int8", "int16"),
    ("float64", "float16", "float32"), ("int64", "float16", "float16"),
    ("uint64", "int8", "int32"), ("bool", "uint8", "uint8"), ("bool", "bool", "bool"),
    ("int16", "float32", "float32"), ("uint16", "bfloat16", "bfloat16"),
]


def _arg(spec):
    if isinstance(spec, str):
        dt = bf16 if spec == "bfloat16" else np.dtype(spec)
        return np.ones((2,), dt)
    return spec


@pytest.mark.parametrize("lhs,rhs,want", PROMOTION, ids=str)
def test_promotion_table(lhs, rhs, want):
    want = bf16 if want == "bfloat16" else np.dtype(want)
    a, b = _arg(lhs), _arg(rhs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert enp.result_type(a, b) == want
        assert enp.result_type(b, a) == want
        # Result types are known after tracing: lower without paying for an IREE compile.
        if isinstance(rhs, str):
            lowered = ember.jit(lambda x, y: (x + y, y * x, enp.maximum(x, y))).lower(a, b)
        else:
            lowered = ember.jit(lambda x: (x + b, b * x, enp.maximum(x, b))).lower(a)
    for o in lowered.out_avals:
        assert o.dtype == want, (lhs, rhs, o.dtype)
        assert o.shape == (2,)


def test_promotion_values_and_weak_scalars():
    x16 = np.array([1.5, 2.0], np.float16)
    xi8 = np.array([100, -100], np.int8)
    xu8 = np.array([200, 5], np.uint8)
    xb16 = np.array([0.5, -3.0], bf16)

    def f(x16, xi8, xu8, xb16):
        return (x16 + 1.0, xi8 + 1, xi8 + xu8, xi8 * 2, 1 - xu8, xi8.astype(np.int32) + x16,
                xi8.astype(np.int32) + xb16, xb16 * 3)

    wants = (x16 + np.float16(1), (xi8 + np.int8(1)).astype(np.int8),
             xi8.astype(np.int16) + xu8.astype(np.int16), (xi8 * np.int8(2)).astype(np.int8),
             (np.uint8(1) - xu8).astype(np.uint8), xi8.astype(np.float16) + x16,
             (xi8.astype(np.float32) + xb16.astype(np.float32)).astype(bf16),
             (xb16.astype(np.float32) * 3).astype(bf16))
    with np.errstate(all="ignore"):
        args = (x16, xi8, xu8, xb16)
        for outs in (ember.jit(f)(*args), f(*[enp.asarray(a) for a in args])):
            for got, want in zip(outs, wants, strict=True):
                check(got, want)


def test_bool_arithmetic():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])

    def f(a, b):
        return a + b, a * b, enp.add(a, b), enp.maximum(a, b), a + 1, a & b, a | b, ~a

    wants = (a | b, a & b, a | b, a | b, a.astype(np.int32) + 1, a & b, a | b, ~a)
    for outs in (ember.jit(f)(a, b), f(enp.asarray(a), enp.asarray(b))):
        for got, want in zip(outs, wants, strict=True):
            check(got, want)


# --- reductions -----------------------------------------------------------------------------

AXES = [None, 1, -1, (0, 2), ()]
REDUCTIONS = {
    "sum": (enp.sum, np.sum), "max": (enp.max, np.max), "min": (enp.min, np.min),
    "mean": (enp.mean, np.mean), "prod": (enp.prod, np.prod), "all": (enp.all, np.all),
    "any": (enp.any, np.any),
}


def _reduction_dtype(name, dtype):
    dtype = np.dtype(dtype)
    if name in ("all", "any"):
        return np.dtype(bool)
    if name == "mean":
        return dtype if dtype.kind == "f" else np.dtype(np.float32)
    if name in ("sum", "prod"):
        if dtype == np.bool_ or dtype.kind == "i":
            return np.dtype(np.int32) if dtype.itemsize <= 4 else dtype
        if dtype.kind == "u":
            return np.dtype(np.uint32) if dtype.itemsize <= 4 else dtype
    return dtype


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.uint8, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_reductions_jit(dtype):
    x = rand((2, 3, 4), dtype, seed=8, lo=-3, hi=3)
    if np.dtype(dtype).kind == "f":
        x = (x / 2).astype(dtype)   # keep prod small

    @ember.jit
    def f(x):
        out = {}
        for n, (fn, _) in REDUCTIONS.items():
            for i, ax in enumerate(AXES):
                out[n, i, False] = fn(x, axis=ax)
                out[n, i, True] = fn(x, axis=ax, keepdims=True)
        for i, ax in enumerate([None, 0, -1]):
            out["argmax", i] = enp.argmax(x, axis=ax)
            out["argmin", i] = enp.argmin(x, axis=ax)
        return out

    outs = f(x)
    wide = x.astype(np.float64) if np.dtype(dtype).kind == "f" else x.astype(np.int64)
    for n, (_, np_fn) in REDUCTIONS.items():
        for i, ax in enumerate(AXES):
            for kd in (False, True):
                src = x if n in ("max", "min", "all", "any") else wide
                want = np_fn(src, axis=ax, keepdims=kd)
                dt = _reduction_dtype(n, dtype)
                if np.dtype(dtype) == np.bool_ and n in ("max", "min"):
                    dt = np.dtype(bool)
                check(outs[n, i, kd], np.asarray(want).astype(dt), dt,
                      rtol=1e-2 if np.dtype(dtype) == np.float16 else 1e-5)
    for i, ax in enumerate([None, 0, -1]):
        check(outs["argmax", i], np.argmax(x, axis=ax), np.int32)
        check(outs["argmin", i], np.argmin(x, axis=ax), np.int32)


def test_reductions_eager_and_methods():
    x = rand((3, 4), np.float32, seed=9)
    xa = enp.asarray(x)
    check(enp.sum(x, axis=0), x.sum(axis=0), rtol=1e-5)
    check(enp.mean(x, axis=(0, 1), keepdims=True), x.mean(axis=(0, 1), keepdims=True), rtol=1e-5)
    check(enp.argmax(xa, axis=1, keepdims=True), np.argmax(x, axis=1, keepdims=True), np.int32)
    check(enp.argmin(xa, keepdims=True), np.argmin(x, keepdims=True), np.int32)
    check(xa.sum(), x.sum(), rtol=1e-5)
    check(xa.max(axis=-1), x.max(axis=-1))
    check(xa.min(0), x.min(0))
    check(xa.mean(axis=1), x.mean(axis=1), rtol=1e-5)
    check(xa.prod(axis=0), x.prod(axis=0), rtol=1e-5)
    check(xa.any(), x.any())
    check(xa.all(axis=0), x.all(axis=0))


def test_reductions_empty_and_int_sum_dtype():
    e = np.zeros((0, 3), np.float32)
    i8 = np.full((300,), 100, np.int8)     # overflows int8, not int32

    def f(e, i8):
        return (enp.sum(e, axis=0), enp.prod(e, axis=0), enp.max(e, axis=1), enp.sum(e),
                enp.any(e), enp.all(e), enp.sum(i8), enp.sum(i8 > 0))

    wants = (e.sum(axis=0), e.prod(axis=0), e.max(axis=1), e.sum(), e.any(), e.all(),
             i8.astype(np.int64).sum(), (i8 > 0).sum())
    dts = [None, None, None, None, None, None, np.int32, np.int32]
    for outs in (ember.jit(f)(e, i8), f(e, i8)):
        for got, want, dt in zip(outs, wants, dts, strict=True):
            check(got, want, dt)


def test_max_of_empty_axis_raises():
    e = np.zeros((0, 3), np.float32)
    for fn in (enp.max, enp.min, enp.argmax):
        with pytest.raises(EmberError, match="empty|zero-size"):
            ember.jit(lambda x, fn=fn: fn(x, axis=0))(e)
        with pytest.raises(EmberError, match="empty|zero-size"):
            fn(e)


def test_reduction_bad_axis():
    x = np.ones((2, 3), np.float32)
    for fn in (enp.sum, enp.max, enp.mean, enp.argmax):
        with pytest.raises(TracingError, match="axis 2 is out of bounds"):
            ember.jit(lambda a, fn=fn: fn(a, axis=2))(x)
    with pytest.raises(TracingError, match="axis -3"):
        enp.sum(x, axis=(0, -3))


# --- linear algebra -------------------------------------------------------------------------

def test_dot_matmul_family():
    a1, b1 = rand((3,), np.float32, 10), rand((3,), np.float32, 11)
    a2, b2 = rand((2, 3), np.float32, 12), rand((3, 4), np.float32, 13)
    a3, b3 = rand((5, 2, 3), np.float32, 14), rand((2, 3, 4), np.float32, 15)
    b4 = rand((1, 5, 3, 4), np.float32, 16)
    ai = rand((2, 3), np.int8, 17)
    bi = rand((3,), np.int32, 18)

    def f(a1, b1, a2, b2, a3, b3, b4, ai, bi):
        return (enp.dot(a1, b1), enp.dot(a2, b2), enp.dot(a2, b1), enp.dot(a1, b2),
                enp.dot(a3, b2), enp.dot(a3, b3), enp.dot(2.0, a1),
                enp.matmul(a1, b2), enp.matmul(a2, b1), enp.matmul(a1, b1), a2 @ b2,
                a3 @ b2, a3 @ b4, a1 @ b4, b4.transpose((0, 1, 3, 2)) @ b1,
                ai @ bi, enp.vdot(a2, a2), enp.inner(a2, a2), enp.inner(a1, b1),
                enp.outer(a1, b2), enp.outer(ai, bi))

    args = (a1, b1, a2, b2, a3, b3, b4, ai, bi)
    a2d = a2.astype(np.float64)
    wants = (np.dot(a1, b1), np.dot(a2, b2), np.dot(a2, b1), np.dot(a1, b2), np.dot(a3, b2),
             np.dot(a3, b3), 2.0 * a1, a1 @ b2, a2 @ b1, a1 @ b1, a2 @ b2, a3 @ b2, a3 @ b4,
             a1 @ b4, np.swapaxes(b4, 2, 3) @ b1, ai.astype(np.int32) @ bi, np.vdot(a2d, a2d),
             np.inner(a2d, a2d), np.inner(a1, b1), np.outer(a1, b2),
             np.outer(ai.astype(np.int32), bi))
    dts = [np.float32] * 15 + [np.int32, np.float32, np.float32, np.float32, np.float32,
                               np.int32]
    for got, want, dt in zip(ember.jit(f)(*args), wants, dts, strict=True):
        check(got, want, dt, rtol=1e-5, atol=1e-5)
    # Eagerly each call is its own program: a representative few on Arrays.
    a1, b1, a2, b2, a3, b3, b4, ai, bi = (enp.asarray(a) for a in args)
    eager = {1: enp.dot(a2, b2), 5: enp.dot(a3, b3), 7: enp.matmul(a1, b2), 12: a3 @ b4,
             15: ai @ bi, 16: enp.vdot(a2, a2), 19: enp.outer(a1, b2)}
    for k, got in eager.items():
        check(got, wants[k], dts[k], rtol=1e-5, atol=1e-5)


def test_einsum():
    a, b = rand((2, 3), np.float32, 20), rand((3, 4), np.float32, 21)
    p, q = rand((5, 2, 3), np.float32, 22), rand((5, 3, 4), np.float32, 23)
    v = rand((3,), np.float32, 24)
    specs = [("ij,jk->ik", (a, b)), ("bij,bjk->bik", (p, q)), ("ij->ji", (a,)), ("ij->", (a,)),
             ("ij,jk", (a, b)), ("ij->j", (a,)), ("i,i->", (v, v)), ("i,j->ij", (v, v)),
             ("bij,jk->bki", (p, b)), ("ij,j->i", (a, v)), ("ba", (a,))]

    def f(*ops):
        out, k = [], 0
        for s, o in specs:
            out.append(enp.einsum(s, *ops[k:k + len(o)]))
            k += len(o)
        return out

    flat = [x for _, o in specs for x in o]
    wants = [np.einsum(s, *o) for s, o in specs]
    for outs in (ember.jit(f)(*flat), f(*flat)):
        for got, want, (s, _) in zip(outs, wants, specs, strict=True):
            try:
                check(got, want, np.float32, rtol=1e-5, atol=1e-5)
            except AssertionError as e:
                raise AssertionError(f"einsum {s!r}: {e}") from None


def test_linalg_shape_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(TracingError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        ember.jit(lambda x, y: x @ y)(a, b)
    with pytest.raises(TracingError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        enp.matmul(a, b)
    with pytest.raises(TracingError, match=r"dot.*\(2, 3\).*\(4, 5\)"):
        enp.dot(a, b)
    with pytest.raises(TracingError, match="matmul"):
        enp.matmul(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 4), np.float32))
    with pytest.raises(TracingError, match="einsum"):
        enp.einsum("ij,jk->ik", a, b)


# --- shapes ---------------------------------------------------------------------------------

def test_shape_functions():
    x = rand((2, 3, 4), np.float32, 30)
    y = rand((2, 3, 4), np.int8, 31)
    z = rand((1, 3, 1), np.float32, 32)
    w = rand((2, 5, 4), np.float16, 33)

    def f(x, y, z, w):
        return (enp.reshape(x, (4, -1)), x.reshape(-1), x.reshape(3, 8), enp.reshape(x, 24),
                enp.transpose(x), enp.transpose(x, (1, 0, 2)), x.transpose(2, 0, 1), x.T,
                enp.squeeze(z), enp.squeeze(z, 0), enp.squeeze(z, axis=(0, -1)),
                enp.expand_dims(x, 0), enp.expand_dims(x, -1), enp.expand_dims(x, (0, 2)),
                enp.expand_dims(x, (-1, 1)), enp.broadcast_to(z, (2, 3, 5)),
                enp.broadcast_to(3.0, (2,)), enp.concatenate([x, y]),
                enp.concatenate([x, w], axis=1), enp.concatenate([y, y], axis=-1),
                enp.stack([x, y]), enp.stack([x, x, x], axis=-1), enp.stack([y, y], axis=1),
                enp.ravel(x), enp.reshape(x[:0], (3, -1)))

    wants = (np.reshape(x, (4, -1)), x.reshape(-1), x.reshape(3, 8), x.reshape(24),
             x.T, np.transpose(x, (1, 0, 2)), x.transpose(2, 0, 1), x.T, np.squeeze(z),
             np.squeeze(z, 0), np.squeeze(z, (0, 2)), np.expand_dims(x, 0),
             np.expand_dims(x, -1), np.expand_dims(x, (0, 2)), np.expand_dims(x, (-1, 1)),
             np.broadcast_to(z, (2, 3, 5)), np.broadcast_to(np.float32(3), (2,)),
             np.concatenate([x, y.astype(np.float32)]), np.concatenate([x, w], axis=1),
             np.concatenate([y, y], -1), np.stack([x, y.astype(np.float32)]),
             np.stack([x, x, x], -1), np.stack([y, y], 1), x.ravel(), np.zeros((3, 0)))
    for got, want in zip(ember.jit(f)(x, y, z, w), wants, strict=True):
        check(got, want, want.dtype if want.dtype != np.float64 else np.float32)
    xa, ya, za = (enp.asarray(a) for a in (x, y, z))
    eager = {0: enp.reshape(xa, (4, -1)), 6: xa.transpose(2, 0, 1), 10: enp.squeeze(za, (0, -1)),
             13: enp.expand_dims(xa, (0, 2)), 15: enp.broadcast_to(za, (2, 3, 5)),
             17: enp.concatenate([xa, ya]), 21: enp.stack([xa, xa, xa], axis=-1)}
    for k, got in eager.items():
        check(got, wants[k])


def test_shape_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError, match=r"reshape.*size 6.*\(4, -1\)|size 6.*\(4, -1\)"):
        ember.jit(lambda a: a.reshape(4, -1))(x)
    with pytest.raises(TracingError, match=r"size 6.*\(5,\)"):
        enp.reshape(x, (5,))
    with pytest.raises(TracingError, match="one unknown dimension"):
        enp.reshape(x, (-1, -1))
    with pytest.raises(TracingError, match=r"\(2, 3\).*\(4, 3\)"):
        ember.jit(lambda a: enp.broadcast_to(a, (4, 3)))(x)
    with pytest.raises(TracingError, match=r"add: shapes \(2, 3\) and \(4,\)"):
        ember.jit(lambda a, b: a + b)(x, np.ones(4, np.float32))
    with pytest.raises(TracingError, match=r"multiply: shapes \(2, 3\) and \(4,\)"):
        enp.multiply(x, np.ones(4, np.float32))
    with pytest.raises(TracingError, match=r"remainder: shapes \(2, 3\) and \(4,\)"):
        ember.jit(lambda a, b: a % b)(x, np.ones(4, np.float32))
    with pytest.raises(TracingError, match=r"where: shapes \(\) and \(2, 3\) and \(3, 2\)"):
        enp.where(True, x, np.ones((3, 2), np.float32))
    with pytest.raises(TracingError, match="squeeze"):
        enp.squeeze(x, 0)
    with pytest.raises(TracingError, match="axis 2 is out of bounds"):
        enp.transpose(x, (0, 2))
    with pytest.raises(TracingError, match="axis 3 is out of bounds"):
        enp.expand_dims(x, 3)
    with pytest.raises(TracingError, match="concatenate"):
        enp.concatenate([x, np.ones((2, 4), np.float32)])
    with pytest.raises(TracingError, match="same shape"):
        enp.stack([x, x.T])


# --- operators and methods ------------------------------------------------------------------

def test_operators_and_methods():
    x = rand((2, 3), np.float32, 40, lo=1, hi=4)
    y = rand((3,), np.float32, 41, lo=1, hi=4)
    i = rand((2, 3), np.int32, 42, lo=-9, hi=9)

    def f(x, y, i):
        return (x + y, x - y, x * y, x / y, x // y, x % y, x ** 2, x @ y, x < y, x <= y,
                x > y, x >= y, x == y, x != y, -x, abs(-x), +x, 2.0 - x, 1 + x, 3.0 * x,
                1.0 / x, 7.0 // x, 7.0 % x, 2.0 ** x, x.T, x.reshape(3, 2), x.reshape((6,)),
                x.sum(), x.sum(axis=0), x.mean(1), x.max(), x.min(axis=-1), x.astype(np.int32),
                i.astype(np.float16), i // 4, i % 4, -i, abs(i), 10 - i, y.dot(y),
                x.sum(keepdims=True), x.argmax(axis=1), x.ravel(), x.squeeze(), ~(x > 2),
                (x > 2) & (x < 3), (x > 2) | (x < 1.5), (x > 2) ^ (x < 3))

    with np.errstate(all="ignore"):
        wants = (x + y, x - y, x * y, x / y, x // y, x % y, x ** 2, x @ y, x < y, x <= y,
                 x > y, x >= y, x == y, x != y, -x, abs(-x), +x, np.float32(2) - x, 1 + x,
                 np.float32(3) * x, np.float32(1) / x, np.float32(7) // x, np.float32(7) % x,
                 np.float32(2) ** x, x.T, x.reshape(3, 2), x.reshape(6), x.sum(), x.sum(0),
                 x.mean(1), x.max(), x.min(-1), x.astype(np.int32), i.astype(np.float16),
                 i // 4, i % 4, -i, abs(i), 10 - i, y.dot(y), x.sum(keepdims=True),
                 x.argmax(1), x.ravel(), x.squeeze(), ~(x > 2), (x > 2) & (x < 3),
                 (x > 2) | (x < 1.5), (x > 2) ^ (x < 3))
    args = (x, y, i)
    outs = ember.jit(f)(*args)
    # On Arrays every operator is one eagerly compiled program: check a representative few.
    xa, ya, ia = (enp.asarray(a) for a in args)
    eager = {0: xa + ya, 4: xa // ya, 7: xa @ ya, 8: xa < ya, 17: 2.0 - xa, 24: xa.T,
             28: xa.sum(axis=0), 32: xa.astype(np.int32), 35: ia % 4, 37: abs(ia),
             44: ~(xa > 2)}
    assert len(outs) == len(wants)
    for results in (outs, eager):
        items = results.items() if isinstance(results, dict) else enumerate(results)
        for k, got in items:
            want = wants[k]
            dt = np.int32 if want.dtype == np.int64 else None
            try:
                check(got, want, dt, rtol=1e-5)
            except AssertionError as e:
                raise AssertionError(f"output {k}: {e}") from None


def test_tracer_results_are_weak_only_for_scalars():
    # Python scalar operands don't change an array's dtype, in any position.
    x = np.ones((2,), np.float16)
    outs = ember.jit(lambda a: (a + 1, 1 + a, a * 2.5, 2.5 - a, a / 3, a ** 2, 2 ** a))(x)
    for o in outs:
        assert o.dtype == np.float16


# JAX's weak-type rules (jax.numpy's docs and lax.full/full_like): a fill or a `*_like` of
# a weak value is weak unless a dtype is given, gathers/sorts/clips keep the weak type, and
# reductions (sums, products, extrema, their cumulative forms, means) return strong types.
_WEAKNESS = {
    "full": (lambda w: enp.full(3, 2.0), True),
    "full dtype": (lambda w: enp.full(3, 2.0, dtype=np.float32), False),
    "zeros_like": (lambda w: enp.zeros_like(w), True),
    "ones_like": (lambda w: enp.ones_like(w), True),
    "full_like": (lambda w: enp.full_like(w, 3), True),
    "full_like dtype": (lambda w: enp.full_like(w, 3, dtype=np.float32), False),
    "full_like array": (lambda w: enp.full_like(w, np.float32(3) * enp.ones(3)), True),
    "take": (lambda w: enp.take(w, np.array([0, 1, 2])), True),
    "sort": (lambda w: enp.sort(w), True),
    "clip": (lambda w: enp.clip(w, 0, 1), True),
    "sum": (lambda w: w.sum(), False),
    "prod": (lambda w: w.prod(), False),
    "max": (lambda w: w.max(), False),
    "min": (lambda w: enp.min(w), False),
    "cumsum": (lambda w: enp.cumsum(w), False),
    "cumprod": (lambda w: enp.cumprod(w), False),
    "mean": (lambda w: w.mean(), False),
}


def test_weak_types_follow_jax():
    # w: a weakly typed float32 vector; with a float16 array, weak values take float16. One
    # program for all functions (a compile each would cost a minute).
    h = np.ones(3, np.float16)

    def both(h):
        outs = {k: fn(enp.broadcast_to(2.0, (3,))) for k, (fn, _) in _WEAKNESS.items()}
        return outs, {k: v + h for k, v in outs.items()}
    outs, with_h = ember.jit(both)(h)
    for name, (_, weak) in _WEAKNESS.items():
        assert outs[name].weak_type == weak, name
        assert with_h[name].dtype == (np.float16 if weak else np.float32), name


def test_inexact_and_numeric_promotions_follow_jax():
    """JAX promotes rint, reciprocal and float_power's arguments to inexact dtypes (integers
    to the default float, floats kept), and bools to the default integer for square and
    power, where NumPy keeps integers, goes to float64 or to int8."""
    i, b = np.array([1, 2, 4], np.int32), np.array([True, False])
    h = np.array([0.5, 2, 3], np.float16)

    def f(i, b, h):
        return {"rint": enp.rint(i), "reciprocal": enp.reciprocal(i),
                "float_power_h": enp.float_power(h, h), "float_power_i": enp.float_power(i, i),
                "square": enp.square(b), "power": enp.power(b, b), "conj": enp.conj(h)}
    want = {"rint": (np.float32, np.rint(i)), "reciprocal": (np.float32, 1 / i),
            "float_power_h": (np.float16, h ** h), "float_power_i": (np.float32, 1.0 * i ** i),
            "square": (np.int32, b * b), "power": (np.int32, [1, 1]), "conj": (np.float16, h)}
    for got in (f(i, b, h), ember.jit(f)(i, b, h)):
        for name, (dt, values) in want.items():
            assert got[name].dtype == dt, name
            np.testing.assert_allclose(np.asarray(got[name], np.float64), values, rtol=1e-3,
                                       err_msg=name)


def test_eager_fills_are_weak_like_traced_ones():
    assert enp.full(3, 2.0).weak_type and not enp.full(3, 2.0, np.float32).weak_type
    assert enp.zeros_like(2.0).weak_type and not enp.zeros_like(np.ones(2, np.float32)).weak_type
    assert (enp.ones_like(enp.full(2, 1.5)) + np.ones(2, np.float16)).dtype == np.float16


def test_error_names_user_line():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError) as info:
        ember.jit(lambda a: a @ a)(x)
    assert re.search(r"test_numpy\.py:\d+", str(info.value))
