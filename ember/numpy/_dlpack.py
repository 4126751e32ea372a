"""``ember.numpy.from_dlpack``: arrays of other libraries (NumPy, JAX, PyTorch) as ember
Arrays through DLPack; the work is ``ember.backends.dlpack``'s."""

from __future__ import annotations


def from_dlpack(x, /, *, device=None, copy=None):
    """The ember Array of ``x``, any object with ``__dlpack__`` (a NumPy or JAX array, a
    PyTorch tensor, an ember Array), as the Array API standard's ``from_dlpack``.

    Host memory is shared, not copied, where IREE can wrap it: C-contiguous and aligned to
    64 bytes (JAX's CPU arrays are; NumPy's own allocations usually are not, nor are strided
    views or read-only arrays). Everything else is copied, as are 64-bit data while 64-bit
    types are off (they become 32-bit, as ``asarray`` makes them). ``copy=True`` always
    copies; ``copy=False`` never does and raises DLPackError (a BufferError and a
    ValueError) where a copy is needed. Shared memory stays the producer's: writing to it
    afterwards changes the Array (as it changes a JAX array made this way), and a jitted
    call that donates the Array gets a copy instead. ``device`` is an ember device or a
    backend name; by default the CPU (where DLPack's host memory is) for other libraries'
    arrays, and an ember Array's own device for an ember Array.

    Example:
        >>> x = enp.from_dlpack(np.arange(3.0, dtype=np.float32))
        >>> x
        Array([0., 1., 2.], dtype=float32)
        >>> enp.from_dlpack(jax.numpy.ones(2), copy=False).dtype
        dtype('float32')
    """
    from ember.backends import dlpack
    return dlpack.from_dlpack(x, device, copy)
