"""ember.nn against NumPy formulas (computed in float64), including inputs where a naive
formula overflows and -inf entries; the activations (relu6, elu, selu, gelu, silu, softplus,
log_sigmoid, standardize) and one_hot also against jax.nn; the other activations, logsumexp,
softmax and standardize with where=, b= and return_sign=, and dot_product_attention against
jax.nn alone (skipped, each with the reason, where JAX is missing)."""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.numpy as enp
import ember.scipy.special as ess
from ember.errors import ArgumentError, TracingError


def np_logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def np_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        return x - np_logsumexp(x, axis=axis, keepdims=True)


def np_sigmoid(x):
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def check(got, want, dtype, rtol=1e-5, atol=1e-6):
    assert isinstance(got, ember.Array)
    assert got.dtype == dtype, (got.dtype, dtype)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)
INPUTS = {
    "small": RNG.normal(size=(3, 5)).astype(np.float32),
    "large": (RNG.normal(size=(3, 5)) * 1000).astype(np.float32),    # exp() overflows
    "neginf": np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32),
    "vector": np.array([1e4, 1e4 - 1, -1e4], np.float32),
}


def _all(x):
    return {
        "relu": enn.relu(x), "sigmoid": enn.sigmoid(x), "softmax": enn.softmax(x),
        "softmax0": enn.softmax(x, axis=0), "log_softmax": enn.log_softmax(x),
        "log_softmax0": enn.log_softmax(x, axis=0), "lse": enn.logsumexp(x),
        "lse_last": enn.logsumexp(x, axis=-1), "lse_keep": enn.logsumexp(x, axis=0,
                                                                         keepdims=True),
    }


def _wants(x):
    return {
        "relu": np.maximum(x, 0), "sigmoid": np_sigmoid(x), "softmax": np_softmax(x),
        "softmax0": np_softmax(x, axis=0), "log_softmax": np_log_softmax(x),
        "log_softmax0": np_log_softmax(x, axis=0), "lse": np_logsumexp(x),
        "lse_last": np_logsumexp(x, axis=-1), "lse_keep": np_logsumexp(x, axis=0,
                                                                       keepdims=True),
    }


_jit_all = ember.jit(_all)


@pytest.mark.parametrize("name", list(INPUTS))
def test_nn_against_numpy(name):
    x = INPUTS[name]
    wants = _wants(x)
    runs = [("jit", _jit_all(x))]
    if name == "large":     # eagerly each function is its own program: one input is enough
        runs += [("eager", _all(x)), ("eager-array", _all(enp.asarray(x)))]
    for how, outs in runs:
        for k, want in wants.items():
            got = outs[k]
            assert np.all(np.isfinite(np.asarray(got)) == np.isfinite(want)), (how, k)
            try:
                check(got, want, np.float32, rtol=1e-5, atol=1e-5)
            except AssertionError as e:
                raise AssertionError(f"{how} {k}: {e}") from None


def test_all_neg_inf_row():
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]], np.float32)
    lse = np.asarray(ember.jit(lambda a: enn.logsumexp(a, axis=1))(x))
    assert lse[0] == -np.inf
    np.testing.assert_allclose(lse[1], np.log(1 + np.e), rtol=1e-6)


def test_int_inputs_and_float16():
    xi = np.array([-2, 0, 3], np.int32)
    check(enn.relu(xi), np.maximum(xi, 0), np.int32)
    check(enn.sigmoid(xi), np_sigmoid(xi), np.float32)
    check(enn.softmax(xi), np_softmax(xi), np.float32)
    x16 = np.array([[-1.0, 0.5, 300.0], [2.0, 1.0, -3.0]], np.float16)
    outs = ember.jit(lambda a: (enn.softmax(a), enn.logsumexp(a, axis=1), enn.sigmoid(a),
                                enn.relu(a), enn.log_softmax(a)))(x16)
    wants = (np_softmax(x16), np_logsumexp(x16, axis=1), np_sigmoid(x16),
             np.maximum(x16, 0), np_log_softmax(x16))
    for got, want in zip(outs, wants, strict=True):
        check(got, want, np.float16, rtol=2e-3, atol=2e-3)


def test_scalar_and_empty():
    check(enn.logsumexp(np.float32(3.0)), np.float64(3.0), np.float32)
    check(enn.relu(np.float32(-3.0)), np.float64(0.0), np.float32)
    e = np.zeros((0, 4), np.float32)
    check(enn.softmax(e), np.zeros((0, 4)), np.float32)


def test_bad_axis():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError, match="axis 2"):
        ember.jit(lambda a: enn.softmax(a, axis=2))(x)
    with pytest.raises(TracingError, match="axis -3"):
        enn.logsumexp(x, axis=-3)


# --- activations and one_hot -------------------------------------------------------------------

