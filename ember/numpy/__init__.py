"""``ember.numpy``: NumPy's API on ember arrays, traced into ember ops.

Broadcasting and JAX's type promotion (with weakly typed Python scalars) happen here; the
ops below are ``ember.lax``'s strict ones.

Example:
    >>> import ember.numpy as enp
    >>> enp.sum(enp.arange(4) * 2.0)
    Array(12., dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.numpy import _array_methods  # noqa: F401  (installs x + y, x[i], x.sum(), ...)
from ember.numpy._core import *  # noqa: F403

# (the helpers ember.nn, ember.scipy, ember.random and numpy's fft and linalg call as
# enp._<name>)
from ember.numpy._core import (  # noqa: F401
    _arg_error,
    _axes,
    _by_squaring,
    _const,
    _error,
    _float_args,
    _lift,
    _numeric,
    _product_operands,
    _promote,
    _promote_broadcast,
    _promote_inexact,
    _static_int,
    _to,
)

# isort: split
# Later modules may replace first-cut functions of _core with fuller ones.
from ember.numpy import fft, linalg  # noqa: F401
from ember.numpy._bits import *  # noqa: F403
from ember.numpy._calculus import *  # noqa: F403
from ember.numpy._comparison import *  # noqa: F403
from ember.numpy._creation import *  # noqa: F403
from ember.numpy._dlpack import from_dlpack  # noqa: F401
from ember.numpy._dtypes import *  # noqa: F403
from ember.numpy._functional import *  # noqa: F403
from ember.numpy._index_tricks import *  # noqa: F403
from ember.numpy._indexing import *  # noqa: F403
from ember.numpy._manipulation import *  # noqa: F403
from ember.numpy._polynomial import *  # noqa: F403
from ember.numpy._products import *  # noqa: F403
from ember.numpy._reductions import *  # noqa: F403
from ember.numpy._selection import *  # noqa: F403
from ember.numpy._setops import *  # noqa: F403
from ember.numpy._shape import *  # noqa: F403
from ember.numpy._statistics import *  # noqa: F403
from ember.numpy._ufuncs import *  # noqa: F403
from ember.numpy._window import *  # noqa: F403

ndarray = None  # set in ember/__init__.py to ember.Array


class _ScalarType:
    """A dtype that is also callable, as JAX's: ``enp.float32(1.5)`` is a 0-d float32 array.

    It converts like its dtype (``np.dtype(enp.int8)``) and compares equal to it.
    """

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.__name__ = self.dtype.name

    def __call__(self, x):
        return asarray(x, dtype=self.dtype)  # noqa: F405

    def __eq__(self, other):
        if other is None:       # np.dtype(None) is float64: NumPy and JAX say not equal
            return False
        try:
            return self.dtype == np.dtype(other)
        except (TypeError, ValueError):     # a dict, an unknown name: not a dtype
            return False

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"ember.numpy.{self.dtype.name}"


__array_api_version__ = "2024.12"


def __array_namespace_info__():
    """The Array API's inspection namespace: devices, default and supported dtypes.

    Example:
        >>> enp.__array_namespace_info__().default_dtypes()["real floating"]
        dtype('float32')
    """
    from ember.numpy._array_api import Info
    return Info()


# The public names become callable scalar types (the module's own code only compares and
# converts with them, which a _ScalarType does as its dtype does).
for _scalar_dtype in dtypes.SUPPORTED:
    globals()["bool_" if _scalar_dtype == dtypes.bool_ else _scalar_dtype.name] = \
        _ScalarType(_scalar_dtype)
del _scalar_dtype
# The Array API's name (NumPy 2 has it too). It shadows the builtin in this module from here
# on: the module's code says builtins.bool.
bool = bool_  # noqa: A001, F405
