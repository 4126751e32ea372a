"""Background compiles: ``Lowered.compile_async`` and ``JitFunction.warm`` (issue 38's "a
server can warm shapes without blocking"). Oracles: NumPy's values, and the number of times
``Lowered.compile`` runs (a warmed shape must not compile again)."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import TracingError
from ember.frontend.api import Lowered


def _counting(monkeypatch, delay=0.0):
    """Count Lowered.compile calls (optionally slowed, to hold a compile in flight)."""
    calls = []
    real = Lowered.compile

    def counted(self, *a, **k):
        calls.append(threading.current_thread().name)
        time.sleep(delay)
        return real(self, *a, **k)
    monkeypatch.setattr(Lowered, "compile", counted)
    return calls


def test_compile_async_returns_a_future_of_the_compiled_program():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    future = ember.jit(lambda a: enp.tanh(a * 2 + 1).sum(-1)).lower(x).compile_async()
    assert isinstance(future, concurrent.futures.Future)
    np.testing.assert_allclose(future.result(timeout=600)(x), np.tanh(x * 2 + 1).sum(-1),
                               rtol=1e-6)


def test_warmed_shapes_run_without_compiling_again(monkeypatch):
    calls = _counting(monkeypatch)
    f = ember.jit(lambda a: enp.sin(a) * 3 + a)
    futures = [f.warm(ember.ShapeDtypeStruct((n,), np.float32)) for n in (5, 7)]
    for fut in futures:
        fut.result(timeout=600)
    assert len(calls) == 2 and all(name.startswith("ember-compile") for name in calls)
    for n in (5, 7):
        x = np.linspace(0, 1, n, dtype=np.float32)
        np.testing.assert_allclose(f(x), np.sin(x) * 3 + x, rtol=1e-6)
        np.testing.assert_allclose(f(ember.device_put(x)), np.sin(x) * 3 + x, rtol=1e-6)
    assert len(calls) == 2, calls      # the calls found both programs in the cache


def test_a_call_during_a_warm_up_waits_for_it(monkeypatch):
    calls = _counting(monkeypatch, delay=0.5)
    f = ember.jit(lambda a: a * a - 1)
    future = f.warm(ember.ShapeDtypeStruct((4,), np.float32))
    time.sleep(0.1)                    # the background compile is in flight
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(f(x), x * x - 1)
    assert future.done() and len(calls) == 1, calls


def test_a_failed_warm_up_reports_through_its_future_and_caches_nothing():
    f = ember.jit(lambda a: a.reshape(7))
    future = f.warm(ember.ShapeDtypeStruct((5,), np.float32))
    with pytest.raises(TracingError, match="reshape"):
        future.result(timeout=600)
    with pytest.raises(TracingError, match="reshape"):
        f(np.zeros(5, np.float32))     # traced again, the same error
