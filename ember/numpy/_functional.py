"""Functions applied over arrays by ``ember.vmap``: ``apply_along_axis``,
``apply_over_axes``, ``vectorize`` (with NumPy's gufunc signatures) and ``fromfunction``.

Example:
    >>> import ember.numpy as enp
    >>> enp.apply_along_axis(enp.sum, 1, enp.ones((2, 3)))
    Array([3., 3.], dtype=float32)
"""

from __future__ import annotations

import builtins
import functools

import numpy as np

from ember import dtypes
from ember.numpy._core import (
    _arg_error,
    _axes,
    _error,
    _static_int,
)
from ember.numpy._shape import _enp

__all__ = [
    "apply_along_axis", "apply_over_axes", "vectorize", "fromfunction",
]


def _vmap():
    from ember.frontend.vmap import vmap
    return vmap


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (by ``ember.vmap``);
    the function's output dimensions replace ``axis``.

    Example:
        >>> enp.apply_along_axis(enp.sum, 1, enp.ones((2, 3)))
        Array([3., 3.], dtype=float32)
    """
    x = _enp().asarray(arr)
    (ax,) = _axes(axis, x.ndim)
    vmap = _vmap()

    def func(v):
        return func1d(v, *args, **kwargs)

    for i in builtins.range(1, x.ndim - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in builtins.range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(x)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each of ``axes`` in turn; a result with one dimension
    fewer gets it back (size 1), so the rank is kept.

    Example:
        >>> enp.apply_over_axes(enp.sum, enp.ones((2, 3)), [0, 1])
        Array([[6.]], dtype=float32)
    """
    x = _enp().asarray(a)
    for ax in ([axes] if np.ndim(axes) == 0 else axes):
        b = func(x, ax)
        if b.ndim == x.ndim:
            x = b
        elif b.ndim == x.ndim - 1:
            x = _enp().expand_dims(b, ax)
        else:
            _error("apply_over_axes: the function is not returning an array of the correct "
                   "shape (the same rank, or one less)")
    return x


_DIM = r"\w+"


def _parse_signature(name, signature):
    import re
    arg = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
    args = rf"{arg}(?:,{arg})*"
    sig = signature.replace(" ", "")
    if not re.fullmatch(rf"{args}->{args}", sig):
        _arg_error(f"{name}: not a valid gufunc signature: {signature!r}")
    ins, outs = sig.split("->")

    def parse(part):
        return [tuple(re.findall(_DIM, g)) for g in re.findall(arg, part)]

    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` made to broadcast over its array arguments, by ``ember.vmap`` over the loop
    dimensions. ``signature`` (NumPy's gufunc form, e.g. ``"(n),(n)->()"``) names the core
    dimensions each call sees; ``excluded`` (positions or keyword names) are passed through.
    Keyword arguments are passed through unchanged.

    Example:
        >>> f = enp.vectorize(lambda x, y: enp.dot(x, y), signature="(n),(n)->()")
        >>> f(enp.ones((4, 3)), enp.arange(3.)).shape
        (4,)
    """
    if not callable(pyfunc):
        _arg_error(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    in_core = _parse_signature("vectorize", signature)[0] if signature is not None else None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        enp = _enp()
        fixed = {i: a for i, a in enumerate(args) if i in excluded}
        kw = dict(kwargs)
        free_idx = [i for i in builtins.range(len(args)) if i not in excluded]
        free = [enp.asarray(args[i]) for i in free_idx]
        cores = in_core if in_core is not None else [()] * len(free)
        if len(cores) != len(free):
            _error(f"vectorize: the signature has {len(cores)} inputs but {len(free)} "
                   "arguments were given")
        sizes = {}
        loops = []
        for x, core in zip(free, cores):
            if x.ndim < len(core):
                _error(f"vectorize: an argument of shape {tuple(x.shape)} has fewer "
                       f"dimensions than its core dimensions {core}")
            for dname, d in zip(core, x.shape[x.ndim - len(core):]):
                if sizes.setdefault(dname, d) != d:
                    _error(f"vectorize: inconsistent size for core dimension {dname!r}: "
                           f"{sizes[dname]} vs {d}")
            loops.append(tuple(x.shape[:x.ndim - len(core)]))
        try:
            loop = np.broadcast_shapes(*loops) if loops else ()
        except ValueError:
            _error(f"vectorize: loop dimensions {loops} cannot be broadcast together")
        free = [enp.broadcast_to(x, loop + tuple(x.shape[x.ndim - len(c):]))
                for x, c in zip(free, cores)]

        def call(*xs):
            full = dict(fixed)
            full.update(zip(free_idx, xs))
            return pyfunc(*(full[i] for i in builtins.range(len(args))), **kw)

        f = call
        for _ in loop:
            f = _vmap()(f)
        return f(*free)

    return wrapped


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` applied to the index grids of ``shape`` (by ``ember.vmap``, as in JAX:
    the function sees one index per call); ``kwargs`` are passed through unbatched.
    ``dtype=float`` means ember's default float.

    Example:
        >>> enp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int)
        Array([[0, 1], [1, 2]], dtype=int32)
    """
    shape = (shape,) if np.ndim(shape) == 0 and not isinstance(shape, tuple | list) \
        else tuple(shape)
    shape = tuple(_static_int(d, "shape", "fromfunction") for d in shape)
    dt = dtypes.default_float() if dtype is float else \
        dtypes.default_int() if dtype is int else np.dtype(dtype)
    f = functools.partial(function, **kwargs) if kwargs else function
    for i in builtins.range(len(shape)):
        in_axes = tuple(0 if i == j else None for j in builtins.range(len(shape)))
        f = _vmap()(f, in_axes=in_axes[::-1])
    return f(*(_enp().arange(s, dtype=dt) for s in shape))
