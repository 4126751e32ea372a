"""The Array API standard's namespace pieces that ember.numpy has (2024.12): what its own
test suite (data-apis/array-api-tests) needs to start, checked against the standard's text
and NumPy 2's namespace, which implements the same standard."""

import numpy as np
import pytest

import ember
import ember.numpy as enp


def test_version_namespace_and_bool():
    assert enp.__array_api_version__ == "2024.12" == np.__array_api_version__
    x = enp.asarray([1.0, 2.0])
    assert x.__array_namespace__() is enp
    assert x.__array_namespace__(api_version="2023.12") is enp
    with pytest.raises(ValueError, match="2024.12"):
        x.__array_namespace__(api_version="2031.12")
    assert enp.bool == np.bool_ and enp.asarray([1, 0], enp.bool).dtype == np.bool_


def test_namespace_info_as_the_standard_describes_it(config_value):
    info = enp.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == set(np.__array_namespace_info__().capabilities())
    assert info.default_device() in info.devices() == ember.devices()
    assert info.default_dtypes() == {"real floating": np.float32,
                                     "complex floating": np.complex64, "integral": np.int32,
                                     "indexing": np.int32}
    assert list(info.dtypes(kind="signed integer")) == ["int8", "int16", "int32"]
    assert list(info.dtypes(kind=("bool", "real floating"))) == ["bool", "float32"]
    assert "float16" not in info.dtypes()       # ember's, not the standard's
    config_value("enable_x64", True)
    assert info.default_dtypes()["real floating"] == np.float64
    assert info.default_dtypes()["complex floating"] == np.complex128
    assert info.dtypes() == np.__array_namespace_info__().dtypes()


def test_device_keywords_and_to_device():
    cpu = ember.devices("cpu")[0]
    for made in (enp.zeros(3, device=cpu), enp.ones((2,), device=cpu),
                 enp.empty(2, device=cpu), enp.full((2,), 7, device=cpu),
                 enp.arange(4, device=cpu), enp.linspace(0, 1, 5, device=cpu),
                 enp.eye(2, device=cpu), enp.zeros_like(np.ones(2), device=cpu),
                 enp.ones_like(np.ones(2), device=cpu), enp.empty_like(np.ones(2), device=cpu),
                 enp.full_like(np.ones(2), 3, device=cpu),
                 enp.astype(enp.arange(3), enp.float32, device=cpu)):
        assert made.device == cpu
    np.testing.assert_array_equal(np.asarray(enp.arange(4, device=cpu)), np.arange(4))
    x = enp.arange(3.0)
    assert x.to_device(cpu).device == cpu
    np.testing.assert_array_equal(np.asarray(x.to_device(cpu)), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="stream"):
        x.to_device(cpu, stream=1)


def test_copy_keywords_and_clip_bounds():
    x = enp.arange(6)
    np.testing.assert_array_equal(np.asarray(enp.astype(x, enp.float32, copy=False)),
                                  np.arange(6, dtype=np.float32))
    assert enp.reshape(x, shape=(2, 3), copy=True).shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(enp.clip(x, min=1, max=4)),
                                  np.clip(np.arange(6), 1, 4))


def test_dtype_comparisons_as_numpy():
    """A dtype compared with None or a dict is unequal (np.dtype(None) is float64: ember's
    float64 was equal to None; a dict raised)."""
    for dt in (enp.float32, enp.float64, enp.int32, enp.bool):
        assert (dt == None) is False  # noqa: E711
        assert (dt == {}) is False
        assert (dt == "not a dtype") is False
    assert enp.float32 == np.float32 and enp.float32 == "float32"
