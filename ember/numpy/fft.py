"""ember.numpy.fft: NumPy's discrete Fourier transforms (``numpy.fft``, the Array API's fft
extension), built on the kernels of ``ember.lax.fft`` (``ember/lax/_fft.py``: mixed-radix
Cooley-Tukey over contractions with small DFT matrices, Bluestein for large prime lengths).

Arguments are NumPy 2's: ``n``/``s`` crop or zero-pad the input along the transformed
axes, ``axis``/``axes`` choose them, ``norm`` is "backward" (None), "ortho" or "forward".
Results follow JAX's dtypes: float32 and complex64 inputs give complex64 (real results
float32), integers the default float's precision; float64/complex128 need x64. Every
function works eagerly, under ``jit`` and ``vmap``, and differentiates.

Example:
    >>> import ember.numpy as enp
    >>> enp.fft.fft(enp.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
"""

from __future__ import annotations

import math
import operator
import sys
import warnings

import numpy as np

from ember import dtypes, lax
from ember.errors import AxisError, FftArgumentError, TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, user_where
from ember.lax import _fft as kernels

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def _enp():
    return sys.modules["ember.numpy"]


def _error(msg, cls=FftArgumentError):
    raise cls(f"{msg}\n  at {user_where()}")


# --- arguments ----------------------------------------------------------------------------

def _scale(fun, norm, n: int, inverse: bool) -> float:
    """The factor NumPy's ``norm`` puts on the unnormalized transform of length n."""
    if norm is None or norm == "backward":
        return 1.0 / n if inverse else 1.0
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 if inverse else 1.0 / n
    _error(f'fft.{fun}: invalid norm value {norm!r}; should be "backward", "ortho" or '
           '"forward"')


def _length(fun, n) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        _error(f"fft.{fun}: n must be an integer, got {n!r}", TracingError)
    if n < 1:
        _error(f"fft.{fun}: invalid number of FFT data points ({n}) specified")
    return n


