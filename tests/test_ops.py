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



# --- which ops ran where ------------------------------------------------------------------

# backend -> ember op -> the tests that compiled (and so ran) a program holding it there: the
# claim "every op runs on every backend" is checked by test_every_op_ran, the module's last
# test. Per process: conftest keeps a backend's tests of this module in one xdist worker.
RAN: dict[str, dict[str, set[str]]] = {}
REFUSED: dict[str, dict[str, str]] = {}     # backend -> op -> a refusal of a program with it
# ember-batch replaces these before the "optimized" stage (a vmap's code, batched; a
# collective, a reduction or an iota over the batch axis): they count where traced. Every
# other op counts where it reaches the backend, after ember's passes (a folded one does not).
REPLACED_BY_BATCHING = frozenset({"ember.vmap", "ember.psum", "ember.pmax", "ember.pmin",
                                  "ember.all_gather", "ember.axis_index",
                                  # ember-differentiate's: replaced by the derivative's ops
                                  "ember.jvp", "ember.vjp", "ember.stop_gradient",
                                  "ember.checkpoint_name", "ember.custom_jvp_call",
                                  "ember.custom_vjp_call",
                                  # ember-spmd's: replaced by each device's copy of the code
                                  "ember.spmd"})
# Ops that exist only while ember-differentiate runs (the linear ops it transposes).
INSIDE_A_PASS = frozenset({"ember.checkpoint_linear", "ember.custom_vjp_bwd"})


def _ember_ops(module) -> set[str]:
    from ember._mlir import walk
    return {op.name for op in walk(module.operation) if op.name.startswith("ember.")}


@pytest.fixture(autouse=True)
def record_ops(ember_backend, monkeypatch, request):
    """Record the ember ops of every program this test compiles for ``ember_backend``."""
    from ember.errors import BackendUnsupportedError
    from ember.frontend import api

    compile_ = api.Lowered.compile    # (on cuda-compile: conftest's, compiling for CUDA too)
    test = request.node.originalname

    def recording(self, *args, **kwargs):
        reached = _ember_ops(self._stage("optimized")) | \
            (_ember_ops(self._stage("ember")) & REPLACED_BY_BATCHING)
        try:
            out = compile_(self, *args, **kwargs)
        except (BackendUnsupportedError, pytest.skip.Exception) as e:
            for op in reached:
                REFUSED.setdefault(ember_backend, {})[op] = str(e).splitlines()[0]
            raise
        for op in reached:
            RAN.setdefault(ember_backend, {}).setdefault(op, set()).add(test)
        return out

    monkeypatch.setattr(api.Lowered, "compile", recording)


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


# --- the other ops of the dialect: math, bits, sort and scans, indexing, conv, control flow,
# vmap and its collectives. One program per family, few dtypes: every program is compiled
# per backend (lavapipe compiles slowly).

def _digamma(x):
    from scipy import special
    pole = (x <= 0) & (x == np.floor(x))     # NaN at the non-positive integers, as XLA
    with np.errstate(all="ignore"):
        return np.where(pole, np.nan, special.psi(x))


def _lgamma(x):
    from scipy import special
    with np.errstate(all="ignore"):      # lgamma(-inf) is +inf (C, XLA); SciPy's is -inf
        return np.where(np.isneginf(x), np.inf, special.gammaln(x))


def _scipy(name):
    def oracle(x):
        from scipy import special
        return getattr(special, name)(x)
    return oracle


