"""DLPack: ``ember.Array.__dlpack__``/``__dlpack_device__`` and ``ember.numpy.from_dlpack``
against NumPy and JAX (the Array API standard 2024.12).

Oracles: the NumPy data an array was made from, and NumPy's and JAX's own DLPack (what
``np.from_dlpack``/``jnp.from_dlpack`` read from ember, what JAX does with the same input).
Zero-copy claims are checked by data pointers (the IREE buffer's mapping, NumPy's
``__array_interface__``, JAX's ``unsafe_buffer_pointer``) and by writing through the
producer and reading the consumer.
"""

from __future__ import annotations

import gc
import warnings

import ml_dtypes
import numpy as np
import pytest
from helpers import needs_vulkan

import ember
import ember.numpy as enp
from ember import dtypes
from ember.backends import runtime
from ember.errors import (
    ConcretizationError,
    DLPackError,
    DonatedArrayError,
    NoDLPackError,
)

jax = pytest.importorskip("jax")
jnp = jax.numpy

# Every dtype ember stores (complex too, once the runtime has it): the test follows the
# runtime's table rather than a list of its own.
DTYPES = [dt for dt in dtypes.SUPPORTED if dt in runtime._HAL_TYPE]
SHAPES = [(), (0,), (5,), (2, 3, 4), (0, 3), (1, 1)]


def _data(dtype, shape, seed=0) -> np.ndarray:
    return np.asarray(_values(dtype, shape, seed))


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _numpy_carries(dtype) -> bool:
    return np.dtype(dtype) != ml_dtypes.bfloat16        # NumPy's DLPack has no bfloat16


def _buffer_pointer(a) -> int:
    """The address of an ember Array's IREE buffer (its mapping, not a copy)."""
    return a._bv.map().asarray((a._bv.byte_length,), np.dtype(np.uint8)) \
        .__array_interface__["data"][0]


def _pointer(x) -> int:
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    return x.unsafe_buffer_pointer()