BF16 = np.dtype(ml_dtypes.bfloat16)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _activations(x):
    return {
        "relu6": enn.relu6(x), "elu": enn.elu(x), "elu2": enn.elu(x, alpha=2.0),
        "selu": enn.selu(x), "gelu": enn.gelu(x), "gelu_exact": enn.gelu(x, approximate=False),
        "silu": enn.silu(x), "swish": enn.swish(x), "softplus": enn.softplus(x),
        "log_sigmoid": enn.log_sigmoid(x), "standardize": enn.standardize(x),
        "standardize0": enn.standardize(x, axis=0, epsilon=1e-3),
    }


def _np_activations(x):
    x = x.astype(np.float64)
    from math import erf
    verf = np.vectorize(erf)
    with np.errstate(all="ignore"):
        elu = lambda a: np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))  # noqa: E731
        std = lambda ax, eps: (x - x.mean(ax, keepdims=True)) / np.sqrt(  # noqa: E731
            x.var(ax, keepdims=True) + eps)
        return {
            "relu6": np.clip(x, 0, 6), "elu": elu(1.0), "elu2": elu(2.0),
            "selu": SELU_SCALE * elu(SELU_ALPHA),
            "gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
            "gelu_exact": 0.5 * x * (1 + verf(x / np.sqrt(2))),
            "silu": x / (1 + np.exp(-x)), "swish": x / (1 + np.exp(-x)),
            "softplus": np.logaddexp(x, 0), "log_sigmoid": -np.logaddexp(-x, 0),
            "standardize": std(-1, 1e-5), "standardize0": std(0, 1e-3),
        }


_jit_activations = ember.jit(_activations)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
def test_activations_against_numpy(dtype):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(size=(6, 8)) * 3,
                        [[0.0, -0.0, 1.0, -1.0, 6.0, 7.0, -30.0, 30.0],
                         [-100.0, 100.0, 0.5, -0.5, 5.9, -6.0, 2.0, -2.0]]]).astype(dtype)
    outs = _jit_activations(x)
    wants = _np_activations(x)
    tol = {np.dtype(np.float32): 2e-5, np.dtype(np.float16): 4e-3}.get(np.dtype(dtype), 3e-2)
    for name, want in wants.items():
        got = outs[name]
        assert got.dtype == dtype and got.shape == x.shape, name
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=tol,
                                   atol=tol, err_msg=name)


def test_activations_against_jax():
    jax = pytest.importorskip("jax")
    jnn = jax.nn
    x = np.random.default_rng(6).normal(size=(4, 5)).astype(np.float32) * 4
    outs = _jit_activations(x)
    wants = {"relu6": jnn.relu6(x), "elu": jnn.elu(x), "selu": jnn.selu(x),
             "gelu": jnn.gelu(x), "gelu_exact": jnn.gelu(x, approximate=False),
             "silu": jnn.silu(x), "softplus": jnn.softplus(x),
             "log_sigmoid": jnn.log_sigmoid(x), "standardize": jnn.standardize(x)}
    for name, want in wants.items():
        np.testing.assert_allclose(np.asarray(outs[name]), np.asarray(want), rtol=2e-5,
                                   atol=2e-5, err_msg=name)


def test_one_hot_and_int_inputs():
    labels = np.array([[0, 2], [3, -1]], np.int32)
    f = ember.jit(lambda a: (enn.one_hot(a, 4), enn.one_hot(a, 3, dtype=np.int32, axis=0),
                             enn.relu6(a * 3), enn.elu(a)))
    oh, oh0, r6, el = f(labels)
    want = (labels[..., None] == np.arange(4)).astype(np.float32)
    assert oh.dtype == np.float32 and oh.shape == (2, 2, 4)
    np.testing.assert_array_equal(np.asarray(oh), want)
    want0 = np.moveaxis((labels[..., None] == np.arange(3)), -1, 0).astype(np.int32)
    assert oh0.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(oh0), want0)
    assert r6.dtype == np.float32          # JAX's relu6 of ints is float
    np.testing.assert_array_equal(np.asarray(r6), np.clip(labels * 3, 0, 6))
    assert el.dtype == np.float32
    np.testing.assert_allclose(np.asarray(el), np.where(labels > 0, labels,
                                                        np.expm1(np.minimum(labels, 0))),
                               rtol=1e-6)


# --- the activations jax.nn is the only oracle of; masked reductions; attention -----------------

def _close(got, want, rtol=1e-5, atol=1e-6, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, err_msg=what)


_JAX_ONLY = ["celu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
             "leaky_relu", "log1mexp", "mish", "soft_sign", "sparse_plus", "sparse_sigmoid",
             "squareplus", "tanh", "relu6", "logmeanexp"]