# name: (float64 oracle, specials, (low, high) of the random inputs, (rtol, atol) for f32)
MATH_UNARY = {
    "asin": (np.arcsin, [1.0, -1.0, 0.5, -0.0, 1.5], (-1, 1), None),
    "acos": (np.arccos, [1.0, -1.0, 0.5, 0.0, -1.5], (-1, 1), None),
    "atan": (np.arctan, [np.inf, -np.inf, 1e-3, -0.0, np.nan], (-20, 20), None),
    "sinh": (np.sinh, [0.0, -0.0, 1e-3, -80.0, np.inf], (-10, 10), None),
    "cosh": (np.cosh, [0.0, 1e-3, -80.0, np.inf, -np.inf], (-10, 10), None),
    "asinh": (np.arcsinh, [0.0, -0.0, 1e-3, -1e4, np.inf], (-50, 50), None),
    "acosh": (np.arccosh, [1.0, 0.5, 1e4, np.inf, 1.001], (1, 50), None),
    "atanh": (np.arctanh, [1.0, -1.0, 0.0, 0.999, 2.0], (-0.99, 0.99), (1e-5, 1e-5)),
    "cbrt": (np.cbrt, [-27.0, 8.0, -0.0, np.inf, -1e-3], (-100, 100), None),
    "exp2": (np.exp2, [0.0, -1.0, 10.0, -np.inf, np.inf], (-20, 20), None),
    "log2": (np.log2, [1.0, 0.0, -1.0, 1024.0, np.inf], (0, 1000), None),
    "erfc": (_scipy("erfc"), [0.0, 3.0, -3.0, np.inf, -np.inf], (-4, 4), (1e-5, 1e-6)),
    "erf_inv": (_scipy("erfinv"), [1.0, -1.0, 0.0, 1.5, -0.999], (-0.99, 0.99), (1e-5, 1e-5)),
    "lgamma": (_lgamma, [1.0, 2.0, 0.0, -1.0, -2.5, -np.inf], (-10, 20), (1e-5, 1e-5)),
    "digamma": (_digamma, [1.0, 0.0, -1.0, -2.5, 0.5], (-10, 20), (1e-5, 1e-5)),
    "signbit": (np.signbit, [-0.0, 0.0, -np.inf, np.inf, np.nan], (-10, 10), None),
}
MATH_DTYPES = [f32, f16, bf16]
MATH_N = 24
MATH_JIT = ember.jit(lambda per_dtype: [{n: getattr(lax, n)(x) for n, x in xs.items()}
                                        for xs in per_dtype])


def _math_inputs(dtype):
    out = {}
    for name, (_, specials, (lo, hi), _) in MATH_UNARY.items():
        rng = np.random.default_rng(_seed("math", name, _id(dtype)))
        x = rng.uniform(lo, hi, MATH_N)
        if name in ("lgamma", "digamma"):    # keep clear of the poles, where f16 rounds onto
            x = np.where(np.abs(x - np.round(x)) < 0.05, x + 0.25, x)
        with np.errstate(over="ignore"):
            out[name] = embed(np.array(specials).astype(dtype), x.astype(dtype))
    return out


def test_math_unary():
    """The ops of ember/dialects/math.py, against NumPy and SciPy in float64."""
    per_dtype = [_math_inputs(d) for d in MATH_DTYPES]
    for d, xs, got in zip(MATH_DTYPES, per_dtype, MATH_JIT(per_dtype)):
        for name, x in xs.items():
            fn, _, _, tol = MATH_UNARY[name]
            label = f"{name} {_id(d)}"
            if name == "signbit":
                check(got[name], np.signbit(f64(x)), label=label)
                continue
            want = rounded(fn, x)
            check(got[name], want, tol=tol if d == f32 and tol else None, label=label)
            w = f64(want)   # infinities and zeros exactly, with their signs
            exact = np.isinf(w) | (w == 0) & (f64(x) == 0)
            check(np.asarray(got[name])[exact], want[exact], exact=True, signed_zeros=True,
                  label=f"{label} (zeros, infinities)")


MATH_BINARY_DTYPES = [f32, f16, bf16]
MATH_BINARY_JIT = per_dtype(lambda x, y: {"nextafter": lax.nextafter(x, y),
                                          "copysign": lax.copysign(x, y)})


