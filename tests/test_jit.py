"""ember.jit: caching, pytrees, static arguments, AOT stages, concretization and bad input."""

from __future__ import annotations

import collections
import dataclasses
import logging
import re
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember import errors, tree_util

X = np.arange(12, dtype=np.float32).reshape(3, 4)


class Counter:
    """Counts how often a function is traced (its Python body runs only when tracing)."""

    def __init__(self, fun):
        self.fun, self.calls = fun, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fun(*args, **kwargs)


def test_issue_example_matches_numpy():
    @ember.jit
    def predict(params, x):
        w, b = params
        return enp.tanh(x @ w + b).sum(axis=-1)

    rng = np.random.default_rng(1)
    params = (rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32))
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = predict(params, x)
    assert isinstance(y, ember.Array) and y.shape == (8,) and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), np.tanh(x @ params[0] + params[1]).sum(-1),
                               rtol=1e-5, atol=1e-5)
    lowered = predict.lower(params, x)
    assert '"ember.dot_general"' in lowered.as_text("ember")
    linalg = lowered.as_text("linalg")
    assert "linalg.matmul" in linalg and "ember." not in linalg


def test_cache_hit_does_not_retrace_and_new_shape_does():
    counter = Counter(lambda x: x * 2.0)
    f = ember.jit(counter)
    f(X)
    f(X)
    f(ember.device_put(X))
    assert counter.calls == 1
    f(X[:2])
    assert counter.calls == 2
    f(X.astype(np.int32))
    assert counter.calls == 3
    ember.clear_caches()
    f(X)
    assert counter.calls == 4


def test_repeated_array_calls_take_the_last_signature_path_and_leave_it_correctly():
    # A call with the last call's Array signature skips flattening and the cache key
    # (JitFunction._last); any other signature, weak type or device takes the general path.
    counter = Counter(lambda x, y: x * 2.0 + y)
    f = ember.jit(counter)
    a, b = ember.device_put(X), ember.device_put(X + 1)
    first = f(a, b)
    assert f._last is not None and counter.calls == 1
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(a, b)), np.asarray(first))
    assert counter.calls == 1
    ints = ember.device_put(X.astype(np.int32))
    np.testing.assert_allclose(np.asarray(f(ints, ints)), X.astype(np.int32) * 3.0)
    weak = f(a, ember.jit(lambda: enp.full(X.shape, 1.0))())      # a weak y: its own key
    np.testing.assert_allclose(np.asarray(weak), X * 2 + 1)
    np.testing.assert_allclose(np.asarray(f(X, X)), X * 3)          # host arrays
    assert counter.calls == 3
    ember.clear_caches()
    assert f._last is None
    np.testing.assert_array_equal(np.asarray(f(a, b)), np.asarray(first))


def test_arguments_are_never_written():
    """Arrays are immutable: a program that updates an argument (dynamic_update_slice, an
    .at[] update, a sort, a loop carrying it) leaves the caller's array as it was, and a
    result that is the argument itself comes back unchanged. IREE wrote into the argument's
    buffer (iree-org/iree#16168) until ember-protect-arguments."""
    lax = ember.lax
    x0 = np.array([[3.0, 1, 2], [0, 5, 4]], np.float32)
    row = np.full((1, 3), 9.0, np.float32)
    updates = {
        "dynamic_update_slice": lambda x: lax.dynamic_update_slice(x, row, (1, 0)),
        "at_constant": lambda x: x.at[0].set(7.0),
        "at_traced": lambda x: x.at[enp.argmax(x[:, 0])].add(1.0),
        "sort": lambda x: enp.sort(x, axis=1),
        "argsort": lambda x: enp.argsort(x, axis=0),
        "fori": lambda x: lax.fori_loop(0, 2, lambda i, c: lax.dynamic_update_slice(
            c, row, (i, 0)), x),
    }
    for name, update in updates.items():
        x = ember.device_put(x0)
        want = update(enp.asarray(x0))                 # eagerly: ember's own value
        got, same = ember.jit(lambda a, u=update: (u(a), a))(x)
        np.testing.assert_array_equal(np.asarray(x), x0, err_msg=name)
        np.testing.assert_array_equal(np.asarray(same), x0, err_msg=name)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=name)
    ex = enp.asarray(x0)
    np.testing.assert_array_equal(np.asarray(updates["sort"](ex)), np.sort(x0, axis=1))
    np.testing.assert_array_equal(np.asarray(updates["at_constant"](ex))[0], [7, 7, 7])
    np.testing.assert_array_equal(np.asarray(ex), x0)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_the_copy_of_an_argument_written_into_is_bit_exact(dtype, config_value):
    """The copy ember-protect-arguments makes (an elementwise kernel) keeps every bit: NaN
    payloads, signalling NaNs, -0.0, subnormals and the extremes of integers."""
    config_value("enable_x64", True)
    dt = np.dtype(ember.dtypes.canonicalize(dtype))
    bits = np.arange(-40, 40, dtype=np.int64) * 0x0123456789ABCDEF
    bits = np.concatenate([bits, [0, -1, 1, 2 ** 62, -2 ** 63]])
    if dt == np.bool_:
        x0 = (bits % 3 == 0)
    else:
        x0 = bits.astype(f"u{dt.itemsize}").view(dt)    # every pattern, NaNs of all kinds
    x0 = x0.reshape(5, 17)
    got, same = ember.jit(lambda a: (a.at[1].set(a[0]), a))(x0)
    want = x0.copy()
    want[1] = x0[0]
    raw = f"u{dt.itemsize}"
    np.testing.assert_array_equal(np.asarray(same).view(raw), x0.view(raw))
    np.testing.assert_array_equal(np.asarray(got).view(raw), want.view(raw))


