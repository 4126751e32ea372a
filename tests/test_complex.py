"""complex64 and complex128 on the CPU: dtypes and promotion, creation, elementwise
functions, reductions and products, under jit, eagerly and under vmap.

Oracles: NumPy for values (complex128 NumPy, rounded, for complex64 results), jax.numpy for
dtypes and promotion (with x64 on for complex128, as ember's). Programs are shared: one jitted
program computes every elementwise function at once, one every reduction, one every product,
per dtype, so that the module compiles about twenty programs.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import count_compiles, needs_vulkan

import ember
import ember.lax as lax
import ember.numpy as enp
from ember.errors import BackendUnsupportedError, TracingError

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
EPS = {C64: float(np.finfo(np.float32).eps), C128: float(np.finfo(np.float64).eps)}
INF, NAN = np.inf, np.nan


def _random(rng, shape, lo=-1.0, hi=1.0):
    """Complex numbers of magnitude within [0.1, 10]-ish in both parts' signs."""
    mag = np.exp(rng.uniform(np.log(0.15), np.log(6.0), shape))
    ang = rng.uniform(-np.pi, np.pi, shape)
    return mag * np.exp(1j * ang)


def _close(got, want, dtype, ulps=16, what=""):
    """``got`` (of ``dtype``'s kind) against the complex128/float64 reference ``want``:
    within ``ulps`` of |want| (per element), NaNs where NaNs are."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    eps = EPS[np.dtype(dtype)]
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    np.testing.assert_array_equal(nan_g, nan_w, err_msg=f"{what}: NaNs differ")
    ok = ~nan_w
    both_inf = np.isinf(w) & (g == w)
    err = np.abs(g - w)
    bad = ok & ~both_inf & (err > ulps * eps * np.maximum(np.abs(w), 1e-30))
    assert not bad.any(), (what, np.asarray(np.nonzero(bad))[:, :4],
                           g[bad][:4], w[bad][:4])


def _same_bits(got, want, what=""):
    """Equal values with the signs of zeros, NaN where NaN (NumPy's special values)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    for part in ("real", "imag") if got.dtype.kind == "c" else ("real",):
        g, w = getattr(got, part), getattr(want, part)
        same = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
        assert same.all(), (what, part, got[~same][:6], want[~same][:6])


# --- dtypes and promotion --------------------------------------------------------------------

_LATTICE_TYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "bfloat16",
                  "float32", "float64", "complex64", "complex128", int, float, complex]


def test_dtypes_promotion_as_jax(both_x64):
    assert enp.complex64 == np.complex64 and enp.complex128 == np.complex128
    for a in _LATTICE_TYPES:
        for b in _LATTICE_TYPES:
            want = jnp.result_type(a, b)
            assert enp.result_type(a, b) == want, (a, b)
            if a not in (int, float, complex) and b not in (int, float, complex):
                assert enp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)
    x = enp.ones(3, enp.float32)
    for scalar in (1j, 2 + 0j):
        got, want = x + scalar, jnp.ones(3, jnp.float32) + scalar
        assert got.dtype == want.dtype == np.complex64 and not got.weak_type
    weak = enp.asarray(1j)
    assert weak.dtype == jnp.asarray(1j).dtype and weak.weak_type
    assert (enp.ones(2, enp.float16) * 1j).dtype == (jnp.ones(2, jnp.float16) * 1j).dtype


def test_dtypes_narrowed_without_x64_and_inspected(monkeypatch):
    # (ember warns once per process and dtype: another test may have been warned first)
    monkeypatch.setattr(ember.dtypes, "_warned_x64", set())
    with pytest.warns(UserWarning, match="complex128 values are computed as complex64"):
        assert enp.asarray(np.zeros(2, np.complex128)).dtype == np.complex64
    assert enp.result_type(enp.float64, 1j) == jnp.result_type(jnp.float64, 1j) == C64
    for dt in (C64, C128):
        info, want = enp.finfo(dt), np.finfo(dt)
        assert (info.dtype, info.eps, info.max, info.tiny) == \
            (want.dtype, want.eps, want.max, want.tiny)
        assert enp.isdtype(dt, "complex floating") and enp.isdtype(dt, "numeric")
        assert not enp.isdtype(dt, "real floating")
        assert enp.issubdtype(dt, enp.complexfloating) and enp.issubdtype(dt, enp.inexact)
    x = enp.asarray(np.array([1 + 2j], np.complex64))
    assert enp.iscomplexobj(x) and not enp.isrealobj(x) and enp.iscomplexobj(1j)
    assert not enp.iscomplexobj(enp.ones(2))
    info = enp.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == np.complex64
    assert list(info.dtypes(kind="complex floating")) == ["complex64"]