def test_nextafter_copysign():
    """Exact: NumPy (ml_dtypes for bfloat16) on the dtype itself."""
    rng = np.random.default_rng(47)
    sp = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, 1e-3]
    xs, ys = (a.ravel() for a in np.meshgrid(sp, sp))
    args = [(embed(xs, sample(d, rng, (96,), specials=[])),
             embed(ys, sample(d, rng, (96,), specials=[]))) for d in MATH_BINARY_DTYPES]
    for d, (x, y), got in zip(MATH_BINARY_DTYPES, args, MATH_BINARY_JIT(args)):
        check(got["copysign"], np.copysign(x, y), exact=True, signed_zeros=True,
              label=f"copysign {_id(d)}")
        # Equal arguments give y, as C and JAX (NumPy's float16 gives x: -0.0 vs 0.0); a
        # step off zero is the least subnormal, made from the bits: never flushed.
        want = np.where(x == y, y, np.nextafter(x, y))
        check(got["nextafter"], want, exact=True, signed_zeros=True,
              label=f"nextafter {_id(d)}")


# --- bits ---

BITS_DTYPES = [i8, i32, u8, u32]


def _bits_program(x, y):
    return {"shl": lax.shift_left(x, y), "shrl": lax.shift_right_logical(x, y),
            "shra": lax.shift_right_arithmetic(x, y), "popcnt": lax.population_count(x),
            "clz": lax.clz(x)}


BITS_JIT = per_dtype(_bits_program)
BITCASTS = [(f32, i32), (u32, f32), (i8, u8), (f16, np.dtype(np.int16)),
            (bf16, np.dtype(np.uint16))]
BITCAST_JIT = ember.jit(lambda xs: [lax.bitcast_convert_type(x, dst)
                                    for x, (_, dst) in zip(xs, BITCASTS)])


def _bits_oracle(x, y, dtype):
    bits = dtype.itemsize * 8
    mask = (1 << bits) - 1
    out = {k: [] for k in ("shl", "shrl", "shra", "popcnt", "clz")}
    for a, s in zip(x.ravel().tolist(), y.ravel().tolist()):
        u, s = a & mask, s & mask          # the bits, and the amount read as unsigned
        out["shl"].append((u << s) & mask if s < bits else 0)
        out["shrl"].append(u >> s if s < bits else 0)
        signed = u - (1 << bits) if u >> (bits - 1) else u
        out["shra"].append((signed >> min(s, bits - 1)) & mask)
        out["popcnt"].append(bin(u).count("1"))
        out["clz"].append(bits - u.bit_length())
    return {k: np.array(v, np.uint64).astype(dtype.str.replace("i", "u")).view(dtype)
            .reshape(x.shape) for k, v in out.items()}


def test_shifts_popcount_clz():
    """Shift amounts at and past the bit width (and negative ones, read as unsigned) are
    defined as lax's: 0, or the sign fill for the arithmetic right shift."""
    args = []
    for d in BITS_DTYPES:
        rng = np.random.default_rng(_seed("bits", _id(d)))
        bits = d.itemsize * 8
        x = sample(d, rng, (64,))
        y = rng.integers(0, bits, 64).astype(d)
        amounts = [0, 1, bits - 1, bits, bits + 1, 3] + ([-1, -bits] if d.kind == "i" else [])
        args.append((x, embed(np.array(amounts).astype(d), y)))
    for d, (x, y), got in zip(BITS_DTYPES, args, BITS_JIT(args)):
        want = _bits_oracle(x.astype(np.int64), y.astype(np.int64), d)
        for k in want:
            check(got[k], want[k], label=f"{k} {_id(d)}")


def test_bitcast_convert_type():
    rng = np.random.default_rng(53)
    xs = []
    for src, _ in BITCASTS:
        if is_float(src):
            xs.append(sample(src, rng, (4, 8)))
        else:   # no NaN bit patterns among the floats these become (NaN payloads may change)
            xs.append(sample(src, rng, (4, 8), low=0 if src == u32 else None,
                             high=0x7F000000 if src == u32 else None,
                             specials=[0, 1, 0x3F800000, 0x80000000, 0x7F7FFFFF]
                             if src == u32 else None))
    for (src, dst), x, got in zip(BITCASTS, xs, BITCAST_JIT(xs)):
        got = np.asarray(got)
        assert got.dtype == dst and got.shape == x.shape, (src, dst, got.dtype)
        width = np.dtype(f"u{dst.itemsize}")
        np.testing.assert_array_equal(got.view(width), x.view(width), err_msg=f"{src}->{dst}")