def test_weak_type_is_part_of_the_key():
    counter = Counter(lambda x: x + 1)
    f = ember.jit(counter)
    assert f(1.0).weak_type
    assert not f(np.float32(1.0)).weak_type
    assert counter.calls == 2


def test_static_argnums_and_argnames():
    counter = Counter(lambda x, n, scale=1.0: x ** n * scale)
    f = ember.jit(counter, static_argnums=1, static_argnames="scale")
    np.testing.assert_allclose(np.asarray(f(X, 2)), X ** 2)
    np.testing.assert_allclose(np.asarray(f(X, 2, scale=3.0)), X ** 2 * 3.0)
    f(X, 2)
    assert counter.calls == 2
    np.testing.assert_allclose(np.asarray(f(X, 3)), X ** 3, rtol=1e-6)
    assert counter.calls == 3
    g = ember.jit(lambda x, n: x * n, static_argnames="n")
    np.testing.assert_allclose(np.asarray(g(X, n=4)), X * 4)
    np.testing.assert_allclose(np.asarray(g(X, 4)), X * 4)


def test_equal_static_values_of_different_types_trace_apart():
    # 1 == 1.0 == True == np.int32(1), but each traces its own program (as in JAX).
    f = ember.jit(lambda x, n: x + n, static_argnums=1)
    xi = np.arange(3, dtype=np.int32)
    results = [f(xi, v) for v in (1, 1.0, True, np.int32(1))]
    assert [r.dtype for r in results] == [np.int32, np.float32, np.int32, np.int32]
    assert [r.weak_type for r in results] == [False, True, False, False]
    g = ember.jit(lambda x, n: x * 2 if isinstance(n, bool) else x, static_argnames="n")
    np.testing.assert_array_equal(np.asarray(g(xi, n=1)), xi)
    np.testing.assert_array_equal(np.asarray(g(xi, n=True)), xi * 2)


def test_static_argument_default():
    f = ember.jit(lambda x, n=2: x * n, static_argnames="n")
    np.testing.assert_allclose(np.asarray(f(X)), X * 2)
    np.testing.assert_allclose(np.asarray(f(X, 3)), X * 3)


def test_unhashable_static_argument():
    f = ember.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(errors.ArgumentError, match="static argument 'shape'.*unhashable.*list"):
        f(X, [4, 3])
    assert f(X, (4, 3)).shape == (4, 3)


def test_decorator_with_options():
    @ember.jit(static_argnames=("axis",))
    def total(x, axis):
        return x.sum(axis=axis)

    np.testing.assert_allclose(np.asarray(total(X, axis=0)), X.sum(0))
    np.testing.assert_allclose(np.asarray(total(X, axis=1)), X.sum(1))


Point = collections.namedtuple("Point", ["x", "y"])


@tree_util.register_pytree_node_class
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


