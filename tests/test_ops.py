"""Every ember op (``ember.lax`` level) run through ``ember.jit`` against a NumPy oracle.

Each op has one module-level jitted function, reused across dtypes and shapes. Every distinct
signature costs an IREE compile (~0.5 s here), so an op's function takes a list with one input
per dtype and is called with that same signature by every test of the op: a test that looks at
particular values (NaN, INT_MIN, ...) embeds them into the op's standard inputs. Oracles compute
in float64 (or Python ints) and round to the op's dtype; lax semantics are XLA's (integer
division truncates and never traps, ``max``/``min`` propagate NaN, ...).
"""

import math
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
i8, i32, u8, u32 = (np.dtype(t) for t in ("int8", "int32", "uint8", "uint32"))
BOOL = np.dtype(np.bool_)

FLOATS = [f32, f16, bf16]
INTS = [i8, i32, u8, u32]
SIGNED_INTS = [i8, i32]
NUMERIC = FLOATS + INTS
SIGNED = FLOATS + SIGNED_INTS
INTEGRAL = INTS + [BOOL]
ALL = NUMERIC + [BOOL]

SHAPE = (8, 16)          # the shape of every elementwise test input
SHAPES = [(), (5,), (3, 4), (0, 3)]


def _id(d):
    return np.dtype(d).name


def _seed(*parts):
    return zlib.crc32("/".join(parts).encode())


def is_float(d):
    return np.dtype(d) in FLOATS


def is_unsigned(d):
    return np.dtype(d).kind == "u"


# --- inputs -------------------------------------------------------------------------------

def special_values(dtype):
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return [False, True]
    if is_float(dtype):
        big = float(ml_dtypes.finfo(dtype).max)
        tiny = float(ml_dtypes.finfo(dtype).tiny)
        return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.25, 0.25, 100.0,
                -100.0, np.inf, -np.inf, np.nan, tiny, -big]
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 7, info.max, info.max - 1, 100]
    if dtype.kind == "i":
        vals += [-1, -2, -7, info.min, info.min + 1, -100]
    else:
        vals += [info.max // 2, info.max // 2 + 1, info.max // 2 + 5]   # above 2**31 for u32
    return vals


def sample(dtype, rng, shape=SHAPE, *, low=None, high=None, specials=None):
    """Random values of ``dtype`` and ``shape``, starting with some special values."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if dtype == BOOL:
        flat = rng.random(n) < 0.5
    elif is_float(dtype):
        lo, hi = (-10.0 if low is None else low), (10.0 if high is None else high)
        flat = rng.uniform(lo, hi, n)
    else:
        info = np.iinfo(dtype)
        lo = info.min if low is None else max(low, info.min)
        hi = info.max if high is None else min(high, info.max)
        flat = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
    flat = flat.astype(dtype)
    special = special_values(dtype) if specials is None else specials
    k = min(n, len(special))
    flat[:k] = np.array(special[:k]).astype(dtype)
    return flat.reshape(shape)


def embed(values, base):
    """``base`` (a copy) with its first elements replaced by ``values``."""
    out = np.array(base, copy=True)
    with np.errstate(over="ignore"):   # e.g. -1e10 is -inf in float16
        values = np.asarray(values).astype(out.dtype).ravel()
    out.reshape(-1)[:values.size] = values
    return out


def f64(x):
    return np.asarray(x).astype(np.float64)


# --- comparison ---------------------------------------------------------------------------

# (rtol, atol) for results that are not correctly rounded (transcendentals, reductions)
APPROX = {f32: (1e-5, 1e-6), f16: (2e-3, 1e-4), bf16: (1.6e-2, 1e-3)}


def check(got, want, dtype=None, *, exact=False, tol=None, signed_zeros=False, label=""):
    """Compare an ember result with an oracle: same shape and dtype, values close."""
    try:
        _check(got, want, dtype, exact, tol, signed_zeros)
    except AssertionError as e:
        if not label:
            raise
        raise AssertionError(f"{label}: {e}") from None


def _check(got, want, dtype, exact, tol, signed_zeros):
    got = np.asarray(got)
    want = np.asarray(want)
    if dtype is not None:
        want = want.astype(dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if not is_float(want.dtype):
        np.testing.assert_array_equal(got, want)
        return
    g, w = f64(got), f64(want)
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        rtol, atol = tol or APPROX[want.dtype]
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if signed_zeros:
        zeros = (w == 0)
        np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]),
                                      err_msg="signs of zeros differ")


def flush(x):
    """Subnormal float32/bfloat16 values as zeros of the same sign.

    IREE's CPU runtime computes with flush-to-zero and denormals-are-zero, as XLA on CPU does:
    float32 (and bfloat16, computed in float32) subnormal inputs read as zero and subnormal
    results become zero. float16 is computed in float32, where its subnormals are normal.
    Vulkan (lavapipe) keeps subnormals: there the oracle keeps them too.
    """
    x = np.asarray(x)
    if x.dtype not in (f32, bf16) or ember.config._values["default_backend"] == "vulkan":
        return x
    tiny = float(np.finfo(np.float32).tiny)
    w = f64(x)
    return np.where(np.abs(w) < tiny, np.copysign(0.0, w), w).astype(x.dtype)


def rounded(fn, *xs, dtype=None):
    """``fn`` in float64 on the inputs, rounded to ``dtype`` (default: the first input's),
    with float32's flush-to-zero (see :func:`flush`)."""
    dtype = dtype or np.asarray(xs[0]).dtype
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*[f64(flush(x)) for x in xs])).astype(dtype)
    return flush(out)


def per_dtype(fn):
    """A jitted function applying ``fn`` to each entry of a list (one entry per dtype)."""
    return ember.jit(lambda args: [fn(*a) for a in args])


# --- elementwise unary --------------------------------------------------------------------

def _round_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _logistic(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# name: (lax function, dtypes, float64 oracle, exact?, (low, high) of random inputs)
UNARY = {
    "neg": (lax.neg, SIGNED, np.negative, True, None),
    "abs": (lax.abs, SIGNED, np.abs, True, None),
    "sign": (lax.sign, NUMERIC, np.sign, True, None),
    "floor": (lax.floor, FLOATS, np.floor, True, None),
    "ceil": (lax.ceil, FLOATS, np.ceil, True, None),
    "round_away": (lambda x: lax.round(x, "away_from_zero"), FLOATS, _round_away, True, None),
    "round_even": (lambda x: lax.round(x, "to_nearest_even"), FLOATS, np.rint, True, None),
    "is_finite": (lax.is_finite, FLOATS, np.isfinite, True, None),
    "not": (lax.bitwise_not, INTEGRAL, np.invert, True, None),
    "exp": (lax.exp, FLOATS, np.exp, False, (-20, 20)),
    "expm1": (lax.expm1, FLOATS, np.expm1, False, (-5, 5)),
    "log": (lax.log, FLOATS, np.log, False, (0, 1000)),
    "log1p": (lax.log1p, FLOATS, np.log1p, False, (-0.99, 100)),
    "sqrt": (lax.sqrt, FLOATS, np.sqrt, False, (0, 1000)),
    "rsqrt": (lax.rsqrt, FLOATS, lambda x: 1 / np.sqrt(x), False, (0, 1000)),
    "sin": (lax.sin, FLOATS, np.sin, False, (-10, 10)),
    "cos": (lax.cos, FLOATS, np.cos, False, (-10, 10)),
    "tan": (lax.tan, FLOATS, np.tan, False, (-1.4, 1.4)),
    "tanh": (lax.tanh, FLOATS, np.tanh, False, (-10, 10)),
    "logistic": (lax.logistic, FLOATS, _logistic, False, (-20, 20)),
    "erf": (lax.erf, FLOATS, _erf, False, (-4, 4)),
}
UNARY_JIT = {name: per_dtype(spec[0]) for name, spec in UNARY.items()}
# Special inputs for the transcendental functions, where they are well-conditioned.
_TRANSCENDENTAL_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-3, -1e-3, 3.0, np.inf,
                            -np.inf, np.nan]