# --- creation --------------------------------------------------------------------------------

def test_creation_eager():
    host = np.array([[1 + 2j, -3.5j], [np.inf + 0j, complex(-0.0, np.nan)]], np.complex64)
    _same_bits(enp.asarray(host), host)
    _same_bits(enp.array([1, 2j, 3.5]), np.array([1, 2j, 3.5], np.complex64))
    assert enp.asarray([1, 2j]).dtype == jnp.asarray([1, 2j]).dtype
    _same_bits(enp.zeros((2, 2), enp.complex64), np.zeros((2, 2), np.complex64))
    _same_bits(enp.ones(3, enp.complex64), np.ones(3, np.complex64))
    _same_bits(enp.full(3, 1 - 2j), np.full(3, 1 - 2j, np.complex64))
    _same_bits(enp.empty(2, enp.complex64), np.zeros(2, np.complex64))
    _same_bits(enp.eye(3, k=1, dtype=enp.complex64), np.eye(3, k=1, dtype=np.complex64))
    _close(enp.linspace(1j, 2 - 1j, 5), np.linspace(1j, 2 - 1j, 5), C64, what="linspace")
    assert complex(enp.asarray(np.complex64(3 - 4j))) == 3 - 4j
    assert "complex64" in repr(enp.asarray(host))


def test_creation_and_conversion_jit():
    def make(re, im):
        z = lax.complex(re, im)
        return {"complex": z, "zeros": enp.zeros(3, enp.complex64) + z[:3],
                "eye": enp.eye(2, dtype=enp.complex64) * z[0],
                "full": enp.full(2, 1 + 1j) * z[1], "linspace": enp.linspace(z[0], z[1], 4),
                "to_c": re.astype(enp.complex64), "to_f": z.astype(enp.float32),
                "to_i": z.astype(enp.int32), "to_b": z.astype(bool),
                "weak": z + 1j, "weak_f": z * 2.0}

    re = np.array([1.5, -2.0, 0.0, 3.25, -0.0], np.float32)
    im = np.array([0.5, 0.0, -1.0, 2.0, 0.0], np.float32)
    z = re.astype(np.complex64)     # (re + 1j * im would lose the sign of -0.0 + 0j)
    z.imag = im
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        out = ember.jit(make)(re, im)
    _same_bits(out["complex"], z.astype(np.complex64))
    _same_bits(out["zeros"], (np.zeros(3) + z[:3]).astype(np.complex64))
    _same_bits(out["eye"], (np.eye(2) * z[0]).astype(np.complex64))
    _same_bits(out["full"], (np.full(2, 1 + 1j) * z[1]).astype(np.complex64))
    _close(out["linspace"], np.linspace(z[0], z[1], 4), C64)
    _same_bits(out["to_c"], re.astype(np.complex64))
    _same_bits(out["to_f"], re)
    _same_bits(out["to_i"], re.astype(np.int32))
    _same_bits(out["to_b"], z != 0)
    _same_bits(out["weak"], (z + 1j).astype(np.complex64))
    _same_bits(out["weak_f"], (z * 2).astype(np.complex64))
    with pytest.warns(np.exceptions.ComplexWarning):
        assert enp.asarray(z.astype(np.complex64)).astype(np.float32).dtype == np.float32


# --- elementwise -----------------------------------------------------------------------------