# --- sort and cumulative ops ---

SORT_JIT = ember.jit(lambda x, k1, k2, v: (
    lax.sort(x, dimension=1), lax.sort(x, dimension=0),
    lax.sort((k1, k2, v), dimension=0, num_keys=2)))


def _run_sort():
    rng = np.random.default_rng(59)
    x = embed([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -0.0, 0.0, np.nan, 1.0],
              rng.integers(-3, 4, (6, 10)).astype(f32))
    k1 = rng.integers(0, 3, 12).astype(i32)
    k2 = embed([np.nan, 1.0, 1.0], rng.integers(-2, 2, 12).astype(f32))
    v = np.arange(12, dtype=i32)
    return x, k1, k2, v, SORT_JIT(x, k1, k2, v)


def test_sort():
    """Ascending, NaN last; several keys lexicographic, the values permuted along, stable."""
    x, k1, k2, v, (rows, cols, (s1, s2, sv)) = _run_sort()
    check(rows, np.sort(x, axis=1, kind="stable"), exact=True)
    check(cols, np.sort(x, axis=0, kind="stable"), exact=True)
    order = np.lexsort((k2, k1))      # stable: ties keep their order
    check(s1, k1[order])
    check(s2, k2[order], exact=True)
    check(sv, v[order])


def test_sort_keeps_order_of_equal_zeros():
    x, _, _, _, (rows, cols, _) = _run_sort()
    check(rows, np.sort(x, axis=1, kind="stable"), exact=True, signed_zeros=True)
    check(cols, np.sort(x, axis=0, kind="stable"), exact=True, signed_zeros=True)


CUM_OPS = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
           "cummin": np.minimum}
CUM_DTYPES = [f32, i32, bf16]
CUM_JIT = ember.jit(lambda xs: [{f"{n} {a} {r}": getattr(lax, n)(x, a, r) for n in CUM_OPS
                                 for a in (0, 1) for r in (False, True)} for x in xs])


def _cumulative(name, x, axis, reverse):
    w = np.flip(x, axis) if reverse else x
    with np.errstate(over="ignore"):
        out = CUM_OPS[name].accumulate(w, axis=axis)
    return np.flip(out, axis) if reverse else out


def test_cumulative():
    """cumsum/cumprod/cummax/cummin along each axis, forward and reversed; float sums and
    products accumulate in float32 (bfloat16's too) and round once, NaN propagates."""
    rng = np.random.default_rng(61)
    xs = [embed([np.nan], rng.uniform(0.5, 1.5, (3, 7)).astype(f32) *
                rng.choice([-1, 1], (3, 7)).astype(f32)),
          rng.integers(-1000, 1000, (3, 7)).astype(i32),
          rng.uniform(0.5, 1.5, (3, 7)).astype(bf16)]
    for x, got in zip(xs, CUM_JIT(xs)):
        for key, g in got.items():
            name, axis, reverse = key.split()
            axis, reverse = int(axis), reverse == "True"
            label = f"{key} {_id(x.dtype)}"
            if not is_float(x.dtype):
                with np.errstate(over="ignore"):
                    check(g, _cumulative(name, x, axis, reverse).astype(i32), label=label)
            elif name in ("cummax", "cummin"):
                check(g, _cumulative(name, x, axis, reverse), exact=True, label=label)
            else:
                check(g, _cumulative(name, f64(x), axis, reverse).astype(x.dtype),
                      tol=(1e-5, 1e-6) if x.dtype == f32 else None, label=label)


# --- gather, scatter, dynamic slices ---