def unary_input(name, dtype):
    rng = np.random.default_rng(_seed(name, _id(dtype)))
    domain = UNARY[name][4]
    if domain is None:
        return sample(dtype, rng)
    return sample(dtype, rng, low=domain[0], high=domain[1], specials=_TRANSCENDENTAL_SPECIALS)


def run_unary(name, special=None):
    """Run op ``name`` on its standard inputs, with ``special`` values (a dict dtype -> values)
    embedded at the start; returns {dtype: (input, result)}."""
    special = special or {}
    xs = []
    for d in UNARY[name][1]:
        x = unary_input(name, d)
        xs.append(embed(special[d], x) if d in special else x)
    outs = UNARY_JIT[name]([(x,) for x in xs])
    return {d: (x, np.asarray(o)) for d, x, o in zip(UNARY[name][1], xs, outs)}


def unary_expected(name, x):
    oracle = UNARY[name][2]
    if name == "is_finite":
        return np.isfinite(f64(x))
    return rounded(oracle, x) if is_float(x.dtype) else oracle(x)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
    exact = UNARY[name][3]
    for d, (x, got) in run_unary(name).items():
        # np.sign(-0.0) is +0.0; lax.sign keeps the zero's sign (test_sign_zeros_and_nan)
        check(got, unary_expected(name, x), exact=exact,
              signed_zeros=exact and name != "sign", label=f"{name} {_id(d)}")


def test_sign_zeros_and_nan():
    # lax.sign keeps the sign of zeros and NaN (XLA semantics): sign(-0.0) is -0.0.
    vals = [-0.0, 0.0, np.nan, -np.inf, np.inf, -1e-30, 1e-30]
    res = run_unary("sign", {d: vals for d in FLOATS})
    for d in FLOATS:
        got = f64(res[d][1]).ravel()[:len(vals)]
        tiny = 0 if d == f16 else 1   # +-1e-30 is +-0.0 in float16
        np.testing.assert_array_equal(got, [0.0, 0.0, np.nan, -1, 1, -tiny, tiny])
        assert list(np.signbit(got[:2])) == [True, False], d


def test_small_values_expm1_log1p():
    x = [1e-10, -1e-10, 1e-7, -1e-7, 3e-5, -3e-5, 1e-3, -1e-3, 1e-30]
    for name, oracle in (("expm1", np.expm1), ("log1p", np.log1p)):
        got = run_unary(name, {f32: x})[f32][1].ravel()[:len(x)]
        check(got, rounded(oracle, np.array(x, f32)), tol=(2e-6, 0), label=name)


def test_erf_matches_math_erf():
    x = np.linspace(-5, 5, 101, dtype=np.float32)
    want = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    got = run_unary("erf", {f32: x})[f32][1].ravel()[:x.size]
    check(got, want, tol=(2e-6, 1e-7))


def test_logistic_extremes():
    x = np.array([-100.0, -30.0, -5.0, 0.0, 5.0, 30.0, 100.0, np.inf, -np.inf], np.float32)
    got = run_unary("logistic", {f32: x})[f32][1].ravel()[:x.size]
    # logistic(-100) is subnormal: the CPU flushes it, Vulkan's exp is not exact down there.
    check(got, rounded(_logistic, x), tol=(1e-6, float(np.finfo(np.float32).tiny)))


def test_round_ties():
    x = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 8388609.0, -0.0]
    for name, want in (("round_away", [1, 2, 3, -1, -2, -3, 0, -0.0, 8388609, -0.0]),
                       ("round_even", [0, 2, 2, -0.0, -2, -2, 0, -0.0, 8388609, -0.0])):
        got = run_unary(name, {f32: x})[f32][1].ravel()[:len(x)]
        check(got, want, f32, exact=True, signed_zeros=True, label=name)


# --- elementwise binary -------------------------------------------------------------------

