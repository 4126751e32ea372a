"""The fast Fourier transform kernels of ``ember.lax.fft`` and ``ember.numpy.fft``, written
with ember ops: IREE has no FFT, so a transform is a short sequence of batched contractions
(``dot_general`` with constant DFT matrices) and elementwise products, which also makes it
differentiable and batchable like any other ember program.

Along one axis of length n (:func:`dft_last`, complex in and out):

- n <= ``DENSE``: one contraction with the n x n DFT matrix;
- otherwise mixed-radix Cooley-Tukey: n = n1 * n2 with n1 the largest divisor <= ``DENSE``;
  a DFT of length n1 by contraction, the twiddle factors, then the length-n2 transform,
  recursively (a length 4096 is two contractions of 64);
- a prime n > ``DENSE`` (or a factor of that kind): Bluestein's chirp-z algorithm, a
  circular convolution of a smooth length m >= 2n - 1 done with two transforms of length m.

Real transforms of even length n > ``DENSE`` pack the n real samples into n / 2 complex
ones and transform those (half the work); other real lengths use the complex transform.
Every constant (DFT matrices, twiddles, chirps, the chirp filter's transform) is computed in
float64 on the host, with the angles reduced to the first octant in integer arithmetic, and
rounded once to the working precision; a scale factor (the 1/n of an inverse transform, the
``norm=`` of NumPy) is folded into one of them rather than applied by a separate product.

Example:
    >>> from ember.lax import _fft
    >>> ember.jit(lambda v: _fft.dft_last(v, -1, 1.0))(enp.ones(4, enp.complex64))
    Array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
"""

from __future__ import annotations

import enum
import functools
import math
import operator

import numpy as np

from ember import dtypes
from ember.errors import ShapeValueError, TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import current_trace, user_where
from ember.lax import _core as lax

__all__ = ["FftType", "fft"]

# Lengths up to DENSE are one matrix product: n multiply-adds per output, accurate to about
# sqrt(n) ulps, and larger radices mean fewer levels (ops) for long transforms.
DENSE = 64


class FftType(enum.IntEnum):
    """The kind of :func:`fft`, as JAX's ``lax.FftType``: complex forward (``FFT``) and
    inverse (``IFFT``), real-to-complex (``RFFT``) and complex-to-real (``IRFFT``).

    Example:
        >>> ember.lax.FftType.RFFT
        <FftType.RFFT: 2>
    """

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _error(msg, cls=TracingError):
    raise cls(f"{msg}\n  at {user_where()}")


# --- host constants (float64, rounded once) -----------------------------------------------

def roots(idx, n: int, sign: int) -> np.ndarray:
    """``exp(sign * 2 pi i idx / n)`` for integer ``idx``, in complex128 to about an ulp: the
    angle's quadrant and octant are found in integer arithmetic, so sin and cos only ever see
    arguments in [0, pi/4] (``np.exp(2j * np.pi * idx / n)`` loses digits as idx / n grows)."""
    r = np.mod(np.asarray(idx, np.int64), n)
    q, rem = np.divmod(4 * r, n)                       # angle = (q + rem / n) * pi / 2
    flip = 2 * rem > n
    m = np.where(flip, n - rem, rem)
    phi = (np.pi / 2) * (m / n)
    c, s = np.cos(phi), np.sin(phi)
    c, s = np.where(flip, s, c), np.where(flip, c, s)
    q = q % 4
    re = np.choose(q, [c, -s, -c, s])
    im = np.choose(q, [s, c, -s, -c])
    return re + 1j * sign * im


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@functools.lru_cache(maxsize=512)
def _dft_matrix(n: int, m: int, sign: int, scale: float, dtype) -> np.ndarray:
    """The first ``m`` columns of the n x n DFT matrix ``exp(sign 2 pi i jk / n)``, scaled."""
    j = np.arange(n)
    return _frozen((roots(np.outer(j, np.arange(m)), n, sign) * scale).astype(dtype))