# (ember function, NumPy reference on complex128): every elementwise function at once.
UNARY = {
    "negative": (enp.negative, np.negative), "conj": (enp.conj, np.conj),
    "real": (enp.real, np.real), "imag": (enp.imag, np.imag), "abs": (enp.abs, np.abs),
    "angle": (enp.angle, np.angle), "exp": (enp.exp, np.exp), "log": (enp.log, np.log),
    "log1p": (enp.log1p, np.log1p), "expm1": (enp.expm1, np.expm1),
    "sqrt": (enp.sqrt, np.sqrt), "square": (enp.square, np.square),
    "reciprocal": (enp.reciprocal, np.reciprocal), "sign": (enp.sign, np.sign),
    "sin": (enp.sin, np.sin), "cos": (enp.cos, np.cos), "tan": (enp.tan, np.tan),
    "sinh": (enp.sinh, np.sinh), "cosh": (enp.cosh, np.cosh), "tanh": (enp.tanh, np.tanh),
    "arcsin": (enp.arcsin, np.arcsin), "arccos": (enp.arccos, np.arccos),
    "arctan": (enp.arctan, np.arctan), "arcsinh": (enp.arcsinh, np.arcsinh),
    "arccosh": (enp.arccosh, np.arccosh), "arctanh": (enp.arctanh, np.arctanh),
    "log2": (enp.log2, np.log2), "log10": (enp.log10, np.log10), "exp2": (enp.exp2, np.exp2),
    "isfinite": (enp.isfinite, np.isfinite), "isinf": (enp.isinf, np.isinf),
    "isnan": (enp.isnan, np.isnan), "round": (enp.round, np.round),
    "cube": (lambda z: z ** 3, lambda z: z ** 3), "inverse": (lambda z: z ** -1, lambda z: 1 / z),
    "nan_to_num": (enp.nan_to_num, np.nan_to_num),
}
BINARY = {
    "add": (enp.add, np.add), "subtract": (enp.subtract, np.subtract),
    "multiply": (enp.multiply, np.multiply), "divide": (enp.divide, np.divide),
    "power": (enp.power, np.power), "equal": (enp.equal, np.equal),
    "not_equal": (enp.not_equal, np.not_equal),
    "where": (lambda x, y: enp.where(enp.abs(x) > 1, x, y),
              lambda x, y: np.where(np.abs(x) > 1, x, y)),
    "real_times": (lambda x, y: x * enp.real(y), lambda x, y: x * np.real(y)),
}
# NumPy's special values, exactly (signed zeros included): C99's Annex G.
SPECIAL_FNS = ("abs", "exp", "log", "sqrt")
_PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, INF, -INF, NAN, 1e30, -1e-30]
SPECIALS = np.array([complex(a, b) for a in _PARTS for b in _PARTS])


def _elementwise(x, y):
    out = {name: fn(x) for name, (fn, _) in UNARY.items()}
    out.update({name: fn(x, y) for name, (fn, _) in BINARY.items()})
    return out


ELEMENTWISE = ember.jit(_elementwise)


def _elementwise_inputs(dt):
    rng = np.random.default_rng(5)
    n = 64
    x, y = _random(rng, n), _random(rng, n)
    x[:4] = [0.3, -2.0, 1.5j, -0.7 - 0j]     # on the real and imaginary axes
    y[:3] = x[:3]                             # equal pairs
    # the special values after the random ones, y's part random
    xs = np.concatenate([x, SPECIALS])
    ys = np.concatenate([y, _random(rng, SPECIALS.size)])
    return xs.astype(dt), ys.astype(dt), n


def _special_close(got, want, dtype, what):
    """NumPy's special values exactly (infinities, NaNs, signed zeros), finite values within
    a few ulps."""
    got, want = np.asarray(got), np.asarray(want)
    eps = EPS[np.dtype(dtype)]
    for part in ("real", "imag") if want.dtype.kind == "c" else ("real",):
        g, w = getattr(got, part).astype(np.float64), getattr(want, part).astype(np.float64)
        exact = ~np.isfinite(w) | (w == 0)
        same = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
        near = np.abs(g - w) <= 4 * eps * np.abs(w)
        bad = np.where(exact, ~same, ~near)
        assert not bad.any(), (what, part, SPECIALS[bad][:6], got[bad][:6], want[bad][:6])


