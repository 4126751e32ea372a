"""Automatic dynamic shapes (ember.frontend.dynamic): a function called at new sizes along an
axis compiles once more, with the sizes dynamic, and that program serves later sizes only
when their programs are the same. Oracles: NumPy, and JAX's gradients."""

import functools
import threading
import time

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.numpy as enp
from ember.frontend import api, dynamic


@pytest.fixture
def compiles(monkeypatch):
    """The programs IREE was given, as (dynamic?, text), in order."""
    seen = []
    real = api.compile_mlir

    def counting(text, flags, **kw):
        seen.append(("?x" in text or "<?>" in text, text))
        return real(text, flags, **kw)
    monkeypatch.setattr(api, "compile_mlir", counting)
    return seen


def _mlp_numpy(ws, x):
    for w in ws:
        x = np.tanh(x @ w)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), x.mean(0)


RNG = np.random.default_rng(0)
WS = [RNG.standard_normal((32, 32)).astype(np.float32) * 0.3 for _ in range(2)]


def test_ragged_batches_compile_twice(compiles):
    @ember.jit
    def mlp(ws, x):
        for w in ws:
            x = enp.tanh(x @ w)
        return enn.softmax(x, -1), x.mean(0)

    sizes = [7, 11, 13, 64, 100, 5, 333]
    for n in sizes:
        x = RNG.standard_normal((n, 32)).astype(np.float32)
        probs, mean = mlp(WS, x)
        want = _mlp_numpy(WS, x)
        assert probs.shape == (n, 32)
        np.testing.assert_allclose(np.asarray(probs), want[0], rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(mean), want[1], rtol=2e-5, atol=1e-6)
    # the first size static, the second dynamic, every later size the dynamic program
    assert [d for d, _ in compiles] == [False, True]
    assert "tensor<?x32xf32>" in compiles[1][1]


def test_off_compiles_every_size(compiles):
    f = ember.jit(lambda x: x * 2, dynamic_shapes=False)
    for n in (3, 4, 5):
        np.testing.assert_array_equal(np.asarray(f(np.arange(n, dtype=np.float32))),
                                      np.arange(n) * 2)
    assert [d for d, _ in compiles] == [False] * 3


def test_config_off(compiles):
    ember.config.update("dynamic_shapes", False)
    try:
        f = ember.jit(lambda x: x + 1)
        for n in (3, 4, 5):
            f(np.zeros(n, np.float32))
    finally:
        ember.config.update("dynamic_shapes", True)
    assert [d for d, _ in compiles] == [False] * 3
    with pytest.raises(ValueError, match="dynamic_shapes must be True or False"):
        ember.config.update("dynamic_shapes", "yes")


def test_python_branch_on_a_size_is_not_reused(compiles):
    """A program that depends on the size beyond where the size is written (here a Python
    branch) is compiled for the size that changes it: the guard compares the programs."""
    @ember.jit
    def f(x):
        return x * 2.0 if x.shape[0] < 50 else x * 3.0

    for n, k in ((7, 2), (11, 2), (13, 2), (60, 3), (70, 3), (20, 2)):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), x * k)
    dyn = [d for d, _ in compiles]
    assert dyn[:2] == [False, True] and dyn.count(True) <= 2 and len(dyn) <= 4