def test_pytrees_in_and_out():
    @ember.jit
    def f(tree):
        return {"sum": tree["a"] + tree["p"].y, "pair": [tree["p"].x * 2, None],
                "box": Box(tree["box"].value - 1, tree["box"].label)}

    tree = {"a": X, "p": Point(X[0], X[1]), "box": Box(X, "lbl")}
    out = f(tree)
    np.testing.assert_allclose(np.asarray(out["sum"]), X + X[1])
    np.testing.assert_allclose(np.asarray(out["pair"][0]), X[0] * 2)
    assert out["pair"][1] is None
    assert isinstance(out["box"], Box) and out["box"].label == "lbl"
    np.testing.assert_allclose(np.asarray(out["box"].value), X - 1)


def test_array_passed_back_is_not_copied_to_host():
    f = ember.jit(lambda x: x + 1.0)
    a = f(X)
    b = f(a)   # a is an ember.Array: handed to IREE as its buffer
    assert a._host is None
    np.testing.assert_allclose(np.asarray(b), X + 2)


def test_captured_constants_and_scalars():
    table = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    f = ember.jit(lambda x: x * table + 0.5)
    np.testing.assert_allclose(np.asarray(f(X)), X * table + 0.5)


def test_nested_jit_emits_call_and_closure_capture():
    inner = ember.jit(lambda a, b: a * b)

    @ember.jit
    def outer(x):
        y = x + 1
        g = ember.jit(lambda z: z - y)      # closes over a tracer of the outer trace
        return inner(x, y) + g(x)

    np.testing.assert_allclose(np.asarray(outer(X)), X * (X + 1) + (X - (X + 1)))
    text = outer.lower(X).as_text("ember")
    assert text.count('"ember.call"') == 2


def test_stages_as_text():
    lowered = ember.jit(lambda x: enp.exp(x) + 0 * x).lower(ember.ShapeDtypeStruct((4,),
                                                                                   np.float32))
    ember_text = lowered.as_text("ember")
    assert '"ember.exp"' in ember_text
    assert "linalg.generic" in lowered.as_text("linalg")
    assert "math.exp" in lowered.as_text("linalg")
    with pytest.raises(ValueError, match="unknown stage"):
        lowered.as_text("llvm")
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(np.ones(4, np.float32))), np.e, rtol=1e-6)


def test_compiled_takes_the_arguments_but_the_static_ones():
    # As jax.jit(f, static_argnums=...).lower(...).compile(): the static values are compiled in.
    f = ember.jit(lambda a, n, b, m: a * n + b * m, static_argnums=(1, 3))
    compiled = f.lower(X, 5, X, 2).compile()
    np.testing.assert_allclose(np.asarray(compiled(X, X)), X * 7)
    with pytest.raises(errors.ArgumentError, match=r"leave out the static arguments .*\[1, 3\]"):
        compiled(X, 5, X, 2)
    by_name = ember.jit(lambda a, n: a * n, static_argnames="n").lower(X, n=3).compile()
    np.testing.assert_allclose(np.asarray(by_name(X)), X * 3)


def test_bad_static_and_donate_argnums():
    one = lambda x: x                                           # noqa: E731
    with pytest.raises(errors.ArgumentError, match=r"static_argnums=\(-3,\), but takes 1"):
        ember.jit(one, static_argnums=-3)
    with pytest.raises(errors.ArgumentError, match="static_argnums of <lambda> must be ints"):
        ember.jit(one, static_argnums="a")
    with pytest.raises(errors.DonationError, match=r"donate_argnums=\(4,\), but takes 1"):
        ember.jit(one, donate_argnums=4)
    # Negative numbers count from the last positional parameter, as in JAX.
    np.testing.assert_allclose(np.asarray(ember.jit(lambda x, n: x * n, static_argnums=-1)(X, 3)),
                               X * 3)


def test_shapes_no_array_can_have():
    with pytest.raises(errors.ArgumentError, match="argument 'v' of <lambda>: shape \\(-2,\\) "
                       "has a negative dimension"):
        ember.jit(lambda v: v).lower(ember.ShapeDtypeStruct((-2,), np.float32))
    # IREE compiled a program with more elements than an int64 byte count for ever.
    with pytest.raises(errors.TracingError, match="(?s)more than any array can hold.*test_jit.py"):
        ember.jit(lambda: enp.zeros((2**40, 2**40), np.float32).sum()).lower()
    with pytest.raises(errors.ArgumentError, match="axis_size must be a non-negative int"):
        ember.vmap(lambda a: a, in_axes=None, axis_size=-1)(X)


def test_compiled_rejects_other_signature():
    compiled = ember.jit(lambda x: x + 1).lower(X).compile()
    with pytest.raises(errors.ArgumentError, match="f32\\[3,4\\].*f32\\[4\\]"):
        compiled(np.ones(4, np.float32))


