"""Eager calls: ember functions on NumPy arrays and Arrays outside jit, cached per signature
in memory and on disk."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import ArgumentError
from ember.frontend import eager

X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def test_eager_functions_match_numpy_and_return_arrays():
    y = enp.sin(X) * 2 + enp.exp(ember.device_put(X)).sum(axis=0)
    assert isinstance(y, ember.Array)
    np.testing.assert_allclose(np.asarray(y), np.sin(X) * 2 + np.exp(X).sum(0), rtol=1e-5)


def test_eager_calls_are_cached_in_memory():
    x = np.ones((5, 7), np.float32)     # a signature no other test uses
    before = len(eager._CACHE)
    enp.cos(x)
    assert len(eager._CACHE) == before + 1
    enp.cos(x * 2)                      # same signature, other values: no new entry
    enp.cos(ember.device_put(x))        # an Array of the same signature
    assert len(eager._CACHE) == before + 1
    enp.cos(x[:2])                      # a new shape is a new signature
    assert len(eager._CACHE) == before + 2


def test_arguments_a_function_cannot_take_name_it_and_numpy():
    """A keyword ember lacks is an ArgumentError naming the function, the keyword and the
    user's line (eager and traced alike), and says when NumPy's function takes it."""
    with pytest.raises(ArgumentError, match=r"ember\.numpy\.squeeze: .*'where'.*\n  at .*"
                                            r"test_eager\.py"):
        enp.squeeze(X, where=True)
    with pytest.raises(ArgumentError, match=r"ember\.numpy\.argmax: .*'out'; NumPy's argmax "
                                            r"takes 'out', which ember does not support"):
        ember.jit(lambda x: enp.argmax(x, 0, out=x))(X)
    with pytest.raises(ArgumentError, match=r"ember\.lax\.add: too many positional"):
        ember.lax.add(X, X, X)


_CHILD = textwrap.dedent("""
    import sys, numpy as np, ember, ember.numpy as enp
    from ember.backends import compiler
    if sys.argv[1] == "forbid":
        def refuse(*args, **kwargs):
            raise AssertionError("compiled again although the disk cache has the module")
        compiler._compile_uncached = refuse
    x = np.arange(6, dtype=np.float32)
    print(np.asarray(enp.tanh(x) * 3 - enp.sqrt(x)).tolist())
""")


def test_second_process_does_not_compile_again(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    env.pop("EMBER_NO_COMPILE_CACHE", None)
    run = [sys.executable, "-c", _CHILD]
    first = subprocess.run(run + ["allow"], env=env, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    assert list(tmp_path.rglob("*.vmfb")), "the first process wrote no cache entry"
    second = subprocess.run(run + ["forbid"], env=env, capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    x = np.arange(6, dtype=np.float32)
    expected = np.tanh(x) * 3 - np.sqrt(x)
    np.testing.assert_allclose(eval(second.stdout), expected, rtol=1e-6)
    assert second.stdout == first.stdout


def test_numpy_scalars_as_static_values():
    # NumPy and JAX take a NumPy integer for an axis, a shift or a count; traced as an array
    # argument, such a value raised ConcretizationError in an eager call.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(enp.sum(a, axis=np.int64(0))), a.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(enp.roll(a, np.int32(2))), np.roll(a, 2))
    np.testing.assert_array_equal(np.asarray(enp.roll(a, np.int32(1))), np.roll(a, 1))
    np.testing.assert_array_equal(np.asarray(enp.reshape(a, (np.int64(3), -1))), a.reshape(3, 2))
    # A NumPy scalar used as a value stays an argument (one program for every value).
    np.testing.assert_array_equal(np.asarray(enp.add(a, np.float32(2))), a + 2)


def test_python_scalars_that_compare_equal_get_their_own_programs():
    # 1 == 1.0 == True and 0.0 == -0.0 as cache keys: the second call reused the first's
    # program (int32 for i * 2.0, +0 for x * -0.0). NumPy is the oracle.
    i = ember.device_put(np.array([3, 4], np.int32))
    assert (i * 2).dtype == np.int32 and (i * 2.0).dtype == np.float32
    m = ember.device_put(np.array([True, False]))
    np.testing.assert_array_equal(np.asarray(m + 1), np.array([True, False]) + 1)
    got = m + True
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), [True, True])
    x = ember.device_put(np.array([1.0, 2.0], np.float32))
    for z in (0.0, -0.0):
        np.testing.assert_array_equal(np.signbit(np.asarray(x * z)), np.signbit(np.float32(z)))
        np.testing.assert_array_equal(np.asarray(enp.copysign(x, z)),
                                      np.copysign(np.float32([1, 2]), z))
    assert enp.where(i > 3, i, 0).dtype == np.int32
    assert enp.where(i > 3, i, 0.0).dtype == np.float32
