"""ember.numpy creation, shape, movement and linear-algebra functions beyond the first cut.

Everything here is composed from existing ember ops (iota, slice, rev, pad, concatenate,
broadcast_in_dim, reshape, transpose, select, dot_general, reductions). Static movement by an
index pattern known at trace time (``pad`` in edge/reflect/symmetric/wrap modes, ``repeat`` with
per-element counts) becomes a few slices, reversals and broadcasts, one per run of the pattern.

Example:
    >>> import ember.numpy as enp
    >>> enp.einsum("...ii->...i", enp.ones((2, 3, 3)))   # batched diagonals
"""

from __future__ import annotations

import builtins
import math
import operator
import string
import sys

import ml_dtypes
import numpy as np

from ember import dtypes, lax
from ember.errors import NonFiniteLengthError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer
from ember.numpy._core import (
    _axes,
    _broadcast_to,
    _const,
    _error,
    _is_traced,
    _lift,
    _promote,
    _to,
    full,
)
from ember.numpy._placement import placed

__all__ = [
    # creation
    "full", "arange", "linspace", "logspace", "identity", "tri", "tril", "triu", "meshgrid",
    "indices",
    # linear algebra
    "tensordot", "einsum", "kron", "trace", "diagonal", "diag", "cross",
    # shape and movement
    "moveaxis", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack",
    "column_stack", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat",
    "flip", "fliplr", "flipud", "roll", "rot90", "pad",
    # dtypes
    "can_cast", "result_type", "promote_types", "finfo", "iinfo",
]


def _enp():
    """ember.numpy at call time (later modules may replace its functions)."""
    return sys.modules["ember.numpy"]


def _static_ints(v, what, name):
    """``v`` (an int or a sequence of ints) as a NumPy int64 array; tracers are rejected."""
    if isinstance(v, Tracer):
        v._concrete(f"{name}: {what}")
    try:
        arr = np.asarray(v)
    except TypeError:
        _error(f"{name}: {what} must be integers, got {v!r}")
    if arr.dtype.kind not in "iub" and arr.size:
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            return arr.astype(np.int64)
        _error(f"{name}: {what} must be integers, got {v!r}")
    return arr.astype(np.int64)


# --- creation -------------------------------------------------------------------------------

@placed
def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``; the bounds must be concrete.

    The length is ``ceil((stop - start) / step)`` as in NumPy (negative and fractional steps
    too); element i is ``start + i * step``.
    """
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            v._concrete("arange bounds")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        _error("arange: step must not be zero (division by zero)")
    dt = dtypes.canonicalize(dtype) if dtype is not None else \
        dtypes.result_type(start, stop, step)[0]
    if builtins.any(isinstance(v, float | np.floating) for v in (start, stop, step)):
        span = (float(stop) - float(start)) / float(step)
        if not math.isfinite(span):
            raise NonFiniteLengthError(
                f"arange: the length ceil((stop - start) / step) is not finite for "
                f"start={start!r}, stop={stop!r}, step={step!r}; give finite bounds")
        n = builtins.max(int(math.ceil(span)), 0)
    else:
        n = builtins.max(-((int(start) - int(stop)) // int(step)), 0)
    if not _is_traced():
        host = np.arange(start, stop, step) if dtypes.is_float(dt) or dt == dtypes.bool_ \
            else np.arange(start, stop, step, dtype=np.int64)
        return _enp().asarray(host[:n].astype(dt))
    if n == 0:
        return lax.broadcast_in_dim(_to(0, dt), (0,), ())
    ct = dt if dt != dtypes.bool_ else dtypes.int32
    idx = lax.iota(ct, n)
    if not (start == 0 and step == 1):
        idx = lax.add(lax.mul(idx, _const(step, idx)), _const(start, idx))
    return _to(idx, dt)


def _float_compute(dt):
    """The floating dtype to compute in for a result of ``dt`` (at least 32 bits)."""
    dt = dtypes.to_inexact(dt)
    return dt if dt.itemsize >= 4 else np.dtype(np.float32)


def _linspace_dtype(start, stop, dtype):
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    return dtypes.to_inexact(dtypes.result_type(start, stop)[0])


@placed
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (NumPy's ``linspace``).

    ``start`` and ``stop`` may be arrays (the samples run along ``axis``). With ``retstep``
    returns ``(samples, step)``; the step of ``num=1`` with ``endpoint`` is NaN, as in NumPy.
    """
    num = operator.index(num) if not isinstance(num, Tracer) else num._concrete("linspace num")
    if num < 0:
        _error(f"linspace: number of samples, {num}, must be non-negative")
    dt = _linspace_dtype(start, stop, dtype)
    try:
        np.broadcast_shapes(np.shape(start), np.shape(stop))
    except ValueError:
        _error(f"linspace: start of shape {np.shape(start)} and stop of shape "
               f"{np.shape(stop)} do not broadcast")
    if not _is_traced() and not builtins.any(
            isinstance(v, Tracer) or hasattr(v, "aval") for v in (start, stop)):
        host = np.complex128 if dtypes.is_complex(dt) else np.float64
        y, step = np.linspace(np.asarray(start, host), np.asarray(stop, host), num,
                              endpoint=endpoint, retstep=True, axis=axis)
        if dtypes.is_int(dt) or dt == dtypes.bool_:
            y = np.floor(y)
        y = _enp().asarray(y.astype(dt))
        if retstep:
            return y, _enp().asarray(np.asarray(step).astype(_float_compute(dt)))
        return y
    y, step = _linspace(start, stop, num, endpoint, dt, axis)
    return (y, step) if retstep else y


def _endpoints(start, stop, ct, name):
    """``start`` and ``stop`` in the compute dtype ``ct``, broadcast to one shape."""
    a, b = _to(start, ct), _to(stop, ct)
    try:
        bshape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        _error(f"{name}: start of shape {a.shape} and stop of shape {b.shape} do not "
               "broadcast")
    return _broadcast_to(a, bshape, name), _broadcast_to(b, bshape, name), bshape


