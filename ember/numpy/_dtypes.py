"""dtypes and type queries: ``dtype``, NumPy's abstract scalar types (``generic``,
``number``, ``integer``, ``floating``, ...), ``isdtype``, ``issubdtype``, and whether values
are real or complex (``isrealobj``, ``iscomplexobj``, ``isreal``, ``iscomplex``). They answer
on the host, except the elementwise ``isreal`` and ``iscomplex``. ``bfloat16`` counts as a
real floating type, as in JAX.

Example:
    >>> import ember.numpy as enp
    >>> enp.isdtype(enp.float32, "real floating")
    True
"""

from __future__ import annotations

import builtins

import numpy as np

from ember import dtypes
from ember.frontend.eager import eager
from ember.numpy._core import (
    _arg_error,
)
from ember.numpy._shape import _enp

__all__ = [
    "dtype", "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
    "floating", "complexfloating", "character", "flexible", "isdtype", "issubdtype",
    "iscomplexobj", "isrealobj", "isreal", "iscomplex",
]


dtype = np.dtype
generic, number, integer, inexact = np.generic, np.number, np.integer, np.inexact
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
floating, complexfloating = np.floating, np.complexfloating
character, flexible = np.character, np.flexible


_EXTENDED_FLOATS = tuple(np.dtype(t) for t in (dtypes.bfloat16,)) + tuple(
    np.dtype(t) for t in dtypes.SUPPORTED if np.dtype(t).kind == "V")
_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d in _EXTENDED_FLOATS,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d in _EXTENDED_FLOATS,
}


def _dtype_of(x, name, what):
    if isinstance(x, type) and issubclass(x, np.generic):
        return np.dtype(x)
    try:
        return np.dtype(getattr(x, "dtype", x))
    except TypeError:
        _arg_error(f"{name}: {what} must be a dtype, got {x!r}")


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name ("bool", "signed integer",
    "unsigned integer", "integral", "real floating", "complex floating", "numeric"), or a
    tuple of these. ``bfloat16`` is a real floating type, as in JAX.

    Example:
        >>> enp.isdtype(enp.float32, "real floating")
        True
    """
    d = _dtype_of(dtype, "isdtype", "dtype")
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                _arg_error(f"isdtype: unrecognized kind {k!r}; expected one of "
                           f"{list(_KINDS)} or a dtype")
            if _KINDS[k](d):
                return True
        elif d == _dtype_of(k, "isdtype", "kind"):
            return True
    return False


def issubdtype(arg1, arg2):
    """Whether ``arg1`` is a dtype below ``arg2`` in NumPy's type hierarchy (``bfloat16``
    counts as ``floating``, as in JAX).

    Example:
        >>> enp.issubdtype(enp.int8, enp.integer)
        True
    """
    d = _dtype_of(arg1, "issubdtype", "arg1")
    if d in _EXTENDED_FLOATS:
        if isinstance(arg2, type) and issubclass(arg2, np.generic):
            return arg2 in (np.floating, np.inexact, np.number, np.generic)
        return d == _dtype_of(arg2, "issubdtype", "arg2")
    if isinstance(arg2, type) and issubclass(arg2, np.generic):
        return bool(np.issubdtype(d, arg2))
    return bool(np.issubdtype(d, _dtype_of(arg2, "issubdtype", "arg2")))


def iscomplexobj(x):
    """Whether ``x`` has a complex type (a Python complex, a complex NumPy or ember array).

    Example:
        >>> enp.iscomplexobj(enp.ones(2))
        False
    """
    if isinstance(x, complex | np.complexfloating):
        return True
    if x is None or isinstance(x, builtins.bool | int | float | str | np.generic):
        return False
    d = getattr(x, "dtype", None)
    d = np.asarray(x).dtype if d is None else _dtype_of(d, "iscomplexobj", "x")
    return d.kind == "c"


def isrealobj(x):
    """``not iscomplexobj(x)``.

    Example:
        >>> enp.isrealobj(enp.ones(2))
        True
    """
    return not iscomplexobj(x)


@eager
def isreal(x):
    """Elementwise whether the imaginary part is zero (always, for real arrays).

    Example:
        >>> enp.isreal(enp.array([1., 2.]))
        Array([ True,  True], dtype=bool)
    """
    return _enp().equal(_enp().imag(x), 0)


@eager
def iscomplex(x):
    """Elementwise whether the imaginary part is non-zero (never, for real arrays).

    Example:
        >>> enp.iscomplex(enp.array([1., 2.]))
        Array([False, False], dtype=bool)
    """
    return _enp().not_equal(_enp().imag(x), 0)
