"""ember.numpy's dtype queries (ember/numpy/_dtypes.py: isdtype, issubdtype, dtype, the
scalar type hierarchy; iscomplexobj, isrealobj, isreal, iscomplex) against JAX, and
errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import eager_and_jit

import ember.numpy as enp
from ember.errors import ArgumentError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(81)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)

DTYPES = [np.bool_, np.int8, np.int32, np.uint16, np.float16, np.float32, ml_dtypes.bfloat16]


def test_isdtype_issubdtype():
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", np.float32, ("bool", "real floating")]
    for d in DTYPES:
        for k in kinds:
            assert enp.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
        for cls in [enp.generic, enp.number, enp.integer, enp.signedinteger,
                    enp.unsignedinteger, enp.inexact, enp.floating, enp.complexfloating,
                    np.float32, np.int8, np.bool_]:
            assert enp.issubdtype(d, cls) == jnp.issubdtype(d, cls), (d, cls)
    assert enp.isdtype(enp.float32, "real floating") and enp.issubdtype(enp.int8, enp.integer)
    assert enp.dtype("float32") == np.float32 and enp.dtype is np.dtype
    assert enp.issubdtype(np.dtype("float32"), "float32")


def test_real_and_complex_queries():
    for x in [1, 1.5, 1j, None, np.ones(2), np.ones(2, np.complex64), enp.ones(2), "s",
              np.complex64(1), [1.0, 2.0]]:
        assert enp.iscomplexobj(x) == jnp.iscomplexobj(x), x
        assert enp.isrealobj(x) == jnp.isrealobj(x), x
    for x in [X, N, np.array([True])]:
        eager_and_jit(enp.isreal, jnp.isreal, x)
        eager_and_jit(enp.iscomplex, jnp.iscomplex, x)


ERRORS = [
    (lambda: enp.isdtype(np.float32, "floaty"), ArgumentError, "unrecognized kind"),
    (lambda: enp.issubdtype(object(), np.floating), ArgumentError, "dtype"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