def _gather_ref(x, idx, axes):
    """result[b..., r...] = x at idx[b..., j] along axes[j] (clamped), r along the others."""
    rest = [d for d in range(x.ndim) if d not in axes]
    out = np.empty(idx.shape[:-1] + tuple(x.shape[d] for d in rest), x.dtype)
    for b in np.ndindex(*idx.shape[:-1]):
        where = [slice(None)] * x.ndim
        for j, a in enumerate(axes):
            where[a] = int(np.clip(idx[b + (j,)], 0, x.shape[a] - 1))
        out[b] = x[tuple(where)]
    return out


def _scatter_ref(x, idx, upd, axes, kind):
    out = x.copy()
    rest = [d for d in range(x.ndim) if d not in axes]
    combine = {"set": lambda a, b: b, "add": np.add, "mul": np.multiply, "min": np.minimum,
               "max": np.maximum}[kind]
    for b in np.ndindex(*idx.shape[:-1]):
        pos = [int(i) for i in idx[b]]
        if any(p < 0 or p >= x.shape[a] for p, a in zip(pos, axes)):
            continue      # out of bounds: dropped
        where = [slice(None)] * x.ndim
        for p, a in zip(pos, axes):
            where[a] = p
        w = tuple(where)
        with np.errstate(over="ignore"):
            out[w] = combine(out[w], upd[b].reshape(tuple(x.shape[d] for d in rest)))
    return out


SCATTER_KINDS = ("set", "add", "mul", "min", "max")
INDEXING_DTYPES = [f32, i32]
INDEXING_JIT = ember.jit(lambda xs, i1, i2, u1, starts: [{
    "gather0": lax.gather(x, i1, (0,)), "gather01": lax.gather(x, i2, (0, 1)),
    **{f"scatter {k}": lax.scatter(x, i1 if k != "set" else i1[:3], u if k != "set" else u[:3],
                                   (0,), k) for k in SCATTER_KINDS},
    "dynamic_slice": [lax.dynamic_slice(x, s, (2, 3)) for s in starts],
    "dynamic_update_slice": [lax.dynamic_update_slice(x, u[:2, :3], s) for s in starts],
} for x, u in zip(xs, u1)])


def test_gather_scatter_dynamic_slices():
    """Out-of-bounds gather indices and dynamic slice starts clamp; out-of-bounds scatter
    updates are dropped, duplicate ones all apply (as JAX's)."""
    rng = np.random.default_rng(67)
    xs = [rng.uniform(-4, 4, (5, 6)).astype(f32), rng.integers(-50, 50, (5, 6)).astype(i32)]
    i1 = np.array([[1], [3], [-1], [4], [7], [1], [3]], i32)   # set: the first 3, distinct
    i2 = np.array([[[0, 5], [4, 0]], [[2, 2], [9, -3]]], i32)
    u1 = [rng.uniform(-2, 2, (7, 6)).astype(f32), rng.integers(-5, 5, (7, 6)).astype(i32)]
    starts = [tuple(np.array(v, i32) for v in s) for s in ((1, 2), (4, 5), (-2, 1))]
    outs = INDEXING_JIT(xs, i1, i2, u1, starts)
    for x, u, got in zip(xs, u1, outs):
        label = _id(x.dtype)
        tol = (1e-6, 1e-6)
        check(got["gather0"], _gather_ref(x, i1, (0,)), exact=True, label=f"gather {label}")
        check(got["gather01"], _gather_ref(x, i2, (0, 1)), exact=True, label=f"gather {label}")
        for k in SCATTER_KINDS:
            n = 3 if k == "set" else len(i1)
            want = _scatter_ref(x, i1[:n], u[:n], (0,), k)
            check(got[f"scatter {k}"], want, tol=tol, label=f"scatter {k} {label}")
        for s, ds, dus in zip(starts, got["dynamic_slice"], got["dynamic_update_slice"]):
            # negative starts count from the end, then clamp (JAX's allow_negative_indices)
            r, c = (int(np.clip(int(v) + n * (v < 0), 0, n - m))
                    for v, n, m in zip(s, x.shape, (2, 3)))
            check(ds, x[r:r + 2, c:c + 3], exact=True, label=f"dynamic_slice {s} {label}")
            want = x.copy()
            want[r:r + 2, c:c + 3] = u[:2, :3]
            check(dus, want, exact=True, label=f"dynamic_update_slice {s} {label}")