def _aligned(host: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A copy of ``host`` whose data start at a multiple of ``alignment`` bytes."""
    raw = np.empty(host.nbytes + alignment, np.uint8)
    start = -raw.__array_interface__["data"][0] % alignment
    out = raw[start:start + host.nbytes].view(host.dtype).reshape(host.shape)
    out[...] = host
    return out


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want)
    if want.dtype == ml_dtypes.bfloat16:          # (exact in float32)
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want)


class _Capsule:
    """A producer that hands out one capsule made earlier (to consume it later)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


# --- round trips of every dtype and shape ----------------------------------------------------

@pytest.mark.usefixtures("both_x64")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trips_every_dtype_and_shape(dtype):
    for i, shape in enumerate(SHAPES):
        host = _data(dtype, shape, i)
        a = ember.device_put(host)
        assert a.__dlpack_device__() == (1, 0)
        # ember -> JAX -> ember, and JAX -> ember of JAX's own array
        j = jnp.from_dlpack(a)
        _same(j, host)
        _same(enp.from_dlpack(j), host)
        _same(enp.from_dlpack(jnp.asarray(host)), host)
        if _numpy_carries(dtype):
            # ember -> NumPy -> ember, for DLPack 1.x and 0.x consumers
            n = np.from_dlpack(a)
            _same(n, host)
            _same(np.from_dlpack(_Capsule(a.__dlpack__())), host)
            back = enp.from_dlpack(host)
            _same(back, host)
            assert back.device == ember.devices("cpu")[0]
            _same(enp.from_dlpack(n), host)
        else:
            # NumPy's DLPack refuses bfloat16 either way (as it refuses JAX's)
            with pytest.raises((BufferError, RuntimeError)):
                np.from_dlpack(jnp.asarray(host))
            with pytest.raises((BufferError, RuntimeError)):
                np.from_dlpack(a)


@pytest.mark.usefixtures("both_x64")
def test_non_contiguous_sources_import_by_value():
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    for view in (x[:, ::2], x.T, x[::-1, 1:, ::3], x[..., 0], np.broadcast_to(x[0, 0], (4, 5))):
        _same(enp.from_dlpack(view), np.ascontiguousarray(view))
    y = ember.jit(lambda t: t.T[::2])(x)        # a jit result of a transposed view
    _same(np.from_dlpack(y), np.ascontiguousarray(x.T[::2]))


def test_64_bit_data_become_32_bit_without_x64_as_asarray_makes_them():
    for host in (np.arange(5, dtype=np.int64), np.arange(5, dtype=np.uint64),
                 np.linspace(0, 1, 5), _aligned(np.arange(16, dtype=np.int64))):
        with warnings.catch_warnings():             # "computed as int32": asarray's too
            warnings.simplefilter("ignore")
            got = enp.from_dlpack(host)
            want = enp.asarray(host)
        assert got.dtype == want.dtype and got.dtype.itemsize == 4
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        with pytest.raises(DLPackError, match="64-bit types are off|cannot be shared"):
            enp.from_dlpack(host, copy=False)


# --- zero copy -------------------------------------------------------------------------------

def test_cpu_arrays_export_their_own_memory_read_only():
    a = ember.jit(lambda t: t * 2)(np.arange(64, dtype=np.float32))
    n = np.from_dlpack(a)
    j = jnp.from_dlpack(a)
    assert _pointer(n) == _pointer(j) == _buffer_pointer(a)
    assert not n.flags.writeable                    # DLPack 1.x's read-only flag
    np.testing.assert_array_equal(n, np.arange(64) * 2)
    legacy = np.from_dlpack(_Capsule(a.__dlpack__()))   # a DLPack 0.x capsule: IREE's
    assert _pointer(legacy) == _buffer_pointer(a)
    bf = ember.device_put(np.arange(64, dtype=np.float32).astype(ml_dtypes.bfloat16))
    assert _pointer(jnp.from_dlpack(bf)) == _buffer_pointer(bf)


def test_copy_true_exports_a_copy():
    a = ember.device_put(np.arange(8, dtype=np.int32))
    n = np.from_dlpack(a, copy=True)
    assert _pointer(n) != _buffer_pointer(a) and n.flags.writeable
    n[0] = 100                                       # the copy is the consumer's
    np.testing.assert_array_equal(np.asarray(a), np.arange(8))
    b = ember.device_put(np.ones(4, np.float32).astype(ml_dtypes.bfloat16))
    j = jnp.from_dlpack(_Capsule(b.__dlpack__(copy=True)))     # IREE's capsule of a copy
    assert _pointer(j) != _buffer_pointer(b)
    _same(j, np.ones(4, ml_dtypes.bfloat16))


def test_aligned_host_memory_imports_without_a_copy_as_jax_does():
    host = _aligned(np.arange(256, dtype=np.float32))
    x = enp.from_dlpack(host, copy=False)
    j = jnp.from_dlpack(host)
    assert _buffer_pointer(x) == _pointer(host) == _pointer(j)
    host[3] = -1.0                  # written through the producer, seen by both consumers
    assert float(x[3]) == float(j[3]) == -1.0
    # JAX's arrays are 64-byte aligned: shared too, and kept alive by the ember Array.
    src = jnp.arange(100.0, dtype=jnp.float32) * 3
    pointer = src.unsafe_buffer_pointer()
    y = enp.from_dlpack(src, copy=False)
    assert _buffer_pointer(y) == pointer
    del src
    gc.collect()
    np.testing.assert_allclose(np.asarray(enp.sin(y)), np.sin(np.arange(100.0) * 3),
                               rtol=1e-6, atol=1e-6)


def test_memory_that_iree_cannot_wrap_is_copied_or_refused_with_copy_false():
    misaligned = _aligned(np.arange(17, dtype=np.float32))[1:]
    strided = np.arange(20, dtype=np.float32)[::2]
    readonly = _aligned(np.arange(16, dtype=np.float32))
    readonly.flags.writeable = False
    for host, why in ((misaligned, "aligned to 64"), (strided, "strided"),
                      (readonly, "would not share")):
        x = enp.from_dlpack(host)
        _same(x, np.ascontiguousarray(host))
        assert _buffer_pointer(x) != _pointer(host)
        with pytest.raises(DLPackError, match=why) as e:
            enp.from_dlpack(host, copy=False)
        assert isinstance(e.value, BufferError) and isinstance(e.value, ValueError)
    y = enp.from_dlpack(_aligned(np.arange(16, dtype=np.float32)), copy=True)
    assert not getattr(y, "_external", False)


# --- other devices ---------------------------------------------------------------------------

@needs_vulkan
def test_vulkan_arrays_export_a_host_copy_and_refuse_copy_false():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = ember.device_put(host, "vulkan")
    assert v.__dlpack_device__() == (1, 0)           # a host copy is what is exported
    _same(np.from_dlpack(v), host)
    _same(jnp.from_dlpack(v), host)
    _same(np.from_dlpack(_Capsule(v.__dlpack__())), host)
    with pytest.raises(BufferError, match="needs a copy"):
        v.__dlpack__(copy=False)
    with pytest.raises(BufferError):
        np.from_dlpack(v, copy=False)
    # ember -> ember keeps the device; another device is a copy, refused with copy=False
    assert enp.from_dlpack(v) is v
    c = enp.from_dlpack(ember.device_put(host), device="vulkan")
    assert c.device == v.device
    _same(c, host)
    with pytest.raises(DLPackError, match="needs a copy"):
        enp.from_dlpack(ember.device_put(host), device=v.device, copy=False)
    with pytest.raises(DLPackError, match="cannot be shared"):
        enp.from_dlpack(_aligned(host), device=v.device, copy=False)
    _same(enp.from_dlpack(host, device=v.device), host)


def test_ember_arrays_import_as_themselves_or_a_copy():
    a = ember.device_put(np.arange(6, dtype=np.float32))
    assert enp.from_dlpack(a) is a
    assert enp.from_dlpack(a, copy=False) is a
    b = enp.from_dlpack(a, copy=True)
    assert b is not a and _buffer_pointer(b) != _buffer_pointer(a)
    _same(b, np.arange(6, dtype=np.float32))


# --- lifetime and donation -------------------------------------------------------------------

def test_exported_memory_outlives_the_array():
    f = ember.jit(lambda t: t * 2 + 1)
    want = np.arange(1000, dtype=np.float32) * 2 + 1
    a, b, c = (f(np.arange(1000, dtype=np.float32)) for _ in range(3))
    n = np.from_dlpack(a)                           # NumPy's capsule over the mapping
    legacy = b.__dlpack__()                         # IREE's capsule, not consumed yet
    j = jnp.from_dlpack(c)
    dropped = f(np.zeros(3, np.float32)).__dlpack__()
    del a, b, c, dropped
    gc.collect()
    for _ in range(5):                              # reuse freed memory if it was freed
        f(np.full(1000, 7, np.float32))
    np.testing.assert_array_equal(n, want)
    np.testing.assert_array_equal(np.from_dlpack(_Capsule(legacy)), want)
    np.testing.assert_array_equal(np.asarray(j), want)


def test_a_donated_array_raises_the_donation_error():
    f = ember.jit(lambda t: t + 1, donate_argnums=0)
    a = ember.device_put(np.arange(4, dtype=np.float32))
    f(a)
    for use in (lambda: a.__dlpack__(), lambda: a.__dlpack_device__(),
                lambda: np.from_dlpack(a), lambda: jnp.from_dlpack(a),
                lambda: enp.from_dlpack(a)):
        with pytest.raises(DonatedArrayError, match="donated to"):
            use()


def test_donating_shared_memory_copies_it_as_jax_keeps_it():
    f = ember.jit(lambda t: t + 1, donate_argnums=0)
    a = ember.device_put(np.arange(4, dtype=np.float32))
    n = np.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(f(a)), np.arange(4) + 1)
    np.testing.assert_array_equal(n, np.arange(4))  # not written into
    # JAX, the oracle: an array with an external reference is not donated either.
    ja = jnp.arange(4.0)
    jn = np.from_dlpack(ja)
    jax.jit(lambda t: t + 1, donate_argnums=0)(ja)
    np.testing.assert_array_equal(jn, np.arange(4))
    assert a.is_deleted() == ja.is_deleted() is False
    # Memory imported from JAX stays JAX's.
    src = jnp.arange(64.0, dtype=jnp.float32)
    x = enp.from_dlpack(src, copy=False)
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(64) + 1)
    np.testing.assert_array_equal(np.asarray(src), np.arange(64))