@eager
def _linspace(start, stop, num, endpoint, dt, axis):
    ct = _float_compute(dt)
    a, b, bshape = _endpoints(start, stop, ct, "linspace")
    nd = len(bshape) + 1
    (ax,) = _axes(axis, nd)
    out_shape = bshape[:ax] + (num,) + bshape[ax:]
    others = tuple(i for i in range(nd) if i != ax)
    div = (num - 1) if endpoint else num
    delta = lax.sub(b, a)
    if div > 0:
        step = lax.div(delta, _const(div, delta))
    else:
        step = lax.div(delta, _const(np.nan, delta))
    i = lax.broadcasted_iota(dtypes.real_dtype(ct), out_shape, ax)
    i = lax.convert_element_type(i, ct)
    bc = lambda v: lax.broadcast_in_dim(v, out_shape, others)  # noqa: E731
    y = lax.add(lax.mul(i, bc(step)), bc(a)) if div > 0 else bc(a) if num else \
        lax.broadcast_in_dim(_to(0, ct), out_shape, ())
    if endpoint and num > 1:
        last = lax.eq(i, _const(num - 1, i))
        y = lax.select(last, bc(b), y)
    if dtypes.is_int(dt) or dt == dtypes.bool_:
        y = lax.floor(y)
    return _to(y, dt), step


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)`` (NumPy's ``logspace``)."""
    dt = _linspace_dtype(start, stop, dtype)
    ct = _float_compute(dt)
    y = linspace(start, stop, num, endpoint=endpoint, dtype=ct, axis=axis)
    return _logspace_pow(y, base, dt, axis)


@eager
def _logspace_pow(y, base, dt, axis):
    y = _lift(y)
    b = _to(base, y.dtype)
    if b.ndim:
        (ax,) = _axes(axis, y.ndim)
        b = _enp().expand_dims(b, ax)
    out = _enp().power(b, y)
    if dtypes.is_int(dt):
        out = lax.floor(out)
    return _to(out, dt)


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix."""
    return _enp().eye(n, dtype=dtype)


def _tri_mask(n, m, k):
    rows = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    return lax.ge(lax.add(rows, _const(k, rows)), cols)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal of an N x M array."""
    N, k = operator.index(N), operator.index(k)
    M = N if M is None else operator.index(M)
    dt = dtypes.canonicalize(dtype or dtypes.default_float())
    if not _is_traced():
        return _enp().asarray(np.tri(N, M, k, dtype=dt))
    return _to(_tri_mask(N, M, k), dt)


def _triangle(name, m, k, lower):
    x = _lift(m)
    if x.ndim < 2:
        _error(f"{name}: argument must be at least 2-D, got shape {x.shape}")
    n, mm = x.shape[-2:]
    mask = _tri_mask(n, mm, k if lower else k - 1)
    if not lower:
        mask = lax.bitwise_not(mask)
    mask = lax.broadcast_in_dim(mask, x.shape, (x.ndim - 2, x.ndim - 1))
    return lax.select(mask, x, _const(0, x))


@eager
def tril(m, k=0):
    """``m`` with the elements above the k-th diagonal zeroed (last two axes)."""
    return _triangle("tril", m, operator.index(k), True)


@eager
def triu(m, k=0):
    """``m`` with the elements below the k-th diagonal zeroed (last two axes)."""
    return _triangle("triu", m, operator.index(k), False)


@eager
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-D coordinate vectors (``indexing`` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        _error(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_enp().ravel(x) for x in xi]
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    dims = list(range(n))
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
        dims[0], dims[1] = 1, 0
    out = []
    for x, d in zip(xs, dims):
        if sparse:
            out.append(lax.reshape(x, tuple(x.shape[0] if i == d else 1 for i in range(n))))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(shape), (d,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """An array (or with ``sparse`` a tuple of arrays) of the indices of a grid."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_int()
    if not _is_traced():
        res = np.indices(dims, dtype=dt, sparse=sparse)
        return tuple(_enp().asarray(r) for r in res) if sparse else _enp().asarray(res)
    n = len(dims)
    if sparse:
        return tuple(lax.reshape(lax.iota(dt, d), tuple(d if j == i else 1 for j in range(n)))
                     for i, d in enumerate(dims))
    if n == 0:
        return lax.broadcast_in_dim(_to(0, dt), (0,), ())
    return lax.concatenate([lax.broadcasted_iota(dt, (1,) + dims, i + 1) for i in range(n)], 0)


# --- static movement helpers ----------------------------------------------------------------

def _slice_axis(x, axis, start, stop, step=1):
    lo = [0] * x.ndim
    hi = list(x.shape)
    st = [1] * x.ndim
    lo[axis], hi[axis], st[axis] = start, stop, step
    return lax.slice(x, lo, hi, st)


def _static_take(x, idx, axis):
    """``x`` indexed by the static integer array ``idx`` along ``axis``, as one slice (or a
    reversed slice, or a broadcast of one element) per run of the pattern."""
    idx = [int(i) for i in idx]
    n = len(idx)
    if n == 0:
        return _slice_axis(x, axis, 0, 0)
    pieces, i = [], 0
    while i < n:
        j = i + 1
        if j < n and idx[j] == idx[i]:
            while j < n and idx[j] == idx[i]:
                j += 1
            p = _slice_axis(x, axis, idx[i], idx[i] + 1)
            shape = list(p.shape)
            shape[axis] = j - i
            pieces.append(lax.broadcast_in_dim(p, tuple(shape), tuple(range(x.ndim))))
        elif j < n and idx[j] == idx[i] + 1:
            while j < n and idx[j] == idx[j - 1] + 1:
                j += 1
            pieces.append(_slice_axis(x, axis, idx[i], idx[j - 1] + 1))
        elif j < n and idx[j] == idx[i] - 1:
            while j < n and idx[j] == idx[j - 1] - 1:
                j += 1
            pieces.append(lax.rev(_slice_axis(x, axis, idx[j - 1], idx[i] + 1), (axis,)))
        else:
            pieces.append(_slice_axis(x, axis, idx[i], idx[i] + 1))
        i = j
    return lax.concatenate(pieces, axis)


def _repeat_scalar(x, r, axis):
    """Each element of ``x`` repeated ``r`` times along ``axis``."""
    shape = x.shape
    big = shape[:axis + 1] + (r,) + shape[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, x.ndim + 1))
    y = lax.broadcast_in_dim(x, big, dims)
    return lax.reshape(y, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])


# --- shape and movement ---------------------------------------------------------------------

@eager
def moveaxis(a, source, destination):
    """Move axes of ``a`` from ``source`` to ``destination`` (ints or sequences)."""
    x = _lift(a)
    src = _axes(source, x.ndim, "source")
    dst = _axes(destination, x.ndim, "destination")
    if len(src) != len(dst):
        _error(f"moveaxis: source {source} and destination {destination} must have the same "
               "number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(x, tuple(order))


def _atleast(n, arys):
    out = []
    for a in arys:
        x = _lift(a)
        if x.ndim < n:
            if n == 3 and x.ndim == 2:
                shape = x.shape + (1,)
            elif n == 3 and x.ndim == 1:
                shape = (1,) + x.shape + (1,)
            else:
                shape = (1,) * (n - x.ndim) + x.shape
            x = lax.reshape(x, shape)
        out.append(x)
    return out[0] if len(out) == 1 else out


@eager
def atleast_1d(*arys):
    """Inputs viewed as arrays with at least one dimension."""
    return _atleast(1, arys)


@eager
def atleast_2d(*arys):
    """Inputs viewed as arrays with at least two dimensions (1-D ``(N,)`` becomes ``(1, N)``)."""
    return _atleast(2, arys)


@eager
def atleast_3d(*arys):
    """Inputs with at least three dimensions: ``(N,)`` -> ``(1, N, 1)``, ``(M, N)`` ->
    ``(M, N, 1)``."""
    return _atleast(3, arys)


def _stack_along(name, xs, axis, dtype=None):
    xs = _promote(*xs)
    if dtype is not None:
        xs = [_to(x, dtype) for x in xs]
    if not xs:
        _error(f"{name}: need at least one array")
    nd = xs[0].ndim
    for x in xs:
        if x.ndim != nd or builtins.any(
                x.shape[i] != xs[0].shape[i] for i in range(nd) if i != axis):
            _error(f"{name}: all input array dimensions except for axis {axis} must match, got "
                   f"shapes {[tuple(v.shape) for v in xs]}")
    return lax.concatenate(xs, axis)


def _seq(tup, name):
    if isinstance(tup, Tracer) or hasattr(tup, "aval") or isinstance(tup, np.ndarray):
        x = _lift(tup)
        if x.ndim == 0:
            _error(f"{name}: expected a sequence of arrays, got a 0-d array")
        return [x[i] for i in range(x.shape[0])]
    return list(tup)


@eager
def hstack(tup, *, dtype=None):
    """Stack horizontally: along axis 1 (axis 0 for 1-D inputs)."""
    xs = _atleast(1, _seq(tup, "hstack"))
    xs = xs if isinstance(xs, list) else [xs]
    return _stack_along("hstack", xs, 0 if xs[0].ndim == 1 else 1, dtype)


@eager
def vstack(tup, *, dtype=None):
    """Stack vertically: along axis 0 of the inputs made at least 2-D."""
    xs = _atleast(2, _seq(tup, "vstack"))
    return _stack_along("vstack", xs if isinstance(xs, list) else [xs], 0, dtype)


@eager
def dstack(tup, *, dtype=None):
    """Stack depth-wise: along axis 2 of the inputs made at least 3-D."""
    xs = _atleast(3, _seq(tup, "dstack"))
    return _stack_along("dstack", xs if isinstance(xs, list) else [xs], 2, dtype)


@eager
def column_stack(tup):
    """Stack 1-D arrays as columns (2-D arrays are stacked as they are) along axis 1."""
    xs = []
    for a in _seq(tup, "column_stack"):
        x = _lift(a)
        if x.ndim < 2:
            x = lax.reshape(x, (x.size, 1))
        xs.append(x)
    return _stack_along("column_stack", xs, 1)


def _split(name, ary, indices_or_sections, axis, even):
    x = _lift(ary)
    if x.ndim == 0:
        _error(f"{name}: cannot split a 0-d array")
    (ax,) = _axes(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, int | np.integer) or np.ndim(indices_or_sections) == 0:
        sections = int(_static_ints(indices_or_sections, "sections", name))
        if sections <= 0:
            _error(f"{name}: number of sections must be larger than 0, got {sections}")
        if even and n % sections:
            _error(f"{name}: array split does not result in an equal division: axis {ax} of "
                   f"shape {x.shape} into {sections} sections")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        points = [0] + list(np.cumsum(sizes))
    else:
        idx = _static_ints(indices_or_sections, "indices", name).reshape(-1)
        points = [0] + [int(i) for i in idx] + [n]
    out = []
    for s, e in zip(points[:-1], points[1:]):
        s, e, _ = slice(int(s), int(e)).indices(n)
        out.append(_slice_axis(x, ax, s, builtins.max(s, e)))
    return out


@eager
def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int that must divide the axis) or at indices."""
    return _split("split", ary, indices_or_sections, axis, True)


@eager
def array_split(ary, indices_or_sections, axis=0):
    """Like ``split`` but sections need not divide the axis (the first ones are longer)."""
    return _split("array_split", ary, indices_or_sections, axis, False)


@eager
def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    x = _lift(ary)
    if x.ndim == 0:
        _error("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, True)


@eager
def vsplit(ary, indices_or_sections):
    """Split along axis 0 of an array of 2 or more dimensions."""
    x = _lift(ary)
    if x.ndim < 2:
        _error(f"vsplit only works on arrays of 2 or more dimensions, got shape {x.shape}")
    return _split("vsplit", x, indices_or_sections, 0, True)


@eager
def dsplit(ary, indices_or_sections):
    """Split along axis 2 of an array of 3 or more dimensions."""
    x = _lift(ary)
    if x.ndim < 3:
        _error(f"dsplit only works on arrays of 3 or more dimensions, got shape {x.shape}")
    return _split("dsplit", x, indices_or_sections, 2, True)


@eager
def tile(A, reps):
    """``A`` repeated ``reps`` times per axis (NumPy's ``tile``)."""
    x = _lift(A)
    reps = tuple(int(r) for r in _static_ints(reps, "reps", "tile").reshape(-1))
    if builtins.any(r < 0 for r in reps):
        _error(f"tile: reps must be non-negative, got {reps}")
    d = builtins.max(x.ndim, len(reps))
    shape = (1,) * (d - x.ndim) + x.shape
    reps = (1,) * (d - len(reps)) + reps
    big = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    y = lax.broadcast_in_dim(lax.reshape(x, shape), big, tuple(range(1, 2 * d, 2)))
    return lax.reshape(y, tuple(r * s for r, s in zip(reps, shape)))


@eager
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat elements: ``repeats`` is an int or one count per element along ``axis``
    (``axis=None`` repeats the flattened array). The counts must be static unless
    ``total_repeat_length`` (static) gives the result's length; as in JAX, a longer total
    repeats the last element and a shorter one truncates."""
    x = _lift(a)
    if axis is None:
        x, ax = lax.reshape(x, (x.size,)), 0
    else:
        (ax,) = _axes(axis, x.ndim)
    if x.ndim == 0:
        x, ax = lax.reshape(x, (1,)), 0
    n = x.shape[ax]
    total = None
    if total_repeat_length is not None:
        if isinstance(total_repeat_length, Tracer):
            total_repeat_length._concrete("repeat: total_repeat_length")
        total = operator.index(total_repeat_length)
        if total < 0:
            _error(f"repeat: total_repeat_length must be non-negative, got {total}")
        if isinstance(repeats, Tracer) or hasattr(repeats, "aval"):
            return _repeat_traced(x, repeats, ax, total)
    reps = _static_ints(repeats, "repeats", "repeat")
    if np.any(reps < 0):
        _error(f"repeat: repeats may not contain negative values, got {repeats!r}")
    if reps.ndim > 1 or (reps.ndim == 1 and reps.size not in (1, n)):
        _error(f"repeat: repeats of shape {reps.shape} cannot be broadcast to the {n} elements "
               f"along axis {ax} of shape {x.shape}")
    if total is not None and n and total != int(reps.sum() * (n if reps.size == 1 else 1)):
        # JAX's gather pattern for a total that differs from the counts' sum, on the host.
        starts = np.cumsum(np.broadcast_to(reps.reshape(-1), (n,)))[:-1]
        idx = np.searchsorted(starts, np.arange(total), side="right")
        return _static_take(x, idx, ax) if total else _slice_axis(x, ax, 0, 0)
    if reps.size == 1:
        return _repeat_scalar(x, int(reps.reshape(())), ax)
    pieces, i = [], 0
    while i < n:
        j = i
        while j < n and reps[j] == reps[i]:
            j += 1
        if reps[i]:
            pieces.append(_repeat_scalar(_slice_axis(x, ax, i, j), int(reps[i]), ax))
        i = j
    return lax.concatenate(pieces, ax) if pieces else _slice_axis(x, ax, 0, 0)


def _repeat_traced(x, repeats, ax, total):
    """``repeat`` by traced counts to the static length ``total``, as JAX does it: output
    position ``j`` takes the element whose run (by the counts' running sum) holds ``j``."""
    enp = _enp()
    n = x.shape[ax]
    if total == 0 or n == 0:
        return _slice_axis(x, ax, 0, 0) if total == 0 else x
    r = lax.reshape(repeats, (repeats.size,))
    if r.shape[0] not in (1, n):
        _error(f"repeat: repeats of shape {tuple(repeats.shape)} cannot be broadcast to the {n} "
               f"elements along axis {ax} of shape {x.shape}")
    if not np.issubdtype(np.dtype(r.dtype), np.integer):
        _error(f"repeat: repeats must be integers, got {repeats.aval.str_short()}")
    r = lax.broadcast_in_dim(lax.convert_element_type(r, np.int32), (n,), (0,))
    starts = enp.cumsum(_slice_axis(r, 0, 0, n - 1))      # where runs 1..n-1 begin
    idx = enp.searchsorted(starts, enp.arange(total, dtype=np.int32), side="right")
    return enp.take(x, idx, axis=ax)


@eager
def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (None: all axes; an int or a tuple)."""
    x = _lift(m)
    return lax.rev(x, _axes(axis, x.ndim))


@eager
def fliplr(m):
    """Reverse along axis 1."""
    x = _lift(m)
    if x.ndim < 2:
        _error(f"fliplr: input must be at least 2-D, got shape {x.shape}")
    return lax.rev(x, (1,))


@eager
def flipud(m):
    """Reverse along axis 0."""
    x = _lift(m)
    if x.ndim < 1:
        _error("flipud: input must be at least 1-D")
    return lax.rev(x, (0,))


@eager
def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (None: the flattened array); ``shift`` and ``axis`` may be
    tuples (broadcast against each other; shifts along one axis add up)."""
    x = _lift(a)
    if isinstance(shift, Tracer) or hasattr(shift, "aval"):
        return _roll_traced(x, shift, axis)
    if axis is None:
        flat = lax.reshape(x, (x.size,))
        s = _static_ints(shift, "shift", "roll")    # several shifts add up, as in NumPy
        return lax.reshape(_roll_axes(flat, {0: int(s.sum())}), x.shape)
    s = _static_ints(shift, "shift", "roll")
    ax = _static_ints(axis, "axis", "roll")
    try:
        s, ax = np.broadcast_arrays(np.atleast_1d(s), np.atleast_1d(ax))
    except ValueError:
        _error(f"roll: shift {shift!r} and axis {axis!r} have different lengths")
    total: dict[int, int] = {}
    for si, ai in zip(s.tolist(), ax.tolist()):
        (a_,) = _axes(int(ai), x.ndim)
        total[a_] = total.get(a_, 0) + int(si)
    return _roll_axes(x, total)


def _roll_traced(x, shift, axis):
    """``roll`` by a traced shift (as JAX allows): a scalar, or a 1-D array broadcast against
    ``axis``; per axis, a window of ``x`` twice over."""
    if axis is None:
        return lax.reshape(_roll_traced(lax.reshape(x, (x.size,)), shift, 0), x.shape)
    if np.ndim(shift) > 1 or not np.issubdtype(np.dtype(shift.dtype), np.integer):
        _error(f"roll: a traced shift must be an integer scalar or 1-D array, got "
               f"{shift.aval.str_short()}")
    axes = _static_ints(axis, "axis", "roll")
    try:
        b_shape = np.broadcast_shapes(np.shape(shift), axes.shape)
    except ValueError:
        _error(f"roll: shift {shift.aval.str_short()} and axis {axis!r} have different "
               "lengths")
    axes = np.broadcast_to(axes, b_shape).reshape(-1)
    for j, a_ in enumerate(axes.tolist()):
        (ax,) = _axes(int(a_), x.ndim)
        k = 0 if np.ndim(shift) == 0 or shift.shape[0] == 1 else j
        s = shift if np.ndim(shift) == 0 else lax.reshape(lax.slice(shift, (k,), (k + 1,)), ())
        n = x.shape[ax]
        if n == 0:
            continue
        start = lax.rem(lax.rem(-s, n) + n, n)        # (-shift) mod n, in [0, n)
        x = lax.dynamic_slice_in_dim(lax.concatenate([x, x], ax), start, n, ax)
    return x


def _roll_axes(x, shifts):
    for ax, s in shifts.items():
        n = x.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        x = lax.concatenate([_slice_axis(x, ax, n - s, n), _slice_axis(x, ax, 0, n - s)], ax)
    return x


@eager
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first toward the
    second)."""
    x = _lift(m)
    axes = tuple(axes)
    if len(axes) != 2:
        _error(f"rot90: axes must have length 2, got {axes}")
    if x.ndim < 2:
        _error(f"rot90: array must be at least 2-D, got shape {x.shape}")
    a0, a1 = _axes(axes[0], x.ndim, "axes")[0], _axes(axes[1], x.ndim, "axes")[0]
    if a0 == a1:
        _error(f"rot90: axes must be different, got {axes} for shape {x.shape}")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return lax.rev(x, (a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(lax.rev(x, (a1,)), tuple(perm))
    return lax.rev(lax.transpose(x, tuple(perm)), (a1,))


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty", "linear_ramp",
              "maximum", "minimum", "mean", "median")
_PAD_STATS = {"maximum": "max", "minimum": "min", "mean": "mean", "median": "median"}
# NumPy's keyword arguments of each mode (any other one is an error, as in NumPy and JAX).
_PAD_KWARGS = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               **{m: {"stat_length"} for m in _PAD_STATS}}


def _pad_widths(pad_width, ndim, shape, what="pad_width"):
    pw = _static_ints(pad_width, what, "pad")
    try:
        pw = np.broadcast_to(pw[None, :] if pw.ndim == 1 else pw, (ndim, 2))
    except ValueError:
        _error(f"pad: {what} {pad_width!r} cannot be broadcast to the {ndim} axes of shape "
               f"{shape}")
    if np.any(pw < 0):
        _error(f"pad: {what} {pad_width!r} must be non-negative")
    return [(int(a), int(b)) for a, b in pw]


def _pad_values(values, x, what):
    """Per-axis (before, after) pad values: static ones broadcast to pairs, a traced scalar
    used for every side."""
    if isinstance(values, Tracer) or hasattr(values, "aval"):
        v = _to(values, x.dtype)
        if v.ndim:
            _error(f"pad: traced {what} must be a scalar, got shape {v.shape}")
        return [(v, v)] * x.ndim
    vals = np.asarray(values)
    try:
        vals = np.broadcast_to(vals if vals.ndim != 1 else vals[None, :], (x.ndim, 2))
    except ValueError:
        _error(f"pad: {what} {values!r} cannot be broadcast to the {x.ndim} axes of shape "
               f"{x.shape}")
    return [(lo.item(), hi.item()) for lo, hi in vals]


@eager
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad as ``numpy.pad``: modes 'constant' (``constant_values``, per axis and side),
    'edge', 'reflect' and 'symmetric' (``reflect_type`` 'even' or 'odd'), 'wrap', 'empty'
    (zeros, as in JAX), 'linear_ramp' (``end_values``), and 'maximum', 'minimum', 'mean',
    'median' (``stat_length``: how many edge elements the statistic reads; None, all).
    ``pad_width`` is static: an int, ``(before, after)`` or one pair per axis.

    Example:
        >>> enp.pad(enp.arange(3.0), 2, mode="linear_ramp", end_values=(-1, 9))
        Array([-1. , -0.5,  0. ,  1. ,  2. ,  5.5,  9. ], dtype=float32)
    """
    x = _lift(array)
    if callable(mode) or mode not in _PAD_MODES:
        _error(f"pad: mode {mode!r} is not supported; use one of {', '.join(_PAD_MODES)}")
    extra = set(kwargs) - _PAD_KWARGS.get(mode, set())
    if extra:
        _error(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(extra)}")
    widths = _pad_widths(pad_width, x.ndim, x.shape)
    if mode == "empty":
        return lax.pad(x, _to(0, x.dtype), [(lo, hi, 0) for lo, hi in widths])
    if mode == "constant":
        vals = _pad_values(kwargs.get("constant_values", 0), x, "constant_values")
        flat = [v for pair in vals for v in pair]
        if flat and builtins.all(v is flat[0] or v == flat[0] for v in flat):  # one value
            return lax.pad(x, _to(flat[0], x.dtype), [(lo, hi, 0) for lo, hi in widths])
    elif mode in _PAD_STATS:
        stat_length = kwargs.get("stat_length")
        if stat_length is not None:
            stat_length = _pad_widths(stat_length, x.ndim, x.shape, "stat_length")
    elif mode == "linear_ramp":
        vals = _pad_values(kwargs.get("end_values", 0), x, "end_values")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        _error(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for i, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        n = x.shape[i]
        if n == 0 and mode != "constant":
            _error(f"pad: can't extend empty axis {i} of shape {x.shape} using mode {mode!r}")
        if mode == "constant":
            for w, v, cfg in ((lo, vals[i][0], (lo, 0, 0)), (hi, vals[i][1], (0, hi, 0))):
                if w:
                    x = lax.pad(x, _to(v, x.dtype), [cfg if a == i else (0, 0, 0)
                                                     for a in range(x.ndim)])
        elif mode in _PAD_STATS:
            x = _pad_stat(x, i, lo, hi, _PAD_STATS[mode],
                          None if stat_length is None else stat_length[i])
        elif mode == "linear_ramp":
            x = _pad_ramp(x, i, lo, hi, vals[i])
        elif reflect_type == "odd":
            x = _pad_odd(x, i, lo, hi, mode)
        else:
            x = _static_take(x, np.pad(np.arange(n), (lo, hi), mode=mode), i)
    return x


def _repeat_axis(v, axis, n):
    shape = list(v.shape)
    shape[axis] = n
    return lax.broadcast_in_dim(v, tuple(shape), tuple(range(v.ndim)))


def _pad_stat(x, axis, lo, hi, stat, lengths):
    """Pad ``axis`` with a statistic of its first/last elements (rounded for integers)."""
    n = x.shape[axis]
    fn = getattr(_enp(), stat)

    def edge_stat(part):
        s = fn(part, axis=axis, keepdims=True)
        if stat in ("mean", "median") and not dtypes.is_float(x.dtype):
            s = _enp().round(s)
        return _to(s, x.dtype)

    if lengths is None:
        before = after = edge_stat(x)
    else:
        if (lo and lengths[0] == 0) or (hi and lengths[1] == 0):
            _error("pad: stat_length of 0 yields no value for padding")
        before = edge_stat(_slice_axis(x, axis, 0, builtins.min(lengths[0], n)))
        after = edge_stat(_slice_axis(x, axis, n - builtins.min(lengths[1], n), n))
    return lax.concatenate([_repeat_axis(before, axis, lo), x, _repeat_axis(after, axis, hi)],
                           axis)


def _pad_ramp(x, axis, lo, hi, ends):
    """Pad ``axis`` with a linear ramp from each end value to the edge (NumPy's linspace
    without the endpoint, floored for integers)."""
    n = x.shape[axis]
    parts = []
    for w, end, edge in ((lo, ends[0], _slice_axis(x, axis, 0, 1)),
                         (hi, ends[1], _slice_axis(x, axis, n - 1, n))):
        edge = lax.reshape(edge, tuple(d for a, d in enumerate(edge.shape) if a != axis))
        parts.append(linspace(end, edge, w, endpoint=False, dtype=x.dtype, axis=axis))
    return lax.concatenate([parts[0], x, lax.rev(parts[1], (axis,))], axis)


def _pad_odd(x, axis, lo, hi, mode):
    """Odd reflection (``2 * edge - mirror``), in NumPy's chunks of at most one axis length:
    each chunk reflects about the edge the previous chunk left."""
    n = x.shape[axis]
    off = 1 if (mode == "reflect" and n > 1) else 0
    for before, pad in ((True, lo), (False, hi)):
        while pad > 0:
            m = x.shape[axis]
            k = builtins.min(pad, n - off)
            pad -= k
            if before:
                edge = _slice_axis(x, axis, 0, 1)
                chunk = _slice_axis(x, axis, off, off + k)
            else:
                edge = _slice_axis(x, axis, m - 1, m)
                stop = m if (mode == "symmetric" or n == 1) else m - 1
                chunk = _slice_axis(x, axis, stop - k, stop)
            chunk = _enp().subtract(_enp().multiply(2, edge), lax.rev(chunk, (axis,)))
            x = lax.concatenate([chunk, x] if before else [x, chunk], axis)
    return x


# --- linear algebra -------------------------------------------------------------------------

def _diagonal_last(x, a1, a2, offset):
    """The ``offset`` diagonal of axes ``a1``, ``a2`` of ``x``, as its last axis (the other axes
    keep their order): a transpose, a slice, a reshape and a strided slice."""
    nd = x.ndim
    perm = [i for i in range(nd) if i not in (a1, a2)] + [a1, a2]
    x = lax.transpose(x, tuple(perm))
    batch = x.shape[:-2]
    n, m = x.shape[-2:]
    if offset >= 0:
        r0, c0, L = 0, offset, builtins.max(0, builtins.min(n, m - offset))
    else:
        r0, c0, L = -offset, 0, builtins.max(0, builtins.min(n + offset, m))
    if L == 0:
        r0 = c0 = 0
    b0 = [0] * len(batch)
    x = lax.slice(x, b0 + [r0, c0], list(batch) + [r0 + L, c0 + L])
    x = lax.reshape(x, batch + (L * L,))
    return lax.slice(x, b0 + [0], list(batch) + [L * L], [1] * len(batch) + [L + 1])


@eager
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes, as the last axis."""
    x = _lift(a)
    if x.ndim < 2:
        _error(f"diagonal: array must be at least 2-D, got shape {x.shape}")
    (i,) = _axes(axis1, x.ndim, "axis1")
    (j,) = _axes(axis2, x.ndim, "axis2")
    if i == j:
        _error(f"diagonal: axis1 and axis2 cannot be the same ({axis1}, {axis2}) for shape "
               f"{x.shape}")
    return _diagonal_last(x, i, j, operator.index(offset))


@eager
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along the ``offset`` diagonal of the ``axis1``/``axis2`` planes."""
    d = diagonal(a, offset, axis1, axis2)
    return _enp().sum(d, axis=-1, dtype=dtype)


@eager
def diag(v, k=0):
    """1-D: a 2-D array with ``v`` on the k-th diagonal. 2-D: the k-th diagonal."""
    x = _lift(v)
    k = operator.index(k)
    if x.ndim == 2:
        return _diagonal_last(x, 0, 1, k)
    if x.ndim != 1:
        _error(f"diag: input must be 1-D or 2-D, got shape {x.shape}")
    n = x.shape[0] + builtins.abs(k)
    xp = lax.pad(x, _to(0, x.dtype), [(0, builtins.abs(k), 0)])
    vals = lax.broadcast_in_dim(xp, (n, n), (0,) if k >= 0 else (1,))
    rows = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    mask = lax.eq(lax.add(rows, _const(k, rows)), cols)
    return lax.select(mask, vals, _const(0, vals))


@eager
def kron(a, b):
    """Kronecker product (the shorter shape is padded with leading ones)."""
    x, y = _promote(a, b)
    nd = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ys = (1,) * (nd - y.ndim) + y.shape
    big = tuple(v for p, q in zip(xs, ys) for v in (p, q))
    xb = lax.broadcast_in_dim(lax.reshape(x, xs), big, tuple(range(0, 2 * nd, 2)))
    yb = lax.broadcast_in_dim(lax.reshape(y, ys), big, tuple(range(1, 2 * nd, 2)))
    prod = _enp().multiply(xb, yb)
    return lax.reshape(prod, tuple(p * q for p, q in zip(xs, ys)))


@eager
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, whose product is the z component) along
    ``axisa``/``axisb``, broadcasting the other axes; the result's vector axis is ``axisc``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _promote(a, b)
    if x.ndim == 0 or y.ndim == 0:
        _error(f"cross: inputs must be at least 1-D, got shapes {x.shape} and {y.shape}")
    x = moveaxis(x, _axes(axisa, x.ndim, "axisa")[0], -1)
    y = moveaxis(y, _axes(axisb, y.ndim, "axisb")[0], -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        _error(f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), "
               f"got shapes {tuple(np.shape(a))} and {tuple(np.shape(b))}")
    try:
        shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    except ValueError:
        _error(f"cross: shapes {tuple(np.shape(a))} and {tuple(np.shape(b))} do not broadcast "
               "outside the vector axis")
    enp = _enp()

    def comp(v, i):
        c = lax.reshape(_slice_axis(v, v.ndim - 1, i, i + 1), v.shape[:-1])
        return _broadcast_to(c, shape, "cross")

    a0, a1 = comp(x, 0), comp(x, 1)
    b0, b1 = comp(y, 0), comp(y, 1)
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return enp.subtract(enp.multiply(a0, b1), enp.multiply(a1, b0))
    a2 = comp(x, 2) if x.shape[-1] == 3 else None
    b2 = comp(y, 2) if y.shape[-1] == 3 else None
    m, s = enp.multiply, enp.subtract
    c2 = s(m(a0, b1), m(a1, b0))
    if a2 is None:
        c0, c1 = m(a1, b2), enp.negative(m(a0, b2))
    elif b2 is None:
        c0, c1 = enp.negative(m(a2, b1)), m(a2, b0)
    else:
        c0, c1 = s(m(a1, b2), m(a2, b1)), s(m(a2, b0), m(a0, b2))
    out = lax.concatenate([lax.reshape(c, shape + (1,)) for c in (c0, c1, c2)], len(shape))
    return moveaxis(out, -1, _axes(axisc, out.ndim, "axisc")[0])


@eager
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over ``axes``: an int N (the last N axes of ``a`` with the first N of
    ``b``) or a pair of axis sequences (``preferred_element_type`` as in ``matmul``)."""
    x, y = _enp()._product_operands("tensordot", a, b, precision, preferred_element_type)
    if isinstance(axes, int | np.integer):
        n = int(axes)
        if n < 0 or n > x.ndim or n > y.ndim:
            _error(f"tensordot: axes={n} is invalid for shapes {x.shape} and {y.shape}")
        ax, bx = tuple(range(x.ndim - n, x.ndim)), tuple(range(n))
    else:
        try:
            ax, bx = axes
        except (TypeError, ValueError):
            _error(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}")
        ax = (ax,) if isinstance(ax, int | np.integer) else tuple(ax)
        bx = (bx,) if isinstance(bx, int | np.integer) else tuple(bx)
        if len(ax) != len(bx):
            _error(f"tensordot: axes {axes!r} name different numbers of axes of shapes "
                   f"{x.shape} and {y.shape}")
        ax, bx = _axes(ax, x.ndim, "axes"), _axes(bx, y.ndim, "axes")
    for i, j in zip(ax, bx):
        if x.shape[i] != y.shape[j]:
            _error(f"tensordot: shape mismatch for sum: axis {i} of {x.shape} ({x.shape[i]}) "
                   f"and axis {j} of {y.shape} ({y.shape[j]})")
    return lax.dot_general(x, y, ((ax, bx), ((), ())))


_ELL = "".join(chr(0x3B1 + i) for i in range(24))    # internal labels for '...' dimensions


def einsum(subscripts, *operands, optimize=None, precision=None,
           preferred_element_type=None):
    """Einstein summation with NumPy's rules: explicit ``->`` or implicit output (labels seen
    once, sorted), ``...`` (broadcast like NumPy), repeated labels in one operand (diagonals,
    traces) and size-1 broadcasting.

    NumPy's interleaved form (each operand followed by a list of axis labels as integers,
    ``Ellipsis`` for ``...``, and optionally the output's list last) is the same.

    Example:
        >>> enp.einsum("ij,jk->ik", a, b)   # matmul
        >>> enp.einsum(a, [0, 1], b, [1, 2], [0, 2])   # the same
        >>> enp.einsum("...ii->...", x)      # batched trace
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_sublists(subscripts, *operands)
    lax._check_precision("einsum", precision)
    if preferred_element_type is not None:     # the products accumulate in it, as in JAX
        operands = [_enp().astype(o, preferred_element_type) for o in operands]
    return _einsum(subscripts, *operands)


def _einsum_sublists(*args):
    """NumPy's ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])`` as a subscripts
    string and the operands."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None
    operands, lists = args[0::2], args[1::2]

    def letters(sub):
        try:
            return "".join("..." if ax is Ellipsis else string.ascii_letters[operator.index(ax)]
                           for ax in sub)
        except (TypeError, IndexError):
            _error(f"einsum: a sublist must hold integers in [0, 52) and Ellipsis, got {sub!r}")

    spec = ",".join(letters(sub) for sub in lists)
    return (spec if out is None else f"{spec}->{letters(out)}"), operands


def _einsum_parse(subscripts, shapes):
    s = subscripts.replace(" ", "")
    where = f"einsum {subscripts!r} with operand shapes {[tuple(sh) for sh in shapes]}"
    if s.count("->") > 1:
        _error(f"{where}: more than one '->'")
    ins, out = s.split("->") if "->" in s else (s, None)
    specs = ins.split(",")
    if len(specs) != len(shapes):
        _error(f"{where}: {len(specs)} operand subscripts but {len(shapes)} operands")
    allowed = set(string.ascii_letters)

    def check(spec):
        rest = spec.replace("...", "", 1)
        if builtins.any(c not in allowed for c in rest):
            _error(f"{where}: invalid subscript {spec!r} (letters and one '...' only)")

    ell = 0
    for spec, sh in zip(specs, shapes):
        check(spec)
        named = len(spec) - (3 if "..." in spec else 0)
        if "..." in spec:
            if named > len(sh):
                _error(f"{where}: subscripts {spec!r} have more labels than operand dimensions")
            ell = builtins.max(ell, len(sh) - named)
        elif named != len(sh):
            _error(f"{where}: subscripts {spec!r} do not match an operand of shape {tuple(sh)} "
                   f"({named} labels, {len(sh)} dimensions)")
    if ell > len(_ELL):
        _error(f"{where}: too many dimensions under '...'")
    labels = _ELL[:ell]
    new_specs = []
    for spec, sh in zip(specs, shapes):
        if "..." in spec:
            k = len(sh) - (len(spec) - 3)
            spec = spec.replace("...", labels[ell - k:])
        new_specs.append(spec)
    joined = "".join(new_specs)
    if out is None:
        out = labels + "".join(sorted(c for c in set(joined)
                                      if c in allowed and joined.count(c) == 1))
    else:
        check(out)
        out = out.replace("...", labels)
        if len(set(out)) != len(out):
            _error(f"{where}: output subscript {out!r} repeats a label")
        for c in out:
            if c not in joined:
                _error(f"{where}: output subscript {c!r} does not appear in the inputs")
    return new_specs, out, where


@eager
def _einsum(subscripts, *operands):
    if not operands:
        _error("einsum: at least one operand is needed")
    xs = _promote(*operands)
    specs, out, where = _einsum_parse(subscripts, [x.shape for x in xs])
    sizes: dict[str, int] = {}
    for spec, x in zip(specs, xs):
        for c, d in zip(spec, x.shape):
            old = sizes.get(c, 1)
            if d != 1 and old != 1 and d != old:
                shown = "..." if c in _ELL else repr(c)
                _error(f"{where}: subscript {shown} has sizes {old} and {d}")
            if d != 1 or c not in sizes:
                sizes[c] = d if d != 1 else sizes.get(c, 1)
    # Diagonals of repeated labels, then broadcast size-1 dimensions.
    terms = []
    for spec, x in zip(specs, xs):
        while len(set(spec)) != len(spec):
            c = next(c for c in spec if spec.count(c) > 1)
            i = spec.index(c)
            j = spec.index(c, i + 1)
            if x.shape[i] != x.shape[j]:
                _error(f"{where}: repeated label {c!r} has sizes {x.shape[i]} and "
                       f"{x.shape[j]} in one operand")
            x = _diagonal_last(x, i, j, 0)
            spec = "".join(ch for k, ch in enumerate(spec) if k not in (i, j)) + c
        full = tuple(sizes[c] for c in spec)
        if full != x.shape:
            x = lax.broadcast_in_dim(x, full, tuple(range(x.ndim)))
        terms.append((spec, x))
    # Sum away labels used by one operand only and not in the output.
    summed = []
    for k, (spec, x) in enumerate(terms):
        others = "".join(s for j, (s, _) in enumerate(terms) if j != k) + out
        drop = [i for i, c in enumerate(spec) if c not in others]
        if drop:
            x = _sum(x, drop)
            spec = "".join(c for i, c in enumerate(spec) if i not in drop)
        summed.append((spec, x))
    spec, x = summed[0]
    for k, (s2, y) in enumerate(summed[1:], start=1):
        later = "".join(s for s, _ in summed[k + 1:]) + out
        batch = [c for c in spec if c in s2 and c in later]
        contract = [c for c in spec if c in s2 and c not in later]
        x = lax.dot_general(x, y, ((tuple(spec.index(c) for c in contract),
                                    tuple(s2.index(c) for c in contract)),
                                   (tuple(spec.index(c) for c in batch),
                                    tuple(s2.index(c) for c in batch))))
        spec = "".join(batch) + "".join(c for c in spec if c not in batch and c not in contract) \
            + "".join(c for c in s2 if c not in batch and c not in contract)
    drop = [i for i, c in enumerate(spec) if c not in out]
    if drop:
        x = _sum(x, drop)
        spec = "".join(c for i, c in enumerate(spec) if i not in drop)
    return lax.transpose(x, tuple(spec.index(c) for c in out))


def _sum(x, axes):
    if x.dtype == dtypes.bool_:
        return lax.reduce_or(x, axes)
    return lax.reduce_sum(x, axes)


# --- dtypes ---------------------------------------------------------------------------------

_WEAK_TYPES = {int: "i*", float: "f*", complex: "c*"}


def _is_dtype_like(a) -> bool:
    return isinstance(a, str | np.dtype) or (
        isinstance(a, type) and (issubclass(a, np.generic) or a in (bool, int, float, complex)))


def _dtype_pair(a):
    if a is int or a is float or a is complex:
        return {int: dtypes.default_int, float: dtypes.default_float,
                complex: dtypes.default_complex}[a](), True
    if a is bool:
        return dtypes.bool_, False
    if _is_dtype_like(a):
        return dtypes.canonicalize(a, warn=False), False
    return dtypes.dtype_and_weak(a)


def result_type(*args):
    """The dtype an operation on ``args`` (arrays, scalars or dtypes) computes in, by JAX's
    promotion lattice (Python scalars are weak), canonicalized (64-bit off: 32-bit)."""
    if not args:
        _error("result_type: at least one array or dtype is required")
    dt, _ = dtypes.promote_pairs([_dtype_pair(a) for a in args])
    return dtypes.canonicalize(dt, warn=False)


def promote_types(a, b):
    """The dtype two dtypes promote to by JAX's lattice (not canonicalized, as in JAX).

    Python ``int``/``float`` are weak types (a weak result is ``int64``/``float64``, as in
    JAX); without x64, uint32 with a signed integer of at most 32 bits gives int32 (JAX's
    lattice forms no 64-bit type from 32-bit inputs then).
    """
    def lat(t):
        if t in _WEAK_TYPES:
            return _WEAK_TYPES[t]
        return np.dtype(t)
    types = {lat(a), lat(b)}
    lub = dtypes._least_upper_bound(types)
    if lub == "i*":
        return np.dtype(np.int64)
    if lub == "f*":
        return np.dtype(np.float64)
    if lub == "c*":
        return np.dtype(np.complex128)
    if lub == dtypes.int64 and dtypes.int64 not in types and dtypes.uint64 not in types \
            and not dtypes.config.enable_x64:
        return dtypes.int32
    return np.dtype(lub)


def _as_dtype(x):
    if _is_dtype_like(x):
        return np.dtype(x)
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return x


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under ``casting`` (NumPy's rules,
    as ``jax.numpy.can_cast``); Python scalars are rejected as in NumPy 2."""
    return bool(np.can_cast(_as_dtype(from_), np.dtype(to), casting=casting))


class _FloatInfo:
    """NumPy's (ml_dtypes') ``finfo`` with its limits as Python floats, as the Array API
    asks (NumPy's are float32 scalars for float32, which are not ``float`` instances); its
    other attributes (``nmant``, ``maxexp``, ...) are NumPy's."""

    _FLOATS = ("eps", "epsneg", "max", "min", "resolution", "smallest_normal",
               "smallest_subnormal", "tiny")

    def __init__(self, info):
        self._info = info
        self.dtype = np.dtype(info.dtype)
        self.bits = int(info.bits)
        for name in self._FLOATS:
            setattr(self, name, float(getattr(info, name)))

    def __getattr__(self, name):
        if name == "_info":          # not set yet (copy builds the object bare)
            raise AttributeError(name)
        return getattr(self._info, name)

    def __reduce__(self):
        return finfo, (self.dtype,)

    def __repr__(self):
        return f"finfo(resolution={self.resolution:g}, min={self.min:.6e}, " \
               f"max={self.max:.6e}, dtype={self.dtype})"


def finfo(dtype):
    """Machine limits of a floating dtype (also bfloat16, via ml_dtypes; of a complex dtype's
    parts); takes arrays too. The limits are Python floats, as the Array API asks.

    Example:
        >>> enp.finfo(enp.float32).eps
        1.1920928955078125e-07
    """
    return _FloatInfo(ml_dtypes.finfo(_as_dtype(dtype)))


def iinfo(int_type):
    """Machine limits of an integer dtype; takes arrays too."""
    return np.iinfo(_as_dtype(int_type))