def _jax_only_activations(m, x):
    """The activations of ``_JAX_ONLY`` (and their parameters) from ``m``: ember.nn or
    jax.nn."""
    out = {n: getattr(m, n)(x) for n in _JAX_ONLY if n != "glu" or x.dtype.kind == "f"}
    out["celu_a"] = m.celu(x, alpha=0.5)
    out["leaky_relu_s"] = m.leaky_relu(x, negative_slope=0.2)
    out["squareplus_b"] = m.squareplus(x, b=1.5)
    out["glu0"] = m.glu(x, axis=0) if x.dtype.kind == "f" else x
    out["logmeanexp1"] = m.logmeanexp(x, axis=1, keepdims=True)
    return out


_jit_jax_only_activations = ember.jit(lambda x: _jax_only_activations(enn, x))


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32], ids=["f32", "bf16", "i32"])
def test_activations_without_a_numpy_formula_against_jax(dtype, jax):
    rng = np.random.default_rng(17)
    x = np.concatenate([rng.normal(size=(4, 6)) * 3,
                        [[0.0, -1.0, 1.0, -3.0, 3.0, 6.0], [-6.0, 0.5, -0.5, 2.0, -2.0, 9.0]]])
    if dtype == np.float32:
        x[0, :3] = [np.inf, -np.inf, np.nan]
        x[1, :2] = [1e-8, 50.0]
    x = x.astype(dtype)
    got = _jit_jax_only_activations(x)
    want = _jax_only_activations(jax.nn, x)
    tol = (2e-2, 2e-2) if dtype == BF16 else (1e-5, 1e-6)
    for k in want:
        _close(got[k], want[k], *tol, what=k)


def test_activations_eagerly_and_relu6_of_ints(jax):
    jnn = jax.nn
    x = np.array([-4.0, -0.5, 0.0, 2.0, 7.0], np.float32)
    for n in ["celu", "hard_silu", "log1mexp", "mish", "sparse_plus", "squareplus"]:
        _close(getattr(enn, n)(x), getattr(jnn, n)(x), what=n)
    for dt in [np.int8, np.uint8, np.int32, np.bool_]:
        i = np.array([0, 1, 7, 3], dt)
        _close(enn.relu6(i), jnn.relu6(i), what=f"relu6 {dt}")
        _close(enn.hard_tanh(i), jnn.hard_tanh(i), what=f"hard_tanh {dt}")


def _masked(m, x, w, b):
    """logsumexp, softmax, logmeanexp and standardize with where=, b= and return_sign= from
    ``m``: ember.nn or jax.nn."""
    return {
        "lse_where": m.logsumexp(x, where=w), "lse_where1": m.logsumexp(x, axis=1, where=w),
        "lse_b": m.logsumexp(x, axis=-1, b=b), "lse_sign": m.logsumexp(x, b=b,
                                                                       return_sign=True),
        "lse_all": m.logsumexp(x, axis=(0, 1), b=abs(b), where=w, keepdims=True),
        "softmax": m.softmax(x, where=w), "softmax0": m.softmax(x, axis=0, where=w),
        "log_softmax": m.log_softmax(x, where=w),
        "log_softmax_t": m.log_softmax(x, axis=(0, 1), where=w),
        "lme": m.logmeanexp(x, axis=1, where=w), "lme_all": m.logmeanexp(x, where=w),
        "std": m.standardize(x, where=w),
        "std0": m.standardize(x, axis=0, where=w, algorithm="stable"),
        "std_stable": m.standardize(x, axis=0, algorithm="stable"),
        "std_given": m.standardize(x, mean=0.5, variance=2.0),
    }


def test_where_b_and_return_sign_against_jax(jax):
    jnn = jax.nn
    rng = np.random.default_rng(18)
    x = (rng.normal(size=(5, 7)) * 4).astype(np.float32)
    w = rng.uniform(size=(5, 7)) > 0.4
    w[0] = False                                   # a fully masked row: -inf / NaN as JAX
    b = rng.normal(size=(7,)).astype(np.float32)
    got = ember.jit(lambda *a: _masked(enn, *a))(x, w, b)
    want = _masked(jnn, x, w, b)
    for k in want:
        for g, v in zip(*(t if isinstance(t, tuple) else (t,) for t in (got[k], want[k]))):
            _close(g, v, 2e-5, 2e-6, what=k)
    # Eagerly, and the scipy name is the same function.
    _close(enn.logsumexp(x, axis=0, b=b[:5, None], return_sign=True)[1],
           jnn.logsumexp(x, axis=0, b=b[:5, None], return_sign=True)[1])
    assert ess.logsumexp is enn.logsumexp
    sp = pytest.importorskip("scipy.special", reason="scipy's logsumexp is the oracle")
    _close(ess.logsumexp(x, b=b), sp.logsumexp(x.astype(np.float64), b=b).astype(np.float32),
           2e-5, 1e-6)