@pytest.mark.parametrize("use", [
    lambda x: bool(x > 0),
    lambda x: int(x.sum()),
    lambda x: float(x[0, 0]),
    lambda x: enp.zeros(x.sum().astype(np.int32)),
    lambda x: x if x[0, 0] > 1 else -x,
    lambda x: x.reshape(x[0, 0].astype(np.int32)),
    lambda x: x.sum(axis=x[0, 0].astype(np.int32)),
    lambda x: enp.expand_dims(x, x[0, 0].astype(np.int32)),
    lambda x: enp.moveaxis(x, x[0, 0].astype(np.int32), 0),
    lambda x: enp.broadcast_to(x, x[0, 0].astype(np.int32)),
    lambda x: enp.linalg.norm(x, axis=x[0, 0].astype(np.int32)),
], ids=["bool", "int", "float", "shape_from_value", "if", "reshape", "axis", "expand_dims",
        "moveaxis", "broadcast_to", "norm_axis"])
def test_concretization_error_names_argument(use):
    def fun(x, scale):
        return use(x * scale)

    with pytest.raises(errors.ConcretizationError) as info:
        ember.jit(fun)(X, 2.0)
    msg = str(info.value)
    assert "argument 'x'" in msg and "argument 'scale'" in msg
    assert "static_argnames" in msg and "test_jit.py" in msg


def test_static_argument_fixes_concretization():
    f = ember.jit(lambda x, n: x * n if n > 1 else x, static_argnames="n")
    np.testing.assert_allclose(np.asarray(f(X, 3)), X * 3)


def test_non_array_argument():
    with pytest.raises(errors.ArgumentError, match="argument 'x'.*str.*static"):
        ember.jit(lambda x: x)("hello")
    with pytest.raises(errors.ArgumentError, match=re.escape("argument 'p'[1]")):
        ember.jit(lambda p: p[0])((X, object()))


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError):
        ember.jit(lambda x, y: x + y)(X)
    with pytest.raises(errors.ArgumentError, match="takes 1 positional"):
        ember.jit(lambda x: x)(X, X)


def test_unsupported_dtype():
    with pytest.raises(errors.ArgumentError, match="datetime64"):
        ember.jit(lambda x: x)(np.zeros(3, "datetime64[s]"))


@pytest.mark.parametrize("dtype_of", [lambda x, n: n, lambda x, n: np.asarray(x)[0]])
def test_an_array_is_no_dtype(dtype_of):
    # NumPy 1 took an array's dtype here; JAX and ember refuse (a traced int under jit).
    with pytest.raises(errors.UnsupportedDtypeError, match="array .*passed as a dtype"):
        ember.jit(lambda x, n: x.astype(dtype_of(X, n)))(X, 1)
    with pytest.raises(errors.UnsupportedDtypeError, match="array .*passed as a dtype"):
        enp.asarray(X).astype(enp.asarray(np.int8(1)))
    assert ember.jit(lambda x: x.astype(np.int8(1).dtype))(X).dtype == np.int8


def test_bad_shapes_give_tracing_error_with_source_line():
    with pytest.raises(errors.TracingError) as info:
        ember.jit(lambda a, b: a + b)(np.ones((2, 3), np.float32), np.ones((4,), np.float32))
    assert "test_jit.py" in str(info.value) and "(2, 3)" in str(info.value)
    with pytest.raises(errors.TracingError, match=r"ember.dot_general.*f32\[2,3\], f32\[4,5\]"):
        ember.jit(lambda a, b: ember.lax.dot_general(a, b, (((1,), (0,)), ((), ()))))(
            np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))


def test_x64_is_off_by_default_and_warns_once():
    with pytest.warns(UserWarning, match="float64 values are computed as float32"):
        ember.dtypes._warned_x64.discard(np.dtype("float64"))
        y = ember.jit(lambda x: x * 2)(np.ones(3))
    assert y.dtype == np.float32


def test_enable_x64():
    ember.config.update("enable_x64", True)
    try:
        y = ember.jit(lambda x: x * 2)(np.arange(3, dtype=np.float64) / 3)
        assert y.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(y), np.arange(3) / 3 * 2)
        assert ember.jit(lambda x: x + 1)(np.int64(2 ** 40)).dtype == np.int64
    finally:
        ember.config.update("enable_x64", False)