@pytest.mark.parametrize("dt", [C64, C128], ids=["complex64", "complex128"])
def test_elementwise_jit_against_numpy(dt, config_value):
    config_value("enable_x64", dt == C128)
    x, y, n = _elementwise_inputs(dt)
    out = ELEMENTWISE(x, y)
    xr, yr = x.astype(C128), y.astype(C128)
    real = np.dtype(dt.char.lower())
    with np.errstate(all="ignore"):
        for name, (_, ref) in UNARY.items():
            want = ref(xr)
            kind = want.dtype.kind
            assert out[name].dtype == (np.bool_ if kind == "b" else dt if kind == "c"
                                       else real), (name, out[name].dtype)
            _close(np.asarray(out[name])[:n], want[:n], dt, 64 if "arc" in name else 16,
                   name)
            if name in SPECIAL_FNS:
                _special_close(np.asarray(out[name])[n:], want[n:].astype(out[name].dtype),
                               dt, name)
        for name, (_, ref) in BINARY.items():
            want = ref(xr[:n], yr[:n])
            _close(np.asarray(out[name])[:n], want, dt, 64 if name == "power" else 8, name)


def test_elementwise_dtypes_as_jax():
    x, y, _ = _elementwise_inputs(C64)
    out = ELEMENTWISE(x, y)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    jfns = {"negative": jnp.negative, "abs": jnp.abs, "angle": jnp.angle, "real": jnp.real,
            "sign": jnp.sign, "isfinite": jnp.isfinite, "log10": jnp.log10, "round": jnp.round,
            "exp": jnp.exp, "arccosh": jnp.arccosh, "cube": lambda z: z ** 3}
    for name, fn in jfns.items():
        assert out[name].dtype == fn(jx).dtype, name
    for name in ("add", "power", "equal"):
        assert out[name].dtype == getattr(jnp, name)(jx, jy).dtype, name


def test_elementwise_eager_and_vmap():
    x, y, n = _elementwise_inputs(C64)
    x, y = x[:n], y[:n]
    xr, yr = x.astype(C128), y.astype(C128)
    ex = enp.asarray(x)
    _close(ex * y + 1j, xr * yr + 1j, C64, what="eager *")
    _close(ex / y, xr / yr, C64, what="eager /")
    _close(enp.exp(ex), np.exp(xr), C64, what="eager exp")
    _close(abs(ex), np.abs(xr), C64, what="eager abs")
    _close(ex.conj(), np.conj(xr), C64, what="eager conj")
    _close(ex.real + ex.imag, xr.real + xr.imag, C64, what="eager parts")

    def row_fn(row, w):
        return enp.sum(row * enp.conj(w)), enp.sqrt(row) * w, enp.abs(enp.log(row))

    a, b = x.reshape(8, 8), y.reshape(8, 8)
    s, r, m = ember.jit(ember.vmap(row_fn))(a, b)
    ar, br = a.astype(C128), b.astype(C128)
    _close(s, np.sum(ar * np.conj(br), axis=1), C64, what="vmap sum")
    _close(r, np.sqrt(ar) * br, C64, what="vmap sqrt")
    _close(m, np.abs(np.log(ar)), C64, what="vmap abs log")
    s2, _, _ = ember.vmap(row_fn, in_axes=(1, 0))(a, b)        # eager vmap, axis 1
    _close(s2, np.sum(ar.T * np.conj(br), axis=1), C64, what="vmap axis 1")


def test_no_order_on_complex_numbers():
    """The Array API leaves comparisons, max, min and sorting of complex numbers undefined:
    ember refuses them (TypeError; JAX orders lexicographically)."""
    z = enp.asarray(np.array([1 + 2j, 2 - 1j], np.complex64))
    for fn in (lambda: enp.maximum(z, z), lambda: enp.less(z, z), lambda: z > 0,
               lambda: enp.max(z), lambda: enp.argmax(z), lambda: enp.sort(z),
               lambda: enp.argsort(z), lambda: enp.clip(z, 0, 1), lambda: enp.median(z),
               lambda: lax.max(z, z)):
        with pytest.raises(TypeError, match="order|ordered"):
            fn()
    for fn in (enp.floor, enp.fabs, enp.signbit, enp.trunc):
        with pytest.raises(TracingError, match="complex"):
            fn(z)
    with pytest.raises(TracingError, match="complex"):
        lax.real(enp.ones(2))