_B, _T, _S, _N, _K, _H = 2, 5, 6, 4, 2, 8


def _attention_inputs(seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(_B, _T, _N, _H)).astype(np.float32)
    k = rng.normal(size=(_B, _S, _K, _H)).astype(np.float32)
    v = rng.normal(size=(_B, _S, _K, _H)).astype(np.float32)
    bias = rng.normal(size=(1, _N, _T, _S)).astype(np.float32)
    mask = rng.uniform(size=(_B, 1, _T, _S)) > 0.3
    lens = (np.array([3, 5], np.int32), np.array([6, 2], np.int32))
    return q, k, v, bias, mask, lens


_ATTENTION_CASES = {
    "plain": lambda q, k, v, bias, mask, ql, kl: {},
    "bias": lambda q, k, v, bias, mask, ql, kl: dict(bias=bias),
    "bias1": lambda q, k, v, bias, mask, ql, kl: dict(bias=bias[:, :1], scale=0.25),
    "mask_causal": lambda q, k, v, bias, mask, ql, kl: dict(mask=mask, is_causal=True),
    "lengths": lambda q, k, v, bias, mask, ql, kl: dict(query_seq_lengths=ql,
                                                        key_value_seq_lengths=kl),
    "window": lambda q, k, v, bias, mask, ql, kl: dict(local_window_size=(1, 2)),
    "window1": lambda q, k, v, bias, mask, ql, kl: dict(local_window_size=1, is_causal=True),
    "residual": lambda q, k, v, bias, mask, ql, kl: dict(return_residual=True, mask=mask,
                                                         key_value_seq_lengths=kl),
}


def _attention(attention, q, k, v, bias, mask, ql, kl):
    out = {name: attention(q, k, v, **kw(q, k, v, bias, mask, ql, kl))
           for name, kw in _ATTENTION_CASES.items()}
    out["mha"] = attention(q[:, :, :2], k, v, implementation="xla")
    out["mqa"] = attention(q, k[:, :, :1], v[:, :, :1], is_causal=True)
    out["unbatched"] = attention(q[0], k[0], v[0], bias=bias[0], scale=0.5)
    return out


def test_dot_product_attention_against_jax(jax):
    jnn = jax.nn
    q, k, v, bias, mask, (ql, kl) = _attention_inputs(19)
    got = ember.jit(lambda *a: _attention(enn.dot_product_attention, *a))(
        q, k, v, bias, mask, ql, kl)
    want = _attention(jnn.dot_product_attention, q, k, v, bias, mask, ql, kl)
    for name in want:
        for g, w in zip(*(t if isinstance(t, tuple) else (t,) for t in (got[name],
                                                                         want[name]))):
            _close(g, w, 2e-5, 2e-5, what=name)
    # Eagerly, in bfloat16 (float32 logits, as JAX).
    qb, kb, vb = (t.astype(BF16) for t in (q, k, v))
    _close(enn.dot_product_attention(qb, kb, vb, is_causal=True),
           jnn.dot_product_attention(qb, kb, vb, is_causal=True), 1e-2, 1e-2)


def test_dot_product_attention_under_vmap(jax):
    q, k, v, *_ = _attention_inputs(20)
    got = ember.vmap(lambda a, b, c: enn.dot_product_attention(a, b, c, is_causal=True),
                     in_axes=(0, 0, 0))(q, k, v)
    want = jax.vmap(lambda a, b, c: jax.nn.dot_product_attention(a, b, c, is_causal=True),
                    in_axes=(0, 0, 0))(q, k, v)
    _close(got, want, 2e-5, 2e-5)


def test_activation_and_attention_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError, match="glu: the size of axis"):
        enn.glu(x)
    with pytest.raises(ArgumentError, match="standardize: unknown algorithm"):
        enn.standardize(x, algorithm="exact")
    q = np.ones((1, 4, 4, 8), np.float32)
    with pytest.raises(ArgumentError, match="implementation 'cudnn'"):
        enn.dot_product_attention(q, q, q, implementation="cudnn")
    with pytest.raises(TracingError, match="number of query heads"):
        enn.dot_product_attention(q, q[:, :, :3], q[:, :, :3])
    with pytest.raises(TracingError, match="value should have shape"):
        enn.dot_product_attention(q, q, q[:, :3])
    with pytest.raises(TracingError, match="mask should have 4 dims and dtype bool"):
        enn.dot_product_attention(q, q, q, mask=np.ones((1, 1, 4, 4), np.float32))
    with pytest.raises(TracingError, match="key_value_seq_lengths should have shape"):
        enn.dot_product_attention(q, q, q, key_value_seq_lengths=np.array([4, 4], np.int32))
    with pytest.raises(TracingError, match="bias has 2 heads"):
        enn.dot_product_attention(q, q, q, bias=np.ones((1, 2, 4, 4), np.float32))