def test_sizes_in_constants_and_reshapes():
    """The size as a constant (a mean's divisor, a Python int from ``x.shape``), flattened
    with another axis (a multiple of it), and an ``arange`` of it."""
    @ember.jit
    def f(x):
        n = x.shape[0]
        flat = x.reshape(-1)
        return (x - n, flat.mean(), flat.reshape(n * 2, 2).sum(1),
                x[:, 0] + enp.arange(n, dtype=np.float32))

    for n in (3, 5, 8, 17, 2):
        x = RNG.standard_normal((n, 4)).astype(np.float32)
        a, b, c, d = (np.asarray(v) for v in f(x))
        np.testing.assert_allclose(a, x - n, rtol=1e-6)
        np.testing.assert_allclose(b, x.mean(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c, x.reshape(n * 2, 2).sum(1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(d, x[:, 0] + np.arange(n), rtol=1e-6)


def test_tree_reduction_blocks_follow_the_size(compiles):
    """A long sum is split into blocks of 1024 (ember-tree-reductions): their count, a
    quarter of the rows here, is a dynamic size too, as long as no tail is left over."""
    f = ember.jit(lambda x: x.sum())
    for n in (512, 768, 1000, 1024):
        x = RNG.standard_normal((n, 256)).astype(np.float32)
        np.testing.assert_allclose(float(f(x)), x.astype(np.float64).sum(), rtol=1e-5,
                                   atol=1e-3)
    assert [d for d, _ in compiles] == [False, True]


def test_two_independent_sizes_and_a_shared_one():
    @ember.jit
    def f(x, y, labels):
        return x.sum(1)[:, None] * y.sum(1)[None, :], (x * labels[:, None]).sum(0)

    for n, m in ((3, 4), (5, 9), (6, 2), (10, 10), (4, 7)):
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        y = RNG.standard_normal((m, 3)).astype(np.float32)
        labels = RNG.standard_normal(n).astype(np.float32)
        a, b = f(x, y, labels)
        np.testing.assert_allclose(np.asarray(a), x.sum(1)[:, None] * y.sum(1)[None, :],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(b), (x * labels[:, None]).sum(0), rtol=1e-5,
                                   atol=1e-6)


def test_slices_and_concatenations_of_the_size(compiles):
    """``x[1:]``, ``x[::-1]`` and ``x[-1]`` write the size less one, a concatenation twice
    the size plus two: terms c n + d of it."""
    @ember.jit
    def f(x):
        return x[1:] - x[:-1], x[::-1], x[-1], enp.concatenate([x, x[:2], x])

    for n in (4, 6, 9, 5):
        x = RNG.standard_normal(n).astype(np.float32)
        a, b, c, d = (np.asarray(v) for v in f(x))
        np.testing.assert_allclose(a, np.diff(x), rtol=1e-6)
        np.testing.assert_array_equal(b, x[::-1])
        assert c == x[-1]
        np.testing.assert_array_equal(d, np.concatenate([x, x[:2], x]))
    assert [dyn for dyn, _ in compiles] == [False, True]


@pytest.mark.fast
def test_terms_of_a_size():
    symbols = {(7, 9): 0}
    assert dynamic._term(symbols, 28, 36) == (0, 4, 0)          # a flattened axis
    assert dynamic._term(symbols, 6, 8) == (0, 1, -1)           # a slice
    assert dynamic._term(symbols, 16, 20) == (0, 2, 2)          # a concatenation
    assert dynamic._term(symbols, 49, 81) is None               # the square: c = 16, d = -63
    assert dynamic._term(symbols, 7.5, 9) is None


def test_gradient_of_a_batch_loss(jax):
    """A training step's gradient at ragged batch sizes, against JAX's."""
    def loss(w, x, y):
        return ((enp.tanh(x @ w) - y) ** 2).mean()

    def jloss(w, x, y):
        return ((jax.numpy.tanh(x @ w) - y) ** 2).mean()
    step = ember.jit(ember.value_and_grad(loss))
    w = RNG.standard_normal((8, 3)).astype(np.float32)
    for n in (5, 9, 12, 31):
        x = RNG.standard_normal((n, 8)).astype(np.float32)
        y = RNG.standard_normal((n, 3)).astype(np.float32)
        v, g = step(w, x, y)
        jv, jg = jax.value_and_grad(jloss)(w, x, y)
        np.testing.assert_allclose(float(v), float(jv), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-4, atol=1e-6)


def test_threads_calling_new_sizes():
    f = ember.jit(lambda x: enp.sin(x) * x.shape[0])
    sizes = [3, 4, 5, 6, 7, 8, 9, 10]
    errors = []

    def call(n):
        try:
            x = np.linspace(0, 1, n, dtype=np.float32)
            np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * n, rtol=1e-5)
        except Exception as e:      # noqa: BLE001 (reported below, with the size)
            errors.append((n, e))
    threads = [threading.Thread(target=call, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.fast
def test_template_rejects_other_numbers():
    a = "func.func @f(%arg0: tensor<7x4xf32>) { %c = arith.constant 7.000000e+00 : f32 }"
    b = "func.func @f(%arg0: tensor<9x4xf32>) { %c = arith.constant 9.000000e+00 : f32 }"
    t = dynamic.generalize(a, b, [(7, 9)])
    assert t is not None
    assert t.match(b.replace("9", "12")) == {0: 12}
    assert t.match(b.replace("9x4", "12x4")) is None          # a constant not the size
    assert t.match(b.replace("x4x", "x5x")) is None
    assert t.match(b.replace("9", "12").replace("tensor<12x4xf32>",
                                                 "tensor<12x4xf32>, %arg1: i1")) is None
    # a number that differs but is no multiple of the size: no template
    c = b.replace("9.000000e+00", "8.000000e+00")
    assert dynamic.generalize(a, c, [(7, 9)]) is None


def test_empty_arrays_compile_on_their_own(compiles):
    f = ember.jit(lambda x: (x * 2).sum(0))
    for n in (3, 5, 0, 4):
        x = np.ones((n, 2), np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), (x * 2).sum(0))
    assert [d for d, _ in compiles] == [False, True, False]


def test_a_hot_size_gets_its_own_program(compiles, monkeypatch):
    """After HOT_CALLS calls through the dynamic program, a size is compiled statically in
    the background and its calls move to that program."""
    monkeypatch.setattr(api, "HOT_CALLS", 5)
    f = ember.jit(lambda x: enp.cos(x) + x.shape[0])
    for n in (6, 9):
        f(np.zeros(n, np.float32))
    x = np.linspace(0, 3, 13, dtype=np.float32)
    for _ in range(5):
        np.testing.assert_allclose(np.asarray(f(x)), np.cos(x) + 13, rtol=1e-6)
    deadline = time.monotonic() + 120
    while len(compiles) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [d for d, _ in compiles] == [False, True, False]
    assert "tensor<13xf32>" in compiles[2][1]
    for _ in range(3):      # (on whichever program the size has by now: the same values)
        np.testing.assert_allclose(np.asarray(f(x)), np.cos(x) + 13, rtol=1e-6)


def test_dynamic_axes_compile_dynamic_from_the_first_call(compiles):
    @functools.partial(ember.jit, dynamic_axes={"x": 0})
    def mlp(ws, x):
        for w in ws:
            x = enp.tanh(x @ w)
        return enn.softmax(x, -1), x.mean(0)

    for n in (7, 3, 40):
        x = RNG.standard_normal((n, 32)).astype(np.float32)
        probs, mean = mlp(WS, x)
        want = _mlp_numpy(WS, x)
        np.testing.assert_allclose(np.asarray(probs), want[0], rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(mean), want[1], rtol=2e-5, atol=1e-6)
    assert [d for d, _ in compiles] == [True]


def test_dynamic_axes_that_do_not_generalize_warn(compiles):
    f = ember.jit(lambda x: x * 2.0 if x.shape[0] < 10 else x * 3.0, dynamic_axes={0: 0})
    x = np.arange(7, dtype=np.float32)
    with pytest.warns(UserWarning, match="dynamic_axes") as caught:
        np.testing.assert_array_equal(np.asarray(f(x)), x * 2)
    assert caught[0].filename == __file__          # the warning points at the call
    assert [d for d, _ in compiles] == [False]


def test_bad_dynamic_axes():
    with pytest.raises(ValueError, match="dynamic_shapes=False"):
        ember.jit(lambda x: x, dynamic_axes={"x": 0}, dynamic_shapes=False)
    with pytest.raises(TypeError, match="must be a dict"):
        ember.jit(lambda x: x, dynamic_axes=[0])
    with pytest.raises(TypeError, match="must be ints"):
        ember.jit(lambda x: x, dynamic_axes={"x": "batch"})
    f = ember.jit(lambda x: x + 1, dynamic_axes={"x": 2})
    with pytest.raises(ember.errors.ArgumentError, match="no axis 2"):
        f(np.zeros((3, 4), np.float32))


def test_dynamic_axes_the_function_refuses_at_other_sizes(compiles):
    """The other sizes ember traces at (twice the named ones) may not suit the function
    (here they break broadcasting): a warning, and the call's own sizes compile."""
    f = ember.jit(lambda x, y: x + y, dynamic_axes={"x": 1})
    x, y = np.ones((4, 3), np.float32), np.arange(3, dtype=np.float32)
    with pytest.warns(UserWarning, match="dynamic_axes.*cannot be broadcast"):
        np.testing.assert_array_equal(np.asarray(f(x, y)), x + y)
    assert [d for d, _ in compiles] == [False]


def test_complex_arrays(compiles):
    """A type with brackets of its own (``tensor<?xcomplex<f32>>``) in the signature and in
    the sizes read from it."""
    f = ember.jit(lambda z: z * z + 1j)
    for n in (3, 5, 7):
        z = (np.arange(n) + 1j * np.arange(n, 0, -1)).astype(np.complex64)
        np.testing.assert_allclose(np.asarray(f(z)), z * z + 1j, rtol=1e-6)
    assert [d for d, _ in compiles] == [False, True]


@pytest.mark.fast
def test_symbolic_sizes_bind_and_check():
    from ember.core import SymbolicDim, bind_sizes
    b, n = ember.symbolic_shape("b, n")
    assert isinstance(b, SymbolicDim) and (b, n) == ("b", "n")
    want = [(b, 4), (b,), (n,)]
    assert bind_sizes([(3, 4), (3,), (5,)], want, {}, ["x", "y", "z"]) == {"b": 3, "n": 5}
    with pytest.raises(ValueError, match=r"y must be of shape \[b\], b = 3 \(from x\), got \[2\]"):
        bind_sizes([(3, 4), (2,), (5,)], want, {}, ["x", "y", "z"])
    with pytest.raises(ValueError, match=r"x must be of shape \[b,4\], got \[3,5\]"):
        bind_sizes([(3, 5), (3,), (5,)], want, {}, ["x", "y", "z"])
    rules = {"b": {"min": 2, "multiple_of": 1}, "n": {"min": 1, "multiple_of": 4}}
    with pytest.raises(ValueError, match=r"n = 5 \(from z\) must be at least 1 and a multiple "
                                         "of 4"):
        bind_sizes([(3, 4), (3,), (5,)], want, rules, ["x", "y", "z"])
    with pytest.raises(ValueError, match=r"b = 1 \(from x\) must be at least 2"):
        bind_sizes([(1, 4), (1,), (8,)], want, rules, ["x", "y", "z"])
    assert dynamic._term_text("b", dynamic.Fraction(2), 1) == "2*b+1"
    assert dynamic._term_text("b", dynamic.Fraction(1, 4), -1) == "b/4-1"


def test_a_refused_dynamic_program_is_not_replaced_by_a_static_one(monkeypatch):
    """Should IREE refuse the dynamic program, the sizes compile on their own. (Its dispatch
    regions once made ``compile_linalg`` lower the program again, statically, and that
    executable then served other sizes as if dynamic.)"""
    from ember.errors import CompileError
    real, seen = api.compile_mlir, []

    def refusing(text, flags, **kw):
        dynamic_text = "?x" in text
        seen.append((dynamic_text, "flow.dispatch.region" in text))
        if dynamic_text:
            raise CompileError("refused by the test")
        return real(text, flags, **kw)
    monkeypatch.setattr(api, "compile_mlir", refusing)
    f = ember.jit(lambda x: enn.softmax(x * 2, -1))
    for n in (7, 11, 13):
        x = RNG.standard_normal((n, 32)).astype(np.float32)
        e = np.exp(2 * x - (2 * x).max(-1, keepdims=True))
        np.testing.assert_allclose(np.asarray(f(x)), e / e.sum(-1, keepdims=True), rtol=2e-5,
                                   atol=1e-6)
    assert seen[1] == (True, True)      # the dynamic program, with its dispatch region
    assert [d for d, _ in seen] == [False, True, False, False]