# --- transformed results and arguments -------------------------------------------------------

def test_jit_and_vmap_results_export_and_imported_arrays_run():
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    y = ember.jit(ember.vmap(lambda r: enp.tanh(r) @ r))(x)
    np.testing.assert_allclose(np.from_dlpack(y), jax.vmap(lambda r: jnp.tanh(r) @ r)(x),
                               rtol=1e-5)
    np.testing.assert_allclose(np.from_dlpack(y), np.einsum("ij,ij->i", np.tanh(x), x),
                               rtol=1e-5)
    z = enp.from_dlpack(jnp.asarray(x))                 # shared JAX memory as an argument
    np.testing.assert_allclose(np.asarray(ember.jit(lambda t: t.sum(0))(z)), x.sum(0),
                               rtol=1e-6)


# --- bad input -------------------------------------------------------------------------------

def test_bad_arguments_raise_ember_errors():
    a = ember.device_put(np.arange(3, dtype=np.float32))
    with pytest.raises(DLPackError, match="stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(DLPackError, match="dl_device"):
        a.__dlpack__(dl_device=(7, 0))
    for version in ((0, 0), (1, 0), (2, 0)):        # what the standard's suite passes
        a.__dlpack__(max_version=version, dl_device=(1, 0), copy=False)
    with pytest.raises(NoDLPackError, match="list"):
        enp.from_dlpack([1.0, 2.0])
    assert issubclass(NoDLPackError, AttributeError)
    with pytest.raises(ConcretizationError, match="from_dlpack needs a concrete array"):
        ember.jit(lambda t: enp.from_dlpack(t))(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="device must be"):
        enp.from_dlpack(np.ones(2), device=3)