def test_a_traced_option_clears_the_jit_caches_and_others_do_not():
    # ember.config imports nothing above it: the frontend registers this on import.
    f = ember.jit(lambda x: x * 2)
    f(np.ones(3, np.float32))
    cached = len(f._cache)
    assert cached > 0
    ember.config.update("donation_strict", ember.config.donation_strict)
    assert len(f._cache) == cached
    ember.config.update("enable_x64", False)
    assert len(f._cache) == 0


def test_an_unknown_default_backend_fails_at_update():
    with pytest.raises(ember.errors.TargetOptionError, match="unknown backend 'nope'"):
        ember.config.update("default_backend", "nope")
    assert ember.config.default_backend == "cpu"


GOOD_IR = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.exp %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


@pytest.mark.parametrize("text, flags, message", [
    # IREE itself would crash (SIGSEGV) on an op of an unknown dialect.
    (GOOD_IR.replace("math.exp %a : tensor<4xf32>",
                     '"foo.bar"(%a) : (tensor<4xf32>) -> tensor<4xf32>'), None,
     "unregistered dialect"),
    (GOOD_IR.replace("%a : tensor<4xf32>\n  return", "%zz : tensor<4xf32>\n  return"), None,
     "undeclared SSA value"),
    (GOOD_IR, ("--iree-hal-target-device=nosuch",), 'unregistered device alias "nosuch"'),
    ("module {}", None, "could not write the compiled module"),
], ids=["unknown-dialect", "bad-ssa", "iree-pipeline-failure", "no-function"])
def test_compile_errors_are_ember_errors(text, flags, message):
    from ember.backends import compiler, cpu
    with pytest.raises(errors.CompileError, match=message) as info:
        compiler.compile_mlir(text, flags or cpu.compiler_flags(), use_cache=False)
    with open(info.value.ir_path) as f:
        assert f.read() == text


# IREE 3.13 segfaults (in MaterializeDeviceEncoding) on a broadcast row as a matmul's lhs at
# O3 with data tiling; ember's own lowering puts a barrier there (tests/test_linalg.py).
CRASHING_IR = """#row = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<32x32xf32>, %b: tensor<1x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %rows = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = linalg.matmul ins(%rows, %x : tensor<32x32xf32>, tensor<32x32xf32>)
      outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}"""


def test_an_iree_crash_is_a_compile_error_and_fallbacks_are_tried():
    """IREE runs in a child process: its segfault is an ember error naming the crash, this
    process goes on compiling, and the fallback flags (no O3) compile the program."""
    from ember.backends import compiler, cpu
    with pytest.raises(errors.CompileError, match="IREE crashed .signal SIGSEGV.") as info:
        compiler.compile_mlir(CRASHING_IR, cpu.compiler_flags(), use_cache=False)
    with open(info.value.ir_path) as f:
        assert f.read() == CRASHING_IR
    vmfb = compiler.compile_mlir(CRASHING_IR, cpu.compiler_flags(), use_cache=False,
                                 fallbacks=cpu.fallback_flags())
    import iree.runtime as rt
    config = rt.Config("local-sync")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    rng = np.random.default_rng(0)
    x, b = rng.standard_normal((32, 32), np.float32), rng.standard_normal((1, 32), np.float32)
    got = np.asarray(ctx.modules.module["main"](x, b))
    np.testing.assert_allclose(got, np.broadcast_to(b, (32, 32)) @ x, rtol=1e-5, atol=1e-5)


def test_a_crash_after_other_compiles_is_tried_in_a_fresh_worker(monkeypatch):
    """IREE keeps state between the compiles of one process (a full SVD's derivative crashed
    a worker that had compiled other programs, and compiled in a fresh one): a crash in a
    worker with earlier compiles is compiled again in a newly started worker, with the same
    flags, before it is IREE's failure; a crash in a fresh worker is not tried again."""
    from ember.backends import compiler, cpu
    compiler.stop_worker()
    compiler.compile_mlir(GOOD_IR, cpu.compiler_flags(), use_cache=False)
    started, init = [], compiler._Worker.__init__
    monkeypatch.setattr(compiler._Worker, "__init__",
                        lambda self, *a, **k: started.append(1) or init(self, *a, **k))
    with pytest.raises(errors.CompileError, match="IREE crashed .signal SIGSEGV."):
        compiler.compile_mlir(CRASHING_IR, cpu.compiler_flags(), use_cache=False)
    assert len(started) == 1        # the fresh worker, whose crash is the error
    with pytest.raises(errors.CompileError, match="IREE crashed .signal SIGSEGV."):
        compiler.compile_mlir(CRASHING_IR, cpu.compiler_flags(), use_cache=False)
    assert len(started) == 2        # a new worker after the crash, and no other