def _axis(fun, axis, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        _error(f"fft.{fun}: axis must be an integer, got {axis!r}", TracingError)
    if not -ndim <= axis < ndim:
        _error(f"fft.{fun}: axis {axis} is out of bounds for an array of dimension {ndim}",
               AxisError)
    return axis % ndim


def _complex(a):
    """``a`` as a complex tracer of its precision (JAX's: integers the default float's,
    float16 and bfloat16 complex64)."""
    x = _enp()._lift(a)
    return lax.convert_element_type(x, dtypes.complex_dtype(dtypes.to_inexact(x.dtype)))


def _real(fun, a):
    """``a`` as a real tracer of the precision :func:`_complex` gives."""
    x = _enp()._lift(a)
    if dtypes.is_complex(x.dtype):
        _error(f"fft.{fun}: expected real input, got {np.dtype(x.dtype).name} (take its "
               "real part, or use fft)", TracingError)
    cdt = dtypes.complex_dtype(dtypes.to_inexact(x.dtype))
    return lax.convert_element_type(x, dtypes.real_dtype(cdt))


def _resize(x, axis: int, n: int):
    """``x`` cropped or zero-padded to length ``n`` along ``axis``."""
    m = x.shape[axis]
    if n == m:
        return x
    if n < m:
        limit = list(x.shape)
        limit[axis] = n
        return lax.slice(x, (0,) * x.ndim, tuple(limit))
    config = [(0, 0, 0)] * x.ndim
    config[axis] = (0, n - m, 0)
    if dtypes.is_complex(x.dtype):      # (a complex pad value: see _fft._bluestein)
        zero = _enp()._to(0, dtypes.real_dtype(x.dtype))
        return lax.complex(lax.pad(lax.real(x), zero, config),
                           lax.pad(lax.imag(x), zero, config))
    return lax.pad(x, _enp()._to(0, x.dtype), config)


def _c2c(fun, x, n, axis, norm, inverse):
    axis = _axis(fun, axis, x.ndim)
    n = _length(fun, x.shape[axis] if n is None else n)
    scale = _scale(fun, norm, n, inverse)
    sign = 1 if inverse else -1
    return kernels.along(_resize(x, axis, n), axis,
                         lambda v: kernels.dft_last(v, sign, scale))


def _r2c(fun, x, n, axis, norm, inverse):
    """The half spectrum of the real ``x`` (``rfft``; ``ihfft`` conjugates it)."""
    axis = _axis(fun, axis, x.ndim)
    n = _length(fun, x.shape[axis] if n is None else n)
    scale = _scale(fun, norm, n, inverse)
    return kernels.along(_resize(x, axis, n), axis, lambda v: kernels.rdft_last(v, scale))


def _c2r(fun, x, n, axis, norm, inverse):
    """The real signal of length n of the half spectrum ``x`` (``irfft``; ``hfft``)."""
    axis = _axis(fun, axis, x.ndim)
    n = _length(fun, 2 * (x.shape[axis] - 1) if n is None else n)
    scale = _scale(fun, norm, n, inverse)
    return kernels.along(_resize(x, axis, n // 2 + 1), axis,
                         lambda v: kernels.irdft_last(v, n, scale))


def _cook(fun, x, s, axes, invreal=False):
    """NumPy 2's ``_cook_nd_args``: the lengths and axes of an n-dimensional transform."""
    shapeless = s is None
    if axes is not None:
        try:
            axes = [operator.index(a) for a in (axes if np.ndim(axes) else [axes])]
        except TypeError:
            _error(f"fft.{fun}: axes must be a sequence of integers, got {axes!r}",
                   TracingError)
    if s is None:
        s = list(x.shape) if axes is None else [x.shape[_axis(fun, a, x.ndim)] for a in axes]
    else:
        s = list(s) if np.ndim(s) else [s]
    if axes is None:
        if not shapeless:
            warnings.warn(f"fft.{fun}: `axes` should not be `None` if `s` is not `None` "
                          "(deprecated in NumPy 2.0); the last len(s) axes are used. Pass "
                          "axes to say which.", DeprecationWarning, stacklevel=3)
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        _error(f"fft.{fun}: shape and axes have different lengths: s={s}, axes={axes}")
    axes = [_axis(fun, a, x.ndim) for a in axes]
    if invreal and shapeless and axes:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    if any(v is None for v in s):
        warnings.warn(f"fft.{fun}: None in s is deprecated in NumPy 2.0; pass the length "
                      "(or -1) for the whole axis", DeprecationWarning, stacklevel=3)
    s = [x.shape[a] if v is None or (isinstance(v, int) and v == -1) else v
         for v, a in zip(s, axes)]
    return s, axes


# --- complex transforms -----------------------------------------------------------------

@eager
def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional discrete Fourier transform along ``axis``, as ``numpy.fft.fft``:
    ``X[k] = sum_j a[j] exp(-2 pi i jk / n)``, with ``a`` cropped or zero-padded to ``n``.

    Example:
        >>> enp.fft.fft(enp.array([1.0, 0.0, 0.0, 0.0]), norm="ortho")
        Array([0.5+0.j, 0.5+0.j, 0.5+0.j, 0.5+0.j], dtype=complex64)
    """
    return _c2c("fft", _complex(a), n, axis, norm, False)


@eager
def ifft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`fft` along ``axis`` (``norm="backward"``: divided by n), as
    ``numpy.fft.ifft``.

    Example:
        >>> enp.fft.ifft(enp.array([4.0, 0.0, 0.0, 0.0]))
        Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return _c2c("ifft", _complex(a), n, axis, norm, True)


def _c2c_nd(fun, a, s, axes, norm, inverse):
    x = _complex(a)
    s, axes = _cook(fun, x, s, axes)
    for n, ax in reversed(list(zip(s, axes))):
        x = _c2c(fun, x, n, ax, norm, inverse)
    return x


@eager
def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform over ``axes`` (default: all, or the last ``len(s)``), as
    ``numpy.fft.fftn``: one-dimensional transforms along each, ``s`` their lengths.

    Example:
        >>> enp.fft.fftn(enp.ones((2, 2)))
        Array([[4.+0.j, 0.+0.j],
               [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _c2c_nd("fftn", a, s, axes, norm, False)


@eager
def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of :func:`fftn`, as ``numpy.fft.ifftn``.

    Example:
        >>> enp.fft.ifftn(enp.fft.fftn(enp.eye(2))).real
        Array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    return _c2c_nd("ifftn", a, s, axes, norm, True)


@eager
def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional transform over ``axes`` (the last two), as ``numpy.fft.fft2``.

    Example:
        >>> enp.fft.fft2(enp.ones((2, 2)))[0, 0]
        Array(4.+0.j, dtype=complex64)
    """
    return _c2c_nd("fft2", a, s, axes, norm, False)


@eager
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of :func:`fft2`, as ``numpy.fft.ifft2``.

    Example:
        >>> enp.fft.ifft2(enp.full((2, 2), 4.0))[0, 0]
        Array(4.+0.j, dtype=complex64)
    """
    return _c2c_nd("ifft2", a, s, axes, norm, True)


# --- real transforms ---------------------------------------------------------------------

@eager
def rfft(a, n=None, axis=-1, norm=None):
    """The transform of real input, its n // 2 + 1 non-negative frequency bins, as
    ``numpy.fft.rfft``.

    Example:
        >>> enp.fft.rfft(enp.array([1.0, 2.0, 3.0, 4.0]))
        Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    return _r2c("rfft", _real("rfft", a), n, axis, norm, False)


@eager
def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`rfft`: the real signal of length ``n`` (default
    ``2 * (m - 1)`` for m input bins) whose half spectrum is ``a``, as
    ``numpy.fft.irfft`` (the imaginary parts of bins 0 and n / 2 are ignored).

    Example:
        >>> enp.fft.irfft(enp.array([10.0, -2 + 2j, -2.0]))
        Array([1., 2., 3., 4.], dtype=float32)
    """
    return _c2r("irfft", _complex(a), n, axis, norm, True)


def _r2c_nd(fun, a, s, axes, norm):
    x = _real(fun, a)
    s, axes = _cook(fun, x, s, axes)
    if not axes:
        _error(f"fft.{fun}: at least one axis is needed")
    x = _r2c(fun, x, s[-1], axes[-1], norm, False)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        x = _c2c(fun, x, n, ax, norm, False)
    return x


def _c2r_nd(fun, a, s, axes, norm):
    x = _complex(a)
    s, axes = _cook(fun, x, s, axes, invreal=True)
    if not axes:
        _error(f"fft.{fun}: at least one axis is needed")
    for n, ax in zip(s[:-1], axes[:-1]):
        x = _c2c(fun, x, n, ax, norm, True)
    return _c2r(fun, x, s[-1], axes[-1], norm, True)


@eager
def rfftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform of real input, as ``numpy.fft.rfftn``: :func:`rfft`
    along the last of ``axes``, :func:`fft` along the others.

    Example:
        >>> enp.fft.rfftn(enp.ones((2, 4))).shape
        (2, 3)
    """
    return _r2c_nd("rfftn", a, s, axes, norm)


@eager
def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of :func:`rfftn`, as ``numpy.fft.irfftn`` (the last axis's length
    defaults to ``2 * (m - 1)``).

    Example:
        >>> enp.fft.irfftn(enp.fft.rfftn(enp.ones((2, 4)))).shape
        (2, 4)
    """
    return _c2r_nd("irfftn", a, s, axes, norm)


@eager
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`rfftn` over ``axes`` (the last two), as ``numpy.fft.rfft2``.

    Example:
        >>> enp.fft.rfft2(enp.ones((2, 4)))[0, 0]
        Array(8.+0.j, dtype=complex64)
    """
    return _r2c_nd("rfft2", a, s, axes, norm)


@eager
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`irfftn` over ``axes`` (the last two), as ``numpy.fft.irfft2``.

    Example:
        >>> enp.fft.irfft2(enp.fft.rfft2(enp.ones((2, 4))))[0, 0]
        Array(1., dtype=float32)
    """
    return _c2r_nd("irfft2", a, s, axes, norm)


@eager
def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a signal with Hermitian symmetry given by its first half ``a``: a
    real spectrum of length ``n`` (default ``2 * (m - 1)``), as ``numpy.fft.hfft``
    (``irfft(conj(a))`` with the forward transform's ``norm``).

    Example:
        >>> enp.fft.hfft(enp.array([1.0, 2.0, 3.0]))
        Array([ 8., -2.,  0., -2.], dtype=float32)
    """
    x = lax.conj(_complex(a))
    return _c2r("hfft", x, n, axis, norm, False)


@eager
def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`hfft`: the first half of the Hermitian signal whose transform
    is the real ``a``, as ``numpy.fft.ihfft`` (``conj(rfft(a)) / n`` by default).

    Example:
        >>> enp.fft.ihfft(enp.array([8.0, -2.0, 0.0, -2.0]))
        Array([1.-0.j, 2.-0.j, 3.-0.j], dtype=complex64)
    """
    return lax.conj(_r2c("ihfft", _real("ihfft", a), n, axis, norm, True))


# --- frequencies and shifts ---------------------------------------------------------------

def _freq_dtype(fun, dtype):
    if dtype is None:
        return dtypes.default_float()
    dt = dtypes.canonicalize(dtype)
    if not np.issubdtype(dt, np.floating):
        _error(f"fft.{fun}: dtype must be a real floating-point dtype, got {dt.name}",
               TracingError)
    return dt


def _freqs(fun, k: np.ndarray, n, d, dtype, device):
    """``k / (n d)`` as NumPy computes it (``k * (1 / (n d))``): on the host in float64 for
    a concrete ``d``, traced otherwise."""
    enp = _enp()
    dt = _freq_dtype(fun, dtype)
    if isinstance(d, Tracer) or hasattr(d, "aval"):
        val = 1.0 / (enp.asarray(d, dt) * n)
        return enp.asarray(k.astype(dt), device=device) * val
    return enp.asarray((k * (1.0 / (n * d))).astype(dt), device=device)


def _freq_n(fun, n) -> int:
    try:
        return operator.index(n)
    except TypeError:
        _error(f"fft.{fun}: n should be an integer, got {n!r}", FftArgumentError)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of :func:`fft`'s bins for a window of ``n`` samples spaced
    ``d`` apart: ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)``, as
    ``numpy.fft.fftfreq`` (``dtype``: the default float; ``device``: where to put it).

    Example:
        >>> enp.fft.fftfreq(4, 0.5)
        Array([ 0. ,  0.5, -1. , -0.5], dtype=float32)
    """
    n = _freq_n("fftfreq", n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _freqs("fftfreq", k, n, d, dtype, device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of :func:`rfft`'s bins: ``[0, 1, ..., n // 2] / (d n)``, as
    ``numpy.fft.rfftfreq``.

    Example:
        >>> enp.fft.rfftfreq(4, 0.5)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    n = _freq_n("rfftfreq", n)
    return _freqs("rfftfreq", np.arange(0, n // 2 + 1), n, d, dtype, device)


def _shift(fun, x, axes, sign):
    enp = _enp()
    x = enp._lift(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not np.ndim(axes):
        axes = (axes,)
    axes = tuple(_axis(fun, a, x.ndim) for a in axes)
    if not axes:
        return x
    return enp.roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


@eager
def fftshift(x, axes=None):
    """The zero frequency moved to the middle: ``x`` rolled by half its length along
    ``axes`` (default: all), as ``numpy.fft.fftshift``.

    Example:
        >>> enp.fft.fftshift(enp.fft.fftfreq(5))
        Array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float32)
    """
    return _shift("fftshift", x, axes, 1)


@eager
def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift`, as ``numpy.fft.ifftshift``.

    Example:
        >>> enp.fft.ifftshift(enp.fft.fftshift(enp.arange(5)))
        Array([0, 1, 2, 3, 4], dtype=int32)
    """
    return _shift("ifftshift", x, axes, -1)
