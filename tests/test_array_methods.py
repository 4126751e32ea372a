"""Array methods, properties and operators of ember.Array and tracers, against numpy.ndarray's
methods on the same data (np.ptp / np.sort / np.round where ndarray differs: ptp left NumPy 2,
ndarray.sort sorts in place, ndarray has no __round__)."""

import functools
import operator

import numpy as np
import pytest

import ember
from ember import dtypes
from ember.errors import ConcretizationError, EmberError

pytestmark = pytest.mark.filterwarnings("ignore:float64 values are computed as float32")

_rng = np.random.default_rng(7)
X = _rng.standard_normal((3, 4)).astype(np.float32)          # x
M = _rng.standard_normal((4, 4)).astype(np.float32)          # m (square)
I = _rng.choice([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5], (3, 4)).astype(np.int32)  # noqa: E741
S = np.sort(_rng.standard_normal(6).astype(np.float32))      # s (sorted)
B = _rng.random((3, 4)) < 0.5                                 # b (bool)
DATA = (X, M, I, S, B)


def _stable_argsort(a, axis=-1):
    return np.argsort(a, axis=axis, kind="stable")


# (name, f(x, m, i, s, b) using methods, NumPy reference or None: the same f on ndarrays).
CASES = [
    ("sum", lambda x, m, i, s, b: x.sum(), None),
    ("sum_axis", lambda x, m, i, s, b: x.sum(0), None),
    ("sum_positional_keepdims", lambda x, m, i, s, b: x.sum(1, None, None, True), None),
    ("sum_axes_tuple", lambda x, m, i, s, b: x.sum(axis=(0, 1), keepdims=True), None),
    ("sum_int", lambda x, m, i, s, b: i.sum(0), None),
    ("sum_bool", lambda x, m, i, s, b: b.sum(), None),
    ("sum_initial", lambda x, m, i, s, b: x.sum(1, None, None, False, 2.5), None),
    ("prod", lambda x, m, i, s, b: x.prod(1), None),
    ("prod_int", lambda x, m, i, s, b: i.prod(0), None),
    ("max", lambda x, m, i, s, b: x.max(), None),
    ("max_positional_keepdims", lambda x, m, i, s, b: x.max(0, None, True), None),
    ("max_initial", lambda x, m, i, s, b: x.max(1, None, False, 0.5), None),
    ("min", lambda x, m, i, s, b: x.min(1), None),
    ("min_int", lambda x, m, i, s, b: i.min(axis=0, keepdims=True), None),
    ("mean", lambda x, m, i, s, b: x.mean(), None),
    ("mean_positional_keepdims", lambda x, m, i, s, b: x.mean(0, None, None, True), None),
    ("mean_int", lambda x, m, i, s, b: i.mean(1), None),
    ("std", lambda x, m, i, s, b: x.std(), None),
    ("std_positional_ddof", lambda x, m, i, s, b: x.std(1, None, None, 1), None),
    ("var", lambda x, m, i, s, b: x.var(0, None, None, 0, True), None),
    ("var_ddof", lambda x, m, i, s, b: x.var(ddof=1), None),
    ("all", lambda x, m, i, s, b: b.all(), None),
    ("all_positional_keepdims", lambda x, m, i, s, b: b.all(1, None, True),
     lambda x, m, i, s, b: np.all(b, 1, None, True)),   # ndarray.all's C glue puts dtype 2nd
    ("any", lambda x, m, i, s, b: b.any(0), None),
    ("any_float", lambda x, m, i, s, b: x.any(), None),
    ("argmax", lambda x, m, i, s, b: x.argmax(), None),
    ("argmax_axis", lambda x, m, i, s, b: x.argmax(1), None),
    ("argmax_keepdims", lambda x, m, i, s, b: x.argmax(0, None, keepdims=True), None),
    ("argmin", lambda x, m, i, s, b: x.argmin(0), None),
    ("argmin_flat", lambda x, m, i, s, b: m.argmin(), None),
    ("cumsum", lambda x, m, i, s, b: x.cumsum(), None),
    ("cumsum_axis", lambda x, m, i, s, b: x.cumsum(1), None),
    ("cumsum_int", lambda x, m, i, s, b: i.cumsum(0), None),
    ("cumprod", lambda x, m, i, s, b: x.cumprod(1), None),
    ("ptp", lambda x, m, i, s, b: x.ptp(), lambda x, m, i, s, b: np.ptp(x)),
    ("ptp_positional_keepdims", lambda x, m, i, s, b: x.ptp(0, None, True),
     lambda x, m, i, s, b: np.ptp(x, 0, None, True)),
    ("clip", lambda x, m, i, s, b: x.clip(-0.5, 0.5), None),
    ("clip_max_only", lambda x, m, i, s, b: x.clip(None, 0.2), None),
    ("clip_min_keyword", lambda x, m, i, s, b: x.clip(min=0.0), None),
    ("clip_int", lambda x, m, i, s, b: i.clip(-1, 2), None),
    ("round", lambda x, m, i, s, b: (x * 10).round(), None),
    ("round_decimals", lambda x, m, i, s, b: x.round(1), None),
    ("python_round", lambda x, m, i, s, b: round(x * 10),
     lambda x, m, i, s, b: np.round(x * 10)),
    ("conj", lambda x, m, i, s, b: x.conj(), None),
    ("conjugate", lambda x, m, i, s, b: i.conjugate(), None),
    ("real", lambda x, m, i, s, b: x.real, None),
    ("imag", lambda x, m, i, s, b: x.imag, None),
    ("imag_int", lambda x, m, i, s, b: i.imag, None),
    ("astype_int", lambda x, m, i, s, b: (x * 10).astype(np.int32), None),
    ("astype_float", lambda x, m, i, s, b: i.astype(np.float32), None),
    ("astype_bool", lambda x, m, i, s, b: b.astype(np.int32), None),
    ("astype_float64", lambda x, m, i, s, b: x.astype(np.float64), None),
    ("reshape_varargs", lambda x, m, i, s, b: x.reshape(4, 3), None),
    ("reshape_tuple", lambda x, m, i, s, b: x.reshape((2, 6)), None),
    ("reshape_flat", lambda x, m, i, s, b: x.reshape(-1), None),
    ("reshape_order_f", lambda x, m, i, s, b: x.reshape(2, -1, order="F"), None),
    ("reshape_tuple_order_f", lambda x, m, i, s, b: x.reshape((6, 2), order="F"), None),
    ("transpose", lambda x, m, i, s, b: x.transpose(), None),
    ("transpose_varargs", lambda x, m, i, s, b: x.reshape(3, 2, 2).transpose(2, 0, 1), None),
    ("transpose_tuple", lambda x, m, i, s, b: x.reshape(3, 2, 2).transpose((1, 2, 0)), None),
    ("swapaxes", lambda x, m, i, s, b: x.reshape(3, 2, 2).swapaxes(0, 2), None),
    ("squeeze", lambda x, m, i, s, b: x.reshape(1, 3, 1, 4).squeeze(), None),
    ("squeeze_axis", lambda x, m, i, s, b: x.reshape(1, 3, 1, 4).squeeze(0), None),
    ("squeeze_axes", lambda x, m, i, s, b: x.reshape(1, 3, 1, 4).squeeze((0, 2)), None),
    ("flatten", lambda x, m, i, s, b: x.flatten(), None),
    ("flatten_f", lambda x, m, i, s, b: x.flatten("F"), None),
    ("ravel", lambda x, m, i, s, b: i.ravel(), None),
    ("ravel_f", lambda x, m, i, s, b: x.ravel(order="F"), None),
    ("repeat", lambda x, m, i, s, b: x.repeat(2), None),
    ("repeat_axis", lambda x, m, i, s, b: x.repeat(2, 0), None),
    ("repeat_list", lambda x, m, i, s, b: i.repeat([1, 0, 2], axis=0), None),
    ("take", lambda x, m, i, s, b: x.take([0, 5, 11]), None),
    ("take_axis", lambda x, m, i, s, b: x.take([2, 0], axis=1), None),
    ("take_2d_indices", lambda x, m, i, s, b: x.take(np.array([[0, 1], [2, 2]]), 0), None),
    ("sort", lambda x, m, i, s, b: x.sort(), lambda x, m, i, s, b: np.sort(x)),
    ("sort_axis", lambda x, m, i, s, b: i.sort(0), lambda x, m, i, s, b: np.sort(i, 0)),
    ("argsort", lambda x, m, i, s, b: x.argsort(), None),
    ("argsort_axis_ties", lambda x, m, i, s, b: i.argsort(0),
     lambda x, m, i, s, b: _stable_argsort(i, 0)),
    ("searchsorted", lambda x, m, i, s, b: s.searchsorted(x), None),
    ("searchsorted_side", lambda x, m, i, s, b: s.searchsorted(x, "right"), None),
    ("searchsorted_scalar", lambda x, m, i, s, b: s.searchsorted(0.0, side="right"), None),
    ("diagonal", lambda x, m, i, s, b: m.diagonal(), None),
    ("diagonal_offset", lambda x, m, i, s, b: x.diagonal(1), None),
    ("diagonal_axes", lambda x, m, i, s, b: x.reshape(3, 2, 2).diagonal(0, 1, 2), None),
    ("trace", lambda x, m, i, s, b: m.trace(), None),
    ("trace_offset", lambda x, m, i, s, b: x.trace(-1), None),
    ("trace_int", lambda x, m, i, s, b: i.trace(), None),
    ("dot", lambda x, m, i, s, b: x.dot(m), None),
    ("dot_vector", lambda x, m, i, s, b: m.dot(m[0]), None),
    ("T", lambda x, m, i, s, b: x.T, None),
    ("T_1d", lambda x, m, i, s, b: s.T, None),
    ("mT", lambda x, m, i, s, b: x.reshape(3, 2, 2).mT, None),
    ("copy", lambda x, m, i, s, b: x.copy(), None),
    ("view", lambda x, m, i, s, b: x.view(np.int32), None),
    ("view_unsigned", lambda x, m, i, s, b: i.view(np.uint32), None),
    ("divmod", lambda x, m, i, s, b: divmod(x, 0.7), None),
    ("rdivmod", lambda x, m, i, s, b: divmod(2.0, x), None),
    ("divmod_int", lambda x, m, i, s, b: divmod(i, 3), None),
    ("rdivmod_int", lambda x, m, i, s, b: divmod(7, i), None),
    ("lshift", lambda x, m, i, s, b: i << 2, None),
    ("rshift", lambda x, m, i, s, b: i >> 1, None),
    ("rlshift", lambda x, m, i, s, b: 3 << (i & 3), None),
    ("rrshift", lambda x, m, i, s, b: 64 >> (i & 3), None),
    ("nonzero_size", lambda x, m, i, s, b: b.nonzero(size=int(B.sum()) + 2, fill_value=-1),
     lambda x, m, i, s, b: tuple(np.concatenate([k, [-1, -1]]) for k in b.nonzero())),
]
NAMES = [c[0] for c in CASES]
assert len(set(NAMES)) == len(NAMES)