def test_compile_worker_is_replaced_after_its_share_of_compiles(monkeypatch):
    """IREE leaks memory per compile: after WORKER_COMPILES compiles a new child takes over
    (and the old one has exited)."""
    from ember.backends import compiler, cpu
    compiler.stop_worker()
    monkeypatch.setattr(compiler, "WORKER_COMPILES", 2)
    procs, heads = [], set()
    for i in range(3):
        heads.add(compiler.compile_mlir(GOOD_IR + f"\n// {i}", cpu.compiler_flags(),
                                        use_cache=False)[:16])
        procs.append(compiler._workers[()][0].proc)
    assert procs[0] is procs[1] is not procs[2] and procs[0].poll() == 0
    assert len(heads) == 1


def test_bad_compiler_flag():
    from ember.backends import compiler
    with pytest.raises(errors.CompileError, match="no-such-flag"):
        compiler.compile_mlir(GOOD_IR, ("--no-such-flag",), use_cache=False)


def test_no_leak_messages_at_exit():
    code = ("import numpy as np, ember; f = ember.jit(lambda x: x + 1); "
            "print(np.asarray(f(np.ones(2, np.float32))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "[2. 2.]" in proc.stdout
    assert "leak" not in proc.stderr.lower(), proc.stderr


LEAKS_AT_EXIT = """
import atexit, ctypes, glob, os, sys
atexit.register(lambda: print("user handler ran", file=sys.stderr))
import numpy as np
from iree.compiler import _mlir_libs, ir
import iree.runtime as rt
lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(_mlir_libs.__file__),
                                         "libnanobind-mlir.*"))[0])
lib._ZN8nanobind6detail17set_leak_warningsEb.argtypes = [ctypes.c_bool]
lib._ZN8nanobind6detail17set_leak_warningsEb(True)    # as a build with the report on
if sys.argv[1] == "ember":
    import ember
    print(np.asarray(ember.jit(lambda x: x + 1)(np.ones(2, np.float32))))
for obj in (ir.Context(), rt.get_device("local-sync")):
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))    # alive at exit: reported leaks
"""


def test_user_atexit_handlers_still_print_and_only_iree_leak_reports_are_hidden():
    """``import ember`` pointed stderr at /dev/null at exit, silencing every atexit
    handler registered before it. Now only the bindings' leak reports are off: a handler
    registered before ``import ember`` prints, and objects leaked on purpose from both
    bindings are not reported (without ember they are: the oracle run)."""
    def run(mode):
        return subprocess.run([sys.executable, "-c", LEAKS_AT_EXIT, mode],
                              capture_output=True, text=True, timeout=300)
    raw, quiet = run("raw"), run("ember")
    assert raw.returncode == 0 and quiet.returncode == 0, (raw.stderr, quiet.stderr)
    assert "user handler ran" in raw.stderr
    assert "_mlir.ir" in raw.stderr and "_runtime.HalDevice" in raw.stderr, raw.stderr
    assert "[2. 2.]" in quiet.stdout
    assert quiet.stderr == "user handler ran\n", quiet.stderr
def test_array_basics():
    a = ember.device_put(X)
    assert (a.shape, a.dtype, a.ndim, a.size) == ((3, 4), np.float32, 2, 12)
    assert a.block_until_ready() is a
    assert "Array(" in repr(a) and "11." in repr(a)
    np.testing.assert_array_equal(np.asarray(a + 1), X + 1)
    assert len(a) == 3 and float(a[1, 2]) == X[1, 2]


def test_donation_is_not_silently_ignored():
    f = ember.jit(lambda x: x + 1, donate_argnums=0)
    a = ember.device_put(X)
    np.testing.assert_allclose(np.asarray(f(a)), X + 1)
    assert a.is_deleted()       # donated (tests/test_memory.py tests donation in depth)


def test_compile_falls_back_to_other_flags_and_caches_it(tmp_path, monkeypatch):
    """IREE bugs hit by some optimization flags: other flag sets are tried, once."""
    from ember.backends import compiler, cpu
    monkeypatch.setattr(ember.config, "_values", dict(ember.config._values,
                                                      cache_dir=str(tmp_path)))
    broken = ("--iree-hal-target-device=nosuch",)
    vmfb = compiler.compile_mlir(GOOD_IR, broken, fallbacks=[cpu.compiler_flags()])
    assert vmfb[:16] == compiler.compile_mlir(GOOD_IR, cpu.compiler_flags())[:16]
    with pytest.raises(errors.CompileError, match="nosuch"):
        compiler.compile_mlir(GOOD_IR, broken, use_cache=False, fallbacks=[broken])
    calls = []
    monkeypatch.setattr(compiler, "_compile", lambda *a: calls.append(a))
    assert compiler.compile_mlir(GOOD_IR, broken, fallbacks=[cpu.compiler_flags()]) == vmfb
    assert not calls      # the fallback's module was cached under the first flags' key
    # Other fallbacks may make another module of a failing program: not the cached one.
    other = [cpu.fallback_flags()[-1]]
    assert compiler.read_cached(compiler.cache_key(GOOD_IR, broken, other)) is None
    assert compiler.read_cached(compiler.cache_key(GOOD_IR, broken,
                                                   [cpu.compiler_flags()])) == vmfb


def test_scheduling_failure_is_not_retried_with_other_flags(monkeypatch):
    """IREE's stream scheduling failed on a batched expm's loop ("failed to solve for
    timepoint coverage") under every flag set: the fallbacks, which change code generation,
    are not compiled (each is a whole compile); the caller lowers differently instead."""
    from ember.backends import compiler, cpu
    calls = []

    def failing(text, flags, **kw):
        calls.append(flags)
        raise errors.CompileError("error: failed to solve for timepoint coverage")
    monkeypatch.setattr(compiler, "_compile", failing)
    with pytest.raises(errors.CompileError, match="timepoint coverage"):
        compiler.compile_mlir(GOOD_IR, cpu.compiler_flags(), use_cache=False,
                              fallbacks=cpu.fallback_flags())
    assert calls == [cpu.compiler_flags()]


def test_log_compiles_names_each_compile_and_each_retry(monkeypatch, caplog, config_value):
    """``log_compiles`` (JAX's jax_log_compiles): each compile is logged at WARNING with the
    function, its argument types and its time; a compile IREE failed and ember retried says
    what IREE said and how the flags changed. Off, the same lines are at DEBUG."""
    from ember.backends import compiler
    real = compiler._compile

    def first_flags_fail(text, flags, **kw):
        if "--iree-opt-data-tiling=true" in flags:
            raise errors.CompileError("IREE failed.\nloc(x): error: refused for the test")
        return real(text, flags, **kw)
    monkeypatch.setattr(compiler, "_compile", first_flags_fail)
    config_value("compile_cache", False)
    config_value("log_compiles", True)

    def scaled_sum(x):
        return (x * 2).sum()
    with caplog.at_level(logging.DEBUG, logger="ember"):
        ember.jit(scaled_sum)(np.ones(4, np.float32))
    retry, done = [r for r in caplog.records if r.name == "ember"]
    assert retry.levelno == done.levelno == logging.WARNING
    assert "error: refused for the test; compiling again with -" in retry.getMessage()
    assert "+--iree-global-opt-data-tiling=true" in retry.getMessage()
    assert re.fullmatch(r"Compiled scaled_sum for cpu \(f32\[4\]\) in \d+\.\d\d s",
                        done.getMessage())
    config_value("log_compiles", False)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="ember"):
        ember.jit(scaled_sum)(np.ones(5, np.float32))
    assert [r.levelno for r in caplog.records if r.name == "ember"] == [logging.DEBUG] * 2


