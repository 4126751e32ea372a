"""Helpers shared by test modules (``from helpers import needs_vulkan``: pytest puts this
directory on ``sys.path``)."""

from __future__ import annotations

import inspect
import threading

import numpy as np
import pytest

import ember
from ember.backends import vulkan

HAS_VULKAN = bool(vulkan.devices())     # the backend's own enumeration
_skip_without_vulkan = pytest.mark.skipif(
    not HAS_VULKAN, reason=f"no Vulkan device on this machine ({vulkan.INSTALL_HINT})")


def needs_vulkan(test):
    """Runs where a Vulkan device exists, after the other tests (tests/conftest.py)."""
    return pytest.mark.vulkan(_skip_without_vulkan(test))


def relu_layers(m, x, w):
    """Three relu layers sharing one weight, on ``m`` (numpy or ember.numpy): a program
    large enough that the CPU runs it on its thread pool."""
    for _ in range(3):
        x = m.maximum(x @ w + 1, 0)
    return x


def relu_layers_numpy(x, w):
    """:func:`relu_layers` in NumPy, the oracle."""
    return relu_layers(np, x, w)


def close(got, want, tol=1e-5):
    """Same structure, shapes, dtypes and values (NaN equal)."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            close(g, w, tol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if g.dtype.kind != "b":
        g, w = g.astype(np.float64), w.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


def eager_and_jit(f, jf, *args, tol=1e-5):
    """``f`` on ember, eagerly and under ``ember.jit``, against ``jf`` (the JAX or NumPy
    oracle) on the same ``args``, with :func:`close`."""
    want = jf(*args)
    close(f(*args), want, tol)
    close(ember.jit(f)(*args), want, tol)


def public_functions(prefix, module):
    """``prefix.name`` for each public callable of ``module`` (its ``__all__``, else its names
    without a leading underscore), submodules left out: the names a coverage table must
    hold."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return {f"{prefix}.{n}" for n in names
            if callable(getattr(module, n)) and not inspect.ismodule(getattr(module, n))}


def f64(x):
    return np.asarray(x, np.float64)


def close_to_scale(got, want, tol=2e-5, dtype=np.float32):
    """``got`` (an ember Array of ``dtype``) within ``tol`` of ``want`` relative to its
    largest finite entry (a factorization's errors scale with the matrix's norm); NaNs and
    infs where ``want`` has them."""
    assert isinstance(got, ember.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0)))
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=0, atol=tol * scale,
                               equal_nan=True)


def same(got, want, dtype):
    """``got`` an ember Array of ``dtype`` equal to ``want`` exactly."""
    assert isinstance(got, ember.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def check_all(labels, gots, wants, tol=2e-5):
    """``close_to_scale`` for each of ``gots``, ``same`` where the want is (exact value,
    dtype); a failure names its label."""
    for label, got, want in zip(labels, gots, wants, strict=True):
        try:
            if isinstance(want, tuple):     # (exact value, dtype)
                same(got, *want)
            else:
                close_to_scale(got, want, tol)
        except AssertionError as e:
            raise AssertionError(f"{label}: {e}") from None


def run_threads(n, target, timeout=60):
    """Run ``target(i)`` in ``n`` threads; returns their results, re-raising the first error."""
    results, errors = [None] * n, []

    def body(i):
        try:
            results[i] = target(i)
        except BaseException as e:       # noqa: BLE001 - handed to the test's thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


def loop_kernels_in(lowered) -> int:
    """The loops of a lowered program that run as one kernel (ember-loop-kernels)."""
    from ember.backends.cpu import loop_kernels
    return loop_kernels(lowered.compiler_ir("linalg"))


def count_compiles(monkeypatch) -> list:
    """A list that gets an entry for each IREE compile from now on (the compile worker's
    requests: a compile IREE refused and ember retried with other flags, or without dispatch
    regions, counts each attempt)."""
    from ember.backends import compiler
    calls, compile_ = [], compiler._compile
    monkeypatch.setattr(compiler, "_compile",
                        lambda *a, **k: calls.append(1) or compile_(*a, **k))
    return calls