def int_div_rem(x, y, dtype):
    """XLA's integer division and remainder: truncating, x/0 = -1, x%0 = x, MIN/-1 = MIN."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    q, r = [], []
    for a, b in zip(np.asarray(x).ravel().tolist(), np.asarray(y).ravel().tolist()):
        if b == 0:
            q.append(-1 if dtype.kind == "i" else info.max)
            r.append(a)
            continue
        qq = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        rr = a - b * qq
        if qq > info.max:       # MIN / -1
            qq = info.min
        q.append(qq)
        r.append(rr)
    shape = np.shape(x)
    return np.array(q, dtype).reshape(shape), np.array(r, dtype).reshape(shape)


def _np_binary(np_fn):
    def oracle(x, y):
        if is_float(x.dtype):
            return rounded(np_fn, x, y)
        with np.errstate(all="ignore"):
            return np_fn(x, y).astype(x.dtype)
    return oracle


def _div(x, y):
    return _np_binary(np.divide)(x, y) if is_float(x.dtype) else int_div_rem(x, y, x.dtype)[0]


def _rem(x, y):
    if is_float(x.dtype):   # fmod is exact, and IREE computes it with subnormals intact
        with np.errstate(all="ignore"):
            return np.fmod(f64(x), f64(y)).astype(x.dtype)
    return int_div_rem(x, y, x.dtype)[1]


def _maxmin(np_fn):
    def oracle(x, y):   # NaN propagates, as in np.maximum
        return rounded(np_fn, x, y) if is_float(x.dtype) else np_fn(x, y)
    return oracle


# name: (lax function, dtypes, oracle(x, y) -> array of the result dtype, exact?)
BINARY = {
    "add": (lax.add, NUMERIC, _np_binary(np.add), True),
    "sub": (lax.sub, NUMERIC, _np_binary(np.subtract), True),
    "mul": (lax.mul, NUMERIC, _np_binary(np.multiply), True),
    "div": (lax.div, NUMERIC, _div, True),
    "rem": (lax.rem, NUMERIC, _rem, True),
    "max": (lax.max, ALL, _maxmin(np.maximum), True),
    "min": (lax.min, ALL, _maxmin(np.minimum), True),
    "pow": (lax.pow, FLOATS, _np_binary(np.power), False),
    "atan2": (lax.atan2, FLOATS, _np_binary(np.arctan2), False),
    "and": (lax.bitwise_and, INTEGRAL, np.bitwise_and, True),
    "or": (lax.bitwise_or, INTEGRAL, np.bitwise_or, True),
    "xor": (lax.bitwise_xor, INTEGRAL, np.bitwise_xor, True),
}
BINARY_JIT = {name: per_dtype(spec[0]) for name, spec in BINARY.items()}


def binary_inputs(dtype, seed):
    """x, y of SHAPE with every pair of special values somewhere, and random values."""
    rng = np.random.default_rng(seed)
    x, y = sample(dtype, rng), sample(dtype, rng)
    sp = np.array(special_values(dtype)).astype(dtype)
    xs, ys = np.meshgrid(sp, sp)
    n = min(x.size, xs.size)
    idx = rng.permutation(xs.size)[:n]
    x.reshape(-1)[:n], y.reshape(-1)[:n] = xs.ravel()[idx], ys.ravel()[idx]
    return x, y


def _standard_pair(name, dtype):
    x, y = binary_inputs(dtype, _seed(name, _id(dtype)))
    if name in ("pow", "atan2"):   # keep part of the random values well-conditioned
        rng = np.random.default_rng(0)
        x.reshape(-1)[64:] = rng.uniform(-4, 4, x.size - 64).astype(dtype)
        y.reshape(-1)[64:] = rng.uniform(-4, 4, x.size - 64).astype(dtype)
    return x, y


def run_binary(name, special=None):
    """Run op ``name`` on its standard inputs with ``special`` (dtype -> (xs, ys)) embedded;
    returns {dtype: (x, y, result)}."""
    special = special or {}
    args = []
    for d in BINARY[name][1]:
        x, y = _standard_pair(name, d)
        if d in special:
            x, y = embed(special[d][0], x), embed(special[d][1], y)
        args.append((x, y))
    outs = BINARY_JIT[name](args)
    return {d: (x, y, np.asarray(o)) for d, (x, y), o in zip(BINARY[name][1], args, outs)}


def binary_expected(name, x, y):
    return BINARY[name][2](x, y)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name):
    for d, (x, y, got) in run_binary(name).items():
        check(got, binary_expected(name, x, y), exact=BINARY[name][3], label=f"{name} {_id(d)}")


def test_int_div_rem_edge_cases():
    for dtype in SIGNED_INTS:
        mn, mx = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
        pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (1, 7), (-1, 7), (0, 5),
                 (5, 0), (-5, 0), (0, 0), (mn, 0), (mx, 0), (mn, -1), (mn, 1), (mx, -1),
                 (mn, mn), (mn, mx), (mx, mn), (mn, 2), (mn + 1, -1), (-3, 5), (3, -5)]
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        n = len(pairs)
        q = run_binary("div", {dtype: (xs, ys)})[dtype][2].ravel()[:n]
        r = run_binary("rem", {dtype: (xs, ys)})[dtype][2].ravel()[:n]
        want_q, want_r = int_div_rem(np.array(xs, dtype), np.array(ys, dtype), dtype)
        check(q, want_q, label=f"div {_id(dtype)}")
        check(r, want_r, label=f"rem {_id(dtype)}")
        # C semantics, written out: truncation toward zero, remainder has the dividend's sign
        assert list(q[:4]) == [3, -3, -3, 3] and list(r[:4]) == [1, -1, 1, -1]
        assert q[pairs.index((mn, -1))] == mn and r[pairs.index((mn, -1))] == 0
        assert q[pairs.index((5, 0))] == -1 and r[pairs.index((5, 0))] == 5


def test_unsigned_div_rem_compare():
    special = {}
    for dtype in (u8, u32):
        mx = int(np.iinfo(dtype).max)
        big = [mx, mx - 1, mx // 2 + 1, mx // 2 + 3, 3, 0, 1, 200 if dtype == u8 else 3 * 10**9]
        xs = big + big[::-1]
        ys = [2, 3, 0, mx, mx // 2 + 1, 7, 1, 0] + big
        special[dtype] = (xs, ys)
    n = 16
    for name in ("div", "rem", "max", "min"):
        res = run_binary(name, special)
        for dtype in (u8, u32):
            x, y, got = (a.ravel()[:n] for a in res[dtype])
            check(got, binary_expected(name, x, y), label=f"{name} {_id(dtype)}")
    res = run_compare(special)
    for dtype in (u8, u32):
        x, y, got = res[dtype]
        for name, np_fn in COMPARE.items():
            check(got[name].ravel()[:n], np_fn(x.ravel()[:n], y.ravel()[:n]),
                  label=f"{name} {_id(dtype)}")


def test_max_min_propagate_nan():
    x = [np.nan, 1.0, np.nan, -np.inf, 0.0, -0.0, np.inf, np.nan]
    y = [1.0, np.nan, np.nan, np.nan, -0.0, 0.0, np.nan, -np.inf]
    for name, np_fn in (("max", np.maximum), ("min", np.minimum)):
        res = run_binary(name, {d: (x, y) for d in FLOATS})
        for d in FLOATS:
            got = res[d][2].ravel()[:len(x)]
            want = np_fn(f64(x), f64(y))
            check(got, want, d, exact=True, label=f"{name} {_id(d)}")
            assert np.isnan(f64(got)[[0, 1, 2, 3, 6, 7]]).all()


def test_pow_negative_base():
    x = [-2.0, -2.0, -2.0, -3.0, -0.5, -8.0, -2.0, -1.0, -1.0, -0.0, -0.0, 2.0, 0.0, -2.0,
         -1e10, -4.0, -np.inf, -np.inf, -np.inf, -np.inf]
    y = [2.0, 3.0, -1.0, 4.0, -3.0, 1 / 3, 0.5, 1e10, np.inf, -1.0, 3.0, 0.5, -2.0, 0.0, 3.0,
         0.5, 3.0, 2.0, -3.0, 0.5]
    res = run_binary("pow", {d: (x, y) for d in FLOATS})
    for d in FLOATS:
        a, b, got = (v.ravel()[:len(x)] for v in res[d])
        check(got, rounded(np.power, a, b), signed_zeros=True, label=_id(d))
    assert res[f32][2].ravel()[0] == 4.0       # (-2.0) ** 2.0
    assert res[f32][2].ravel()[1] == -8.0      # (-2.0) ** 3.0


def test_pow_special_values():
    x = [np.nan, 1.0, np.inf, np.inf, 0.5, 2.0, 0.0, 1.0, -1.0, 1.0, 0.0, 0.0, -0.0, np.nan]
    y = [0.0, np.nan, 2.0, -2.0, np.inf, -np.inf, 0.0, np.inf, -np.inf, -0.0, 3.0, -1.0, -0.0,
         1.0]
    res = run_binary("pow", {f32: (x, y)})
    a, b, got = (v.ravel()[:len(x)] for v in res[f32])
    check(got, rounded(np.power, a, b), exact=True, signed_zeros=True)


def test_atan2_special_values():
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -1e-3], f32)
    y, x = (a.ravel() for a in np.meshgrid(sp, sp))
    res = run_binary("atan2", {d: (y, x) for d in FLOATS})
    for d in FLOATS:
        a, b, got = (v.ravel()[:y.size] for v in res[d])
        check(got, rounded(np.arctan2, a, b), signed_zeros=True, label=_id(d))


# --- comparisons and select ---------------------------------------------------------------

COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
COMPARE_JIT = per_dtype(lambda x, y: {n: getattr(lax, n)(x, y) for n in COMPARE})


def run_compare(special=None):
    special = special or {}
    args = []
    for d in ALL:
        x, y = binary_inputs(d, 7)
        if d != BOOL:
            y.reshape(-1)[-5:] = x.reshape(-1)[-5:]     # some equal pairs
        if d in special:
            x, y = embed(special[d][0], x), embed(special[d][1], y)
        args.append((x, y))
    outs = COMPARE_JIT(args)
    return {d: (x, y, {k: np.asarray(v) for k, v in o.items()})
            for d, (x, y), o in zip(ALL, args, outs)}


def test_compare():
    nan_pairs = ([np.nan, np.nan, 1.0, np.nan, np.inf, -0.0],
                 [np.nan, 1.0, np.nan, np.inf, np.inf, 0.0])
    for d, (x, y, got) in run_compare({d: nan_pairs for d in FLOATS}).items():
        assert set(got) == set(COMPARE)
        for name, np_fn in COMPARE.items():
            want = np_fn(f64(x), f64(y)) if is_float(d) else np_fn(x, y)
            check(got[name], want, label=f"{name} {_id(d)}")


SELECT_JIT = per_dtype(lax.select)


def test_select():
    rng = np.random.default_rng(3)
    args = [(rng.random(SHAPE) < 0.5, sample(d, rng), sample(d, rng)) for d in ALL]
    for d, (p, x, y), got in zip(ALL, args, SELECT_JIT(args)):
        check(got, np.where(p, x, y), exact=True, signed_zeros=True, label=_id(d))


# --- convert ------------------------------------------------------------------------------

CONVERT_N = 40
CONVERT_JIT = ember.jit(lambda xs: [[lax.convert_element_type(x, d) for d in ALL]
                                    for x in xs])


def _convert_input(src):
    if src == BOOL:
        vals = [True, False, True, True]
    elif is_float(src):
        vals = [-3.7, -1.5, -0.5, -0.0, 0.0, 0.4, 0.5, 0.9, 1.0, 1.5, 2.5, 100.9, 127.9, -128.0,
                -128.9, 200.5, 255.9, 3e9, 4e9, 1e10, 65504.0, 1e5, 0.1, 1e-8, np.nan, np.inf,
                -np.inf, -2.9, 2.9, 4294967040.0]
    else:
        info = np.iinfo(src)
        vals = [v for v in [0, 1, -1, 2, 127, -128, 255, 256, 3, info.max, info.min,
                            info.max - 1, 65504, 100000, 16777217, 2**31 + 1, 3_000_000_000,
                            16842753] if info.min <= v <= info.max]
    rng = np.random.default_rng(_seed("convert", _id(src)))
    with np.errstate(over="ignore"):
        return embed(np.array(vals, np.float64 if is_float(src) else np.int64).astype(src),
                     sample(src, rng, (CONVERT_N,)))


def run_convert(special=None):
    special = special or {}
    xs = [embed(special[s], _convert_input(s)) if s in special else _convert_input(s)
          for s in ALL]
    outs = CONVERT_JIT(xs)
    return {s: (x, [np.asarray(o) for o in os]) for s, x, os in zip(ALL, xs, outs)}


def convert_expected(x, dst):
    """NumPy's astype (JAX's results where C leaves a conversion undefined)."""
    src = x.dtype
    if dst == BOOL:
        return f64(x) != 0
    if is_float(src) and not is_float(dst):
        # Truncation saturating at the bounds, NaN to 0: JAX's results on the CPU (C leaves
        # out-of-range conversions undefined).
        info = np.iinfo(dst)
        t = np.trunc(f64(x))
        nan = np.isnan(t)
        hi = t >= 2.0 ** (info.bits if np.issubdtype(dst, np.unsignedinteger) else info.bits - 1)
        lo = t <= float(info.min)
        out = np.zeros(t.shape, dst)
        mid = ~(nan | hi | lo)
        out[mid], out[hi], out[lo] = t[mid].astype(dst), info.max, info.min
        return out
    if dst == bf16 and not is_float(src):
        # JAX's (XLA's) int -> bfloat16 rounds twice, through float32, as ember does;
        # ml_dtypes rounds once since 0.7 (2**24 + 2**16 + 1: 2**24 here, 2**24 + 2**17 there).
        return x.astype(np.float32).astype(dst)
    with np.errstate(over="ignore"):
        return x.astype(dst)


def test_convert():
    for src, (x, outs) in run_convert().items():
        for dst, got in zip(ALL, outs):
            want = convert_expected(x, dst)
            assert got.dtype == dst, (src, dst)
            check(got, want, exact=True, label=f"convert {_id(src)} -> {_id(dst)}")


def test_convert_float_truncates_and_bool():
    x = [-2.9, -1.5, -0.5, 0.5, 1.5, 2.9, 0.0, np.nan, -0.0]
    res = run_convert({f32: x, BOOL: [True, False], u32: [3_000_000_000, 4294967295]})
    outs = dict(zip(ALL, res[f32][1]))
    np.testing.assert_array_equal(outs[i32][:7], [-2, -1, 0, 0, 1, 2, 0])
    sat = run_convert({f32: [300.5, 3e9, np.inf, np.nan, -3e9, -np.inf, -5.0]})
    sat = dict(zip(ALL, sat[f32][1]))      # saturating, NaN to 0, as JAX on the CPU
    np.testing.assert_array_equal(sat[i8][:7], [127, 127, 127, 0, -128, -128, -5])
    np.testing.assert_array_equal(sat[u8][:7], [255, 255, 255, 0, 0, 0, 0])
    np.testing.assert_array_equal(sat[i32][:7], [300, 2**31 - 1, 2**31 - 1, 0, -2**31, -2**31,
                                                 -5])
    np.testing.assert_array_equal(sat[u32][:7], [300, 3_000_000_000, 2**32 - 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(outs[BOOL][:9], [1, 1, 1, 1, 1, 1, 0, 1, 0])
    np.testing.assert_array_equal(dict(zip(ALL, res[BOOL][1]))[f32][:2], [1.0, 0.0])
    from_u32 = dict(zip(ALL, res[u32][1]))
    np.testing.assert_array_equal(from_u32[f32][:2], [3e9, 4294967296.0])
    np.testing.assert_array_equal(from_u32[i32][:2], [-1294967296, -1])
    u = run_convert({f32: [3_000_000_000.0, 4294967040.0, 2147483648.0]})
    np.testing.assert_array_equal(dict(zip(ALL, u[f32][1]))[u32][:3],
                                  [3_000_000_000, 4294967040, 2147483648])


def test_convert_f32_bf16_f16_rounding():
    vals = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0,
                     1e-8, 3.4e38, -(1 + 2**-8), 0.1, 1 / 3, -1 / 3], f32)
    res = run_convert({f32: vals})
    x, outs = res[f32]
    out = dict(zip(ALL, outs))
    with np.errstate(over="ignore"):
        check(out[bf16], x.astype(bf16), exact=True)
        check(out[f16], x.astype(f16), exact=True)
    # and back: bf16/f16 -> f32 is exact
    x16, outs16 = res[f16]
    check(dict(zip(ALL, outs16))[f32], x16.astype(f32), exact=True)
    xb, outsb = res[bf16]
    check(dict(zip(ALL, outsb))[f32], xb.astype(f32), exact=True)
    check(dict(zip(ALL, outsb))[f16], xb.astype(f16), exact=True)


# --- the elementwise ops over several shapes ----------------------------------------------

SWEEP_DTYPES = {"add": f32, "mul": i32, "exp": f32, "neg": bf16, "not": BOOL, "lt": u32,
                "select": f16, "convert": i8, "div": i8}
SWEEP_JIT = ember.jit(lambda a: {
    "add": lax.add(a["add"], a["add"]), "mul": lax.mul(a["mul"], a["mul"]),
    "exp": lax.exp(a["exp"]), "neg": lax.neg(a["neg"]), "not": lax.bitwise_not(a["not"]),
    "lt": lax.lt(a["lt"], a["lt2"]), "select": lax.select(a["pred"], a["select"], a["select2"]),
    "convert": [lax.convert_element_type(a["convert"], d) for d in ALL],
    "div": lax.div(a["div"], a["div2"])})


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shapes(shape):
    rng = np.random.default_rng(11)
    a = {k: sample(d, rng, shape, low=-5 if is_float(d) else None, high=5 if is_float(d)
                   else None, specials=[1, 0] if is_float(d) else None)
         for k, d in SWEEP_DTYPES.items()}
    a["lt2"] = sample(u32, rng, shape)
    a["select2"] = sample(f16, rng, shape)
    a["div2"] = sample(i8, rng, shape, specials=[0, -1])
    a["pred"] = rng.random(shape) < 0.5
    got = SWEEP_JIT(a)
    check(got["add"], a["add"] + a["add"], exact=True, label="add")
    check(got["mul"], a["mul"] * a["mul"], label="mul")
    check(got["exp"], rounded(np.exp, a["exp"]), label="exp")
    check(got["neg"], -a["neg"], exact=True, label="neg")
    check(got["not"], ~a["not"], label="not")
    check(got["lt"], a["lt"] < a["lt2"], label="lt")
    check(got["select"], np.where(a["pred"], a["select"], a["select2"]), exact=True)
    check(got["div"], int_div_rem(a["div"], a["div2"], i8)[0], label="div")
    for d, g in zip(ALL, got["convert"]):
        check(g, convert_expected(a["convert"], d), exact=True, label=f"convert {d}")


# --- hypothesis: binary arithmetic on random values ---------------------------------------

HYP_N = 8   # values drawn per operand and dtype, embedded into the standard inputs


def _hyp_elements(dtype):
    if dtype in (f32, f16):
        return st.floats(width=8 * dtype.itemsize)
    if dtype == bf16:
        return st.floats(width=32).map(lambda v: float(np.float32(v).astype(bf16)))
    if dtype == BOOL:
        return st.booleans()
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max))


def _operands(dtype):
    values = st.lists(_hyp_elements(dtype), min_size=HYP_N, max_size=HYP_N)
    return st.tuples(values, values)


HYP_CASES = [(n, d) for n in ["add", "sub", "mul", "div", "rem", "max", "min"]
             for d in BINARY[n][1]]


@pytest.mark.parametrize("name,dtype", HYP_CASES,
                         ids=lambda v: v if isinstance(v, str) else _id(v))
def test_binary_hypothesis(name, dtype):
    @settings(max_examples=8, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(_operands(dtype))
    def run(drawn):
        xs, ys = (np.array(v).astype(dtype) for v in drawn)
        x, y, got = run_binary(name, {dtype: (xs, ys)})[dtype]
        check(got, binary_expected(name, x, y), exact=True, label=f"{name} {_id(dtype)}")
    run()


# --- creation -----------------------------------------------------------------------------

IOTA_CASES = [(i32, (5,), 0), (f32, (3, 4), 1), (u8, (2, 3, 4), 2), (bf16, (4, 3), 0),
              (i8, (0, 3), 1), (f16, (7,), 0), (u32, (2, 2), 0)]
IOTA_JIT = ember.jit(lambda: [lax.broadcasted_iota(d, s, dim) for d, s, dim in IOTA_CASES])


def test_iota():
    for (dtype, shape, dim), got in zip(IOTA_CASES, IOTA_JIT()):
        idx = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
        check(got, np.broadcast_to(idx, shape).astype(dtype), exact=True)


# --- shape ops ----------------------------------------------------------------------------

SHAPE_DTYPES = [f32, bf16, i8, u32, BOOL]


def shape_op_jit(apply, cases):
    """One jitted function for a shape op: per dtype, ``apply(x, case)`` for every case."""
    return ember.jit(lambda per_dtype: [[apply(x, c) for x, c in zip(xs, cases)]
                                        for xs in per_dtype])


def _run_cases(jitted, cases, make_input, oracle):
    rng = np.random.default_rng(17)
    per_dtype = [[make_input(c, d, rng) for c in cases] for d in SHAPE_DTYPES]
    for d, xs, outs in zip(SHAPE_DTYPES, per_dtype, jitted(per_dtype)):
        for c, x, got in zip(cases, xs, outs):
            check(got, oracle(c, x), exact=True, label=f"{_id(d)} case {c}")


def _first_input(c, dtype, rng):
    return sample(dtype, rng, c[0])


BCAST_CASES = [((3,), (2, 3), (1,)), ((3,), (3, 2), (0,)), ((1, 3), (4, 3), (0, 1)),
               ((1, 1), (2, 1, 3), (0, 2)), ((), (2, 3), ()), ((2, 1), (2, 5, 0), (0, 1)),
               ((2, 1, 3), (2, 4, 3), (0, 1, 2)), ((1,), (1, 1), (1,))]
BCAST_JIT = shape_op_jit(lambda x, c: lax.broadcast_in_dim(x, c[1], c[2]), BCAST_CASES)


def _bcast_oracle(c, x):
    in_shape, shape, dims = c
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = in_shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


def test_broadcast_in_dim():
    _run_cases(BCAST_JIT, BCAST_CASES, _first_input, _bcast_oracle)


RESHAPE_CASES = [((), (1,)), ((1,), ()), ((), (1, 1, 1)), ((1, 1), ()), ((2, 3), (3, 2)),
                 ((2, 3, 4), (6, 4)), ((6, 4), (2, 3, 4)), ((12,), (3, 4)), ((3, 4), (12,)),
                 ((2, 3, 4), (4, 3, 2)), ((0, 3), (3, 0)), ((0,), (2, 0, 5)), ((1, 5), (5, 1))]
RESHAPE_JIT = shape_op_jit(lambda x, c: lax.reshape(x, c[1]), RESHAPE_CASES)


def test_reshape():
    _run_cases(RESHAPE_JIT, RESHAPE_CASES, _first_input, lambda c, x: x.reshape(c[1]))


TRANSPOSE_CASES = [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 2, 0)),
                   ((2, 3, 4), (0, 2, 1)), ((0, 3), (1, 0)), ((2, 1, 3, 2), (3, 1, 0, 2))]
TRANSPOSE_JIT = shape_op_jit(lambda x, c: lax.transpose(x, c[1]), TRANSPOSE_CASES)


def test_transpose():
    _run_cases(TRANSPOSE_JIT, TRANSPOSE_CASES, _first_input,
               lambda c, x: np.transpose(x, c[1]))


REV_CASES = [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)),
             ((0, 3), (0, 1)), ((1, 4), (0,))]
REV_JIT = shape_op_jit(lambda x, c: lax.rev(x, c[1]), REV_CASES)


def test_rev():
    _run_cases(REV_JIT, REV_CASES, _first_input, lambda c, x: np.flip(x, c[1]))


SLICE_CASES = [((10,), (2,), (8,), (1,)), ((10,), (1,), (10,), (3,)), ((10,), (0,), (10,), (4,)),
               ((5, 6), (1, 0), (4, 6), (2, 5)), ((5, 6), (2, 3), (2, 5), (1, 1)),
               ((3, 4, 5), (0, 1, 2), (3, 4, 5), (2, 2, 2)), ((10,), (9,), (10,), (5,)),
               ((0, 3), (0, 1), (0, 3), (1, 1))]
SLICE_JIT = shape_op_jit(lambda x, c: lax.slice(x, c[1], c[2], c[3]), SLICE_CASES)


def test_slice():
    def oracle(c, x):
        _, start, limit, strides = c
        return x[tuple(slice(*t) for t in zip(start, limit, strides))]
    _run_cases(SLICE_JIT, SLICE_CASES, _first_input, oracle)


CONCAT_CASES = [([(2,), (3,), (1,)], 0), ([(2, 3), (2, 1)], 1), ([(2, 3), (4, 3), (1, 3)], 0),
                ([(2, 0), (2, 3), (2, 0)], 1), ([(1, 2, 3), (1, 2, 2)], 2), ([(0, 3), (0, 3)], 0)]
CONCAT_JIT = shape_op_jit(lambda xs, c: lax.concatenate(xs, c[1]), CONCAT_CASES)


def test_concatenate():
    _run_cases(CONCAT_JIT, CONCAT_CASES,
               lambda c, dt, rng: [sample(dt, rng, s) for s in c[0]],
               lambda c, xs: np.concatenate(xs, axis=c[1]))


def pad_reference(x, value, config):
    """lax.pad written with NumPy: interior dilation, then low/high (negative crops)."""
    x = np.asarray(x)
    for axis, (lo, hi, it) in enumerate(config):
        n = x.shape[axis]
        dilated_len = n + max(n - 1, 0) * it
        shape = list(x.shape)
        shape[axis] = dilated_len
        d = np.full(shape, value, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, dilated_len, it + 1)
        d[tuple(idx)] = x
        parts = []
        if lo > 0:
            s = list(d.shape)
            s[axis] = lo
            parts.append(np.full(s, value, x.dtype))
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(max(-lo, 0), dilated_len - max(-hi, 0))
        parts.append(d[tuple(idx)])
        if hi > 0:
            s = list(d.shape)
            s[axis] = hi
            parts.append(np.full(s, value, x.dtype))
        x = np.concatenate(parts, axis=axis)
    return x


PAD_CASES = [((5,), [(2, 3, 0)]), ((5,), [(0, 0, 2)]), ((5,), [(1, 2, 1)]), ((5,), [(-2, -1, 0)]),
             ((5,), [(-2, 1, 1)]), ((5,), [(-3, -2, 2)]), ((5,), [(-1, -1, 3)]),
             ((3, 4), [(1, -1, 1), (-2, 2, 0)]), ((3, 4), [(0, 0, 0), (0, 0, 0)]),
             ((0, 3), [(1, 1, 2), (1, 0, 0)]), ((2, 3), [(-2, 0, 0), (0, 0, 1)]),
             ((4,), [(-5, 2, 1)]), ((4,), [(1, -7, 1)]), ((1,), [(0, 0, 5)]),
             ((2, 2, 2), [(1, 0, 1), (0, -1, 0), (-1, 1, 2)])]
PAD_JIT = ember.jit(lambda per_dtype: [[lax.pad(x, v, cfg) for x, (_, cfg) in zip(xs, PAD_CASES)]
                                        for xs, v in per_dtype])


def test_pad():
    rng = np.random.default_rng(23)
    per_dtype = [([sample(d, rng, s, specials=[]) for s, _ in PAD_CASES],
                  np.asarray(special_values(d)[1], d)) for d in SHAPE_DTYPES]
    for d, (xs, value), outs in zip(SHAPE_DTYPES, per_dtype, PAD_JIT(per_dtype)):
        for (shape, cfg), x, got in zip(PAD_CASES, xs, outs):
            check(got, pad_reference(x, value, cfg), exact=True,
                  label=f"pad {_id(d)} {shape} {cfg}")


def test_pad_reference_itself():
    """The NumPy reference against a loop over the output positions."""
    x = np.arange(1, 6)
    for lo, hi, it in [(2, 3, 0), (-2, 1, 1), (-3, -2, 2), (1, -7, 1), (-5, 2, 1)]:
        n = 5 + 4 * it
        out = [0] * max(lo + n + hi, 0)
        for j in range(len(out)):
            p = j - lo
            if 0 <= p < n and p % (it + 1) == 0:
                out[j] = x[p // (it + 1)]
        np.testing.assert_array_equal(pad_reference(x, 0, [(lo, hi, it)]), out)


# --- reductions ---------------------------------------------------------------------------

REDUCE_AXES = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]
REDUCE = {"reduce_sum": (np.sum, NUMERIC), "reduce_prod": (np.prod, NUMERIC),
          "reduce_max": (np.max, ALL), "reduce_min": (np.min, ALL),
          "reduce_and": (np.all, INTEGRAL), "reduce_or": (np.any, INTEGRAL)}
REDUCE_JIT = {name: ember.jit(lambda xs, _f=getattr(lax, name): [[_f(x, a) for a in REDUCE_AXES]
                                                                 for x in xs])
              for name in REDUCE}


def _reduce_oracle(name, x, axes):
    dtype = x.dtype
    if name in ("reduce_and", "reduce_or"):
        if dtype == BOOL:
            return (np.all if name == "reduce_and" else np.any)(x, axis=axes)
        ufunc = np.bitwise_and if name == "reduce_and" else np.bitwise_or
        return ufunc.reduce(x, axis=axes)   # the empty reduction is all ones / zero
    if name in ("reduce_max", "reduce_min"):
        is_max = name == "reduce_max"
        # an empty max is the dtype's lowest value (-inf for floats), as in XLA
        if is_float(dtype):
            init = -np.inf if is_max else np.inf
            return (np.max if is_max else np.min)(f64(x), axis=axes, initial=init).astype(dtype)
        if dtype == BOOL:
            return (np.any if is_max else np.all)(x, axis=axes)
        info = np.iinfo(dtype)
        return (np.max if is_max else np.min)(x, axis=axes,
                                              initial=info.min if is_max else info.max)
    fn = np.sum if name == "reduce_sum" else np.prod
    if is_float(dtype):
        return fn(f64(x), axis=axes).astype(dtype)
    return fn(x, axis=axes, dtype=dtype)


def _reduce_input(name, dtype, shape, rng):
    if name == "reduce_prod" and is_float(dtype):
        x = rng.uniform(0.7, 1.4, shape) * rng.choice([-1, 1], shape)
        return x.astype(dtype)
    if name == "reduce_sum" and is_float(dtype):
        return rng.uniform(-4, 4, shape).astype(dtype)
    if name == "reduce_prod" and not is_float(dtype):
        return sample(dtype, rng, shape, specials=[]) if dtype.itemsize == 4 else \
            rng.integers(0, 3, shape).astype(dtype)
    if name in ("reduce_and", "reduce_or") and dtype == BOOL:
        return rng.random(shape) < (0.8 if name == "reduce_and" else 0.2)
    return sample(dtype, rng, shape, specials=None if dtype == BOOL else [3, 1, 0])


def reduce_inputs(name):
    """(label, input) pairs: each dtype of the op at (2, 3, 4), a zero-size input and, for
    max/min, inputs with NaN."""
    dtypes = REDUCE[name][1]
    out = [(_id(d), _reduce_input(name, d, (2, 3, 4), np.random.default_rng(_seed(name, _id(d)))))
           for d in dtypes]
    out.append(("zero-size", np.zeros((2, 0, 3), dtypes[-1 if dtypes[-1] == BOOL else 0])))
    if name in ("reduce_max", "reduce_min"):
        for d in (f32, bf16):
            x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
            x[0, 1, 2] = np.nan
            x[1, 2, 3] = -np.inf
            out.append((f"nan {_id(d)}", x.astype(d)))
    return out


def _check_reduce(name, x, outs, label):
    for axes, got in zip(REDUCE_AXES, outs):
        want = _reduce_oracle(name, x, axes)
        if name in ("reduce_sum", "reduce_prod") and is_float(x.dtype):
            # Reassociated float sums: error bound from the reduced size and the magnitudes.
            n = math.prod(x.shape[a] for a in axes)
            eps = float(ml_dtypes.finfo(x.dtype).eps)
            if name == "reduce_sum":
                bound = n * eps * np.sum(np.abs(f64(x)), axis=axes) + eps * np.abs(f64(want))
            else:
                bound = 2 * n * eps * np.abs(f64(want))
            g = np.asarray(got)
            assert g.dtype == x.dtype and g.shape == want.shape, label
            err = np.abs(f64(g) - _reduce_oracle(name, f64(x), axes))
            assert np.all(err <= bound), (name, label, axes, f64(g), f64(want))
        else:
            check(got, want, exact=True, label=f"{name} {label} over {axes}")


@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(name):
    cases = reduce_inputs(name)
    for (label, x), outs in zip(cases, REDUCE_JIT[name]([x for _, x in cases])):
        _check_reduce(name, x, outs, label)


# --- argmax / argmin ----------------------------------------------------------------------

ARG_JIT = ember.jit(lambda xs: [[lax.argmax(x, 0), lax.argmax(x, 1), lax.argmin(x, 0),
                                lax.argmin(x, 1), lax.argmax(x, 1, np.int8)] for x in xs])


def _arg_input(dtype):
    rng = np.random.default_rng(29)
    if dtype == BOOL:
        x = rng.random((4, 6)) < 0.5
        x[0] = False
        x[1] = True
        return x
    x = sample(dtype, rng, (4, 6), low=0 if not is_float(dtype) else None, high=3,
               specials=[])   # few distinct values: ties everywhere
    info = ml_dtypes.finfo(dtype) if is_float(dtype) else np.iinfo(dtype)
    x[0, :] = x[0, 0]                      # all equal
    x[1, 2] = x[1, 4] = info.max           # tie of maxima
    x[2, 1] = x[2, 5] = info.min           # tie of minima
    x[3, :] = -np.inf if is_float(dtype) else info.min
    return x


_ARG_NAN = np.array([[1, np.nan, 3, np.nan, 0, 5],
                     [np.nan, 1, 2, 3, 4, 5],
                     [1, 2, 3, 4, 5, np.nan],
                     [np.nan] * 6])


def run_arg():
    cases = [(_id(d), _arg_input(d)) for d in ALL]
    cases += [(f"nan {_id(d)}", _ARG_NAN.astype(d)) for d in FLOATS]
    return [(label, x, outs) for (label, x), outs in zip(cases, ARG_JIT([x for _, x in cases]))]


def _arg_check(label, x, got):
    want = [np.argmax(x, 0), np.argmax(x, 1), np.argmin(x, 0), np.argmin(x, 1),
            np.argmax(x, 1)]
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w.astype(np.int8 if i == 4 else np.int32), label=f"{label} #{i}")


def test_argmax_argmin():
    """First index of the extreme (ties go to the lowest index), as in NumPy."""
    for label, x, got in run_arg():
        if not label.startswith("nan"):
            _arg_check(label, x, got)


def test_argmax_argmin_nan():
    """NaN counts as the extreme of both argmax and argmin, the first NaN winning (NumPy)."""
    for label, x, got in run_arg():
        if label.startswith("nan"):
            _arg_check(label, x, got)


# --- dot_general --------------------------------------------------------------------------

DOT_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),              # plain matmul
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),    # batch matmul
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),              # both operands transposed
    ((2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ()))),    # two contracting dims
    ((3, 5, 2), (2, 3, 4), (((0,), (1,)), ((2,), (0,)))),    # batch dim not leading
    ((4,), (4,), (((0,), (0,)), ((), ()))),                  # inner product
    ((3,), (4,), (((), ()), ((), ()))),                      # outer product
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),              # empty contraction
    ((0, 4), (4, 3), (((1,), (0,)), ((), ()))),              # empty result
    ((2, 3, 4), (2, 5, 3), (((1,), (2,)), ((0,), (0,)))),
]
DOT_DTYPES = [f32, f16, bf16, i32, i8, u8]
DOT_JIT = ember.jit(lambda per_dtype: [[lax.dot_general(a, b, dn) for (a, b), (_, _, dn)
                                        in zip(ps, DOT_CASES)] for ps in per_dtype])


def dot_reference(a, b, dn):
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnop")
    la, ra = [None] * a.ndim, [None] * b.ndim
    batch, lfree, rfree = [], [], []
    for i, j in zip(lb, rb):
        la[i] = ra[j] = next(letters)
        batch.append(la[i])
    for i, j in zip(lc, rc):
        la[i] = ra[j] = next(letters)
    for i in range(a.ndim):
        if la[i] is None:
            la[i] = next(letters)
            lfree.append(la[i])
    for j in range(b.ndim):
        if ra[j] is None:
            ra[j] = next(letters)
            rfree.append(ra[j])
    spec = f"{''.join(la)},{''.join(ra)}->{''.join(batch + lfree + rfree)}"
    return np.einsum(spec, a, b)


def _dot_pairs(dtype):
    rng = np.random.default_rng(31)
    pairs = []
    for sa, sb, _ in DOT_CASES:
        if is_float(dtype):
            pairs.append((rng.uniform(-2, 2, sa).astype(dtype),
                          rng.uniform(-2, 2, sb).astype(dtype)))
        else:
            lo, hi = (0, 20) if is_unsigned(dtype) else (-20, 20)
            pairs.append((rng.integers(lo, hi, sa).astype(dtype),
                          rng.integers(lo, hi, sb).astype(dtype)))
    return pairs


def test_dot_general():
    per_dtype = [_dot_pairs(d) for d in DOT_DTYPES]
    for dtype, pairs, outs in zip(DOT_DTYPES, per_dtype, DOT_JIT(per_dtype)):
        for (a, b), (_, _, dn), got in zip(pairs, DOT_CASES, outs):
            label = f"{_id(dtype)} {dn}"
            if not is_float(dtype):   # integer products wrap around
                with np.errstate(over="ignore"):
                    want = dot_reference(a.astype(np.int64), b.astype(np.int64), dn)
                check(got, want.astype(dtype), label=label)
                continue
            want = dot_reference(f64(a), f64(b), dn)
            k = max(math.prod(a.shape[i] for i in dn[0][0]), 1)
            eps = float(ml_dtypes.finfo(dtype).eps)
            mag = dot_reference(np.abs(f64(a)), np.abs(f64(b)), dn)
            g = np.asarray(got)
            assert g.dtype == dtype and g.shape == want.shape, (label, g.shape, want.shape)
            # f16/bf16 accumulate in f32 and round once; f32 accumulates in f32
            bound = k * float(np.finfo(np.float32).eps) * mag + eps * np.abs(want)
            assert np.all(np.abs(f64(g) - want) <= bound), (label, f64(g), want)


# --- constant folding agrees with the compiled ops ----------------------------------------

_FOLD_X = {d: sample(d, np.random.default_rng(41), (4, 8)) for d in (f32, i8, u32, BOOL)}
_FOLD_Y = {d: sample(d, np.random.default_rng(43), (4, 8)) for d in (f32, i8, u32, BOOL)}
_FOLD_OPS = {"numeric": ["add", "sub", "mul", "max", "min"], "integral": ["and", "or", "xor"]}


def _fold_program(dtype, x, y):
    names = (_FOLD_OPS["numeric"] if dtype != BOOL else ["max", "min"]) + \
        (_FOLD_OPS["integral"] if not is_float(dtype) else [])
    out = {n: BINARY[n][0](x, y) for n in names}
    out.update({n: getattr(lax, n)(x, y) for n in COMPARE})
    out["select"] = lax.select(lax.lt(x, y), x, y)
    out["convert"] = [lax.convert_element_type(x, d) for d in (f32, i32, u8, BOOL)
                      if not (is_float(dtype) and d != f32 and d != BOOL)]
    out["transpose"] = lax.transpose(x, (1, 0))
    out["slice"] = lax.slice(x, (1, 0), (4, 8), (2, 3))
    out["rev"] = lax.rev(x, (1,))
    out["bcast"] = lax.broadcast_in_dim(x, (2, 4, 8), (1, 2))
    out["concat"] = lax.concatenate([x, y], 0)
    out["reshape"] = lax.reshape(x, (8, 4))
    if dtype != BOOL:
        out["neg"] = lax.neg(x) if not is_unsigned(dtype) else x
    else:
        out["not"] = lax.bitwise_not(x)
    return out


FOLD_CONST = ember.jit(lambda: [_fold_program(d, _FOLD_X[d], _FOLD_Y[d]) for d in _FOLD_X])
FOLD_ARGS = ember.jit(lambda xs, ys: [_fold_program(x.dtype, x, y) for x, y in zip(xs, ys)])


def test_constant_folding_matches_compiled():
    """Ops on constants are folded by ember-simplify; they agree with the compiled ops."""
    lowered = FOLD_CONST.lower().as_text("optimized")
    assert "ember.add" not in lowered and "ember.transpose" not in lowered
    folded = FOLD_CONST()
    computed = FOLD_ARGS(list(_FOLD_X.values()), list(_FOLD_Y.values()))
    leaves_f, tree_f = ember.tree_util.tree_flatten(folded)
    leaves_c, tree_c = ember.tree_util.tree_flatten(computed)
    assert tree_f == tree_c
    for a, b in zip(leaves_f, leaves_c):
        check(a, np.asarray(b), exact=True)


# --- call (a nested jit) and constant -----------------------------------------------------

_INNER = ember.jit(lambda x, y: (lax.mul(x, y), lax.sub(x, y)))
CALL_JIT = ember.jit(lambda x, y: lax.add(_INNER(x, y)[0], _INNER(y, x)[1]))
_CONST = np.array([[1.5, -2.0, 0.25]], f32)
CONST_JIT = ember.jit(lambda x: lax.mul(x, lax.broadcast_in_dim(_CONST, (2, 3), (0, 1))))


_CONSTS = [sample(d, np.random.default_rng(5), (2, 3)) for d in ALL if d != bf16]
_CONSTS += [np.full((2, 3), -2.5, bf16), np.array(0.75, bf16)]     # splats of bfloat16
CONSTS_JIT = ember.jit(lambda: list(_CONSTS))
_BF16_CONST = np.array([[0.5, -3.0, 3.0]], bf16)
BF16_CONST_JIT = ember.jit(lambda: _BF16_CONST)


def test_constants():
    for want, got in zip(_CONSTS, CONSTS_JIT()):
        check(got, want, exact=True, signed_zeros=True, label=_id(want.dtype))


def test_bfloat16_constant_not_splat():
    check(BF16_CONST_JIT(), _BF16_CONST, exact=True)


def test_call_and_constant():
    x, y = np.array([1.0, -2.0, 3.5], f32), np.array([0.5, 4.0, -1.0], f32)
    assert "ember.call" in CALL_JIT.lower(x, y).as_text("ember")
    check(CALL_JIT(x, y), x * y + (y - x), exact=True)
    z = np.arange(6, dtype=f32).reshape(2, 3)
    check(CONST_JIT(z), z * _CONST, exact=True)