def _reference(name):
    _, f, ref = CASES[NAMES.index(name)]
    return (ref or f)(*DATA)


def _check(name, got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (name, got)
        for g, w in zip(got, want, strict=True):
            _check(name, g, w)
        return
    want = np.asarray(want)
    assert isinstance(got, ember.Array), (name, type(got))
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == dtypes.canonicalize(want.dtype, warn=False), (name, got.dtype, want.dtype)
    got = np.asarray(got)
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


# Tracer.trace is the tracer's Trace (a slot), so tracers have no .trace() method yet.
JIT_NAMES = NAMES


@functools.cache
def _jitted_results():
    return ember.jit(lambda *a: {n: f(*a) for n, f, _ in CASES if n in JIT_NAMES})(*DATA)


@pytest.mark.parametrize("name", JIT_NAMES)
def test_method_under_jit(name):
    _check(name, _jitted_results()[name], _reference(name))


def test_trace_method_under_jit():
    np.testing.assert_allclose(np.asarray(ember.jit(lambda m: m.trace())(M)), np.trace(M))


# Eagerly, every method is checked once (its first case): each call compiles a program.
EAGER = [n for k, n in enumerate(NAMES)
         if n.split("_")[0] not in {m.split("_")[0] for m in NAMES[:k]}]


@pytest.mark.parametrize("name", EAGER)
def test_method_eager(name):
    _, f, _ = CASES[NAMES.index(name)]
    _check(name, f(*[ember.device_put(a) for a in DATA]), _reference(name))


def _properties(x):
    return (x.shape, x.ndim, x.size, x.dtype, x.nbytes, x.itemsize, len(x))


def test_properties():
    for a in DATA:
        want = _properties(a)
        assert _properties(ember.device_put(a)) == want
        seen = []
        ember.jit(lambda t, seen=seen: seen.append(_properties(t)) or t).lower(a)
        assert seen == [want]
    assert ember.device_put(X).dtype == np.float32 and ember.device_put(B).itemsize == 1


def test_eager_only_methods():
    x, b, i = (ember.device_put(a) for a in (X, B, I))
    assert x.item(5) == X.item(5) and isinstance(x.item(5), float)
    assert x.item((1, 2)) == X.item((1, 2))
    assert i.item(3) == I.item(3) and isinstance(i.item(3), int)
    assert x.tolist() == X.tolist() and b.tolist() == B.tolist()
    scalar = ember.device_put(np.float32(1.5))
    assert scalar.item() == 1.5 and scalar.tolist() == 1.5
    for got, want in zip(b.nonzero(), B.nonzero(), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    rows = list(x)
    assert len(rows) == len(X) and all(isinstance(r, ember.Array) for r in rows)
    for r, w in zip(rows, X, strict=True):
        assert r.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(r), w)
    assert (float(X[1, 2]) in x) == (float(X[1, 2]) in X) is True
    assert (123.0 in x) == (123.0 in X) is False
    assert len(x) == 3
    assert x.copy() is not x and np.array_equal(np.asarray(x.copy()), X)


def test_len_and_iter_of_0d():
    s = ember.device_put(np.float32(1))
    with pytest.raises(TypeError, match="unsized"):
        len(s)
    with pytest.raises(TypeError, match="0-d"):
        iter(s)


def test_iter_under_jit():
    out = ember.jit(lambda x: [r * 2 for r in x])(X)
    for got, want in zip(out, X * 2, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("use, error, match", [
    (lambda t: t.item(), ConcretizationError, r"\.item\(\).*argument 'x'"),
    (lambda t: t.tolist(), ConcretizationError, r"\.tolist\(\).*argument 'x'"),
    (lambda t: 1.0 in t, ConcretizationError, "argument 'x'"),
    (lambda t: t.nonzero(), EmberError, "size="),
], ids=["item", "tolist", "contains", "nonzero"])
def test_concrete_methods_under_jit_raise(use, error, match):
    with pytest.raises(error, match=match):
        ember.jit(lambda x: use(x)).lower(X)


def test_in_place_updates_raise():
    x = ember.device_put(X)
    with pytest.raises(TypeError, match=r"immutable.*x\.at\[idx\]\.set\(y\)"):
        x[0] = 1.0
    with pytest.raises(TypeError, match="immutable"):
        x.fill(0.0)
    np.testing.assert_array_equal(np.asarray(x), X)

    def f(t):
        t[0, 1] = 2.0
        return t
    with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)") as e:
        ember.jit(f).lower(X)
    assert isinstance(e.value, EmberError)


def test_unsupported_arguments_raise():
    x = ember.device_put(X)
    with pytest.raises(NotImplementedError, match="itemsize"):
        x.view(np.int8)
    with pytest.raises(NotImplementedError, match="bool"):
        ember.device_put(B).view(np.int8)
    with pytest.raises(EmberError, match="out="):
        x.sum(0, None, np.empty(4, np.float32))
    with pytest.raises(EmberError, match="out="):
        x.argmax(0, np.empty(4, np.int32))
    with pytest.raises(EmberError, match="order"):
        x.reshape(4, 3, order="Z")
    with pytest.raises(EmberError, match="two-dimensional"):
        _ = ember.device_put(S).mT
    with pytest.raises(EmberError, match="shape"):
        x.reshape()


def test_reflected_operators_match_operator_module():
    # each binary dunder and its reflected form, on an Array and a Python scalar
    i = ember.device_put(I)
    for op in (operator.lshift, operator.rshift):
        np.testing.assert_array_equal(np.asarray(op(i, 1)), op(I, 1))
        np.testing.assert_array_equal(np.asarray(op(1, i & 3)), op(1, I & 3))


def test_arrays_pickle_and_deepcopy_as_jax_arrays():
    import copy
    import pickle

    x = ember.jit(lambda a: a * 2)(np.arange(3, dtype=np.float32))
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, ember.Array) and y.dtype == np.float32 and not y.weak_type
    np.testing.assert_array_equal(np.asarray(y), np.arange(3) * 2)
    w = ember.jit(lambda: ember.numpy.asarray(1.5) * 2)()
    assert pickle.loads(pickle.dumps(w)).weak_type
    params = {"w": x, "layers": [x, 3]}
    c = copy.deepcopy(params)
    assert c["w"] is not x and c["layers"][1] == 3
    ember.jit(lambda a: a + 1, donate_argnums=0)(x)      # the copies keep their own buffers
    np.testing.assert_array_equal(np.asarray(c["w"]), np.arange(3) * 2)
    with pytest.raises(ember.errors.DonatedArrayError):
        pickle.dumps(x)