@functools.lru_cache(maxsize=512)
def _c2r_matrix(n: int, sign: int, scale: float, dtype) -> np.ndarray:
    """(n // 2 + 1, n): ``Re(X @ V)`` is the complex-to-real transform of the half spectrum X:
    each bin but 0 and n / 2 stands for itself and its conjugate mirror (weight 2)."""
    k = np.arange(n // 2 + 1)
    weight = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    v = roots(np.outer(k, np.arange(n)), n, sign) * (weight * scale)[:, None]
    return _frozen(v.astype(dtype))


@functools.lru_cache(maxsize=512)
def _twiddles(n1: int, n2: int, sign: int, dtype) -> np.ndarray:
    """(n2, n1): ``exp(sign 2 pi i j2 k1 / (n1 n2))``, between the two stages of a step."""
    return _frozen(roots(np.outer(np.arange(n2), np.arange(n1)), n1 * n2, sign).astype(dtype))


def _smooth(m: int) -> int:
    """The least integer >= m whose prime factors are 2, 3, 5 and 7."""
    while True:
        r = m
        for p in (2, 3, 5, 7):
            while r % p == 0:
                r //= p
        if r == 1:
            return m
        m += 1


@functools.lru_cache(maxsize=128)
def _bluestein_constants(n: int, sign: int, scale: float, dtype):
    """The chirp ``exp(sign pi i j^2 / n)`` (n,) and the transform of the convolution filter
    (its conjugate, wrapped around a circle of length m), with ``scale / m`` folded in."""
    m = _smooth(2 * n - 1)
    j = np.arange(n, dtype=np.int64)
    chirp = roots(j * j % (2 * n), 2 * n, sign)
    b = np.zeros(m, np.complex128)
    b[:n] = np.conj(chirp)
    b[m - n + 1:] = np.conj(chirp[1:])[::-1]
    filt = np.fft.fft(b) * (scale / m)
    return m, _frozen(chirp.astype(dtype)), _frozen(filt.astype(dtype))


@functools.lru_cache(maxsize=128)
def _pack_constants(n: int, sign: int, scale: float, dtype):
    """The split of a length-n/2 complex transform of packed real samples into the real
    transform's bins (forward, sign -1), or the merge before it (inverse, sign +1)."""
    h = n // 2
    w = roots(np.arange(h + 1), n, sign)
    # The inverse's half-length transform stands for one of length n: twice the sum.
    half = 0.5 if sign < 0 else 1.0
    a = (1 + 1j * sign * w) * half * scale
    b = (1 - 1j * sign * w) * half * scale
    return _frozen(a.astype(dtype)), _frozen(b.astype(dtype))


def _radix(n: int) -> int | None:
    """The first stage's length for n > DENSE: the largest divisor <= DENSE, else the least
    prime factor (a composite of large primes), None for a prime (Bluestein)."""
    for d in range(DENSE, 1, -1):
        if n % d == 0:
            return d
    p = next((p for p in range(DENSE + 1, math.isqrt(n) + 1) if n % p == 0), None)
    return p


# --- traced kernels -----------------------------------------------------------------------

def _const(v, dtype):
    v = np.asarray(v, dtype)
    if v.dtype == np.complex128 and v.ndim:
        # IREE 3.13 crashes (SIGFPE sizing the constant pool) on a dense complex128 constant
        # of more than a few elements; two float64 constants joined by lax.complex compile.
        # IREE quirk: see tests/test_iree_quirks.py::test_complex128_dense_constant_crashes
        return lax.complex(current_trace().lift(np.ascontiguousarray(v.real)),
                           current_trace().lift(np.ascontiguousarray(v.imag)))
    return current_trace().lift(v)


def _scaled(x, scale: float):
    if scale == 1:
        return x
    return lax.mul(x, lax.broadcast_in_dim(_const(scale, x.dtype), x.shape, ()))


def _by(x, table):
    """``x`` times a constant of its trailing shape (broadcast over the leading axes)."""
    t = _const(table, x.dtype)
    r = x.ndim - t.ndim
    return lax.mul(x, lax.broadcast_in_dim(t, x.shape, tuple(range(r, x.ndim))))


def _real_products(xr, xi, axis: int, mat):
    """The real and imaginary parts of ``(xr + i xi)`` contracted along ``axis`` with the
    first axis of the constant complex ``mat`` (that axis replaced by ``mat``'s second,
    last), as real products (``xi`` None: a real operand). The constants stay real: ember
    lowers a complex product to these four real ones anyway, and IREE 3.13 miscompiled a
    complex128 product with ``complex(constant, zero splat)`` (the real parts used for the
    imaginary ones)."""
    dims = (((axis,), (0,)), ((), ()))
    rdt = xr.dtype
    mr = _const(np.ascontiguousarray(mat.real), rdt)
    mi = _const(np.ascontiguousarray(mat.imag), rdt) if np.any(mat.imag) else None
    dot = lambda a, b: lax.dot_general(a, b, dims)        # noqa: E731
    re = dot(xr, mr)
    im = dot(xr, mi) if mi is not None else None
    if xi is not None:
        re = lax.sub(re, dot(xi, mi)) if mi is not None else re
        im = lax.add(im, dot(xi, mr)) if im is not None else dot(xi, mr)
    return re, im


def _contract(x, axis: int, mat):
    """The complex ``x`` contracted along ``axis`` with the constant ``mat`` (see
    :func:`_real_products`)."""
    re, im = _real_products(lax.real(x), lax.imag(x), axis, mat)
    return lax.complex(re, im) if im is not None else \
        lax.convert_element_type(re, x.dtype)


def _swap_last(x):
    """The last two axes exchanged."""
    r = x.ndim
    return lax.transpose(x, tuple(range(r - 2)) + (r - 1, r - 2))


def _last_slice(x, start: int, stop: int, step: int = 1):
    r = x.ndim
    return lax.slice(x, (0,) * (r - 1) + (start,), x.shape[:-1] + (stop,),
                     (1,) * (r - 1) + (step,))


def dft_last(x, sign: int, scale: float):
    """``scale * sum_j x[..., j] exp(sign 2 pi i j k / n)`` along the last axis of the complex
    tracer ``x`` (sign -1: forward, +1: inverse without the 1/n)."""
    n = x.shape[-1]
    if n <= 1 or x.size == 0:
        return _scaled(x, scale)
    if n <= DENSE:
        return _contract(x, x.ndim - 1, _dft_matrix(n, n, sign, scale, x.dtype))
    n1 = _radix(n)
    if n1 is None:
        return _bluestein(x, sign, scale)
    n2 = n // n1
    lead = x.shape[:-1]
    r = len(lead)
    # x[n2 j1 + j2] as (j1, j2); X[k1 + n1 k2] = sum_j2 w_n^(j2 k1) w_n2^(j2 k2)
    # sum_j1 x[n2 j1 + j2] w_n1^(j1 k1).
    y = lax.reshape(x, lead + (n1, n2))
    if n1 <= DENSE:
        y = _contract(y, r, _dft_matrix(n1, n1, sign, 1.0, x.dtype))     # (..., j2, k1)
    else:
        y = dft_last(_swap_last(y), sign, 1.0)
    y = _by(y, _twiddles(n1, n2, sign, x.dtype))
    z = dft_last(_swap_last(y), sign, scale)                           # (..., k1, k2)
    return lax.reshape(_swap_last(z), lead + (n,))


def _bluestein(x, sign: int, scale: float):
    """A prime length as a convolution with a chirp: ``w^(jk) = c_j c_k conj(c_(k-j))``."""
    n = x.shape[-1]
    m, chirp, filt = _bluestein_constants(n, sign, scale, x.dtype)
    y = _by(x, chirp)
    # Zero-padded as two real arrays: a complex pad value is a 0-d complex splat, which
    # IREE 3.13 could not compile when read as a scalar ("failed to legalize
    # complex.bitcast").
    # IREE quirk: see tests/test_iree_quirks.py::test_complex_pad_value_fails
    rdt = dtypes.real_dtype(x.dtype)
    zero = _const(0, rdt)
    config = [(0, 0, 0)] * (x.ndim - 1) + [(0, m - n, 0)]
    y = lax.complex(lax.pad(lax.real(y), zero, config), lax.pad(lax.imag(y), zero, config))
    y = _by(dft_last(y, -1, 1.0), filt)
    y = _last_slice(dft_last(y, 1, 1.0), 0, n)
    return _by(y, chirp)


def rdft_last(x, scale: float):
    """The first n // 2 + 1 bins of the forward transform of the real tracer ``x`` along its
    last axis (length n), scaled; complex of ``x``'s precision."""
    n = x.shape[-1]
    cdt = dtypes.complex_dtype(x.dtype)
    if x.size == 0:
        return lax.broadcast_in_dim(_const(0, cdt), x.shape[:-1] + (n // 2 + 1,), ())
    if n <= DENSE:
        re, im = _real_products(x, None, x.ndim - 1, _dft_matrix(n, n // 2 + 1, -1, scale, cdt))
        return lax.complex(re, im) if im is not None else lax.convert_element_type(re, cdt)
    if n % 2:
        xc = lax.convert_element_type(x, cdt)
        return _last_slice(dft_last(xc, -1, scale), 0, n // 2 + 1)
    # z_j = x_2j + i x_2j+1; X_k = A_k Z_k + B_k conj(Z_(h-k)) with Z's index modulo h.
    z = lax.complex(_last_slice(x, 0, n, 2), _last_slice(x, 1, n, 2))
    zf = dft_last(z, -1, 1.0)
    zf = lax.concatenate([zf, _last_slice(zf, 0, 1)], x.ndim - 1)          # (..., h + 1)
    mirror = lax.conj(lax.rev(zf, (x.ndim - 1,)))
    a, b = _pack_constants(n, -1, scale, cdt)
    return lax.add(_by(zf, a), _by(mirror, b))


def irdft_last(x, n: int, scale: float):
    """The real inverse transform (without 1/n, times ``scale``) of length ``n`` of the half
    spectrum ``x`` (complex, last axis n // 2 + 1) along the last axis. The imaginary parts
    of bin 0 and (n even) bin n / 2 are ignored, as NumPy ignores them."""
    rdt = dtypes.real_dtype(x.dtype)
    r = x.ndim
    if x.size == 0:
        return lax.broadcast_in_dim(_const(0, rdt), x.shape[:-1] + (n,), ())
    if n <= DENSE:
        re, _ = _real_products(lax.real(x), lax.imag(x), r - 1,
                               _c2r_matrix(n, 1, scale, x.dtype))
        return re
    if n % 2:
        tail = lax.conj(lax.rev(_last_slice(x, 1, (n + 1) // 2), (r - 1,)))
        full = lax.concatenate([x, tail], r - 1)
        return lax.real(dft_last(full, 1, scale))
    # Undo the packing of rdft_last: Z_k = A_k X_k + B_k conj(X_(h-k)), z = IDFT_h(Z),
    # x_2j = Re z_j, x_2j+1 = Im z_j. Bins 0 and h first lose their imaginary parts.
    h = n // 2
    mask = np.ones(h + 1, rdt)
    mask[[0, h]] = 0
    x = lax.complex(lax.real(x), _by(lax.imag(x), mask))
    a, b = _pack_constants(n, 1, scale, x.dtype)
    low = _last_slice(x, 0, h)
    mirror = lax.conj(lax.rev(_last_slice(x, 1, h + 1), (r - 1,)))
    zf = lax.add(_by(low, a[:h]), _by(mirror, b[:h]))
    z = dft_last(zf, 1, 1.0)
    parts = [lax.broadcast_in_dim(p, z.shape + (1,), tuple(range(r)))
             for p in (lax.real(z), lax.imag(z))]
    return lax.reshape(lax.concatenate(parts, r), x.shape[:-1] + (n,))


def along(x, axis: int, fn):
    """``fn`` (a transform of the last axis) applied along ``axis`` of ``x``."""
    r = x.ndim
    axis %= r
    if axis == r - 1:
        return fn(x)
    perm = tuple(i for i in range(r) if i != axis) + (axis,)
    y = fn(lax.transpose(x, perm))
    inv = tuple(int(i) for i in np.argsort(perm))
    return lax.transpose(y, inv)


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            pass
    else:
        try:
            return FftType(fft_type)
        except ValueError:
            pass
    _error(f"lax.fft: unknown fft_type {fft_type!r}; expected one of "
           f"{[t.name for t in FftType]} (or lax.FftType)", ShapeValueError)


@eager
def fft(x, fft_type, fft_lengths):
    """``lax.fft``: the discrete Fourier transform over the trailing ``len(fft_lengths)``
    axes of ``x``, as JAX's. ``fft_type``: ``FftType`` or its name.

    - ``FFT``/``IFFT``: complex to complex (real input becomes complex), the trailing shape
      equal to ``fft_lengths``; ``IFFT`` divides by their product.
    - ``RFFT``: real to complex, the last axis ``fft_lengths[-1] // 2 + 1`` bins.
    - ``IRFFT``: complex to real, the inverse of ``RFFT`` (input's last axis
      ``fft_lengths[-1] // 2 + 1``, output's ``fft_lengths[-1]``), divided by the product.

    Any number of axes (XLA allows three). Built from contractions and elementwise ops
    (``ember/lax/_fft.py``): it works under jit, vmap and differentiation on every backend
    with complex numbers.

    Example:
        >>> ember.lax.fft(np.array([1.0, 2.0, 3.0, 4.0], np.float32), "RFFT", (4,))
        Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    typ = _fft_type(fft_type)
    x = current_trace().lift(x)
    try:
        lengths = tuple(operator.index(n) for n in fft_lengths)
    except TypeError:
        _error(f"lax.fft: fft_lengths must be a sequence of ints, got {fft_lengths!r}")
    k = len(lengths)
    if k == 0 or k > x.ndim:
        _error(f"lax.fft: {k} fft_lengths {lengths} for an operand of rank {x.ndim}",
               ShapeValueError)
    if any(n < 0 for n in lengths):
        _error(f"lax.fft: negative fft_lengths {lengths}", ShapeValueError)
    cdt = dtypes.complex_dtype(dtypes.to_inexact(x.dtype))      # (float16: complex64)
    if typ == FftType.RFFT:
        if dtypes.is_complex(x.dtype):
            _error(f"lax.fft: RFFT takes real input, got {np.dtype(x.dtype).name}")
        x = lax.convert_element_type(x, dtypes.real_dtype(cdt))
        want = lengths
    else:
        x = lax.convert_element_type(x, cdt)
        want = lengths[:-1] + (lengths[-1] // 2 + 1,) if typ == FftType.IRFFT else lengths
    if tuple(x.shape[-k:]) != want:
        _error(f"lax.fft: {typ.name} of fft_lengths {lengths} needs the trailing shape "
               f"{want}, got operand shape {x.shape}", ShapeValueError)
    inverse = typ in (FftType.IFFT, FftType.IRFFT)
    total = math.prod(lengths)
    scale = 1.0 / total if inverse and total else 1.0
    axes = range(x.ndim - k, x.ndim)
    sign = 1 if inverse else -1
    if typ == FftType.RFFT:
        x = rdft_last(x, scale)
        scale = 1.0
        axes = axes[:-1]
    elif typ == FftType.IRFFT:
        axes = axes[:-1]
    for a in reversed(axes):
        x = along(x, a, lambda v, s=scale: dft_last(v, sign, s))
        scale = 1.0
    if typ == FftType.IRFFT:
        x = irdft_last(x, lengths[-1], scale)
    return x