# --- reductions ------------------------------------------------------------------------------

def _reductions(x):
    return {"sum": enp.sum(x), "sum0": enp.sum(x, axis=0), "prod": enp.prod(x, axis=1),
            "mean": enp.mean(x, axis=1), "cumsum": enp.cumsum(x, axis=1),
            "cumprod": enp.cumprod(x, axis=0), "var": enp.var(x, axis=1), "std": enp.std(x),
            "nansum": enp.nansum(x, axis=0), "average": enp.average(x, axis=0),
            "trace": enp.trace(x), "vmap": ember.vmap(enp.sum)(x)}


REDUCTIONS = ember.jit(_reductions)


@pytest.mark.parametrize("dt", [C64, C128], ids=["complex64", "complex128"])
def test_reductions(dt, config_value):
    config_value("enable_x64", dt == C128)
    rng = np.random.default_rng(9)
    x = _random(rng, (6, 5)).astype(dt)
    xr = x.astype(C128)
    out = REDUCTIONS(x)
    want = {"sum": xr.sum(), "sum0": xr.sum(0), "prod": xr.prod(1), "mean": xr.mean(1),
            "cumsum": np.cumsum(xr, 1), "cumprod": np.cumprod(xr, 0), "var": np.var(xr, 1),
            "std": np.std(xr), "nansum": np.nansum(xr, 0), "average": np.average(xr, 0),
            "trace": np.trace(xr), "vmap": xr.sum(1)}
    for k, w in want.items():
        _close(out[k], w, dt, 16, k)
        expect = np.dtype(dt) if w.dtype.kind == "c" else np.dtype(dt.char.lower())
        assert out[k].dtype == expect, (k, out[k].dtype)
    if dt == C64:      # (JAX's x64 is off here)
        jx = jnp.asarray(x)
        assert out["var"].dtype == jnp.var(jx).dtype and \
            out["mean"].dtype == jnp.mean(jx).dtype


def test_long_sum_and_contraction_accuracy():
    """complex64 sums and products over many elements keep float32's accuracy (ember's
    blocked reductions), as float32 ones do."""
    rng = np.random.default_rng(3)
    x = _random(rng, 70000).astype(C64)
    a, b = _random(rng, (2, 6000)).astype(C64), _random(rng, (6000, 2)).astype(C64)
    s, p = ember.jit(lambda x, a, b: (enp.sum(x), a @ b))(x, a, b)
    ws, wp = x.astype(C128).sum(), a.astype(C128) @ b.astype(C128)
    assert abs(complex(s) - ws) / np.abs(x).sum() < 2e-6
    assert (np.abs(np.asarray(p) - wp) / (np.abs(a) @ np.abs(b))).max() < 2e-6


# --- products --------------------------------------------------------------------------------

def _products(a, b, v, s):
    return {"matmul": a @ b, "batched": s @ s, "dot": enp.dot(a, v), "vdot": enp.vdot(v, v),
            "inner": enp.inner(v, v), "outer": enp.outer(v, v[:3]),
            "einsum": enp.einsum("ij,jk->ik", a, b), "einsum_trace": enp.einsum("ii", b @ a),
            "tensordot": enp.tensordot(s, b, axes=([2], [0])),
            "vecdot": enp.vecdot(a, a), "matvec": enp.matvec(a, v),
            "vecmat": enp.vecmat(v, b), "real_matmul": enp.real(a) @ b,
            "correlate": enp.correlate(v, v[:3], "full"), "convolve": enp.convolve(v, v[:2])}


PRODUCTS = ember.jit(_products)