# --- conv ---

CONV_CASES = [  # lhs NHWC, kernel HWIO, strides, rhs dilation, feature groups
    ((2, 6, 5, 4), (3, 2, 4, 3), (1, 1), (1, 1), 1),
    ((1, 7, 7, 4), (2, 3, 2, 6), (2, 1), (2, 1), 2),
    ((1, 9, 1), (3, 1, 2), (3,), (1,), 1),
]
CONV_DTYPES = [f32, i32, f16]
CONV_JIT = ember.jit(lambda per_dtype: [[
    lax.conv_general_dilated(x, w, s, "VALID", rhs_dilation=dil, feature_group_count=g,
                             dimension_numbers=("NWC", "WIO", "NWC") if x.ndim == 3 else
                             ("NHWC", "HWIO", "NHWC"))
    for (x, w), (_, _, s, dil, g) in zip(pairs, CONV_CASES)] for pairs in per_dtype])


def _conv_ref(x, w, strides, dilation, groups):
    """Channels-last cross-correlation, VALID, in float64 (or int64), written out."""
    nd = x.ndim - 2
    span = [(k - 1) * d + 1 for k, d in zip(w.shape[:nd], dilation)]
    out_sp = [(n - s) // st + 1 for n, s, st in zip(x.shape[1:-1], span, strides)]
    i, o = w.shape[-2], w.shape[-1]
    og = o // groups
    out = np.zeros((x.shape[0], *out_sp, o), x.dtype)
    for pos in np.ndindex(*out_sp):
        for k in np.ndindex(*w.shape[:nd]):
            at = tuple(p * st + kk * d for p, st, kk, d in zip(pos, strides, k, dilation))
            patch = x[(slice(None), *at)]             # (N, C)
            for g in range(groups):
                out[(slice(None), *pos, slice(g * og, (g + 1) * og))] += \
                    patch[:, g * i:(g + 1) * i] @ w[k][:, g * og:(g + 1) * og]
    return out


def test_convolution():
    rng = np.random.default_rng(71)
    per_dtype = [[(rng.integers(-3, 4, xs).astype(d), rng.integers(-3, 4, ws).astype(d))
                  for xs, ws, *_ in CONV_CASES] for d in CONV_DTYPES]
    for d, pairs, outs in zip(CONV_DTYPES, per_dtype, CONV_JIT(per_dtype)):
        for (x, w), (_, _, s, dil, g), got in zip(pairs, CONV_CASES, outs):
            want = _conv_ref(x.astype(np.int64), w.astype(np.int64), s, dil, g)
            # small integers: every sum is exact in f16 and f32 too
            check(got, want.astype(d), exact=True, label=f"conv {_id(d)} {s} {dil} {g}")


# --- control flow ---

def _control_flow(x, n, pred):
    # cond: a scalar predicate picks a branch; while: double until past 100, counting;
    # for: n steps of an index-dependent update; scan: running sum and products
    picked = lax.cond(pred, lambda: x * 2.0, lambda: x - 1.0)
    doubled, steps = lax.while_loop(lambda c: c[0] < 100.0,
                                    lambda c: (c[0] * 2.0, c[1] + 1),
                                    (x[0] + 1.0, np.int32(0)))
    looped = lax.fori_loop(0, n, lambda i, c: c * 0.5 + lax.convert_element_type(i, f32), x)
    total, partial = lax.scan(lambda c, v: (c + v, c * v), np.float32(1.0), x)
    # a vmapped while whose condition differs per example: each loops on its own (ember.map)
    per_lane = ember.vmap(lambda v: lax.while_loop(
        lambda c: c[0] < 50.0, lambda c: (c[0] * 3.0, c[1] + 1), (lax.abs(v) + 1.0,
                                                                   np.int32(0)))[1])(x)
    return picked, doubled, steps, looped, total, partial, per_lane


CONTROL_FLOW_JIT = ember.jit(_control_flow)


def test_control_flow():
    x = np.array([1.5, -2.0, 7.0, 0.25, 30.0, 60.0], f32)
    for n, pred in ((3, True), (0, False)):
        picked, doubled, steps, looped, total, partial, per_lane = CONTROL_FLOW_JIT(
            x, np.int32(n), np.bool_(pred))
        check(picked, x * 2 if pred else x - 1, exact=True)
        v, k = float(x[0]) + 1, 0
        while v < 100:
            v, k = v * 2, k + 1
        check(doubled, np.float32(v), exact=True)
        check(steps, np.int32(k))
        want = x.copy()
        for i in range(n):
            want = want * np.float32(0.5) + np.float32(i)
        check(looped, want, exact=True)
        c, ys = np.float32(1.0), []
        for v in x:
            ys.append(c * v)
            c = c + v
        check(total, c, exact=True)
        check(partial, np.array(ys, f32), exact=True)
        counts = []
        for v in x.tolist():
            v, k = abs(v) + 1, 0
            while v < 50:
                v, k = v * 3, k + 1
            counts.append(k)
        check(per_lane, np.array(counts, i32))


# --- vmap and its collectives ---

def _collectives(row):
    i = lax.axis_index("i")
    return (lax.psum(row, "i"), lax.pmax(row, "i"), lax.pmin(row, "i"),
            lax.all_gather(row, "i"), row * lax.convert_element_type(i, row.dtype))


COLLECTIVES_JIT = ember.jit(ember.vmap(_collectives, axis_name="i"))


@pytest.mark.parametrize("dtype", [f32, i32], ids=_id)
def test_vmap_collectives(dtype):
    x = np.random.default_rng(73).integers(-20, 20, (4, 5)).astype(dtype)
    s, mx, mn, gathered, scaled = COLLECTIVES_JIT(x)
    n = x.shape[0]
    check(s, np.broadcast_to(x.sum(0, dtype), x.shape), exact=True)
    check(mx, np.broadcast_to(x.max(0), x.shape), exact=True)
    check(mn, np.broadcast_to(x.min(0), x.shape), exact=True)
    check(gathered, np.broadcast_to(x, (n, *x.shape)), exact=True)
    check(scaled, x * np.arange(n, dtype=dtype)[:, None], exact=True)


# --- several devices: ember-spmd's ops ---

_MULTI_DEVICE = ("ember.spmd", "ember.transfer")


def test_collectives_across_devices(ember_backend, config_value):
    """``psum`` and ``all_gather`` over two devices (``ember.transfer`` between them)."""
    if ember_backend != "cpu":
        why = (f"programs over several devices run on the CPU's devices here "
               f"(EMBER_CPU_DEVICES); {ember_backend} has one device or none on this machine")
        for op in _MULTI_DEVICE:
            REFUSED.setdefault(ember_backend, {})[op] = why
        pytest.skip(why)
    config_value("cpu_devices", 2)
    x = np.random.default_rng(74).integers(-20, 20, (2, 5)).astype(f32)
    s, g = ember.pmap(lambda r: (lax.psum(r, "i"), lax.all_gather(r, "i")), "i")(x)
    check(s, np.broadcast_to(x.sum(0), x.shape), exact=True)
    check(g, np.broadcast_to(x, (2, *x.shape)), exact=True)


# --- differentiation: ember-differentiate's ops, replaced before the backend sees them ---

def _log1pexp_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    return _log1pexp(x), t * lax.logistic(x)


_log1pexp = ember.custom_jvp(lambda x: lax.log1p(lax.exp(x)))
_log1pexp.defjvp(_log1pexp_rule)
_clip_grad = ember.custom_vjp(lambda x: x)
_clip_grad.defvjp(lambda x: (x, None), lambda _, g: (lax.clamp(-1.0, g, 1.0),))


def _differentiated(x):
    def loss(x):
        block = ember.checkpoint(lambda h: ember.ad_checkpoint.checkpoint_name(
            lax.tanh(h), "h") * 3.0)
        y = block(x) + _log1pexp(x) + _clip_grad(x * 2.0) + lax.stop_gradient(x) * x
        return lax.reduce_sum(y, (0,))
    g = ember.grad(loss)(x)
    _, t = ember.jvp(lambda x: lax.sin(x) * x, (x,), (lax.full_like(x, 1.0),))
    return g, t


DIFF_JIT = ember.jit(_differentiated)


def test_differentiation_ops():
    jax = pytest.importorskip("jax", reason="JAX is the oracle of the derivatives")
    jnp = jax.numpy
    x = np.linspace(-2, 2, 7, dtype=f32)
    g, t = DIFF_JIT(x)
    want_g = jax.grad(lambda x: jnp.sum(3 * jnp.tanh(x) + jnp.log1p(jnp.exp(x))
                                        + x * jax.lax.stop_gradient(x)))(x) + 2.0
    want_t = jnp.cos(x) * x + jnp.sin(x)      # (the custom_vjp's clamped cotangent: 2)
    check(g, np.asarray(want_g), tol=(1e-5, 1e-6))
    check(t, np.asarray(want_t), tol=(1e-5, 1e-6))


# --- complex numbers (tests/test_complex.py has the rest, on the CPU) ---

def _complex_ops(x, y):
    return (lax.real(x), lax.imag(x), lax.complex(lax.real(y), lax.imag(x)), lax.conj(x),
            lax.add(x, y), lax.mul(x, y), lax.div(x, y), lax.abs(x), lax.eq(x, y),
            lax.exp(x), lax.sqrt(x), lax.log(x))


COMPLEX_JIT = ember.jit(_complex_ops)


def test_complex_ops():
    rng = np.random.default_rng(_seed("complex"))
    x, y = ((rng.uniform(-3, 3, SHAPE) + 1j * rng.uniform(-3, 3, SHAPE)).astype(np.complex64)
            for _ in range(2))
    y[0, :3] = x[0, :3]
    want = (x.real, x.imag, y.real + 1j * x.imag, np.conj(x), x + y, x * y, x / y, np.abs(x),
            x == y, np.exp(x), np.sqrt(x), np.log(x))
    for i, (g, w) in enumerate(zip(COMPLEX_JIT(x, y), want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=f"result {i}")


# --- every op ran on this backend: keep this test last in the module ---------------------

def test_every_op_ran(ember_backend, request, deselected_tests):
    """Every op of the dialect was in a program that a test of this module compiled and ran
    on this backend (recorded by the record_ops fixture); needs the whole module to have run
    here, before this test."""
    from ember.dialects import OPS

    here = [i for i in request.session.items if i.path == request.node.path and
            i.callspec.params.get("ember_backend") == ember_backend]
    tests = {name for name, fn in globals().items() if name.startswith("test_") and
             callable(fn) and name != "test_every_op_ran"}
    missing = tests - {i.originalname for i in here}
    deselected = [n for n in deselected_tests
                  if n.startswith(request.node.nodeid.split("::")[0] + "::") and
                  (f"[{ember_backend}]" in n or f"[{ember_backend}-" in n)]
    if missing or deselected:
        pytest.skip(f"the op coverage is checked when every test of the module runs on "
                    f"{ember_backend}; not selected: {sorted(missing) or deselected[:3]}")
    assert here[-1] is request.node, "test_every_op_ran must run after the module's tests"
    ran = RAN.get(ember_backend, {})
    refused = REFUSED.get(ember_backend, {})
    gaps = sorted(set(OPS) - set(ran) - INSIDE_A_PASS)
    unrun = [op for op in gaps if op not in refused]
    assert not unrun, f"{len(unrun)} ember ops are in no program that ran on " \
        f"{ember_backend}: {unrun}"
    if gaps:    # the backend's legality refused every program with them: a skip, with why
        pytest.skip(f"{len(gaps)} ember ops refused on {ember_backend}: " +
                    "; ".join(f"{op}: {refused[op]}" for op in gaps))
