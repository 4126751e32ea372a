"""ember called from several Python threads at once (issue 34).

Tracing state is per thread (as JAX's), a signature compiles once however many threads ask
for it at the same time, and an Array donated by two threads at once is donated by one of
them; the other gets DonatedArrayError. Oracles are NumPy values; compiles are counted at
``compile_mlir`` (the frontend's one way to IREE) and traces by the traced function itself.
"""

import sys
import threading
import time

import numpy as np
import pytest
from helpers import run_threads

import ember
import ember.numpy as enp
from ember.errors import DonatedArrayError
from ember.frontend import api

TIMEOUT = 60


@pytest.fixture
def compiles(monkeypatch):
    """The MLIR texts the frontend hands to IREE (each call of ``compile_mlir``), slowed down
    so that racing threads find the compile under way."""
    texts = []
    real = api.compile_mlir

    def counting(text, *args, **kwargs):
        texts.append(text)
        time.sleep(0.2)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(api, "compile_mlir", counting)
    return texts


@pytest.fixture
def fast_switching():
    """Threads take turns every 10 us (not 5 ms): traces interleave op by op."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def test_a_compiled_call_while_another_thread_traces_runs():
    """Thread A stops in the middle of tracing; a compiled function called meanwhile in the
    main thread returns its Array (before: a Tracer of A's trace)."""
    double = ember.jit(lambda x: x * 2)
    x = np.arange(4, dtype=np.float32)
    double(x)
    inside, resume = threading.Event(), threading.Event()

    def traced(v):
        y = v + 1
        inside.set()
        assert resume.wait(TIMEOUT)
        return y * 3

    def thread_a(_):
        return np.asarray(ember.jit(traced)(x))

    t = threading.Thread(target=lambda: out.append(thread_a(0)))
    out = []
    t.start()
    try:
        assert inside.wait(TIMEOUT)
        got = double(x)
        eager = enp.sqrt(x)
    finally:
        resume.set()
        t.join(TIMEOUT)
    assert isinstance(got, ember.Array), type(got)
    np.testing.assert_array_equal(np.asarray(got), x * 2)
    np.testing.assert_allclose(np.asarray(eager), np.sqrt(x), rtol=1e-6)
    np.testing.assert_array_equal(out[0], (x + 1) * 3)


def test_overlapping_traces_in_two_threads():
    """Two traces open at the same time, each going on after the other began (before: an
    AssertionError on the trace stack, or UnexpectedTracerError)."""
    both = threading.Barrier(2, timeout=TIMEOUT)

    def f(v, k):
        y = enp.sin(v) * k
        both.wait()                  # both traces are open here
        z = enp.cumsum(y) + 1
        both.wait()
        return z - v

    def work(i):
        x = np.linspace(0, 1, 5 + i, dtype=np.float32)
        return x, np.asarray(ember.jit(f)(x, float(i + 2)))

    for x, got in run_threads(2, work):
        k = float(len(x) - 5 + 2)
        np.testing.assert_allclose(got, np.cumsum(np.sin(x) * k) + 1 - x, rtol=1e-5)


def test_user_function_calling_a_jitted_function_from_threads(fast_switching):
    """Eight threads call a user function that calls a new jitted function and eager ops:
    each gets its own values (before: ConcretizationErrors and Tracers). All eight trace at
    once on the unfixed code; a short switch interval interleaves their traces. Three rounds,
    each with a new jitted function and empty in-memory caches (the programs come from the
    disk cache after the first round)."""
    for _ in range(3):
        ember.clear_caches()
        start = threading.Barrier(8, timeout=TIMEOUT)

        @ember.jit
        def step(x, y):
            return enp.tanh(x) * y + enp.sum(x)

        def user(x, i, step=step):
            return np.asarray(enp.exp(step(x, i)) - 1.0)

        def work(i, start=start, user=user):
            x = np.arange(6, dtype=np.float32) / (i + 1)
            start.wait()
            return [(x, j, user(x, float(j))) for j in range(i, i + 4)]

        for rows in run_threads(8, work):
            for x, j, got in rows:
                want = np.exp(np.tanh(x) * j + x.sum()) - 1.0
                np.testing.assert_allclose(got, want, rtol=2e-5)


def test_one_compile_for_one_signature_under_eight_threads(compiles):
    """Eight threads call a new jitted function with one signature at the same time: it is
    traced and compiled once; the other threads wait for it and reuse it."""
    start = threading.Barrier(8, timeout=TIMEOUT)
    traces = []

    @ember.jit
    def f(x):
        traces.append(1)
        return x * x + 2

    def work(i):
        x = np.full((3, 5), i, np.float32)
        start.wait()
        return x, np.asarray(f(x))

    for x, got in run_threads(8, work):
        np.testing.assert_array_equal(got, x * x + 2)
    assert len(traces) == 1
    assert len(compiles) == 1


def test_one_compile_for_one_eager_signature_under_eight_threads(compiles):
    """The same for an eager ember.numpy call: one program per signature."""
    ember.clear_caches()
    start = threading.Barrier(8, timeout=TIMEOUT)

    def work(i):
        x = np.full((7, 3), i + 1, np.float32)
        start.wait()
        return x, np.asarray(enp.log1p(x))

    for x, got in run_threads(8, work):
        np.testing.assert_allclose(got, np.log1p(x), rtol=1e-6)
    assert len(compiles) == 1


def test_eager_ops_from_threads_compile_each_program_once(compiles):
    """``enp.sqrt(a) + i`` from four threads: right values, and no program compiled twice
    (before: the same programs compiled by several threads, and programs of interleaved
    traces)."""
    ember.clear_caches()
    a = ember.device_put(np.arange(6, dtype=np.float32))
    start = threading.Barrier(4, timeout=TIMEOUT)

    def work(t):
        start.wait()
        return [(i, np.asarray(enp.sqrt(a) + i)) for i in range(3)]

    for rows in run_threads(4, work):
        for i, got in rows:
            np.testing.assert_allclose(got, np.sqrt(np.arange(6, dtype=np.float32)) + i,
                                       rtol=1e-6)
    assert len(compiles) == len(set(compiles)), f"{len(compiles)} compiles of " \
        f"{len(set(compiles))} programs"
    assert len(compiles) == 2           # sqrt, and add taking the scalar as an argument


def test_scalar_operands_of_eager_operators_are_arguments(compiles):
    """``a + i`` for many values of i is one program (the scalar an argument, weak-typed as
    in JAX), not one per value: 8 threads x 500 values compiled 500 programs."""
    ember.clear_caches()
    x = np.linspace(-2, 2, 4, dtype=np.float32)     # (no zero to divide by)
    k = np.arange(4, dtype=np.int32)
    a, b = ember.device_put(x), ember.device_put(k)
    for v in (3, -1.5, 7, 0.25, -2):
        for got, want in ((a + v, x + np.float32(v)), (v / a, np.float32(v) / x),
                          (b * v, k * v if type(v) is int else (k * v).astype(np.float32))):
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    # 3 operations, each for an int and for a float scalar (weak i32 and weak f32 arguments)
    assert len(compiles) == 6, len(compiles)
    # uploaded scalars are reused by value: 0.0 and -0.0 (equal, and of one hash) are two
    pos = np.asarray(ember.device_put(np.ones(3, np.float32)) * 0.0)
    neg = np.asarray(ember.device_put(np.ones(3, np.float32)) * -0.0)
    np.testing.assert_array_equal(np.signbit(pos), [False] * 3)
    np.testing.assert_array_equal(np.signbit(neg), [True] * 3)


def test_an_array_donated_by_two_threads_at_once_is_donated_once():
    """Two threads donate the same Array at the same moment: one call gets its buffer and the
    right result, the other DonatedArrayError (before: both ran, on one buffer, and both
    results could be wrong)."""
    n = 1 << 18
    f = ember.jit(lambda x: x * 2 + 1, donate_argnums=0)
    host = np.linspace(0, 1, n, dtype=np.float32)
    f(ember.device_put(host))
    for trial in range(25):
        a = ember.device_put(host)
        start = threading.Barrier(2, timeout=TIMEOUT)

        def work(_, a=a, start=start):
            start.wait()
            try:
                return np.asarray(f(a))
            except DonatedArrayError as e:
                return e

        outs = run_threads(2, work)
        errors = [o for o in outs if isinstance(o, DonatedArrayError)]
        assert len(errors) == 1, f"trial {trial}: {len(errors)} of 2 calls failed"
        (got,) = [o for o in outs if not isinstance(o, DonatedArrayError)]
        np.testing.assert_allclose(got, host * 2 + 1, rtol=1e-6)
        assert a.is_deleted()