@pytest.mark.parametrize("dt", [C64, C128], ids=["complex64", "complex128"])
def test_products(dt, config_value):
    config_value("enable_x64", dt == C128)
    rng = np.random.default_rng(11)
    a, b = _random(rng, (3, 5)).astype(dt), _random(rng, (5, 3)).astype(dt)
    v, s = _random(rng, 5).astype(dt), _random(rng, (4, 5, 5)).astype(dt)
    out = PRODUCTS(a, b, v, s)
    A, B, V, S = (t.astype(C128) for t in (a, b, v, s))
    want = {"matmul": A @ B, "batched": S @ S, "dot": A @ V, "vdot": np.vdot(V, V),
            "inner": np.inner(V, V), "outer": np.outer(V, V[:3]),
            "einsum": A @ B, "einsum_trace": np.trace(B @ A),
            "tensordot": np.tensordot(S, B, axes=([2], [0])),
            "vecdot": np.vecdot(A, A), "matvec": A @ V, "vecmat": V.conj() @ B,
            "real_matmul": A.real @ B, "correlate": np.correlate(V, V[:3], "full"),
            "convolve": np.convolve(V, V[:2])}
    for k, w in want.items():
        assert out[k].dtype == dt, (k, out[k].dtype)
        scale = np.abs(w) + 1.0       # sums of products cancel: absolute within the terms
        err = np.abs(np.asarray(out[k]).astype(C128) - w)
        assert (err <= 32 * EPS[dt] * scale * 10).all(), (k, err.max())


def test_complex_product_compiles_first_time(monkeypatch, config_value):
    """IREE's data tiling from dispatch creation crashed on the op that combines the real
    products of a complex one (tests/test_iree_quirks.py), and the program was compiled
    again with the next flags; such programs take data tiling from global optimization
    (backends/cpu.py:program_flags): one compile."""
    rng = np.random.default_rng(3)
    a, b = _random(rng, (3, 5)).astype(C64), _random(rng, (5, 3)).astype(C64)
    calls = count_compiles(monkeypatch)
    config_value("compile_cache", False)
    got = ember.jit(lambda a, b: a @ b)(a, b)
    assert len(calls) == 1
    np.testing.assert_allclose(np.asarray(got), a.astype(C128) @ b, rtol=1e-5, atol=1e-5)


# --- other ops on complex values ---------------------------------------------------------------

def test_sort_gather_scatter_and_folding():
    keys = np.array([3, 1, 2, 0], np.int32)
    vals = np.array([1 + 1j, 2 - 2j, 3j, -4 + 0j], np.complex64)

    def f(k, v):
        _, sv = lax.sort_key_val(k, v)
        c = enp.asarray(np.array([1 + 2j, -3j], np.complex64))     # constants: folded
        folded = (c * 2 + 1j, c.real.astype(np.float32), c == c)
        return sv, v[k], v.at[k[:2]].add(1j), enp.take(v, enp.array([3, 0])), folded

    sv, gathered, scattered, taken, (fc, fr, fe) = ember.jit(f)(keys, vals)
    _same_bits(sv, vals[np.argsort(keys, kind="stable")])
    _same_bits(gathered, vals[keys])
    want = vals.copy()
    np.add.at(want, keys[:2], 1j)
    _same_bits(scattered, want)
    _same_bits(taken, vals[[3, 0]])
    c = np.array([1 + 2j, -3j], np.complex64)
    _same_bits(fc, c * 2 + np.complex64(1j))
    _same_bits(fr, c.real)
    _same_bits(fe, c == c)


def _splats(x):
    dt = x.dtype
    return {"full": enp.full(3, 1 + 2j, dt), "zeros": enp.zeros((2, 2), dt),
            "pad": enp.pad(x, 2), "pad_value": lax.pad(x, x[1], [(1, 2, 1)]),
            "concat": enp.concatenate([x, enp.zeros(2, dt)]),
            "scan": lax.scan(lambda c, r: (c + r, c * r), enp.zeros((), dt), x),
            "fori": lax.fori_loop(0, 3, lambda i, c: c * x + 1, enp.ones(3, dt)),
            "dus": lax.dynamic_update_slice(enp.zeros(6, dt), x, (1,)),
            "scatter": enp.zeros(5, dt).at[np.array([0, 2, 4])].set(x),
            "empty_dot": enp.zeros((2, 0), dt) @ enp.zeros((0, 3), dt),
            "cond": lax.cond(x[0].real > 0, lambda: x * 2, lambda: enp.zeros(3, dt))}