def test_a_damaged_cache_entry_is_compiled_again(tmp_path, monkeypatch):
    """A truncated or altered module in the compile cache had raised raw IREE errors on every
    later run: entries carry their SHA-256 and one that does not match is a miss."""
    from ember.backends import compiler, cpu
    monkeypatch.setattr(ember.config, "_values", dict(ember.config._values,
                                                      cache_dir=str(tmp_path)))
    flags = cpu.compiler_flags()
    good = compiler.compile_mlir(GOOD_IR, flags)
    (entry,) = tmp_path.rglob("*.vmfb")
    for damaged in (entry.read_bytes()[:100], entry.read_bytes()[:-1] + b"x", b""):
        entry.write_bytes(damaged)
        assert compiler.compile_mlir(GOOD_IR, flags) == good
        assert compiler.read_cached(compiler.cache_key(GOOD_IR, flags)) == good   # rewritten
    host = [f for f in flags if f.endswith("=host")]
    assert host, flags
    monkeypatch.setattr(compiler, "_host_cpu", lambda: "another machine's CPU")
    assert compiler.read_cached(compiler.cache_key(GOOD_IR, flags)) is None


def test_eval_shape_traces_without_compiling_as_jax():
    counter = Counter(lambda x, y: {"p": x @ y, "s": (x.sum(), 2 * x, x > 0)})
    spec = ember.ShapeDtypeStruct((3, 4), np.float32)
    out = ember.eval_shape(counter, spec, np.ones((4, 2), np.int32))
    shapes = tree_util.tree_map(lambda s: (s.shape, s.dtype.name), out)
    assert shapes == {"p": ((3, 2), "float32"),
                      "s": (((), "float32"), ((3, 4), "float32"), ((3, 4), "bool"))}
    assert counter.calls == 1
    weak = ember.eval_shape(lambda x: x * 2, 1.5)
    assert weak.weak_type and weak.dtype == np.float32 and "weak_type=True" in repr(weak)
    f = ember.jit(lambda x, n: enp.tile(x, n), static_argnums=1)
    assert f.eval_shape(X, 3).shape == (X.shape[0], 3 * X.shape[1])
    with pytest.raises(errors.TracingError):
        ember.eval_shape(lambda x: x @ x, spec)


