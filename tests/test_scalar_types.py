"""ember.numpy's dtype names are callable scalar types, as in JAX (``jnp.float32(1.5)``)."""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as enp


@pytest.mark.parametrize("name", ["bool_", "int8", "int16", "int32", "uint8", "uint16",
                                  "uint32", "float16", "bfloat16", "float32"])
def test_scalar_type_converts_like_its_dtype(name):
    t = getattr(enp, name)
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    assert np.dtype(t) == dtype and t == dtype and dtype == t and hash(t) == hash(dtype)
    value = t(1.75)
    assert isinstance(value, ember.Array) and value.shape == () and value.dtype == dtype
    assert np.asarray(value) == np.asarray(1.75).astype(dtype)


def test_scalar_types_inside_jit_and_as_dtype_arguments():
    f = ember.jit(lambda x: x.astype(enp.int8) + enp.int8(3))
    y = f(np.array([1.9, -2.5], np.float32))
    assert y.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(y), np.array([1, -2], np.int8) + 3)
    assert enp.zeros(3, enp.uint16).dtype == np.uint16