@pytest.mark.parametrize("dt", [C64, C128], ids=["complex64", "complex128"])
def test_splat_buffers(dt, config_value):
    """Complex splats IREE keeps as buffers of their own (returned, inserted into, scattered
    into, loop carries): IREE 3.13 cannot splat 16-byte values, nor a complex64 constant
    that a slice is inserted into; ember builds them from their parts."""
    config_value("enable_x64", dt == C128)
    x = np.array([1 + 2j, 3 - 1j, 0.5j], dt)
    out = ember.jit(_splats)(x)
    c = [np.complex128(0)]
    steps = []
    for r in x:
        steps.append(c[0] * r)
        c[0] = c[0] + r
    fori = np.ones(3, dt)
    for _ in range(3):
        fori = fori * x + 1
    scattered = np.zeros(5, dt)
    scattered[[0, 2, 4]] = x
    want = {"full": np.full(3, 1 + 2j, dt), "zeros": np.zeros((2, 2), dt),
            "pad": np.pad(x, 2), "pad_value": np.array([x[1], x[0], x[1], x[1], x[1], x[2],
                                                        x[1], x[1]], dt),
            "concat": np.concatenate([x, np.zeros(2, dt)]),
            "scan": (np.asarray(c[0], dt), np.array(steps, dt)), "fori": fori,
            "dus": np.concatenate([[0], x, [0, 0]]).astype(dt), "scatter": scattered,
            "empty_dot": np.zeros((2, 3), dt), "cond": x * 2}
    for k, w in want.items():
        for g, w1 in zip(*(ws if isinstance(ws, tuple) else (ws,) for ws in (out[k], w))):
            _close(g, w1, dt, 4, k)
            assert np.asarray(g).dtype == dt, k


def test_memory_planning_counts_complex_bytes():
    from ember._mlir import default_session, element_bits, ir
    from ember.passes.liveness import tensor_bytes

    with default_session().context, ir.Location.unknown():
        c64 = ir.RankedTensorType.get([3, 4], ir.ComplexType.get(ir.F32Type.get()))
        c128 = ir.RankedTensorType.get([3], ir.ComplexType.get(ir.F64Type.get()))
        assert tensor_bytes(c64) == 12 * 8 and tensor_bytes(c128) == 3 * 16
        assert element_bits(ir.ComplexType.get(ir.F64Type.get())) == 128


# --- backends: refused where IREE cannot compile complex numbers -------------------------------

def test_cuda_refuses_complex128_and_complex_scans(config_value):
    """Compile-only (no GPU needed): IREE 3.13 demotes float64 for CUDA and fails on
    complex128 constants; its CUDA compiler crashes on a complex scan beside another
    dispatch. ember refuses both with the legality error, naming the op and the dtype."""
    x = np.array([1 + 2j, 3 - 1j], np.complex64)
    with pytest.raises(BackendUnsupportedError, match="ember.cumsum.*complex64.*'cuda'"):
        ember.jit(lambda z: enp.sum(z) + enp.cumsum(z), backend="cuda").lower(x).compile()
    config_value("enable_x64", True)
    with pytest.raises(BackendUnsupportedError, match="complex128.*'cuda' backend"):
        ember.jit(lambda z: z * 2, backend="cuda").lower(x.astype(C128)).compile()