def test_eval_shape_inside_jit_reads_traced_arguments():
    @ember.jit
    def f(x):
        s = ember.eval_shape(lambda y: y[:, None] * x, x)
        return enp.zeros(s.shape, s.dtype) + x

    v = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(v)), np.broadcast_to(v, (3, 3)))


def test_trace_args_info_out_info_as_jax():
    """jit(f).trace / Lowered / Compiled describe the arguments (static ones left out, the
    donated ones marked) and the outputs as JAX's stages do, with JAX as the oracle."""
    jax = pytest.importorskip("jax")

    def fun(x, n, y=1.0):
        return x * n, {"a": y + x.sum()}

    counter = Counter(fun)
    f = ember.jit(counter, static_argnums=1, donate_argnums=0)
    jf = jax.jit(fun, static_argnums=1, donate_argnums=0)
    v = np.ones(3, np.float32)
    traced = f.trace(v, 2, y=2.0)
    jlowered = jf.lower(v, 2, y=2.0)

    def described(info):
        return tree_util.tree_map(lambda i: (i.shape, np.dtype(i.dtype).name,
                                             getattr(i, "donated", None)), info)

    assert described(traced.args_info) == described(jlowered.args_info)
    assert described(traced.out_info) == described(jlowered.out_info)
    assert "ember." in traced.as_text() and traced.fun_name == f.fun_name
    lowered = traced.lower()
    assert counter.calls == 1                           # lower() does not trace again
    assert described(lowered.args_info) == described(traced.args_info)
    assert lowered.compiler_ir().operation.name == "builtin.module"
    assert "linalg." in str(lowered.compiler_ir()) and "ember." in str(lowered.compiler_ir("ember"))
    compiled = lowered.compile()
    assert described(compiled.out_info) == described(traced.out_info)
    out = compiled(v, y=2.0)
    np.testing.assert_allclose(np.asarray(out[1]["a"]), 5.0)


def test_clear_cache_forgets_compiled_signatures():
    counter = Counter(lambda x: x + 1)
    f = ember.jit(counter)
    f(X)
    f(X)
    assert counter.calls == 1
    f.clear_cache()
    np.testing.assert_array_equal(np.asarray(f(X)), X + 1)
    assert counter.calls == 2


def test_registered_dataclass_meta_fields_are_static_under_jit():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Dense:
        w: object
        b: object
        act: str = dataclasses.field(default="tanh", metadata={"static": True})

    counter = Counter(lambda layer, x: Dense(
        enp.tanh(x @ layer.w + layer.b) if layer.act == "tanh" else x @ layer.w, layer.b,
        layer.act))
    f = ember.jit(counter)
    w, b = np.full((2, 2), 0.5, np.float32), np.ones(2, np.float32)
    x = np.arange(2, dtype=np.float32)
    out = f(Dense(w, b), x)
    assert isinstance(out, Dense) and out.act == "tanh"
    np.testing.assert_allclose(np.asarray(out.w), np.tanh(x @ w + b), rtol=1e-6)
    f(Dense(w + 1, b), x)
    assert counter.calls == 1
    np.testing.assert_allclose(np.asarray(f(Dense(w, b, "linear"), x).w), x @ w, rtol=1e-6)
    assert counter.calls == 2