@needs_vulkan
def test_vulkan_complex64_runs_and_complex128_math_is_refused(config_value):
    x, y, n = _elementwise_inputs(C64)
    x, y = x[:n], y[:n]
    out = ember.jit(lambda a, b: (a * b / (a + 1), enp.exp(a), enp.sqrt(a), enp.abs(a),
                                  a @ enp.conj(b)), backend="vulkan")(x, y)
    xr, yr = x.astype(C128), y.astype(C128)
    for got, want in zip(out, (xr * yr / (xr + 1), np.exp(xr), np.sqrt(xr), np.abs(xr),
                               xr @ np.conj(yr))):
        _close(got, want, C64, 64)       # lavapipe's float32 exp, sin: within 30 ulps
    config_value("enable_x64", True)
    with pytest.raises(BackendUnsupportedError, match="ember.exp.*complex128.*'vulkan'"):
        ember.jit(enp.exp, backend="vulkan")(x.astype(C128))


def test_export_and_load(tmp_path):
    """An exported module takes and returns complex64 arrays and Python complex scalars."""
    x = np.array([1 + 2j, 3 - 1j, -0.5j], np.complex64)
    path = tmp_path / "complex.vmfb"
    ember.export(ember.jit(lambda a, s: (enp.exp(a) * s, enp.abs(a))), x, 1j).save(path)
    loaded = ember.load(path)
    got, mag = loaded(x, 2j)
    _close(got, np.exp(x.astype(C128)) * 2j, C64, what="exp")
    _close(mag, np.abs(x.astype(C128)), C64, what="abs")
    assert np.asarray(got).dtype == C64 and np.asarray(mag).dtype == np.float32
    with pytest.raises(ember.errors.ArgumentError, match="c64"):
        loaded(x.real.copy(), 1j)


def test_linalg_norms_and_refusals():
    """Norms of complex vectors and matrices (from |x|) as NumPy's; the decompositions are
    real kernels: complex matrices are refused rather than their imaginary parts dropped."""
    v = np.array([1 + 1j, 2, -3j, 0.5 - 2j], np.complex64)
    a = v[:4].reshape(2, 2)
    norms = ember.jit(lambda v, a: [enp.linalg.norm(v, o) for o in (None, 1, np.inf, 0, 3)] +
                      [enp.linalg.norm(a, o) for o in ("fro", 1, -np.inf)])(v, a)
    want = [np.linalg.norm(v.astype(C128), o) for o in (None, 1, np.inf, 0, 3)] + \
        [np.linalg.norm(a.astype(C128), o) for o in ("fro", 1, -np.inf)]
    for g, w in zip(norms, want):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-6)
    for fn in (enp.linalg.inv, enp.linalg.det, enp.linalg.eigh, enp.linalg.svd,
               lambda m: enp.linalg.norm(m, 2), lambda m: enp.linalg.solve(m, v[:2])):
        with pytest.raises(TracingError, match="complex matrices .* not supported"):
            fn(a)


def test_numpy_order_where_numpy_defines_one():
    """unique and sort_complex order complex numbers as NumPy does (real part, then
    imaginary part); isclose and array_equal compare them by magnitude, NaNs as NumPy."""
    x = np.array([1 + 2j, 3 - 1j, 0j, 1 - 1j, 3 - 1j, -2 + 0j, np.nan + 1j], np.complex64)
    y = x + np.complex64(1e-7)

    def f(x, y):
        return (enp.unique(x[:6], size=5, return_inverse=True, return_counts=True),
                enp.sort_complex(x[:6]), enp.isclose(x, y, equal_nan=True),
                enp.isclose(x, y), enp.array_equal(x, x, equal_nan=True),
                enp.allclose(x[:6], y[:6]))

    (vals, inv, counts), srt, close_nan, close, equal, allclose = ember.jit(f)(x, y)
    want_vals, want_inv, want_counts = np.unique(x[:6], return_inverse=True,
                                                 return_counts=True)
    _same_bits(vals, want_vals)
    np.testing.assert_array_equal(inv, want_inv)
    np.testing.assert_array_equal(counts, want_counts)
    _same_bits(srt, np.sort_complex(x[:6]))
    np.testing.assert_array_equal(close_nan, np.isclose(x, y, equal_nan=True))
    np.testing.assert_array_equal(close, np.isclose(x, y))
    assert bool(equal) == np.array_equal(x, x, equal_nan=True)
    assert bool(allclose) == np.allclose(x[:6], y[:6])
